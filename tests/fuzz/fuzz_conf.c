/* fuzz_conf.c - the configuration file (conf/load.c). conf_load takes a
 * path (and re-reads lines of the file itself), so each input is written
 * to one temporary file. What it accepts is checked against the same text
 * read by libconfig directly, and every refusal must name the file. */
#include <errno.h>
#include <libconfig.h>
#include <string.h>
#include <syslog.h>
#include <unistd.h>
#include "fuzz.h"
#include "conf/conf.h"
#include "sessions/core/names.h"

static char path[64];
static int fd = -1;

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	char tmpl[64];

	(void)argc;
	(void)argv;
	/* tmpfs when there is one: a write to disk costs more than a parse */
	strcpy(tmpl, access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp");
	strcat(tmpl, "/sfs-fuzz-conf-XXXXXX");
	fd = mkstemp(tmpl);
	if (fd < 0)
		abort();
	/* gone at once, so that a crash leaves nothing behind; the loader
	 * opens it again through /proc */
	unlink(tmpl);
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	return 0;
}

static void free_list(char **v, size_t n)
{
	for (size_t i = 0; v && (n ? i < n : v[i] != NULL); i++)
		free(v[i]);
	free(v);
}

/* The built-in defaults again, without what the last input left. */
static void reset(void)
{
	free(conf.shell);
	free_list(conf.shell_args, 0);
	free(conf.workspace);
	free(conf.runtime_dir);
	free_list(conf.env, conf.nenv);
	conf.env = NULL;
	conf.nenv = 0;
	conf_defaults();
}

/* Every integer setting, where conf keeps it, and its range. */
static const struct {
	const char *name;
	const uint64_t *at;
	uint64_t min, max;
} uints[] = {
	{ "default_timeout_ms", &conf.default_timeout_ms, 0,
	  86400000ULL * 365 },
	{ "kill_grace_ms", &conf.kill_grace_ms, 0, 600000 },
	{ "max_sessions", &conf.max_sessions, 1, 1000000 },
	{ "max_procs_per_session", &conf.max_procs_per_session, 1, 100000 },
	{ "max_command_bytes", &conf.max_command_bytes, 1, 1ULL << 30 },
	{ "max_output_bytes", &conf.max_output_bytes, 0, ~0ULL },
	{ "history", &conf.history, 1, 100000 },
	{ "shell_spin_us", &conf.shell_spin_us, 0, 1000000 },
};

/* A value conf took is the one libconfig read. libconfig 1.5 keeps only
 * 32 bits of an integer without L, which conf_load undoes by reading the
 * digits itself: both agree on those 32 bits. */
static void check_uints(const config_t *cfg)
{
	for (size_t i = 0; i < sizeof(uints) / sizeof(*uints); i++) {
		const config_setting_t *s = config_lookup(cfg, uints[i].name);
		uint64_t v = *uints[i].at;
		long long lv;

		FUZZ_CHECK(v >= uints[i].min && v <= uints[i].max, "%s = %llu",
			   uints[i].name, (unsigned long long)v);
		if (!s)
			continue;
		lv = config_setting_get_int64(s);
		if (config_setting_type(s) == CONFIG_TYPE_INT64)
			FUZZ_CHECK(v == (uint64_t)lv,
				   "%s = %llu, libconfig %lld", uints[i].name,
				   (unsigned long long)v, lv);
		else
			FUZZ_CHECK((uint32_t)v == (uint32_t)lv,
				   "%s = %llu, libconfig %lld", uints[i].name,
				   (unsigned long long)v, lv);
	}
}

static void check_env(const config_t *cfg)
{
	const config_setting_t *g = config_lookup(cfg, "env");
	int n = g ? config_setting_length(g) : 0;

	FUZZ_CHECK(conf.nenv == (size_t)n, "%zu variables, libconfig %d",
		   conf.nenv, n);
	for (int i = 0; i < n; i++) {
		const config_setting_t *e = config_setting_get_elem(g, i);
		const char *name = config_setting_name(e);
		size_t nl = strlen(name);

		FUZZ_CHECK(name_env_valid(name), "env name '%s'", name);
		FUZZ_CHECK(strncmp(conf.env[i], name, nl) == 0 &&
				   conf.env[i][nl] == '=' &&
				   strcmp(conf.env[i] + nl + 1,
					  config_setting_get_string(e)) == 0,
			   "env[%d] is '%s'", i, conf.env[i]);
	}
}

static void check_accepted(const char *text)
{
	config_t cfg;
	int b;

	FUZZ_CHECK(conf.shell && conf.shell[0] == '/', "shell '%s'",
		   conf.shell);
	FUZZ_CHECK(conf.workspace[0] == '/', "workspace '%s'", conf.workspace);
	FUZZ_CHECK(conf.runtime_dir[0] == '/', "runtime_dir '%s'",
		   conf.runtime_dir);
	FUZZ_CHECK(conf.log_level >= LOG_ERR && conf.log_level <= LOG_DEBUG,
		   "log_level %d", conf.log_level);
	config_init(&cfg);
	FUZZ_CHECK(config_read_string(&cfg, text),
		   "accepted, but libconfig refuses it: %s",
		   config_error_text(&cfg));
	check_uints(&cfg);
	check_env(&cfg);
	if (config_lookup_bool(&cfg, "default_session", &b))
		FUZZ_CHECK(conf.default_session == (b != 0), "default_session");
	config_destroy(&cfg);
}

/* "FILE:LINE: message" or "FILE: cannot read: ..." */
static void check_refusal(int rc, const char *msg, size_t len)
{
	size_t pl = strlen(path);

	FUZZ_CHECK(rc == -EINVAL || rc == -ENOMEM, "rc %d", rc);
	if (rc == -ENOMEM)
		return;
	FUZZ_CHECK(len > pl + 1 && strncmp(msg, path, pl) == 0 &&
			   msg[pl] == ':' &&
			   ((msg[pl + 1] >= '0' && msg[pl + 1] <= '9') ||
			    msg[pl + 1] == ' '),
		   "refused with '%.*s'", (int)len, msg);
	FUZZ_CHECK(msg[len - 1] == '\n', "message without a newline");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	FILE *saved = stderr, *msgs;
	char *text, *msg = NULL;
	size_t mlen = 0;
	int rc;

	/* libconfig's string reader stops at a NUL, and an @include would
	 * read other files than this input */
	if (memchr(data, '\0', size) || memmem(data, size, "@include", 8))
		return 0;
	if (ftruncate(fd, 0) < 0 || pwrite(fd, data, size, 0) != (ssize_t)size)
		abort();
	text = strndup((const char *)data, size);
	msgs = open_memstream(&msg, &mlen);
	if (!text || !msgs)
		abort();
	reset();
	stderr = msgs;
	rc = conf_load(path);
	stderr = saved;
	fclose(msgs);
	if (rc == 0)
		check_accepted(text);
	else
		check_refusal(rc, msg, mlen);
	free(msg);
	free(text);
	return 0;
}
