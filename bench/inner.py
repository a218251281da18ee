"""Benchmark the inner df-pn solver, alone and inside `pndb solve`, optionally before/after.

Part 1, one subprocess per game: inner nodes per second (CPU time of the process, and wall time,
which a shared machine stretches), after a warm-up search outside the timing:
  start    the start position, q0 then q1 if q0 is disproven (--only-q0: q0), up to --start-nodes nodes (a
           start solved in less than half a second is solved again, with a new table whose
           memory the OS has backed before the timing, until the searches add up to that: the
           answer says how many times);
  midgame  --positions random mid-game positions (random playouts, ongoing and without an
           immediate win for the player to move), one job per question with --budget nodes each,
           one table for all: the shape of the outer search's jobs (searched again from a new
           table, as the start, until the searches add up to half a second).
With --knowledge the inner searches ask the game's knowledge (pairings, Allis' rules) as
`pndb solve`'s do; without it they measure the df-pn alone.
Part 2 (--solves GAME ...): one `pndb solve` subprocess per game (bench/solve.py's runner) with
the default settings: wall time, peak RSS, value, stored nodes and outer expansions.

With --base DIR every part runs twice, once with the pndb package of the checkout DIR (e.g. a
temporary worktree of an older commit) and once with this one, so that one run shows before and
after on the same machine load. On a shared machine whose speed swings within minutes, --rounds N
runs part 1 N times per game, base and this in turn, and adds the median rate of each, the
median of the rounds' this/base ratios and the ratio of the two trees' fastest runs. "best
run/s" is the fastest single run of a part (a start solved again and again has many; the slower
runs measure the machine's other load).
(This process stays small and never imports numba: a child's peak RSS counts what it shared
with its parent when forked.)

    python bench/inner.py                                         # part 1, default games
    python bench/inner.py --base /tmp/base --solves qango6:castle connect4:6x4 --max-seconds 300
    python bench/inner.py --base /tmp/base --rounds 5 --games qango6       # medians of 5, in turn
"""

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
os.environ.setdefault("NUMBA_CACHE_DIR", str(Path(tempfile.gettempdir()) / "pndb-numba-cache"))

from solve import run_one  # noqa: E402  (bench/solve.py)

DEFAULT_GAMES = ["qango6", "connect4:7x6", "mnk:5,5,4"]
START_SECONDS = 0.5  # each part is searched again (a new table each time) until this much CPU time
MIDGAME = {"qango6": (8, 16), "connect4:7x6": (10, 20), "mnk:5,5,4": (6, 12)}  # stones; others: cap/3..cap/2


