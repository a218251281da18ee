"""Connect Four: pndb against Pascal Pons's alpha-beta solver, on empty boards and benchmark positions.

Empty boards (6x4 5x5 7x4 6x5 5x6 7x5 6x6 unless --boards says otherwise; --tromp adds every
board of Tromp's table, width + height <= 11): `pndb solve connect4:WxH` on a fresh database in a
temporary directory, capped at --max-seconds, against the alpha-beta solver in its weak mode
(win/draw/loss) on the same board, and against the literature's value where tests/
test_connect4_table.py has it. Times are wall times of the whole process (pndb's include about
two seconds of start-up: Python, numba's cache), and pndb's own solve time.

Positions: --positions N (default 300) positions of 8 to 30 stones from Pons's benchmark files
(Test_L3_R1, Test_L2_R1, Test_L2_R2, Test_L1_R1, Test_L1_R2, Test_L1_R3 of
http://blog.gamesolver.org/solving-connect-four/02-test-protocol/; lines "moves score", moves as
1-based column digits as pndb writes them, the score for the side to move: positive wins, 0
draws), sampled evenly over the stone counts. All of them go through one `pndb solve connect4
--positions FILE` (one shared database, a per-position cap of --position-seconds) and one
process of the alpha-beta solver (its transposition table shared the same way, fed a position
at a time); each value is checked against the published score. Times per position are reported
in the bands 8-13, 14-21, 22-30 (and 14-30) stones, with the ratio pndb / alpha-beta of the mean
times; pndb's are the microseconds `--positions` prints, the alpha-beta solver's from sending a
position to its answer.

The alpha-beta solver is not part of pndb: its board size is a compile-time constant, so build
one binary per board outside this repository and name it c4solver-WxH (c4solver-7x6 or plain
c4solver for the standard board) in a directory given by --c4solver-dir or $C4SOLVER_DIR, e.g.:

    git clone https://github.com/PascalPons/connect4 && cd connect4
    mkdir bin; for s in 6x4 5x5 ...; do mkdir -p b$s; cp *.?pp Makefile b$s
      sed -i "s/WIDTH = 7/WIDTH = ${s%x*}/; s/HEIGHT = 6/HEIGHT = ${s#*x}/" b$s/Position.hpp
      make -C b$s c4solver && cp b$s/c4solver bin/c4solver-$s; done

Without it only pndb's figures are printed (and checked against the literature and the
published scores). The benchmark files are read from --bench-dir or $C4BENCH_DIR (default: the
solver directory and its parent).

    python bench/connect4.py --c4solver-dir ~/connect4/bin --bench-dir ~/connect4/data
    python bench/connect4.py --max-seconds 60 --positions 100 --boards 6x4,5x5
    python bench/connect4.py --tromp --positions 0 --boards ''

Exit code: 1 if any value disagrees (pndb against the alpha-beta solver, the literature or a
published score), else 3 if some solve was stopped by its cap, else 0.
"""

import argparse
import os
import random
import re
import select
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from test_connect4_table import LARGER, TROMP  # the literature's values, with their sources

LITERATURE = {f"{w}x{h}": v for (w, h), v in {**TROMP, **LARGER}.items()}
BOARDS = ["6x4", "5x5", "7x4", "6x5", "5x6", "7x5", "6x6"]
FILES = ["Test_L3_R1", "Test_L2_R1", "Test_L2_R2", "Test_L1_R1", "Test_L1_R2", "Test_L1_R3"]
BANDS = [(8, 13), (14, 21), (22, 30), (14, 30)]
VALUES = ("first-wins", "draw", "second-wins")


def pndb_command():
    """The `pndb` console script of the running interpreter's environment, else `python -c`."""
    script = Path(sys.executable).with_name("pndb")
    if script.exists():
        return [str(script)]
    return [sys.executable, "-c", "from pndb.cli import main; main()"]


def value_of_score(stones, score):
    """The first player's result from a score for the side to move after ``stones`` stones."""
    if score == 0:
        return "draw"
    mover_wins = score > 0
    first_to_move = stones % 2 == 0
    return "first-wins" if mover_wins == first_to_move else "second-wins"


# ------------------------------------------------------------------------------ the two solvers


def solver_binary(directory, board):
    if not directory:
        return None
    for name in [f"c4solver-{board}"] + (["c4solver"] if board == "7x6" else []):
        path = Path(directory) / name
        if path.is_file() and os.access(path, os.X_OK):
            return path
    return None


