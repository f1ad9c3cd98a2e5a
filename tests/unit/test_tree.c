/* test_tree.c - the file tables (the families' rows) and inode resolution
 * of fs/tree.c. */
#include <errno.h>
#include "fs/fam_ctx.h"
#include "fs/fam_env.h"
#include "fs/fam_health.h"
#include "fs/fam_ports.h"
#include "fs/fam_procs.h"
#include "fs/fam_root.h"
#include "fs/fam_runopt.h"
#include "fs/fam_session.h"
#include "fs/fam_sessions.h"
#include "fs/fam_tty.h"
#include "fs/fam_watch.h"
#include "fs/files.h"
#include "fs/tree.h"
#include "sessions/core/objs.h"
#include "sessions/session/run.h"
#include "unit.h"

static const ft_t dirs[] = { FT_ROOT, FT_SESSIONS, FT_SESS, FT_RUN };

START_TEST(root_ino)
{
	struct node n;

	ck_assert_uint_eq(tree_ino(0, FT_ROOT), FUSE_ROOT_ID);
	ck_assert_int_eq(tree_resolve(FUSE_ROOT_ID, &n), 0);
	ck_assert_int_eq(n.ft, FT_ROOT);
	ck_assert_uint_eq(n.id, 0);
	ck_assert_ptr_null(n.s);
	ck_assert_ptr_null(n.r);
	/* types need 8 bits at most */
	ck_assert_int_le(FT_MAX, 256);
	ck_assert_uint_eq(tree_ino(5, FT_CMD), (5u << 8) | FT_CMD);
}
END_TEST

/* Every table: non-empty names without '/', unique in their directory,
 * each a directory or a regular file of a real type. */
START_TEST(tables_well_formed)
{
	for (size_t d = 0; d < sizeof(dirs) / sizeof(*dirs); d++) {
		size_t n = 0;
		const struct fent *t = tree_table(dirs[d], &n);

		ck_assert_ptr_nonnull(t);
		ck_assert_uint_gt(n, 0);
		for (size_t i = 0; i < n; i++) {
			ck_assert_ptr_nonnull(t[i].name);
			ck_assert_uint_gt(strlen(t[i].name), 0);
			ck_assert_ptr_null(strchr(t[i].name, '/'));
			ck_assert_str_ne(t[i].name, ".");
			ck_assert_str_ne(t[i].name, "..");
			ck_assert(t[i].ft > FT_NONE && t[i].ft < FT_MAX);
			ck_assert_msg(S_ISDIR(t[i].mode) || S_ISREG(t[i].mode),
				      "%s: mode %o", t[i].name, t[i].mode);
			/* directories can be entered */
			if (S_ISDIR(t[i].mode))
				ck_assert_uint_eq(t[i].mode & 0111, 0111);
			for (size_t j = 0; j < i; j++) {
				ck_assert_msg(strcmp(t[i].name, t[j].name),
					      "%s twice", t[i].name);
				ck_assert_msg(t[i].ft != t[j].ft,
					      "type %d twice", t[i].ft);
			}
		}
	}
}
END_TEST

START_TEST(other_dirs_have_no_table)
{
	static const ft_t none[] = { FT_NONE, FT_CMD,    FT_ENVDIR,
					FT_RUNS, FT_LATEST, FT_ENVVAR,
					FT_MAX };

	for (size_t i = 0; i < sizeof(none) / sizeof(*none); i++) {
		size_t n = 77;

		ck_assert_ptr_null(tree_table(none[i], &n));
		ck_assert_uint_eq(n, 0);
	}
}
END_TEST

static const struct fent *find(ft_t dir, const char *name)
{
	size_t n;
	const struct fent *t = tree_table(dir, &n);

	for (size_t i = 0; i < n; i++)
		if (!strcmp(t[i].name, name))
			return &t[i];
	return NULL;
}

