/*
 * kill.h - kills and timeouts of a session's active run, and killall
 * (the API is in sess.h).
 */
#ifndef SFS_KILL_H
#define SFS_KILL_H

struct sess;

/* Sets s's run timer for the active run's timeout or the next step of
 * its kill; disarms it when neither is due. */
void kill_arm(struct sess *s);
/* Answers the killall requests once nothing runs any more. */
void killall_check(void);
/* Sends sig to the processes of idle s but its shell (background jobs
 * of earlier runs, what a dead shell left), KILL to those still there
 * after the grace. Returns how many were signalled. */
int kill_leftovers(struct sess *s, int sig);
/* The active run of s ended during its kill: what outlived the signal
 * gets KILL when the kill would have sent it. */
void kill_run_ended(struct sess *s);
/* Drops the pending sweeps (at exit). */
void kill_fini(void);

#endif