def pndb_board(board, max_seconds, extra):
    """(value or None, wall seconds, pndb's own solve seconds, what it knew when capped)."""
    with tempfile.TemporaryDirectory(prefix="c4bench-") as tmp:
        cmd = pndb_command() + ["solve", f"connect4:{board}", "--db", f"{tmp}/db", "--quiet"]
        cmd += ["--max-seconds", str(max_seconds), *extra]
        start = time.perf_counter()
        r = subprocess.run(cmd, capture_output=True, text=True)
        wall = time.perf_counter() - start
    solve = re.search(r" in ([0-9.]+)s;", r.stdout)
    solve = float(solve.group(1)) if solve else None
    if r.returncode == 0:
        value = re.search(r"\(([a-z-]+)\)$", r.stdout.splitlines()[0])
        return value.group(1), wall, solve, None
    if r.returncode == 3:
        known = re.search(r"known so far: ([a-z-]+)", r.stdout)
        return None, wall, solve, known.group(1) if known else "unknown"
    sys.exit(f"pndb solve connect4:{board} failed ({r.returncode}): {r.stderr.strip()[-400:]}")


def c4solver_board(binary, max_seconds):
    """(value or None when capped, wall seconds) of the alpha-beta solver, weak mode, empty board."""
    start = time.perf_counter()
    try:
        r = subprocess.run(
            [str(binary), "-w"], input="\n", capture_output=True, text=True, timeout=max_seconds
        )
    except subprocess.TimeoutExpired:
        return None, time.perf_counter() - start
    wall = time.perf_counter() - start
    return value_of_score(0, int(r.stdout.split()[-1])), wall