/* The files the design names, with their types and who may write. */
START_TEST(design_files)
{
	static const char *const run_files[] = {
		"cmd",	"stdout", "stderr",	 "output",  "stream",
		"exit", "status", "result.json", "timeout", "expect",
	};
	static const char *const run_opts[] = { "env", "cwd", "stdin" };
	static const char *const sess_only[] = { "cwd", "env", "error", "ctl",
						 "runs" };
	size_t n;

	ck_assert_ptr_nonnull(find(FT_ROOT, "README"));
	ck_assert(S_ISDIR(find(FT_ROOT, "sessions")->mode));
	ck_assert_ptr_nonnull(find(FT_SESSIONS, "clone"));
	for (size_t i = 0; i < sizeof(run_files) / sizeof(*run_files); i++) {
		const struct fent *s = find(FT_SESS, run_files[i]);
		const struct fent *r = find(FT_RUN, run_files[i]);

		ck_assert_msg(s && r, "%s missing", run_files[i]);
		/* the same file at both levels */
		ck_assert_int_eq(s->ft, r->ft);
		ck_assert_int_eq(s->mode, r->mode);
		ck_assert(tree_is_run_file(s->ft));
		ck_assert(S_ISREG(s->mode));
	}
	/* and a named run's own options, only there */
	for (size_t i = 0; i < sizeof(run_opts) / sizeof(*run_opts); i++) {
		const struct fent *r = find(FT_RUN, run_opts[i]);

		ck_assert_msg(r, "%s missing", run_opts[i]);
		ck_assert(!tree_is_run_file(r->ft));
	}
	tree_table(FT_RUN, &n);
	ck_assert_uint_eq(n, sizeof(run_files) / sizeof(*run_files) +
				     sizeof(run_opts) / sizeof(*run_opts));
	for (size_t i = 0; i < sizeof(sess_only) / sizeof(*sess_only); i++) {
		const struct fent *s = find(FT_SESS, sess_only[i]);

		ck_assert_msg(s != NULL, "%s missing", sess_only[i]);
		ck_assert(!tree_is_run_file(s->ft));
		/* a named run's own env/ and cwd are other files */
		ck_assert(!find(FT_RUN, sess_only[i]) ||
			  find(FT_RUN, sess_only[i])->ft != s->ft);
	}
	ck_assert(S_ISDIR(find(FT_SESS, "env")->mode));
	ck_assert(S_ISDIR(find(FT_SESS, "runs")->mode));
	/* written by users: cmd, cwd, timeout, ctl; the reports are not */
	ck_assert(find(FT_SESS, "cmd")->mode & 0200);
	ck_assert(find(FT_SESS, "cwd")->mode & 0200);
	ck_assert(find(FT_SESS, "timeout")->mode & 0200);
	ck_assert(find(FT_SESS, "ctl")->mode & 0200);
	ck_assert_uint_eq(find(FT_SESS, "stdout")->mode & 0222, 0);
	ck_assert_uint_eq(find(FT_SESS, "exit")->mode & 0222, 0);
	ck_assert_uint_eq(find(FT_SESS, "status")->mode & 0222, 0);
	ck_assert_uint_eq(find(FT_SESS, "result.json")->mode & 0222, 0);
	ck_assert_uint_eq(find(FT_SESS, "error")->mode & 0222, 0);
	ck_assert_uint_eq(find(FT_ROOT, "README")->mode & 0222, 0);
	/* clone makes a session only when opened for writing (issue 10) */
	ck_assert(find(FT_SESSIONS, "clone")->mode & 0200);
}
END_TEST

/* The number of every type, as the one list of all types had them: an
 * inode is id << 8 | type, and a daemon upgraded in place is handed the
 * inodes of the build before it, so a type that moved would name
 * another file. Each family numbers its own (fs/tree.h). */
