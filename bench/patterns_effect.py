"""What the win-pattern knowledge of pndb.games.placement.patterns saves a plain search, knob by knob.

A small alpha-beta search with a transposition table (canonical keys, bounds) values a game's
start position with each part of the knowledge switched on in turn: graph move ordering
(order_moves instead of the static order), moves_to_search (forced moves and dead cells), and
pairings as leaf bounds (a pairing for the opponent: the mover cannot win; for the mover: the
mover cannot lose). It prints nodes and seconds per setting, and the value (which must agree).

    python bench/patterns_effect.py                          # default games, 60 s cap each
    python bench/patterns_effect.py --games mnk:7,7,5 --settings 3 --max-nodes 50000000
"""

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent.parent))
os.environ.setdefault("NUMBA_CACHE_DIR", str(Path(tempfile.gettempdir()) / "pndb-numba-cache"))

import numba as nb  # noqa: E402
import numpy as np  # noqa: E402

from pndb.games.placement import kernels as K  # noqa: E402
from pndb.games import load_game  # noqa: E402
from pndb.games.placement import patterns as P  # noqa: E402

ORDER = 1
FILTER = 2
PAIRING = 4
SETTINGS = [
    ("static order", 0),
    ("graph order", ORDER),
    ("+ forced/dead", ORDER | FILTER),
    ("+ pairings", ORDER | FILTER | PAIRING),
]
TT_BITS = 22


@nb.njit(cache=True)
def tt_slot(ka, kb, mask):
    h = ka * np.uint64(0x9E3779B97F4A7C15) ^ (kb + np.uint64(0x632BE59BD9B4E019)) * np.uint64(
        0xBF58476D1CE4E5B9
    )
    return np.int64((h ^ (h >> np.uint64(29))) & np.uint64(mask))


@nb.njit(cache=False)
def negamax(a, b, alpha, beta, t, knobs, tt_a, tt_b, tt_v, counter, max_nodes, budget):
    """Value for the player to move (+1 win, 0 draw, -1 loss) within (alpha, beta); the counter
    holds [nodes, aborted]."""
    counter[0] += 1
    if counter[0] > max_nodes:
        counter[1] = 1
        return 0
    state = K.status(a, b, t)
    if state != K.ONGOING:
        return 0 if state == K.DRAW else -1  # a finished game was won by the player who moved
    ka, kb, _ = K.canonical(a, b, t.sym_bytes)
    mask = tt_a.shape[0] - 1
    slot = tt_slot(ka, kb, mask)
    lo = -1
    hi = 1
    if tt_a[slot] == ka and tt_b[slot] == kb:
        lo = tt_v[slot, 0]
        hi = tt_v[slot, 1]
    if knobs & PAIRING and lo < hi:
        first = K.first_to_move(a, b)
        pairs = np.empty((P.MAX_PAIRS, 2), np.int64)
        mover = P.DEFENDER_FIRST if first else P.DEFENDER_SECOND
        other = P.DEFENDER_SECOND if first else P.DEFENDER_FIRST
        if hi > 0 and P.find_pairing(a, b, t, other, budget, pairs) >= 0:
            hi = 0
        if lo < 0 and P.find_pairing(a, b, t, mover, budget, pairs) >= 0:
            lo = 0
    if lo == hi or lo >= beta or hi <= alpha:
        return lo if lo >= beta or lo == hi else hi
    alpha = max(alpha, lo)
    beta = min(beta, hi)
    if knobs & FILTER:
        moves, verdict = P.moves_to_search(a, b, t)
        if verdict == P.MOVER_WINS:
            return 1
        if verdict == P.MOVER_LOSES:
            return -1
    else:
        moves = K.legal_mask(a, b, t)
    order = np.empty(64, np.int64)
    if knobs & ORDER:
        n = P.order_moves(a, b, t, moves, order)
    else:
        n = 0
        for i in range(t.order.shape[0]):
            if moves & (K.ONE << np.uint64(t.order[i])) != K.ZERO:
                order[n] = t.order[i]
                n += 1
    best = -2
    a0 = alpha
    for i in range(n):
        na, nb_ = K.play(a, b, order[i])
        v = -negamax(na, nb_, -beta, -alpha, t, knobs, tt_a, tt_b, tt_v, counter, max_nodes, budget)
        if counter[1]:
            return 0
        best = max(best, v)
        alpha = max(alpha, best)
        if alpha >= beta:
            break
    # store what the search proved: exact inside the window, else a bound
    if best <= a0:
        hi = min(hi, best)
    elif best >= beta:
        lo = max(lo, best)
    else:
        lo, hi = best, best
    tt_a[slot] = ka
    tt_b[slot] = kb
    tt_v[slot, 0] = lo
    tt_v[slot, 1] = hi
    return best


def run(spec, knobs, max_nodes, budget):
    game = load_game(spec)
    size = 1 << TT_BITS
    tt_a = np.full(size, np.uint64(0xFFFFFFFFFFFFFFFF), np.uint64)
    tt_b = np.zeros(size, np.uint64)
    tt_v = np.zeros((size, 2), np.int64)
    counter = np.zeros(2, np.int64)
    start = time.perf_counter()
    v = negamax(K.ZERO, K.ZERO, -1, 1, game.tables, knobs, tt_a, tt_b, tt_v, counter, max_nodes, budget)
    seconds = time.perf_counter() - start
    value = "unsolved" if counter[1] else {1: "first-wins", 0: "draw", -1: "second-wins"}[int(v)]
    return value, int(counter[0]), seconds


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--games", nargs="*", default=["tictactoe", "mnk:4,4,4", "mnk:5,4,4", "mnk:5,5,4"])
    ap.add_argument("--max-nodes", type=int, default=20_000_000)
    ap.add_argument("--budget", type=int, default=P.PAIRING_BUDGET, help="pairing search nodes per call")
    ap.add_argument(
        "--settings", nargs="*", type=int, default=range(len(SETTINGS)), help="indices into the settings"
    )
    args = ap.parse_args()
    run("tictactoe", ORDER | FILTER | PAIRING, 1000, args.budget)  # compile outside the timing
    run("tictactoe", 0, 1000, args.budget)
    for spec in args.games:
        for name, knobs in (SETTINGS[i] for i in args.settings):
            value, nodes, seconds = run(spec, knobs, args.max_nodes, args.budget)
            print(f"{spec:12} {name:15} {value:12} {nodes:>12,} nodes {seconds:8.2f} s", flush=True)


if __name__ == "__main__":
    main()
