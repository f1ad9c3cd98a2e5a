#!/usr/bin/env python3
"""tty: a session's terminal (tty/) under load, beside the same work on a
plain PTY.

Usage: tty_bench.py MNT DAEMON_PID
  TTY_MIB      MiB that `cat` prints in the terminal (default 100)
  TTY_SCREEN_N reads of screen (default 1000)
  TTY_KEY_N    keys typed, each waited for on screen (default 500)
  TTY_LS_N     listings of another session during the flood (default 200)
  TTY_FLOOD_SIZE  the terminal's size during the flood (default "80 24")

1. throughput: `cat FILE; echo MARKER` typed into tty/input, timed from
   the write until tty/status counts all of its output and a read of
   tty/expect then finds the marker on the screen; MiB/s through the
   emulator with the screen kept, and the daemon's peak RSS (VmHWM) and
   RSS after, beside `script -q -c 'cat FILE' /dev/null` (util-linux's
   own PTY copy, its output to /dev/null) and the kernel's PTY alone (a
   reader of the master, 1 MiB reads, of `cat FILE` on the slave), timed
   in the same run. Then the same cat with a read of tty/expect waiting
   all along (a waiter gets every line fed to the screen, nothing
   skipped). Targets: >= 100 MiB/s, RSS < 64 MiB.
2. screen: open, read, close of tty/screen of a 200x50 terminal whose
   rows are full, median and p90 in microseconds, beside the same read of
   a regular file of the same size in MNT/files/ (the FUSE floor).
   Target: <= 1 ms.
3. key echo: with `cat` running in the terminal (the line discipline
   echoes), a key written to tty/keys (a letter, then BSpace) until the
   first row of screen shows it, back to back; beside the same key
   written to the master of a PTY of our own with `cat` on it, until the
   echo is read back. Target: <= 1 ms.
4. flood: with `yes` printing in the terminal (80x24 unless
   TTY_FLOOD_SIZE), `ls` (listdir) of
   another session, median and p90 in microseconds, beside the same with
   the terminal idle. Target: median < 10 ms.

Cleanup on every path: the session is removed (which ends the terminal),
the baseline children are killed by pid, the temporary files removed.
Exit status 0 whatever the figures (a measurement); 1 on any error.
"""

import os
import shutil
import subprocess
import sys
import tempfile
import time

import sfsbench as sb


def status_kib(pid, key):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1])
    raise sb.BenchError("no %s for pid %d" % (key, pid))