#define NUM(ft, no) { ft, no, #ft }
static const struct {
	ft_t ft;
	unsigned no;
	const char *name;
} numbers[] = {
	NUM(FT_ROOT, 1),	   NUM(FT_README, 2),	    NUM(FT_ROOTCTL, 3),
	NUM(FT_ROOTENV, 4),	   NUM(FT_ROOTENVVAR, 5),   NUM(FT_SESSIONS, 6),
	NUM(FT_CLONE, 7),	   NUM(FT_SESS, 8),	    NUM(FT_CMD, 9),
	NUM(FT_STDOUT, 10),	   NUM(FT_STDERR, 11),	    NUM(FT_OUTPUT, 12),
	NUM(FT_STREAM, 13),	   NUM(FT_EXIT, 14),	    NUM(FT_STATUS, 15),
	NUM(FT_RESULT, 16),	   NUM(FT_CWD, 17),	    NUM(FT_ENVDIR, 18),
	NUM(FT_TIMEOUT, 19),	   NUM(FT_ERROR, 20),	    NUM(FT_CTL, 21),
	NUM(FT_RUNS, 22),	   NUM(FT_LATEST, 23),	    NUM(FT_RUN, 24),
	NUM(FT_PROCS, 25),	   NUM(FT_PROC, 26),	    NUM(FT_PID, 27),
	NUM(FT_STDIN, 28),	   NUM(FT_ENVVAR, 29),	    NUM(FT_FILES, 30),
	NUM(FT_FILE, 31),	   NUM(FT_PROCCMD, 32),	    NUM(FT_PROCCTL, 33),
	NUM(FT_HEALTH, 34),	   NUM(FT_METRICS, 35),	    NUM(FT_TTY, 36),
	NUM(FT_TTYINPUT, 37),	   NUM(FT_TTYKEYS, 38),	    NUM(FT_TTYOUTPUT, 39),
	NUM(FT_TTYSTREAM, 40),	   NUM(FT_TTYSCREEN, 41),   NUM(FT_TTYSCROLLBACK, 42),
	NUM(FT_TTYCURSOR, 43),	   NUM(FT_TTYSIZE, 44),	    NUM(FT_TTYTITLE, 45),
	NUM(FT_TTYSTATUS, 46),	   NUM(FT_TTYCTL, 47),	    NUM(FT_TTYEXPECT, 48),
	NUM(FT_TTYQUIET, 49),	   NUM(FT_TTYCAST, 50),	    NUM(FT_CTXS, 51),
	NUM(FT_CTX, 52),	   NUM(FT_CTXLANG, 53),	    NUM(FT_CTXCWD, 54),
	NUM(FT_CTXTIMEOUT, 55),	   NUM(FT_CTXENV, 56),	    NUM(FT_CTXVAR, 57),
	NUM(FT_CTXCTL, 58),	   NUM(FT_CTXSTATUS, 59),   NUM(FT_CTXRUNS, 60),
	NUM(FT_CTXRUN, 61),	   NUM(FT_CODE, 62),	    NUM(FT_CTXRESULT, 63),
	NUM(FT_CTXERROR, 64),	   NUM(FT_CTXJSON, 65),	    NUM(FT_CTXRESULTS, 66),
	NUM(FT_CTXRES, 67),	   NUM(FT_CTXMAIN, 68),	    NUM(FT_CTXFMT, 69),
	NUM(FT_EXPECT, 100),
	NUM(FT_TTYREADY, 110),
	NUM(FT_PORTS, 102),	   NUM(FT_PROCPORTS, 103),
	NUM(FT_WATCHES, 210),	   NUM(FT_WATCH, 211),	    NUM(FT_WSPEC, 212),
	NUM(FT_WEVENTS, 213),	   NUM(FT_WERROR, 214),
};

/* The row a number was given to above (NULL: none), the formats of a
 * result (FT_CTXFMT + its index) aside. */
static const char *numbered(unsigned no)
{
	for (size_t i = 0; i < sizeof(numbers) / sizeof(*numbers); i++)
		if (numbers[i].no == no)
			return numbers[i].name;
	return NULL;
}

START_TEST(types_keep_their_numbers)
{
	for (size_t i = 0; i < sizeof(numbers) / sizeof(*numbers); i++)
		ck_assert_msg(numbers[i].ft == numbers[i].no,
			      "%s is %u, it was %u", numbers[i].name,
			      numbers[i].ft, numbers[i].no);
	/* chart (FT_CTXFMT + 10) took 79, free before it */
	ck_assert_int_eq(FT_CTXFMT + CTX_NFMT - 1, 79);
	ck_assert_int_eq(FT_MAX, 256); /* an inode's low 8 bits */
}
END_TEST

/* Every type with a number above has an entry that names it (a type
 * of a family newer than the list may have one too); table entries
 * agree with it. */
