"""games/qubic.json, the Qubic (4x4x4) game file: its lines are the 76 of the cube, found here by
walking every direction from every cell, and its symmetries are 192 automorphisms that map
lines onto lines (pndb checks that too when it loads a game), more than the cube's 48."""

import itertools
import json
from pathlib import Path

from pndb.games import load_game

FILE = Path(__file__).resolve().parent.parent / "games" / "qubic.json"


def cube_lines():
    """The lines of four cells of the 4x4x4 cube, as sets of the file's cells (layer z in
    columns 4z..4z+3 of a 16x4 grid, y the row)."""
    lines = set()
    for p in itertools.product(range(4), repeat=3):
        for d in itertools.product((-1, 0, 1), repeat=3):
            points = [tuple(p[i] + k * d[i] for i in range(3)) for k in range(4)]
            if any(d) and all(0 <= c < 4 for q in points for c in q):
                lines.add(frozenset(y * 16 + z * 4 + x for x, y, z in points))
    return lines


def test_qubic_has_the_cubes_76_lines_and_192_automorphisms():
    rules = json.loads(FILE.read_text())
    lines = cube_lines()
    assert len(lines) == 76
    assert {frozenset(p) for p in rules["win_patterns"]} == lines
    symmetries = {tuple(s) for s in rules["symmetries"]}
    assert len(symmetries) == 192 and tuple(range(64)) in symmetries
    for s in symmetries:
        assert {frozenset(s[c] for c in line) for line in lines} == lines
    game = load_game(f"file:{FILE}")
    assert len(game.symmetries) == 192
