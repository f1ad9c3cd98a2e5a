#!/usr/bin/env python3
"""peers: one command's round trip through sessionfs beside the ways agent
frameworks drive a shell, back to back and after an idle pause, in one run
and printed side by side.

Usage: peers.py MNT DAEMON_PID
  PEERS_N        rounds back to back and after 20 ms idle (default 200)
  PEERS_N1S      rounds after 1 s idle (default 10)

The ways (each runs `true` and waits until it is known to be done):
  sessionfs        open/write/close cmd, open/read/close exit (must say 0)
  pexpect bash     a persistent bash on a pty, a unique PS1, sendline,
                   expect the prompt (SWE-ReX's way, delaybeforesend off)
  tmux             a bash in a private tmux server: `tmux send-keys
                   'true; tmux wait-for -S CH' Enter`, then `tmux wait-for
                   CH` (OpenHands' way: a tmux client process per call)
  spawn            subprocess.run(["bash", "-c", "true"])
  pipe bash        a persistent bash on two pipes, `true; echo MARKER`,
                   read until the marker (the floor)
Back to back the ways take turns round by round; after idle each one sleeps
the pause before each of its rounds, in a rotating order, so load that
comes and goes hits them alike. It prints the median and 90th percentile
of each in microseconds and each median's ratio to sessionfs's.

Exit status 0 (a measurement); 1 on any error or stop signal. The session
is removed, the shells and the tmux server killed, on every path.
"""

import os
import shutil
import subprocess
import time

import idle_latency as il
import sfsbench as sb

WARMUP = 20


class TmuxWay:
    name = "tmux send-keys"

    def __init__(self):
        if not shutil.which("tmux"):
            raise sb.BenchError("no tmux (tests/install-deps.sh installs it)")
        self.sock = "sfsbench-%d" % os.getpid()
        self.base = ["tmux", "-L", self.sock, "-f", "/dev/null"]
        self.i = 0
        subprocess.run(self.base + ["new-session", "-d", "-s", "b", "-x", "200",
                                    "-y", "50", "bash --norc --noprofile"],
                       check=True)
        self.started = True

    def once(self, idle=None):
        self.i += 1
        ch = "sfsb%d" % self.i
        t0 = sb.now_us()
        subprocess.run(self.base + ["send-keys", "-t", "b",
                                    "true; tmux -L %s wait-for -S %s" % (self.sock, ch),
                                    "Enter"], check=True)
        subprocess.run(self.base + ["wait-for", ch], check=True, timeout=il.TIMEOUT_S)
        return sb.now_us() - t0

    def close(self):
        subprocess.run(self.base + ["kill-server"], stderr=subprocess.DEVNULL)


def back_to_back(ways, n):
    times = {w.name: [] for w in ways}
    for i in range(n):
        for k in range(len(ways)):
            w = ways[(i + k) % len(ways)]
            times[w.name].append(w.once())
    return times


def report(ways, results):
    print("peers: round trip of `true` (us), medians and p90")
    print("  %-16s" % "method" + "".join(
        "  %18s" % label for label, _ in results))
    ref = {label: sb.median(t["sessionfs"]) for label, t in results}
    for w in ways:
        row = "  %-16s" % w.name
        for label, times in results:
            med, p90 = sb.stats(times[w.name])
            row += "  %7.0f %5.0f %4.2fx" % (med, p90, med / ref[label])
        print(row)
    print("  (each cell: median, p90, median / sessionfs's median)")
    for label, times in results:
        m = {w.name: sb.median(times[w.name]) for w in ways}
        ahead = [w.name for w in ways if w.name != "sessionfs" and m[w.name] < m["sessionfs"]]
        print("peers: %s: sessionfs %.0f us; faster than sessionfs: %s"
              % (label, m["sessionfs"], ", ".join(ahead) if ahead else "none"))


def run():
    mnt, _, _ = sb.start("peers", "peers.py MNT DAEMON_PID")
    n = sb.count("PEERS_N", 200, 1, 1000000)
    n1s = sb.count("PEERS_N1S", 10, 0, 100000)
    ways = []
    try:
        ways.append(il.SessionfsWay(mnt))
        ways.append(il.PexpectWay(False))
        ways.append(TmuxWay())
        ways.append(il.SpawnWay())
        ways.append(il.PipeWay())
        for w in ways:
            for _ in range(WARMUP):
                w.once()
        results = [("back to back", back_to_back(ways, n)),
                   ("after 20 ms idle", il.measure(ways, 0.02, n))]
        if n1s:
            results.append(("after 1 s idle", il.measure(ways, 1.0, n1s)))
    finally:
        for w in ways:
            w.close()
    report(ways, results)


if __name__ == "__main__":
    sb.main("peers", run)