class LineSolver:
    """The alpha-beta solver as one process fed a position at a time (weak mode), so that each
    position has its own time and its own cap, and the transposition table is shared."""

    def __init__(self, binary):
        self.binary = binary
        self.proc = None

    def start(self):
        self.proc = subprocess.Popen(
            [str(self.binary), "-w"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL, text=True, bufsize=1,
        )  # fmt: skip

    def solve(self, moves, cap):
        """(score or None when capped, seconds)."""
        if self.proc is None:
            self.start()
        start = time.perf_counter()
        self.proc.stdin.write(moves + "\n")
        self.proc.stdin.flush()
        ready, _, _ = select.select([self.proc.stdout], [], [], cap)
        if not ready:
            self.close()
            return None, time.perf_counter() - start
        line = self.proc.stdout.readline()
        seconds = time.perf_counter() - start
        parts = line.split()
        if len(parts) != 2 or parts[0] != moves:
            sys.exit(f"alpha-beta solver: unexpected answer {line!r} to {moves}")
        return int(parts[1]), seconds

    def close(self):
        if self.proc is not None:
            self.proc.kill()
            self.proc.wait()
            self.proc = None


# ------------------------------------------------------------------------------ positions


def bench_files(directory):
    found = {}
    for d in directory:
        if d:
            for name in FILES:
                if name not in found and (Path(d) / name).is_file():
                    found[name] = Path(d) / name
    return found


def sample_positions(files, count, seed, lo=8, hi=30):
    """``count`` (moves, published score) of lo..hi stones, as evenly over the stone counts as the
    files allow, in order of stones."""
    by_stones = {}
    for path in files.values():
        for line in path.read_text().splitlines():
            parts = line.split()
            if len(parts) == 2 and lo <= len(parts[0]) <= hi:
                by_stones.setdefault(len(parts[0]), {})[parts[0]] = int(parts[1])
    rng = random.Random(seed)
    pools = {n: rng.sample(sorted(p.items()), len(p)) for n, p in sorted(by_stones.items())}
    out = []
    while len(out) < count and any(pools.values()):
        for n in sorted(pools):
            if pools[n] and len(out) < count:
                out.append(pools[n].pop())
    return sorted(out, key=lambda p: (len(p[0]), p[0]))


def pndb_positions(positions, cap, extra):
    """{moves: (value, seconds, solved)} from one `pndb solve connect4 --positions` process."""
    with tempfile.TemporaryDirectory(prefix="c4bench-") as tmp:
        path = Path(tmp) / "positions.txt"
        path.write_text("".join(m + "\n" for m, _ in positions))
        cmd = pndb_command() + ["solve", "connect4", "--positions", str(path), "--quiet"]
        cmd += ["--max-seconds", str(cap), *extra]
        r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode not in (0, 3):
        sys.exit(f"pndb solve --positions failed ({r.returncode}): {r.stderr.strip()[-400:]}")
    out = {}
    for line in r.stdout.splitlines():
        moves, value, _nodes, micros = line.split()
        out[moves] = (value, float(micros) / 1e6, value in VALUES)
    return out


# ------------------------------------------------------------------------------ report


def fmt_s(seconds):
    if seconds is None:
        return "-"
    return f"{seconds:.3f}" if seconds < 10 else f"{seconds:.1f}"


def fmt_ms(seconds):
    if seconds is None:
        return "-"
    ms = seconds * 1e3
    return f"{ms:.2f}" if ms < 10 else f"{ms:.0f}"


def fmt_ratio(a, b):
    if a is None or b is None or b <= 0:
        return "-"
    return f"{a / b:.1f}x"


def table(rows):
    widths = [max(len(str(r[i])) for r in rows) for i in range(len(rows[0]))]
    for k, r in enumerate(rows):
        print("  ".join(str(c).rjust(w) if i else str(c).ljust(w) for i, (c, w) in enumerate(zip(r, widths))))
        if k == 0:
            print("  ".join("-" * w for w in widths))


def bench_boards(boards, args, binary_dir, extra):
    rows = [("board", "literature", "pndb", "pndb wall s", "pndb solve s", "alpha-beta", "a-b wall s",
             "ratio", "agree")]  # fmt: skip
    wrong = capped = 0
    for board in boards:
        lit = LITERATURE.get(board, "-")
        value, wall, solve, known = pndb_board(board, args.max_seconds, extra)
        binary = solver_binary(binary_dir, board)
        ab, ab_wall = c4solver_board(binary, args.max_seconds) if binary else (None, None)
        seen = {v for v in (lit if lit != "-" else None, value, ab) if v}
        agree = "yes" if len(seen) <= 1 else "NO"
        wrong += agree == "NO"
        capped += (value is None) + (binary is not None and ab is None)
        shown = value or f"capped ({known})"
        ab_shown = ab or ("capped" if binary else "not built")
        ratio = fmt_ratio(wall, ab_wall)
        if value is None and ab_wall is not None:
            ratio = ">" + ratio  # pndb's time is only its cap
        rows.append((board, lit, shown, fmt_s(wall), fmt_s(solve), ab_shown, fmt_s(ab_wall),
                     ratio, agree))  # fmt: skip
        print(f"  {board}: pndb {shown} {fmt_s(wall)} s, alpha-beta {ab_shown} {fmt_s(ab_wall)} s",
              file=sys.stderr, flush=True)  # fmt: skip
    print(f"\nEmpty boards (cap {args.max_seconds:g} s each)")
    table(rows)
    return wrong, capped


def bench_positions(args, binary_dir, extra):
    files = bench_files([args.bench_dir, binary_dir, binary_dir and str(Path(binary_dir).parent)])
    if not files:
        sys.exit("no benchmark files (Test_L1_R1 ...) found: give --bench-dir or $C4BENCH_DIR")
    positions = sample_positions(files, args.positions, args.seed)
    names = ", ".join(sorted(files))
    print(f"  {len(positions)} positions from {names}; pndb ...", file=sys.stderr, flush=True)
    start = time.perf_counter()
    mine = pndb_positions(positions, args.position_seconds, extra)
    pndb_wall = time.perf_counter() - start
    binary = solver_binary(binary_dir, "7x6")
    theirs = {}
    if binary:
        print("  alpha-beta ...", file=sys.stderr, flush=True)
        ab = LineSolver(binary)
        try:
            for moves, _ in positions:
                theirs[moves] = ab.solve(moves, args.position_seconds)
        finally:
            ab.close()
    wrong = capped = 0
    disagreements = []
    for moves, score in positions:
        published = value_of_score(len(moves), score)
        value, _, solved = mine.get(moves, ("missing", None, False))
        if not solved:
            capped += 1
            disagreements.append(f"{moves} {score}: published {published}, pndb {value} (not solved)")
        elif value != published:
            wrong += 1
            disagreements.append(f"{moves} {score}: published {published}, pndb {value}")
        if moves in theirs:
            s, _ = theirs[moves]
            if s is None:
                capped += 1
                disagreements.append(f"{moves} {score}: alpha-beta capped")
            elif value_of_score(len(moves), s) != published:
                wrong += 1
                disagreements.append(f"{moves} {score}: published {published}, alpha-beta score {s}")
    rows = [("stones", "positions", "pndb mean ms", "median", "max", "a-b mean ms", "median", "max",
             "ratio (means)", "wrong", "unsolved")]  # fmt: skip
    for lo, hi in BANDS:
        band = [m for m, _ in positions if lo <= len(m) <= hi]
        if not band:
            continue
        mt = [mine[m][1] for m in band if m in mine]
        tt = [theirs[m][1] for m in band if m in theirs]
        pub = dict(positions)
        bad = sum(
            1 for m in band if m in mine and mine[m][2] and mine[m][0] != value_of_score(len(m), pub[m])
        )
        unsolved = sum(1 for m in band if m not in mine or not mine[m][2])
        mean_m = statistics.fmean(mt) if mt else None
        mean_t = statistics.fmean(tt) if tt else None
        rows.append((f"{lo}-{hi}", len(band), fmt_ms(mean_m), fmt_ms(statistics.median(mt) if mt else None),
                     fmt_ms(max(mt) if mt else None), fmt_ms(mean_t),
                     fmt_ms(statistics.median(tt) if tt else None), fmt_ms(max(tt) if tt else None),
                     fmt_ratio(mean_m, mean_t), bad, unsolved))  # fmt: skip
    all_m = [v[1] for v in mine.values()]
    all_t = [v[1] for v in theirs.values()]
    rows.append(("all", len(positions), fmt_ms(statistics.fmean(all_m) if all_m else None), "", "",
                 fmt_ms(statistics.fmean(all_t) if all_t else None), "", "",
                 fmt_ratio(sum(all_m), sum(all_t)) if all_t else "-", wrong, capped))  # fmt: skip
    print(f"\nPositions of 8-30 stones from Pons's benchmark files, against their published scores "
          f"(cap {args.position_seconds:g} s each; pndb process {pndb_wall:.1f} s wall)")  # fmt: skip
    table(rows)
    if not binary:
        print("(alpha-beta solver not found: pndb's figures only)")
    for d in disagreements[:20]:
        print("  " + d)
    return wrong, capped


def main():
    ap = argparse.ArgumentParser(
        description=__doc__.splitlines()[0], epilog="Arguments after -- go to pndb solve."
    )
    ap.add_argument("--c4solver-dir", default=os.environ.get("C4SOLVER_DIR"),
                    help="directory of the alpha-beta solver's binaries c4solver-WxH")  # fmt: skip
    ap.add_argument("--bench-dir", default=os.environ.get("C4BENCH_DIR"),
                    help="directory of Pons's benchmark files Test_L1_R1 ... [$C4BENCH_DIR]")  # fmt: skip
    ap.add_argument("--boards", default=",".join(BOARDS), help="empty boards WxH, comma-separated")
    ap.add_argument("--tromp", action="store_true", help="also every board of Tromp's table (w + h <= 11)")
    ap.add_argument("--max-seconds", type=float, default=300, help="cap of each empty board (default 300)")
    ap.add_argument("--positions", type=int, default=300, help="benchmark positions (default 300; 0: none)")
    ap.add_argument("--position-seconds", type=float, default=60, help="cap of each position (default 60)")
    ap.add_argument("--seed", type=int, default=1)
    args, extra = ap.parse_known_args()
    extra = [e for e in extra if e != "--"]
    boards = [b.strip() for b in args.boards.split(",") if b.strip()]
    if args.tromp:
        tromp = [f"{w}x{h}" for w, h in sorted(TROMP, key=lambda b: (b[0] * b[1], b))]
        boards += [b for b in tromp if b not in boards]
    binary_dir = args.c4solver_dir
    if binary_dir and not Path(binary_dir).is_dir():
        sys.exit(f"--c4solver-dir {binary_dir}: no such directory")
    wrong = capped = 0
    if boards:
        w, c = bench_boards(boards, args, binary_dir, extra)
        wrong, capped = wrong + w, capped + c
    if args.positions > 0:
        w, c = bench_positions(args, binary_dir, extra)
        wrong, capped = wrong + w, capped + c
    print(f"\n{wrong} values disagree; {capped} solves stopped by their cap")
    sys.exit(1 if wrong else 3 if capped else 0)


if __name__ == "__main__":
    main()
