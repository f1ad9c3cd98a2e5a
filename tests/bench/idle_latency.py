#!/usr/bin/env python3
"""idle_latency: the round trip of `true` after the machine has been idle,
the way an agent uses a shell (a command, a pause to think, the next one),
through sessionfs and through the ways a Python client has without it.

Usage: idle_latency.py MNT DAEMON_PID
  IDLE_LATENCY_N     rounds after 20 ms idle (default 100, at least 100
                     is meant)
  IDLE_LATENCY_N1S   rounds after 1 s idle (default 30)

Each round sleeps the idle time before each of the five ways (in a
rotating order, so load that comes and goes hits them alike) and times:
  sessionfs  open/write/close cmd with "true\\n", open/read/close exit
             (must say 0), in the session MNT/sessions/bench-idle-PID;
             each step is timed too
  spawn      subprocess.run(["bash", "-c", "true"])
  pexpect    a persistent `bash --norc --noprofile` on a pty, SWE-ReX's
             way: a unique PS1, sendline("true"), expect the prompt, with
             pexpect's 50 ms delaybeforesend off ("pexpect bash") and at
             its default, as SWE-ReX has it ("pexpect default")
  pipes      a persistent bash on two plain pipes: write
             "true; echo __done_N" and read until the marker (the floor)
It prints the median and 90th percentile of each in microseconds, the
medians of the sessionfs steps, and the ratios sessionfs/spawn (target
<= 0.2) and sessionfs/pexpect (target < 1, against the delay-free
pexpect) for both idle times.

Exit status 0 whether the targets are met or not (a measurement); 1 on
any error or stop signal. The session is removed and the three shells are
killed by pid on every path (pexpect and subprocess kill them by pid).
"""

import os
import subprocess
import time

import pexpect

import sfsbench as sb

WARMUP = 20
STEPS = ("open cmd", "write", "close cmd", "open exit", "read exit", "close exit")
PROMPT = "__SFS_BENCH_PS1__"
TIMEOUT_S = 10


class SessionfsWay:
    name = "sessionfs"

    def __init__(self, mnt):
        self.sess = sb.Session(mnt, "idle").make()
        self.steps = {}  # idle -> list of step tuples

    def once(self, idle=None):
        cmd, ex = self.sess.cmd, self.sess.exit
        t0 = sb.now_us()
        fd = os.open(cmd, os.O_WRONLY | os.O_TRUNC)
        t1 = sb.now_us()
        n = os.write(fd, b"true\n")
        t2 = sb.now_us()
        os.close(fd)
        t3 = sb.now_us()
        fd = os.open(ex, os.O_RDONLY)
        t4 = sb.now_us()
        status = os.read(fd, 64)
        t5 = sb.now_us()
        os.close(fd)
        t6 = sb.now_us()
        if n != 5 or status != b"0\n":
            raise sb.BenchError("sessionfs round trip: wrote %d, exit %r" % (n, status))
        if idle is not None:
            self.steps.setdefault(idle, []).append(
                (t1 - t0, t2 - t1, t3 - t2, t4 - t3, t5 - t4, t6 - t5)
            )
        return t6 - t0

    def close(self):
        self.sess.remove()


class SpawnWay:
    name = "bash -c spawn"

    def once(self, idle=None):
        t0 = sb.now_us()
        rc = subprocess.run(["bash", "-c", "true"]).returncode
        t1 = sb.now_us()
        if rc != 0:
            raise sb.BenchError("bash -c true: status %d" % rc)
        return t1 - t0

    def close(self):
        pass


class PexpectWay:
    """pexpect sleeps delaybeforesend (50 ms) before each send unless it
    is None; SWE-ReX keeps that default (the "pexpect default" row)."""

    def __init__(self, keep_delay):
        self.name = "pexpect default" if keep_delay else "pexpect bash"
        self.child = pexpect.spawn(
            "bash",
            ["--norc", "--noprofile"],
            echo=False,
            encoding="utf-8",
            timeout=TIMEOUT_S,
        )
        if not keep_delay:
            self.child.delaybeforesend = None
        # Quoted so that the echo of this line does not hold the prompt.
        self.child.sendline(
            "export PS1='__SFS_BENCH''_PS1__' PS2='' PS0=''; echo __sy''nc__"
        )
        self.child.expect_exact("__sync__")
        self.child.expect_exact(PROMPT)

    def once(self, idle=None):
        t0 = sb.now_us()
        self.child.sendline("true")
        self.child.expect_exact(PROMPT)
        return sb.now_us() - t0

    def close(self):
        self.child.close(force=True)


