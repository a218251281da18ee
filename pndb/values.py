"""Values and the records that carry them: the one place that knows the outcome order.

A value is an interval [lo, hi] over the ordered outcomes second-wins (0) < draw (1) < first-wins
(2); the six values are the six intervals. A first-player node takes the max of its children's
intervals, a second-player node the min, intersected with what the node had proven before.

Proof-number search answers yes/no questions. pndb asks two, both with the first player as
prover: q0 "value >= first-wins" and q1 "value >= draw"; every node keeps pn/dn for each.
"""

from enum import Enum, IntEnum
from typing import NamedTuple


class Outcome(IntEnum):
    """The end of a game, ordered from the first player's point of view."""

    SECOND_WINS = 0
    DRAW = 1
    FIRST_WINS = 2


S, D, F = Outcome.SECOND_WINS, Outcome.DRAW, Outcome.FIRST_WINS
THRESHOLDS = (F, D)  # q0: does the first player win; q1: does the first player avoid losing
QUESTIONS = ("first-wins?", "first-avoids-loss?")
INF = 1 << 62


class Value(Enum):
    """The six values; ``name`` is the value as users write it (``first-wins``), ``text`` says it
    in words, ``lo``/``hi`` are the interval."""

    UNKNOWN = (S, F, "unknown", "unknown")
    FIRST_WINS = (F, F, "first-wins", "first player wins")
    SECOND_WINS = (S, S, "second-wins", "second player wins")
    DRAW = (D, D, "draw", "draw")
    FIRST_WONT_WIN = (S, D, "first-wont-win", "first player does not win (draw or second player wins)")
    SECOND_WONT_WIN = (D, F, "second-wont-win", "second player does not win (draw or first player wins)")

    def __init__(self, lo, hi, name, text):
        self.lo = int(lo)
        self.hi = int(hi)
        self._name_ = name
        self.text = text

    @classmethod
    def of(cls, lo, hi):
        """The value of the interval [lo, hi]."""
        return _BY_INTERVAL[(int(lo), int(hi))]

    @classmethod
    def named(cls, name):
        """The value called ``name`` (``first-wins``, ...); KeyError for anything else."""
        return _BY_NAME[name]

    @property
    def exact(self):
        """True for the three values a finished solve gives."""
        return self.lo == self.hi

    def outcome(self):
        """The outcome of an exact value."""
        return Outcome(self.lo)


_BY_INTERVAL = {(v.lo, v.hi): v for v in Value}
_BY_NAME = {v.name: v for v in Value}


def intersect(a, b):
    """The intersection of the intervals ``a`` and ``b``, each (lo, hi): what is known when
    both are (lo > hi when they contradict each other)."""
    return max(a[0], b[0]), min(a[1], b[1])


class Status(IntEnum):
    """A position's status as the game rules give it (the same codes as the numba kernels).

    FIRST_WINS_NEXT / SECOND_WINS_NEXT: the game is on, but the player to move completes a win
    pattern with the next stone, so the position is decided one ply early."""

    ONGOING = 0
    FIRST_WON = 1
    SECOND_WON = 2
    DRAW = 3
    FIRST_WINS_NEXT = 4
    SECOND_WINS_NEXT = 5


STATUS_OUTCOME = {
    Status.FIRST_WON: F,
    Status.SECOND_WON: S,
    Status.DRAW: D,
    Status.FIRST_WINS_NEXT: F,
    Status.SECOND_WINS_NEXT: S,
}
GAME_OVER = (Status.FIRST_WON, Status.SECOND_WON, Status.DRAW)


def status_value(status):
    """The value of a decided status (a finished game, or a win with the next stone)."""
    outcome = STATUS_OUTCOME[Status(status)]
    return Value.of(outcome, outcome)


# ---------------------------------------------------------------- node flags and records

EXPANDED = 1
TERMINAL = 2
EVALUATED = (4, 8)  # the inner solver has searched this leaf for q0 / q1


class Fact(NamedTuple):
    """A proof (proven=True) or disproof of question q, and the interval it establishes."""

    q: int
    proven: bool

    @property
    def interval(self):
        return PROOF_FACT[self]


PROOF_FACT = {
    Fact(0, True): (F, F),
    Fact(0, False): (S, D),
    Fact(1, True): (D, F),
    Fact(1, False): (S, S),
}


