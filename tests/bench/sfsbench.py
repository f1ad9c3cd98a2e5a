"""sfsbench: what the Python benchmarks of sessionfs (idle_latency,
sessions_1000, stream_latency) share: the command line (MNT DAEMON_PID),
counts from the environment, stop signals turned into an exception so that
every cleanup runs, the clock, statistics as in bench.c (median, nearest
rank 90th percentile), file helpers, the sessions they make and remove, the
round trip of `true` through cmd and exit, and killing children by pid.

Standard library only; imported by the benchmarks from this directory.
"""

import errno
import os
import signal
import subprocess
import sys
import time

PROG = "sfsbench"


class Stopped(Exception):
    """A stop signal (INT, TERM, HUP) came: clean up and exit 1."""


class BenchError(Exception):
    """A failed step; the message says which."""


def _on_signal(sig, frame):
    raise Stopped("signal %d" % sig)


def start(prog, usage, extra=0):
    """Names the program, catches the stop signals, parses MNT DAEMON_PID
    (plus up to extra optional arguments); returns (mnt, pid, rest)."""
    global PROG
    PROG = prog
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, _on_signal)
    args = sys.argv[1:]
    if len(args) < 2 or len(args) > 2 + extra:
        sys.stderr.write("usage: %s\n" % usage)
        sys.exit(2)
    mnt = args[0]
    try:
        pid = int(args[1])
    except ValueError:
        sys.stderr.write("%s: DAEMON_PID is not a number: %s\n" % (prog, args[1]))
        sys.exit(2)
    if not os.path.isdir(os.path.join(mnt, "sessions")):
        sys.stderr.write("%s: no sessionfs at %s\n" % (prog, mnt))
        sys.exit(2)
    return mnt, pid, args[2:]


def main(prog, body):
    """Runs body(); exit status 0, or 1 after a message on any error or stop
    signal (body's own finally clauses have cleaned up by then)."""
    try:
        body()
    except Stopped as e:
        sys.stderr.write("%s: interrupted (%s)\n" % (prog, e))
        sys.exit(1)
    except Exception as e:  # any failure is a message and status 1
        sys.stderr.write("%s: %s: %s\n" % (prog, type(e).__name__, e))
        sys.exit(1)
    sys.stdout.flush()


def count(name, default, lo, hi):
    """The count in environment variable name, else default."""
    s = os.environ.get(name)
    if s is None or s == "":
        return default
    try:
        n = int(s)
    except ValueError:
        n = lo - 1
    if n < lo or n > hi:
        sys.stderr.write("%s: %s must be %d to %d: %s\n" % (PROG, name, lo, hi, s))
        sys.exit(2)
    return n


def now_us():
    """CLOCK_MONOTONIC in microseconds (the same clock in every process)."""
    return time.clock_gettime_ns(time.CLOCK_MONOTONIC) / 1e3


def stats(values):
    """(median, 90th percentile by nearest rank) of a non-empty list."""
    v = sorted(values)
    n = len(v)
    med = v[n // 2] if n % 2 else (v[n // 2 - 1] + v[n // 2]) / 2
    return med, v[(9 * n + 9) // 10 - 1]


def median(values):
    return stats(values)[0]


def write_file(path, text):
    """One open(O_WRONLY|O_TRUNC), write, close of path."""
    data = text.encode() if isinstance(text, str) else text
    fd = os.open(path, os.O_WRONLY | os.O_TRUNC)
    try:
        n = os.write(fd, data)
    finally:
        os.close(fd)
    if n != len(data):
        raise BenchError("short write to %s: %d of %d" % (path, n, len(data)))


def read_file(path, size=65536):
    """One open, read, close of path (str)."""
    fd = os.open(path, os.O_RDONLY)
    try:
        return os.read(fd, size).decode(errors="replace")
    finally:
        os.close(fd)


class Session:
    """MNT/sessions/bench-KIND-PID[-TAG]; remove() if it was made."""

    def __init__(self, mnt, kind, tag=None):
        name = "bench-%s-%d" % (kind, os.getpid())
        if tag is not None:
            name += "-%s" % tag
        self.path = os.path.join(mnt, "sessions", name)
        self.cmd = os.path.join(self.path, "cmd")
        self.exit = os.path.join(self.path, "exit")
        self.made = False

    def make(self):
        os.mkdir(self.path)
        self.made = True
        return self

    def remove(self):
        """rmdir if made; False after a message if that failed."""
        if not self.made:
            return True
        self.made = False
        try:
            os.rmdir(self.path)
        except OSError as e:
            sys.stderr.write("%s: rmdir %s: %s\n" % (PROG, self.path, e))
            return False
        return True

    def kill_run(self):
        """kill > ctl; nothing running is not an error."""
        try:
            write_file(os.path.join(self.path, "ctl"), "kill\n")
        except OSError as e:
            if e.errno != errno.ESRCH:
                sys.stderr.write("%s: kill > %s/ctl: %s\n" % (PROG, self.path, e))

    def round_trip(self, text=b"true\n"):
        """One run through cmd, then exit, which must say 0."""
        write_file(self.cmd, text)
        status = read_file(self.exit, 64)
        if status != "0\n":
            raise BenchError("%s holds %r, not '0\\n'" % (self.exit, status))


def kill_all(pids, wait_s=10.0):
    """SIGKILLs each child in pids (a set of pids, emptied as they are
    reaped) and reaps them for up to wait_s; returns how many are left."""
    for pid in list(pids):
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    return reap(pids, wait_s)


def reap(pids, wait_s):
    """Reaps the children in pids for up to wait_s; returns how many are
    left (they stay in pids)."""
    end = time.monotonic() + wait_s
    while pids:
        for pid in list(pids):
            try:
                done, _ = os.waitpid(pid, os.WNOHANG)
            except ChildProcessError:
                done = pid
            if done:
                pids.discard(pid)
        if not pids or time.monotonic() >= end:
            break
        time.sleep(0.005)
    return len(pids)


def unmount(mnt, proc, wait_s=10):
    """Unmounts mnt and waits up to wait_s for its daemon proc (a Popen)
    to end, then kills it; a mount still there is lazily unmounted."""
    subprocess.run(["fusermount3", "-u", mnt], check=False, stderr=subprocess.DEVNULL)
    try:
        proc.wait(wait_s)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
    if os.path.ismount(mnt):
        subprocess.run(["fusermount3", "-uz", mnt], check=False, stderr=subprocess.DEVNULL)
