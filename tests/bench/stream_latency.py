#!/usr/bin/env python3
"""stream_latency: how soon a byte a run prints reaches a reader blocked
on `stream`, against the same two processes over a plain pipe.

Usage: stream_latency.py MNT DAEMON_PID
  STREAM_LATENCY_N        back-to-back bytes per side (default 1000)
  STREAM_LATENCY_N_IDLE   bytes per side after 300 ms idle (default 30)

The printing side is bash running
    exec 3<FIFO; while read -r x <&3; do printf x; done
so the moment of the print is set by the benchmark: it takes the time,
writes "\\n" to FIFO, and a reader thread, blocked in read(), takes the
time when the byte arrives. The latency is the difference (one clock,
CLOCK_MONOTONIC); it includes bash waking on the fifo and running read
and printf, the same on both sides.
  sessionfs  that loop is the cmd of the session
             MNT/sessions/bench-stream-PID (a thread writes it, its close
             returning when the run ends); the reader reads `stream`
  pipe       the same loop in `bash -c` with its stdout a pipe to the
             reader
Back to back, bytes follow one another in blocks of 100 a side; after
idle, each byte waits 300 ms, the sides taking turns. It prints the
median and 90th percentile in microseconds and the ratio of the medians,
sessionfs/pipe, for both.

Cleanup on every path: the fifos are closed (each loop ends at EOF, so
the run ends), the threads joined, `kill` written to ctl if the run is
still on, the session removed, the pipe bash killed by pid and the fifos
removed. Exit status 0 whether the ratio is low or not (a measurement);
1 on any error or stop signal.
"""

import errno
import os
import queue
import shutil
import subprocess
import sys
import tempfile
import threading
import time

import sfsbench as sb

BLOCK = 100
IDLE_S = 0.3
WARMUP = 50
WAIT_S = 10
LOOP = "exec 3<%s; while read -r x <&3; do printf x; done\n"


def open_fifo_writer(path, alive):
    """Opens path for writing once its reader has it open (without
    blocking, so that a loop that never starts fails after WAIT_S)."""
    end = time.monotonic() + WAIT_S
    while True:
        try:
            fd = os.open(path, os.O_WRONLY | os.O_NONBLOCK)
            os.set_blocking(fd, True)
            return fd
        except OSError as e:
            if e.errno != errno.ENXIO:
                raise
        if not alive() or time.monotonic() >= end:
            raise sb.BenchError("nobody opened %s to read within %d s" % (path, WAIT_S))
        time.sleep(0.001)


class Side:
    """A printing loop, its fifo and a thread reading what it prints."""

    def __init__(self, name, fifo):
        self.name, self.fifo = name, fifo
        self.fifo_fd = self.out_fd = None
        self.got = queue.SimpleQueue()
        self.reader = None

    def start_reader(self, out_fd):
        self.out_fd = out_fd
        self.reader = threading.Thread(target=self.read_loop, daemon=True)
        self.reader.start()

    def read_loop(self):
        try:
            while True:
                data = os.read(self.out_fd, 64)
                t = sb.now_us()
                if not data:
                    break
                for _ in data:
                    self.got.put(t)
        except OSError as e:
            self.got.put(e)
        self.got.put(None)

    def once(self):
        t0 = sb.now_us()
        os.write(self.fifo_fd, b"\n")
        try:
            t1 = self.got.get(timeout=WAIT_S)
        except queue.Empty:
            raise sb.BenchError("%s: no byte within %d s" % (self.name, WAIT_S))
        if not isinstance(t1, float):
            raise sb.BenchError("%s: the reader ended: %s" % (self.name, t1))
        return t1 - t0

    def close_fifo(self):
        if self.fifo_fd is not None:
            os.close(self.fifo_fd)
            self.fifo_fd = None