START_TEST(fent_every_type)
{
	ck_assert_ptr_null(tree_fent(FT_NONE));
	ck_assert_ptr_null(tree_fent(FT_MAX));
	for (unsigned ft = FT_NONE + 1; ft < FT_MAX; ft++) {
		const struct fent *e = tree_fent(ft);
		bool fmt = ft >= FT_CTXFMT && ft < FT_CTXFMT + CTX_NFMT;

		if (numbered(ft) || fmt)
			ck_assert_msg(e != NULL, "no entry for type %u", ft);
		if (!e)
			continue;
		ck_assert_uint_eq(e->ft, ft);
		ck_assert_ptr_nonnull(e->name);
	}
	for (size_t d = 0; d < sizeof(dirs) / sizeof(*dirs); d++) {
		size_t n;
		const struct fent *t = tree_table(dirs[d], &n);

		for (size_t i = 0; i < n; i++) {
			const struct fent *e = tree_fent(t[i].ft);

			ck_assert_str_eq(e->name, t[i].name);
			ck_assert_int_eq(e->mode, t[i].mode);
		}
	}
	ck_assert(S_ISDIR(tree_fent(FT_ROOT)->mode));
	ck_assert(S_ISDIR(tree_fent(FT_SESS)->mode));
	ck_assert(S_ISDIR(tree_fent(FT_RUN)->mode));
	ck_assert(S_ISLNK(tree_fent(FT_LATEST)->mode));
	ck_assert_str_eq(tree_fent(FT_LATEST)->name, "latest");
	ck_assert(S_ISREG(tree_fent(FT_ENVVAR)->mode));
}
END_TEST

START_TEST(run_file_types)
{
	size_t n;
	const struct fent *t = tree_table(FT_RUN, &n);

	for (size_t i = 0; i < n; i++)
		ck_assert(tree_is_run_file(t[i].ft) || t[i].ft == FT_RUNENV ||
			  t[i].ft == FT_RUNCWD || t[i].ft == FT_RUNSTDIN);
	ck_assert(!tree_is_run_file(FT_NONE));
	ck_assert(!tree_is_run_file(FT_ROOT));
	ck_assert(!tree_is_run_file(FT_SESS));
	ck_assert(!tree_is_run_file(FT_RUN));
	ck_assert(!tree_is_run_file(FT_RUNS));
	ck_assert(!tree_is_run_file(FT_CWD));
	ck_assert(!tree_is_run_file(FT_ENVDIR));
	ck_assert(!tree_is_run_file(FT_ENVVAR));
	ck_assert(!tree_is_run_file(FT_ERROR));
	ck_assert(!tree_is_run_file(FT_CTL));
	ck_assert(!tree_is_run_file(FT_LATEST));
	ck_assert(!tree_is_run_file(FT_MAX));
}
END_TEST

/* procs/NAME: its own cmd and ctl, the run's output rows, pid, stdin. */
START_TEST(proc_table)
{
	const struct fent *cmd = find(FT_PROC, "cmd"),
			  *ctl = find(FT_PROC, "ctl");

	ck_assert_ptr_nonnull(cmd);
	ck_assert_ptr_nonnull(ctl);
	ck_assert_int_eq(cmd->ft, FT_PROCCMD);
	ck_assert_int_eq(ctl->ft, FT_PROCCTL);
	ck_assert(cmd->mode & 0200);
	ck_assert(ctl->mode & 0200);
	ck_assert(S_ISREG(find(FT_PROC, "pid")->mode));
	ck_assert(find(FT_PROC, "stdin")->mode & 0200);
	ck_assert(tree_is_run_file(FT_PID));
	ck_assert(tree_is_run_file(FT_STDIN));
	ck_assert(!tree_is_run_file(FT_PROCCTL));
	/* the output rows are the run's */
	ck_assert_ptr_eq(find(FT_PROC, "stdout"), tree_fent(FT_STDOUT));
	ck_assert_int_eq(find(FT_PROC, "exit")->ft, find(FT_RUN, "exit")->ft);
	ck_assert_ptr_null(find(FT_PROC, "timeout"));
}
END_TEST

static const struct fops dummy_ops;
static bool never(const struct fh *fh)
{
	(void)fh;
	return false;
}
static const struct fops poll_only_ops = { .readable = never };

