"""hostile: how long a read of `health` takes while another user attacks
the shared mount, against the same reads on the quiet mount, measured in
the same run. The attacks are those a local user of an allow_other mount
has: her own FUSE mount, stopped, with her session's cwd written inside
it (HOSTILE_PLL: libfuse's passthrough_ll), a loop of kill(-1, SIGSTOP)
while her sessions start shells, her
descriptors held open on her own output files, 50,000 display() calls in
a python context, and a 100 MiB exception message raised three times.
Each prints the median, 90th percentile and worst read of health during
the attack beside the quiet figures, and their ratio.

Usage: hostile.py MNT DAEMON_PID DAEMON_BIN
It mounts DAEMON_BIN with -o allow_other on a directory of its own (MNT
and DAEMON_PID, the shared benchmark mount, are not used: its users are
root alone), acts as the user nobody (65534), and always unmounts. Counts:
HOSTILE_S (seconds of each attack's probes, default 5).
"""

import os
import signal
import subprocess
import sys
import tempfile
import threading
import time

import sfsbench as sb

USER = 65534  # nobody: one uid the daemon knows from the passwd database
HANG_S = 10  # a read of health that takes longer: the mount hangs


def as_user(fn):
    """Forks a child that drops to USER (no groups) and runs fn(); its pid."""
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            os.setgroups([])
            os.setresgid(USER, USER, USER)
            os.setresuid(USER, USER, USER)
            fn()
            code = 0
        except BaseException as e:  # the child never returns into main
            sys.stderr.write("hostile: child: %s: %s\n" % (type(e).__name__, e))
        os._exit(code)
    return pid


class Reader(threading.Thread):
    """Reads health when asked, so that a read that hangs (the mount
    frozen) ends the benchmark with a message instead of hanging it."""

    def __init__(self, mnt):
        super().__init__(daemon=True)
        self.path = os.path.join(mnt, "health")
        self.ask = threading.Semaphore(0)
        self.done = threading.Semaphore(0)
        self.ms = self.text = None

    def run(self):
        while True:
            self.ask.acquire()
            t = sb.now_us()
            try:
                self.text = sb.read_file(self.path, 4096)
            except OSError as e:
                self.text = str(e)
            self.ms = (sb.now_us() - t) / 1000.0
            self.done.release()

    def read(self):
        self.ask.release()
        if not self.done.acquire(timeout=HANG_S):
            raise sb.BenchError("a read of health took over %d s: the mount hangs" % HANG_S)
        if not self.text.startswith("ok"):
            raise sb.BenchError("health said %r" % self.text[:40])
        return self.ms


def probe(reader, seconds):
    """Reads health every 20 ms for seconds; the read times in ms."""
    lat = []
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        lat.append(reader.read())
        time.sleep(0.02)
    return lat


def report(name, lat, quiet):
    med, p90 = sb.stats(lat)
    qmed, qp90 = sb.stats(quiet)
    print(
        "hostile %-14s health median %.2f ms p90 %.2f max %.1f (quiet %.2f, p90 %.2f, max %.1f): x%.1f median, x%.1f max"
        % (name, med, p90, max(lat), qmed, qp90, max(quiet), med / qmed, max(lat) / max(quiet))
    )


def stop_loop(mnt, seconds):
    """Her two sessions loop `exit` through cmd while a third process of
    hers stops every process of hers and continues only the writers."""

    def body():
        writers = []
        for i in range(2):
            s = os.path.join(mnt, "sessions", "hostile-stop-%d-%d" % (os.getpid(), i))
            os.mkdir(s)
            w = os.fork()
            if w == 0:
                end = time.monotonic() + seconds
                while time.monotonic() < end:
                    try:
                        sb.write_file(os.path.join(s, "cmd"), "exit\n")
                    except OSError:
                        pass
                os._exit(0)
            writers.append(w)
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            os.kill(-1, signal.SIGSTOP)
            for w in writers:
                os.kill(w, signal.SIGCONT)
            time.sleep(0.001)
        os.kill(-1, signal.SIGCONT)
        for w in writers:
            os.waitpid(w, 0)

    return as_user(body)


def hold_fds(mnt, seconds):
    """Opens and reads her session's stdout until the daemon refuses."""

    def body():
        s = os.path.join(mnt, "sessions", "hostile-fds-%d" % os.getpid())
        os.mkdir(s)
        sb.write_file(os.path.join(s, "cmd"), "echo hi\n")
        sb.read_file(os.path.join(s, "exit"))
        import resource

        hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
        held = []
        try:
            while len(held) < hard - 16:
                fd = os.open(os.path.join(s, "stdout"), os.O_RDONLY)
                held.append(fd)
                os.read(fd, 16)
        except OSError:
            pass
        time.sleep(seconds)

    return as_user(body)


def context(mnt, code, tag, times=1):
    """Runs code times in a python context of hers (each close returns at
    the execution's end)."""

    def body():
        s = os.path.join(mnt, "sessions", "hostile-%s-%d" % (tag, os.getpid()))
        os.mkdir(s)
        c = os.path.join(s, "contexts", "py")
        os.mkdir(c)
        sb.write_file(os.path.join(c, "cwd"), "/tmp\n")
        for _ in range(times):
            try:
                sb.write_file(os.path.join(c, "code"), code)
            except OSError:
                pass

    return as_user(body)