class SessionSide(Side):
    def __init__(self, mnt, fifo):
        super().__init__("sessionfs", fifo)
        self.sess = sb.Session(mnt, "stream")
        self.ended = threading.Event()
        self.ended.set()  # no run yet

    def start(self):
        self.sess.make()
        self.ended.clear()
        threading.Thread(target=self.write_cmd, daemon=True).start()
        self.fifo_fd = open_fifo_writer(self.fifo, lambda: not self.ended.is_set())
        self.start_reader(os.open(os.path.join(self.sess.path, "stream"), os.O_RDONLY))

    def write_cmd(self):
        try:
            sb.write_file(self.sess.cmd, LOOP % self.fifo)
        except OSError as e:
            sys.stderr.write("stream_latency: %s: %s\n" % (self.sess.cmd, e))
        self.ended.set()

    def close(self):
        self.close_fifo()
        if not self.ended.wait(WAIT_S):
            self.sess.kill_run()
            self.ended.wait(WAIT_S)
        if self.reader:
            self.reader.join(WAIT_S)
        if self.out_fd is not None:
            os.close(self.out_fd)
        if not self.sess.remove():
            raise sb.BenchError("cannot remove %s" % self.sess.path)


class PipeSide(Side):
    def __init__(self, fifo):
        super().__init__("pipe", fifo)
        self.proc = None

    def start(self):
        self.proc = subprocess.Popen(["bash", "--norc", "--noprofile", "-c", LOOP % self.fifo],
                                     stdout=subprocess.PIPE, bufsize=0)
        self.fifo_fd = open_fifo_writer(self.fifo, lambda: self.proc.poll() is None)
        self.start_reader(self.proc.stdout.fileno())

    def close(self):
        self.close_fifo()
        if self.proc is None:
            return
        try:
            self.proc.wait(timeout=WAIT_S)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(timeout=WAIT_S)
        if self.reader:
            self.reader.join(WAIT_S)
        self.proc.stdout.close()


def back_to_back(sides, n):
    times = {s.name: [] for s in sides}
    for s in sides:
        for _ in range(WARMUP):
            s.once()
    done = 0
    while done < n:
        k = min(BLOCK, n - done)
        for s in sides:
            times[s.name] += [s.once() for _ in range(k)]
        done += k
    return times


def after_idle(sides, n):
    times = {s.name: [] for s in sides}
    for i in range(n):
        for j in range(len(sides)):
            s = sides[(i + j) % len(sides)]
            time.sleep(IDLE_S)
            times[s.name].append(s.once())
    return times


def report(label, times):
    (fm, f9), (pm, p9) = sb.stats(times["sessionfs"]), sb.stats(times["pipe"])
    print("stream_latency: %s (N=%d): sessionfs stream median %.1f us p90 %.1f us | "
          "pipe median %.1f us p90 %.1f us | ratio %.2f"
          % (label, len(times["pipe"]), fm, f9, pm, p9, fm / pm))


def run():
    mnt, _, _ = sb.start("stream_latency", "stream_latency.py MNT DAEMON_PID")
    n = sb.count("STREAM_LATENCY_N", 1000, 1, 10000000)
    n_idle = sb.count("STREAM_LATENCY_N_IDLE", 30, 1, 100000)
    tmp = tempfile.mkdtemp(prefix="sfs-stream-")
    sides = []
    try:
        for name in ("sfs", "pipe"):
            os.mkfifo(os.path.join(tmp, name), 0o600)
        sides = [SessionSide(mnt, os.path.join(tmp, "sfs")), PipeSide(os.path.join(tmp, "pipe"))]
        for s in sides:
            s.start()
        fast = back_to_back(sides, n)
        idle = after_idle(sides, n_idle)
    finally:
        failed = []
        for s in sides:
            try:
                s.close()
            except Exception as e:  # close the other side all the same
                failed.append("%s: %s" % (s.name, e))
        shutil.rmtree(tmp)
        if failed:
            raise sb.BenchError("cleanup: " + "; ".join(failed))
    report("back to back", fast)
    report("after %d ms idle" % (IDLE_S * 1000), idle)


if __name__ == "__main__":
    sb.main("stream_latency", run)
