/* fuzz_ctl.c - ctl lines (sessions/core/ctl.c) against a table of every verb:
 * the input is what a client writes to a ctl file, cut into lines the way
 * fs/ops.c cuts it. */
#include <string.h>
#include "ctl_every.h"
#include "fuzz.h"
#include "sessions/core/ctl.h"
#include "sessions/core/names.h"

static int parse_str(const char *s, struct ctl_cmd *c)
{
	return every_parse(s, strlen(s), c);
}

/* What a line that parsed means is what its canonical spelling means. */
static void check_cmd(const char *line, size_t len, const struct ctl_cmd *c)
{
	struct ctl_cmd again;
	char canon[64];

	FUZZ_CHECK(c->op >= CTL_KILL && c->op <= CTL_KILLALL &&
			   c->op != CTL_SIGNAL,
		   "op %d", (int)c->op);
	switch (c->op) {
	case CTL_KILL:
		FUZZ_CHECK(c->sig >= 1 && c->sig <= 64, "signal %d", c->sig);
		snprintf(canon, sizeof(canon), "kill %d", c->sig);
		break;
	case CTL_TIMEOUT:
		snprintf(canon, sizeof(canon), "timeout %llu",
			 (unsigned long long)c->ms);
		break;
	case CTL_RESET:
		strcpy(canon, "reset");
		break;
	case CTL_EOF:
		strcpy(canon, "eof");
		break;
	default:
		strcpy(canon, "killall");
	}
	FUZZ_CHECK(parse_str(canon, &again) == 0, "'%s' refused", canon);
	FUZZ_CHECK(again.op == c->op && again.sig == c->sig &&
			   again.ms == c->ms,
		   "'%.*s' and '%s' differ", (int)len, line, canon);
	/* a line is at most two words: a third one is refused */
	if (len < 200 && !memchr(line, '\0', len)) {
		char longer[256];

		snprintf(longer, sizeof(longer), "%.*s x", (int)len, line);
		FUZZ_CHECK(parse_str(longer, &again) < 0, "'%s' accepted",
			   longer);
	}
}

static void one_line(const char *line, size_t len)
{
	struct ctl_cmd c;
	int sig = ctl_signal(line, len);

	FUZZ_CHECK(sig == -1 || (sig >= 1 && sig <= 64), "ctl_signal %d", sig);
	if (every_parse(line, len, &c) == 0)
		check_cmd(line, len, &c);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *buf = (const char *)data;
	size_t start = 0;

	for (size_t i = 0; i <= size; i++) {
		if (i < size && buf[i] != '\n')
			continue;
		if (i > start)
			one_line(buf + start, i - start);
		start = i + 1;
	}
	return 0;
}
