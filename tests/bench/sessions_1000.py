#!/usr/bin/env python3
"""sessions_1000: what a thousand sessions cost: the time to make them and
run `true` in each from one client, the memory they hold once idle, and
how fast the tree answers while each has a run and a reader blocked on it.

Usage: sessions_1000.py MNT DAEMON_PID [N]     (N defaults to 1000)

1. It makes the session MNT/sessions/bench-s1k-PID-other and measures
   there, with no other session of its own, the baseline: `ls sessions`
   (os.listdir, median of 20) and a round trip of `true` (median of 100).
2. It reads MemAvailable, the daemon's VmRSS and the summed Pss and page
   tables of the daemon's children (the shells), then, timed as one: for each of N
   sessions bench-s1k-PID-K, mkdir and one round trip of `true`
   (open/write/close cmd, open/read/close exit, which must say 0).
   Target: <= 2 s for 1000. After 1 s to settle, the daemon's VmRSS
   (target <= 32 MiB) and the memory per idle session: (MemAvailable
   before - after) / N, shell included (target <= 512 KiB), and the Pss
   plus page tables of the daemon's children per session beside it (what
   the shells hold; MemAvailable moves with everything else the machine
   does, and on a shared machine says little). Then `ls
   sessions` and the round trip in the other session again.
3. In each of the N sessions it starts `sleep 30` (a child `sh` writes
   cmd, whose close blocks until the end; the writers stay blocked, since
   killing one would end its run),
   then one `cat stream` each, and waits until /proc shows every cat in
   read(). Then `ls sessions` and the round trip in the other session
   (target < 10 ms each), and it checks that no cat has returned.
Cleanup on every path: SIGKILL to every child by pid, reaped; rmdir of
every session made (which ends its run); the time that takes is printed.

Exit status 0 whether the targets are met or not (a measurement); 1 on
any error or stop signal, after the same cleanup.
"""

import os
import platform
import sys
import time

import sfsbench as sb

SLEEP = 30
LS_N = 20
RT_N = 100
WAIT_S = 20
# The calls a reader blocks in, in /proc/PID/syscall, where we know them:
# read(2), and sendfile(2), splice(2), copy_file_range(2), which GNU cat
# uses on a file that, like stream now, has a size and can seek.
SYS_READ = {"x86_64": {0, 40, 275, 326},
            "aarch64": {63, 71, 76, 285}}.get(platform.machine())


def meminfo_kib(key):
    with open("/proc/meminfo") as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1])
    raise sb.BenchError("no %s in /proc/meminfo" % key)


def vmrss_kib(pid):
    kib = status_kib(pid, "VmRSS")
    if not kib:
        raise sb.BenchError("no VmRSS for pid %d" % pid)
    return kib


def status_kib(pid, key):
    with open("/proc/%s/status" % pid) as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1])
    return 0


def children_pss_kib(pid):
    """(summed Pss plus page tables, count) of the processes whose parent
    is pid: what the shells hold, kernel stacks and pipes apart."""
    total = n = 0
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % d) as f:
                ppid = int(f.read().rsplit(")", 1)[1].split()[1])
            if ppid != pid:
                continue
            with open("/proc/%s/smaps_rollup" % d) as f:
                for line in f:
                    if line.startswith("Pss:"):
                        total += int(line.split()[1]) + status_kib(d, "VmPTE")
                        n += 1
                        break
        except (OSError, ValueError, IndexError):
            continue  # gone meanwhile, or not ours to read
    return total, n


def time_ls(sessions, n=LS_N):
    us = []
    for _ in range(n):
        t0 = sb.now_us()
        names = os.listdir(sessions)
        us.append(sb.now_us() - t0)
    return sb.stats(us), len(names)


def time_round_trip(sess, n=RT_N):
    for _ in range(10):
        sess.round_trip()
    us = []
    for _ in range(n):
        t0 = sb.now_us()
        sess.round_trip()
        us.append(sb.now_us() - t0)
    return sb.stats(us)


def spawn(argv, stdout="/dev/null"):
    acts = [(os.POSIX_SPAWN_OPEN, 1, stdout, os.O_WRONLY, 0)]
    return os.posix_spawn(argv[0], argv, os.environ, file_actions=acts)


def in_read(pid, path):
    """True once pid has path open and (where /proc says) is in read()."""
    try:
        fds = os.listdir("/proc/%d/fd" % pid)
        if not any(os.readlink("/proc/%d/fd/%s" % (pid, fd)) == path for fd in fds):
            return False
        if SYS_READ is None:
            return True
        with open("/proc/%d/syscall" % pid) as f:
            first = f.read().split()[0]
        return first != "running" and int(first) in SYS_READ
    except (OSError, ValueError, IndexError):
        return False


def wait_until(what, test, items):
    """Polls test(item) until it holds for every item, for up to WAIT_S."""
    left = list(items)
    end = time.monotonic() + WAIT_S
    while left:
        left = [x for x in left if not test(x)]
        if not left:
            break
        if time.monotonic() >= end:
            raise sb.BenchError("%d of %d not %s after %d s"
                                % (len(left), len(items), what, WAIT_S))
        time.sleep(0.01)


