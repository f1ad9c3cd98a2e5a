/*
 * statekeys.h - the keys of the session layer's objects in a saved state
 * (sstate.h), apart from it so that the modules that save their own
 * objects (env.c, proc.c) need not include the layer's saver.
 */
#ifndef SFS_STATEKEYS_H
#define SFS_STATEKEYS_H

/* Object keys of the session layer (parts use SESS_PART_KEY_MIN on). */
enum {
	SSTATE_LAYER = 1, /* the layer: globals, then its sessions */
	SSTATE_SESS,
	SSTATE_RUN,
	SSTATE_PROC,
	SSTATE_ENV,
	SSTATE_PEND_SET,
	SSTATE_PEND_UNSET,
	SSTATE_VAR,
	SSTATE_ERRS,
	SSTATE_ROOTENV,
};

#endif
