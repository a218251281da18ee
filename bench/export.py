"""Export against solve: CPU seconds of `pndb export` of a solved database beside the CPU
seconds of the `pndb solve` that made it, with a warm numba cache, per game.

Each game is solved twice into fresh databases (the first warms the numba cache and is not
counted), then the second database is exported --runs times by this checkout (and, with --base
DIR, by the pndb package of checkout DIR too, alternating, on the same database): the median
CPU seconds (user + system) of each whole process is shown. The books of the two checkouts must
hold the same bytes once decompressed ("same book"; the compressed files differ where the
compression level does); with --verify each is checked by tools/verify.py. The processes run in a
temporary directory: `python -m pndb` inside a checkout would import that checkout.

    python bench/export.py
    python bench/export.py --base /tmp/base --runs 3 --verify qango6:tournament
"""

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import zstandard

GAMES = ["qango6:tournament", "qango6", "mnk:7,7,5", "connect4:6x5"]
HERE = Path(__file__).resolve().parent.parent


def run(args, tree, workdir):
    """CPU seconds of one `python -m pndb ARGS` with the pndb package of ``tree``; it must succeed."""
    env = dict(os.environ, PYTHONPATH=str(tree))
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run(
        [sys.executable, "-m", "pndb", *map(str, args)], capture_output=True, text=True, env=env, cwd=workdir
    )
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"pndb {' '.join(map(str, args))} failed ({done.returncode}): {done.stderr[-300:]}")
    return after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime


def unpacked(book):
    """The decompressed content of a book file."""
    with open(book, "rb") as f:
        return zstandard.ZstdDecompressor().stream_reader(f).read()


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("games", nargs="*", default=GAMES, help="game specs")
    ap.add_argument("--runs", type=int, default=1, help="exports per checkout (the median is shown)")
    ap.add_argument("--base", type=Path, help="a checkout to measure too, as 'before'")
    ap.add_argument("--verify", action="store_true", help="check every book with tools/verify.py")
    args = ap.parse_args(argv)
    trees = [("base", args.base.resolve()), ("this", HERE)] if args.base else [("this", HERE)]
    heads = "".join(f" {name + ' export':>12}" for name, _ in trees)
    print(f"{'game':20} {'solve cpu s':>11}{heads}  (cpu s){'  same book' if args.base else ''}")
    with tempfile.TemporaryDirectory(prefix="pndb-export-") as workdir:
        work = Path(workdir)
        for spec in args.games:
            run(["solve", spec, "--db", work / "warm", "-q"], HERE, work)
            shutil.rmtree(work / "warm")
            db = work / "db"
            solve = run(["solve", spec, "--db", db, "-q"], HERE, work)
            times = {name: [] for name, _ in trees}
            for _ in range(args.runs):
                for name, tree in trees:
                    times[name].append(run(["export", db, "-o", work / f"{name}.pnbook"], tree, work))
            books = [unpacked(work / f"{name}.pnbook") for name, _ in trees]
            same = f"  {'yes' if books[0] == books[-1] else 'NO'}" if args.base else ""
            figures = "".join(f" {statistics.median(times[name]):>12.2f}" for name, _ in trees)
            print(f"{spec:20} {solve:>11.2f}{figures}{same}", flush=True)
            if args.verify:
                for name, _ in trees:
                    subprocess.run(
                        [sys.executable, HERE / "tools" / "verify.py", "--quiet", work / f"{name}.pnbook"],
                        check=True, cwd=work,
                    )  # fmt: skip
            shutil.rmtree(db)


if __name__ == "__main__":
    main()
