"""How often Allis' rules (pndb.games.connect4.definitions) decide Connect Four positions, how fast,
and (with --check) whether every verdict's certificate checks and agrees with the reference
minimax of tests/reference.py.

Positions: every reachable position (--all; small boards only) or those of random games that
avoid winning moves, cut after a random number of stones (--positions N). Per number of stones:
positions, how many the rules decide, and which values.

With --old: each position is also evaluated as before Specialbefore and threat combinations
(the rules without Specialbefore, no combinations), in the same run: the positions decided only
with them, by which of the two, only without them (the search ran out of nodes), and the time
per call of both.

With --solve: whole solves instead (api.solve in a fresh temporary database, --max-seconds
each), one per setting of --limits (MAX_EMPTY:NODES, the C4_RULES_* constants of
pndb/games/placement/game.py), plus one without knowledge with --compare; --python evaluates with the plain
Python rules (the state before the numba kernels). Per solve: value, seconds, expansions, and
the rules' calls, decided positions and seconds.

    python bench/connect4_rules.py connect4:4x4 --all --check
    python bench/connect4_rules.py connect4:5x4 --all --check --old
    python bench/connect4_rules.py connect4:7x6 --positions 2000 --min-stones 20
    python bench/connect4_rules.py connect4:7x6 --positions 1000 --min-stones 8 --max-stones 30 --python
    python bench/connect4_rules.py connect4:6x4 --solve --limits 24:2000,42:20000 --compare
"""

import argparse
import random
import sys
import tempfile
import time
from collections import Counter, defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

import reference as ref  # tests/reference.py: rules and minimax without pndb

from pndb.games.connect4 import certificate, compiled
from pndb.games.connect4 import definitions as cr
from pndb.games import load_game

AGREES = {
    cr.FIRST_WINS: lambda v: v == 1,
    cr.SECOND_WINS: lambda v: v == -1,
    cr.FIRST_WONT_WIN: lambda v: v <= 0,
    cr.SECOND_WONT_WIN: lambda v: v >= 0,
}


OLD_RULES = cr.ALL_RULES - {cr.Rule.SPECIALBEFORE}


def _change(before, after):
    """How the verdict changed with Specialbefore and threat combinations."""
    if after.value is None:
        return "lost" if before.value is not None else "same"
    if before.value == after.value:
        return "same"
    if isinstance(after.certificate.threat, cr.Combination):
        return "combination" if before.value is None else "stronger"
    if before.value is None and any(i.rule == cr.Rule.SPECIALBEFORE for i in after.certificate.instances):
        return "specialbefore"
    return "changed"


def random_positions(rg, count, min_stones, seed, max_stones=99):
    rng = random.Random(seed)
    out = []
    while len(out) < count:
        moves = ref.random_game(rg, rng, avoid_wins=True)
        if len(moves) > min_stones:
            a = b = 0
            for cell in moves[: rng.randrange(min_stones, min(len(moves), max_stones + 1))]:
                a, b = ref.play(rg, a, b, cell)
            out.append((a, b))
    return out