def stopped_mount(mnt, seconds):
    """Her FUSE mount (libfuse's passthrough_ll, allow_other), stopped,
    and her session's and a context's cwd written inside it."""
    pll = os.environ.get("HOSTILE_PLL")
    if not pll:
        return None
    top = tempfile.mkdtemp(prefix="sfs-hostile-fuse.")
    os.chmod(top, 0o755)
    src, her = os.path.join(top, "src"), os.path.join(top, "mnt")
    for d in (src, os.path.join(src, "sub"), her):
        os.mkdir(d)
        os.chown(d, USER, USER)

    def body():
        fuse = subprocess.Popen([pll, "-f", "-o", "source=%s,allow_other" % src, her])
        try:
            for _ in range(200):
                if os.path.ismount(her):
                    break
                time.sleep(0.05)
            s = os.path.join(mnt, "sessions", "hostile-fuse-%d" % os.getpid())
            os.mkdir(s)
            os.mkdir(os.path.join(s, "contexts", "py"))
            os.kill(fuse.pid, signal.SIGSTOP)
            sb.write_file(os.path.join(s, "cwd"), os.path.join(her, "sub") + "\n")
            sb.write_file(os.path.join(s, "contexts", "py", "cwd"), os.path.join(her, "sub") + "\n")
            time.sleep(seconds)
        finally:
            os.kill(fuse.pid, signal.SIGCONT)
            subprocess.run(["fusermount3", "-u", her], check=False)
            fuse.wait()

    pid = as_user(body)
    CLEANUP.append(lambda: os.rmdir(her) or os.rmdir(os.path.join(src, "sub")) or os.rmdir(src) or os.rmdir(top))
    return pid


def fuse_setup():
    """Debian's defaults, which let a user mount FUSE with allow_other
    (/dev/fuse 0666, user_allow_other): set for the attack, put back."""
    mode = os.stat("/dev/fuse").st_mode & 0o777
    os.chmod("/dev/fuse", 0o666)
    CLEANUP.append(lambda: os.chmod("/dev/fuse", mode))
    with open("/etc/fuse.conf") as f:
        conf = f.read()
    if "\nuser_allow_other" not in "\n" + conf:
        with open("/etc/fuse.conf", "a") as f:
            f.write("user_allow_other\n")
        CLEANUP.append(lambda: open("/etc/fuse.conf", "w").write(conf))


CLEANUP = []

ATTACKS = [
    ("stopped-mount", stopped_mount),
    ("stop-loop", lambda mnt, s: stop_loop(mnt, s)),
    ("descriptors", lambda mnt, s: hold_fds(mnt, s)),
    ("display-50000", lambda mnt, s: context(mnt, "for i in range(50000): display(i)\n", "disp")),
    (
        "exception-3x100M",
        lambda mnt, s: context(mnt, 'raise ValueError("x" * (100 << 20))\n', "exc", 3),
    ),
]


def mount(binary):
    work = tempfile.mkdtemp(prefix="sfs-hostile.")
    os.chmod(work, 0o755)
    mnt = os.path.join(work, "mnt")
    os.mkdir(mnt)
    log = open(os.path.join(work, "daemon.log"), "w")
    proc = subprocess.Popen([binary, "-f", "-o", "allow_other", mnt], stdout=log, stderr=log)
    for _ in range(100):
        if os.path.isdir(os.path.join(mnt, "sessions")) and os.path.ismount(mnt):
            return work, mnt, proc
        time.sleep(0.05)
    raise sb.BenchError("%s did not mount %s" % (binary, mnt))


def unmount(work, mnt, proc):
    sb.unmount(mnt, proc)
    os.unlink(os.path.join(work, "daemon.log"))
    os.rmdir(mnt)
    os.rmdir(work)


def run_attack(mnt, reader, name, start, seconds, quiet):
    pid = start(mnt, seconds)
    if pid is None:
        print("hostile %-14s skipped (no HOSTILE_PLL: libfuse's passthrough_ll)" % name)
        return
    kids = {pid}
    try:
        time.sleep(0.2)
        report(name, probe(reader, seconds), quiet)
    finally:
        # whatever of hers is still stopped goes on, so that it can end
        kids.add(as_user(lambda: os.kill(-1, signal.SIGCONT)))
        if sb.reap(kids, 60):
            sb.kill_all(kids)
    for d in os.listdir(os.path.join(mnt, "sessions")):
        if d.startswith("hostile-"):
            try:
                os.rmdir(os.path.join(mnt, "sessions", d))
            except OSError as e:
                sys.stderr.write("hostile: rmdir %s: %s\n" % (d, e))


def body():
    _, _, rest = sb.start("hostile", "hostile.py MNT DAEMON_PID DAEMON_BIN", 1)
    if not rest:
        raise sb.BenchError("no DAEMON_BIN given")
    seconds = sb.count("HOSTILE_S", 5, 1, 120)
    work, mnt, proc = mount(rest[0])
    try:
        if os.environ.get("HOSTILE_PLL"):
            fuse_setup()
        reader = Reader(mnt)
        reader.start()
        quiet = probe(reader, seconds)
        for name, start in ATTACKS:
            run_attack(mnt, reader, name, start, seconds, quiet)
    finally:
        unmount(work, mnt, proc)
        for undo in reversed(CLEANUP):
            undo()


sb.main("hostile", body)
