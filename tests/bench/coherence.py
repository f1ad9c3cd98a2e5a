#!/usr/bin/env python3
"""coherence: how soon a change made in the backing directory is seen
through files/, which caches it (fs/files_watch.c), and what the cache
saves.

Usage: coherence.py MNT DAEMON_PID DAEMON
  COHERENCE_N      rounds per kind of change (default 200)
  COHERENCE_FILES  files of the tree the second part walks (default 10000)

MNT and DAEMON_PID (run.sh's mount) are not touched: each part mounts
DAEMON -f on a temporary directory of its own, its workspace another,
with files_cache = true and then false (SESSIONFS_CONFIG).

The window: each round caches the old state through files/ (reads the
file, stats the name, or a name that is missing), makes one change in
the backing directory (this process: a write of the same size, a
truncation, a rename, an unlink, a creation of the missing name), then
looks through files/ at once (the writer's next system call), and again
and again until the change shows (1 s at most): by a read for a write,
by a stat for the others, and then by an open (a read of the truncated
file, an open of the name renamed or unlinked), which reads fanotify's
queue before it answers. Prints how many rounds
were stale at once, after 1 ms and after 10 ms, and the latency from the
change's return to its visibility (median, 99th percentile, max).

What the cache saves, as the time of each against the same in the
backing directory (ratios): a warm `git status` of a repository of
COHERENCE_FILES files in 100 directories, os.lstat of each of them,
`du -s`, and 4 KiB preads at random offsets of a 64 MiB file, with the
cache on and off (medians of 5; the reads of 20,000 preads).

Exit status 0 (a measurement); 1 on any error or stop signal. Every
mount is unmounted and its temporary directories removed.
"""

import os
import random
import shutil
import subprocess
import tempfile
import time

import sfsbench as sb

TIMEOUT_S = 20
GIVE_UP_S = 1.0


class Mount:
    """DAEMON -f on a temporary directory, its workspace ws/."""

    def __init__(self, binary, cache, ws):
        self.work = tempfile.mkdtemp(prefix="sfs-coherence.")
        self.mnt = os.path.join(self.work, "mnt")
        os.mkdir(self.mnt)
        conf = os.path.join(self.work, "c.conf")
        with open(conf, "w") as f:
            f.write('workspace = "%s";\nfiles_cache = %s;\n' % (ws, "true" if cache else "false"))
        self.log = open(os.path.join(self.work, "daemon.log"), "w")
        env = dict(os.environ, SESSIONFS_CONFIG=conf)
        self.proc = subprocess.Popen([binary, "-f", self.mnt], stdout=self.log, stderr=self.log, env=env)
        end = time.monotonic() + TIMEOUT_S
        while not os.path.isdir(os.path.join(self.mnt, "files")):
            if time.monotonic() > end or self.proc.poll() is not None:
                raise sb.BenchError("%s did not mount %s" % (binary, self.mnt))
            time.sleep(0.01)
        self.files = os.path.join(self.mnt, "files")

    def close(self):
        sb.unmount(self.mnt, self.proc)
        self.log.close()
        shutil.rmtree(self.work, ignore_errors=True)


def read(path):
    with open(path, "rb") as f:
        return f.read()


def exists(path):
    try:
        os.lstat(path)
        return True
    except FileNotFoundError:
        return False


# Each kind: (setup(real, fuse), change(real), seen(fuse)): setup
# caches the old state through files/, seen says whether files/ shows
# the change.
def k_write():
    def setup(r, f):
        with open(r, "wb") as o:
            o.write(b"a" * 4096)
        read(f)

    def change(r):
        fd = os.open(r, os.O_WRONLY)
        os.pwrite(fd, b"b" * 4096, 0)
        os.close(fd)

    return setup, change, lambda f: read(f)[:1] == b"b"


def opens(path):
    try:
        os.close(os.open(path, os.O_RDONLY))
        return True
    except FileNotFoundError:
        return False


# The kinds a stat or an open may look at: look is "stat" or "open".
def k_truncate(look):
    def setup(r, f):
        with open(r, "wb") as o:
            o.write(b"a" * 4096)
        os.stat(f)

    seen = (lambda f: os.stat(f).st_size == 0) if look == "stat" else (lambda f: read(f) == b"")
    return setup, lambda r: os.truncate(r, 0), seen


def k_rename(look):
    def setup(r, f):
        open(r, "wb").close()
        os.stat(f)

    there = exists if look == "stat" else opens
    return setup, lambda r: os.rename(r, r + ".moved"), lambda f: not there(f)


def k_unlink(look):
    def setup(r, f):
        open(r, "wb").close()
        os.stat(f)

    there = exists if look == "stat" else opens
    return setup, os.unlink, lambda f: not there(f)


def k_create():
    def setup(r, f):
        exists(f)  # a negative entry

    return setup, lambda r: open(r, "wb").close(), exists


KINDS = [("write", k_write), ("truncate", lambda: k_truncate("stat")),
         ("rename", lambda: k_rename("stat")), ("unlink", lambda: k_unlink("stat")),
         ("create", k_create), ("truncate, opened", lambda: k_truncate("open")),
         ("rename, opened", lambda: k_rename("open")), ("unlink, opened", lambda: k_unlink("open"))]


