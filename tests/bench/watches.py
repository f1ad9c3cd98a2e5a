#!/usr/bin/env python3
"""watches: how soon a change of the workspace is in a watch's events
(watches/NAME/events, fs/watch.c), and whether a burst loses any.

Usage: watches.py MNT DAEMON_PID DAEMON
  WATCHES_N      rounds of the latency (default 300)
  WATCHES_FILES  files of the burst (default 10000)

MNT and DAEMON_PID (run.sh's mount) are not touched: it mounts DAEMON -f
on a temporary directory of its own (coherence.py's Mount), its
workspace another.

The latency: a thread blocks in a read at the end of events; each round
creates a file in the workspace directly (open O_CREAT, close) and takes
the time from before the open to the return of the read that holds the
file's create (median, 90th percentile, min and max, in us).

The burst: WATCHES_FILES files created as fast as one process can, then
events read until each has its create or an overflow line comes (60 s
at most): how many creates, whether an overflow said what was lost, and
how long it took.

Exit status 0 (a measurement); 1 on any error or stop signal.
"""

import json
import os
import shutil
import tempfile
import threading
import time

import sfsbench as sb
from coherence import Mount


class Reader:
    """A thread that reads events from the end: its data, by round."""

    def __init__(self, path):
        self.fd = os.open(path, os.O_RDONLY)
        self.off = os.fstat(self.fd).st_size
        self.got = []
        self.cv = threading.Condition()
        self.t = threading.Thread(target=self.run, daemon=True)
        self.t.start()

    def run(self):
        while True:
            b = os.pread(self.fd, 1 << 20, self.off)
            if not b:
                return
            t = sb.now_us()
            self.off += len(b)
            with self.cv:
                self.got.append((t, b))
                self.cv.notify()

    def wait_for(self, name, since):
        end = time.monotonic() + 20
        with self.cv:
            while True:
                for t, b in self.got[since:]:
                    if name in b:
                        return t
                if time.monotonic() > end:
                    raise sb.BenchError("no event of %r in 20 s" % name)
                self.cv.wait(1)


def latency(m, ws, n):
    os.mkdir(os.path.join(m.mnt, "watches", "lat"))
    r = Reader(os.path.join(m.mnt, "watches", "lat", "events"))
    lat = []
    for i in range(n):
        name = "l%d" % i
        since = len(r.got)
        t0 = sb.now_us()
        os.close(os.open(os.path.join(ws, name), os.O_CREAT | os.O_WRONLY, 0o644))
        lat.append(r.wait_for(b'"path":"%s"' % name.encode(), since) - t0)
        os.unlink(os.path.join(ws, name))
    os.rmdir(os.path.join(m.mnt, "watches", "lat"))  # the reader's end of file
    r.t.join(10)
    os.close(r.fd)
    return lat


def burst(m, ws, nfiles):
    os.mkdir(os.path.join(m.mnt, "watches", "burst"))
    with open(os.path.join(m.mnt, "watches", "burst", "spec"), "w") as f:
        f.write("path b\nevents create\n")
    ev = os.path.join(m.mnt, "watches", "burst", "events")
    fd = os.open(ev, os.O_RDONLY | os.O_NONBLOCK)
    d = os.path.join(ws, "b")
    t0 = time.monotonic()
    for i in range(nfiles):
        os.close(os.open(os.path.join(d, "f%d" % i), os.O_CREAT | os.O_WRONLY, 0o644))
    made = time.monotonic() - t0
    seen, over, off, buf = set(), False, 0, b""
    end = time.monotonic() + 60
    while len(seen) < nfiles and not over and time.monotonic() < end:
        try:
            b = os.pread(fd, 1 << 20, off)
        except BlockingIOError:
            time.sleep(0.01)
            continue
        off += len(b)
        *lines, buf = (buf + b).split(b"\n")
        for l in lines:
            e = json.loads(l)
            over |= e["type"] == "overflow"
            if e["type"] == "create":
                seen.add(e["path"])
    took = time.monotonic() - t0
    os.close(fd)
    os.rmdir(os.path.join(m.mnt, "watches", "burst"))
    return len(seen), over, made, took


def body():
    _mnt, _pid, rest = sb.start("watches", "watches.py MNT DAEMON_PID DAEMON", 1)
    if not rest:
        raise sb.BenchError("no DAEMON given")
    n = sb.count("WATCHES_N", 300, 1, 100000)
    nfiles = sb.count("WATCHES_FILES", 10000, 1, 1000000)
    ws = tempfile.mkdtemp(prefix="sfs-watches-ws.")
    os.mkdir(os.path.join(ws, "b"))
    m = Mount(rest[0], True, ws)
    try:
        lat = latency(m, ws, n)
        med, p90 = sb.stats(lat)
        print(
            "watches change to its event read (us): median %6.0f p90 %6.0f min %6.0f max %7.0f (%d rounds)"
            % (med, p90, min(lat), max(lat), n)
        )
        got, over, made, took = burst(m, ws, nfiles)
        print(
            "watches burst of %d creates: %d seen, overflow %s; made in %.2f s, all read %.2f s after the first"
            % (nfiles, got, "yes" if over else "no", made, took)
        )
        if got < nfiles and not over:
            raise sb.BenchError("%d creates lost without an overflow" % (nfiles - got))
    finally:
        m.close()
        shutil.rmtree(ws, ignore_errors=True)


if __name__ == "__main__":
    sb.main("watches", body)
