/*
 * ctxproto.h - what a code context's interpreter and the daemon say to
 * each other, and what one execution produced. Pure: no descriptors, no
 * processes, so that the parser is tested (and fuzzed) on its own.
 *
 * A frame is "TAG LEN\n" and LEN bytes. The daemon sends "code" (a key
 * new for the execution, a space and the path of the file holding the
 * code); the driver answers, per execution, frames whose payload starts
 * with that key and that fill a record (ctx_exec_frame), then "done".
 * "ready" comes once at its start, "fatal" when it cannot go on (both
 * without a key).
 */
#ifndef SFS_CTXPROTO_H
#define SFS_CTXPROTO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "sessions/core/state.h"
#include "sessions/core/strbuf.h"

#define CTXPROTO_TAG_MAX 15
#define CTXPROTO_LEN_MAX (256u << 20) /* a frame's payload at most */
#define CTX_FMT_MAX	 (64u << 20)  /* a result's format at most */
#define CTX_KEEP_MAX	 (256u << 20) /* formats kept per context at most */
#define CTX_KEY_LEN	 16	      /* hex digits of an execution's key */
/* Results an execution keeps: past them only the latest one is, so that
 * the value (the last result) stays; the others are dropped, counted. */
#define CTX_RESULTS_MAX 10000
#define CTX_ERR_MAX	(1u << 20) /* an error's name, value and traceback */
#define CTX_JSON_MAX	CTX_FMT_MAX /* formats copied into result.json */

struct ctxproto_frame {
	char tag[CTXPROTO_TAG_MAX + 1];
	const char *data; /* inside the parsed buffer */
	size_t len;
};

/* Parses the frame at the start of buf. Returns the bytes it takes, 0
 * when buf holds only a part of it, or -EINVAL (a bad header: a tag not
 * of [a-z], a length not decimal or over CTXPROTO_LEN_MAX). */
ssize_t ctxproto_parse(const char *buf, size_t len, struct ctxproto_frame *f);
/* A new execution's key: CTX_KEY_LEN hex digits and a '\0' in buf. */
void ctxproto_key(char *buf);
/* A frame of the execution with key: f's payload without the key, 0;
 * -EPERM when it does not start with it. */
int ctxproto_unkey(struct ctxproto_frame *f, const char *key);
/* Appends a frame to b. */
void ctxproto_put(struct strbuf *b, const char *tag, const void *data,
		  size_t len);

/* The formats a result may have, in the order result.json lists them;
 * png and jpeg (and pdf) are binary, base64 in result.json; chart is a
 * matplotlib figure's data, a JSON object there as the SDKs give it
 * ({"type": "unknown"} when its text is not JSON). */
#define CTX_NFMT      11
#define CTX_FMT_CHART 10
extern const char *const ctx_fmt_names[CTX_NFMT];
/* The index of a format name, or -1. */
int ctx_fmt_index(const char *name);

/* One rich output (results/N): its formats and whether it is the value
 * of the last expression. id names it as an object (results/N/ has an
 * inode of its own); owner is the execution's run. */
struct ctx_result {
	uint64_t id;
	void *owner;
	unsigned no; /* N, from 1 */
	bool main;
	struct {
		char *p;
		size_t len;
		bool has;
	} fmt[CTX_NFMT];
};

/* Gives a new result its object id, and takes one back. */
struct ctx_ids {
	uint64_t (*add)(struct ctx_result *r);
	void (*del)(uint64_t id);
};

struct ctx_json;

/* What one execution produced. Its formats and error texts are counted
 * in bytes as they come, so that keeping one costs its own size. */
