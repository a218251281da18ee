"""Start-up: wall seconds of whole `pndb` processes, the median of --runs, with a warm numba cache.

Commands: `pndb --version`, `pndb show qango6`, `pndb solve tictactoe` (a fresh database each
run), `pndb solve connect4:4x4` and `pndb solve connect4:6x4`; command lines given after `--`
replace them (each quoted, what follows `pndb`; DB stands for a fresh database directory). One run of each
warms the numba cache first and is not counted. With --base DIR each command also runs with the
pndb package of checkout DIR (e.g. a worktree of an older commit), alternating with this one,
so that one run shows before and after on the same machine load. The processes start in a
temporary directory: `python -m pndb` inside a checkout would import that checkout.
bench/cold_start.py times first solves with an empty cache (the kernels compiled).

    python bench/startup.py
    python bench/startup.py --base /tmp/base --runs 9 -- --version "solve mnk:4,4,4 --db DB"
"""

import argparse
import resource
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
STOPPED = 3  # pndb solve's exit code when a limit stopped it (--max-nodes, --max-seconds)


def run(command, tree, workdir, cache=None):
    """(wall seconds, CPU seconds) of one `python -m pndb COMMAND` (DB: a fresh database), which
    must succeed or stop at a limit it sets; ``cache``: the numba cache directory to use (else
    the tree's usual one)."""
    db = Path(tempfile.mkdtemp(prefix="db-", dir=workdir))
    shutil.rmtree(db)
    args = [sys.executable, "-m", "pndb", *(str(db) if a == "DB" else a for a in shlex.split(command))]
    env = tree_env(tree)
    if cache is not None:
        env["NUMBA_CACHE_DIR"] = str(cache)
    cpu = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(args, capture_output=True, text=True, env=env, cwd=workdir)
    seconds = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode not in (0, STOPPED):
        raise SystemExit(f"pndb {command} failed ({done.returncode}): {done.stderr.strip()[-300:]}")
    shutil.rmtree(db, ignore_errors=True)
    return seconds, after.ru_utime + after.ru_stime - cpu.ru_utime - cpu.ru_stime


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
    columns = [f"{name} s" for name, _ in trees]
    print(f"{'command':42} " + " ".join(f"{c:>10}" for c in columns) + "   runs")
    with tempfile.TemporaryDirectory(prefix="pndb-startup-") as workdir:
        for command in args.commands:
            for _, tree in trees:
                run(command, tree, workdir)  # warms the numba cache
            times = {name: [] for name, _ in trees}
            for _ in range(args.runs):
                for name, tree in trees:
                    times[name].append(run(command, tree, workdir))
            shown = [statistics.median(wall for wall, _ in times[name]) for name, _ in trees]
            figures = " ".join(f"{x:>10.2f}" for x in shown)
            print(f"{command:42} {figures}   {args.runs}", flush=True)


if __name__ == "__main__":
    main()
