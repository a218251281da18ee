"""The time series of a solve: a point at each checkpoint, thinned to a bounded count.

Each checkpoint of a solve (Search.checkpoint) writes a SeriesPoint into the database's
``series`` table in its own write transaction (Store.commit), keyed by the checkpoint's number
(the database's checkpoint counter, which resumes go on counting). `pndb plot` and the
explorer's chart read them back (pndb.api.series).

Thinning: the series covers the whole solve at one even spacing, in checkpoints (which come
every --checkpoint-seconds, so in time too), with at most MAX_POINTS + 1 points however long the
solve runs. Checkpoint n is kept when ``(n - 1)`` is a multiple of the stride, the least power of
two that leaves at most MAX_POINTS kept numbers up to the last checkpoint; when the stride
doubles, every other kept point is dropped. The last checkpoint's point is always there (the
one extra point), so that the series ends where `pndb status` stands; the next checkpoint
replaces it unless it is kept. An even spacing rather than a finer one early: the plot's time
axis is linear, and a solve's interesting turns (the root's numbers falling) come late as often
as early. A thinning rewrites at most MAX_POINTS small records, once each time the solve's
checkpoints double.
"""

import json
from typing import NamedTuple

MAX_POINTS = 2048  # kept points (one more: the last checkpoint's); some 300 KB in all


ROOT_NUMBERS = ("pn_first_wins", "dn_first_wins", "pn_first_avoids_loss", "dn_first_avoids_loss")


class SeriesPoint(NamedTuple):
    """What a solve stood at when a checkpoint was written."""

    checkpoint: int  # the checkpoint's number (the database's counter, across runs)
    seconds: float  # of solving so far, all runs (meta ``seconds``)
    pn_first_wins: int  # the root's numbers for "does the first player win?" ...
    dn_first_wins: int
    pn_first_avoids_loss: int  # ... and for "does the first player avoid losing?"
    dn_first_avoids_loss: int
    nodes: int  # stored nodes as the checkpoint commits them
    expansions: int  # outer expansions so far, all runs
    inner_nodes: int  # nodes the inner solver searched so far, all runs
    db_bytes: int  # the database file's size when the checkpoint was written
    memory_bytes: int  # the process's anonymous memory (at the checkpoint before)
    rate: float  # outer expansions per second since the run's checkpoint before
    workers: int  # processes searching leaves (1: the solve's own)


def stride(last, limit=MAX_POINTS):
    """The stride of kept checkpoints when the last one is number ``last``: the least power of
    two s with at most ``limit`` numbers n <= last where s divides n - 1."""
    s = 1
    while (last - 1) // s + 1 > limit:
        s *= 2
    return s


def kept(number, last, limit=MAX_POINTS):
    """Whether checkpoint ``number``'s point stays once checkpoint ``last`` is written."""
    return number == last or (number - 1) % stride(last, limit) == 0


def thinning(last, limit=MAX_POINTS):
    """Whether writing checkpoint ``last`` doubles the stride: then every stored point is to
    be looked at (dropped), else only the last one before."""
    return stride(last, limit) != stride(last - 1, limit)


def encode_key(number):
    return number.to_bytes(8, "big")  # (in order: LMDB sorts keys by their bytes)


def decode_key(raw):
    return int.from_bytes(raw, "big")


def encode(point):
    return json.dumps(point._asdict(), separators=(",", ":")).encode()


def decode(raw):
    """A SeriesPoint from its record (a field an older record lacks is 0); ValueError for
    bytes that are not one."""
    data = json.loads(bytes(raw))
    if not isinstance(data, dict):
        raise ValueError("not a JSON object")
    return SeriesPoint(**{name: data.get(name, 0) for name in SeriesPoint._fields})
