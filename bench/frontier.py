"""The frontier: the games pndb has not solved yet, each for a fixed time, so that how far a
version gets can be compared with another's in one run.

Each game runs `pndb solve` on a fresh database in a temporary directory, capped at --seconds,
then `pndb status --json`; a line each: the value known, the root's numbers for both questions
(first-wins: does the first player win; first-avoids-loss: does the first player at least draw),
expansions, inner nodes, the rate and the database's size. One run; the machine should be idle.

    python bench/frontier.py                                  # 300 s each
    python bench/frontier.py --seconds 60 --games connect4:8x6 file:games/qubic.json
    python bench/frontier.py --workers 2
"""

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
GAMES = ["connect4:8x6", "connect4:7x7", f"file:{ROOT / 'games' / 'qubic.json'}", "mnk:8,8,5"]


def run(game, seconds, workers, tmp):
    """pndb status --json of the database after a capped solve of ``game``."""
    db = Path(tmp) / game.replace(":", "_").replace("/", "_")
    cmd = [sys.executable, "-m", "pndb", "solve", game, "--db", str(db), "--max-seconds", str(seconds), "--quiet",
           "--workers", str(workers)]  # fmt: skip
    ran = subprocess.run(cmd, capture_output=True, text=True)
    if ran.returncode not in (0, 3):
        raise SystemExit(f"{game}: {ran.stderr.strip()[-300:]}")
    status = subprocess.run([sys.executable, "-m", "pndb", "status", "--json", str(db)], capture_output=True, text=True)
    return json.loads(status.stdout)


def numbers(s, question):
    """'pn/dn' of the root for a question, 'inf' for infinity."""
    pn, dn = (s[f"root_{x}_{question}"] for x in ("pn", "dn"))
    return "/".join("inf" if v is None else str(v) for v in (pn, dn))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=300.0, help="cap of each solve")
    ap.add_argument("--games", nargs="+", default=GAMES)
    ap.add_argument("--workers", type=int, default=1)
    args = ap.parse_args()
    print(f"{'game':<16} {'value':<16} {'first-wins pn/dn':>20} {'avoids-loss pn/dn':>20} {'expansions':>10} "
          f"{'inner nodes':>12} {'exp/s':>7} {'DB MB':>7}")  # fmt: skip
    with tempfile.TemporaryDirectory() as tmp:
        for game in args.games:
            s = run(game, args.seconds, args.workers, tmp)
            name = Path(game[5:]).stem if game.startswith("file:") else game
            rate = s["expansions"] / max(s["seconds"], 1e-9)
            print(f"{name:<16} {s['result']:<16} {numbers(s, 'first_wins'):>20} {numbers(s, 'first_avoids_loss'):>20} "
                  f"{s['expansions']:>10} {s['inner_nodes']:>12} {rate:>7.1f} {s['db_bytes'] / 1e6:>7.1f}", flush=True)  # fmt: skip


if __name__ == "__main__":
    main()
