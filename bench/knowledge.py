"""Game knowledge off and on, in one run: `pndb solve GAME --no-knowledge` against `pndb solve
GAME`, each on a fresh database, then the book of every solved run exported and checked by the
independent verifier (tools/verify.py).

    python bench/knowledge.py                          # the games of the knowledge issue
    python bench/knowledge.py --max-seconds 60 mnk:5,5,4 qango6
"""

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from solve import pndb_command, run_one  # noqa: E402

GAMES = ["mnk:5,5,4", "mnk:7,7,5", "qango6", "qango6:castle", "qango6:tournament",
         "qango7plus:edges", "qango7plus:tournament"]  # fmt: skip
TOOLS = Path(__file__).resolve().parent.parent / "tools"


def verified(db, book):
    """The verifier's verdict line on the book of a solved database."""
    export = subprocess.run(
        pndb_command() + ["export", str(db), "-o", str(book)], capture_output=True, text=True
    )
    if export.returncode != 0:
        return "export failed: " + export.stderr.strip()
    check = subprocess.run(
        [sys.executable, str(TOOLS / "verify.py"), str(book), "--quiet"], capture_output=True, text=True
    )
    return (check.stdout or check.stderr).strip().splitlines()[-1]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("games", nargs="*", default=GAMES)
    ap.add_argument("--max-seconds", type=float, default=300.0, help="cap per solve (default 300)")
    args = ap.parse_args()
    os.environ.setdefault("NUMBA_CACHE_DIR", str(Path(tempfile.gettempdir()) / "pndb-numba-cache"))
    base = Path(tempfile.mkdtemp(prefix="pndb-knowledge-"))
    print(f"{'game':24} {'knowledge':9} {'result':7} {'value':16} {'wall s':>7} {'expansions':>10} "
          f"{'peak MB':>7}  verifier")  # fmt: skip
    try:
        for game in args.games:
            for label, extra in (("off", ["--no-knowledge"]), ("on", [])):
                db = base / f"{game.replace(':', '_').replace(',', '-')}-{label}"
                row = run_one(game, db, args.max_seconds, extra)
                verdict = verified(db, db.with_suffix(".pnbook")) if row.get("exit") == 0 else ""
                print(f"{game:24} {label:9} {row['how']:7} {row.get('value', row.get('error', ''))[:16]:16} "
                      f"{row['wall_s']:7.1f} {row.get('expansions', 0):>10} {row['peak_rss_mb']:7.0f}  "
                      f"{verdict[:100]}", flush=True)  # fmt: skip
                shutil.rmtree(db, ignore_errors=True)
    finally:
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
