#!/usr/bin/env python3
"""ready: tty/ready (the program waits for input and the output paused
20 ms) against tty/quiet (nothing printed for 200 ms) on the same prompts.

Usage: ready_bench.py MNT DAEMON_PID
  READY_N  rounds of each prompt and file (default 10)

1. latency: for each prompt, the command is typed into tty/input and a
   read of ready (or of quiet, the rounds interleaved) times the answer
   from the write; the answer is right when the screen's last row shows
   the prompt. The prompts: `read -p` at once; a prompt after 0.5 s of
   computation that prints nothing (python's busy loop, then read -p);
   python3 -q's first `>>>`. Median and [range] in ms of each, how many
   first answers were wrong (a screen without the prompt), the time
   until a reader that reads the file again has the prompt, and ready's
   gain on that (quiet's median less ready's).
2. cost: the daemon's CPU time (utime + stime of /proc/PID/stat) over
   5 s while a read of ready waits on `sleep` (it looks at the
   processes every 5 ms), against 5 s with no reader.

Cleanup on every path: the session is removed (which ends the terminal).
Exit status 0 whatever the figures (a measurement); 1 on any error.
"""

import os
import select
import time

import sfsbench as sb

PROMPTS = [
    ("read -p", "read -p 'name? ' x", "name?", "x\n"),
    (
        "prompt after 0.5 s of computation",
        "python3 -c 'import time; t = time.time()\n"
        "while time.time() - t < 0.5: pass'; read -p 'go? ' x",
        "go?",
        "x\n",
    ),
    ("python3 -q", "python3 -q", ">>>", "exit()\n"),
]


def last_row(screen):
    rows = [r.rstrip() for r in screen.splitlines() if r.strip()]
    return rows[-1] if rows else ""


def read_all(path):
    fd = os.open(path, os.O_RDONLY)
    try:
        out = b""
        while True:
            b = os.read(fd, 1 << 20)
            if not b:
                return out.decode(errors="replace")
            out += b
    finally:
        os.close(fd)


def at_shell(tty):
    """Waits (ready) until the shell's prompt is the last row."""
    for _ in range(50):
        if last_row(read_all(tty + "/ready")).endswith("$"):
            return
    raise sb.BenchError("the shell's prompt did not come back")


def one(tty, cmd, prompt, answer, file):
    """ms to the first answer of file, whether it showed the prompt, and
    ms until a reader that reads file again and again has it."""
    t0 = sb.now_us()
    sb.write_file(tty + "/input", cmd + "\n")
    screen = read_all(tty + "/" + file)
    first = (sb.now_us() - t0) / 1000
    right = last_row(screen).endswith(prompt)
    for _ in range(50):
        if last_row(screen).endswith(prompt):
            break
        screen = read_all(tty + "/" + file)
    got = (sb.now_us() - t0) / 1000
    sb.write_file(tty + "/input", answer)
    at_shell(tty)
    return first, right, got


def span(v):
    return "%6.1f [%.1f-%.1f]" % (sb.median(v), min(v), max(v))


def latency(tty, n):
    print("1. from the typed command to the answer, ms: median [range];")
    print("   wrong: a first answer without the prompt; then: until a")
    print("   reader that reads again has the prompt")
    for name, cmd, prompt, answer in PROMPTS:
        got = {"ready": [], "quiet": []}
        then = {"ready": [], "quiet": []}
        wrong = {"ready": 0, "quiet": 0}
        for _ in range(n):
            for file in ("ready", "quiet"):
                ms, right, until = one(tty, cmd, prompt, answer, file)
                got[file].append(ms)
                then[file].append(until)
                wrong[file] += not right
        print("  %s:" % name)
        for file in ("ready", "quiet"):
            print("    %-5s %s wrong %d/%d, then %s"
                  % (file, span(got[file]), wrong[file], n, span(then[file])))
        print("    ready has the prompt sooner by %.1f ms (medians)"
              % (sb.median(then["quiet"]) - sb.median(then["ready"])))


def cpu_ms(pid):
    with open("/proc/%d/stat" % pid) as f:
        f_ = f.read().rsplit(")", 1)[1].split()
    return (int(f_[11]) + int(f_[12])) * 1000 / os.sysconf("SC_CLK_TCK")


def server_pid(pid):
    """The daemon's serving child (the keeper forks it), else pid."""
    for d in os.listdir("/proc"):
        try:
            with open("/proc/%s/stat" % d) as f:
                st = f.read().rsplit(")", 1)[1].split()
            if d.isdigit() and int(st[1]) == pid:
                with open("/proc/%s/comm" % d) as f:
                    if f.read().strip() == "sessionfs":
                        return int(d)
        except (OSError, IndexError, ValueError):
            pass
    return pid


def cost(tty, pid):
    print("2. the daemon's CPU over 5 s, ms")
    srv = server_pid(pid)
    c0 = cpu_ms(srv)
    time.sleep(5)
    idle = cpu_ms(srv) - c0
    sb.write_file(tty + "/input", "sleep 6\n")
    time.sleep(0.3)
    fd = os.open(tty + "/ready", os.O_RDONLY | os.O_NONBLOCK)
    try:
        p = select.poll()
        p.register(fd, select.POLLIN)
        c0 = cpu_ms(srv)
        p.poll(5000)
        waiting = cpu_ms(srv) - c0
    finally:
        os.close(fd)
    at_shell(tty)
    print("  no reader %.0f ms; a poll of ready waiting on sleep %.0f ms "
          "(%.1f%% of a CPU)" % (idle, waiting, waiting / 50))


def body():
    mnt, pid, _ = sb.start("ready_bench", "ready_bench.py MNT DAEMON_PID")
    n = sb.count("READY_N", 10, 1, 1000)
    s = os.path.join(mnt, "sessions", "bench-ready")
    os.mkdir(s)
    try:
        tty = s + "/tty"
        sb.write_file(tty + "/input", "PS1='$ '\n")
        at_shell(tty)
        latency(tty, n)
        cost(tty, pid)
    finally:
        os.rmdir(s)


if __name__ == "__main__":
    sb.main("ready_bench", body)
