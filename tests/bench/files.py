"""files: files/ (the workspace passed through FUSE) against the backing
directory itself and libfuse's passthrough_hp over the same directory,
cached (its defaults: 86,400 s entry and attribute timeouts, the page
cache kept across opens) and with --nocache. Workloads, each timed on
all four, interleaved (each round turns the order), over FILES_ROUNDS
rounds (default 3), each on fresh mounts:

  git clone   a local repository of 4,100 files (/usr/include without
              boost, node and llvm), --no-hardlinks
  git status  in that clone, warm (the second of two)
  tar -x      10,000 files (of /usr/include/boost, 100 MB)
  du -s       of such a tree of 10,000 files, warm (the second of two;
              grep and stat come after it)
  grep -r     a string found nowhere, through that tree
  stat        lstat of its 10,000 files (in this process)
  dd bs=1M    read of a FILES_DD_MIB file (default 256: with bs=4k a GiB
              takes 20 s through --nocache here), the backing's pages warm
  dd bs=4k    the same with 4 KiB reads
  ninja       meson setup (buildtype plain: -O0, the compiler's share
              smaller) and `ninja sessionfs` in a copy of this source

Then the coherence check: files changed in the backing directory
(a write of the same size, a truncate, a rename, an unlink, a create)
and read at once through sessionfs and through passthrough_hp (cached
and not), each having read them before; counts the reads that gave the
old state.

Usage: files.py MNT DAEMON_PID DAEMON
MNT and DAEMON_PID (run.sh's mount) are not used: the backing directory
is a new directory under FILES_DIR (default /var/tmp: a disk, not a
tmpfs), mounted as DAEMON's workspace (-c with `workspace = ...`) and
by FILES_HP (passthrough_hp; without it only the backing directory and
sessionfs are timed). The data sets (the repository, the tarball) are
made once and kept in FILES_CACHE (default DAEMON's directory/
thirdparty/files-bench). FILES_COHERENCE_N: changes of each kind
(default 20). Prints, per row, the median [range] of each and the ratio
of each median to the backing directory's [range of the rounds'
ratios]. Exit status 0, or 1 on any error or stop signal; every mount
is unmounted on every path and the backing directory removed.
"""

import os
import shutil
import subprocess
import tempfile
import time

import sfsbench as sb

TIMEOUT_S = 300  # one workload's run
INCLUDE = "/usr/include"
REPO_SKIP = ("boost", "node", "llvm-14")
TAR_FILES = 10000
HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(os.path.dirname(HERE))


def run(argv, cwd=None, ok=(0,)):
    """Runs argv quietly under TIMEOUT_S; BenchError unless its status is in ok,
    with the end of its output (ninja and meson tell of a failure on stdout)."""
    p = subprocess.run(argv, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       timeout=TIMEOUT_S, check=False)
    if p.returncode not in ok:
        raise sb.BenchError("%s: status %d: %s" % (" ".join(argv), p.returncode,
                                                   p.stdout.decode(errors="replace")[-600:]))


def timed(argv, cwd=None, ok=(0,)):
    t0 = time.monotonic()
    run(argv, cwd, ok)
    return time.monotonic() - t0


# ------------------------------------------------------------ data sets

def make_data(cache):
    """The repository and the tarball in cache, made once; their paths."""
    os.makedirs(cache, exist_ok=True)
    repo = os.path.join(cache, "include.git")
    if not os.path.isdir(os.path.join(repo, ".git")):
        tmp = tempfile.mkdtemp(prefix=".repo.", dir=cache)
        names = sorted(n for n in os.listdir(INCLUDE) if n not in REPO_SKIP)
        run(["cp", "-a"] + [os.path.join(INCLUDE, n) for n in names] + [tmp])
        run(["git", "init", "-q"], tmp)
        run(["git", "add", "-A"], tmp)
        run(["git", "-c", "user.name=bench", "-c", "user.email=bench@localhost",
             "commit", "-q", "-m", "usr/include"], tmp)
        os.rename(tmp, repo)
    tar = os.path.join(cache, "boost.tar")
    if not os.path.isfile(tar):
        files = []
        for d, dirs, fs in os.walk(os.path.join(INCLUDE, "boost")):
            dirs.sort()
            files += [os.path.relpath(os.path.join(d, f), INCLUDE) for f in sorted(fs)]
        lst = os.path.join(cache, "boost.list")
        with open(lst, "w") as f:
            f.write("\n".join(files[:TAR_FILES]) + "\n")
        run(["tar", "-cf", tar + ".tmp", "-C", INCLUDE, "-T", lst])
        os.rename(tar + ".tmp", tar)
    return repo, tar


