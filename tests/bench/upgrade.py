#!/usr/bin/env python3
"""upgrade: the pause an upgrade in place (`echo upgrade > MNT/ctl`) makes
in a client's requests, with 1 and with 1,000 sessions (each with its
shell), beside the same client's gaps when nothing is upgraded.

Usage: upgrade.py MNT DAEMON_PID
  UPGRADE_RUNS      upgrades measured for each count (default 7)
  UPGRADE_SESSIONS  the larger count (default 1000; at most the daemon's
                    max_sessions less 2)

A client process reads MNT/health (open, read, close) in a tight loop and
notes when each read is answered. Each upgrade is measured as the longest
time between two answered reads around the write of `upgrade` (the last
before the old program stops serving to the first the new one answers);
the baseline is the same loop for as long with no upgrade: its median
gap and its longest. It prints, for each count, the median and range of
the pauses, the median and range of the write's own duration, the
baseline, and the ratio of the median pause to the baseline's longest
gap. The target is a pause of at most 50 ms at 1,000 sessions. After
each upgrade the pid that health names (the server's) must be the same.

Exit status 0 whether the target is met or not (a measurement); 1 on
any error or stop signal. The sessions it made are removed on every path,
and the client process is ended by pid.
"""

import multiprocessing as mp
import os
import time

import sfsbench as sb

PRE_S = 0.3  # the loop runs this long before the write, and after it
BASE_S = 1.0  # the baseline window


def client(health, stop, out):
    """Reads health until stop; sends the times (us) the reads ended."""
    ts = []
    try:
        while not stop.is_set():
            fd = os.open(health, os.O_RDONLY)
            os.read(fd, 4096)
            os.close(fd)
            ts.append(sb.now_us())
    finally:
        out.send(ts)
        out.close()


class Loop:
    """The client process, from start() to end() (its times)."""

    def __init__(self, mnt):
        self.health = os.path.join(mnt, "health")
        self.proc = None

    def start(self):
        self.stop = mp.Event()
        self.rx, tx = mp.Pipe(duplex=False)
        self.proc = mp.Process(target=client, args=(self.health, self.stop, tx))
        self.proc.start()
        tx.close()
        time.sleep(0.05)  # it has begun reading

    def end(self):
        self.stop.set()
        ts = self.rx.recv() if self.rx.poll(30) else None
        self.kill()
        if not ts:
            raise sb.BenchError("the client loop gave no times")
        return ts

    def kill(self):
        if self.proc is not None and self.proc.is_alive():
            self.proc.join(5)
            if self.proc.is_alive():
                os.kill(self.proc.pid, 9)
                self.proc.join(5)
        self.proc = None


def gaps(ts):
    return [b - a for a, b in zip(ts, ts[1:])]


def pause_around(ts, t0, t1):
    """The longest gap between answered reads that overlaps [t0, t1]."""
    best = 0.0
    for a, b in zip(ts, ts[1:]):
        if b >= t0 and a <= t1:
            best = max(best, b - a)
    return best


def baseline(loop):
    loop.start()
    time.sleep(BASE_S)
    g = gaps(loop.end())
    if not g:
        raise sb.BenchError("no gaps in the baseline")
    return sb.median(g), max(g)


def server_pid(mnt):
    """The pid health names: the process serving the mount (DAEMON_PID is
    its keeper's)."""
    for line in sb.read_file(os.path.join(mnt, "health")).splitlines():
        if line.startswith("pid "):
            return int(line[4:])
    return None


def one_upgrade(mnt, pid, loop):
    """(pause, duration of the write) of one upgrade, in us."""
    ctl = os.path.join(mnt, "ctl")
    server = server_pid(mnt)
    loop.start()
    time.sleep(PRE_S)
    t0 = sb.now_us()
    sb.write_file(ctl, "upgrade\n")
    t1 = sb.now_us()
    time.sleep(PRE_S)
    ts = loop.end()
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        raise sb.BenchError("the daemon (pid %d) is gone after an upgrade" % pid)
    if server_pid(mnt) != server:
        raise sb.BenchError("the server's pid changed: %s, then %s"
                            % (server, server_pid(mnt)))
    if not ts or ts[-1] <= t1:
        raise sb.BenchError("no read was answered after the upgrade")
    return pause_around(ts, t0, t1), t1 - t0


def ms(us):
    return "%.1f ms" % (us / 1000.0)


def measure(mnt, pid, nsess, runs):
    loop = Loop(mnt)
    try:
        pauses, writes, base_med, base_max = [], [], [], []
        for _ in range(runs):
            m, x = baseline(loop)
            base_med.append(m)
            base_max.append(x)
            p, w = one_upgrade(mnt, pid, loop)
            pauses.append(p)
            writes.append(w)
    finally:
        loop.kill()
    pm, bx = sb.median(pauses), sb.median(base_max)
    print("%d session%s, %d upgrades:" % (nsess, "" if nsess == 1 else "s", runs))
    print("  pause of the client's reads: median %s, range %s .. %s"
          % (ms(pm), ms(min(pauses)), ms(max(pauses))))
    print("  the write of upgrade:        median %s, range %s .. %s"
          % (ms(sb.median(writes)), ms(min(writes)), ms(max(writes))))
    print("  baseline (no upgrade, %.1f s): median gap %.0f us, longest gap"
          " median %s, range %s .. %s"
          % (BASE_S, sb.median(base_med), ms(bx), ms(min(base_max)),
             ms(max(base_max))))
    print("  ratio: median pause / baseline's longest gap = %.1f; "
          "/ its median gap = %.0f" % (pm / bx, pm / sb.median(base_med)))
    return pm


def make_sessions(mnt, n, made):
    """n sessions, each with its shell started (a run of true)."""
    t0 = time.monotonic()
    for i in range(len(made), len(made) + n):
        s = sb.Session(mnt, "upgrade", i).make()
        made.append(s)
        s.round_trip()
    print("(made %d session%s with %s shell in %.1f s)"
          % (n, "" if n == 1 else "s", "its" if n == 1 else "their",
             time.monotonic() - t0))


def body():
    mnt, pid, _ = sb.start("upgrade", "upgrade.py MNT DAEMON_PID")
    runs = sb.count("UPGRADE_RUNS", 7, 1, 100)
    big = sb.count("UPGRADE_SESSIONS", 1000, 2, 100000)
    made = []
    try:
        make_sessions(mnt, 1, made)
        one = measure(mnt, pid, 1, runs)
        make_sessions(mnt, big - 1, made)
        many = measure(mnt, pid, big, runs)
        print("target: pause <= 50 ms at %d sessions: %s (%s; %s at 1)"
              % (big, "met" if many <= 50000 else "MISSED", ms(many), ms(one)))
    finally:
        ok = all([s.remove() for s in made])
        if not ok:
            raise sb.BenchError("some sessions could not be removed")


if __name__ == "__main__":
    sb.main("upgrade", body)
