#!/usr/bin/env python3
"""contexts: code interpreter contexts (MNT/sessions/S/contexts/NAME)
against what a client would use without them, in the same run.

Usage: contexts.py MNT DAEMON_PID
  CONTEXTS_N        round trips of `x = x + 1; x` (default 1000)
  CONTEXTS_KERNEL_N round trips through the Jupyter kernel (default 300)
  CONTEXTS_PLOT_N   plots each way (default 20)

It times:
  round trip   write `x = x + 1; x` to code (its close returns when it has
               run), read result, which must be the count; median and 90th
               percentile, against a python3 Jupyter kernel (ipykernel)
               driven by jupyter_client: execute, then iopub messages up to
               the kernel's idle, the execute_result taken (E2B's way).
               Target: at most 1 ms, and at least 10x faster
  plot         a matplotlib line plot end to end (code with plt.plot, then
               read results/1/png) against the same figure saved to PNG
               with savefig in this process. Target: at most 1.1x
  memory       VmRSS (and Pss) of an idle python and javascript context's
               interpreter. Target: 40 MiB and 60 MiB

The contexts run this benchmark's own python3 (its directory first on
their PATH), which must have matplotlib, and jupyter_client for the
kernel (tests/install-deps.sh installs Debian's). Exit status 0 whether
the targets are met or not; 1 on any error. The session is removed on
every path, the kernel shut down.
"""

import io
import os
import subprocess
import sys
import time

import sfsbench as sb

MIB = 1024 * 1024


class Context:
    def __init__(self, sess, name, language="python"):
        self.path = os.path.join(sess.path, "contexts", name)
        os.mkdir(self.path)
        if language != "python":
            sb.write_file(os.path.join(self.path, "language"), language + "\n")
        path = os.path.dirname(sys.executable) + ":" + os.environ.get("PATH", "")
        sb.write_file(os.path.join(self.path, "env", "PATH"), path + "\n")

    def run(self, code):
        sb.write_file(os.path.join(self.path, "code"), code)

    def read(self, name, size=1 << 24):
        with open(os.path.join(self.path, name), "rb") as f:
            return f.read(size)

    def field(self, key):
        for line in self.read("status").decode().splitlines():
            k, _, v = line.partition(" ")
            if k == key:
                return v
        return ""


def ms(us):
    return "%.3f ms" % (us / 1000)


def round_trips(ctx, n):
    ctx.run("x = 0")
    times = []
    for i in range(n + 50):
        t0 = sb.now_us()
        ctx.run("x = x + 1; x")
        got = ctx.read("result", 4096)
        t1 = sb.now_us()
        if got != b"%d\n" % (i + 1):
            raise sb.BenchError("result is %r, not %d" % (got, i + 1))
        if i >= 50:
            times.append(t1 - t0)
    return sb.stats(times)


def kernel_round_trips(n):
    """The same through a Jupyter kernel, or None without jupyter_client."""
    try:
        from jupyter_client.manager import start_new_kernel
    except ImportError:
        return None
    # (its debugger's warnings about frozen modules are noise here)
    km, kc = start_new_kernel(kernel_name="python3",
                              stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL)
    try:
        times = []
        kc.execute_interactive("x = 0", timeout=30)
        for i in range(n + 20):
            t0 = sb.now_us()
            msg_id = kc.execute("x = x + 1; x")
            value = None
            while True:
                m = kc.get_iopub_msg(timeout=30)
                if m["parent_header"].get("msg_id") != msg_id:
                    continue
                if m["msg_type"] == "execute_result":
                    value = m["content"]["data"]["text/plain"]
                if m["msg_type"] == "status" and \
                        m["content"]["execution_state"] == "idle":
                    break
            t1 = sb.now_us()
            if value != str(i + 1):
                raise sb.BenchError("kernel gave %r, not %d" % (value, i + 1))
            if i >= 20:
                times.append(t1 - t0)
        return sb.stats(times)
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)


PLOT = "plt.plot(range(100)); plt.title('t');"


def plots(ctx, n):
    ctx.run("import matplotlib.pyplot as plt\n" + PLOT)
    times = []
    for _ in range(n):
        t0 = sb.now_us()
        ctx.run(PLOT)
        png = ctx.read("results/1/png")
        t1 = sb.now_us()
        if png[:8] != b"\x89PNG\r\n\x1a\n":
            raise sb.BenchError("results/1/png is not a PNG")
        times.append(t1 - t0)
    return sb.median(times)


def savefigs(n):
    import matplotlib
    matplotlib.use("agg")
    import matplotlib.pyplot as plt
    times = []
    for i in range(n + 1):
        t0 = sb.now_us()
        plt.plot(range(100))
        plt.title("t")
        buf = io.BytesIO()
        plt.gcf().savefig(buf, format="png")
        plt.close("all")
        t1 = sb.now_us()
        if i:
            times.append(t1 - t0)
    return sb.median(times)


def memory(ctx):
    pid = ctx.field("pid")
    vals = {}
    with open("/proc/%s/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                vals["rss"] = int(line.split()[1]) * 1024
    try:
        with open("/proc/%s/smaps_rollup" % pid) as f:
            for line in f:
                if line.startswith("Pss:"):
                    vals["pss"] = int(line.split()[1]) * 1024
    except OSError:
        vals["pss"] = 0
    return vals


def body():
    mnt, _, _ = sb.start("contexts", "contexts.py MNT DAEMON_PID")
    n = sb.count("CONTEXTS_N", 1000, 10, 1000000)
    kn = sb.count("CONTEXTS_KERNEL_N", 300, 10, 1000000)
    pn = sb.count("CONTEXTS_PLOT_N", 20, 1, 10000)
    sess = sb.Session(mnt, "contexts").make()
    try:
        ctx = Context(sess, "rt")
        med, p90 = round_trips(ctx, n)
        print("contexts: round trip of `x = x + 1; x`, %d: median %s, "
              "p90 %s (target <= 1 ms)" % (n, ms(med), ms(p90)))
        k = kernel_round_trips(kn)
        if k is None:
            print("contexts: no jupyter_client in %s: no kernel baseline"
                  % sys.executable)
        else:
            print("contexts: jupyter kernel (ipykernel), %d: median %s, "
                  "p90 %s; kernel/sessionfs %.1fx (target >= 10x)"
                  % (kn, ms(k[0]), ms(k[1]), k[0] / med))
        plot = plots(Context(sess, "plot"), pn)
        save = savefigs(pn)
        print("contexts: matplotlib line plot end to end, %d: median %s; "
              "savefig in-process %s; ratio %.2f (target <= 1.1)"
              % (pn, ms(plot), ms(save), plot / save))
        for lang, target in (("python", 40), ("javascript", 60)):
            c = Context(sess, "idle-" + lang, lang)
            c.run("1")
            time.sleep(0.5)
            m = memory(c)
            print("contexts: idle %s context: VmRSS %.1f MiB, Pss %.1f MiB "
                  "(target <= %d MiB)"
                  % (lang, m["rss"] / MIB, m["pss"] / MIB, target))
    finally:
        sess.remove()


if __name__ == "__main__":
    sb.main("contexts", body)
