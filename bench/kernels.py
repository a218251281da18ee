"""Throughput of the game kernels: children() with and without symmetry reduction, and canonical().

Positions are random mid-game positions taken from random playouts. Each kernel is timed two
ways: driven by a numba-compiled loop (the kernel's own speed, no Python in between), and
called once per position from Python (what a Python caller sees per call).

    NUMBA_CACHE_DIR=/tmp/nbcache python bench/kernels.py [--games qango6 connect4] [--positions 4000]
"""

import argparse
import time

import numba as nb
import numpy as np

from pndb.games.placement import kernels as K
from pndb.games import load_game


def random_positions(game, count, seed):
    """``count`` ongoing positions, each after a random number of random moves (mid-game)."""
    rng = np.random.default_rng(seed)
    t = game.tables
    lo, hi = 4, max(6, min(game.cap - 2, 24))
    out_a = np.empty(count, np.uint64)
    out_b = np.empty(count, np.uint64)
    n = 0
    while n < count:
        a, b = np.uint64(0), np.uint64(0)
        depth = int(rng.integers(lo, hi + 1))
        for _ in range(depth):
            if K.status(a, b, t) != K.ONGOING:
                break
            legal = int(K.legal_mask(a, b, t))
            cells = [c for c in range(64) if legal >> c & 1]
            na, nb_ = K.play(a, b, cells[int(rng.integers(len(cells)))])
            a, b = np.uint64(na), np.uint64(nb_)  # numba hands uint64 back as Python ints
        if K.status(a, b, t) == K.ONGOING:
            out_a[n], out_b[n] = a, b
            n += 1
    return out_a, out_b


@nb.njit(cache=True)
def drive_children(pa, pb, t, reduce_symmetry):
    """children() of every position; returns (children generated, a checksum of the keys)."""
    total = 0
    check = np.uint64(0)
    for i in range(pa.shape[0]):
        n, _moves, ka, kb, st = K.children(pa[i], pb[i], t, reduce_symmetry)
        total += n
        for j in range(n):
            check ^= ka[j] ^ (kb[j] << np.uint64(1)) ^ np.uint64(st[j])
    return total, check


@nb.njit(cache=True)
def drive_children_into(pa, pb, t, reduce_symmetry):
    """The same with children_into() and reused arrays (no allocation per call)."""
    moves = np.empty(64, np.int64)
    ka = np.empty(64, np.uint64)
    kb = np.empty(64, np.uint64)
    st = np.empty(64, np.int64)
    img = np.empty(2 * t.cell_images.shape[1], np.uint64)
    near = np.empty(t.cell_images.shape[1], np.int64)
    total = 0
    check = np.uint64(0)
    for i in range(pa.shape[0]):
        n = K.children_into(pa[i], pb[i], t, reduce_symmetry, moves, ka, kb, st, img, near)
        total += n
        for j in range(n):
            check ^= ka[j] ^ (kb[j] << np.uint64(1)) ^ np.uint64(st[j])
    return total, check


@nb.njit(cache=True)
def drive_canonical(pa, pb, sym_bytes):
    check = np.uint64(0)
    for i in range(pa.shape[0]):
        ka, kb, s = K.canonical(pa[i], pb[i], sym_bytes)
        check ^= ka ^ (kb << np.uint64(1)) ^ np.uint64(s)
    return pa.shape[0], check


def best_of(repeat, fn):
    """(best seconds, result) over ``repeat`` runs."""
    best, result = float("inf"), None
    for _ in range(repeat):
        t0 = time.perf_counter()
        result = fn()
        best = min(best, time.perf_counter() - t0)
    return best, result


def python_children(pa, pb, t, reduce_symmetry):
    total = 0
    children = K.children
    for a, b in zip(pa, pb):
        total += children(a, b, t, reduce_symmetry)[0]
    return total


def python_canonical(pa, pb, sym_bytes):
    canonical = K.canonical
    for a, b in zip(pa, pb):
        canonical(a, b, sym_bytes)
    return len(pa)


def bench_game(spec, npos, repeat, seed):
    game = load_game(spec)
    t = game.tables
    pa, pb = random_positions(game, npos, seed)
    py_pa = [np.uint64(x) for x in pa]
    py_pb = [np.uint64(x) for x in pb]
    py_n = min(npos, 2000)
    rows = []
    cases = [
        ("children full", lambda: drive_children(pa, pb, t, False),
         lambda: python_children(py_pa[:py_n], py_pb[:py_n], t, False)),
        ("children sym", lambda: drive_children(pa, pb, t, True),
         lambda: python_children(py_pa[:py_n], py_pb[:py_n], t, True)),
        ("children_into full", lambda: drive_children_into(pa, pb, t, False), None),
        ("children_into sym", lambda: drive_children_into(pa, pb, t, True), None),
        ("canonical", lambda: drive_canonical(pa, pb, t.sym_bytes),
         lambda: python_canonical(py_pa[:py_n], py_pb[:py_n], t.sym_bytes)),
    ]  # fmt: skip
    for name, jit_fn, py_fn in cases:
        jit_fn()  # compile / load from cache
        secs, (nchildren, _) = best_of(repeat, jit_fn)
        row = {"game": spec, "kernel": name, "pos_s": npos / secs, "kids_s": nchildren / secs,
               "kids_per_pos": nchildren / npos, "py_s": None}  # fmt: skip
        if py_fn is not None:
            py_fn()
            psecs, _ = best_of(repeat, py_fn)
            row["py_s"] = py_n / psecs
        if name == "canonical":
            row["kids_s"] = row["kids_per_pos"] = None
        rows.append(row)
    return rows


def fmt(x, width=12):
    if x is None:
        return "-".rjust(width)
    if x >= 1e6:
        return f"{x / 1e6:.2f}M".rjust(width)
    if x >= 1e3:
        return f"{x / 1e3:.1f}k".rjust(width)
    return f"{x:.2f}".rjust(width)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--games", nargs="+", default=["qango6", "connect4"])
    ap.add_argument("--positions", type=int, default=4000, help="random mid-game positions per game")
    ap.add_argument("--repeat", type=int, default=5, help="timed runs per case (best is reported)")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()

    print(f"numba {nb.__version__}, {args.positions} positions per game, best of {args.repeat}")
    print("numba loop: the kernel driven by a compiled loop; python: one kernel call per position\n")
    head = (f"{'game':14}{'kernel':20}{'pos/s numba':>12}{'children/s':>12}{'kids/pos':>12}"
            f"{'calls/s py':>12}")  # fmt: skip
    print(head)
    print("-" * len(head))
    for spec in args.games:
        rows = bench_game(spec, args.positions, args.repeat, args.seed)
        for r in rows:
            print(f"{r['game']:14}{r['kernel']:20}{fmt(r['pos_s'])}{fmt(r['kids_s'])}"
                  f"{fmt(r['kids_per_pos'])}{fmt(r['py_s'])}")  # fmt: skip
        by = {r["kernel"]: r for r in rows}
        full, sym = by["children full"], by["children sym"]
        print(
            f"{'':14}ratio sym/full: positions/s x{sym['pos_s'] / full['pos_s']:.2f}, "
            f"children/s x{sym['kids_s'] / full['kids_s']:.2f}, "
            f"python calls/s x{sym['py_s'] / full['py_s']:.2f}, "
            f"children per position x{sym['kids_per_pos'] / full['kids_per_pos']:.2f}"
        )
        print()


if __name__ == "__main__":
    main()
