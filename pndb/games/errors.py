"""The games layer's errors, and how a user's text shows in their one-line messages; every
family uses them, and every front end catches them."""


class GameError(ValueError):
    """A game spec or rules file that cannot be used; the message says why in one line."""


class MoveError(ValueError):
    """A move that cannot be played; the message names the move and why, in one line."""


def shown(text, limit=60):
    """User text as an error message may quote it: every unprintable character (control, NUL,
    bidi override, lone surrogate) escaped, so that one plain line reaches the terminal, and at
    most ``limit`` characters in all (the middle elided with '…'), so that a 30,000-character
    input gives a short line."""
    text = str(text)
    if len(text) <= limit:
        whole = _escaped(text)
        if sum(map(len, whole)) <= limit:
            return "".join(whole)
    tail_room = (limit - 1) // 3
    head = _fitting(_escaped(text[: limit - 1 - tail_room]), limit - 1 - tail_room)
    tail = _fitting(_escaped(text[len(text) - tail_room :])[::-1], tail_room)[::-1]
    return "".join(head) + "…" + "".join(tail)


def _escaped(text):
    return [ch if ch.isprintable() else ch.encode("unicode_escape").decode("ascii") for ch in text]


def _fitting(pieces, room):
    """The longest prefix of ``pieces`` of at most ``room`` characters."""
    out = []
    for piece in pieces:
        room -= len(piece)
        if room < 0:
            break
        out.append(piece)
    return out