def make_file(path, mib):
    """mib MiB of 79-character lines of text and a newline each."""
    line = (b"".join(bytes([33 + (i * 7) % 90]) for i in range(79))) + b"\n"
    block = line * (65536 // len(line))
    with open(path, "wb") as f:
        left = mib << 20
        while left > 0:
            f.write(block[:left])
            left -= len(block)


def expect(tty, pattern, timeout_ms):
    sb.write_file(os.path.join(tty, "expect"), "%s %d\n" % (pattern, timeout_ms))
    return sb.read_file(os.path.join(tty, "expect"))


def typed(tty, text):
    sb.write_file(os.path.join(tty, "input"), text)


def printed_size(path):
    """What `cat path` prints through a PTY (onlcr: \\r before \\n)."""
    n = os.path.getsize(path)
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            n += block.count(b"\n")
    return n


def throughput(tty, daemon, path, mib, tag, parked):
    """MiB/s of cat path in the terminal: parked, a read of expect waits
    all along; else tty/status is polled until the output is all there,
    then expect finds the marker (the screen brought up to date)."""
    start, size = output_bytes(tty), printed_size(path)
    typed(tty, 'cat %s; echo "th""ru-%s"\n' % (path, tag))
    t0 = time.monotonic()
    if not parked:
        while output_bytes(tty) < start + size:
            if time.monotonic() - t0 > 600:
                raise sb.BenchError("cat never printed %d bytes" % size)
            time.sleep(0.005)
    expect(tty, "^thru-%s$" % tag, 600000)
    el = time.monotonic() - t0
    return mib / el, el


def pty_baseline(path, mib):
    """The kernel's PTY alone: cat on the slave, 1 MiB reads of the
    master until the slave hangs up."""
    master, slave = os.openpty()
    t0 = time.monotonic()
    p = subprocess.Popen(["cat", path], stdin=subprocess.DEVNULL,
                         stdout=slave, stderr=subprocess.DEVNULL)
    os.close(slave)
    try:
        while True:
            try:
                if not os.read(master, 1 << 20):
                    break
            except OSError:  # EIO: the slave is closed
                break
        el = time.monotonic() - t0
    finally:
        p.kill()
        p.wait()
        os.close(master)
    return mib / el, el


def script_baseline(path, mib):
    t0 = time.monotonic()
    subprocess.run(["script", "-q", "-c", "cat " + path, "/dev/null"],
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                   stdin=subprocess.DEVNULL, check=True, timeout=600)
    el = time.monotonic() - t0
    return mib / el, el


def read_times(path, n):
    out = []
    for _ in range(n):
        t0 = sb.now_us()
        fd = os.open(path, os.O_RDONLY)
        try:
            while os.read(fd, 1 << 20):
                pass
        finally:
            os.close(fd)
        out.append(sb.now_us() - t0)
    return out


def screen_bench(mnt, tty, n, scratch):
    sb.write_file(os.path.join(tty, "size"), "200 50\n")
    typed(tty, "clear; for i in $(seq 49); do printf '%0200d' $i; done; "
          'echo; echo "scr""een-full"\n')
    expect(tty, "^screen-full$", 30000)
    text = open(os.path.join(tty, "screen"), "rb").read()
    if len(text) < 45 * 200:
        raise sb.BenchError("screen holds %d bytes, not a full 200x50" % len(text))
    same = os.path.join(scratch, "screen-copy")
    with open(same, "wb") as f:
        f.write(text)
    tty_t = read_times(os.path.join(tty, "screen"), n)
    file_t = read_times(same, n)
    return sb.stats(tty_t), sb.stats(file_t), len(text)


def first_row(tty):
    fd = os.open(os.path.join(tty, "screen"), os.O_RDONLY)
    try:
        data = os.read(fd, 1 << 20)
    finally:
        os.close(fd)
    return data.split(b"\n", 1)[0]


def key_bench(tty, n):
    typed(tty, "clear; stty -ixon; cat\n")
    end = time.monotonic() + 10
    while first_row(tty) != b"" and time.monotonic() < end:
        time.sleep(0.01)
    time.sleep(0.2)
    keys = os.path.join(tty, "keys")
    out = []
    for i in range(n):
        key, want = ("a", b"a") if i % 2 == 0 else ("BSpace", b"")
        t0 = sb.now_us()
        sb.write_file(keys, key)
        while first_row(tty) != want:
            if sb.now_us() - t0 > 5e6:
                raise sb.BenchError("key %s never showed on screen" % key)
        out.append(sb.now_us() - t0)
    sb.write_file(keys, "C-c")
    return sb.stats(out)


def pty_key_baseline(n):
    master, slave = os.openpty()
    p = subprocess.Popen(["cat"], stdin=slave, stdout=slave, stderr=slave,
                         start_new_session=True)
    os.close(slave)
    out = []
    try:
        time.sleep(0.2)
        for i in range(n):
            key, want = (b"a", b"a") if i % 2 == 0 else (b"\x7f", b"\b \b")
            t0 = sb.now_us()
            os.write(master, key)
            got = b""
            while len(got) < len(want):
                got += os.read(master, 64)
            out.append(sb.now_us() - t0)
    finally:
        p.kill()
        p.wait()
        os.close(master)
    return sb.stats(out)


def ls_times(path, n):
    out = []
    for _ in range(n):
        t0 = sb.now_us()
        os.listdir(path)
        out.append(sb.now_us() - t0)
    return sb.stats(out)


def output_bytes(tty):
    for line in sb.read_file(os.path.join(tty, "status")).splitlines():
        if line.startswith("output_bytes "):
            return int(line.split()[1])
    raise sb.BenchError("no output_bytes in status")


def flood_bench(tty, other, n):
    size = os.environ.get("TTY_FLOOD_SIZE") or "80 24"
    sb.write_file(os.path.join(tty, "size"), size + "\n")
    idle = ls_times(other, n)
    start = output_bytes(tty)
    typed(tty, "yes | head -c 2000000000\n")
    end = time.monotonic() + 10
    while output_bytes(tty) < start + (256 << 10):
        if time.monotonic() > end:
            raise sb.BenchError("yes never printed 256 KiB")
        time.sleep(0.01)
    busy = ls_times(other, n)
    sb.write_file(os.path.join(tty, "keys"), "C-c")
    typed(tty, 'echo "flo""od-end"\n')
    expect(tty, "^flood-end$", 120000)
    sb.write_file(os.path.join(tty, "size"), "80 24\n")
    return busy, idle


def body():
    mnt, daemon, _ = sb.start("tty", "tty_bench.py MNT DAEMON_PID")
    mib = sb.count("TTY_MIB", 100, 1, 4096)
    nscr = sb.count("TTY_SCREEN_N", 1000, 10, 1000000)
    nkey = sb.count("TTY_KEY_N", 500, 10, 1000000)
    nls = sb.count("TTY_LS_N", 200, 10, 1000000)
    s = sb.Session(mnt, "tty")
    other = sb.Session(mnt, "tty", "other")
    scratch = tempfile.mkdtemp(prefix="bench-tty-", dir=os.path.join(mnt, "files"))
    local = tempfile.mkdtemp(prefix="bench-tty-")
    try:
        s.make()
        tty = os.path.join(s.path, "tty")
        path = os.path.join(local, "out.txt")
        make_file(path, mib)
        typed(tty, 'PS1="$ "; echo "re""ady"\n')
        expect(tty, "^ready$", 10000)
        rss0 = status_kib(daemon, "VmRSS")
        rate, el = throughput(tty, daemon, path, mib, "1", False)
        hwm, rss1 = status_kib(daemon, "VmHWM"), status_kib(daemon, "VmRSS")
        brate, bel = script_baseline(path, mib)
        krate, kel = pty_baseline(path, mib)
        print("tty: cat of %d MiB: %.0f MiB/s (%.2f s) | script -q: %.0f MiB/s "
              "(%.2f s) | ratio %.2f | kernel PTY alone: %.0f MiB/s (%.2f s) | "
              "ratio %.2f | target >= 100 MiB/s"
              % (mib, rate, el, brate, bel, rate / brate, krate, kel,
                 rate / krate))
        prate, pel = throughput(tty, daemon, path, mib, "2", True)
        print("tty: the same with a read of expect waiting all along: "
              "%.0f MiB/s (%.2f s)" % (prate, pel))
        print("tty: daemon VmHWM %.1f MiB, VmRSS %.1f MiB after (%.1f MiB "
              "before) | target < 64 MiB" % (hwm / 1024, rss1 / 1024, rss0 / 1024))
        (smed, sp90), (fmed, fp90), size = screen_bench(mnt, tty, nscr, scratch)
        print("tty: read of screen, 200x50 (%d bytes): median %.0f us, p90 %.0f "
              "us | same bytes from files/: %.0f us, p90 %.0f us | ratio %.2f | "
              "target <= 1000 us" % (size, smed, sp90, fmed, fp90, smed / fmed))
        kmed, kp90 = key_bench(tty, nkey)
        bmed, bp90 = pty_key_baseline(nkey)
        print("tty: a key to its echo on screen: median %.0f us, p90 %.0f us | "
              "own PTY, echo read back: %.0f us, p90 %.0f us | ratio %.2f | "
              "target <= 1000 us" % (kmed, kp90, bmed, bp90, kmed / bmed))
        other.make()
        (lmed, lp90), (imed, ip90) = flood_bench(tty, other.path, nls)
        print("tty: ls of another session while yes floods the terminal: "
              "median %.0f us, p90 %.0f us | terminal idle: %.0f us, p90 %.0f "
              "us | target < 10000 us" % (lmed, lp90, imed, ip90))
    finally:
        other.remove()
        s.remove()
        shutil.rmtree(scratch, ignore_errors=True)
        shutil.rmtree(local, ignore_errors=True)


if __name__ == "__main__":
    sb.main("tty", body)
