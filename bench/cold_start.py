"""A newcomer's first solves: CPU and wall seconds of whole `pndb solve GAME` processes, first
with a new empty numba cache (cold: the process compiles every kernel its game needs), then
again with the cache that run filled (warm: the solve alone), each with a fresh database.

Games: qango6, mnk:7,7,5 and connect4 (7x6), solved to the end; a --games entry may carry
options of `pndb solve` (quoted, "connect4 --max-nodes 20": a stop at the limit counts as
done). With --base DIR each solve also runs with the pndb package of checkout DIR (e.g. a
worktree of an older commit), the two taking turns, and a third line gives this/base. CPU
seconds (user + system of the process) are the figure to compare: on a shared machine other
work stretches the wall clock far more.
With --runs N each figure is the median of N rounds.

    git worktree add /tmp/cold_base 3854f15    # the kernels before the per-family compile
    python bench/cold_start.py --base /tmp/cold_base
    python bench/cold_start.py --games qango6 --runs 3
    python bench/cold_start.py --base /tmp/cold_base --games "connect4 --max-nodes 20"
"""

import argparse
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from startup import run  # noqa: E402  (bench/startup.py)

GAMES = ["qango6", "mnk:7,7,5", "connect4"]
COLUMNS = ("cold cpu s", "cold wall s", "warm cpu s", "warm wall s")


def first_solves(spec, tree, workdir):
    """(cold CPU s, cold wall s, warm CPU s, warm wall s) of `pndb solve spec` with checkout
    ``tree`` (None: this one): first with a new empty numba cache, then with what it cached."""
    cache = Path(tempfile.mkdtemp(prefix="numba-", dir=workdir))
    command = f"solve {spec} --db DB -q"
    try:
        cold_wall, cold_cpu = run(command, tree, workdir, cache)
        warm_wall, warm_cpu = run(command, tree, workdir, cache)
    finally:
        shutil.rmtree(cache, ignore_errors=True)
    return cold_cpu, cold_wall, warm_cpu, warm_wall


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--base", type=Path, help="a checkout to measure too, as 'before'")
    ap.add_argument("--games", nargs="+", default=GAMES, help=f"game specs (default: {' '.join(GAMES)})")
    ap.add_argument("--runs", type=int, default=1, help="rounds (each figure is their median)")
    args = ap.parse_args(argv)
    trees = [("base", args.base.resolve()), ("this", None)] if args.base else [("this", None)]
    head = f"{'game':12} {'tree':9} " + " ".join(f"{c:>11}" for c in COLUMNS)
    print(f"{head}   runs {args.runs}", flush=True)
    with tempfile.TemporaryDirectory(prefix="pndb-cold-") as workdir:
        for spec in args.games:
            rounds = {name: [] for name, _ in trees}
            for _ in range(args.runs):
                for name, tree in trees:
                    rounds[name].append(first_solves(spec, tree, workdir))
            medians = {name: [statistics.median(r[i] for r in rounds[name]) for i in range(len(COLUMNS))]
                       for name in rounds}  # fmt: skip
            for name, figures in medians.items():
                print(f"{spec:12} {name:9} " + " ".join(f"{x:>11.1f}" for x in figures), flush=True)
            if args.base:
                ratios = [t / b for t, b in zip(medians["this"], medians["base"])]
                print(f"{spec:12} {'this/base':9} " + " ".join(f"{x:>11.2f}" for x in ratios), flush=True)


if __name__ == "__main__":
    main()
