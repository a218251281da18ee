"""Where a start job's time goes: the df-pn search, the proof's extraction, the call from Python.

bench/inner.py's start part times whole jobs (InnerSolver.run): for a start solved in a few
thousand nodes, as Qango 6's, a job is more than its search. Here each repetition times, on a
new solver each (its table's pages backed by the OS outside the timing, as there), the three
nested parts of the same job in turn:
  search   inner.frames.solve_one alone (the df-pn nodes the rate counts),
  job      inner.solver.run_job: the search and the extraction of its proof, one numba call,
  run      InnerSolver.run: that call from Python with its arguments and its InnerResult.
Printed: each part's fastest and median time, and the medians of the differences of the same
repetition (extraction = job - search, call = run - job), which share the machine's state of
that moment; the machine's speed swings within seconds, so only figures of one run compare.

    python bench/job_split.py
    python bench/job_split.py --game mnk:4,4,3 --reps 500
"""

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("NUMBA_CACHE_DIR", str(Path(tempfile.gettempdir()) / "pndb-numba-cache"))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--game", default="qango6")
    ap.add_argument("--question", type=int, choices=[0, 1], default=0)
    ap.add_argument("--nodes", type=int, default=100_000, help="node cap of the search")
    ap.add_argument("--reps", type=int, default=300, help="repetitions of the three parts")
    ap.add_argument("--table-mb", type=float, default=256)
    args = ap.parse_args(argv)

    import numpy as np

    from pndb import inner
    from pndb.contracts import EPS
    from pndb.games import load_game
    from pndb.inner.frames import solve_one
    from pndb.inner.solver import run_job

    game = load_game(args.game)
    start = np.zeros(1, np.uint64)
    job = inner.InnerJob(start, start, args.question, args.nodes)

    def fresh():
        solver = inner.InnerSolver(game, args.table_mb)
        solver.table.recs.fill(0)
        return solver

    def search(s):
        return solve_one(
            start[0], start[0], job.question, s.tables, s.rules, s.placement, s.steps, s.table, s.stack,
            job.budget, EPS, s.pair_budget,
        )[2]  # fmt: skip

    def numba_job(s):
        found = run_job(
            job.keys_a, job.keys_b, job.question, s.tables, s.rules, s.placement, s.steps, s.table, s.stack,
            job.budget, EPS, False, False, s.pair_budget, s.pair_budget, int(inner.INF), int(inner.INF),
        )  # fmt: skip
        return int(found[2][0])

    def run(s):
        return int(s.run(job).work[0])

    parts = {"search": search, "job": numba_job, "run": run}
    nodes = {name: part(fresh()) for name, part in parts.items()}  # compile or load the cache
    times = {name: [] for name in parts}
    for _ in range(args.reps):
        for name, part in parts.items():
            solver = fresh()
            t0 = time.perf_counter()
            part(solver)
            times[name].append((time.perf_counter() - t0) * 1e6)
    print(f"{args.game} start, q{args.question}: {args.reps} repetitions, a new solver each; nodes "
          f"(work with extraction's searches): search {nodes['search']}, job {nodes['job']}")  # fmt: skip
    for name, spent in times.items():
        rate = nodes["search"] / statistics.median(spent) * 1e6
        print(f"  {name:7} fastest {min(spent):7.0f} us  median {statistics.median(spent):7.0f} us  "
              f"search nodes per second at the median {rate:10.0f}")  # fmt: skip
    job_median = statistics.median(times["run"])
    for name, (outer, inner_part) in {"extraction": ("job", "search"), "call": ("run", "job")}.items():
        part = statistics.median(o - i for o, i in zip(times[outer], times[inner_part]))
        share = part / job_median
        print(f"  {name:10} median of the differences {part:6.0f} us, {share:5.1%} of run's median")


if __name__ == "__main__":
    sys.exit(main())
