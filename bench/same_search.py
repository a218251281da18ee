"""Whether a change leaves the inner search the same: the records of two checkouts compared.

For each game, the inner solver searches the start position (20,000 nodes) and 40 random mid-game
positions (3,000 nodes each, bench/inner.py's positions), for both questions, each with a new
solver. A record holds the pn, dn and work of each position, the nodes searched, the number of
proof records and a hash of them (keys and moves). A change meant to make the search faster
without changing it (a cheaper child, a prefetch) must give the same records; one that changes
which proof extraction hands out shows as a different hash and count with the same numbers.

With --base DIR the records of the pndb package of checkout DIR (e.g. a temporary worktree of
main) are made in a subprocess and compared with this checkout's, one line per search; without
it this checkout's records are printed as JSON.

    python bench/same_search.py --base /tmp/base
    python bench/same_search.py --games qango6 mnk:5,5,4 > records.json
"""

import argparse
import hashlib
import json
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from inner import midgame_positions, new_solver, tree_env  # noqa: E402  (bench/inner.py; sets NUMBA_CACHE_DIR)

GAMES = ["qango6", "mnk:5,5,4", "connect4:7x6", "connect4:6x5", "tictactoe", "qango6:castle"]
START_NODES = 20_000
MIDGAME_NODES = 3_000
MIDGAME_POSITIONS = 40


def records(spec):
    """The records of one game's searches, in this process."""
    import numpy as np

    from pndb import inner
    from pndb.games import load_game

    game = load_game(spec)
    start = np.zeros(1, np.uint64)
    ka, kb = midgame_positions(game, MIDGAME_POSITIONS, 7)
    rows = []
    for part, (keys_a, keys_b, budget) in {
        "start": (start, start, START_NODES), "midgame": (ka, kb, MIDGAME_NODES)
    }.items():  # fmt: skip
        for q in (0, 1):
            solver = new_solver(game, budget, 64)
            result = solver.run(inner.InnerJob(keys_a, keys_b, q, budget))
            p = result.proofs
            moves = p.move.astype(np.int64).view(np.uint64)
            digest = hashlib.sha1(np.concatenate([p.key_a, p.key_b, moves]).tobytes()).hexdigest()[:12]
            rows.append(dict(
                game=spec, part=part, q=q, pn=result.pn.tolist(), dn=result.dn.tolist(),
                work=result.work.tolist(), nodes=solver.nodes, proof_records=len(p.key_a), proofs=digest,
            ))  # fmt: skip
    return rows


def compare(base_rows, rows):
    """One line per search: 'same', or what differs (and whether the same positions were solved)."""
    differ = 0
    for old, new in zip(base_rows, rows):
        name = f"{new['game']:14} {new['part']:8} q{new['q']}"
        fields = [k for k in new if old[k] != new[k]]
        if not fields:
            print(f"{name}  same")
            continue
        differ += 1
        alike = all((x == 0) == (y == 0) for x, y in zip(old["pn"] + old["dn"], new["pn"] + new["dn"]))
        print(f"{name}  DIFFERS in {', '.join(fields)}; the same positions solved: {alike}; "
              f"nodes {old['nodes']} -> {new['nodes']}; "
              f"proof records {old['proof_records']} -> {new['proof_records']}")  # fmt: skip
    print(f"{len(rows) - differ} of {len(rows)} searches the same")
    return differ


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--base", help="a checkout to compare with (its pndb package)")
    ap.add_argument("--games", nargs="+", default=GAMES)
    args = ap.parse_args(argv)
    if not args.base:
        json.dump([row for spec in args.games for row in records(spec)], sys.stdout)
        return 0
    cmd = [sys.executable, __file__, "--games", *args.games]
    out = subprocess.run(cmd, capture_output=True, text=True, check=True, env=tree_env(args.base)).stdout
    base_rows = json.loads(out)
    rows = [row for spec in args.games for row in records(spec)]
    return 1 if compare(base_rows, rows) else 0


if __name__ == "__main__":
    sys.exit(main())
