"""A solve killed again and again: `pndb solve GAME --db DB` is started, killed with SIGKILL after
a random number of seconds, and started again on the same database, until it ends by itself;
then `pndb check` and `pndb status --json` report on the database. Each run prints the
expansions and seconds the database holds when it ends: they only grow, and the value at the
end is the value of a solve that was never killed.

    python bench/resume.py connect4 --db /tmp/c4.lmdb --kill-after 60 300 -- --memory 4096
    python bench/resume.py qango6:castle --kill-after 0.5 2
"""

import argparse
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from solve import pndb_command  # noqa: E402


def status(db):
    out = subprocess.run(pndb_command() + ["status", str(db), "--json"], capture_output=True, text=True)
    return json.loads(out.stdout) if out.returncode == 0 else {}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("game")
    ap.add_argument("--db", help="database directory (default: a temporary one, removed)")
    ap.add_argument("--kill-after", nargs=2, type=float, default=(5.0, 30.0), metavar=("LO", "HI"),
                    help="kill each run after a uniform random LO..HI seconds (default 5 30)")  # fmt: skip
    ap.add_argument("--seed", type=int, default=1)
    argv = sys.argv[1:]
    split = argv.index("--") if "--" in argv else len(argv)
    args = ap.parse_args(argv[:split])
    extra = argv[split + 1 :]  # more `pndb solve` options, after --
    os.environ.setdefault("NUMBA_CACHE_DIR", str(Path(tempfile.gettempdir()) / "pndb-numba-cache"))
    rng = random.Random(args.seed)
    tmp = None if args.db else tempfile.TemporaryDirectory(prefix="pndb-resume-")
    db = Path(args.db or Path(tmp.name) / "db.lmdb")
    cmd = pndb_command() + ["solve", args.game, "--db", str(db), "--quiet", *extra]
    start = time.monotonic()
    runs = kills = 0
    while True:
        runs += 1
        wait = rng.uniform(*args.kill_after)
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            out, err = proc.communicate(timeout=wait)
        except subprocess.TimeoutExpired:
            proc.send_signal(signal.SIGKILL)
            proc.communicate()
            kills += 1
            st = status(db)
            held = f"{st.get('expansions', 0)} expansions, {st.get('seconds', 0):.1f} s"
            print(f"run {runs}: killed after {wait:.1f} s; the database holds {held}", flush=True)
            continue
        if proc.returncode != 0:
            sys.exit(f"run {runs} failed ({proc.returncode}): {err.strip()[-300:]}")
        print(f"run {runs}: ended by itself: {out.strip().splitlines()[0]}", flush=True)
        break
    check = subprocess.run(pndb_command() + ["check", str(db)], capture_output=True, text=True)
    st = status(db)
    print(f"{runs} runs, {kills} killed, {time.monotonic() - start:.1f} s wall; check: "
          f"{(check.stdout or check.stderr).strip().splitlines()[-1]}")  # fmt: skip
    print(json.dumps(st))
    if tmp:
        tmp.cleanup()


if __name__ == "__main__":
    main()