/* tree_init refuses tables that would make a type ambiguous. */
START_TEST(init_refuses_bad_tables)
{
	static const struct fent twice[] = {
		{ "a", FT_README, FENT_RO, &dummy_ops, 0, HOME_DIR, NULL },
		{ "b", FT_README, FENT_RW, &dummy_ops, 0, HOME_DIR, NULL },
		{ NULL, FT_NONE, 0, NULL, 0, HOME_DIR, NULL },
	};
	static const struct fent range[] = {
		{ "a", FT_MAX, FENT_RO, &dummy_ops, 0, HOME_DIR, NULL },
		{ NULL, FT_NONE, 0, NULL, 0, HOME_DIR, NULL },
	};
	static const struct fent poll[] = {
		{ "a", FT_STREAM, FENT_RO, &poll_only_ops, 0, HOME_DIR, NULL },
		{ NULL, FT_NONE, 0, NULL, 0, HOME_DIR, NULL },
	};
	static const struct fops o1 = { .tab = twice }, o2 = { .tab = range },
				 o3 = { .tab = poll };
	const struct fent r1 = { "", FT_ROOT, FENT_DIR, &o1, 0, HOME_TOP, NULL };
	const struct fent r2 = { "", FT_ROOT, FENT_DIR, &o2, 0, HOME_TOP, NULL };
	const struct fent r3 = { "", FT_ROOT, FENT_DIR, &o3, 0, HOME_TOP, NULL };

	ck_assert_int_eq(tree_init(&r1), -EINVAL);
	ck_assert_int_eq(tree_init(&r2), -EINVAL);
	ck_assert_int_eq(tree_init(&r3), -EINVAL);
	ck_assert_int_eq(tree_init(&fam_root), 0);
	ck_assert_ptr_eq(tree_fent(FT_ROOT), &fam_root);
}
END_TEST

/* The tree with one more row in the root's table, a family's file of
 * type ft; tree_init's answer. */
static int init_with_family(unsigned ft)
{
	static struct fent tab[32];
	static struct fops ops;
	struct fent root = fam_root;
	size_t n = 0;

	while (fam_root.ops->tab[n].name)
		n++;
	ck_assert_uint_lt(n + 1, sizeof(tab) / sizeof(*tab));
	memcpy(tab, fam_root.ops->tab, n * sizeof(*tab));
	tab[n] = (struct fent){ "newfam", ft, FENT_RO, &dummy_ops, 0, HOME_DIR,
				"a new family's file" };
	tab[n + 1] = (struct fent){ 0 };
	ops = *fam_root.ops;
	ops.tab = tab;
	root.ops = &ops;
	return tree_init(&root);
}

/* A new family numbers its types itself, with no list of the others to
 * edit: a number no row has is its own, the rest of the tree as it was;
 * a number another family has (deep in the tree, or one of the formats
 * after FT_CTXFMT) is refused, and so is one past an inode's 8 bits. */
START_TEST(new_family_numbers)
{
	const struct fent *tty = tree_fent(FT_TTY);
	static const unsigned taken[] = {
		FT_BLOCK_TTY,	   FT_BLOCK_CTX, FT_CTXFMT + 3, FT_ROOT,
		FT_FILE,	   FT_STDIN,	 FT_MAX,	FT_MAX + 44,
	};

	ck_assert_ptr_nonnull(tty);
	ck_assert_int_eq(init_with_family(200), 0);
	ck_assert_str_eq(tree_fent(200)->name, "newfam");
	ck_assert_ptr_eq(tree_fent(FT_TTY), tty);
	ck_assert_ptr_nonnull(tree_fent(FT_CTXFMT + 3));
	for (size_t i = 0; i < sizeof(taken) / sizeof(*taken); i++)
		ck_assert_msg(init_with_family(taken[i]) == -EINVAL,
			      "type %u taken twice", taken[i]);
	ck_assert_int_eq(tree_init(&fam_root), 0);
	ck_assert_ptr_null(tree_fent(200));
	ck_assert_ptr_eq(tree_fent(FT_TTY), tty);
}
END_TEST

