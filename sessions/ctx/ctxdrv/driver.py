# driver.py - the driver of a sessionfs python code context (installed
# as sfsctx.py next to the daemon). Run as `python3 sfsctx.py REQ ANS`:
# REQ and ANS are fifos it opens itself (close-on-exec, so no child of the
# user's code inherits them) and moves to random high descriptors.
# Requests are frames "code LEN\nKEY PATH" (the execution's key, the file
# holding the code); the answer of each is frames "result", one per
# format ("text", "html", "png", "chart", ...), "main", "ename", "evalue",
# "etrace", then "done", each payload starting with KEY. The user's
# stdout and stderr are the process's own descriptors 1 and 2, read by
# the daemon apart from all this.
#
# Standard library only; IPython's display formatter when it is installed
# and a value needs more than repr().
import ast
import builtins
import importlib.abc
import importlib.util
import io
import linecache
import os
import signal
import sys
import traceback
import types

DRIVER = os.path.abspath(__file__)
FORMATS = {
    "text/plain": "text", "text/html": "html", "text/markdown": "markdown",
    "image/svg+xml": "svg", "image/png": "png", "image/jpeg": "jpeg",
    "application/pdf": "pdf", "text/latex": "latex",
    "application/json": "json", "application/javascript": "javascript",
}
REPRS = [("html", "_repr_html_"), ("markdown", "_repr_markdown_"),
         ("svg", "_repr_svg_"), ("png", "_repr_png_"),
         ("jpeg", "_repr_jpeg_"), ("pdf", "_repr_pdf_"),
         ("latex", "_repr_latex_"), ("json", "_repr_json_"),
         ("javascript", "_repr_javascript_")]
PLAIN = (int, float, complex, str, bytes, bool, type(None), list, tuple,
         dict, set, frozenset)


FORMAT_MAX = 64 << 20  # a format of a result at most (ctxproto.h)
LOST = 86  # the exit status that says the protocol's descriptors are gone


def high_fd(fd):
    """fd moved to a random high number, out of reach of a loop that
    closes 3..255."""
    import random
    import resource
    soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    top = min(soft if soft > 0 else 1024, 1 << 20) - 1
    low = max(256, top // 2)
    if top > low:
        import fcntl
        new = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, random.randint(low, top))
        os.close(fd)
        fd = new
    return fd, os.fstat(fd)


