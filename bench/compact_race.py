"""A hostile run: `pndb compact` racing readers and a writer on one database, in a loop.

For --seconds (default 180), at once and each in its own loop of real processes:
- a writer: `pndb solve GAME --max-seconds 2` after a pause of 0-2 s (resuming; refused while a
  compact writes),
- `pndb status --json` (every answer must be well-formed and name the same game),
- a holder: a process that opens the database, holds a read transaction for 0-1.5 s, closes,
- `pndb compact` (finishes, or refuses in one line when a reader stays or a solve writes).
Then `pndb check` and the value; the solve is run to the end and its value compared with the
game's known value. Prints the counts of each outcome; exit 1 when anything went wrong (a
status that failed, a compact or solve error that is not a refusal, an inconsistent check, a
wrong value, a compact.tmp left).

    python bench/compact_race.py [--game mnk:4,4,4 --value draw --seconds 180]
"""

import argparse
import collections
import json
import random
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
HOLD = (
    "import sys, time, random\nsys.path.insert(0, sys.argv[2])\nfrom pndb.store import open_existing\n"
    "store, *_ = open_existing(sys.argv[1])\nview = store.view()\nview.counts()\n"
    "time.sleep(random.uniform(0, 1.5))\nview.close()\nstore.close()"
)


def pndb(*args):
    return subprocess.run([sys.executable, "-m", "pndb", *map(str, args)], cwd=ROOT, capture_output=True,
                          text=True)  # fmt: skip


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--game", default="mnk:4,4,4")
    ap.add_argument("--value", default="draw", help="the game's known value")
    ap.add_argument("--seconds", type=float, default=180)
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="pndb-race-"))
    db = work / "db"
    counts = collections.Counter()
    problems = []
    stop = threading.Event()

    def loop(name, step):
        while not stop.is_set():
            outcome = step()
            counts[f"{name}: {outcome}"] += 1

    def solve():
        time.sleep(random.uniform(0, 2))  # a pause between runs, as a user resuming would leave
        p = pndb("solve", args.game, "--db", db, "--max-seconds", "2", "--inner-nodes", "0", "--quiet")
        if p.returncode in (0, 3):
            return "solved" if p.returncode == 0 else "stopped by its limit"
        if p.returncode == 2 and "is writing" in p.stderr:
            return "refused (a compact writes)"
        problems.append(f"solve exit {p.returncode}: {p.stderr.strip()[-300:]}")
        return "FAILED"

    def status():
        if not (db / "data.mdb").exists():
            time.sleep(0.1)
            return "no database yet"
        p = pndb("status", "--json", db)
        if p.returncode == 0 and json.loads(p.stdout)["game"]:
            return "read"
        problems.append(f"status exit {p.returncode}: {p.stderr.strip()[-300:]}")
        return "FAILED"

    def holder():
        if not (db / "data.mdb").exists():
            time.sleep(0.1)
            return "no database yet"
        p = subprocess.run([sys.executable, "-c", HOLD, str(db), str(ROOT)], capture_output=True, text=True)
        if p.returncode == 0:
            return "held a read transaction"
        problems.append(f"holder exit {p.returncode}: {p.stderr.strip()[-300:]}")
        return "FAILED"

    def compact():
        time.sleep(random.uniform(0, 1))
        if not (db / "data.mdb").exists():
            return "no database yet"
        p = pndb("compact", db)
        if p.returncode == 0:
            return "compacted"
        if p.returncode == 2 and ("is writing" in p.stderr or "not shrunk" in p.stderr):
            return "refused (a solve writes)" if "is writing" in p.stderr else "refused (readers stayed)"
        problems.append(f"compact exit {p.returncode}: {p.stderr.strip()[-300:]}")
        return "FAILED"

    threads = [threading.Thread(target=loop, args=a) for a in
               (("solve", solve), ("status", status), ("holder", holder), ("compact", compact))]  # fmt: skip
    start = time.monotonic()
    for t in threads:
        t.start()
    time.sleep(args.seconds)
    stop.set()
    for t in threads:
        t.join()
    elapsed = time.monotonic() - start
    for k in sorted(counts):
        print(f"{counts[k]:6d}  {k}")
    check = pndb("check", db)
    print(f"check after {elapsed:.0f} s: exit {check.returncode}, {check.stdout.strip().splitlines()[-1]}")
    print(f"value so far: {json.loads(pndb('status', '--json', db).stdout)['result']}")
    final = pndb("solve", args.game, "--db", db, "--quiet")
    ended = final.stdout.strip().splitlines()[0] if final.stdout else final.stderr.strip()
    print(f"solve to the end: {ended}")
    if check.returncode != 0:
        problems.append("check is not clean")
    if f"({args.value})" not in final.stdout:
        problems.append(f"the value is not {args.value}")
    if (db / "compact.tmp").exists():
        problems.append("compact.tmp left")
    for p in problems:
        print("PROBLEM:", p)
    shutil.rmtree(work)
    sys.exit(1 if problems else 0)


if __name__ == "__main__":
    main()
