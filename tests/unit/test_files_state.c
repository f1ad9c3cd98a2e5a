/*
 * test_files_state.c - files/ across an upgrade in place, without a
 * mount: files_save, then what an execve does to the daemon (its memory
 * goes, the descriptors handed over stay), then files_restore. Nodes
 * keep their ids, lookup counts and files; an open file writes on into
 * the same file; a directory listed half way goes on without a name
 * twice or missing; the descriptors count as before; a descriptor that
 * did not survive makes its node or open file stale (ESTALE), and a
 * state without the root's (a crash) makes all of them stale; bad
 * states are refused, never crash.
 */
#include "fs/files_node.c"
#include "fs/files_fd.c"
#include "fs/files_fh.c"
#include "fs/files_kill.c"
#include "fs/files_xattr.c"
#include "fs/files_state.c"
#include "fs/files.c"
#include "fs/files_dir.c"
#include "unit.h"

#define SHE    1000
#define NNAMES 300
#define DIRBUF 1024 /* a readdir buffer a few dozen entries long */

static char ws[PATH_MAX];
static char *saved; /* the state files_save wrote */
static size_t saved_len;

static void at(const char *name, char *buf, size_t len)
{
	snprintf(buf, len, "%s/%s", ws, name);
}

static void setup(void)
{
	strcpy(ws, "/tmp/sfs-unit-filestate.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(ws));
	ck_assert_int_eq(files_init(ws), 0);
}

/* Forgets every node and slot, as after an execve: the structures go,
 * each descriptor stays open under its number, its count of its user
 * goes (the next program's sessions/session/fdq.c starts empty). */
static void exec_like(void)
{
	struct fnode *n, *next;

	for (size_t i = 0; i < hcap; i++)
		for (n = htab[i]; n; n = next) {
			next = n->next;
			if (n != &fnode_root) {
				objs_del(n->id);
				free(n->fh);
				free(n);
			}
		}
	free(fh_tab); /* fs/files_fd.c's tables went with the nodes */
	fh_tab = NULL;
	fh_cap = fh_count = nopen = 0;
	lru_newest = lru_oldest = NULL;
	for (n = lost; n; n = next) {
		next = n->next;
		objs_del(n->id);
		free(n);
	}
	lost = NULL;
	for (size_t i = 0; i < nslots; i++) {
		struct fslot *s = slots[i];
		int keep;

		if (!s)
			continue;
		fdq_release(s->fd);
		if (s->dp) { /* the stream goes, its descriptor stays */
			keep = dup(s->fd);
			closedir(s->dp);
			ck_assert_int_eq(dup2(keep, s->fd), s->fd);
			close(keep);
		}
		free(s);
	}
	free(slots);
	slots = NULL;
	nslots = cap = nfree = 0;
	fnode_root = (struct fnode){ .fd = -1 };
	free(htab);
	htab = NULL;
	hcap = hcount = 0;
	fnode_gen = 0;
}

/* Saves files/ into saved. */
static void save(void)
{
	struct state_w w;
	const void *p;
	size_t len;

	state_w_init(&w);
	files_save(&w);
	ck_assert_int_eq(state_w_bytes(&w, &p, &len), 0);
	free(saved);
	saved = malloc(len);
	memcpy(saved, p, len);
	saved_len = len;
	state_w_free(&w);
}

/* Restores files/ from saved; returns files_restore's answer. */
static int restore(void)
{
	struct state_r root, body;

	ck_assert_int_eq(state_check(saved, saved_len, &root), 0);
	ck_assert(state_obj(&root, UPK_FILES, &body));
	return files_restore(&body);
}

static void teardown(void)
{
	char cmd[2 * PATH_MAX];

	exec_like(); /* leaks no memory; the descriptors go with the fork */
	free(saved);
	saved = NULL;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", ws);
	ck_assert_int_eq(system(cmd), 0);
}

static struct fnode *look(struct fnode *dir, const char *name,
			  struct fuse_entry_param *e)
{
	int err = 0;
	struct fnode *n = fnode_lookup(dir, name, e, &err);

	ck_assert_msg(n != NULL, "lookup %s: %s", name, strerror(err));
	return n;
}

/* Opens the file of n for writing as uid, as f_open does: its handle. */
static uint64_t open_file(const struct fnode *n, uid_t uid)
{
	char p[64];
	int fd;

	fnode_proc_path(p, sizeof(p), n->fd);
	fd = fdq_take(uid, open(p, O_WRONLY | O_CLOEXEC));
	ck_assert_int_ge(fd, 0);
	return fslot_add(fd, uid, NULL);
}

static uint64_t open_dir(const struct fnode *n, uid_t uid)
{
	int fd = fdq_take(uid,
			  fnode_openat(n->fd, ".",
				       O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0));
	uint64_t fh = 0;

	ck_assert_int_eq(fslot_opendir(fd, uid, &fh), 0);
	return fh;
}

START_TEST(nodes_keep_their_ids)
{
	struct fuse_entry_param e, ed, ef, e2;
	struct fnode *a, *d, *f;
	struct stat st;
	uint32_t gen;
	char p[PATH_MAX];

	at("a", p, sizeof(p));
	close(open(p, O_CREAT | O_WRONLY, 0644));
	at("d", p, sizeof(p));
	ck_assert_int_eq(mkdir(p, 0755), 0);
	at("d/f", p, sizeof(p));
	close(open(p, O_CREAT | O_WRONLY, 0644));
	a = look(&fnode_root, "a", &e);
	look(&fnode_root, "a", &e);
	d = look(&fnode_root, "d", &ed);
	f = look(d, "f", &ef);
	ck_assert_uint_eq(e.generation, fnode_gen);
	gen = fnode_gen;
	save();
	/* saving changed nothing */
	ck_assert_ptr_eq(fnode_of(e.ino), a);
	ck_assert_uint_eq(a->nlookup, 2);
	exec_like();
	ck_assert_ptr_null(fnode_of(e.ino));
	ck_assert_int_eq(restore(), 0);
	ck_assert_uint_eq(fnode_gen, gen);
	a = fnode_of(e.ino);
	ck_assert_ptr_nonnull(a);
	ck_assert_uint_eq(a->nlookup, 2);
	ck_assert_uint_eq(fnode_of(ef.ino)->nlookup, 1);
	/* the same file, found again by its (dev, ino) */
	at("d/f", p, sizeof(p));
	ck_assert_int_eq(stat(p, &st), 0);
	f = fnode_find(st.st_dev, st.st_ino);
	ck_assert_ptr_eq(f, fnode_of(ef.ino));
	d = fnode_of(ed.ino);
	ck_assert_ptr_eq(look(d, "f", &e2), f);
	ck_assert_uint_eq(e2.ino, ef.ino);
	ck_assert_uint_eq(e2.generation, gen);
	/* the kernel's forgets go on from the saved counts */
	fnode_forget(e.ino, 2);
	ck_assert_ptr_null(fnode_of(e.ino));
	/* a new node's id is above every restored one */
	ck_assert_uint_gt(look(&fnode_root, "a", &e2)->id, f->id);
}
END_TEST

START_TEST(open_file_writes_on)
{
	struct fuse_entry_param e;
	struct fnode *n;
	unsigned long held;
	uint64_t fh;
	char p[PATH_MAX], buf[64] = { 0 };
	int fd;

	at("log", p, sizeof(p));
	close(open(p, O_CREAT | O_WRONLY, 0644));
	n = look(&fnode_root, "log", &e);
	fh = open_file(n, SHE);
	ck_assert_int_eq(pwrite(fslot_of(fh)->fd, "before\n", 7, 0), 7);
	held = fdq_held();
	save();
	exec_like();
	ck_assert_uint_eq(fdq_held(), held - 1);
	/* files_init ran first in the next program: the saved root wins */
	ck_assert_int_eq(files_init(ws), 0);
	ck_assert_int_eq(restore(), 0);
	ck_assert_uint_eq(fdq_held(), held);
	ck_assert_ptr_nonnull(fslot_of(fh));
	ck_assert_uint_eq(fslot_of(fh)->uid, SHE);
	/* rename does not matter: the descriptor is the file */
	ck_assert_int_eq(renameat(fnode_root.fd, "log", fnode_root.fd, "log2"),
			 0);
	ck_assert_int_eq(pwrite(fslot_of(fh)->fd, "after\n", 6, 7), 6);
	fslot_close(fh);
	ck_assert_uint_eq(fdq_held(), held - 1);
	ck_assert_ptr_null(fslot_of(fh));
	at("log2", p, sizeof(p));
	fd = open(p, O_RDONLY);
	ck_assert_int_eq(read(fd, buf, sizeof(buf)), 13);
	close(fd);
	ck_assert_str_eq(buf, "before\nafter\n");
}
END_TEST

/* Reads a buffer of entries of handle fh into seen (counts by index). */
static size_t read_some(struct fnode *dir, uint64_t fh, int *seen, int *dots)
{
	char buf[DIRBUF];
	ssize_t len = fill_dir(NULL, dir, fslot_of(fh), buf, sizeof(buf));
	size_t pos = 0, count = 0;

	ck_assert_int_ge(len, 0);
	while (pos < (size_t)len) {
		uint32_t namelen;
		char name[256];

		memcpy(&namelen, buf + pos + 16, 4);
		memcpy(name, buf + pos + 24, namelen);
		name[namelen] = 0;
		if (name[0] == '.')
			(*dots)++;
		else
			seen[atoi(name + 1)]++;
		pos += (24 + namelen + 7) & ~(size_t)7;
		count++;
	}
	return count;
}

START_TEST(listing_goes_on)
{
	int seen[NNAMES] = { 0 }, dots = 0, fd;
	uint64_t fh;
	char name[32];

	for (int i = 0; i < NNAMES; i++) {
		snprintf(name, sizeof(name), "n%03d-with-a-longer-name", i);
		fd = openat(fnode_root.fd, name, O_CREAT | O_WRONLY, 0644);
		ck_assert_int_ge(fd, 0);
		close(fd);
	}
	fh = open_dir(&fnode_root, SHE);
	for (int i = 0; i < 3; i++)
		ck_assert_uint_gt(read_some(&fnode_root, fh, seen, &dots), 0);
	save();
	/* the old program goes on as if nothing happened */
	ck_assert_uint_gt(read_some(&fnode_root, fh, seen, &dots), 0);
	save();
	exec_like();
	ck_assert_int_eq(restore(), 0);
	while (read_some(&fnode_root, fh, seen, &dots) > 0)
		;
	ck_assert_int_eq(dots, 2);
	for (int i = 0; i < NNAMES; i++)
		ck_assert_msg(seen[i] == 1, "n%03d seen %d times", i, seen[i]);
	fslot_close(fh);
	ck_assert_uint_eq(fdq_held(), 0);
}
END_TEST

/* A node whose descriptor was not handed over (one evicted beyond the
 * bound has none) is opened again from its handle: the same file. */
START_TEST(handles_kept)
{
	struct fuse_entry_param ea;
	struct fnode *a;
	struct stat st;
	char p[PATH_MAX];

	at("a", p, sizeof(p));
	close(open(p, O_CREAT | O_WRONLY, 0644));
	a = look(&fnode_root, "a", &ea);
	save();
	close(a->fd);
	a->fd = -1;
	exec_like();
	ck_assert_int_eq(restore(), 0);
	a = fnode_of(ea.ino);
	ck_assert_ptr_nonnull(a);
	ck_assert_int_eq(stat(p, &st), 0);
	ck_assert_uint_eq(a->ino, st.st_ino);
	fnode_forget(ea.ino, 1);
	ck_assert_ptr_null(fnode_of(ea.ino));
}
END_TEST

/* Upgrade with one node's and one open file's descriptor gone: both
 * answer ESTALE until the kernel lets them go, and nothing else takes
 * their id or handle meanwhile; the rest is kept. */
START_TEST(lost_descriptors_are_stale)
{
	struct fuse_entry_param ea, eb, e;
	struct fnode *a, *b;
	uint64_t fa, fb, fnew, b_id;
	char p[PATH_MAX];

	at("a", p, sizeof(p));
	close(open(p, O_CREAT | O_WRONLY, 0644));
	at("b", p, sizeof(p));
	close(open(p, O_CREAT | O_WRONLY, 0644));
	a = look(&fnode_root, "a", &ea);
	b = look(&fnode_root, "b", &eb);
	b_id = b->id;
	fa = open_file(a, SHE);
	fb = open_file(b, SHE);
	save();
	close(b->fd); /* and its file goes: its handle opens nothing */
	ck_assert_int_eq(unlink(p), 0);
	fdq_close(fslot_of(fb)->fd);
	fslot_of(fb)->fd = -1; /* exec_like must not count it */
	exec_like();
	ck_assert_int_eq(restore(), 0);
	ck_assert_uint_eq(fdq_held(), 1);
	ck_assert_ptr_nonnull(fnode_of(ea.ino));
	ck_assert_ptr_nonnull(fslot_of(fa));
	ck_assert_ptr_null(fnode_of(eb.ino));
	ck_assert_int_eq(fnode_err(eb.ino), ESTALE);
	ck_assert_ptr_null(fslot_of(fb));
	/* a new lookup of b is a new node; a new open another handle */
	close(open(p, O_CREAT | O_WRONLY, 0644));
	ck_assert_uint_ne(fnode_ino(look(&fnode_root, "b", &e)), eb.ino);
	fnew = open_file(fnode_of(e.ino), SHE);
	ck_assert_uint_ne(fnew, fb);
	/* the kernel lets them go */
	fslot_close(fb);
	fnode_forget(eb.ino, 1);
	ck_assert_ptr_null(lost);
	ck_assert_uint_eq(objs_kind(b_id), OBJ_NONE);
	fslot_close(fa);
	fslot_close(fnew);
	ck_assert_uint_eq(fdq_held(), 0);
}
END_TEST

/* A state without descriptors (a crash's): the workspace is opened
 * again, and every inode and handle from before is stale, whatever the
 * new program gives out: a node with the very id of an old one, a
 * handle in the very slot. */
START_TEST(crash_makes_all_stale)
{
	struct fuse_entry_param ea, e;
	uint64_t fh, fnew, id;
	uint32_t gen = fnode_gen;
	char p[PATH_MAX];

	at("a", p, sizeof(p));
	close(open(p, O_CREAT | O_WRONLY, 0644));
	id = look(&fnode_root, "a", &ea)->id;
	fh = open_file(fnode_of(ea.ino), SHE);
	save();
	close(fnode_of(ea.ino)->fd);
	fdq_close(fslot_of(fh)->fd);
	fslot_of(fh)->fd = -1;
	close(fnode_root.fd);
	exec_like();
	ck_assert_int_eq(restore(), 0);
	ck_assert_int_ge(fnode_root.fd, 0);
	ck_assert_uint_ne(fnode_gen, gen);
	ck_assert_ptr_null(fnode_of(ea.ino));
	ck_assert_int_eq(fnode_err(ea.ino), ESTALE);
	ck_assert_ptr_null(fslot_of(fh));
	objs_reuse(id);
	ck_assert_uint_eq(look(&fnode_root, "a", &e)->id, id);
	ck_assert_uint_ne(e.generation, gen);
	ck_assert_uint_ne(e.ino, ea.ino);
	ck_assert_ptr_null(fnode_of(ea.ino));
	fnew = open_file(fnode_of(e.ino), SHE);
	ck_assert_uint_eq((uint32_t)fnew, (uint32_t)fh); /* the same slot */
	ck_assert_uint_ne(fnew, fh);
	ck_assert_ptr_null(fslot_of(fh));
	fslot_close(fh); /* a stale handle's release changes nothing */
	ck_assert_ptr_nonnull(fslot_of(fnew));
	fslot_close(fnew);
}
END_TEST

/* Objects a reader must refuse, one by one, without crashing. */
START_TEST(bad_states_refused)
{
	struct state_r root, body;
	struct state_w w;
	const void *p;
	size_t len;
	int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);

	state_w_init(&w);
	state_open(&w, UPK_FILES);
	state_put_u64(&w, KF_GEN, fnode_gen);
	state_put_fd(&w, KF_ROOT_FD, dup(fnode_root.fd));
	state_open(&w, FNODE_STATE_KEY); /* no id */
	state_put_u64(&w, KN_NLOOKUP, 1);
	state_close(&w);
	state_open(&w, FNODE_STATE_KEY); /* an id too large for an inode */
	state_put_u64(&w, KN_ID, UINT64_MAX);
	state_put_u64(&w, KN_NLOOKUP, 1);
	state_close(&w);
	state_open(&w, FNODE_STATE_KEY); /* no lookups */
	state_put_u64(&w, KN_ID, 77);
	state_close(&w);
	for (int i = 0; i < 2; i++) { /* the same id twice, a bad fd */
		state_open(&w, FNODE_STATE_KEY);
		state_put_u64(&w, KN_ID, 78);
		state_put_u64(&w, KN_NLOOKUP, 1);
		state_put_u64(&w, KN_FD, 99999);
		state_close(&w);
	}
	state_open(&w, FSLOT_STATE_KEY); /* an index out of range */
	state_put_u64(&w, KS_INDEX, UINT64_MAX);
	state_put_fd(&w, KS_FD, fd);
	state_close(&w);
	for (int i = 0; i < 2; i++) { /* one index twice */
		state_open(&w, FSLOT_STATE_KEY);
		state_put_u64(&w, KS_INDEX, 3);
		state_put_u64(&w, KS_DIR, 1); /* and not a directory */
		state_put_fd(&w, KS_FD, dup(fd));
		state_close(&w);
	}
	state_close(&w);
	ck_assert_int_eq(state_w_bytes(&w, &p, &len), 0);
	ck_assert_int_eq(state_check(p, len, &root), 0);
	ck_assert(state_obj(&root, UPK_FILES, &body));
	exec_like();
	ck_assert_int_eq(files_restore(&body), 0);
	state_w_free(&w);
	ck_assert_ptr_nonnull(fnode_of(tree_ino(0, FT_FILES)));
	ck_assert_ptr_null(fnode_of(fnode_ino_of(77)));
	ck_assert_ptr_null(fnode_of(fnode_ino_of(78)));
	ck_assert_uint_eq(objs_kind(78), OBJ_FILE); /* lost, until forgotten */
	fnode_forget(fnode_ino_of(78), 1);
	ck_assert_ptr_null(fslot_of(handle(3)));
	ck_assert_uint_eq(nslots, 4);
	ck_assert_int_eq(fcntl(fd, F_GETFD), -1); /* closed as refused */
	fslot_close(handle(3));
	/* an empty object: no root to be had, nothing else */
	exec_like();
	ck_assert_int_eq(files_restore(&(struct state_r){ 0 }), -ENOENT);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("files_state");
	TCase *tc = tcase_create("upgrade");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, nodes_keep_their_ids);
	tcase_add_test(tc, open_file_writes_on);
	tcase_add_test(tc, listing_goes_on);
	tcase_add_test(tc, lost_descriptors_are_stale);
	tcase_add_test(tc, handles_kept);
	tcase_add_test(tc, crash_makes_all_stale);
	tcase_add_test(tc, bad_states_refused);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return unit_run(suite());
}
