#!/usr/bin/env python3
"""fork: what `fork NAME` on a session's ctl costs for a session with
1,000 variables and 200 functions, against making a fresh session and
against writing that state out as bash text (declare -p, declare -f,
alias -p: what a fork by serialization would have to do, before loading
it again).

Usage: fork.py MNT DAEMON_PID
  FORK_N   forks (and fresh sessions) measured (default 40)

1. It makes MNT/sessions/bench-fork-PID and runs there, once, a command
   that sets 1,000 variables (500 exported, 400 plain, 50 indexed and 50
   associative arrays) and 200 functions.
2. For each of FORK_N rounds, interleaved:
     fork      the write of "fork bench-fork-PID-K\\n" to its ctl, timed
               from open to close (the new session's shell is forked by
               then), then one round trip of `true` in the fork, timed
               apart; the fork is checked once (its function and variable
               counts are the source's), then removed
     mkdir     mkdir of a fresh session, then its first round trip of
               `true`, timed the same way; then removed
3. In the source, timed inside bash with EPOCHREALTIME (no daemon in the
   figure): `{ declare -p; declare -f; alias -p; } >FILE`, FORK_N times.
It prints medians and 90th percentiles in microseconds and the ratios:
fork against mkdir, fork + first run against mkdir + first run, and fork
against the serialization alone. Target: fork <= 5 ms.

Cleanup on every path: every session made is removed. Exit status 0
whether the target is met or not; 1 on any error or stop signal.
"""

import os
import tempfile

import sfsbench as sb

SETUP = r"""
for i in $(seq 1 500); do export "EXV_$i=exported value $i"; done
for i in $(seq 1 400); do declare "PLV_$i=plain value $i"; done
for i in $(seq 1 50); do declare -a "ARR_$i=(a b c $i)"; done
for i in $(seq 1 50); do declare -A "ASC_$i=([k]=v [n]=$i)"; done
for i in $(seq 1 200); do
	eval "fn_$i() { local x=\$1; echo \"fn $i \$x\"; [ -n \"\$x\" ] && return 0; }"
done
"""
COUNT = ('echo "$(declare -F | grep -c " fn_") '
         '$(compgen -v | grep -cE "^(EXV|PLV|ARR|ASC)_")"\n')


def timed(fn):
    t0 = sb.now_us()
    fn()
    return sb.now_us() - t0


def rounds(mnt, src, n, made):
    fork_us, fork_run_us, mk_us, mk_run_us = [], [], [], []
    ctl = os.path.join(src.path, "ctl")
    want = sb.read_file(src.path + "/stdout").strip()
    for k in range(n):
        f = sb.Session(mnt, "fork", "f%d" % k)
        fork_us.append(timed(lambda: sb.write_file(
            ctl, "fork %s\n" % os.path.basename(f.path))))
        f.made = True
        made.append(f)
        fork_run_us.append(timed(f.round_trip))
        if k == 0:
            f.round_trip(COUNT.encode())
            got = sb.read_file(f.path + "/stdout").strip()
            if got != want:
                raise sb.BenchError("the fork has %r (functions, variables), "
                                    "the source %r" % (got, want))
        f.remove()
        m = sb.Session(mnt, "fork", "m%d" % k)
        mk_us.append(timed(m.make))
        made.append(m)
        mk_run_us.append(timed(m.round_trip))
        m.remove()
    return fork_us, fork_run_us, mk_us, mk_run_us


def serialize_us(src, n, path):
    cmd = ('for i in $(seq %d); do t0=$EPOCHREALTIME; '
           '{ declare -p; declare -f; alias -p; } >%s; t1=$EPOCHREALTIME; '
           'echo $(( (${t1/./} - ${t0/./}) )); done\n' % (n, path))
    src.round_trip(cmd.encode())
    out = sb.read_file(src.path + "/stdout", 1 << 20).split()
    return [float(x) for x in out], os.path.getsize(path)


def line(name, v):
    med, p90 = sb.stats(v)
    print("  %-36s median %8.0f us  p90 %8.0f us" % (name, med, p90))
    return med


def body():
    mnt, _pid, _ = sb.start("fork", "fork.py MNT DAEMON_PID")
    n = sb.count("FORK_N", 40, 3, 10000)
    src = sb.Session(mnt, "fork")
    made = [src]
    tmp = tempfile.mkdtemp(prefix="sfs-bench-fork-")
    dump = os.path.join(tmp, "state.sh")
    try:
        src.make()
        src.round_trip(SETUP.encode())
        src.round_trip(COUNT.encode())
        print("fork: a session with 1,000 variables and 200 functions "
              "(%s), %d rounds" % (sb.read_file(src.path + "/stdout").strip(), n))
        fk, fkr, mk, mkr = rounds(mnt, src, n, made)
        ser, size = serialize_us(src, n, dump)
        f = line("fork (ctl write)", fk)
        fr = line("the fork's first run of true", fkr)
        m = line("mkdir (fresh session)", mk)
        mr = line("the fresh one's first run of true", mkr)
        s = line("declare -p/-f, alias -p (%d KiB)" % (size // 1024), ser)
        print("  ratio fork/mkdir %.2f, fork+run/mkdir+run %.2f, "
              "fork/serialize %.2f" % (f / m, (f + fr) / (m + mr), f / s))
        print("  target fork <= 5 ms: %s" % ("met" if f <= 5000 else "MISSED"))
    finally:
        for s in made:
            s.remove()
        if os.path.exists(dump):
            os.unlink(dump)
        os.rmdir(tmp)


if __name__ == "__main__":
    sb.main("fork", body)
