"""Start-up: wall seconds of whole `pndb` processes, the median of --runs, with a warm numba cache
(or, with --cold, a new empty one for every process: a newcomer's first solves).

Commands: `pndb --version`, `pndb show qango6`, `pndb solve tictactoe` (a fresh database each
run), `pndb solve connect4:4x4` and `pndb solve connect4:6x4`; command lines given after `--`
replace them (each quoted, what follows `pndb`; DB stands for a fresh database directory). One run of each
warms the numba cache first and is not counted. With --base DIR each command also runs with the
pndb package of checkout DIR (e.g. a worktree of an older commit), alternating with this one,
so that one run shows before and after on the same machine load. The processes start in a
temporary directory: `python -m pndb` inside a checkout would import that checkout.

With --cold each process compiles every kernel it needs (no warm-up run); the commands are
first solves of qango6, mnk:7,7,5 and Connect Four (stopped by --max-seconds: it is not solved
in minutes; exit 3 is taken as success), and each shows the processes' CPU seconds beside the
wall's (other work on the machine slows the wall clock more than the CPU's).

    python bench/startup.py
    python bench/startup.py --base /tmp/base --runs 9 -- --version "solve mnk:4,4,4 --db DB"
    python bench/startup.py --cold --runs 1 --base /tmp/base
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
COLD_COMMANDS = [
    "solve qango6 --db DB -q",
    "solve mnk:7,7,5 --db DB -q",
    "solve connect4 --db DB -q --max-seconds 2",
]
STOPPED = 3  # pndb solve's exit code when a limit stopped it


def run(command, tree, workdir, cold=False):
    """(wall seconds, CPU seconds) of one `python -m pndb COMMAND` (DB: a fresh database), which
    must succeed (or, ``cold``, stop at a limit); ``cold``: with a new empty numba cache."""
    db = Path(tempfile.mkdtemp(prefix="db-", dir=workdir))
    shutil.rmtree(db)
    args = [sys.executable, "-m", "pndb", *(str(db) if a == "DB" else a for a in shlex.split(command))]
    env = tree_env(tree)
    if cold:
        env["NUMBA_CACHE_DIR"] = tempfile.mkdtemp(prefix="numba-", dir=workdir)
    cpu = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(args, capture_output=True, text=True, env=env, cwd=workdir)
    seconds = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode not in ((0, STOPPED) if cold else (0,)):
        raise SystemExit(f"pndb {command} failed ({done.returncode}): {done.stderr.strip()[-300:]}")
    shutil.rmtree(db, ignore_errors=True)
    if cold:
        shutil.rmtree(env["NUMBA_CACHE_DIR"], ignore_errors=True)
    return seconds, after.ru_utime + after.ru_stime - cpu.ru_utime - cpu.ru_stime


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument(
        "--runs", type=int, default=5, help="processes per command and tree (the median is shown)"
    )
    ap.add_argument("--base", type=Path, help="a checkout to measure too, as 'before'")
    ap.add_argument("--cold", action="store_true", help="a new empty numba cache for every process")
    ap.add_argument("commands", nargs="*", help="command lines after `pndb` (after --)")
    args = ap.parse_args(argv)
    args.commands = args.commands or (COLD_COMMANDS if args.cold else COMMANDS)
    trees = [("base", args.base.resolve()), ("this", None)] if args.base else [("this", None)]
    columns = [f"{name} {unit}" for name, _ in trees for unit in (("s", "cpu s") if args.cold else ("s",))]
    print(f"{'command':42} " + " ".join(f"{c:>10}" for c in columns) + "   runs")
    with tempfile.TemporaryDirectory(prefix="pndb-startup-") as workdir:
        for command in args.commands:
            if not args.cold:
                for _, tree in trees:
                    run(command, tree, workdir)  # warms the numba cache
            times = {name: [] for name, _ in trees}
            for _ in range(args.runs):
                for name, tree in trees:
                    times[name].append(run(command, tree, workdir, args.cold))
            shown = []
            for name, _ in trees:
                shown.append(statistics.median(wall for wall, _ in times[name]))
                if args.cold:
                    shown.append(statistics.median(cpu for _, cpu in times[name]))
            digits = 1 if args.cold else 2
            figures = " ".join(f"{x:>10.{digits}f}" for x in shown)
            print(f"{command:42} {figures}   {args.runs}", flush=True)


if __name__ == "__main__":
    main()
