"""How many positions graph keys would merge beyond board keys, and what one costs.

Per game and phase (a mid-game and a late number of stones, or --stones), --roots random
positions (random playouts, ongoing, no immediate win for the player to move), and below each,
full width to --depth plies, every position a search's DAG could hold: the children pndb's
outer search expands (Game.children: one per symmetry class), keeping only those still ONGOING
(a child whose mover wins with the next stone is decided at once and never searched). No move
is pruned (no dead-cell or threat pruning). Per number of stones, pooled over the roots:
distinct board keys (pndb's canonical keys) and distinct graph keys (pndb.games.placement.graphkey), the
merge ratio, the longest graph key (bytes), and microseconds per key: graph_key against Game.key
(both Python calls, one position at a time) and the numba canonical kernel alone. With --db:
the same per number of stones over the ongoing positions a pndb database holds (the outer
DAG of a real solve).

    python bench/graphkeys.py                       # the default games
    python bench/graphkeys.py qango6 --stones 20 --depth 3
    python bench/graphkeys.py mnk:5,5,4 --db db/mnk-5-5-4.lmdb     # the nodes of a solve

With --solve: whole solves with board keys against graph keys (`pndb solve --graph-keys`), in
this process, one after the other on fresh temporary databases (which goes first alternates
from case to case; a warm-up solve of each kind first loads the compiled code): per case the
value(s), the outer expansions, the inner nodes, the stored nodes, the graph-key entries and
the wall time. A case is a game from the empty board, or a set of random positions (--roots
playouts of --stones stones, as above) solved in one shared database (`solve --positions`),
where graph keys merge across positions; each at the default inner budget and at a small one
or none (where the outer DAG does most or all of the work). Each solve (each position of a
set) stops at --max-seconds.

    python bench/graphkeys.py --solve                  # the default cases
    python bench/graphkeys.py --solve mnk:6,6,5 --stones 16 --roots 16 --inner-nodes 0 200
"""

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
os.environ.setdefault("NUMBA_CACHE_DIR", str(Path(tempfile.gettempdir()) / "pndb-numba-cache"))

from solve import aligned  # noqa: E402  (bench/solve.py)

from pndb.games.placement import kernels as K  # noqa: E402
from pndb.games import load_game  # noqa: E402
from pndb.games.placement.graphkey import graph_key  # noqa: E402
from pndb.games.placement.game import Position  # noqa: E402

DEFAULT_GAMES = ["qango6", "qango6:castle", "mnk:5,5,4", "mnk:7,7,5", "qango7plus"]
# stones at the roots: a mid-game and a late phase
DEFAULT_STONES = {
    "qango6": (12, 18),
    "qango6:castle": (12, 18),
    "mnk:5,5,4": (8, 13),
    "mnk:7,7,5": (14, 24),
    "qango7plus": (12, 18),
}


def random_roots(game, count, stones, rng):
    """``count`` distinct canonical positions of ``stones`` stones from random playouts: ongoing,
    and the player to move cannot win at once."""
    t = game.tables
    roots = set()
    while len(roots) < count:
        a = b = np.uint64(0)
        for _ in range(stones):
            legal = int(K.legal_mask(a, b, t))
            cells = [c for c in range(64) if legal >> c & 1]
            a, b = (np.uint64(x) for x in K.play(a, b, cells[int(rng.integers(len(cells)))]))
            if K.status(a, b, t) != K.ONGOING:
                break
        if K.position_status(a, b, t) == K.ONGOING and (int(a) | int(b)).bit_count() == stones:
            roots.add(game.key(Position(int(a), int(b))))
    return sorted(roots)


def positions_below(game, roots, depth):
    """{stones: set of board keys}: the roots and their ONGOING descendants to ``depth`` plies."""
    layer = set(roots)
    by_stones = {}
    for _ in range(depth + 1):
        if not layer:
            break
        stones = game.rank(game.position(next(iter(layer))))
        by_stones[stones] = layer
        nxt = set()
        for key in layer:
            kids = game.children(game.position(key))
            nxt.update(k for k, s in zip(kids.keys, kids.statuses) if s == K.ONGOING)
        layer = nxt
    return by_stones