def solve(args):
    """Whole solves, one per rules setting (and one without knowledge)."""
    from pndb import api
    from pndb.games.placement import game as game_spec

    game = load_game(args.spec)
    runs = [(tuple(map(int, lim.split(":"))), True) for lim in args.limits.split(",")]
    if args.compare:
        runs.append(((0, 0), False))
    evaluate = compiled.evaluate
    stats = Counter()

    def counted(*a, **k):
        start = time.perf_counter()
        verdict = evaluate(*a, compiled=not args.python, **k)
        stats["seconds"] += time.perf_counter() - start
        stats["calls"] += 1
        stats["decided"] += verdict.value is not None
        return verdict

    compiled.evaluate = counted
    with tempfile.TemporaryDirectory(prefix="pndb-bench-") as tmp:  # compile or load every kernel first
        api.solve(game, db=f"{tmp}/db.lmdb", max_nodes=3)
    engine = "python" if args.python else "numba"
    print(f"{args.spec}: at most {args.max_seconds} s per solve; {engine} rules")
    print("max_empty  nodes  knowledge  value           seconds  expansions  rule_calls  decided  rule_s")
    for (max_empty, nodes), knowledge in runs:
        game_spec.C4_RULES_MAX_EMPTY, game_spec.C4_RULES_NODES = max_empty, nodes
        stats.clear()
        with tempfile.TemporaryDirectory(prefix="pndb-bench-") as tmp:
            start = time.perf_counter()
            r = api.solve(game, db=f"{tmp}/db.lmdb", max_seconds=args.max_seconds, knowledge=knowledge)
            seconds = time.perf_counter() - start
        value = r.value.name if r.solved else "unsolved"
        print(
            f"{max_empty:9d} {nodes:6d}  {str(knowledge):9s}  {value:15s} {seconds:8.1f} {r.expansions:11d} "
            f"{stats['calls']:11d} {stats['decided']:8d} {stats['seconds']:7.1f}",
            flush=True,
        )


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("spec")
    ap.add_argument("--all", action="store_true", help="every reachable position")
    ap.add_argument("--positions", type=int, default=1000)
    ap.add_argument("--min-stones", type=int, default=0)
    ap.add_argument("--max-stones", type=int, default=99)
    ap.add_argument("--max-nodes", type=int, default=2000, help="chosen-set search nodes per win condition")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--check", action="store_true", help="check every certificate, and against minimax")
    ap.add_argument("--solve", action="store_true", help="whole solves instead (see above)")
    ap.add_argument("--limits", default="24:2000", help="MAX_EMPTY:NODES,... for --solve")
    ap.add_argument("--compare", action="store_true", help="--solve also without knowledge")
    ap.add_argument("--python", action="store_true", help="the plain Python rules (before numba)")
    ap.add_argument("--max-seconds", type=float, default=300)
    ap.add_argument("--old", action="store_true", help="also evaluate without Specialbefore and combinations")
    args = ap.parse_args()
    if args.solve:
        return solve(args)
    sys.setrecursionlimit(10000)
    game, rg = load_game(args.spec), ref.ref_game(args.spec)
    if args.all:
        positions = sorted(p for p in ref.enumerate_positions(rg) if ref.outcome(rg, *p) == ref.ONGOING)
    else:
        positions = random_positions(rg, args.positions, args.min_stones, args.seed, args.max_stones)
    compiled.evaluate(game, 0, 0, compiled=not args.python)  # compile (or load) the kernels before timing
    rows = defaultdict(Counter)
    verdicts = []
    old, old_seconds = Counter(), 0.0
    start = time.perf_counter()
    for a, b in positions:
        if args.old:
            t = time.perf_counter()
            before = compiled.evaluate(
                game, a, b, OLD_RULES, max_nodes=args.max_nodes, compiled=not args.python, combinations=False
            )
            old_seconds += time.perf_counter() - t
        verdict = compiled.evaluate(game, a, b, max_nodes=args.max_nodes, compiled=not args.python)
        if args.old:
            old[_change(before, verdict)] += 1
        row = rows[(a | b).bit_count()]
        row["positions"] += 1
        row[verdict.value or "none"] += 1
        if verdict.value is not None:
            verdicts.append((a, b, verdict))
    elapsed = time.perf_counter() - start - old_seconds
    if args.old:
        n = len(positions)
        print(
            f"without Specialbefore and combinations: {1000 * old_seconds / n:.3f} ms each; "
            f"decided only with them: {old['specialbefore']} by a Specialbefore, {old['combination']} by a "
            f"threat combination; a won't-win before, a win by a threat combination now: {old['stronger']}; "
            f"decided only without them: {old['lost']}; other verdicts changed: {old['changed']}"
        )
    print(
        f"{args.spec}: {len(positions)} positions, {len(verdicts)} decided, "
        f"{len(positions) / elapsed:.0f} positions/s, {1000 * elapsed / len(positions):.3f} ms each "
        f"({elapsed:.1f} s)"
    )
    values = [cr.FIRST_WINS, cr.SECOND_WINS, cr.FIRST_WONT_WIN, cr.SECOND_WONT_WIN]
    print("stones  positions  decided  " + "  ".join(values))
    for stones in sorted(rows):
        row = rows[stones]
        decided = sum(row[v] for v in values)
        print(
            f"{stones:6d} {row['positions']:10d} {decided:8d}  "
            + "  ".join(f"{row[v]:{len(v)}d}" for v in values)
        )
    if args.check:
        start = time.perf_counter()
        wrong = []
        for a, b, verdict in verdicts:
            cert = certificate.decode_certificate(certificate.encode_certificate(verdict))
            if certificate.check_certificate(game, a, b, cert) != verdict.value:
                wrong.append((a, b, verdict, "certificate"))
            if not AGREES[verdict.value](ref.minimax(rg, a, b)):
                wrong.append((a, b, verdict, "minimax"))
        print(
            f"checked {len(verdicts)} verdicts against minimax in {time.perf_counter() - start:.1f} s: "
            f"{len(wrong)} wrong"
        )
        for w in wrong[:10]:
            print("WRONG", w)
        sys.exit(1 if wrong else 0)


if __name__ == "__main__":
    main()