class Driver:
    def __init__(self, req, ans):
        self.req, self.req_st = high_fd(os.open(req, os.O_RDONLY))
        self.ans, self.ans_st = high_fd(os.open(ans, os.O_WRONLY))
        self.pid = os.getpid()
        self.key = b""
        self.buf = b""
        self.in_user = False
        self.pending = False  # an interrupt before the user's code began
        self.count = 0
        self.results = []
        self.ipy = None
        mod = types.ModuleType("__main__")
        mod.__dict__["__builtins__"] = builtins
        mod.__dict__["display"] = self.display
        sys.modules["__main__"] = mod
        self.ns = mod.__dict__

    def check(self, fd, st):
        """The protocol's descriptor is still ours: else the user's code
        closed or replaced it, and the context ends rather than read or
        write what is there now."""
        if os.getpid() != self.pid:
            os._exit(0)  # a fork of the user's that came back here
        try:
            now = os.fstat(fd)
            if (now.st_dev, now.st_ino) == (st.st_dev, st.st_ino):
                return
        except OSError:
            pass
        sys.stderr.write("sessionfs: the driver's descriptors were closed "
                         "or replaced by the code\n")
        os._exit(LOST)

    def send(self, tag, data=b""):
        if isinstance(data, str):
            data = data.encode("utf-8", "surrogateescape")
        self.check(self.ans, self.ans_st)
        out = b"%s %d\n" % (tag.encode(), len(self.key) + len(data)) + \
            self.key + data
        try:
            while out:
                out = out[os.write(self.ans, out):]
        except OSError:
            os._exit(LOST)

    def frame(self):
        while True:
            head, nl, rest = self.buf.partition(b"\n")
            if nl:
                tag, _, n = head.partition(b" ")
                if len(rest) >= int(n):
                    self.buf = rest[int(n):]
                    return tag.decode(), rest[:int(n)]
            self.check(self.req, self.req_st)
            try:
                data = os.read(self.req, 65536)
            except OSError:
                os._exit(LOST)
            if not data:
                sys.exit(0)
            self.buf += data

    def on_sigint(self, sig, frame):
        if self.in_user:
            raise KeyboardInterrupt
        self.pending = True

    def forked(self):
        """In a child of os.fork(): the protocol is not its own."""
        for fd in (self.req, self.ans):
            try:
                os.close(fd)
            except OSError:
                pass
        self.req = self.ans = -1

    # -- formats of a value --------------------------------------------
    def formats(self, value):
        if not isinstance(value, PLAIN) and self.ipython() is not None:
            try:
                data, _ = self.ipy.format(value)
                return {FORMATS[k]: v for k, v in data.items()
                        if k in FORMATS}
            except Exception:
                pass
        out = {"text": repr(value)}
        for fmt, meth in REPRS:
            fn = getattr(type(value), meth, None)
            if fn is None:
                continue
            try:
                v = fn(value)
            except Exception:
                continue
            if isinstance(v, tuple):
                v = v[0]
            if v is not None:
                out[fmt] = v
        return out

    def ipython(self):
        if self.ipy is None:
            try:
                from IPython.core.formatters import DisplayFormatter
                self.ipy = DisplayFormatter()
            except Exception:
                self.ipy = False
        return self.ipy or None

    def display(self, *objs):
        for o in objs:
            self.results.append((self.formats(o), False))

    def figures(self):
        plt = sys.modules.get("matplotlib.pyplot")
        if plt is None:
            return
        for num in plt.get_fignums():
            fig = plt.figure(num)
            png = io.BytesIO()
            fig.savefig(png, format="png")
            self.results.append(({"text": repr(fig), "png": png.getvalue(),
                                  "chart": self.chart(num, fig)}, False))
        plt.close("all")

    def chart(self, num, fig):
        """chart.json of a figure drawn (sfschart.py); {"type":
        "unknown"} and a line on stderr when reading it fails."""
        try:
            return charts().chart_json(fig)
        except Exception as e:
            sys.stderr.write("sessionfs: figure %d's chart cannot be read "
                             "(%s)\n" % (num, self.describe(e)))
            return '{"type": "unknown"}'

    # -- one execution -------------------------------------------------
    def run(self, path):
        with open(path, "rb") as f:
            src = f.read().decode("utf-8", "surrogateescape")
        self.count += 1
        name = "<cell %d>" % self.count
        linecache.cache[name] = (len(src), None, src.splitlines(True), name)
        self.results = []
        err = None
        try:
            value, show = self.execute(src, name)
            if show and value is not None:
                self.ns["_"] = value
        except BaseException as e:
            err, show = e, False
        finally:
            self.in_user = False
        self.flush()
        self.answer(value if err is None and show else None, err)

    def execute(self, src, name):
        tree = ast.parse(src, name, "exec")
        last = None
        if tree.body and isinstance(tree.body[-1], ast.Expr):
            last = ast.Expression(tree.body.pop().value)
        code = compile(tree, name, "exec")
        tail = compile(last, name, "eval") if last else None
        self.in_user = True
        if self.pending:
            raise KeyboardInterrupt
        exec(code, self.ns)
        value = eval(tail, self.ns) if tail else None
        self.in_user = False
        return value, tail is not None and not src.rstrip().endswith(";")

    def answer(self, value, err):
        try:
            self.figures()
        except Exception as e:
            err = err or e
        if value is not None:
            try:
                self.results.append((self.formats(value), True))
            except Exception as e:
                err = err or e
        for no, (fmts, main) in enumerate(self.results, 1):
            self.send("result")
            for fmt, v in fmts.items():
                v = self.encode(no, fmt, v)
                if v is not None:
                    self.send(fmt, v)
            if main:
                self.send("main")
        if err is not None:
            self.error(err)
        self.flush()
        self.pending = False
        self.send("done")

    def encode(self, no, fmt, v):
        """The bytes of a format, or None (said on stderr) when it cannot
        be made or is too big."""
        why = None
        try:
            if fmt == "json" and not isinstance(v, str):
                import json
                v = json.dumps(v)
            elif fmt in ("png", "jpeg", "pdf") and isinstance(v, str):
                import base64
                v = base64.b64decode(v, validate=True)
            if isinstance(v, str):
                v = v.encode("utf-8", "surrogateescape")
            if not isinstance(v, (bytes, bytearray)):
                why = "is a %s, not text or bytes" % type(v).__name__
            elif len(v) > FORMAT_MAX and fmt == "text":
                sys.stderr.write("sessionfs: result %d's text is over %d "
                                 "bytes: truncated\n" % (no, FORMAT_MAX))
                v = v[:FORMAT_MAX]
            elif len(v) > FORMAT_MAX:
                why = "is over %d bytes" % FORMAT_MAX
        except Exception as e:
            why = "cannot be made (%s)" % self.describe(e)
        if why is None:
            return bytes(v)
        sys.stderr.write("sessionfs: result %d's %s %s: dropped\n"
                         % (no, fmt, why))
        return None

    @staticmethod
    def describe(e):
        try:
            return "%s: %s" % (type(e).__name__, e)
        except Exception:
            return type(e).__name__

    def flush(self):
        for stream in (sys.stdout, sys.stderr, sys.__stdout__,
                       sys.__stderr__):
            try:
                stream.flush()
            except Exception:
                pass

    def error(self, e):
        tb = e.__traceback__
        while tb is not None and tb.tb_frame.f_code.co_filename == DRIVER:
            tb = tb.tb_next
        if isinstance(e, SyntaxError):
            tb = None
        try:
            value = str(e)
        except Exception as why:
            value = "(str() of it failed: %s)" % self.describe(why)
        try:
            te = traceback.TracebackException(type(e), e, tb)
            te.stack = traceback.StackSummary.from_list(
                [f for f in te.stack if f.filename != DRIVER])
            lines = [line for chunk in te.format()
                     for line in chunk.rstrip("\n").split("\n")]
        except Exception:
            lines = ["%s: %s" % (type(e).__name__, value)]
        self.send("ename", type(e).__name__)
        self.send("evalue", value)
        for line in lines:
            self.send("etrace", line)

    def loop(self):
        self.send("ready")
        while True:
            tag, data = self.frame()
            if tag == "code":
                self.key, _, path = data.partition(b" ")
                try:
                    self.run(path.decode("utf-8", "surrogateescape"))
                except Exception as e:
                    # the driver's own failure: the execution's error,
                    # and the context lives on
                    self.pending = False
                    self.send("ename", "DriverError")
                    self.send("evalue", self.describe(e))
                    self.send("done")