def numbers_for(lo, hi, q, pn, dn):
    """pn/dn for question q: fixed when the interval decides the question."""
    t = THRESHOLDS[q]
    if lo >= t:
        return 0, INF
    if hi < t:
        return INF, 0
    return pn, dn


def good_for(lo, hi, fact):
    """True when [lo, hi] answers ``fact``'s question as its strategy needs (yes when proving)."""
    t = THRESHOLDS[fact.q]
    return lo >= t if fact.proven else hi < t


class Node(NamedTuple):
    """A stored node: its interval, flags, work spent on it, and pn/dn for both questions."""

    lo: int
    hi: int
    flags: int
    work: int
    pn0: int
    dn0: int
    pn1: int
    dn1: int

    def pn(self, q):
        return self.pn1 if q else self.pn0

    def dn(self, q):
        return self.dn1 if q else self.dn0

    @property
    def value(self):
        return Value.of(self.lo, self.hi)

    @property
    def expanded(self):
        return bool(self.flags & EXPANDED)

    @property
    def terminal(self):
        return bool(self.flags & TERMINAL)

    def evaluated(self, q):
        return bool(self.flags & EVALUATED[q])

    def decided(self, q):
        t = THRESHOLDS[q]
        return self.lo >= t or self.hi < t

    @classmethod
    def leaf(cls, lo=S, hi=F, flags=0, work=0, estimates=(1, 1, 1, 1)):
        """A record for an unexpanded or terminal node, with initial pn/dn estimates."""
        pn0, dn0 = numbers_for(lo, hi, 0, estimates[0], estimates[1])
        pn1, dn1 = numbers_for(lo, hi, 1, estimates[2], estimates[3])
        return cls(int(lo), int(hi), flags, work, pn0, dn0, pn1, dn1)

    @classmethod
    def terminal_of(cls, status):
        """The record of a child whose status decides it."""
        v = status_value(status)
        return cls.leaf(v.lo, v.hi, flags=TERMINAL)


NO_MOVE = 255


class Certificate(NamedTuple):
    """A position decided by game knowledge instead of moves (book format version 2): its kind
    and payload, as docs/book-format.md defines them; the game says what it proves."""

    kind: int
    payload: bytes


PAIRING = 1  # kind 1: a pairing strategy of a placement game without gravity


class Proof(NamedTuple):
    """A proof record: the interval proven and the strategy move for each question (NO_MOVE)."""

    lo: int
    hi: int
    move0: int
    move1: int

    def move(self, q):
        return self.move1 if q else self.move0

    def with_fact(self, fact, move):
        """This record after ``fact`` was proven with ``move`` as the strategy move."""
        lo, hi = intersect((self.lo, self.hi), PROOF_FACT[fact])
        return Proof(lo, hi, self.move0, move) if fact.q else Proof(lo, hi, move, self.move1)

    def strategy_move(self, fact):
        """The strategy move this record holds for ``fact``, or None. A move proving the other
        question serves when that question's fact implies this one's (first-wins implies
        draw-or-better; second-wins implies first-does-not-win)."""
        for q in strategy_questions(fact):
            if self.move(q) != NO_MOVE:
                return self.move(q)
        return None


def strategy_questions(fact):
    """The questions whose proof record's move serves as the strategy move for ``fact``, in the
    order they are asked: its own, then the other where that question's fact implies this one."""
    return [q for q in (fact.q, 1 - fact.q) if good_for(*Fact(q, fact.proven).interval, fact)]


EMPTY_PROOF = Proof(S, F, NO_MOVE, NO_MOVE)


def combine(first, own, kids):
    """The record of an expanded node from its own record and its children's records."""
    pick = max if first else min
    lo, hi = intersect((pick(c.lo for c in kids), pick(c.hi for c in kids)), (own.lo, own.hi))
    nums = []
    for q in (0, 1):
        t = THRESHOLDS[q]
        if lo >= t:
            nums += (0, INF)
        elif hi < t:
            nums += (INF, 0)
        else:
            pns = [c.pn(q) for c in kids]
            dns = [c.dn(q) for c in kids]
            if first:
                nums += (min(pns), min(sum(dns), INF - 1))
            else:
                nums += (min(sum(pns), INF - 1), min(dns))
    return Node(int(lo), int(hi), own.flags | EXPANDED, own.work, *nums)
