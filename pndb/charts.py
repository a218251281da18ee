"""`pndb plot`: a solve's time series (pndb.timeseries) drawn with matplotlib.

Three panels over the solve's seconds: the root's proof and disproof numbers for both questions
(log scale: they span orders of magnitude; a number at 0 or infinity is left out, the question
being answered), the stored nodes and the file's size, and the rates of outer expansions and of
the inner solver's nodes.
matplotlib is an optional extra (`pip install 'pndb[plot]'`): nothing else imports it.
"""

import math

FORMATS = (".png", ".svg", ".pdf")
NUMBERS = (  # (field, label, colour, line style) of the root numbers
    ("pn_first_wins", "pn: first wins?", "#c0392b", "-"),
    ("dn_first_wins", "dn: first wins?", "#c0392b", "--"),
    ("pn_first_avoids_loss", "pn: first avoids loss?", "#1f4fb3", "-"),
    ("dn_first_avoids_loss", "dn: first avoids loss?", "#1f4fb3", "--"),
)


def time_axis(points):
    """(the points' times in a unit that suits the solve's length, the unit's name)."""
    last = points[-1].seconds if points else 0
    unit, scale = ("hours", 3600) if last >= 3 * 3600 else ("minutes", 60) if last >= 180 else ("seconds", 1)
    return [p.seconds / scale for p in points], unit


def drawable(number):
    """A root number as the log axis can show it: NaN for 0 and for infinity (None)."""
    return math.nan if number is None or number <= 0 else number


def inner_rates(points):
    """The inner solver's nodes per second between consecutive points."""
    return [
        (b.inner_nodes - a.inner_nodes) / max(b.seconds - a.seconds, 1e-9) for a, b in zip(points, points[1:])
    ]


def draw(points, title, output):
    """Draw ``points`` (timeseries.SeriesPoint, the root numbers' infinities None: api.series)
    into the file ``output``, its format by its suffix (FORMATS)."""
    import matplotlib

    matplotlib.use("Agg")  # a file, never a window
    import matplotlib.pyplot as plt

    times, unit = time_axis(points)
    fig, (numbers, size, rate) = plt.subplots(3, 1, figsize=(8, 9), sharex=True, constrained_layout=True)
    fig.suptitle(title)
    for name, label, colour, style in NUMBERS:
        numbers.plot(times, [drawable(getattr(p, name)) for p in points], style, color=colour, label=label)
    numbers.set_yscale("log")
    numbers.set_ylabel("root numbers")
    numbers.legend(fontsize="small", loc="best")
    size.plot(times, [p.nodes for p in points], color="#1a7f37", label="nodes")
    size.set_ylabel("stored nodes", color="#1a7f37")
    megabytes = size.twinx()
    megabytes.plot(times, [p.db_bytes / 1e6 for p in points], color="#8e44ad", label="database")
    megabytes.set_ylabel("database MB", color="#8e44ad")
    rate.plot(times, [p.rate for p in points], color="#5b6b86")
    rate.set_ylabel("expansions / s", color="#5b6b86")
    inner = rate.twinx()  # the inner solver's rate between points (from the series: nothing stored)
    inner.plot(times[1:], inner_rates(points), color="#d98b2b", linewidth=1)
    inner.set_ylabel("inner nodes / s", color="#d98b2b")
    rate.set_xlabel(f"solving time ({unit})")
    for axes in (numbers, size, rate):
        axes.grid(True, alpha=0.3)
    fig.savefig(output)
    plt.close(fig)
