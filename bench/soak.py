"""Soak: a long solve under a small memory budget, sampled into a CSV.

Runs `pndb solve GAME --memory MB` (by default the outer search alone on Connect Four, whose DAG grows
by megabytes a second) for a given time and samples, every few seconds: the solving process's
anonymous memory (RssAnon, from /proc), the database's size on disk, the expansions it has
committed (read from the database's meta with the lmdb module, so the sampling does not depend on
pndb's code) and the expansion rate since the last sample. At the end it prints a summary: peak
RssAnon against the budget, the database's growth as a multiple of the budget, and the rate over
the first and the last tenth of the run.

    python bench/soak.py --seconds 3600 --memory 256 --csv soak.csv
    python bench/soak.py --seconds 60 --game connect4 --memory 256 -- --inner-nodes 0
"""

import argparse
import csv
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import lmdb


def rss_anon_mb(pid):
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("RssAnon:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return None


def committed_expansions(db):
    """The expansions counter of the last checkpoint (0 before the first)."""
    try:
        env = lmdb.open(str(db), readonly=True, lock=True, max_dbs=4)
    except lmdb.Error:
        return 0
    try:
        meta = env.open_db(b"meta", create=False)
        with env.begin() as txn:
            raw = txn.get(b"expansions", db=meta)
        return json.loads(raw) if raw else 0
    except lmdb.Error:
        return 0
    finally:
        env.close()


def pndb_command():
    script = Path(sys.executable).with_name("pndb")
    return [str(script)] if script.exists() else [sys.executable, "-m", "pndb"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--game", default="connect4")
    ap.add_argument("--memory", type=int, default=256, help="the solve's --memory, MB")
    ap.add_argument("--seconds", type=float, default=3600)
    ap.add_argument("--every", type=float, default=10.0, help="seconds between samples")
    ap.add_argument("--csv", default="soak.csv")
    ap.add_argument("--db", help="database directory (default: a temporary one, removed after)")
    ap.add_argument("extra", nargs="*", help="more `pndb solve` options (after --)")
    args = ap.parse_args()
    extra = args.extra or ["--inner-nodes", "0"]
    tmp = None if args.db else tempfile.mkdtemp(prefix="pndb-soak-")
    db = Path(args.db or Path(tmp) / "soak.lmdb")
    cmd = pndb_command() + ["solve", args.game, "--db", str(db), "--memory", str(args.memory), "--quiet"]
    cmd += ["--max-seconds", str(args.seconds), *extra]
    print("#", " ".join(cmd), file=sys.stderr)
    rows = []
    t0 = time.monotonic()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        with open(args.csv, "w", newline="") as f:
            out = csv.writer(f)
            out.writerow(["seconds", "rss_anon_mb", "db_mb", "expansions", "expansions_per_s"])
            last = (0.0, 0)
            while proc.poll() is None:
                time.sleep(args.every)
                now = time.monotonic() - t0
                rss = rss_anon_mb(proc.pid)
                data = db / "data.mdb"
                db_mb = data.stat().st_size / 2**20 if data.exists() else 0.0
                exp = committed_expansions(db)
                rate = (exp - last[1]) / (now - last[0]) if now > last[0] else 0.0
                last = (now, exp)
                if rss is None:
                    break
                row = [round(now, 1), round(rss, 1), round(db_mb, 1), exp, round(rate, 1)]
                rows.append(row)
                out.writerow(row)
                f.flush()
        output = proc.communicate()[0]
    finally:
        if proc.poll() is None:
            proc.kill()
        if tmp:
            shutil.rmtree(tmp, ignore_errors=True)
    summarise(rows, args.memory, output)


def summarise(rows, budget, output):
    if not rows:
        print("no samples")
        return
    tenth = max(1, len(rows) // 10)
    start = [r[4] for r in rows[1 : tenth + 1]] or [rows[0][4]]  # the first sample includes start-up
    end = [r[4] for r in rows[-tenth:]]
    peak = max(r[1] for r in rows)
    print(f"samples: {len(rows)} over {rows[-1][0]:.0f} s")
    print(f"peak RssAnon: {peak:.0f} MB of a {budget} MB budget ({'under' if peak <= budget else 'OVER'})")
    print(f"database: {rows[-1][2]:.0f} MB at the end, {rows[-1][2] / budget:.1f}x the budget")
    print(f"expansions: {rows[-1][3]}")
    r0, r1 = sum(start) / len(start), sum(end) / len(end)
    print(
        f"rate: {r0:.0f} expansions/s over the first tenth, {r1:.0f} over the last "
        f"({r1 / max(r0, 1e-9):.2f}x)"
    )
    print("solve said:", " | ".join(output.strip().splitlines()[-2:]))


if __name__ == "__main__":
    main()
