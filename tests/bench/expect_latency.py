#!/usr/bin/env python3
"""expect_latency: how soon a log line a process prints answers a reader
blocked on its `expect` (waitForLog), against the same line read from a
plain pipe.

Usage: expect_latency.py MNT DAEMON_PID
  EXPECT_LATENCY_N   lines per side (default 200)

The printing side is bash running
    exec 3<FIFO; while read -r x <&3; do echo "line-$x"; done
so the moment of the print is set by the benchmark: for line i it
writes the pattern ^line-i$ to expect, opens it and starts a reader
thread blocked in read(), waits 20 ms (the reader is parked by then, as
a client that waits for a server is), takes the time and writes "i" to
FIFO; the latency ends when read() returns the line. One clock,
CLOCK_MONOTONIC; it includes bash waking on the fifo and printing, the
same on both sides.
  sessionfs  the loop is procs/bench-expect of MNT/sessions/bench-expect-PID
  pipe       the same loop in `bash -c` with its stdout a pipe, read a line
             at a time
It prints the median and 90th percentile in microseconds and the ratio
of the medians, sessionfs/pipe.

Cleanup on every path: the fifos are closed (each loop ends at EOF), the
process directory and the session removed, the pipe bash killed by pid
and the fifos removed. Exit status 0 whether the ratio is low or not;
1 on any error or stop signal.
"""

import os
import shutil
import subprocess
import tempfile
import threading
import time

import sfsbench as sb

GAP_S = 0.02
LOOP = 'exec 3<%s; while read -r x <&3; do echo "line-$x"; done\n'


def timed_reads(n, arm, fire):
    """n latencies (us): arm(i) returns a blocking read for line i, which
    runs in a thread while fire(i) prints it."""
    lat = []
    for i in range(n):
        read = arm(i)
        got = {}

        def reader():
            got["line"] = read()
            got["t"] = sb.now_us()

        t = threading.Thread(target=reader, daemon=True)
        t.start()
        time.sleep(GAP_S)
        t0 = sb.now_us()
        fire(i)
        t.join(10)
        if t.is_alive() or got.get("line") != "line-%d\n" % i:
            raise sb.BenchError("line %d: read %r" % (i, got.get("line")))
        lat.append(got["t"] - t0)
    return lat


def run_sessionfs(mnt, n, tmp):
    fifo = os.path.join(tmp, "sfs.fifo")
    os.mkfifo(fifo)
    s = sb.Session(mnt, "expect").make()
    proc = os.path.join(s.path, "procs", "bench-expect")
    wfd = None
    try:
        os.mkdir(proc)
        sb.write_file(os.path.join(proc, "cmd"), LOOP % fifo)
        wfd = os.open(fifo, os.O_WRONLY)
        exp = os.path.join(proc, "expect")

        def arm(i):
            sb.write_file(exp, "^line-%d$ 10000\n" % i)
            fd = os.open(exp, os.O_RDONLY)

            def read():
                try:
                    return os.read(fd, 4096).decode()
                finally:
                    os.close(fd)
            return read

        return timed_reads(n, arm, lambda i: os.write(wfd, b"%d\n" % i))
    finally:
        if wfd is not None:
            os.close(wfd)
        try:
            os.rmdir(proc)
        except OSError:
            pass
        s.remove()


def run_pipe(n, tmp):
    fifo = os.path.join(tmp, "pipe.fifo")
    os.mkfifo(fifo)
    p = subprocess.Popen(["bash", "-c", LOOP % fifo], stdout=subprocess.PIPE)
    wfd = None
    try:
        wfd = os.open(fifo, os.O_WRONLY)
        def arm(i):
            return lambda: p.stdout.readline().decode()

        return timed_reads(n, arm, lambda i: os.write(wfd, b"%d\n" % i))
    finally:
        if wfd is not None:
            os.close(wfd)
        p.kill()
        p.wait()


def body():
    mnt, _, _ = sb.start("expect_latency", "expect_latency.py MNT DAEMON_PID")
    n = sb.count("EXPECT_LATENCY_N", 200, 10, 100000)
    tmp = tempfile.mkdtemp(prefix="sfs-expect-")
    try:
        sfs = run_sessionfs(mnt, n, tmp)
        pipe = run_pipe(n, tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    (sm, s90), (pm, p90) = sb.stats(sfs), sb.stats(pipe)
    print("expect_latency: a printed line to the answer of a blocked read, "
          "%d lines each, %d ms apart" % (n, GAP_S * 1000))
    print("  sessionfs expect  median %7.0f us  p90 %7.0f us" % (sm, s90))
    print("  pipe readline     median %7.0f us  p90 %7.0f us" % (pm, p90))
    print("  ratio sessionfs/pipe (medians): %.2f" % (sm / pm if pm else 0))


if __name__ == "__main__":
    sb.main("expect_latency", body)