START_TEST(resolve_fixed)
{
	static const ft_t fixed[] = { FT_ROOT, FT_README, FT_SESSIONS,
					 FT_CLONE };
	struct node n;

	for (size_t i = 0; i < sizeof(fixed) / sizeof(*fixed); i++) {
		ck_assert_int_eq(tree_resolve(tree_ino(0, fixed[i]), &n), 0);
		ck_assert_int_eq(n.ft, fixed[i]);
		/* they exist once, with id 0 only */
		ck_assert_int_eq(tree_resolve(tree_ino(1, fixed[i]), &n),
				 -ENOENT);
		ck_assert_int_eq(tree_resolve(tree_ino(12345, fixed[i]), &n),
				 -ENOENT);
	}
}
END_TEST

START_TEST(resolve_bad_types)
{
	struct node n;

	ck_assert_int_eq(tree_resolve(0, &n), -ENOENT);
	ck_assert_int_eq(tree_resolve(tree_ino(3, FT_NONE), &n), -ENOENT);
	ck_assert_int_eq(tree_resolve(tree_ino(0, FT_MAX), &n), -ENOENT);
	ck_assert_int_eq(tree_resolve((3u << 8) | 0xff, &n), -ENOENT);
	ck_assert_int_eq(tree_resolve(0xff, &n), -ENOENT);
	/* session-level types of an id that was never made */
	ck_assert_int_eq(tree_resolve(tree_ino(1ULL << 40, FT_SESS), &n),
			 -ENOENT);
	ck_assert_int_eq(tree_resolve(tree_ino(1ULL << 40, FT_CMD), &n),
			 -ENOENT);
	ck_assert_int_eq(tree_resolve(tree_ino(1ULL << 40, FT_ENVVAR), &n),
			 -ENOENT);
}
END_TEST

/* A session object, as sess.c would register it (only what tree.c and
 * sess_latest look at). */
static struct sess *fake_sess(void)
{
	struct sess *s = calloc(1, sizeof(*s));

	ck_assert_ptr_nonnull(s);
	list_init(&s->runs);
	list_init(&s->queue);
	s->id = objs_add(OBJ_SESS, s);
	return s;
}

static struct run *add_run(struct sess *s, bool has_cmd)
{
	struct run *r = run_new_empty();

	ck_assert_ptr_nonnull(r);
	r->sess = s;
	r->has_cmd = has_cmd;
	list_add_tail(&s->runs, &r->link);
	return r;
}

START_TEST(resolve_session)
{
	struct sess *s = fake_sess();
	struct run *r1, *r2;
	struct node n;

	ck_assert_int_eq(tree_resolve(tree_ino(s->id, FT_SESS), &n), 0);
	ck_assert_ptr_eq(n.s, s);
	ck_assert_ptr_null(n.r);
	ck_assert(!n.run_level);
	ck_assert_uint_eq(n.id, s->id);
	/* run files before any run: the session, no run */
	ck_assert_int_eq(tree_resolve(tree_ino(s->id, FT_STDOUT), &n), 0);
	ck_assert_ptr_eq(n.s, s);
	ck_assert_ptr_null(n.r);

	r1 = add_run(s, true);
	ck_assert_int_eq(tree_resolve(tree_ino(s->id, FT_EXIT), &n), 0);
	ck_assert_ptr_eq(n.r, r1);
	r2 = add_run(s, true);
	ck_assert_int_eq(tree_resolve(tree_ino(s->id, FT_EXIT), &n), 0);
	ck_assert_ptr_eq(n.r, r2);
	ck_assert(!n.run_level);
	/* a named run with no command yet is not the latest */
	add_run(s, false);
	ck_assert_int_eq(tree_resolve(tree_ino(s->id, FT_STATUS), &n), 0);
	ck_assert_ptr_eq(n.r, r2);
	/* files that are not a run's carry no run */
	ck_assert_int_eq(tree_resolve(tree_ino(s->id, FT_CWD), &n), 0);
	ck_assert_ptr_eq(n.s, s);
	ck_assert_ptr_null(n.r);
	ck_assert_int_eq(tree_resolve(tree_ino(s->id, FT_ENVDIR), &n), 0);
	ck_assert_ptr_null(n.r);
	ck_assert_int_eq(tree_resolve(tree_ino(s->id, FT_RUNS), &n), 0);
	ck_assert_ptr_eq(n.s, s);
	ck_assert_int_eq(tree_resolve(tree_ino(s->id, FT_LATEST), &n), 0);
	ck_assert_ptr_eq(n.s, s);

	/* once the session is gone, all of its inodes are stale */
	objs_del(s->id);
	ck_assert_int_eq(tree_resolve(tree_ino(s->id, FT_SESS), &n), -ENOENT);
	ck_assert_int_eq(tree_resolve(tree_ino(s->id, FT_EXIT), &n), -ENOENT);
	ck_assert_int_eq(tree_resolve(tree_ino(s->id, FT_CWD), &n), -ENOENT);
}
END_TEST

