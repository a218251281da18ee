"""A position (an explore.PositionView) as `pndb play` draws it in a terminal: the board as the
game renders it, beside it the map of the colour areas where the game has them (Qango's: a
letter per area, coloured on a terminal), and the name of the pattern that won."""

import click

# a letter per area (not X or O: those are stones); colours of the 256-colour palette
AREA_LETTERS = "ABCDEFGHIJKLMNPQRSTUVWYZ"
AREA_COLOURS = (217, 117, 151, 222, 183, 228, 122, 218, 147, 193, 216, 152)
GAP = "    "


def board_text(view):
    """The board (view.text) and, where the game has colour areas, their map beside it: each
    cell by its area's letter. ANSI colours mark the areas (click.echo drops them where the
    output is no terminal)."""
    if not view.areas:
        return view.text
    area = {cell: i for i, cells in enumerate(view.areas) for cell in cells}
    board = view.text.splitlines()
    width = max(map(len, board))
    rows = []
    for r in range(view.height):
        letters = []
        for c in range(view.width):
            i = area.get(r * view.width + c)
            letters.append(" " if i is None else area_letter(i))
        rows.append(" ".join(letters))
    header = len(board) - view.height  # the board's lines above its rows (column names)
    beside = [""] * (header - 1) + ["colour areas"] + rows
    return "\n".join(f"{line:<{width}}{GAP}{extra}".rstrip() for line, extra in zip(board, beside))


def area_letter(i):
    letter = AREA_LETTERS[i % len(AREA_LETTERS)]
    return click.style(letter, fg="black", bg=AREA_COLOURS[i % len(AREA_COLOURS)])


def pattern_name(view, cells, cell_name):
    """What the win pattern ``cells`` (grid indices) is, in words, with its cells named by
    ``cell_name(cell)``: a colour area, a line of k (and its direction), a square, or a pattern."""
    places = sorted(divmod(c, view.width) for c in cells)
    rows = {r for r, _ in places}
    cols = {c for _, c in places}
    k = len(places)
    steps = {(r2 - r1, c2 - c1) for (r1, c1), (r2, c2) in zip(places, places[1:])}
    if any(set(cells) == set(a) for a in view.areas):
        kind = "a colour area"
    elif steps == {(0, 1)}:
        kind = f"{k} in a row across"
    elif steps == {(1, 0)}:
        kind = f"{k} in a row down"
    elif steps in ({(1, 1)}, {(1, -1)}):
        kind = f"{k} in a row diagonally"
    elif len(rows) == len(cols) and k == len(rows) ** 2 and rows_and_cols_consecutive(rows, cols):
        kind = f"a {len(rows)}x{len(rows)} square"
    else:
        kind = "a winning pattern"
    return f"{kind}: {' '.join(cell_name(c) for c in sorted(cells))}"


def rows_and_cols_consecutive(rows, cols):
    return max(rows) - min(rows) == len(rows) - 1 and max(cols) - min(cols) == len(cols) - 1