def make_big(path, mib):
    block = os.urandom(1 << 20)
    with open(path, "wb") as f:
        for _ in range(mib):
            f.write(block)


# ------------------------------------------------------------ the mounts

class Mount:
    """A FUSE daemon in the foreground on a directory of its own; root is
    where the backing directory shows through it."""

    def __init__(self, work, name, argv, sub=""):
        self.mnt = os.path.join(work, name)
        os.mkdir(self.mnt)
        self.root = os.path.join(self.mnt, sub) if sub else self.mnt
        self.log = open(os.path.join(work, name + ".log"), "w")
        self.proc = subprocess.Popen(argv + [self.mnt], stdout=self.log, stderr=self.log,
                                     stdin=subprocess.DEVNULL)
        end = time.monotonic() + 20
        while not (os.path.ismount(self.mnt) and os.path.isdir(self.root)):
            if time.monotonic() > end or self.proc.poll() is not None:
                self.close()
                raise sb.BenchError("%s did not mount %s" % (argv[0], self.mnt))
            time.sleep(0.01)

    def close(self):
        if self.proc is None:
            return
        sb.unmount(self.mnt, self.proc)
        self.proc = None
        self.log.close()
        if not os.path.ismount(self.mnt):
            os.rmdir(self.mnt)


# ------------------------------------------------------------ the workloads

class Bench:
    """The backing directory, the data in it and the timed workloads; each
    workload is w_NAME(root, tag), root the view of the backing directory,
    tag unique to the run. What a workload makes is removed through the
    same view, untimed: removed behind its back, its inodes would stay
    known to the kernel, and passthrough_hp holds a descriptor for each
    (it runs out of its 20,000 in a few rounds)."""

    def __init__(self, back, repo, tar, dd_mib):
        self.back, self.repo, self.tar = back, repo, tar
        self.big = "big"
        make_big(os.path.join(back, self.big), dd_mib)
        run(["mkdir", os.path.join(back, "tree")])
        run(["tar", "-xf", tar, "-C", os.path.join(back, "tree")])
        self.paths = []
        for d, _, fs in os.walk(os.path.join(back, "tree")):
            self.paths += [os.path.relpath(os.path.join(d, f), back) for f in fs]
        src = os.path.join(back, "src")
        os.mkdir(src)
        archive = subprocess.run(["git", "-C", TOP, "archive", "HEAD"], stdout=subprocess.PIPE,
                                 timeout=TIMEOUT_S, check=True).stdout
        subprocess.run(["tar", "-x", "-C", src], input=archive, timeout=TIMEOUT_S, check=True)
        files = subprocess.run(["git", "-C", repo, "ls-files", "-z"], stdout=subprocess.PIPE,
                               timeout=TIMEOUT_S, check=True).stdout
        self.counts = {"repo": files.count(b"\0"), "tree": len(self.paths)}

    @staticmethod
    def drop(root, name):
        shutil.rmtree(os.path.join(root, name))

    def w_clone(self, root, tag):
        return timed(["git", "clone", "-q", "--no-hardlinks", self.repo,
                      os.path.join(root, "clone-" + tag)])

    def w_status(self, root, tag):
        d = os.path.join(root, "clone-" + tag)
        run(["git", "status", "--porcelain"], d)
        t = timed(["git", "status", "--porcelain"], d)
        self.drop(root, "clone-" + tag)
        return t

    def w_tar(self, root, tag):
        d = os.path.join(root, "tar-" + tag)
        os.mkdir(d)
        t = timed(["tar", "-xf", self.tar, "-C", d])
        self.drop(root, "tar-" + tag)
        return t

    def w_du(self, root, tag):
        run(["du", "-s", os.path.join(root, "tree")])
        return timed(["du", "-s", os.path.join(root, "tree")])

    def w_grep(self, root, tag):
        return timed(["grep", "-r", "-l", "sessionfs-bench-needle", os.path.join(root, "tree")],
                     ok=(1,))

    def w_stat(self, root, tag):
        t0 = time.monotonic()
        for p in self.paths:
            os.lstat(os.path.join(root, p))
        return time.monotonic() - t0

    def w_dd1m(self, root, tag):
        return timed(["dd", "if=" + os.path.join(root, self.big), "of=/dev/null", "bs=1M"])

    def w_dd4k(self, root, tag):
        return timed(["dd", "if=" + os.path.join(root, self.big), "of=/dev/null", "bs=4k"])

    def w_ninja(self, root, tag):
        # the copy is not timed
        run(["cp", "-a", os.path.join(root, "src"), os.path.join(root, "src-" + tag)])
        d = os.path.join(root, "src-" + tag)
        t = timed(["meson", "setup", "-Dbuildtype=plain", "b"], d)
        t += timed(["ninja", "-C", "b", "sessionfs"], d)
        self.drop(root, "src-" + tag)
        return t