def settle(setup, real, fuse):
    """setup, again until files/ shows what it made (the setup is a
    change of the backing directory too)."""
    end = time.monotonic() + GIVE_UP_S
    while True:
        try:
            return setup(real, fuse)
        except FileNotFoundError:
            if time.monotonic() > end:
                raise


def window(m, ws, name, kind, n):
    """(stale at once, after 1 ms, after 10 ms, latencies in us)."""
    setup, change, seen = kind()
    d = os.path.join(ws, "w-" + name)
    os.makedirs(d)
    lat, stale = [], 0
    for i in range(n):
        name = "f%d" % i
        real, fuse = os.path.join(d, name), os.path.join(m.files, os.path.basename(d), name)
        settle(setup, real, fuse)
        change(real)
        t0 = sb.now_us()
        fresh = seen(fuse)  # the writer's next system calls
        stale += not fresh
        while not fresh and sb.now_us() - t0 < GIVE_UP_S * 1e6:
            fresh = seen(fuse)
        lat.append(sb.now_us() - t0)
    shutil.rmtree(d)
    return stale, sum(1 for v in lat if v > 1000), sum(1 for v in lat if v > 10000), lat


def pct(v, p):
    s = sorted(v)
    return s[min(len(s) - 1, (len(s) * p + 99) // 100 - 1)]


def make_tree(ws, nfiles):
    top = os.path.join(ws, "tree")
    os.makedirs(top)
    for i in range(nfiles):
        d = os.path.join(top, "d%02d" % (i % 100))
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, "f%d" % i), "w") as f:
            f.write("%d\n" % i)
    git = ["git", "-C", top, "-c", "user.name=b", "-c", "user.email=b@b"]
    subprocess.run(git + ["init", "-q"], check=True)
    subprocess.run(git + ["add", "-A"], check=True)
    subprocess.run(git + ["commit", "-qm", "tree"], check=True)
    with open(os.path.join(ws, "big"), "wb") as f:
        f.write(os.urandom(64 << 20))
    return top


def timed(fn, reps=5):
    fn()  # warm
    v = []
    for _ in range(reps):
        t0 = sb.now_us()
        fn()
        v.append(sb.now_us() - t0)
    return sb.median(v)


def workloads(base):
    """name -> function of the workspace's path (real or through files/)."""
    offs = [random.randrange(0, (64 << 20) - 4096) & ~4095 for _ in range(20000)]

    def git_status(p):
        subprocess.run(["git", "-C", os.path.join(p, "tree"), "status", "--porcelain"], check=True, stdout=subprocess.DEVNULL)

    def stat_all(p):
        for d in sorted(os.listdir(os.path.join(base, "tree"))):
            if d.startswith("d"):
                for f in os.listdir(os.path.join(base, "tree", d)):
                    os.lstat(os.path.join(p, "tree", d, f))

    def du(p):
        subprocess.run(["du", "-s", os.path.join(p, "tree")], check=True, stdout=subprocess.DEVNULL)

    def reads(p):
        fd = os.open(os.path.join(p, "big"), os.O_RDONLY)
        for o in offs:
            os.pread(fd, 4096, o)
        os.close(fd)

    return [("git status", git_status), ("stat of each file", stat_all), ("du -s", du), ("4 KiB preads x20000", reads)]


def body():
    _mnt, _pid, rest = sb.start("coherence", "coherence.py MNT DAEMON_PID DAEMON", 1)
    if not rest:
        raise sb.BenchError("no DAEMON given")
    n = sb.count("COHERENCE_N", 200, 1, 100000)
    nfiles = sb.count("COHERENCE_FILES", 10000, 100, 1000000)
    ws = tempfile.mkdtemp(prefix="sfs-coherence-ws.")
    try:
        for cache in (True, False):
            m = Mount(rest[0], cache, ws)
            try:
                for name, kind in KINDS:
                    tag = "%s-%s" % (name.replace(", ", "-"), "on" if cache else "off")
                    once, ms1, ms10, lat = window(m, ws, tag, kind, n)
                    print(
                        "coherence cache %-3s %-16s stale at once %3d/%d, after 1 ms %3d, after 10 ms %3d;"
                        " latency (us) median %6.0f p99 %6.0f max %7.0f"
                        % ("on" if cache else "off", name, once, n, ms1, ms10, sb.median(lat), pct(lat, 99), max(lat))
                    )
            finally:
                m.close()
        make_tree(ws, nfiles)
        base = {name: timed(lambda fn=fn: fn(ws)) for name, fn in workloads(ws)}
        for cache in (True, False):
            m = Mount(rest[0], cache, ws)
            try:
                for name, fn in workloads(ws):
                    t = timed(lambda fn=fn: fn(m.files))
                    print(
                        "coherence cache %-3s %-20s %9.0f us, backing %9.0f us: ratio %.1f"
                        % ("on" if cache else "off", name, t, base[name], t / base[name])
                    )
            finally:
                m.close()
    finally:
        shutil.rmtree(ws, ignore_errors=True)


if __name__ == "__main__":
    sb.main("coherence", body)