def charts():
    """sfschart.py, next to this file, loaded once."""
    mod = sys.modules.get("sfschart")
    if mod is None:
        path = os.path.join(os.path.dirname(DRIVER), "sfschart.py")
        spec = importlib.util.spec_from_file_location("sfschart", path)
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        sys.modules["sfschart"] = mod
    return mod


class PlotHook(importlib.abc.MetaPathFinder):
    """matplotlib renders with Agg, set before the user's code imports it,
    and plt.show() hands the figures over instead of opening a window."""

    def __init__(self, driver):
        self.driver = driver
        self.left = {"matplotlib", "matplotlib.pyplot"}

    def find_spec(self, name, path, target=None):
        if name not in self.left:
            return None
        self.left.discard(name)
        sys.meta_path.remove(self)
        try:
            spec = importlib.util.find_spec(name)
        finally:
            if self.left:
                sys.meta_path.insert(0, self)
        if spec is None or spec.loader is None:
            return spec
        run = spec.loader.exec_module

        def exec_module(module):
            run(module)
            if name == "matplotlib":
                module.use("agg")
            else:
                module.show = lambda *a, **k: self.driver.figures()
                try:
                    charts().hook(sys.modules["matplotlib.axes"].Axes)
                except Exception:
                    pass  # box plots read as unknown
        spec.loader.exec_module = exec_module
        return spec


def main():
    if sys.path and os.path.abspath(sys.path[0] or ".") == \
            os.path.dirname(DRIVER):
        sys.path.pop(0)
    drv = Driver(sys.argv[1], sys.argv[2])
    sys.argv = [""]
    signal.signal(signal.SIGINT, drv.on_sigint)
    os.register_at_fork(after_in_child=drv.forked)
    sys.meta_path.insert(0, PlotHook(drv))
    for stream in (sys.stdout, sys.stderr):
        stream.reconfigure(line_buffering=True)
    drv.loop()


if __name__ == "__main__":
    main()
