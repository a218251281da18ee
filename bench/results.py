"""docs/results.md: every game pndb solves here, each solved from scratch, exported, verified.

For each game: `pndb solve GAME` on a fresh database (capped at --max-seconds; a game not
solved in time is left out with a line saying so), `pndb export`, `python tools/verify.py`;
then a row of the table: value, proven best first moves, wall time, expansions, inner nodes,
database size, book size and sha256, and the commands. Books under --keep-mb go into books/
(zstd already), named after the game. The machine is named from /proc/cpuinfo and nproc.

    python bench/results.py                         # the games below, into docs/results.md
    python bench/results.py --games qango6 tictactoe --out /tmp/results.md
"""

import argparse
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
GAMES = [
    "tictactoe", "mnk:4,4,4", "mnk:5,5,4", "mnk:4,4,3", "qango6", "qango6:castle", "qango6:tournament",
    "qango7", "qango7plus", "qango7plus:edges", "qango7plus:tournament", "connect4:4x4", "connect4:5x4",
    "connect4:6x5", "connect4:5x6", "connect4:6x6", "connect4:7x5", "connect4", "connect4:6x7",
    "go:2x2:komi=1", "go:2x3", "go:3x3:komi=9",
]  # fmt: skip


def machine():
    """The processor's name and the number of cores."""
    try:
        text = Path("/proc/cpuinfo").read_text()
        name = re.search(r"model name\s*:\s*(.*)", text).group(1).strip()
    except (OSError, AttributeError):
        name = "unknown processor"
    return f"{name}, {os.cpu_count()} cores"


def pndb(*args, timeout=None):
    return subprocess.run([sys.executable, "-m", "pndb", *map(str, args)], capture_output=True, text=True,
                          timeout=timeout, cwd=ROOT)  # fmt: skip


def solve_one(game, max_seconds, tmp):
    """A dict of the row's figures, or None when the solve did not finish."""
    db, book = Path(tmp) / "db", Path(tmp) / "book.pnbook"
    started = time.monotonic()
    ran = pndb("solve", game, "--db", db, "--max-seconds", max_seconds, "--quiet")
    seconds = time.monotonic() - started
    if ran.returncode != 0:
        return None
    best = next((line.split(":", 1)[1].split() for line in ran.stdout.splitlines() if line.startswith("proven best")), [])
    status = json.loads(pndb("status", "--json", db).stdout)
    exported = pndb("export", db, "-o", book)
    if exported.returncode != 0:
        raise SystemExit(f"{game}: export failed: {exported.stderr.strip()}")
    verified = subprocess.run([sys.executable, ROOT / "tools" / "verify.py", book], capture_output=True, text=True)
    data = book.read_bytes()
    return dict(
        value=status["result"], best=best, seconds=seconds, solve_seconds=status["seconds"], expansions=status["expansions"],
        inner_nodes=status["inner_nodes"], db_bytes=status["db_bytes"], book=book, book_bytes=len(data),
        sha256=hashlib.sha256(data).hexdigest(), verified=verified.returncode == 0,
        verify_text=(verified.stdout + verified.stderr).strip().splitlines()[-1:] or [""],
    )  # fmt: skip


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--games", nargs="+", default=GAMES)
    ap.add_argument("--max-seconds", type=float, default=600.0)
    ap.add_argument("--out", type=Path, default=ROOT / "docs" / "results.md")
    ap.add_argument("--books", type=Path, default=ROOT / "books")
    ap.add_argument("--keep-mb", type=float, default=20.0, help="books smaller than this go into --books")
    args = ap.parse_args()
    rows, left = [], []
    for game in args.games:
        with tempfile.TemporaryDirectory() as tmp:
            r = solve_one(game, args.max_seconds, tmp)
            if r is None:
                left.append(game)
                print(f"{game}: not solved in {args.max_seconds:.0f} s", flush=True)
                continue
            name = game.replace(":", "_").replace(",", "-") + ".pnbook"
            kept = r["book_bytes"] < args.keep_mb * 1e6
            if kept:
                args.books.mkdir(exist_ok=True)
                shutil.copyfile(r["book"], args.books / name)
            verdict = "verified" if r["verified"] else f"NOT verified: {r['verify_text'][0]}"
            book = f"`books/{name}`" if kept else "rebuilt by the commands"
            rows.append(
                f"| `{game}` | {r['value']} | {' '.join(r['best']) or '-'} | {r['solve_seconds']:.1f} s ({r['seconds']:.1f} s) "
                f"| {r['expansions']:,} "
                f"| {r['inner_nodes']:,} | {r['db_bytes'] / 1e6:.1f} MB | {r['book_bytes']:,} B, {verdict} | {book} "
                f"| `{r['sha256']}` |"
            )  # fmt: skip
            print(rows[-1], flush=True)
    lines = [
        "# Games solved by pndb",
        "",
        f"Made by `python bench/results.py` on {time.strftime('%Y-%m-%d')}, on {machine()}, one worker.",
        "Each game: `pndb solve GAME --db DB`, `pndb export DB -o BOOK`, `python tools/verify.py BOOK`;",
        "solve: the seconds `pndb status` records (the search alone, compiling kernels left out), and in",
        "brackets the wall time of the whole `pndb solve` process on a fresh database (start-up and, for",
        "the first game of a family on a new kernel cache, compiling included). A shared machine: rough.",
        "",
        "| game | value | proven best first moves | solve (process) | expansions | inner nodes | database | book | file | sha256 |",
        "|---|---|---|---|---|---|---|---|---|---|",
        *rows,
    ]
    if left:
        lines += ["", f"Not solved within {args.max_seconds:.0f} s each: {', '.join(f'`{g}`' for g in left)}."]
    args.out.write_text("\n".join(lines) + "\n" + long_solves(args.out))
    print(f"wrote {args.out}")


LONG_SOLVES = "\n## Long solves\n"


def long_solves(path):
    """The file's "Long solves" section, kept as it is: solves of hours, each run by hand with
    the command its row gives, which this script does not repeat."""
    text = path.read_text() if path.exists() else ""
    at = text.find(LONG_SOLVES)
    return "" if at < 0 else text[at:]


if __name__ == "__main__":
    main()
