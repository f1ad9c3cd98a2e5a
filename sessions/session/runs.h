/*
 * runs.h - the runs of a session as its queue and history (the API is
 * in sess.h).
 */
#ifndef SFS_RUNS_H
#define SFS_RUNS_H

struct sess;

/* Makes the queue the shell driver's listener. */
void runs_init(void);
/* After a restore: an active run without its shell ends as an error
 * (said in error), and the queue moves on. */
void runs_resume(struct sess *s);
/* Cancels the runs that wait (s is being deleted). */
void runs_cancel_queued(struct sess *s);
/* Drops every run of s (s is being freed). */
void runs_free_all(struct sess *s);

#endif
