#!/usr/bin/env python3
"""ports: how soon a read of `ports` that waits for a port answers once a
process of the session listens on it, against a client that tries to
connect every 10 ms (a wait-for-it loop); and what the wait costs the
daemon in CPU.

Usage: ports.py MNT DAEMON_PID
  PORTS_N   rounds per side (default 100)

The listening side is procs/srv of the session MNT/sessions/bench-ports-
PID: python3 reading port numbers from a fifo; for each, it closes the
socket before, binds 127.0.0.1:PORT, listens, takes the time (CLOCK_
MONOTONIC, one clock for every process) and writes it to a second fifo.
  sessionfs  "PORT 10000" is written to the session's ports, the file
             opened, and a thread blocks in its read; 20-30 ms later (the
             read parked, at any phase of the daemon's 10 ms ticks) the
             port goes to the server; the latency is from its listen() to
             the read's return
  connect    the same, but the thread tries connect() every 10 ms
It prints the median, the 90th percentile and the range in microseconds,
and the ratio of the medians. Then the daemon's CPU time (its utime and
stime, /proc/PID/stat of health's pid) over 2 s with one read waiting
for a port nobody listens on, against 2 s with nothing waiting.

Cleanup on every path: the fifos are closed (the server ends at EOF),
procs/srv removed, the session removed, the fifos' directory removed.
Exit status 0 whatever the figures (a measurement); 1 on any error or
stop signal.
"""

import os
import random
import shutil
import socket
import tempfile
import threading
import time

import sfsbench as sb

WAIT_S = 10
SERVER = r"""
import os, socket, sys, time
inp = open(sys.argv[1]); out = os.open(sys.argv[2], os.O_WRONLY)
s = None
for line in inp:
    if s:
        s.close()
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("127.0.0.1", int(line)))
    s.listen()
    os.write(out, b"%d\n" % time.clock_gettime_ns(time.CLOCK_MONOTONIC))
"""


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """procs/srv and its two fifos."""

    def __init__(self, sess, tmp):
        self.dir = os.path.join(sess.path, "procs", "srv")
        self.inp, self.out = os.path.join(tmp, "in"), os.path.join(tmp, "out")
        os.mkfifo(self.inp)
        os.mkfifo(self.out)
        self.w = self.r = None

    def start(self):
        os.mkdir(self.dir)
        sb.write_file(os.path.join(self.dir, "cmd"),
                      "exec python3 -c '%s' %s %s\n" % (SERVER, self.inp, self.out))
        self.w = os.open(self.inp, os.O_WRONLY)
        self.r = os.open(self.out, os.O_RDONLY)

    def listen(self, port):
        """The moment (µs) the server's listen() returned."""
        os.write(self.w, b"%d\n" % port)
        line = b""
        while not line.endswith(b"\n"):
            part = os.read(self.r, 64)
            if not part:
                raise sb.BenchError("the server ended")
            line += part
        return int(line) / 1e3

    def stop(self):
        for fd in (self.w, self.r):
            if fd is not None:
                os.close(fd)
        self.w = self.r = None
        if os.path.isdir(self.dir):
            os.rmdir(self.dir)


def by_ports(sess, srv):
    port = free_port()
    sb.write_file(os.path.join(sess.path, "ports"), "%d 10000\n" % port)
    fd = os.open(os.path.join(sess.path, "ports"), os.O_RDONLY)
    got = []
    try:
        t = threading.Thread(target=lambda: got.append((os.read(fd, 65536), sb.now_us())))
        t.start()
        time.sleep(0.02 + random.random() * 0.01)
        t0 = srv.listen(port)
        t.join(WAIT_S)
    finally:
        os.close(fd)
    if not got or (b" %d " % port) not in got[0][0]:
        raise sb.BenchError("ports did not answer with port %d: %r" % (port, got))
    return got[0][1] - t0


def by_connect(srv):
    port = free_port()
    got = []

    def loop():
        end = time.monotonic() + WAIT_S
        while time.monotonic() < end:
            with socket.socket() as c:
                if c.connect_ex(("127.0.0.1", port)) == 0:
                    got.append(sb.now_us())
                    return
            time.sleep(0.01)

    t = threading.Thread(target=loop)
    t.start()
    time.sleep(0.02 + random.random() * 0.01)
    t0 = srv.listen(port)
    t.join(WAIT_S)
    if not got:
        raise sb.BenchError("no connect to port %d" % port)
    return got[0] - t0


def cpu_ms(pid):
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) * 1000 / os.sysconf("SC_CLK_TCK")


def server_pid(mnt):
    for line in sb.read_file(os.path.join(mnt, "health")).splitlines():
        if line.startswith("pid "):
            return int(line[4:])
    raise sb.BenchError("health has no pid line")


def cpu_cost(mnt, sess):
    """The daemon's CPU ms over 2 s with one read waiting, and with none."""
    pid = server_pid(mnt)
    sb.write_file(os.path.join(sess.path, "ports"), "%d 3000\n" % free_port())
    fd = os.open(os.path.join(sess.path, "ports"), os.O_RDONLY)
    try:
        t = threading.Thread(target=_read_quietly, args=(fd,))
        t.start()
        time.sleep(0.2)
        c0 = cpu_ms(pid)
        time.sleep(2)
        waiting = cpu_ms(pid) - c0
        t.join(WAIT_S)
    finally:
        os.close(fd)
    time.sleep(0.2)
    c0 = cpu_ms(pid)
    time.sleep(2)
    return waiting, cpu_ms(pid) - c0


def _read_quietly(fd):
    try:
        os.read(fd, 100)
    except OSError:
        pass  # ETIMEDOUT, after the 2 s measured


def show(name, v):
    med, p90 = sb.stats(v)
    print("  %-9s median %6.0f µs  p90 %6.0f  range %.0f–%.0f" % (name, med, p90, min(v), max(v)))
    return med


def body():
    mnt, _, _ = sb.start("ports", "ports.py MNT DAEMON_PID")
    n = sb.count("PORTS_N", 100, 5, 100000)
    sess = sb.Session(mnt, "ports")
    tmp = tempfile.mkdtemp(prefix="sfs-bench-ports.")
    srv = None
    try:
        sess.make()
        sess.round_trip()
        srv = Server(sess, tmp)
        srv.start()
        ours = [by_ports(sess, srv) for _ in range(n)]
        theirs = [by_connect(srv) for _ in range(n)]
        print("ports: listen() to the answer of a waiting read (N=%d)" % n)
        a = show("sessionfs", ours)
        b = show("connect", theirs)
        print("  ratio %.2f (sessionfs/connect every 10 ms)" % (a / b))
        srv.stop()
        srv = None
        waiting, idle = cpu_cost(mnt, sess)
        print("  daemon CPU over 2 s: %.0f ms with a read waiting, %.0f ms with none" % (waiting, idle))
    finally:
        if srv:
            srv.stop()
        sess.remove()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sb.main("ports", body)
