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

#endif
