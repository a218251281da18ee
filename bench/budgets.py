"""Benchmark the inner budget schemes side by side: `pndb solve --inner-scheme fixed` (every new
leaf searched once with --inner-nodes, the scheme before) against `--inner-scheme follow`
(leaves searched again with growing budgets and the outer tree's thresholds before they are
expanded), in one run on the same machine load.

For every game, one subprocess per scheme (fixed first, then follow, then the next game), each on
a fresh database, with a time cap per solve: wall time, outer expansions, inner nodes, the value
(or what is known when the cap stopped it), and follow's speed-up over fixed.

    python bench/budgets.py                                   # the default games, cap 300 s
    python bench/budgets.py --max-seconds 60 connect4:6x4     # other games / cap
    python bench/budgets.py -- --inner-nodes 20000            # extra options for both solves
"""

import argparse
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
os.environ.setdefault("NUMBA_CACHE_DIR", str(Path(tempfile.gettempdir()) / "pndb-numba-cache"))

from solve import aligned, run_one  # noqa: E402  (bench/solve.py)

DEFAULT_GAMES = [
    "tictactoe", "qango6", "qango6:castle", "mnk:5,5,4",
    "connect4:6x4", "connect4:5x5", "connect4:6x5", "connect4:7x4",
]  # fmt: skip
SCHEMES = ("fixed", "follow")


def table(rows, games):
    head = ["game"]
    for s in SCHEMES:
        head += [f"{s} s", f"{s} exp", f"{s} inner", f"{s} value"]
    head += ["speed-up"]
    lines = [head]
    for game in games:
        line = [game]
        walls = {}
        for s in SCHEMES:
            r = rows.get((game, s))
            if r is None or "error" in r:
                line += ["", "", "", (r or {}).get("error", "")[:30]]
                continue
            walls[s] = r["wall_s"]
            capped = "" if r["how"] == "solved" else f" ({r['how']})"
            inner = f"{r['inner_nodes'] / 1e6:.2f}M"
            line += [f"{r['wall_s']:.1f}", str(r["expansions"]), inner, r["value"] + capped]
        both = len(walls) == 2 and all(rows[(game, s)]["how"] == "solved" for s in SCHEMES)
        line.append(f"{walls['fixed'] / walls['follow']:.2f}x" if both else "")
        lines.append(line)
    return aligned(lines, left=[i == 0 or h.endswith("value") for i, h in enumerate(head)])


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("games", nargs="*", default=DEFAULT_GAMES, help="game specs (default: %(default)s)")
    ap.add_argument("--max-seconds", type=float, default=300.0, help="cap per solve, 0: none (default 300)")
    ap.add_argument("--keep", type=Path, help="keep the databases under this directory")
    ap.add_argument("--json", action="store_true", help="also print the rows as JSON lines")
    argv = sys.argv[1:] if argv is None else list(argv)
    extra = argv[argv.index("--") + 1 :] if "--" in argv else []  # after --: options for pndb solve
    args = ap.parse_args(argv[: argv.index("--")] if "--" in argv else argv)

    base = args.keep or Path(tempfile.mkdtemp(prefix="pndb-budgets-"))
    base.mkdir(parents=True, exist_ok=True)
    rows = {}
    try:
        for game in args.games:
            for scheme in SCHEMES:
                db = base / (game.replace(":", "_").replace(",", "-") + "-" + scheme)
                shutil.rmtree(db, ignore_errors=True)
                row = run_one(game, db, args.max_seconds, ["--inner-scheme", scheme] + extra)
                row["scheme"] = scheme
                rows[(game, scheme)] = row
                note = f"# {row['command']}: {row['how']} in {row['wall_s']:.1f}s"
                print(note, file=sys.stderr, flush=True)
    finally:
        if not args.keep:
            shutil.rmtree(base, ignore_errors=True)
    print(f"inner budget schemes, cap {args.max_seconds:g}s per solve, {os.cpu_count()} CPUs")
    print(table(rows, args.games))
    if args.json:
        for r in rows.values():
            print(json.dumps(r))
    return 0 if all("error" not in r for r in rows.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