def midgame_positions(game, count, seed):
    """``count`` distinct canonical ongoing positions without an immediate win for the mover."""
    import numpy as np

    try:
        from pndb.games.placement import kernels as K
    except ImportError:  # a checkout from before the families were packages
        from pndb.games import kernels as K

    t = game.tables
    lo, hi = MIDGAME.get(game.spec, (game.cap // 3, game.cap // 2))
    rng = np.random.default_rng(seed)
    found = {}
    while len(found) < count:
        a = b = np.uint64(0)
        for _ in range(int(rng.integers(lo, hi + 1))):
            legal = int(K.legal_mask(a, b, t))
            cells = [c for c in range(64) if legal >> c & 1]
            a, b = (np.uint64(x) for x in K.play(a, b, cells[int(rng.integers(len(cells)))]))
            if K.status(a, b, t) != K.ONGOING:
                break
        if K.position_status(a, b, t) == K.ONGOING:
            ka, kb, _ = K.canonical(a, b, t.sym_bytes)
            found[(int(ka), int(kb))] = None
    keys = list(found)
    return np.array([k[0] for k in keys], np.uint64), np.array([k[1] for k in keys], np.uint64)


def new_solver(game, budget, table_mb, **options):
    """An InnerSolver of whichever checkout is imported: one from before the evaluator contract
    (pndb.contracts) took the outer search's budget too."""
    import inspect

    from pndb import inner

    if "node_budget" in inspect.signature(inner.InnerSolver).parameters:
        return inner.InnerSolver(game, budget, table_mb, **options)
    return inner.InnerSolver(game, table_mb, **options)


def searcher(game, budget, table_mb, knowledge=False):
    """search(keys_a, keys_b, q, budget) -> (pn, dn) with whichever inner API the checkout has."""
    from pndb import inner

    # a checkout from before knowledge took no such argument (and had none to ask)
    extra = dict(knowledge=True) if knowledge else {}
    solver = new_solver(game, budget, table_mb, **extra)
    if hasattr(inner, "InnerJob"):

        def search(ka, kb, q, budget):
            result = solver.run(inner.InnerJob(ka, kb, q, budget))
            return result.pn, result.dn

    else:  # the API before InnerJob: solve() with the solver's budget

        def search(ka, kb, q, budget):
            solver.budget = budget
            pn, dn, _ = solver.solve(ka, kb, q)
            return pn, dn

    return solver, search


def repeated(game, args, budget, questions):
    """Time ``questions(search)`` (its answer a string) with a new solver and table, again until
    the runs add up to START_SECONDS of CPU time: a search solved in milliseconds is searched
    again, from scratch. A result row's nodes, cpu, wall, answer (the last, and the runs) and
    best: the fastest run's nodes per CPU second (as timeit's minimum: on a shared machine the
    slower runs measure the neighbours too)."""
    nodes = runs = 0
    cpu = wall = 0.0
    best = 0.0
    while cpu < START_SECONDS:
        solver, search = searcher(game, budget, args.table_mb, args.knowledge)
        # a new table's pages are backed by the OS here, outside the timing, as a solve's one table
        # is once (backing 2 MB of fresh pages took a tenth of a qango6 start search)
        # (a checkout from before the one-array table filled its arrays when it made them)
        if hasattr(solver.table, "recs"):
            solver.table.recs.fill(0)
        c0, w0 = time.process_time(), time.perf_counter()
        answer = questions(search)
        spent = time.process_time() - c0
        cpu += spent
        wall += time.perf_counter() - w0
        nodes += solver.nodes
        best = max(best, solver.nodes / max(spent, 1e-9))
        runs += 1
    answer += f" (x{runs})" if runs > 1 else ""
    return dict(nodes=nodes, cpu=cpu, wall=wall, best=best, answer=answer)


def measure(spec, args):
    """Part 1 for one game, in this process: a list of result rows."""
    import numpy as np

    from pndb.games import load_game

    game = load_game(spec)
    start = np.zeros(1, np.uint64)
    # outside the timing: compile or load the cache, and have the OS find the table's memory once
    # (a solve pays that once, not per search)
    _, warm = searcher(game, 100, args.table_mb)
    warm(start, start, 0, 100_000)
    rows = []

    def start_questions(search):
        answers = []
        for q in (0, 1):
            pn, dn = search(start, start, q, args.start_nodes)
            answers.append("proven" if pn[0] == 0 else "disproven" if dn[0] == 0 else "open")
            if answers[-1] != "disproven" or args.only_q0:
                break
        return "/".join(answers)

    rows.append(dict(part="start", **repeated(game, args, args.start_nodes, start_questions)))

    ka, kb = midgame_positions(game, args.positions, args.seed)

    def midgame_questions(search):
        solved = 0
        for q in (0, 1):
            pn, dn = search(ka, kb, q, args.budget)
            solved += int(np.count_nonzero((pn == 0) | (dn == 0)))
        return f"{solved}/{2 * len(ka)} solved"

    rows.append(dict(part="midgame", **repeated(game, args, args.budget, midgame_questions)))
    return rows


def tree_env(tree):
    """Environment for a subprocess using the pndb package of checkout ``tree`` (None: this one)."""
    env = dict(os.environ)
    if tree:
        env["PYTHONPATH"] = str(tree)
        env["NUMBA_CACHE_DIR"] = os.environ["NUMBA_CACHE_DIR"] + "-" + Path(tree).name
    return env


def part_one(args, trees, argv):
    """The inner solver alone, one subprocess per game and tree: a table of rates."""
    print(f"inner solver alone: start position up to {args.start_nodes} nodes (q0, then q1 if q0 is "
          f"disproven); {args.positions} mid-game positions x 2 questions x {args.budget} nodes; "
          f"{args.table_mb:g} MB table; knowledge {'on' if args.knowledge else 'off'}; "
          f"{os.cpu_count()} CPUs")  # fmt: skip
    head = f"{'game':14} {'tree':5} {'part':8} {'nodes':>10} {'cpu s':>7} {'wall s':>7} {'nodes/cpu s':>11}"
    print(head + f" {'nodes/wall s':>12} {'best run/s':>11}  answer")
    passed = [arg for arg in (argv if argv is not None else sys.argv[1:])]
    for spec in args.games:
        rates = {}  # (tree, part) -> nodes per CPU second of each round
        bests = {}  # ... and the fastest run's of each round
        for _ in range(args.rounds):
            for name, tree in trees:
                cmd = [sys.executable, __file__, *passed, "--measure", spec]
                env = tree_env(tree)
                out = subprocess.run(cmd, capture_output=True, text=True, check=True, env=env).stdout
                for r in json.loads(out):
                    rates.setdefault((name, r["part"]), []).append(r["nodes"] / r["cpu"])
                    bests.setdefault((name, r["part"]), []).append(r["best"])
                    print(f"{spec:14} {name:5} {r['part']:8} {r['nodes']:>10} {r['cpu']:>7.2f} "
                          f"{r['wall']:>7.2f} {r['nodes'] / r['cpu']:>11.0f} {r['nodes'] / r['wall']:>12.0f} "
                          f"{r['best']:>11.0f}  {r['answer']}", flush=True)  # fmt: skip
        if args.rounds > 1:
            for (name, part), values in rates.items():
                print(f"{spec:14} {name:5} {part:8} {'median of ' + str(len(values)):>26} "
                      f"{statistics.median(values):>11.0f} {'best run of all':>12} "
                      f"{max(bests[name, part]):>11.0f}")  # fmt: skip
            # each round's two runs are minutes apart at most: their ratio is steadier than
            # either median when the machine's speed changes between rounds; the ratio of the
            # two trees' fastest runs (of hundreds, where a search takes milliseconds) is the
            # steadiest where the machine's neighbours slow some runs and not others
            for part in ("start", "midgame"):
                if ("base", part) in rates:
                    ratios = [t / b for b, t in zip(rates[("base", part)], rates[("this", part)])]
                    best = max(bests[("this", part)]) / max(bests[("base", part)])
                    print(f"{spec:14} this/base {part:8} {'median ratio of ' + str(len(ratios)):>22} "
                          f"{statistics.median(ratios):>11.2f} {'best runs':>12} {best:>11.2f}")  # fmt: skip


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--games", nargs="*", default=DEFAULT_GAMES, help="games for part 1 (none: part 2 only)")
    ap.add_argument("--start-nodes", type=int, default=2_000_000, help="node cap on the start position")
    ap.add_argument("--positions", type=int, default=200, help="random mid-game positions per game")
    ap.add_argument("--budget", type=int, default=10_000, help="nodes per mid-game position and question")
    ap.add_argument("--table-mb", type=float, default=256)
    ap.add_argument(
        "--only-q0", action="store_true",
        help="the start part asks q0 alone (with a small --table-mb, a long search that fills the table)",
    )  # fmt: skip
    ap.add_argument("--knowledge", action="store_true", help="part 1 with knowledge, as in `pndb solve`")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument(
        "--rounds", type=int, default=1,
        help="part 1 this many times per game, the trees taking turns, and each rate's median",
    )  # fmt: skip
    ap.add_argument("--base", type=Path, help="a checkout to measure too, as 'before'")
    ap.add_argument("--solves", nargs="*", default=[], help="games for part 2 (pndb solve)")
    ap.add_argument("--max-seconds", type=float, default=300.0, help="cap per solve of part 2")
    ap.add_argument("--measure", help=argparse.SUPPRESS)  # part 1 for one game, in a subprocess
    args = ap.parse_args(argv)
    if args.measure:
        print(json.dumps(measure(args.measure, args)))
        return
    trees = [("base", args.base.resolve()), ("this", None)] if args.base else [("this", None)]
    if args.games:
        part_one(args, trees, argv)
    if not args.solves:
        return
    print(f"\npndb solve with default settings; cap {args.max_seconds:g}s")
    head = f"{'game':16} {'tree':5} {'result':8} {'value':16} {'wall s':>7} {'cpu s':>7} {'RSS MB':>7}"
    print(head + f" {'nodes':>8} {'expansions':>10}")
    base = Path(tempfile.mkdtemp(prefix="pndb-bench-"))
    try:
        for spec in args.solves:
            for name, tree in trees:
                db = base / f"{spec.replace(':', '_')}-{name}"
                saved = dict(os.environ)
                os.environ.update(tree_env(tree))  # run_one's subprocess inherits it
                before = resource.getrusage(resource.RUSAGE_CHILDREN)
                try:
                    row = run_one(spec, db, args.max_seconds, [])
                finally:
                    after = resource.getrusage(resource.RUSAGE_CHILDREN)
                    os.environ.clear()
                    os.environ.update(saved)
                shutil.rmtree(db, ignore_errors=True)
                # with the `pndb status` run_one adds
                cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
                print(
                    f"{spec:16} {name:5} {row['how']:8} {row.get('value', row.get('error', '')):16} "
                    f"{row['wall_s']:>7.1f} {cpu:>7.1f} {row['peak_rss_mb']:>7.0f} {row.get('nodes', 0):>8} "
                    f"{row.get('expansions', 0):>10}",
                    flush=True,
                )
    finally:
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
