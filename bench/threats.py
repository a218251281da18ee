"""Threat sequences in the inner search, off and on, in one run (interleaved, one process per
part so that a shared machine slows every depth alike).

Part 1 (inner): per game, the start position (q0, then q1 if q0 is disproven, up to
--start-nodes) and --positions random mid-game positions (bench/inner.py's) x 2 questions with
--budget nodes each, for every depth of --depths (0: off): nodes, wall seconds, solved.
Part 2 (--solves): `pndb solve GAME` with PNDB_THREAT_DEPTH set to each depth, on a fresh
database: wall seconds, value, expansions, inner nodes; --verify exports and checks each book.

    python bench/threats.py --depths 0 3 --games qango6 mnk:5,5,4
    python bench/threats.py --depths 0 3 --games --solves qango6:castle mnk:5,5,4 --verify
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

from inner import midgame_positions  # noqa: E402  (bench/inner.py)
from knowledge import verified  # noqa: E402  (bench/knowledge.py)
from solve import run_one  # noqa: E402  (bench/solve.py)

GAMES = ["mnk:5,5,4", "qango6", "qango7plus", "mnk:7,7,5"]


def measure(spec, depth, args):
    """Part 1 for one game and depth, in this process: a list of rows."""
    import numpy as np

    from pndb import inner
    from pndb.games import load_game

    game = load_game(spec)
    start = np.zeros(1, np.uint64)
    warm = inner.InnerSolver(game, 16, threat_depth=depth)
    warm.run(inner.InnerJob(start, start, 0, 10_000))
    rows = []
    solver = inner.InnerSolver(game, args.table_mb, args.knowledge, threat_depth=depth)
    w0 = time.perf_counter()
    answers = []
    for q in (0, 1):
        r = solver.run(inner.InnerJob(start, start, q, args.start_nodes))
        answers.append("proven" if r.pn[0] == 0 else "disproven" if r.dn[0] == 0 else "open")
        if answers[-1] != "disproven":
            break
    wall = time.perf_counter() - w0
    rows.append(dict(part="start", nodes=solver.nodes, wall=wall, answer="/".join(answers)))
    ka, kb = midgame_positions(game, args.positions, args.seed)
    solver = inner.InnerSolver(game, args.table_mb, args.knowledge, threat_depth=depth)
    w0 = time.perf_counter()
    solved = 0
    for q in (0, 1):
        r = solver.run(inner.InnerJob(ka, kb, q, args.budget))
        solved += int(np.count_nonzero((r.pn == 0) | (r.dn == 0)))
    rows.append(dict(part="midgame", nodes=solver.nodes, wall=time.perf_counter() - w0,
                     answer=f"{solved}/{2 * len(ka)} solved"))  # fmt: skip
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--games", nargs="*", default=GAMES, help="games for part 1")
    ap.add_argument("--depths", nargs="+", type=int, default=[0, 3], help="threat depths to compare (0: off)")
    ap.add_argument("--start-nodes", type=int, default=2_000_000, help="node cap on the start position")
    ap.add_argument("--positions", type=int, default=200, help="random mid-game positions per game")
    ap.add_argument("--budget", type=int, default=10_000, help="nodes per mid-game position and question")
    ap.add_argument("--table-mb", type=float, default=256, help="inner table size")
    ap.add_argument("--knowledge", action="store_true", help="part 1 with knowledge, as in `pndb solve`")
    ap.add_argument("--seed", type=int, default=1, help="seed of the mid-game positions")
    ap.add_argument("--solves", nargs="*", default=[], help="games for part 2 (pndb solve)")
    ap.add_argument("--max-seconds", type=float, default=300.0, help="cap per solve of part 2")
    ap.add_argument("--verify", action="store_true", help="export and verify the book of each solve")
    ap.add_argument("--measure", nargs=2, help=argparse.SUPPRESS)  # part 1 for one game and depth
    args = ap.parse_args()
    if args.measure:
        print(json.dumps(measure(args.measure[0], int(args.measure[1]), args)))
        return
    print(f"{'game':22} {'depth':>5} {'part':8} {'nodes':>10} {'wall s':>7}  answer")
    for spec in args.games:
        for depth in args.depths:
            cmd = [sys.executable, __file__, *sys.argv[1:], "--measure", spec, str(depth)]
            out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
            for r in json.loads(out):
                print(f"{spec:22} {depth:>5} {r['part']:8} {r['nodes']:>10} {r['wall']:>7.2f}  {r['answer']}",
                      flush=True)  # fmt: skip
    if not args.solves:
        return
    print(f"\n{'game':22} {'depth':>5} {'result':7} {'value':16} {'wall s':>7} {'expansions':>10} "
          f"{'inner nodes':>11}  verifier")  # fmt: skip
    base = Path(tempfile.mkdtemp(prefix="pndb-threats-"))
    saved = os.environ.get("PNDB_THREAT_DEPTH")
    try:
        for spec in args.solves:
            for depth in args.depths:
                os.environ["PNDB_THREAT_DEPTH"] = str(depth)
                db = base / f"{spec.replace(':', '_').replace(',', '-')}-{depth}"
                row = run_one(spec, db, args.max_seconds, [])
                solved = args.verify and row.get("exit") == 0
                verdict = verified(db, db.with_suffix(".pnbook")) if solved else ""
                print(f"{spec:22} {depth:>5} {row['how']:7} {row.get('value', row.get('error', ''))[:16]:16} "
                      f"{row['wall_s']:7.1f} {row.get('expansions', 0):>10} {row.get('inner_nodes', 0):>11}  "
                      f"{verdict[:80]}", flush=True)  # fmt: skip
                shutil.rmtree(db, ignore_errors=True)
    finally:
        if saved is None:
            os.environ.pop("PNDB_THREAT_DEPTH", None)
        else:
            os.environ["PNDB_THREAT_DEPTH"] = saved
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