# (label, workload); {repo} and {tree} are the data sets' numbers of files
ROWS = [("git clone ({repo:,} files)", "clone"), ("git status, warm", "status"),
        ("tar -x ({tree:,} files)", "tar"), ("du -s ({tree:,} files)", "du"),
        ("grep -r ({tree:,} files)", "grep"), ("stat of {tree:,} files", "stat"),
        ("dd read bs=1M", "dd1m"), ("dd read bs=4k", "dd4k"),
        ("meson setup + ninja sessionfs", "ninja")]


# ------------------------------------------------------------ coherence

def coherence(back, views, n):
    """For each view (name, root): n changes of each kind made in back to
    what the view has read just before, read through the view at once;
    {name: {kind: stale reads}}."""
    d = "coh"
    os.mkdir(os.path.join(back, d))
    out = {}
    for name, root in views:
        out[name] = stale = {}
        for kind in ("write", "truncate", "rename", "unlink", "create"):
            stale[kind] = sum(one_change(back, root, "%s/%s-%s-%d" % (d, name, kind, i), kind)
                              for i in range(n))
    return out


def peek(path):
    """What path holds through a view: its bytes, or None if it is not there."""
    try:
        with open(path, "rb") as f:
            return f.read()
    except FileNotFoundError:
        return None


def one_change(back, root, rel, kind):
    """1 if the view still shows the state before the change, else 0."""
    real, seen = os.path.join(back, rel), os.path.join(root, rel)
    if kind != "create":
        with open(real, "wb") as f:
            f.write(b"old " * 64)
        peek(seen)
        os.stat(seen)
    else:
        peek(seen)  # the view looks the name up, not there
    if kind == "write":
        with open(real, "r+b") as f:  # same size, another mtime
            f.write(b"new " * 64)
        want = (b"new " * 64, seen)
    elif kind == "truncate":
        os.truncate(real, 8)
        want = (b"old old ", seen)
    elif kind == "rename":
        os.rename(real, real + ".moved")
        want = (None, seen)
    elif kind == "unlink":
        os.unlink(real)
        want = (None, seen)
    else:
        with open(real, "wb") as f:
            f.write(b"made")
        want = (b"made", seen)
    return 0 if peek(want[1]) == want[0] else 1


# ------------------------------------------------------------ the report

def span(v):
    return "%s [%s-%s]" % (fmt(sb.median(v)), fmt(min(v)), fmt(max(v)))


def fmt(s):
    return "%.3f" % s if s < 10 else "%.1f" % s


