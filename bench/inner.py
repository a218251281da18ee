"""Benchmark the inner df-pn solver, alone and inside `pndb solve`.

Part 1, one subprocess per game: inner nodes per second, solving each game's start position with
the inner solver alone (up to a node cap), after a warm-up solve. (This process stays small and
never imports numba: a child's peak RSS counts what it shared with its parent when forked.)
Part 2, one `pndb solve` subprocess per game and setting (bench/solve.py's runner): wall time and
peak RSS of the outer search alone (--inner-nodes 0) against outer + inner at each budget.

    python bench/inner.py                                 # the default games and budgets
    python bench/inner.py --games qango6 --budgets 0 1000 10000 --max-seconds 120
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
os.environ.setdefault("NUMBA_CACHE_DIR", str(Path(tempfile.gettempdir()) / "pndb-numba-cache"))

from solve import run_one  # noqa: E402  (bench/solve.py)

DEFAULT_GAMES = ["qango6", "qango6:castle", "connect4:6x4", "connect4:5x5"]
DEFAULT_BUDGETS = [0, 1000, 10000, 100000]


def inner_rate(spec, max_nodes):
    """(nodes, seconds, result) of the inner solver alone on the start position, q0 then q1."""
    import numpy as np

    from pndb.games import load_game
    from pndb.inner import InnerJob, InnerSolver

    game = load_game(spec)
    start = np.zeros(1, np.uint64)
    InnerSolver(game, 100, 16).run(InnerJob(start, start, 0, 100))  # compile or load outside the timing
    solver = InnerSolver(game, max_nodes, 512)
    t0 = time.perf_counter()
    answers = []
    for q in (0, 1):
        result = solver.run(InnerJob(start, start, q, max_nodes))
        answers.append("proven" if result.pn[0] == 0 else "disproven" if result.dn[0] == 0 else "open")
        if answers[-1] != "disproven":
            break
    return solver.nodes, time.perf_counter() - t0, "/".join(answers)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--games", nargs="+", default=DEFAULT_GAMES)
    ap.add_argument("--budgets", nargs="+", type=int, default=DEFAULT_BUDGETS, help="--inner-nodes values")
    ap.add_argument("--max-seconds", type=float, default=300.0, help="cap per solve")
    ap.add_argument("--inner-cap", type=int, default=5_000_000, help="node cap of part 1")
    ap.add_argument("--rate-of", help=argparse.SUPPRESS)  # part 1 for one game, in a subprocess
    args = ap.parse_args(argv)
    if args.rate_of:
        print(json.dumps(inner_rate(args.rate_of, args.inner_cap)))
        return

    print("inner solver alone on the start position (q0, then q1 if q0 is disproven)")
    print(f"{'game':16} {'nodes':>10} {'seconds':>8} {'nodes/s':>10}  answer")
    for spec in args.games:
        cmd = [sys.executable, __file__, "--rate-of", spec, "--inner-cap", str(args.inner_cap)]
        nodes, secs, answer = json.loads(subprocess.run(cmd, capture_output=True, text=True, check=True).stdout)
        print(f"{spec:16} {nodes:>10} {secs:>8.2f} {nodes / secs:>10.0f}  {answer}", flush=True)

    print(f"\npndb solve, outer alone (budget 0) against outer + inner; cap {args.max_seconds:g}s")
    print(f"{'game':16} {'budget':>7} {'result':8} {'value':16} {'wall s':>7} {'RSS MB':>7} {'nodes':>8}")
    base = Path(tempfile.mkdtemp(prefix="pndb-bench-"))
    try:
        for spec in args.games:
            for budget in args.budgets:
                db = base / f"{spec.replace(':', '_')}-{budget}"
                row = run_one(spec, db, args.max_seconds, ["--inner-nodes", str(budget)])
                shutil.rmtree(db, ignore_errors=True)
                print(
                    f"{spec:16} {budget:>7} {row['how']:8} {row.get('value', row.get('error', '')):16} "
                    f"{row['wall_s']:>7.1f} {row['peak_rss_mb']:>7.0f} {row.get('nodes', 0):>8}",
                    flush=True,
                )
    finally:
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
