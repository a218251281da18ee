"""Benchmark `pndb solve` end to end: one subprocess per game, each on a fresh database.

For every game it reports wall time, expansions, expansions per second, the peak resident set
of the solving process (its own rusage, from wait4), the database's size on disk, the number of
stored nodes, bytes per node, proof records and the value found (or what is known when the time
cap stopped it). "expansions" are the outer search's; the nodes the inner solver searches are
counted apart (the JSON rows' inner_nodes).

    python bench/solve.py                                  # qango6, connect4:5x4, connect4:6x4
    python bench/solve.py --max-seconds 60 qango6          # other games / cap
    python bench/solve.py --keep /tmp/benchdbs -- --target first-wins   # extra solve options
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

DEFAULT_GAMES = ["qango6", "connect4:5x4", "connect4:6x4"]
EXIT_TEXT = {0: "solved", 3: "capped", 130: "interrupted"}


def pndb_command():
    """The `pndb` console script of the running interpreter's environment, else `python -m`."""
    script = Path(sys.executable).with_name("pndb")
    if script.exists():
        return [str(script)]
    return [sys.executable, "-c", "from pndb.cli import main; main()"]


def run_one(game, db, max_seconds, extra):
    """Solve ``game`` into the fresh directory ``db``; returns one result row (a dict)."""
    cmd = pndb_command() + ["solve", game, "--db", str(db), "--quiet"]
    if max_seconds:
        cmd += ["--max-seconds", str(max_seconds)]
    cmd += extra
    out_path = db.parent / (db.name + ".out")
    with open(out_path, "w+") as out:
        t0 = time.monotonic()
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.monotonic() - t0
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        output = out.read()
    row = {
        "game": game,
        "exit": proc.returncode,
        "how": EXIT_TEXT.get(proc.returncode, f"error {proc.returncode}"),
        "wall_s": wall,
        "cpu_s": usage.ru_utime + usage.ru_stime,  # the solve's process alone, not its `status`
        "peak_rss_mb": usage.ru_maxrss / 1024,  # Linux: kilobytes
        "command": " ".join(cmd),
    }
    if proc.returncode not in EXIT_TEXT:
        row["error"] = output.strip().splitlines()[-1] if output.strip() else "no output"
        return row
    st = subprocess.run(pndb_command() + ["status", "--json", str(db)], capture_output=True, text=True)
    if st.returncode != 0:
        row["error"] = "status failed: " + st.stderr.strip()
        return row
    info = json.loads(st.stdout)
    row.update(
        value=info["result"],
        expansions=info["expansions"],
        inner_nodes=info.get("inner_nodes", 0),
        nodes=info["nodes"],
        proof_records=info.get("proof_records", 0),
        db_bytes=info["db_bytes"],
        search_s=info["seconds"],
    )
    row["exp_per_s"] = row["expansions"] / max(wall, 1e-9)
    row["bytes_per_node"] = row["db_bytes"] / max(row["nodes"], 1)
    return row


def table(rows):
    head = ["game", "result", "value", "wall s", "expansions", "exp/s"]
    head += ["peak RSS MB", "DB MB", "nodes", "B/node", "proof recs"]
    lines = [head]
    for r in rows:
        if "error" in r:
            lines.append([r["game"], r["how"], r["error"][:60], f"{r['wall_s']:.1f}"] + [""] * 7)
            continue
        lines.append(
            [
                r["game"],
                r["how"],
                r["value"],
                f"{r['wall_s']:.1f}",
                str(r["expansions"]),
                f"{r['exp_per_s']:.0f}",
                f"{r['peak_rss_mb']:.0f}",
                f"{r['db_bytes'] / 1e6:.1f}",
                str(r["nodes"]),
                f"{r['bytes_per_node']:.0f}",
                str(r["proof_records"]),
            ]
        )
    return aligned(lines, left=[i < 3 for i in range(len(head))])


def aligned(lines, left):
    """Rows of text cells as a table: the first row a header, a rule under it, the columns
    where ``left`` is true left-aligned, the others right-aligned."""
    widths = [max(len(line[i]) for line in lines) for i in range(len(lines[0]))]
    out = []
    for n, line in enumerate(lines):
        cells = (c.ljust(w) if lj else c.rjust(w) for c, w, lj in zip(line, widths, left))
        out.append("  ".join(cells).rstrip())
        if n == 0:
            out.append("  ".join("-" * w for w in widths))
    return "\n".join(out)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument(
        "games", nargs="*", default=DEFAULT_GAMES, help=f"game specs (default: {' '.join(DEFAULT_GAMES)})"
    )
    ap.add_argument(
        "--max-seconds", type=float, default=300.0, help="cap per solve, 0 for none (default 300)"
    )
    ap.add_argument("--keep", type=Path, help="keep the databases under this directory")
    ap.add_argument("--json", action="store_true", help="also print the rows as JSON lines")
    argv = sys.argv[1:] if argv is None else list(argv)
    extra = argv[argv.index("--") + 1 :] if "--" in argv else []  # after --: options for pndb solve
    args = ap.parse_args(argv[: argv.index("--")] if "--" in argv else argv)
    os.environ.setdefault("NUMBA_CACHE_DIR", str(Path(tempfile.gettempdir()) / "pndb-numba-cache"))

    base = args.keep or Path(tempfile.mkdtemp(prefix="pndb-bench-"))
    base.mkdir(parents=True, exist_ok=True)
    rows = []
    try:
        for game in args.games:
            db = base / game.replace(":", "_").replace(",", "-")
            shutil.rmtree(db, ignore_errors=True)
            row = run_one(game, db, args.max_seconds, extra)
            rows.append(row)
            print(f"# {row['command']}: {row['how']} in {row['wall_s']:.1f}s", file=sys.stderr, flush=True)
    finally:
        if not args.keep:
            shutil.rmtree(base, ignore_errors=True)
    print(f"pndb solve benchmark, cap {args.max_seconds:g}s per game, {os.cpu_count()} CPUs")
    print(table(rows))
    if args.json:
        for r in rows:
            print(json.dumps(r))
    return 0 if all("error" not in r for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
