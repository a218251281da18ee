"""Looking positions up in a book as read: what it tells of a position and of each move."""

from pndb.book.format import BookError
from pndb.values import Status, Value, intersect, status_value


def known_interval(book, pos, lookahead=1):
    """What the book tells about the position: its record's value intersected with what its
    children's records give (``lookahead`` plies deep), as an interval."""
    game = book.game
    state = game.status(pos)
    if state != Status.ONGOING:
        v = status_value(state)
        return v.lo, v.hi
    _, value = book.lookup(pos)
    lo, hi = (value.lo, value.hi) if value is not None else (0, 2)
    if lookahead > 0:
        kids = [known_interval(book, game.play(pos, m), lookahead - 1) for m in game.legal_moves(pos)]
        pick = max if game.first_to_move(pos) else min
        lo, hi = intersect((lo, hi), (pick(k[0] for k in kids), pick(k[1] for k in kids)))
    if lo > hi:
        raise BookError(f"the book's values contradict each other at {game.position_text(pos)}")
    return lo, hi


def move_values(book, pos):
    """[(move, Value)] for every legal move at ``pos``, as far as the book knows."""
    game = book.game
    return [(m, Value.of(*known_interval(book, game.play(pos, m)))) for m in game.legal_moves(pos)]
