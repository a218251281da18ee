"""Connect Four on small boards against the values the literature gives.

John Tromp solved Connect Four for every board of width + height <= 11 (and, later, larger
ones); his table of results is on https://tromp.github.io/c4/c4.html ("John's Connect Four
Playground") and is reproduced, extended to larger boards, in the README of
https://github.com/ChristopheSteininger/c4 (the table "Width x Height"). The values below are
those of that table, as the first player's result with perfect play. Pascal Pons's alpha-beta
solver (https://github.com/PascalPons/connect4, built for each size) gives the same values.

The boards pndb solves in a few seconds are solved here; the others are covered by
`python bench/connect4.py --tromp`.
"""

import pytest

from conftest import cli

# (width, height) -> the first player's result with perfect play; width + height <= 11.
TROMP = {
    (4, 4): "draw",
    (5, 4): "draw",
    (6, 4): "second-wins",
    (7, 4): "draw",
    (4, 5): "draw",
    (5, 5): "draw",
    (6, 5): "draw",
    (4, 6): "draw",
    (5, 6): "draw",
    (4, 7): "draw",
}

# Larger boards of the same table that issue 10's bench solves: 7x5 and 6x6 (Tromp), and the
# standard 7x6, a first player win (James D. Allen and Victor Allis, 1988).
LARGER = {(7, 5): "draw", (6, 6): "second-wins", (7, 6): "first-wins"}

# What pndb solves in a few seconds each on a 2-core machine; the rest (7x4, 6x5, 5x6 take a
# minute or more) are left to the bench.
QUICK = [(4, 4), (5, 4), (4, 5), (4, 6), (4, 7), (5, 5), (6, 4)]


def test_table_is_every_board_up_to_eleven():
    boards = {(w, h) for w in range(4, 8) for h in range(4, 8) if w + h <= 11}
    assert set(TROMP) == boards
    assert set(QUICK) <= boards


@pytest.mark.parametrize("width,height", QUICK, ids=[f"{w}x{h}" for w, h in QUICK])
def test_small_board_value(width, height, tmp_path):
    spec = f"connect4:{width}x{height}"
    r = cli("solve", spec, "--db", tmp_path / "db", "--quiet", "--max-seconds", 120)
    assert r.returncode == 0, r.stdout + r.stderr
    first = r.stdout.splitlines()[0]
    assert first.startswith(f"{spec}: ") and first.endswith(f"({TROMP[width, height]})"), first