START_TEST(resolve_run)
{
	struct sess *s = fake_sess();
	struct run *r1 = add_run(s, true), *r2 = add_run(s, true);
	struct node n;
	uint64_t id;

	ck_assert_int_eq(tree_resolve(tree_ino(r1->id, FT_RUN), &n), 0);
	ck_assert_ptr_eq(n.r, r1);
	ck_assert_ptr_eq(n.s, s);
	ck_assert(n.run_level);
	/* runs/N/stdout is that run's, not the latest */
	ck_assert_int_eq(tree_resolve(tree_ino(r1->id, FT_STDOUT), &n), 0);
	ck_assert_ptr_eq(n.r, r1);
	ck_assert(n.run_level);
	ck_assert_int_eq(tree_resolve(tree_ino(r2->id, FT_TIMEOUT), &n), 0);
	ck_assert_ptr_eq(n.r, r2);
	/* what a run directory does not hold */
	ck_assert_int_eq(tree_resolve(tree_ino(r1->id, FT_CWD), &n), -ENOENT);
	ck_assert_int_eq(tree_resolve(tree_ino(r1->id, FT_ENVDIR), &n),
			 -ENOENT);
	ck_assert_int_eq(tree_resolve(tree_ino(r1->id, FT_ERROR), &n), -ENOENT);
	ck_assert_int_eq(tree_resolve(tree_ino(r1->id, FT_CTL), &n), -ENOENT);
	ck_assert_int_eq(tree_resolve(tree_ino(r1->id, FT_RUNS), &n), -ENOENT);
	ck_assert_int_eq(tree_resolve(tree_ino(r1->id, FT_SESS), &n), -ENOENT);
	ck_assert_int_eq(tree_resolve(tree_ino(r1->id, FT_LATEST), &n),
			 -ENOENT);
	ck_assert_int_eq(tree_resolve(tree_ino(r1->id, FT_ENVVAR), &n),
			 -ENOENT);
	/* a run kept open after its session went away */
	r2->sess = NULL;
	ck_assert_int_eq(tree_resolve(tree_ino(r2->id, FT_STDOUT), &n),
			 -ENOENT);
	/* a run freed (its id read before: r1 is gone) */
	id = r1->id;
	list_del(&r1->link);
	run_unref(r1);
	ck_assert_int_eq(tree_resolve(tree_ino(id, FT_RUN), &n), -ENOENT);
}
END_TEST

START_TEST(resolve_proc)
{
	struct sess *s = fake_sess();
	struct run *r = add_run(s, true), *p = run_new_empty();
	struct node n;

	ck_assert_ptr_nonnull(p);
	p->sess = s;
	p->is_proc = true;
	ck_assert_int_eq(tree_resolve(tree_ino(p->id, FT_PROC), &n), 0);
	ck_assert_ptr_eq(n.r, p);
	ck_assert(n.run_level);
	ck_assert_int_eq(tree_resolve(tree_ino(p->id, FT_PROCCMD), &n), 0);
	ck_assert_ptr_eq(n.r, p);
	ck_assert_ptr_eq(n.s, s);
	ck_assert_int_eq(tree_resolve(tree_ino(p->id, FT_STDOUT), &n), 0);
	ck_assert_ptr_eq(n.r, p);
	ck_assert_int_eq(tree_resolve(tree_ino(p->id, FT_PID), &n), 0);
	/* a process is not a run of runs/, and the other way round */
	ck_assert_int_eq(tree_resolve(tree_ino(p->id, FT_RUN), &n), -ENOENT);
	ck_assert_int_eq(tree_resolve(tree_ino(p->id, FT_CMD), &n), -ENOENT);
	ck_assert_int_eq(tree_resolve(tree_ino(p->id, FT_TIMEOUT), &n),
			 -ENOENT);
	ck_assert_int_eq(tree_resolve(tree_ino(r->id, FT_PROC), &n), -ENOENT);
	ck_assert_int_eq(tree_resolve(tree_ino(r->id, FT_PROCCMD), &n),
			 -ENOENT);
	ck_assert_int_eq(tree_resolve(tree_ino(r->id, FT_PID), &n), -ENOENT);
	/* nor a session's */
	ck_assert_int_eq(tree_resolve(tree_ino(s->id, FT_PROCCTL), &n),
			 -ENOENT);
	run_unref(p);
}
END_TEST

