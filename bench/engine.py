"""pndb as an engine: `pndb solve GAME --positions -`, one process answering a position a line.

N random positions (seeded; --stones LO HI stones each, none finished) are written to one engine
process a line at a time, each after the answer to the one before, as a GUI or a script would. The
figure is what the process costs beyond its solving: the wall time from the first line written to
the last answer read, less the microseconds each answer reports as its solve, and, apart, the
start-up until the first answer. For comparison, --separate K of the positions are solved by one
`pndb solve GAME --moves M` process each (the way without the engine). One run; wall times.

    python bench/engine.py                              # 80 connect4 positions of 16-30 stones
    python bench/engine.py --game connect4:6x5 --positions 200 --separate 10
"""

import argparse
import random
import subprocess
import sys
import tempfile
import time


def random_positions(game_spec, count, low, high, seed):
    """``count`` distinct move strings of low..high stones from random play, none finished."""
    from pndb.games import load_game
    from pndb.games.placement.game import Status

    game = load_game(game_spec)
    rng = random.Random(seed)
    found = {}
    while len(found) < count:
        pos, moves = game.parse_moves("")[0], []
        for _ in range(rng.randint(low, high)):
            if game.status(pos) != Status.ONGOING:
                break
            move = rng.choice(game.legal_moves(pos))
            pos, moves = game.play(pos, move), moves + [move]
        if game.status(pos) == Status.ONGOING and len(moves) >= low:
            found.setdefault(game.format_moves(moves), None)
    return list(found)


def engine(game, texts, max_seconds):
    """(start-up seconds, seconds beyond solving for the rest, answers) of one engine process."""
    cmd = [sys.executable, "-m", "pndb", "solve", game, "--positions", "-", "-q", "--max-seconds", str(max_seconds)]
    started = time.monotonic()
    proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    answers, first_done, rest_solving = [], None, 0.0
    for text in texts:
        proc.stdin.write(text + "\n")
        proc.stdin.flush()
        line = proc.stdout.readline().split()
        answers.append(line)
        solving = float(line[3]) / 1e6
        if first_done is None:
            first_done = time.monotonic()
            startup = first_done - started - solving
        else:
            rest_solving += solving
    rest = time.monotonic() - first_done - rest_solving
    proc.stdin.close()
    proc.wait()
    return startup, rest, answers


def separate(game, texts, max_seconds):
    """Seconds of one `pndb solve --moves` process a position, each on a fresh database."""
    started = time.monotonic()
    with tempfile.TemporaryDirectory() as tmp:
        for i, text in enumerate(texts):
            subprocess.run([sys.executable, "-m", "pndb", "solve", game, "--moves", text, "--db", f"{tmp}/{i}", "-q",
                            "--max-seconds", str(max_seconds)], capture_output=True, check=False)  # fmt: skip
    return time.monotonic() - started


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--game", default="connect4")
    ap.add_argument("--positions", type=int, default=80)
    ap.add_argument("--stones", type=int, nargs=2, default=(16, 30), metavar=("LO", "HI"))
    ap.add_argument("--separate", type=int, default=5, help="positions solved one process each (0: none)")
    ap.add_argument("--max-seconds", type=float, default=20.0, help="cap of each position's solve")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    texts = random_positions(args.game, args.positions, *args.stones, args.seed)
    startup, rest, answers = engine(args.game, texts, args.max_seconds)
    solving = sum(float(a[3]) for a in answers) / 1e6
    print(f"{args.game}: {len(texts)} positions of {args.stones[0]}-{args.stones[1]} stones through one engine process")
    print(f"  solving (as the answers report it): {solving:.2f} s")
    print(f"  start-up until the first answer, beyond its solve: {startup:.2f} s")
    print(f"  the other {len(texts) - 1} answers beyond their solving: {rest:.3f} s "
          f"({rest / max(len(texts) - 1, 1) * 1e3:.1f} ms a position)")  # fmt: skip
    unsolved = [a for a in answers if a[1] not in ("first-wins", "second-wins", "draw")]
    if unsolved:
        print(f"  {len(unsolved)} not solved within {args.max_seconds} s each")
    if args.separate:
        k = min(args.separate, len(texts))
        seconds = separate(args.game, texts[:k], args.max_seconds)
        own = sum(float(a[3]) for a in answers[:k]) / 1e6
        print(f"  one process a position, first {k}: {seconds:.2f} s ({(seconds - own) / k:.2f} s a position beyond "
              f"the engine's solving of them)")  # fmt: skip


if __name__ == "__main__":
    main()
