# chart.py - the data of a matplotlib figure as chart.json (installed as
# sfschart.py next to sfsctx.py, which loads it at the first figure), in
# the shape E2B's code interpreter gives its charts: "type" (line,
# scatter, bar, histogram, pie, box_and_whisker, superchart or unknown),
# "title", the axes' labels, units, scales and ticks, and "elements":
# {label, points} for line and scatter, {label, group, value} for bar,
# {label, edges, counts} for histogram, {label, angle, radius} for pie,
# box statistics for box_and_whisker; a figure of several axes is a
# superchart whose elements are their charts.
#
# It reads the figure after it was drawn (savefig), so that tick labels
# are known, and walks at most POINTS_MAX points of a series and
# TOTAL_MAX of a figure: a series past them is cut ("truncated": true on
# the element and on the chart). Any failure is {"type": "unknown"}.
import json
import math
import re

POINTS_MAX = 10000  # points (bars, wedges) of one element at most
TOTAL_MAX = 100000  # of one figure
ELEMENTS_MAX = 1000  # elements of one chart, axes of one figure
UNIT = re.compile(r"\((.*?)\)|\[(.*?)\]")


class Budget:
    def __init__(self):
        self.left = TOTAL_MAX
        self.cut = False

    def take(self, n):
        """How many of n items may be read; notes a cut."""
        k = max(0, min(n, POINTS_MAX, self.left))
        self.left -= k
        if k < n:
            self.cut = True
        return k


def num(v):
    """A JSON number, or null for NaN and the infinities."""
    v = float(v)
    return v if math.isfinite(v) else None


def unit(label):
    m = UNIT.search(label or "")
    return (m.group(1) or m.group(2)) if m else None


def axis(ax, name):
    """An axis' label, unit, scale and ticks, as E2B names them."""
    def get(what):
        return getattr(ax, "get_%s%s" % (name, what))()
    label = get("label")
    ticks = get("ticks")
    return {
        "%s_label" % name: label or None,
        "%s_unit" % name: unit(label),
        "%s_scale" % name: get("scale"),
        "%s_ticks" % name: [num(t) for t in ticks[:POINTS_MAX]],
        "%s_tick_labels" % name: [t.get_text()
                                  for t in get("ticklabels")[:POINTS_MAX]],
    }


def points(xy, label, budget):
    k = budget.take(len(xy))
    el = {"label": str(label),
          "points": [[num(x), num(y)] for x, y in xy[:k]]}
    if k < len(xy):
        el["truncated"] = True
    return el


def tick_labels(ax):
    """The x tick labels by position (of a bar's category)."""
    return {round(t.get_position()[0], 9): t.get_text()
            for t in ax.get_xticklabels()[:POINTS_MAX] if t.get_text()}


def bars(ax, containers, budget):
    """Bar containers: a histogram when every container's bars touch
    each other, else a bar chart (grouped by container)."""
    def edges(c):
        return [(p.get_x(), p.get_x() + p.get_width(), p.get_height())
                for p in c.patches[:budget.take(len(c.patches))]]
    cut = any(len(c.patches) > POINTS_MAX for c in containers)
    all_edges = [edges(c) for c in containers]
    hist = all(len(e) > 1 and all(abs(a[1] - b[0]) < 1e-9 * (1 + abs(b[0]))
                                  for a, b in zip(e, e[1:]))
               for e in all_edges)
    out = []
    names = tick_labels(ax)
    for c, e in zip(containers, all_edges):
        group = c.get_label()
        if hist:
            out.append({"label": group, "edges": [num(a[0]) for a in e] +
                        [num(e[-1][1])], "counts": [num(a[2]) for a in e]})
        else:
            out += [{"label": names.get(round((a[0] + a[1]) / 2, 9),
                                        "%g" % ((a[0] + a[1]) / 2)),
                     "group": group, "value": num(a[2])} for a in e]
    return ("histogram" if hist else "bar"), out, cut


def boxes(ax):
    """The statistics ax.bxp drew (noted by hook()), if its artists are
    still those of ax."""
    noted = getattr(ax, "_sfs_bxp", None)
    if not noted:
        return None
    stats, drawn = noted
    if not drawn or not all(a.axes is ax for a in drawn):
        return None
    out = []
    for i, s in enumerate(stats[:ELEMENTS_MAX]):
        out.append({"label": str(s.get("label", i + 1)),
                    "min": num(s["whislo"]), "first_quartile": num(s["q1"]),
                    "median": num(s["med"]), "third_quartile": num(s["q3"]),
                    "max": num(s["whishi"]),
                    "outliers": [num(v) for v in
                                 list(s.get("fliers", []))[:POINTS_MAX]]})
    return out


