"""How often pairing certificates exist on random positions, and how fast find_pairing is.

Positions come from random games in which neither player completes a pattern while another
move exists (long games, like the endgames a solver meets); each game contributes one position
per stone count. For each stage (stones on the board) the table gives the share of positions
with a pairing for the second player (first cannot win) and for the first player, and the
calls per second of find_pairing (both defenders, compiled loop, no Python per call).

    python bench/pairings.py                     # the default games
    python bench/pairings.py --games qango6 --games-per-spec 200 --budget 20000
"""

import argparse
import itertools
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

DEFAULT_GAMES = ["mnk:5,5,4", "mnk:7,7,5", "qango6", "qango7plus"]


@nb.njit(cache=True)
def random_positions(t, games, seed):
    """Every position (a, b) of ``games`` random calm games, with its stone count."""
    np.random.seed(seed)
    out_a = np.zeros(games * 65, np.uint64)
    out_b = np.zeros(games * 65, np.uint64)
    n = 0
    for _ in range(games):
        a = K.ZERO
        b = K.ZERO
        while K.status(a, b, t) == K.ONGOING:
            out_a[n] = a
            out_b[n] = b
            n += 1
            legal = K.legal_mask(a, b, t)
            first = K.first_to_move(a, b)
            own = a if first else b
            other = b if first else a
            calm = legal & ~K.threat_cells(own, other, t.win_masks)
            pool = calm if calm != K.ZERO else legal
            k = np.random.randint(K.popcount(pool))
            for c in range(64):
                if pool & (K.ONE << np.uint64(c)) != K.ZERO:
                    if k == 0:
                        a, b = K.play(a, b, c)
                        break
                    k -= 1
    return out_a[:n], out_b[:n]


@nb.njit(cache=True)
def pairing_all(keys_a, keys_b, t, budget, found):
    """find_pairing for both defenders at every position; found[i, d - 1] = 1 when found."""
    pairs = np.zeros((P.MAX_PAIRS, 2), np.int64)
    for i in range(keys_a.shape[0]):
        for d in (P.DEFENDER_FIRST, P.DEFENDER_SECOND):
            found[i, d - 1] = P.find_pairing(keys_a[i], keys_b[i], t, d, budget, pairs) >= 0


def report(spec, games, budget, stages):
    game = load_game(spec)
    t = game.tables
    ka, kb = random_positions(t, games, 1)
    found = np.zeros((len(ka), 2), np.int8)
    pairing_all(ka[:2], kb[:2], t, budget, found)  # compile / load outside the timing
    start = time.perf_counter()
    pairing_all(ka, kb, t, budget, found)
    seconds = time.perf_counter() - start
    rate = 2 * len(ka) / seconds
    print(
        f"\n{spec}: {len(ka)} positions, {2 * len(ka)} calls in {seconds:.2f} s = {rate:,.0f} calls/s, "
        f"budget {budget}"
    )
    print(f"  {'stones':>9} {'positions':>9} {'second defends':>15} {'first defends':>14}")
    count = np.array([K.popcount(a | b) for a, b in zip(ka, kb)])
    edges = np.linspace(0, count.max() + 1, stages + 1).astype(int)
    for lo, hi in itertools.pairwise(edges):
        sel = (count >= lo) & (count < hi)
        if sel.any():
            f = found[sel].mean(axis=0) * 100
            print(f"  {lo:>4}-{hi - 1:<4} {sel.sum():>9} {f[1]:>14.1f}% {f[0]:>13.1f}%")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--games", nargs="*", default=DEFAULT_GAMES)
    ap.add_argument("--games-per-spec", type=int, default=300)
    ap.add_argument("--budget", type=int, default=P.PAIRING_BUDGET)
    ap.add_argument("--stages", type=int, default=6)
    args = ap.parse_args()
    for spec in args.games:
        report(spec, args.games_per_spec, args.budget, args.stages)


if __name__ == "__main__":
    main()