def per_key_us(fn, items):
    t0 = time.perf_counter()
    for item in items:
        fn(item)
    return 1e6 * (time.perf_counter() - t0) / len(items)


def stored_positions(game, path):
    """{stones: set of board keys} of the ongoing positions a pndb database holds."""
    from pndb.store import open_for_game

    by_stones = {}
    with open_for_game(path, game, writer=False) as store, store.view(game) as view:
        for key, _ in view.nodes():
            pos = game.position(bytes(key))
            if game.status(pos) == K.ONGOING:
                by_stones.setdefault(game.rank(pos), set()).add(bytes(key))
    return by_stones


def table_rows(spec, game, by_stones):
    """One row per number of stones: keys, merge ratio and microseconds per key."""
    rows = []
    warm = Position(1 << game.order[0], 0)  # compile and load outside the timing
    graph_key(game, warm.first, warm.second)
    K.canonical(np.uint64(warm.first), np.uint64(0), game.tables.sym_bytes)
    game.key(warm)
    for stones, keys in sorted(by_stones.items()):
        positions = [game.position(k) for k in keys]
        t0 = time.perf_counter()
        graph_keys = {graph_key(game, p.first, p.second) for p in positions}
        graph_us = 1e6 * (time.perf_counter() - t0) / len(positions)
        board_us = per_key_us(game.key, positions)
        bits = [(np.uint64(p.first), np.uint64(p.second)) for p in positions]
        kernel_us = per_key_us(lambda ab: K.canonical(ab[0], ab[1], game.tables.sym_bytes), bits)
        ratio = f"{len(keys) / len(graph_keys):.2f}"
        rows.append([spec, str(stones), str(len(keys)), str(len(graph_keys)), ratio])
        rows[-1] += [str(max(map(len, graph_keys))), f"{graph_us:.0f}", f"{board_us:.1f}", f"{kernel_us:.1f}"]
        print(f"{spec} {stones} stones: {len(keys)} positions", file=sys.stderr, flush=True)
    return rows


# --solve: games solved from the empty board, and games whose random positions are solved as a set
SOLVE_GAMES = ["mnk:5,5,4", "mnk:7,7,5", "qango6", "qango6:castle", "qango7plus:edges"]
SOLVE_SETS = {"mnk:5,5,4": 12, "mnk:6,6,5": 14, "mnk:7,7,5": 20}  # game -> stones at the roots
# inner budgets: the default, and a small one (games) or none (sets: the outer search alone,
# where every position searched is a node of the DAG; the default solves most at once)
SOLVE_INNER = {"game": (None, 100), "set": (None, 0)}


def solve_case(spec, lines, inner, graph_keys, max_seconds):
    """Solve ``lines`` (start move strings) in one fresh database; a dict of what it took."""
    from pndb import api

    kwargs = {} if inner is None else {"inner_nodes": inner}
    with tempfile.TemporaryDirectory(prefix="pndb-gk-") as tmp:
        db = Path(tmp) / "db"
        t0 = time.perf_counter()
        results = list(
            api.solve_positions(spec, lines, db=db, max_seconds=max_seconds, graph_keys=graph_keys, **kwargs)
        )
        seconds = time.perf_counter() - t0
        st = api.status(db)
    return {
        "values": [r.value.name for r in results],
        "solved": sum(r.solved for r in results),
        "expansions": st["expansions"],
        "inner_nodes": st["inner_nodes"],
        "nodes": st["nodes"],
        "graph_keys": st.get("graph_keys", 0),
        "seconds": seconds,
    }


