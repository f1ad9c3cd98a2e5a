/*
 * test_files.c - files/ without a mount: names, the (dev, ino) table,
 * lookups and lookup counts, creation that never follows a symlink, the
 * inode numbers of directory entries, a mount point that is not entered. The files under test are included so
 * that its static helpers can be called; the teardown frees every node,
 * so the tests also run in one process (CK_FORK=no).
 */
#include <sys/mount.h>
#include "fs/files_node.c"
#include "fs/files_fd.c"
#include "fs/files_fh.c"
#include "fs/files_kill.c"
#include "fs/files_xattr.c"
#include "fs/files_state.c"
#include "fs/files.c"
#include "fs/files_dir.c"
#include "fs/fam_root.h"
#include "fs/fam_session.h"
#include "unit.h"

static char ws[PATH_MAX], outside[PATH_MAX];

static void at(const char *dir, const char *name, char *buf, size_t len)
{
	snprintf(buf, len, "%s/%s", dir, name);
}

static void touch(const char *name)
{
	char p[PATH_MAX];
	int fd;

	at(ws, name, p, sizeof(p));
	fd = open(p, O_CREAT | O_WRONLY, 0644);
	ck_assert_int_ge(fd, 0);
	close(fd);
}

static void setup(void)
{
	strcpy(ws, "/tmp/sfs-unit-files.XXXXXX");
	strcpy(outside, "/tmp/sfs-unit-outside.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(ws));
	ck_assert_ptr_nonnull(mkdtemp(outside));
	ck_assert_int_eq(files_init(ws), 0);
}

/* Frees every node and the root: files.c as before files_init. */
static void reset(void)
{
	struct fnode *n, *next;

	for (size_t i = 0; i < hcap; i++)
		for (n = htab[i]; n; n = next) {
			next = n->next;
			if (n != &fnode_root)
				fnode_unref(n, n->nlookup ? n->nlookup : 1);
		}
	close(fnode_root.fd);
	fnode_root = (struct fnode){ .fd = -1 };
	free(htab);
	htab = NULL;
	hcap = hcount = 0;
	free(my_groups);
	my_groups = NULL;
}

static void teardown(void)
{
	char cmd[2 * PATH_MAX];

	reset();
	at(ws, "mp", cmd, sizeof(cmd));
	umount2(cmd, MNT_DETACH); /* a failed mount_point_not_entered's */
	snprintf(cmd, sizeof(cmd), "rm -rf '%s' '%s'", ws, outside);
	ck_assert_int_eq(system(cmd), 0);
}

/* Opens directory n as f_opendir does: its handle. */
static uint64_t dir_open(const struct fnode *n)
{
	int fd = fdq_take(0, fnode_openat(n->fd, ".",
					  O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0));
	uint64_t fh = 0;

	ck_assert_int_eq(fslot_opendir(fd, 0, &fh), 0);
	ck_assert_ptr_nonnull(fslot_of(fh));
	return fh;
}

/* Looks name up in the root; asserts success. */
static struct fnode *look(const char *name, struct fuse_entry_param *e)
{
	int err = 0;
	struct fnode *n = fnode_lookup(&fnode_root, name, e, &err);

	ck_assert_msg(n != NULL, "lookup %s: %s", name, strerror(err));
	return n;
}

START_TEST(names)
{
	ck_assert_int_eq(bad_name(""), EINVAL);
	ck_assert_int_eq(bad_name("a/b"), EINVAL);
	ck_assert_int_eq(bad_name("/"), EINVAL);
	ck_assert_int_eq(bad_name("../x"), EINVAL);
	ck_assert_int_eq(bad_name("."), ENOENT);
	ck_assert_int_eq(bad_name(".."), ENOENT);
	ck_assert_int_eq(bad_name("..."), 0);
	ck_assert_int_eq(bad_name(".hidden"), 0);
	ck_assert_int_eq(bad_name("a\\b"), 0);
	ck_assert_int_eq(bad_name("a b\n"), 0);
}
END_TEST

START_TEST(inodes)
{
	ck_assert(files_is(tree_ino(0, FT_FILES)));
	ck_assert(files_is(tree_ino(7, FT_FILE)));
	ck_assert(!files_is(tree_ino(0, FT_ROOT)));
	ck_assert(!files_is(tree_ino(7, FT_SESS)));
	ck_assert_ptr_eq(fnode_of(tree_ino(0, FT_FILES)), &fnode_root);
	ck_assert_ptr_null(fnode_of(tree_ino(1, FT_FILES)));
	ck_assert_ptr_null(fnode_of(tree_ino(0, FT_ROOT)));
	ck_assert_ptr_null(fnode_of(fnode_ino_of(12345)));
	ck_assert_uint_eq(fnode_ino(&fnode_root), tree_ino(0, FT_FILES));
	ck_assert_int_eq(files_init(ws), -EALREADY);
}
END_TEST

START_TEST(lookup_and_forget)
{
	struct fuse_entry_param e, e2;
	struct fnode *n;
	char a[PATH_MAX], b[PATH_MAX];
	int err = 0;

	touch("a");
	at(ws, "a", a, sizeof(a));
	at(ws, "b", b, sizeof(b));
	ck_assert_int_eq(link(a, b), 0);
	n = look("a", &e);
	ck_assert_uint_eq(e.ino, fnode_ino_of(n->id));
	ck_assert_uint_eq(e.attr.st_ino, e.ino);
	ck_assert(S_ISREG(e.attr.st_mode));
	ck_assert_ptr_eq(fnode_of(e.ino), n);
	ck_assert_uint_eq(n->nlookup, 1);
	/* a hard link is the same node */
	ck_assert_ptr_eq(look("b", &e2), n);
	ck_assert_uint_eq(e2.ino, e.ino);
	ck_assert_uint_eq(n->nlookup, 2);
	ck_assert_ptr_null(fnode_lookup(&fnode_root, "missing", &e2, &err));
	ck_assert_int_eq(err, ENOENT);
	fnode_unref(n, 1);
	ck_assert_ptr_eq(fnode_of(e.ino), n);
	fnode_unref(n, 1);
	ck_assert_ptr_null(fnode_of(e.ino));
	ck_assert_ptr_null(fnode_find(e.attr.st_dev, (ino_t)e.attr.st_ino));
	ck_assert_uint_eq(hcount, 1); /* the root */
	/* a later lookup makes a new node with a new inode number */
	n = look("a", &e2);
	ck_assert_uint_ne(e2.ino, e.ino);
	fnode_unref(n, 5);
	ck_assert_ptr_null(fnode_of(e2.ino));
	fnode_unref(&fnode_root, 100);
	ck_assert_ptr_eq(fnode_of(tree_ino(0, FT_FILES)), &fnode_root);
}
END_TEST

START_TEST(many)
{
	enum { N = 3000 };
	static struct fnode *n[N];
	struct fuse_entry_param e;
	char name[32];

	for (int i = 0; i < N; i++) {
		snprintf(name, sizeof(name), "f%d", i);
		touch(name);
		n[i] = look(name, &e);
	}
	ck_assert_uint_eq(hcount, N + 1);
	for (int i = 0; i < N; i++) {
		snprintf(name, sizeof(name), "f%d", i);
		ck_assert_ptr_eq(look(name, &e), n[i]);
		ck_assert_ptr_eq(fnode_find(n[i]->dev, n[i]->ino), n[i]);
	}
	for (int i = 0; i < N; i += 2)
		fnode_unref(n[i], 2);
	ck_assert_uint_eq(hcount, N / 2 + 1);
	for (int i = 1; i < N; i += 2)
		ck_assert_ptr_eq(fnode_of(fnode_ino(n[i])), n[i]);
}
END_TEST

/* Beyond the bound, nodes keep their handles and no descriptor; a
 * request opens the handle again, which follows the file across a
 * rename, fails for a file that is gone, and never takes a new file
 * with an old file's inode number for the old one. */
START_TEST(evicted)
{
	enum { N = 100 };
	static struct fnode *n[N];
	struct fuse_entry_param e;
	char name[32], a[PATH_MAX], b[PATH_MAX];
	struct stat st;
	int fd;

	ck_assert(can_open); /* root may open handles */
	bound = BOUND_MIN;
	for (int i = 0; i < N; i++) {
		snprintf(name, sizeof(name), "f%d", i);
		touch(name);
		n[i] = look(name, &e);
	}
	ck_assert_uint_eq(fnfd_open_count(), BOUND_MIN);
	ck_assert_int_eq(n[0]->fd, -1);
	ck_assert_ptr_nonnull(n[0]->fh);
	ck_assert_ptr_eq(fnode_by_handle(n[5]->fh), n[5]);
	/* renamed while evicted: the handle names it still */
	at(ws, "f0", a, sizeof(a));
	at(ws, "g0", b, sizeof(b));
	ck_assert_int_eq(rename(a, b), 0);
	ck_assert_ptr_eq(fnode_of(fnode_ino(n[0])), n[0]);
	ck_assert_int_ge(n[0]->fd, 0);
	ck_assert_int_eq(fstat(n[0]->fd, &st), 0);
	ck_assert_uint_eq(st.st_ino, n[0]->ino);
	ck_assert_uint_eq(fnfd_open_count(), BOUND_MIN);
	/* another file's descriptor is not the node's file */
	fd = open(b, O_PATH | O_CLOEXEC);
	ck_assert(fnfd_same(n[0], fd));
	ck_assert(!fnfd_same(n[1], fd));
	close(fd);
	/* gone while evicted: stale, and a new file of that name (maybe
	 * with its inode number) is a node of its own */
	at(ws, "f1", a, sizeof(a));
	ck_assert_int_eq(unlink(a), 0);
	ck_assert_ptr_null(fnode_of(fnode_ino(n[1])));
	touch("f1");
	ck_assert_ptr_ne(look("f1", &e), n[1]);
	ck_assert_ptr_null(fnode_of(fnode_ino(n[1])));
	for (int i = 0; i < N; i++)
		fnode_unref(n[i], n[i]->nlookup);
	ck_assert_uint_eq(fnfd_open_count(), 1); /* the new f1's */
	bound = BOUND_MAX;
}
END_TEST

START_TEST(symlinks_stay_links)
{
	struct fuse_entry_param e;
	char p[PATH_MAX], t[PATH_MAX], buf[PATH_MAX];
	struct fnode *n;
	ssize_t len;

	/* a symlink out of the workspace is a node of its own, not followed */
	at(outside, "target", t, sizeof(t));
	at(ws, "esc", p, sizeof(p));
	ck_assert_int_eq(symlink(t, p), 0);
	n = look("esc", &e);
	ck_assert(S_ISLNK(e.attr.st_mode));
	ck_assert_uint_eq(n->type, S_IFLNK);
	len = readlinkat(n->fd, "", buf, sizeof(buf) - 1);
	ck_assert_int_eq(len, (ssize_t)strlen(t));
	/* creating through it fails instead of creating outside */
	ck_assert_int_eq(create_at(&fnode_root, "esc", 0644, 0, O_WRONLY), -ELOOP);
	ck_assert_int_eq(access(t, F_OK), -1);
	/* a symlink to a directory outside is not a way out either */
	at(ws, "up", p, sizeof(p));
	ck_assert_int_eq(symlink(outside, p), 0);
	n = look("up", &e);
	ck_assert(S_ISLNK(e.attr.st_mode));
	ck_assert_int_eq(openat(n->fd, "target", O_RDONLY), -1);
	ck_assert_int_eq(errno, ENOTDIR);
}
END_TEST

START_TEST(create_ignores_umask)
{
	struct fuse_entry_param e;
	struct fnode *n;
	mode_t old;
	int fd;

	old = umask(077);
	ck_assert_int_eq(make_at(&fnode_root, "d", S_IFDIR | 0755, 0, 0, NULL), 0);
	ck_assert_int_eq(make_at(&fnode_root, "fifo", S_IFIFO | 0640, 0, 0, NULL), 0);
	fd = create_at(&fnode_root, "f", 0664, 0, O_WRONLY | O_EXCL);
	ck_assert_int_ge(fd, 0);
	close(fd);
	ck_assert_int_eq(create_at(&fnode_root, "f", 0664, 0, O_WRONLY | O_EXCL),
			 -EEXIST);
	ck_assert_int_eq(umask(old), 077);
	n = look("d", &e);
	ck_assert_uint_eq(e.attr.st_mode, S_IFDIR | 0755);
	ck_assert_uint_eq(n->type, S_IFDIR);
	look("fifo", &e);
	ck_assert_uint_eq(e.attr.st_mode, S_IFIFO | 0640);
	look("f", &e);
	ck_assert_uint_eq(e.attr.st_mode, S_IFREG | 0664);
	ck_assert_int_eq(make_at(&fnode_root, "d", S_IFDIR | 0755, 0, 0, NULL),
			 -EEXIST);
}
END_TEST

START_TEST(open_flags_are_plain)
{
	int f = open_flags(O_RDWR | O_APPEND | O_TRUNC | O_DIRECT | O_NOFOLLOW |
			   O_CREAT | O_EXCL | O_NOCTTY);

	/* O_NONBLOCK: another process's lease is never waited for */
	ck_assert_int_eq(f,
			 O_RDWR | O_APPEND | O_TRUNC | O_CLOEXEC | O_NONBLOCK);
}
END_TEST

START_TEST(dir_entries)
{
	struct fuse_entry_param e;
	struct dirent de = { .d_ino = 424242 };
	struct fnode *n;

	strcpy(de.d_name, ".");
	ck_assert_uint_eq(entry_ino(&fnode_root, &de), fnode_ino(&fnode_root));
	strcpy(de.d_name, "..");
	ck_assert_uint_eq(entry_ino(&fnode_root, &de), FUSE_ROOT_ID);
	touch("x");
	n = look("x", &e);
	strcpy(de.d_name, "x");
	de.d_ino = n->ino;
	ck_assert_uint_eq(entry_ino(&fnode_root, &de), fnode_ino(n));
	de.d_ino = 424242; /* not looked up: the real number */
	strcpy(de.d_name, "y");
	ck_assert_uint_eq(entry_ino(&fnode_root, &de), 424242);
}
END_TEST

START_TEST(not_a_sessionfs)
{
	uint64_t mnt = 0;

	ck_assert_int_eq(fnode_mount_of(fnode_root.fd, &mnt), 0);
	ck_assert_uint_ne(mnt, 0);
	ck_assert(!fnode_is_sessionfs(mnt));
	ck_assert(!fnode_is_sessionfs(~(uint64_t)0));
}
END_TEST

/* A bind mount below the workspace: listed, never entered (EXDEV), and
 * the calls on its name in its directory do not enter it either. */
START_TEST(mount_point_not_entered)
{
	struct fuse_entry_param e;
	char p[PATH_MAX], d[PATH_MAX];
	struct fnode *dir, *n;
	bool listed = false;
	struct dirent *de;
	uint64_t fd;
	int err = 0;

	at(ws, "mp", p, sizeof(p));
	ck_assert_int_eq(mkdir(p, 0755), 0);
	if (mount(outside, p, NULL, MS_BIND, NULL) < 0) {
		fprintf(stderr, "skip mount_point_not_entered: %s\n",
			strerror(errno));
		return;
	}
	at(outside, "inside", d, sizeof(d));
	ck_assert_int_eq(mkdir(d, 0755), 0);
	n = fnode_lookup(&fnode_root, "mp", &e, &err);
	ck_assert_ptr_null(n);
	ck_assert_int_eq(err, EXDEV);
	ck_assert_int_eq(create_at(&fnode_root, "mp", 0644, 0, O_RDONLY), -EXDEV);
	ck_assert_int_eq(make_at(&fnode_root, "mp", S_IFDIR | 0755, 0, 0, NULL),
			 -EEXIST);
	ck_assert_int_eq(unlinkat(fnode_root.fd, "mp", AT_REMOVEDIR), -1);
	ck_assert_int_eq(errno, EBUSY);
	fd = dir_open(&fnode_root);
	while ((de = readdir(fslot_of(fd)->dp)))
		listed = listed || !strcmp(de->d_name, "mp");
	fslot_close(fd);
	ck_assert(listed);
	/* a node made before the mount stays the directory under it */
	ck_assert_int_eq(umount2(p, MNT_DETACH), 0);
	dir = look("mp", &e);
	ck_assert_int_eq(mount(outside, p, NULL, MS_BIND, NULL), 0);
	ck_assert_ptr_null(fnode_lookup(dir, "inside", &e, &err));
	ck_assert_int_eq(err, ENOENT);
	fd = dir_open(dir);
	fslot_close(fd);
	ck_assert_int_eq(umount2(p, MNT_DETACH), 0);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("files");
	TCase *tc = tcase_create("basic");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, names);
	tcase_add_test(tc, inodes);
	tcase_add_test(tc, lookup_and_forget);
	tcase_add_test(tc, symlinks_stay_links);
	tcase_add_test(tc, create_ignores_umask);
	tcase_add_test(tc, open_flags_are_plain);
	tcase_add_test(tc, dir_entries);
	tcase_add_test(tc, not_a_sessionfs);
	tcase_add_test(tc, mount_point_not_entered);
	suite_add_tcase(s, tc);
	tc = tcase_create("volume");
	tcase_set_timeout(tc, 30);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, many);
	tcase_add_test(tc, evicted);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return unit_run(suite());
}