struct ctx_exec {
	struct ctx_result **res;
	size_t nres, cap;
	size_t dropped; /* results past CTX_RESULTS_MAX, not kept */
	size_t bytes;	/* of its formats and error texts */
	size_t err_bytes;
	bool err_cut; /* the error's texts went past CTX_ERR_MAX: cut */
	bool has_error;
	struct strbuf ename, evalue;
	size_t vlen;   /* the value's length as it came, before a cut */
	uint64_t vhash; /* and its hash */
	char **trace;  /* the traceback's lines; NULL: "ename: evalue" */
	size_t ntrace;
	unsigned count; /* the context's execution count after it */
	bool done;
	struct ctx_json *json; /* result.json while someone reads it */
};

/* result.json of a finished execution, one copy shared by its readers
 * (sessions/ctx/ctx.c); owner is NULL once the record has changed or gone. */
struct ctx_json {
	unsigned refs;
	struct ctx_exec *owner;
	char *p;
	size_t len;
};

/* Applies one frame of an execution's answer to e: "result" starts a
 * result, a format name gives the current one that format, "main" marks
 * it, "ename", "evalue" and "etrace" (one line) make the error, "done"
 * ends it. ids names results as objects (NULL: id 0). Past
 * CTX_RESULTS_MAX results, a new one takes the place of the latest (its
 * frames are applied to it); the error's texts are cut at CTX_ERR_MAX,
 * its value at half of it (err_cut says so); a traceback line that is "ename: evalue" is kept
 * as a reference to the value. Returns 0, -EINVAL (a frame that makes no
 * sense: a format before any result, an unknown tag), -EFBIG (a format
 * over CTX_FMT_MAX, or over CTX_KEEP_MAX with e's bytes: not kept) or
 * -ENOMEM. */
int ctx_exec_frame(struct ctx_exec *e, const struct ctxproto_frame *f,
		   const struct ctx_ids *ids);
/* The bytes f would add to e (0: none, or it would be refused). */
size_t ctx_exec_room(const struct ctx_exec *e, const struct ctxproto_frame *f);
/* A daemon-made error (the interpreter is dead, it died). */
int ctx_exec_fail(struct ctx_exec *e, const char *name, const char *value);
void ctx_exec_free(struct ctx_exec *e, void (*del_id)(uint64_t id));
/* The bytes of e's formats and error texts. */
size_t ctx_exec_bytes(const struct ctx_exec *e);
/* Frees the formats of e's results (the results stay, empty) and its
 * error's value and traceback (the name stays, 256 bytes of it at
 * most). */
void ctx_exec_shed(struct ctx_exec *e);
/* A new empty result at the end of e's (numbered, no id yet), or NULL
 * on ENOMEM. */
struct ctx_result *ctx_exec_add_result(struct ctx_exec *e);
/* The result that is the last expression's value, or NULL. */
const struct ctx_result *ctx_exec_main(const struct ctx_exec *e);
/* `error`: "" or {"name": ..., "value": ..., "traceback": [...]}\n. */
char *ctx_exec_error_json(const struct ctx_exec *e, size_t *len);
/* result.json, with the execution's stdout and stderr (as read from its
 * spools) split into lines for logs. Formats go in while they fit in
 * CTX_JSON_MAX in all; a result's others are named in its
 * "omittedFormats". */
char *ctx_exec_json(const struct ctx_exec *e, const char *out, size_t olen,
		    const char *err, size_t elen, size_t *len);
/* An upgrade in place (sessions/core/state.h, ctxrec.c): e's fields into
 * the object that is open (full false: without the formats' bytes and
 * the error's value and traceback, what ctx_exec_shed leaves of it), and
 * back into e (zeroed first) from o. The
 * restore gives each result its saved id through ids->add, which finds
 * it in the result's id (NULL: id 0). Returns 0, -EINVAL (a record past
 * the bounds the frames keep) or -ENOMEM; on an error e holds what was
 * read, for ctx_exec_free. */
void ctx_exec_save(const struct ctx_exec *e, struct state_w *w, bool full);
int ctx_exec_restore(struct ctx_exec *e, const struct state_r *o,
		     const struct ctx_ids *ids);
/* Appends data as base64. */
void ctx_base64(struct strbuf *b, const char *data, size_t len);

#endif
