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
#include "strbuf.h"

#define CTXPROTO_TAG_MAX 15
#define CTXPROTO_LEN_MAX (256u << 20) /* a frame's payload at most */
#define CTX_FMT_MAX	 (64u << 20)  /* a result's format at most */
#define CTX_KEEP_MAX	 (256u << 20) /* formats kept per context at most */
#define CTX_KEY_LEN	 16	      /* hex digits of an execution's key */

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
 * png and jpeg (and pdf) are binary, base64 in result.json. */
#define CTX_NFMT 10
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

/* What one execution produced. */
struct ctx_exec {
	struct ctx_result **res;
	size_t nres;
	bool has_error;
	struct strbuf ename, evalue;
	char **trace; /* the traceback's lines */
	size_t ntrace;
	unsigned count; /* the context's execution count after it */
	bool done;
};

/* Applies one frame of an execution's answer to e: "result" starts a
 * result, a format name gives the current one that format, "main" marks
 * it, "ename", "evalue" and "etrace" (one line) make the error, "done"
 * ends it. new_id gives a new result its object id (NULL: 0). Returns 0,
 * -EINVAL (a frame that makes no sense: a format before any result,
 * an unknown tag), -EFBIG (a format over CTX_FMT_MAX: not kept) or
 * -ENOMEM. */
int ctx_exec_frame(struct ctx_exec *e, const struct ctxproto_frame *f,
		   uint64_t (*new_id)(struct ctx_result *r));
/* A daemon-made error (the interpreter is dead, it died). */
int ctx_exec_fail(struct ctx_exec *e, const char *name, const char *value);
void ctx_exec_free(struct ctx_exec *e, void (*del_id)(uint64_t id));
/* The bytes of e's formats. */
size_t ctx_exec_bytes(const struct ctx_exec *e);
/* Frees the formats of e's results (the results stay, empty). */
void ctx_exec_shed(struct ctx_exec *e);
/* The result that is the last expression's value, or NULL. */
const struct ctx_result *ctx_exec_main(const struct ctx_exec *e);
/* `error`: "" or {"name": ..., "value": ..., "traceback": [...]}\n. */
char *ctx_exec_error_json(const struct ctx_exec *e, size_t *len);
/* result.json, with the execution's stdout and stderr (as read from its
 * spools) split into lines for logs. */
char *ctx_exec_json(const struct ctx_exec *e, const char *out, size_t olen,
		    const char *err, size_t elen, size_t *len);
/* Appends data as base64. */
void ctx_base64(struct strbuf *b, const char *data, size_t len);

#endif