def running(sess):
    return sb.read_file(os.path.join(sess.path, "status"), 4096).startswith("state running\n")


class Bench:
    def __init__(self, mnt, daemon, n):
        self.mnt, self.daemon, self.n = mnt, daemon, n
        self.sessions = os.path.join(mnt, "sessions")
        self.other = sb.Session(mnt, "s1k", "other")
        self.many = [sb.Session(mnt, "s1k", str(k)) for k in range(n)]
        self.kids = set()
        self.out = []

    def say(self, line):
        self.out.append(line)

    def probe(self, label, target=""):
        (ls_med, ls_p90), names = time_ls(self.sessions)
        rt_med, rt_p90 = time_round_trip(self.other)
        self.say("sessions_1000: %s: ls sessions (%d names) median %.0f us p90 %.0f us | "
                 "round trip in another session median %.0f us p90 %.0f us%s"
                 % (label, names, ls_med, ls_p90, rt_med, rt_p90, target))

    def make_all(self):
        avail0, rss0 = meminfo_kib("MemAvailable"), vmrss_kib(self.daemon)
        pss0, _ = children_pss_kib(self.daemon)
        t0 = sb.now_us()
        for s in self.many:
            s.make().round_trip()
        total_s = (sb.now_us() - t0) / 1e6
        time.sleep(1)
        avail1, rss1 = meminfo_kib("MemAvailable"), vmrss_kib(self.daemon)
        pss1, kids = children_pss_kib(self.daemon)
        self.say("sessions_1000: %d sessions made and `true` run in each in %.2f s "
                 "(target <= 2 s for 1000)" % (self.n, total_s))
        self.say("sessions_1000: daemon VmRSS %.1f MiB after (%.1f MiB before; target <= 32 MiB) | "
                 "memory per idle session %.0f KiB from MemAvailable (target <= 512 KiB) | "
                 "Pss + page tables of the daemon's %d children %.0f KiB per session"
                 % (rss1 / 1024, rss0 / 1024, (avail0 - avail1) / self.n,
                    kids, (pss1 - pss0) / self.n))

    def park_all(self):
        for s in self.many:
            script = 'printf "sleep %d\\n" > "$1"' % SLEEP
            self.kids.add(spawn(["/bin/sh", "-c", script, "sh", s.cmd]))
        # the writers stay blocked in their close: a writer killed there
        # now ends its run (Ctrl-C semantics); cleanup ends them
        wait_until("running", running, self.many)
        t0 = sb.now_us()
        readers = {}
        for s in self.many:
            stream = os.path.join(s.path, "stream")
            pid = spawn(["/bin/cat", stream])
            self.kids.add(pid)
            readers[pid] = stream
        wait_until("blocked in read()", lambda p: in_read(p, readers[p]), list(readers))
        self.say("sessions_1000: %d `sleep %d` runs, one `cat stream` blocked on each "
                 "(%s; readers started in %.0f ms)"
                 % (self.n, SLEEP, "seen in read()" if SYS_READ is not None else
                    "seen with stream open", (sb.now_us() - t0) / 1e3))
        wait_until("still running", running, self.many)
        return readers

    def still_parked(self, readers):
        for pid in readers:
            done, _ = os.waitpid(pid, os.WNOHANG)
            if done:
                self.kids.discard(pid)
                raise sb.BenchError("reader %d returned during the measurement" % pid)
        wait_until("still running", running, self.many)

    def cleanup(self):
        errs = 0
        if sb.kill_all(self.kids, 10):
            sys.stderr.write("sessions_1000: %d children not reaped\n" % len(self.kids))
            errs += 1
        t0 = sb.now_us()
        made = sum(s.made for s in self.many)
        for s in self.many:
            errs += not s.remove()
        errs += not self.other.remove()
        if made:
            self.say("sessions_1000: rmdir of %d sessions in %.2f s"
                     % (made, (sb.now_us() - t0) / 1e6))
        return errs


def run():
    mnt, daemon, rest = sb.start("sessions_1000", "sessions_1000.py MNT DAEMON_PID [N]", 1)
    n = int(rest[0]) if rest and rest[0].isdigit() else 1000 if not rest else 0
    if n < 1 or n > 100000:
        sys.stderr.write("sessions_1000: N must be 1 to 100000: %s\n" % rest[0])
        sys.exit(2)
    b = Bench(mnt, daemon, n)
    try:
        b.other.make()
        b.probe("baseline, no other session")
        b.make_all()
        b.probe("%d idle sessions" % n)
        readers = b.park_all()
        b.probe("%d sessions with a run and a blocked reader" % n, " (target < 10 ms each)")
        b.still_parked(readers)
    finally:
        errs = b.cleanup()
        print("\n".join(b.out))
    if errs:
        raise sb.BenchError("cleanup failed")


if __name__ == "__main__":
    sb.main("sessions_1000", run)
