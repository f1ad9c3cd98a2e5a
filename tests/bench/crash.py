#!/usr/bin/env python3
"""crash: how long the mount is out after kill -9 of the server, the
time from the kill to the first answered request (target <= 1 s), with 1
and with 100 sessions (each with a run in its history) to take over.

Usage: crash.py MNT DAEMON_PID DAEMON
  CRASH_N         kills per series (default 5: the keeper restarts at
                  most 5 times in 30 s, so each series has a mount of
                  its own)
  CRASH_SESSIONS  the larger series' sessions (default 100)

MNT and DAEMON_PID (run.sh's mount) are not touched: each series mounts
DAEMON -f on a temporary directory, makes its sessions, then CRASH_N
times: waits until the checkpoint has caught up (0.3 s quiet, thrice its
100 ms interval), reads a run's stdout once (open, read, close: the
same request without a crash, the first baseline), SIGKILLs the server
(health's pid) and times the same read made at once, which waits until
the new server answers. The second baseline is a fresh mount's first
answer: from the start of the daemon to the first read of health.
Prints the median and range of each, and the ratio of the crash's
median to each baseline's.

Exit status 0 whether the target is met or not (a measurement); 1 on
any error or stop signal. Every mount is unmounted and its keeper
reaped on every path.
"""

import os
import signal
import subprocess
import tempfile
import time

import sfsbench as sb

QUIET_S = 0.3
TIMEOUT_S = 20


def health_pid(mnt):
    for line in sb.read_file(os.path.join(mnt, "health")).splitlines():
        if line.startswith("pid "):
            return int(line[4:])
    raise sb.BenchError("health has no pid line")


class Mount:
    """DAEMON -f on a temporary directory; the time to its first answer."""

    def __init__(self, binary):
        self.work = tempfile.mkdtemp(prefix="sfs-crash.")
        self.mnt = os.path.join(self.work, "mnt")
        os.mkdir(self.mnt)
        self.log = open(os.path.join(self.work, "daemon.log"), "w")
        t0 = sb.now_us()
        self.proc = subprocess.Popen([binary, "-f", self.mnt], stdout=self.log, stderr=self.log)
        end = time.monotonic() + TIMEOUT_S
        while True:
            try:
                if os.path.ismount(self.mnt):
                    self.server = health_pid(self.mnt)
                    break
            except OSError:
                pass
            if time.monotonic() > end or self.proc.poll() is not None:
                raise sb.BenchError("%s did not mount %s" % (binary, self.mnt))
            time.sleep(0.001)
        self.first_us = sb.now_us() - t0

    def close(self):
        sb.unmount(self.mnt, self.proc)
        self.log.close()
        os.unlink(os.path.join(self.work, "daemon.log"))
        os.rmdir(self.mnt)
        os.rmdir(self.work)


def timed_read(path):
    t0 = sb.now_us()
    text = sb.read_file(path)
    return sb.now_us() - t0, text


def new_server(m, old):
    end = time.monotonic() + TIMEOUT_S
    while time.monotonic() < end:
        try:
            pid = health_pid(m.mnt)
            if pid != old:
                return pid
        except OSError:
            pass
        time.sleep(0.01)
    raise sb.BenchError("no new server after kill -9 of %d" % old)


def series(binary, nsess, n):
    """(first answers of a fresh mount, reads without a crash, reads at
    a kill) of one series, in microseconds."""
    m = Mount(binary)
    fresh, plain, crashed = [m.first_us], [], []
    try:
        for i in range(nsess):
            s = os.path.join(m.mnt, "sessions", "c%d" % i)
            os.mkdir(s)
            sb.write_file(os.path.join(s, "cmd"), "echo out%d\n" % i)
        probe = os.path.join(m.mnt, "sessions", "c0", "runs", "1", "stdout")
        for _ in range(n):
            time.sleep(QUIET_S)
            us, text = timed_read(probe)
            if text != "out0\n":
                raise sb.BenchError("%s holds %r" % (probe, text))
            plain.append(us)
            old = m.server
            t0 = sb.now_us()
            os.kill(old, signal.SIGKILL)
            text = sb.read_file(probe)
            crashed.append(sb.now_us() - t0)
            if text != "out0\n":
                raise sb.BenchError("after the crash %s holds %r" % (probe, text))
            m.server = new_server(m, old)
    finally:
        m.close()
    # a second fresh mount, for a second figure of the first baseline
    m = Mount(binary)
    fresh.append(m.first_us)
    m.close()
    return fresh, plain, crashed


def span(v):
    return "median %8.0f  range %8.0f-%-8.0f" % (sb.median(v), min(v), max(v))


def body():
    _mnt, _pid, rest = sb.start("crash", "crash.py MNT DAEMON_PID DAEMON", 1)
    if not rest:
        raise sb.BenchError("no DAEMON given")
    n = sb.count("CRASH_N", 5, 1, 5)
    big = sb.count("CRASH_SESSIONS", 100, 1, 1000)
    for nsess in (1, big):
        fresh, plain, crashed = series(rest[0], nsess, n)
        print("crash %4d sessions: kill -9 to the first answer (us)  %s  (n=%d)" % (nsess, span(crashed), n))
        print("crash %4d sessions: the same read, no crash (us)      %s" % (nsess, span(plain)))
        print("crash %4d sessions: a fresh mount's first answer (us) %s" % (nsess, span(fresh)))
        print(
            "crash %4d sessions: ratio %.1f to the read without a crash, %.2f to a fresh mount; target <= 1 s: %s"
            % (
                nsess,
                sb.median(crashed) / sb.median(plain),
                sb.median(crashed) / sb.median(fresh),
                "met" if max(crashed) <= 1e6 else "MISSED",
            )
        )


if __name__ == "__main__":
    sb.main("crash", body)