START_TEST(resolve_envvar)
{
	struct sess *s = fake_sess();
	struct envmap m;
	struct envvar *v;
	struct node n;
	uint64_t id;

	envmap_init(&m, OBJ_ENVVAR, s);
	ck_assert_int_eq(envmap_set(&m, "A", "1", 1), 0);
	v = envmap_get(&m, "A");
	ck_assert_int_eq(tree_resolve(tree_ino(v->id, FT_ENVVAR), &n), 0);
	ck_assert_ptr_eq(n.var, v);
	ck_assert_ptr_eq(n.s, s);
	/* an env var id is not a session or a run */
	ck_assert_int_eq(tree_resolve(tree_ino(v->id, FT_SESS), &n), -ENOENT);
	ck_assert_int_eq(tree_resolve(tree_ino(v->id, FT_STDOUT), &n), -ENOENT);
	ck_assert_int_eq(tree_resolve(tree_ino(v->id, FT_RUN), &n), -ENOENT);
	/* and a session id is not an env var */
	ck_assert_int_eq(tree_resolve(tree_ino(s->id, FT_ENVVAR), &n), -ENOENT);
	id = v->id;
	ck_assert_int_eq(envmap_unset(&m, "A"), 0);
	ck_assert_int_eq(tree_resolve(tree_ino(id, FT_ENVVAR), &n), -ENOENT);
	envmap_free(&m);
}
END_TEST

/* Inode numbers of different objects and types never collide. */
START_TEST(ino_unique)
{
	static fuse_ino_t seen[64 * FT_MAX];
	size_t k = 0;

	for (uint64_t id = 0; id < 64; id++)
		for (int ft = 0; ft < FT_MAX; ft++) {
			fuse_ino_t ino = tree_ino(id, (ft_t)ft);

			ck_assert_uint_eq(ino >> 8, id);
			ck_assert_uint_eq(ino & 0xff, (unsigned)ft);
			for (size_t j = 0; j < k; j++)
				if (seen[j] == ino)
					ck_abort_msg("ino %lu twice",
						     (unsigned long)ino);
			seen[k++] = ino;
		}
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("tree");
	TCase *tc = tcase_create("tables");

	tcase_add_test(tc, root_ino);
	tcase_add_test(tc, tables_well_formed);
	tcase_add_test(tc, other_dirs_have_no_table);
	tcase_add_test(tc, design_files);
	tcase_add_test(tc, fent_every_type);
	tcase_add_test(tc, run_file_types);
	tcase_add_test(tc, proc_table);
	tcase_add_test(tc, init_refuses_bad_tables);
	tcase_add_test(tc, new_family_numbers);
	tcase_add_test(tc, types_keep_their_numbers);
	suite_add_tcase(s, tc);
	tc = tcase_create("resolve");
	tcase_add_test(tc, resolve_fixed);
	tcase_add_test(tc, resolve_bad_types);
	tcase_add_test(tc, resolve_session);
	tcase_add_test(tc, resolve_run);
	tcase_add_test(tc, resolve_proc);
	tcase_add_test(tc, resolve_envvar);
	tcase_add_test(tc, ino_unique);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	if (tree_init(&fam_root) < 0)
		return 1; /* two rows of one type disagree */
	return unit_run(suite());
}