class PipeWay:
    name = "pipe bash (floor)"

    def __init__(self):
        self.proc = subprocess.Popen(
            ["bash", "--norc", "--noprofile"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            bufsize=0,
        )
        self.i = 0

    def once(self, idle=None):
        self.i += 1
        marker = b"__done_%d\n" % self.i
        inp, out = self.proc.stdin.fileno(), self.proc.stdout.fileno()
        got = b""
        t0 = sb.now_us()
        os.write(inp, b"true; echo __done_%d\n" % self.i)
        while not got.endswith(marker):
            chunk = os.read(out, 4096)
            if not chunk:
                raise sb.BenchError("the pipe bash ended")
            got += chunk
        return sb.now_us() - t0

    def close(self):
        try:
            self.proc.kill()
        except ProcessLookupError:
            pass
        self.proc.wait(timeout=TIMEOUT_S)


def measure(ways, idle_s, n):
    """n rounds; in each, every way once after idle_s of sleep."""
    times = {w.name: [] for w in ways}
    for i in range(n):
        for k in range(len(ways)):
            w = ways[(i + k) % len(ways)]
            time.sleep(idle_s)
            times[w.name].append(w.once(idle_s))
    return times


def report(ways, results, sfs):
    print("idle_latency: round trip of `true` after an idle pause (us)")
    print("  %-20s" % "method" + "".join(
        "  %9s %9s" % ("%s med" % label, "p90") for label, _, _ in results))
    for w in ways:
        row = "  %-20s" % w.name
        for _, _, times in results:
            med, p90 = sb.stats(times[w.name])
            row += "  %9.0f %9.0f" % (med, p90)
        print(row)
    for label, idle, times in results:
        steps = sfs.steps[idle]
        split = ", ".join(
            "%s %.0f" % (STEPS[j], sb.median([s[j] for s in steps]))
            for j in range(len(STEPS)))
        print("  sessionfs steps after %s idle, medians (us): %s" % (label, split))
    for label, _, times in results:
        m = {w.name: sb.median(times[w.name]) for w in ways}
        print("idle_latency: after %s idle (N=%d): sessionfs/spawn %.3f "
              "(target <= 0.2) | sessionfs/pexpect %.3f (target < 1; "
              "%.3f against pexpect's default 50 ms delay) | "
              "sessionfs/pipe %.2f"
              % (label, len(times["sessionfs"]), m["sessionfs"] / m["bash -c spawn"],
                 m["sessionfs"] / m["pexpect bash"],
                 m["sessionfs"] / m["pexpect default"],
                 m["sessionfs"] / m["pipe bash (floor)"]))


def run():
    mnt, _, _ = sb.start("idle_latency", "idle_latency.py MNT DAEMON_PID")
    n20 = sb.count("IDLE_LATENCY_N", 100, 1, 1000000)
    n1s = sb.count("IDLE_LATENCY_N1S", 30, 1, 100000)
    ways = []
    try:
        sfs = SessionfsWay(mnt)
        ways.append(sfs)
        ways.append(SpawnWay())
        ways.append(PexpectWay(False))
        ways.append(PexpectWay(True))
        ways.append(PipeWay())
        for w in ways:
            for _ in range(WARMUP):
                w.once()
        results = [
            ("20 ms", 0.02, measure(ways, 0.02, n20)),
            ("1 s", 1.0, measure(ways, 1.0, n1s)),
        ]
    finally:
        for w in ways:
            w.close()
    report(ways, results, sfs)


if __name__ == "__main__":
    sb.main("idle_latency", run)