def solve_rows(cases, max_seconds):
    """Board keys against graph keys on each case: the table rows."""
    solve_case("tictactoe", [""], None, False, None)  # load the compiled code of both kinds
    solve_case("tictactoe", [""], None, True, None)
    rows = [["case", "inner", "keys", "solved", "values", "expansions", "inner nodes", "nodes", "graph keys"]]
    rows[0] += ["seconds", "ratio"]
    for n, (label, spec, lines, inner) in enumerate(cases):
        got = {}
        for graph_keys in (False, True) if n % 2 == 0 else (True, False):
            got[graph_keys] = solve_case(spec, lines, inner, graph_keys, max_seconds)
            took = got[graph_keys]["seconds"]
            print(f"{label} inner={inner} graph={graph_keys}: {took:.1f}s", file=sys.stderr, flush=True)
        same = got[False]["values"] == got[True]["values"]
        for graph_keys in (False, True):
            r = got[graph_keys]
            values = ",".join(sorted(set(r["values"]))) + ("" if same else " (DIFFER)")
            ratio = f"{r['seconds'] / got[False]['seconds']:.2f}" if graph_keys else ""
            budget = "default" if inner is None else str(inner)
            rows.append([label, budget, "graph" if graph_keys else "board"])
            rows[-1] += [f"{r['solved']}/{len(lines)}", values, str(r["expansions"]), str(r["inner_nodes"])]
            rows[-1] += [str(r["nodes"]), str(r["graph_keys"]), f"{r['seconds']:.2f}", ratio]
    return rows


def solve_cases(args):
    """(label, spec, start move strings, inner budget) for --solve."""
    given = [None if x < 0 else x for x in args.inner_nodes or ()]
    if args.games:
        wanted = [(spec, args.stones) for spec in args.games]
    else:
        wanted = [(spec, None) for spec in SOLVE_GAMES] + list(SOLVE_SETS.items())
    cases = []
    for spec, stones in wanted:
        game = load_game(spec)
        if stones:
            rng = np.random.default_rng(args.seed)
            lines = [moves_to(game, key) for key in random_roots(game, args.roots, stones, rng)]
            label = f"{spec} {args.roots}x{stones} stones"
        else:
            lines, label = [""], spec
        inners = given or SOLVE_INNER["set" if stones else "game"]
        cases += [(label, spec, lines, inner) for inner in inners]
    return cases


def moves_to(game, key):
    """A move string that reaches the canonical position ``key`` (stones alternately)."""
    pos = game.position(key)
    a = [c for c in range(64) if pos.first >> c & 1]
    b = [c for c in range(64) if pos.second >> c & 1]
    return game.format_moves([c for pair in zip(a, b + [None]) for c in pair if c is not None])


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("games", nargs="*")
    ap.add_argument("--roots", type=int, default=16, help="random roots per phase (default 16)")
    ap.add_argument("--stones", type=int, help="stones at the roots (default: DEFAULT_STONES)")
    ap.add_argument("--depth", type=int, default=3, help="plies below each root (default 3)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--db", help="instead: the ongoing positions this database of the one game holds")
    ap.add_argument("--solve", action="store_true", help="instead: solves with board keys against graph keys")
    ap.add_argument(
        "--inner-nodes",
        type=int,
        nargs="+",
        help="--solve: inner budgets (-1: the default; default -1 and 100, sets -1 and 0)",
    )
    ap.add_argument("--max-seconds", type=float, default=120.0, help="--solve: cap of a solve (default 120)")
    args = ap.parse_args(argv)
    if args.solve:
        print(aligned(solve_rows(solve_cases(args), args.max_seconds), [True] * 5 + [False] * 6))
        return
    rows = [["game", "stones", "board keys", "graph keys", "merge"]]
    rows[0] += ["max bytes", "us/graph key", "us/board key", "us/kernel"]
    args.games = args.games or DEFAULT_GAMES
    if args.db:
        (spec,) = args.games
        game = load_game(spec)
        rows += table_rows(spec, game, stored_positions(game, args.db))
    for spec, root_stones in [
        (spec, stones)
        for spec in ([] if args.db else args.games)
        for stones in ([args.stones] if args.stones else DEFAULT_STONES.get(spec, (12,)))
    ]:
        game = load_game(spec)
        rng = np.random.default_rng(args.seed)
        roots = random_roots(game, args.roots, root_stones, rng)
        rows += table_rows(spec, game, positions_below(game, roots, args.depth))
    print(aligned(rows, [True] + [False] * 8))


if __name__ == "__main__":
    main()
