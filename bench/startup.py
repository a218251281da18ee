"""Start-up: wall seconds of whole `pndb` processes, the median of --runs, with a warm numba cache.

Commands: `pndb --version`, `pndb show qango6`, `pndb solve tictactoe` (a fresh database each
run), `pndb solve connect4:4x4` and `pndb solve connect4:6x4`; command lines given after `--`
replace them (each quoted, what follows `pndb`; DB stands for a fresh database directory). One run of each
warms the numba cache first and is not counted. With --base DIR each command also runs with the
pndb package of checkout DIR (e.g. a worktree of an older commit), alternating with this one,
so that one run shows before and after on the same machine load. The processes start in a
temporary directory: `python -m pndb` inside a checkout would import that checkout.

    python bench/startup.py
    python bench/startup.py --base /tmp/base --runs 9 -- --version "solve mnk:4,4,4 --db DB"
"""

import argparse
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from inner import tree_env  # noqa: E402  (bench/inner.py; sets NUMBA_CACHE_DIR too)

COMMANDS = [
    "--version",
    "show qango6",
    "solve tictactoe --db DB -q",
    "solve connect4:4x4 --db DB -q",
    "solve connect4:6x4 --db DB -q",
]


def run(command, tree, workdir):
    """Wall seconds of one `python -m pndb COMMAND` (DB: a fresh database), which must succeed."""
    db = Path(tempfile.mkdtemp(prefix="db-", dir=workdir))
    shutil.rmtree(db)
    args = [sys.executable, "-m", "pndb", *(str(db) if a == "DB" else a for a in shlex.split(command))]
    start = time.perf_counter()
    done = subprocess.run(args, capture_output=True, text=True, env=tree_env(tree), cwd=workdir)
    seconds = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"pndb {command} failed ({done.returncode}): {done.stderr.strip()[-300:]}")
    shutil.rmtree(db, ignore_errors=True)
    return seconds


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument(
        "--runs", type=int, default=5, help="processes per command and tree (the median is shown)"
    )
    ap.add_argument("--base", type=Path, help="a checkout to measure too, as 'before'")
    ap.add_argument("commands", nargs="*", help="command lines after `pndb` (after --)")
    args = ap.parse_args(argv)
    args.commands = args.commands or COMMANDS
    trees = [("base", args.base.resolve()), ("this", None)] if args.base else [("this", None)]
    print(f"{'command':34} " + " ".join(f"{name + ' s':>8}" for name, _ in trees) + "   runs")
    with tempfile.TemporaryDirectory(prefix="pndb-startup-") as workdir:
        for command in args.commands:
            for _, tree in trees:
                run(command, tree, workdir)  # warms the numba cache
            times = {name: [] for name, _ in trees}
            for _ in range(args.runs):
                for name, tree in trees:
                    times[name].append(run(command, tree, workdir))
            medians = " ".join(f"{statistics.median(times[name]):>8.2f}" for name, _ in trees)
            print(f"{command:34} {medians}   {args.runs}", flush=True)


if __name__ == "__main__":
    main()