def report(times, names, counts):
    base = "backing"
    print("files: seconds, medians [ranges] of %d rounds; x = the median / the backing"
          " directory's [range of the rounds' ratios]" % len(times[ROWS[0][1]][base]))
    for label, key in ROWS:
        t = times[key]
        cells = ["backing %s" % span(t[base])]
        for n in names[1:]:
            r = [a / b for a, b in zip(t[n], t[base])]
            cells.append("%s %s x%.2f [%.2f-%.2f]" % (n, span(t[n]), sb.median(t[n]) / sb.median(t[base]),
                                                     min(r), max(r)))
        print("files %-30s %s" % (label.format(**counts), " | ".join(cells)))


def mount_views(work, daemon, conf, hp, back, mounts):
    """Fresh mounts of back; [(name, root)], the backing first. Each round
    has its own: passthrough_hp cached holds a descriptor for each inode
    the kernel keeps (all it has looked up, for 86,400 s), and runs out
    of its 20,000 with the tree and a clone at once."""
    views = [("backing", back)]
    m = Mount(work, "sfs", [daemon, "-f", "-c", conf], "files")
    mounts.append(m)
    views.append(("sessionfs", m.root))
    if hp:
        for name, extra in (("hp", []), ("hp-nocache", ["--nocache"])):
            m = Mount(work, name, [hp, "--foreground"] + extra + [back])
            mounts.append(m)
            views.append((name, m.root))
    return views


def body():
    _, _, rest = sb.start("files", "files.py MNT DAEMON_PID DAEMON", extra=1)
    if not rest:
        raise sb.BenchError("no DAEMON given")
    daemon = os.path.abspath(rest[0])
    rounds = sb.count("FILES_ROUNDS", 3, 1, 20)
    dd_mib = sb.count("FILES_DD_MIB", 256, 1, 65536)
    ncoh = sb.count("FILES_COHERENCE_N", 20, 1, 10000)
    hp = os.environ.get("FILES_HP", "")
    cache = os.environ.get("FILES_CACHE") or os.path.join(os.path.dirname(daemon), "thirdparty",
                                                          "files-bench")
    work = tempfile.mkdtemp(prefix="sfs-files.", dir=os.environ.get("FILES_DIR", "/var/tmp"))
    back = os.path.join(work, "back")
    os.mkdir(back, 0o755)
    mounts = []
    try:
        t0 = time.monotonic()
        repo, tar = make_data(cache)
        bench = Bench(back, repo, tar, dd_mib)
        print("files: data ready in %.1f s (%d MiB file, backing %s)" % (
            time.monotonic() - t0, dd_mib, back))
        conf = os.path.join(work, "sfs.conf")
        with open(conf, "w") as f:
            f.write('workspace = "%s";\n' % back)
        if not hp:
            print("files: no FILES_HP (passthrough_hp): its columns are left out")
        names = ["backing", "sessionfs"] + (["hp", "hp-nocache"] if hp else [])
        times = {key: {n: [] for n in names} for _, key in ROWS}
        for r in range(rounds):
            views = mount_views(work, daemon, conf, hp, back, mounts)
            for i, (_, key) in enumerate(ROWS):
                k = (r + i) % len(views)
                for name, root in views[k:] + views[:k]:
                    try:
                        t = getattr(bench, "w_" + key)(root, "%s-%d" % (name, r))
                    except sb.BenchError as e:
                        raise sb.BenchError("%s, %s: %s" % (key, name, e)) from None
                    times[key][name].append(t)
            for m in mounts:
                m.close()
        report(times, names, bench.counts)
        views = mount_views(work, daemon, conf, hp, back, mounts)
        for name, stale in coherence(back, views[1:], ncoh).items():
            print("files coherence %-10s stale reads of %d changes of each kind: %s (total %d of %d)" % (
                name, ncoh, ", ".join("%s %d" % kv for kv in stale.items()),
                sum(stale.values()), 5 * ncoh))
        print("files: %.0f s in all" % (time.monotonic() - t0))
    finally:
        for m in mounts:
            m.close()
        if not any(os.path.ismount(m.mnt) for m in mounts):
            shutil.rmtree(work)


if __name__ == "__main__":
    sb.main("files", body)