def pie(ax, wedges):
    return [{"label": w.get_label(), "angle": num(w.theta2 - w.theta1),
             "radius": num(w.r)} for w in wedges[:ELEMENTS_MAX]]


def kinds(ax):
    """The artists of ax by kind, or None when one is of no known kind."""
    from matplotlib.collections import PathCollection
    from matplotlib.container import BarContainer
    from matplotlib.lines import Line2D
    from matplotlib.patches import Rectangle, Wedge
    from matplotlib.text import Text
    k = {"lines": [], "scatter": [], "wedges": [], "bars": []}
    in_bars = set()
    for c in ax.containers:
        if isinstance(c, BarContainer):
            if c.orientation == "horizontal":
                return None  # barh: not read
            k["bars"].append(c)
            in_bars.update(id(p) for p in c.patches)
    for a in ax.get_children():
        if a in (ax.patch, ax.title, ax._left_title, ax._right_title) or \
                not a.get_visible() or a in ax.spines.values() or \
                a in (ax.xaxis, ax.yaxis) or a is ax.legend_:
            continue
        if isinstance(a, Line2D):
            k["lines"].append(a)
        elif isinstance(a, PathCollection):
            k["scatter"].append(a)
        elif isinstance(a, Wedge):
            k["wedges"].append(a)
        elif isinstance(a, Rectangle) and id(a) in in_bars:
            pass
        elif isinstance(a, Text):
            pass  # labels of a pie, annotations
        else:
            return None
    return k


def axes_chart(ax, budget):
    out = {"type": "unknown", "title": ax.get_title() or None}
    box = boxes(ax)
    k = kinds(ax) if box is None else None
    if box is not None:
        out.update(axis(ax, "x"), **axis(ax, "y"))
        out.update(type="box_and_whisker", elements=box)
    elif k is None:
        pass
    elif k["wedges"] and not (k["lines"] or k["scatter"] or k["bars"]):
        out.update(type="pie", elements=pie(ax, k["wedges"]))
    elif k["bars"] and not (k["lines"] or k["scatter"] or k["wedges"]):
        kind, els, cut = bars(ax, k["bars"], budget)
        out.update(axis(ax, "x"), **axis(ax, "y"))
        out.update(type=kind, elements=els)
        if cut:
            out["truncated"] = True
    elif bool(k["lines"]) != bool(k["scatter"]) and not k["wedges"] and \
            not k["bars"]:
        series = k["lines"] or k["scatter"]
        out.update(axis(ax, "x"), **axis(ax, "y"))
        out.update(type="line" if k["lines"] else "scatter")
        out["elements"] = [points(
            a.get_xydata() if k["lines"] else a.get_offsets(),
            a.get_label(), budget) for a in series[:ELEMENTS_MAX]]
        if any(e.get("truncated") for e in out["elements"]):
            out["truncated"] = True
    return out


def chart(fig):
    """The chart of a figure that was drawn, as a dict."""
    budget = Budget()
    axes = fig.get_axes()
    if not axes:
        return {"type": "unknown"}
    charts = [axes_chart(ax, budget) for ax in axes[:ELEMENTS_MAX]]
    if len(charts) == 1:
        return charts[0]
    sup = fig._suptitle.get_text() if fig._suptitle else None
    out = {"type": "superchart", "title": sup or None, "elements": charts}
    if budget.cut or len(axes) > ELEMENTS_MAX:
        out["truncated"] = True
    return out


def chart_json(fig):
    """chart.json's text for a figure; raises what the figure's reading
    raised (the driver gives {"type": "unknown"} then)."""
    return json.dumps(chart(fig), allow_nan=False)


def hook(axes_class):
    """Notes on each Axes the statistics its bxp draws (boxplot's), the
    only way to tell a box plot's lines from others."""
    bxp = axes_class.bxp

    def noted_bxp(self, bxpstats, *a, **k):
        drawn = bxp(self, bxpstats, *a, **k)
        try:
            self._sfs_bxp = (list(bxpstats), drawn.get("boxes", []))
        except Exception:
            pass
        return drawn
    axes_class.bxp = noted_bxp
