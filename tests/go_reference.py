"""A slow, plain model of Go as docs/go.md states it, written from that page alone and sharing no
code with pndb: a board is a tuple of '.', 'B', 'W' (row-major), groups and liberties by flood
fill, the history a frozenset of boards. The tests compare pndb's Go kernels and game with it.
"""

from typing import NamedTuple

EMPTY, BLACK, WHITE = ".", "B", "W"
PASS = "pass"


def other(colour):
    return WHITE if colour == BLACK else BLACK


class State(NamedTuple):
    board: tuple  # one of EMPTY, BLACK, WHITE per point, row-major
    to_move: str  # BLACK or WHITE
    passes: int  # passes just played in a row (2: the game is over)
    history: frozenset  # every board of the game so far, the current one included


class RefGo:
    def __init__(self, width, height, komi=0):
        self.width, self.height, self.komi = width, height, komi
        self.points = width * height

    def start(self):
        board = (EMPTY,) * self.points
        return State(board, BLACK, 0, frozenset([board]))

    def adjacent(self, p):
        row, col = divmod(p, self.width)
        out = []
        if col > 0:
            out.append(p - 1)
        if col < self.width - 1:
            out.append(p + 1)
        if row > 0:
            out.append(p - self.width)
        if row < self.height - 1:
            out.append(p + self.width)
        return out

    def group(self, board, p):
        """The stones connected to the stone on p, and their liberties."""
        colour = board[p]
        stones, liberties, todo = {p}, set(), [p]
        while todo:
            q = todo.pop()
            for n in self.adjacent(q):
                if board[n] == EMPTY:
                    liberties.add(n)
                elif board[n] == colour and n not in stones:
                    stones.add(n)
                    todo.append(n)
        return stones, liberties

    def place(self, board, p, colour):
        """(board after a stone of ``colour`` on the empty point p and its captures, stones
        captured), or None when it is suicide."""
        cells = list(board)
        cells[p] = colour
        captured = 0
        for n in self.adjacent(p):
            if cells[n] == other(colour):
                stones, liberties = self.group(cells, n)
                if not liberties:
                    for s in stones:
                        cells[s] = EMPTY
                    captured += len(stones)
        if not self.group(cells, p)[1]:
            return None
        return tuple(cells), captured

    def over(self, state):
        return state.passes >= 2

    def legal_moves(self, state):
        """The legal moves: points ascending, then pass (none once the game is over)."""
        if self.over(state):
            return []
        out = []
        for p in range(self.points):
            if state.board[p] != EMPTY:
                continue
            placed = self.place(state.board, p, state.to_move)
            if placed is not None and placed[0] not in state.history:
                out.append(p)
        return out + [PASS]

    def play(self, state, move):
        if move not in self.legal_moves(state):
            raise ValueError(f"illegal move {move}")
        if move == PASS:
            return State(state.board, other(state.to_move), state.passes + 1, state.history)
        board, _ = self.place(state.board, move, state.to_move)
        return State(board, other(state.to_move), 0, state.history | {board})

    def area(self, board, colour):
        """Tromp-Taylor area: stones of ``colour`` and empty points that reach it but not the other."""
        points = sum(1 for c in board if c == colour)
        seen = set()
        for p in range(self.points):
            if board[p] != EMPTY or p in seen:
                continue
            region, borders, todo = {p}, set(), [p]
            while todo:
                q = todo.pop()
                for n in self.adjacent(q):
                    if board[n] == EMPTY and n not in region:
                        region.add(n)
                        todo.append(n)
                    elif board[n] != EMPTY:
                        borders.add(board[n])
            seen |= region
            if borders == {colour}:
                points += len(region)
        return points

    def margin(self, board):
        return self.area(board, BLACK) - self.area(board, WHITE)

    def outcome(self, board):
        """2 first-wins (Black), 1 draw, 0 second-wins, at this komi."""
        m = self.margin(board)
        return 2 if m > self.komi else 1 if m == self.komi else 0

    def value(self, state):
        """The exact outcome with perfect play from ``state``: plain alpha-beta over the three
        outcomes, with a table of bounds keyed by the whole state (the history included: the
        state decides everything that follows). Stone moves are tried centre first, and pass
        first when it ends the game (a cut found early saves the most)."""
        bounds = {}
        centre = ((self.width - 1) / 2, (self.height - 1) / 2)

        def order(s):
            moves = self.legal_moves(s)
            stones = sorted(
                (m for m in moves if m != PASS),
                key=lambda p: (abs(p % self.width - centre[0]) + abs(p // self.width - centre[1]), p),
            )
            return [PASS] + stones if s.passes else stones + [PASS]

        def search(s, alpha, beta):
            if self.over(s):
                return self.outcome(s.board)
            lo, hi = bounds.get(s, (0, 2))
            if lo >= beta or lo == hi:
                return lo
            if hi <= alpha:
                return hi
            alpha, beta = max(alpha, lo), min(beta, hi)
            black = s.to_move == BLACK
            best = 0 if black else 2
            a, b = alpha, beta
            for m in order(s):
                v = search(self.play(s, m), a, b)
                if black:
                    best, a = max(best, v), max(a, v)
                else:
                    best, b = min(best, v), min(b, v)
                if a >= b:
                    break
            if best <= alpha:
                bounds[s] = (lo, best)  # failed low: an upper bound
            elif best >= beta:
                bounds[s] = (best, hi)  # failed high: a lower bound
            else:
                bounds[s] = (best, best)
            return best

        return search(state, -1, 3)

    def name(self, move):
        if move == PASS:
            return PASS
        row, col = divmod(move, self.width)
        return f"{chr(97 + col)}{row + 1}"
