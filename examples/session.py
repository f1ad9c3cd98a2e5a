#!/usr/bin/env python3
"""Drive sessionfs from Python with plain file operations (standard library only).

    python3 examples/session.py [MOUNTPOINT]      (default: ./mnt)

Creates a session, runs commands in it, starts a background process, reads
its logs, kills it and deletes the session. Exits non-zero if anything is not
as expected.
"""
import os
import sys

mnt = sys.argv[1] if len(sys.argv) > 1 else "./mnt"
session = os.path.join(mnt, "sessions", f"example-py-{os.getpid()}")


def path(*names):
    return os.path.join(session, *names)


def write(name, text):
    # For cmd, close() (the end of the with block) returns when the command
    # has ended.
    with open(name, "w") as f:
        f.write(text)


def read(name):
    with open(name) as f:
        return f.read()


def expect(cond, what):
    if not cond:
        sys.exit(f"error: {what}")


def run(cmd):
    """Runs cmd in the session; returns (exit status, stdout)."""
    print(f"running: {cmd}")
    write(path("cmd"), cmd + "\n")
    return int(read(path("exit"))), read(path("stdout"))


print(f"creating session {session}")
os.mkdir(session)
try:
    # A variable for every command of the session: one file per variable.
    write(path("env", "GREETING"), "hello\n")

    # cd and export persist to the next command, like in a terminal.
    run("cd /tmp")
    code, out = run('echo "$GREETING from $PWD"')
    print(f"  stdout: {out.strip()}")
    expect(code == 0 and out == "hello from /tmp\n", f"unexpected result {code} {out!r}")

    code, _ = run('echo "something went wrong" >&2; exit 3')
    print(f"  stderr: {read(path('stderr')).strip()}")
    print(f"  exit:   {code}")
    expect(code == 3, f"exit status {code}, not 3")

    # A background process: mkdir names it, writing cmd starts it (close
    # returns as soon as it has started). It runs in the session's cwd.
    print("starting a background process in procs/logger")
    os.mkdir(path("procs", "logger"))
    write(path("procs", "logger", "cmd"),
          'i=0; while :; do i=$((i + 1)); echo "log line $i from $PWD"; sleep 0.2; done\n')
    print(f"  pid {read(path('procs', 'logger', 'pid')).strip()}")

    # stream follows its output: each read returns what has arrived, so
    # iterating over lines sees each line as soon as it is printed.
    print("waiting for its third log line")
    found = None
    with open(path("procs", "logger", "stream")) as stream:
        for line in stream:
            if line.startswith("log line 3"):
                found = line.strip()
                break
    print(f"  stream: {found}")
    expect(found == "log line 3 from /tmp", f"unexpected log line {found!r}")
    lines = read(path("procs", "logger", "stdout")).splitlines()
    print(f"  its log so far: {len(lines)} lines in stdout")

    print("killing it")
    write(path("procs", "logger", "ctl"), "kill\n")
    code = read(path("procs", "logger", "exit")).strip()  # blocks until it has exited
    status = dict(line.split(" ", 1) for line in read(path("procs", "logger", "status")).splitlines())
    print(f"  exit {code}, state {status['state']}")
    expect(status["state"] == "killed", f"state {status['state']}, not killed")
finally:
    # Deleting the session ends everything it started.
    print("deleting the session")
    os.rmdir(session)
print("done")
