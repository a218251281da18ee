"""The inner solver: depth-first proof-number search (df-pn) with the 1+eps trick, in numba.

The outer search hands leaves to this solver as contracts.LeafJob values (canonical keys, a
question, a node budget, optional pn/dn thresholds at which a search returns, as a df-pn frame
does) and gets back contracts.LeafResult values (InnerSolver.evaluate, the contracts.Evaluator
entry): plain data only, so that a job could run in another process unchanged. Inside, a job is
an :class:`InnerJob` of key arrays and its answer an :class:`InnerResult` of arrays, with this
solver's numbers (INF, 32 bits; larger thresholds are clamped to it). A question is
"value >= first-wins" (q0) or "value >= draw" (q1), the first player being the prover. Every
position the job solves comes back with its proof: the strategy owner's move at every
owner-to-move position of its proof tree, extracted at once (before later searches can evict
what the table knew), and searched again when the table no longer holds it, so that a proof
never depends on the table.

The search keeps, for each position on its stack, the position's images under every symmetry
of the board; a child's canonical key (the lexicographically smallest (first, second) image)
is then one OR and compare per symmetry, or one OR for most children (those that keep the
position's orientation: kernels.own_key_below), and the children's statuses come from the
parent's threat cells (kernels.child_status). Children that are decided need neither key nor table.
Nor do most of the others while the table is young: each stored position sets a bit for its
orbit hash (kernels.StepTables.orbit_hash, a sum over its stones that is the same for all its
images, a child's its parent's plus one term), and a child whose bit is clear is not in the table
and starts with the numbers of a child the table does not know, its key made only if the frame
enters it (three quarters of the children of the qango6 start's search, which reads a twentieth
of its children from the table). Without gravity such children all start with the same numbers,
so the frame does not write them: it keeps their ranks in the move order as a mask (Stack.pending),
counts them in its sum and its least two numbers at once, and writes one when it enters it (the
same search, 7% less time on the qango6 start). Once the table holds SEEN_ENTRIES positions nearly
every bit is set, and the bits are no longer asked.

Threats (any placement game, Connect Four included): a position whose mover can complete a
pattern with a legal stone is decided without children. Otherwise a child is left out when it
loses at once for its mover's goal: the opponent can complete a pattern next in it (a move that
does not block the opponent's single threat, or, with gravity, a move right under an opponent's
threat cell), or it ends the game short of the mover's goal (a draw by a full board or the disc
cap, for the player who needs a win). With one playable threat of the opponent the block is the
only child; with two the position has no child and is lost; a draw the mover's goal allows
decides the position for it. This is sound under every rule pndb has: a child left out is lost
for the question whatever follows (the opponent wins with its next stone, which is legal: the
first-stone rule binds only the first stone, and the game is not over in the child by the disc
cap or a full board, checked first). Proof extraction needs nothing of the search for it: at the
opponent's positions it walks every legal reply, those left out included, and at the owner's
positions it finds the winning stone by the children's statuses (kernels.statuses_into; it
makes the canonical keys of the children it walks on alone).

Threat sequences (without gravity; up to THREAT_DEPTH attacker moves, PNDB_THREAT_DEPTH, 0: off): where the
opponent has no threat, a position whose mover wins by a threat sequence (patterns.threat_sequence:
stones that each make one threat, the opponent's block forced, ending in a stone that makes two)
is decided for the mover without children, as the single-threat and double-threat cases are;
the attacker's other moves are not tried. A position searched and found without one is marked
so in its table entry (NO_SEQUENCE) and not asked again while the table holds it. A frame that
enters a child first asks whether its opponent, were it to move, has a sequence: when it has
none, it has none after any stone of the player to move either (that stone, the defender's,
only takes cells and patterns from the attacker, and a sequence's stones then reach the disc
cap sooner; the first-stone rule is why this is asked only with a stone on the board), so the
children it enters skip the search (tests/test_threats.py checks the claim child by child).
The answer is kept in the frame's table entry (OPPONENT_ASKED, OPPONENT_NONE): df-pn enters a
position many times, and on the qango6 start a third of these searches were of positions
searched before (432 in 1,700 nodes, 290 with the marks; 888 of the player to move besides).
When it has one, the frame keeps its moves (Stack.line, SEQUENCE_FOUND), and each child it
enters first checks whether they, taken to the child's image, are a sequence there that the
search would accept (patterns.sequence_holds: a pass over the patterns through a few cells), and
searches only when they are not; a sequence a child's search finds replaces the frame's line for
the children after it (siblings' sequences share most moves). The check accepts only lines the
search could find, so the same positions are decided; the position's entry keeps no first stone
then (proof extraction searches for one, and hands out the same proof as without the check). On
the qango6 start 606 of the 866 sequences the search found were so checked instead of searched
(187 checks failed; extraction searched 101 instead of 66): 673 searches and 793 checks instead
of 1,244 searches; on mnk:5,5,4 (10,000 nodes) 2,277 of 3,298 found were checked. Proof
extraction plays the sequence's first stone that the search stored with the position (it wins
outright, so it serves either question), or else asks the same search at an owner-to-move
position where no stone wins by its status, before it reads the table (the search decided most
positions that have a sequence by it; a NO_SEQUENCE mark skips it; on the qango6 start 24 of the
125 sequences extraction walks are so stored, 59 without the check above), and walks the
sequence as any proof (sequence_move): the owner's move at each of its positions, every reply of
the opponent (those that do not block lose at once), so a book needs no certificate for it.
Measured (bench/threats.py, depth 3 against off, whole solves with their books verified, on a
shared 2-core machine):
qango6:castle 57 -> 15 s, qango6:tournament 221 -> 100 s, qango7plus:tournament 64 -> 39 s,
qango7plus:edges stopped at 300 s -> 35 s, mnk:5,5,4 12 -> 10 s, mnk:7,7,5 the same (5.1 s);
mnk:8,8,5 (unsolved) searches about a fifth fewer inner nodes a second.

A child the table does not know yet starts with the number its player to move sums at the
child's estimated replies, and the other number at 1. The estimate is the child's legal moves
(mobility), so that a position is not expanded only to learn how many moves it has; with gravity
(Connect Four) it is the mover's threats playable in the child when there are any (every other
reply loses at once). With gravity children are ordered by threats (the mover's patterns the
stone brings to one stone from completion, counted twice, plus the opponent's patterns it takes
from two missing), ties in the game's static order: forcing moves are so searched first, as in a
threat-space search. Starting numbers are only numbers: a position is decided by facts alone, so
they change no answer. Without gravity the threat order and the forced replies were measured
(bench/inner.py) and left out: nearly every stone makes a threat in Qango 6 and mnk:5,5,4; with
forced replies the inner search solved fewer random Qango 6 positions (377 of 400 instead of
391), and the order alone solved a few more (393, and 326 instead of 319 for mnk:5,5,4) but
tripled the expansions of a whole qango6:castle solve (9 to 28). Mobility against (1, 1) without
gravity: the qango6 start took 1,700 nodes instead of 4,165; disproving mnk:5,5,4's first-player
win in a 256 MB table 7.1 M nodes in 8.8 s instead of 21.1 M in 19.8 s; 346 of 400 random
mnk:5,5,4 questions solved in 10,000 nodes instead of 323 (Qango 6: 394 instead of 393). Half or
a quarter of the mobility took fewer nodes on the qango6 start (495, 434) but more on the
disproof (11.4 M, 16.0 M).

Knowledge (with ``knowledge``): at each position it expands and each it reads a proof from, the
search asks the game's certificate evaluator, compiled: pairing strategies without gravity,
Allis' rules in Connect Four (knowledge_decides). A decided position gets no children, and its
proof record says CERTIFIED and carries the certificate the evaluator found (its kind byte and
payload), which the outer search stores for the book as it is: the export checks each
certificate it writes with the game's own definitions, and `pndb check` every one stored. Where
knowledge rarely decides anything for a question at a number of empty cells (fewer than one in
KNOWLEDGE_RARE of KNOWLEDGE_TRIAL tries there), the search stops asking there
(InnerSolver.count_knowledge). A position where knowledge decides nothing is marked so in its
table entry and not asked again while the table holds it (df-pn enters a position many times,
and reads its proof after the search); proof extraction asks a pairing only for the owner it can
decide for. With knowledge, games without gravity also drop moves on dead cells
(patterns.prune_dead: never better than a live move), which needs no certificate: proof
extraction still reads every reply of the defending side.

The transposition table is one record array of 32-byte entries (key halves, open numbers and
facts with work together), probed in one aligned window of WINDOW entries, a cache line, and
replaced by least work: a child's probe is one prefetched line. (With windows of two lines,
four entries, disproving mnk:5,5,4's first-player win in a 16 MB table took 16% more nodes and
17% more time: bench/inner.py --games mnk:5,5,4 --only-q0 --table-mb 16 --start-nodes
100000000.) Facts (what is proven of the value) serve both questions: proven >= first-wins
implies proven >= draw; disproven >= draw implies disproven >= first-wins.
It starts at 2 MB and grows fourfold once half full, up to its limit (--inner-mb), so that
memory follows what the search stores (a table touched at random is soon resident in full). It
grows in place, in memory reserved for its limit at the start and backed by the OS only where
touched, in huge pages (2 MB) where the OS gives them: an entry's new place is its window or one
of three beyond the old table, so that growing moves three quarters of the entries and copies
no table but the first (2 MB, into the reserved memory). Against a new table per growth in 4 KB
pages (bench/ab.py, 2 M nodes): the mnk:5,5,4 and connect4:7x6 starts took about 15% less time.
"""

import math
import mmap
from typing import NamedTuple

import numba as nb
import numpy as np
from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic

from pndb import jit
from pndb.games import kernels as K
from pndb.games import connect4_rules as C
from pndb.games import patterns as P
from pndb import values
from pndb.contracts import CERTIFIED, EPS, LeafProofs, LeafResult
from pndb.defaults import INNER_ENTRY_BYTES as ENTRY_BYTES
from pndb.defaults import inner_table_capacity
from pndb.games.spec import arrays_from_keys, keys_from_arrays
from pndb.values import PAIRING, Certificate

jit.realise()  # the kernels below call those of pndb.games, which must be numba's then

INF = np.int64((1 << 32) - 1)  # open numbers saturate below it: pn and dn fit 32 bits each
NO_LIMIT = np.int64(1 << 62)  # a node budget that is never reached
MAX_DEPTH = 65
UNKEYED = -1  # Stack.sym of a child whose key is not made yet (not in the table when written)
RANK_BITS = np.int64(6)  # a frame's children compared by near number, then rank: one key, number << 6 | rank
NO_CHILD_KEY = INF << RANK_BITS  # ... above every key of a child whose near number is below INF
WINDOW = 2  # entries probed per key: one aligned cache line (a table is aligned to cache lines)
INITIAL_ENTRIES = 1 << 16  # 2 MB: a table starts there and grows fourfold once half full
SEEN_WORDS = 1 << 10  # Table.seen: 65,536 bits (8 KB), one per value of an orbit hash's top 16 bits
SEEN_ENTRIES = 1 << 12  # ... asked while the table holds fewer entries (later nearly all are set)
KEY_A, KEY_B, NUMS, META = 0, 1, 2, 3  # the four words of a table entry
# META: bits 0-1 the lowest outcome proven (lo), 2-3 the highest not excluded (hi), 4 the
# question NUMS holds numbers for, 5 + q: knowledge (at the solver's pair budget) decides nothing
# for question q here, 7: no threat sequence (at the solver's depth) wins for the player to move
# here, 8 + q: knowledge decided question q here (in the search), 10 + q: proof extraction has
# handed out this position's proof for question q, all of it, 12: the opponent's threat
# sequences have been searched here (as if it were to move), 13: ... and it has none, 14-20 the
# first stone of a threat sequence that wins for the player to move here, plus one (0: none
# known), 21-63 work.
# An entry in use always has work >= 1, so an all-zero entry (as the OS hands out pages) is empty.
LO_HI_OPEN = 2 << 2  # lo 0, hi 2: nothing proven
NO_VERDICT = np.uint64(1 << 5)  # META bit 5 + q: knowledge has been asked for q and decides nothing
NO_SEQUENCE = np.uint64(1 << 7)  # META bit 7: the player to move has no threat sequence (threat_sequence)
KNOWLEDGE_DECIDED = np.uint64(1 << 8)  # META bit 8 + q: the search's knowledge decided q here
REPORTED = np.uint64(1 << 10)  # META bit 10 + q: extract_proof has handed out the proof for q
OPPONENT_ASKED = np.uint64(1 << 12)  # META bit 12: the frame's opponent sequences searched here
OPPONENT_NONE = np.uint64(1 << 13)  # META bit 13: ... and none found
FLAGS = np.uint64(0x3FF0)  # META bits 4-13
UNKNOWN = np.uint64(1 | 1 << 32)  # NUMS of a new entry: pn 1, dn 1
SEQUENCE_SHIFT = np.uint64(14)
SEQUENCE_CELL = np.uint64(0x7F << 14)  # META bits 14-20: a winning threat sequence's first stone + 1
WORK_SHIFT = np.uint64(21)
LOW32 = np.uint64(0xFFFFFFFF)
EMPTY = np.uint64(0xFFFFFFFFFFFFFFFF)  # no position has 64 first-player stones
# a frame's children count, when its expansion (in solve_one) finds the position decided:
DECIDED_FOR_MOVER = -1  # a child wins for the player to move (or draws where that suffices)
DECIDED_AGAINST_MOVER = -2  # knowledge decides the question for the other player
SEQUENCE_UNASKED = 0  # a frame's opponent threat sequences: to search when it enters a child,
SEQUENCE_NONE = 1  # searched and none found,
SEQUENCE_UNHELPFUL = 2  # not to be searched (threats on the board, gravity, no stone yet), or found before
SEQUENCE_FOUND = 3  # Stack.line holds a sequence, found here or by a child: the children entered try it first
SLICE = 100_000  # nodes of a large budget spent between two looks at should_stop()
KNOWLEDGE_TRIAL = 2_000  # tries at one number of empty cells before judging whether knowledge pays
KNOWLEDGE_RARE = 100  # ... it pays when at least one in this many decides the question


class InnerJob(NamedTuple):
    """Positions (canonical keys) to search for one question, in turn."""

    keys_a: np.ndarray  # uint64
    keys_b: np.ndarray  # uint64
    question: int  # 0: value >= first-wins, 1: value >= draw
    budget: int  # nodes per position
    stop_on_proof: bool = False  # stop after the first proven position
    stop_on_disproof: bool = False  # stop after the first disproven position
    th_pn: int = INF  # search a position only while its pn is below this (INF or more: no threshold)
    th_dn: int = INF  # ... and its dn below this


class ProofRecords(NamedTuple):
    """One record per owner-to-move position of the proofs found: the owner's move there, or
    CERTIFIED and the certificate that decides it."""

    key_a: np.ndarray  # uint64
    key_b: np.ndarray  # uint64
    move: np.ndarray  # int64, a cell of the canonical position (key_a, key_b), or CERTIFIED
    question: np.ndarray  # int64
    proven: np.ndarray  # bool: a proof (owner: first player) or a disproof (second player)
    certificate_size: np.ndarray  # int64: bytes of the record's certificate in certificates (0: a move)
    certificates: np.ndarray  # uint8: the certificates of the CERTIFIED records in order, each its
    # kind byte and payload (docs/book-format.md)


class ProofBuffers(NamedTuple):
    """Proof records as extract_proof appends them: arrays doubled when full, and the counts."""

    key_a: np.ndarray  # uint64
    key_b: np.ndarray  # uint64
    move: np.ndarray  # int64
    certificate_size: np.ndarray  # int64
    certificates: np.ndarray  # uint8
    used: np.ndarray  # int64[2]: records, certificate bytes


class InnerResult(NamedTuple):
    """Numbers of the positions searched (a prefix of the job's when it stopped early); a
    position is proven when pn == 0, disproven when dn == 0. work: nodes spent on each,
    extracting its proof included. subtree: the nodes the table has recorded below each
    position after the job, over all the searches of this solver that went through it (0 when
    the table does not hold it)."""

    pn: np.ndarray
    dn: np.ndarray
    work: np.ndarray
    proofs: ProofRecords
    subtree: np.ndarray


class TableMemory(NamedTuple):
    used: int  # bytes of the entries in use
    touched: int  # estimated bytes of the table the OS has backed so far
    allocated: int  # bytes of the table as it is now
    limit: int  # bytes it may grow to (--inner-mb)


class Table(NamedTuple):
    # uint64[size, 4]: KEY_A, KEY_B, NUMS (pn | dn << 32), META; once grown, the arena's first rows
    recs: np.ndarray
    filled: np.ndarray  # int64[1]: entries in use
    arena: np.ndarray  # uint64[limit, 4]: the memory it may grow into, zero beyond recs
    # uint64[SEEN_WORDS]: the bits of the orbit hashes (kernels.StepTables) of the positions
    # stored: a child whose bit is clear is not in the table, and needs neither its canonical key
    # nor a read until it is entered (on the qango6 start three quarters of the children)
    seen: np.ndarray


class Stack(NamedTuple):
    """One frame per depth: the position's images, its key, thresholds, node count at entry,
    and its ongoing children with their numbers as last read from the table (only the child
    just searched is read again)."""

    img: np.ndarray  # uint64[depth, 2 * nsym]: (a, b) under each symmetry; symmetry 0 is the position
    child: np.ndarray  # uint64[2 * nsym]: the same for the child being entered, before it is made canonical
    avail: np.ndarray  # uint64[depth]: cells a stone can take, before the first-move restriction
    # uint64[depth, 2]: the threat cells (K.threats_of_both) of the position's mover and of its
    # opponent; a child's from its parent's: a threat pattern has no empty cell but its threat,
    # so the stone on a cell blocks no threat but one on that cell, and makes those of
    # K.threats_made: one pass over the patterns through the cell instead of over all
    threats: np.ndarray
    key_a: np.ndarray
    key_b: np.ndarray
    th_pn: np.ndarray
    th_dn: np.ndarray
    start: np.ndarray
    n: np.ndarray  # ongoing children; -1 when a child decides the position for its mover
    marks: np.ndarray  # uint64[depth]: NO_VERDICT bits for the frame's table entry (the expansion)
    last: np.ndarray
    moves: np.ndarray
    sym: np.ndarray  # the symmetry mapping each child to its canonical key (UNKEYED: not made yet)
    ka: np.ndarray
    kb: np.ndarray
    near: np.ndarray  # int64[depth, 64]: each child's number the frame minimises (pn at an OR node)
    far: np.ndarray  # ... and the one it sums (dn at an OR node)
    pairs: np.ndarray  # int64[MAX_PAIRS, 2]: scratch for pairing searches
    cover: P.CoverWork  # ... and the rest of their scratch arrays
    certificate: np.ndarray  # uint8: the certificate knowledge_decides found (kind byte, payload)
    score: np.ndarray  # int64[64]: scratch for the expansion: each child's threats made, for its order
    near_syms: np.ndarray  # int64[nsym]: scratch for the expansion: K.near_symmetries of its position
    opponent_sequence: np.ndarray  # int64[depth]: SEQUENCE_*: the opponent's threat sequences, if asked
    sequence_move: np.ndarray  # int64[depth]: the first stone of a threat sequence that decided it, or -1
    # int64[depth, P.MAX_THREAT_DEPTH + 1]: with SEQUENCE_FOUND, the attacker moves (-1 ended) of a
    # sequence of the frame's opponent: its own, or the last a child found
    line: np.ndarray
    hashes: np.ndarray  # uint64[depth]: the position's orbit hash (kernels.StepTables)
    limit: np.ndarray  # uint64[depth]: the position's kernels.own_key_below, for its children's keys
    replies: np.ndarray  # int64[depth, 64]: each child's estimated non-losing replies (the expansion)
    rank: np.ndarray  # int64[depth, 64]: each child's place in the move order (ties go to the first)
    # uint64[depth]: the children not written yet (without gravity), by rank: each starts with the
    # numbers of a child the table does not know, the same for all; written when entered
    pending: np.ndarray
    knowledge_tries: np.ndarray  # int64[65, 2]: per number of empty cells, knowledge tries, decisions
    knowledge_skip: np.ndarray  # bool[65]: numbers of empty cells where the search no longer asks
    threat_depth: np.ndarray  # int64[1]: the most attacker moves of a threat sequence (0: none)
    seq_levels: np.ndarray  # uint64[P.MAX_THREAT_DEPTH, 4]: scratch for P.threat_sequence
    seq_tried: np.ndarray  # int64[P.MAX_THREAT_DEPTH]: ... and the moves it tries


def new_table(megabytes):
    """A transposition table that may grow to ``megabytes`` (a power of two of entries, at least
    1024); it starts at INITIAL_ENTRIES, so that a small search costs little memory and no time
    to clear it, in memory of its own (a search on a new solver's table in a new mapping took 6%
    more time on the qango6 start: bench/ab.py), and grows into an arena reserved for its limit."""
    limit = inner_table_capacity(megabytes)
    size = min(limit, INITIAL_ENTRIES)
    recs = aligned_rows(np.zeros(size * ENTRY_BYTES + 64, np.uint8), size, 64)  # to cache lines
    return Table(
        recs=recs,
        filled=np.zeros(1, np.int64),
        arena=zero_arena(limit) if limit > size else recs,
        seen=np.zeros(SEEN_WORDS, np.uint64),
    )


HUGE_PAGE = 2 << 20


def zero_arena(entries):
    """uint64[entries, 4] of zeros, 2 MB aligned, whose pages the OS backs only when touched
    (a private anonymous mapping), in huge pages where it gives them for the asking (Linux's
    transparent huge pages in their "madvise" mode): a fault backs 2 MB, not 4 KB."""
    if not hasattr(mmap, "MAP_PRIVATE"):  # no POSIX mmap: zeros the OS backs as it will
        return np.zeros((entries, 4), np.uint64)
    memory = mmap.mmap(-1, entries * ENTRY_BYTES + HUGE_PAGE, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
    if hasattr(mmap, "MADV_HUGEPAGE"):
        memory.madvise(mmap.MADV_HUGEPAGE)
    return aligned_rows(np.frombuffer(memory, np.uint8), entries, HUGE_PAGE)  # (it keeps the mapping)


def aligned_rows(raw, entries, align):
    """Table rows, uint64[entries, 4], in the bytes ``raw`` from the first multiple of ``align``
    (``raw`` has ``align`` bytes to spare)."""
    skip = -raw.ctypes.data % align
    return raw[skip : skip + entries * ENTRY_BYTES].view(np.uint64).reshape(entries, 4)


def new_stack(nsym, patterns, threat_depth, rules_lines):
    def words(*shape):
        return np.zeros(shape, np.uint64)

    def ints(*shape):
        return np.zeros(shape, np.int64)

    d = MAX_DEPTH
    levels, tried = P.new_sequence_work()
    return Stack(
        img=words(d, 2 * nsym), child=words(2 * nsym), avail=words(d), threats=words(d, 2),
        key_a=words(d), key_b=words(d),
        th_pn=ints(d), th_dn=ints(d), start=ints(d), n=ints(d), marks=words(d), last=ints(d),
        moves=ints(d, 64), sym=ints(d, 64), ka=words(d, 64), kb=words(d, 64),
        near=ints(d, 64), far=ints(d, 64),
        pairs=ints(P.MAX_PAIRS, 2), cover=P.new_cover_work(patterns),
        certificate=np.zeros(1 + max(1 + 2 * P.MAX_PAIRS, C.payload_bound(rules_lines)), np.uint8),
        knowledge_tries=ints(65, 2),
        knowledge_skip=np.zeros(65, np.bool_), score=ints(64), near_syms=ints(nsym),
        replies=ints(d, 64), rank=ints(d, 64),
        pending=words(d),
        opponent_sequence=ints(d), sequence_move=ints(d), line=ints(d, P.MAX_THREAT_DEPTH + 1),
        hashes=words(d), limit=words(d),
        threat_depth=np.array([threat_depth], np.int64), seq_levels=levels, seq_tried=tried,
    )  # fmt: skip


# ---------------------------------------------------------------- the table


@intrinsic
def prefetch(typingctx, rows, index):
    """Ask the CPU to start loading row ``index`` of a 2-D array into the cache: a frame
    prefetches its children's table windows while it makes the next ones."""
    sig = types.void(rows, index)

    def codegen(context, builder, signature, args):
        aryty, idxty = signature.args
        ary = context.make_array(aryty)(context, builder, args[0])
        idx = context.cast(builder, args[1], idxty, types.intp)
        zero = context.get_constant(types.intp, 0)
        ptr = cgutils.get_item_pointer(context, builder, aryty, ary, [idx, zero], wraparound=False)
        i8p = ir.IntType(8).as_pointer()
        i32 = ir.IntType(32)
        fnty = ir.FunctionType(ir.VoidType(), [i8p, i32, i32, i32])
        fn = cgutils.get_or_insert_function(builder.module, fnty, "llvm.prefetch")
        builder.call(fn, [builder.bitcast(ptr, i8p), i32(0), i32(3), i32(1)])  # read, keep, data
        return context.get_dummy_value()

    return sig, codegen


@nb.njit(cache=True, inline="always")
def key_hash(ka, kb):
    h = ka * np.uint64(0x9E3779B97F4A7C15)
    h ^= (kb + np.uint64(0x632BE59BD9B4E019)) * np.uint64(0xBF58476D1CE4E5B9)
    return h ^ (h >> np.uint64(31))


@nb.njit(cache=True, inline="always")
def home_block(ka, kb, mask):
    return np.int64(key_hash(ka, kb) & np.uint64(mask)) & ~np.int64(WINDOW - 1)


@nb.njit(cache=True, inline="always")
def seen_bit(h):
    """The word of Table.seen and the bit in it that stand for orbit hash h (its top 16 bits)."""
    top = h >> np.uint64(48)
    return np.int64(top >> np.uint64(6)), K.ONE << (top & np.uint64(63))


@nb.njit(cache=True, inline="always")
def find(recs, ka, kb):
    """The slot holding (ka, kb), or -1."""
    home = home_block(ka, kb, recs.shape[0] - 1)
    for s in range(home, home + WINDOW):
        if recs[s, META] == 0:
            return -1
        if recs[s, KEY_A] == ka and recs[s, KEY_B] == kb:
            return s
    return -1


@nb.njit(cache=True, inline="always")
def numbers(recs, ka, kb, q):
    """(pn, dn) of a position for question q in the table's entries ``recs``; (1, 1) when unknown."""
    return numbers_or(recs, ka, kb, q, np.int64(1), np.int64(1))


@nb.njit(cache=True, inline="always")
def numbers_or(recs, ka, kb, q, pn0, dn0):
    """(pn, dn) of a position for question q in the table's entries ``recs``; (pn0, dn0) when
    there is no entry for it. (The entry's words are read here and decoded by entry_numbers:
    decoded here, with a return for each case, numba counted a reference to ``recs`` at every
    call, an atomic increment and decrement for each child a frame reads.)"""
    s = find(recs, ka, kb)
    if s < 0:
        return pn0, dn0
    return entry_numbers(recs[s, META], recs[s, NUMS], q)


@nb.njit(cache=True, inline="always")
def entry_numbers(meta, nums, q):
    """(pn, dn) for question q of a table entry with words META ``meta`` and NUMS ``nums``."""
    lo = np.int64(meta & np.uint64(3))
    hi = np.int64((meta >> np.uint64(2)) & np.uint64(3))
    goal = 2 - q  # q0: value >= first-wins (2); q1: value >= draw (1)
    if lo >= goal:
        return np.int64(0), INF
    if hi < goal:
        return INF, np.int64(0)
    if np.int64((meta >> np.uint64(4)) & np.uint64(1)) != q:
        return np.int64(1), np.int64(1)
    return np.int64(nums & LOW32), np.int64(nums >> np.uint64(32))


@nb.njit(cache=True, inline="always")
def entry_work(recs, ka, kb):
    """The work recorded in the table for (ka, kb); 0 when it is not there."""
    s = find(recs, ka, kb)
    return np.int64(0) if s < 0 else np.int64(recs[s, META] >> WORK_SHIFT)


@nb.njit(cache=True, inline="always")
def entry_sequence(meta):
    """The first stone of a threat sequence that wins for the player to move, as a table entry's
    META ``meta`` records it; -1 when it records none."""
    return np.int64((meta & SEQUENCE_CELL) >> SEQUENCE_SHIFT) - 1


@nb.njit(cache=True, _nrt=False)  # allocates nothing: no atomic reference counts for its arrays
def store(recs, filled, ka, kb, q, pn, dn, work, marks, sequence):
    """Record a search's result: a fact when it solved the question, else its numbers; the
    NO_VERDICT ``marks`` it found, and the first stone of a threat ``sequence`` that wins for the
    player to move (-1: none found). (A Table's arrays, not the tuple: binding it cost reference
    counts for each.)"""
    home = home_block(ka, kb, recs.shape[0] - 1)
    victim = home
    least = EMPTY
    for s in range(home, home + WINDOW):
        meta = recs[s, META]
        if meta == 0 or (recs[s, KEY_A] == ka and recs[s, KEY_B] == kb):
            victim = s
            break
        if meta >> WORK_SHIFT < least:
            least = meta >> WORK_SHIFT
            victim = s
    meta = recs[victim, META]
    if meta == 0 or recs[victim, KEY_A] != ka or recs[victim, KEY_B] != kb:
        if meta == 0:
            filled[0] += 1
        recs[victim, KEY_A] = ka
        recs[victim, KEY_B] = kb
        recs[victim, NUMS] = UNKNOWN
        meta = np.uint64(LO_HI_OPEN | q << 4)
    lo = np.int64(meta & np.uint64(3))
    hi = np.int64((meta >> np.uint64(2)) & np.uint64(3))
    flags = meta & (FLAGS | SEQUENCE_CELL) | marks
    if sequence >= 0:  # it wins outright: it serves either question, for good
        flags = flags & ~SEQUENCE_CELL | np.uint64(sequence + 1) << SEQUENCE_SHIFT
    goal = 2 - q
    if pn == 0:
        lo = max(lo, goal)
    elif dn == 0:
        hi = min(hi, goal - 1)
    else:
        recs[victim, NUMS] = np.uint64(pn) | (np.uint64(dn) << np.uint64(32))
        flags = flags & ~np.uint64(16) | np.uint64(q << 4)
    recs[victim, META] = (
        ((meta >> WORK_SHIFT) + np.uint64(work)) << WORK_SHIFT | flags | np.uint64(hi << 2) | np.uint64(lo)
    )


@nb.njit(cache=True)
def larger_table(tab):
    """The table with four times the entries (at most its arena's), grown in place. An entry's
    window in the larger table is its own or one beyond the old table (the next two bits of its
    hash); a window there takes the entries of one old window only, and the rows beyond the old
    table are zero, so no entry is evicted and each keeps its order in its window: the table is
    the one inserting every entry anew would make. A window's entries stay first in it (find
    stops at an empty slot). The first table, in memory of its own, is copied to the arena first."""
    old = tab.recs.shape[0]
    recs = tab.arena[: min(tab.arena.shape[0], 4 * old)]
    if tab.recs.ctypes.data != recs.ctypes.data:
        recs[:old] = tab.recs
    mask = recs.shape[0] - 1
    for window in range(0, old, WINDOW):
        stay = window  # the next slot of the window for an entry that stays in it
        for s in range(window, window + WINDOW):
            if recs[s, META] == 0:
                break
            to = home_block(recs[s, KEY_A], recs[s, KEY_B], mask)
            if to == window:
                to = stay
                stay += 1
            else:
                while recs[to, META] != 0:
                    to += 1
            if to != s:
                for w in range(4):
                    recs[to, w] = recs[s, w]
                    recs[s, w] = 0
    return Table(recs, tab.filled, tab.arena, tab.seen)


# ---------------------------------------------------------------- the search


@nb.njit(cache=True)
def pairing_decides(a, b, q, t, pair_budget, pairs, cover, cert):
    """Whether a pairing decides question q at (a, b) (-1 disproven, 1 proven, 0 not) and the
    size of the certificate payload it wrote into cert[1:]: for q0 one of the second player
    (the first never completes a pattern), for q1 one of the first player. (``pairs``,
    ``cover``: the Stack's scratch arrays.)"""
    defender = P.DEFENDER_SECOND if q == 0 else P.DEFENDER_FIRST
    npairs = P.find_pairing_into(a, b, t, defender, pair_budget, pairs, cover)
    cert[1] = defender
    for i in range(max(npairs, 0)):
        cert[2 + 2 * i] = pairs[i, 0]
        cert[3 + 2 * i] = pairs[i, 1]
    return (0 if npairs == P.NO_PAIRING else -1 if q == 0 else 1), 1 + 2 * npairs


@nb.njit(cache=True, inline="always")
def knowledge_asked(a, b, cell_mask, gravity, rules_limits, skip, everywhere):
    """Whether knowledge_decides is to be asked at (a, b): the search asks only at numbers of
    empty cells not in ``skip`` (its Stack's knowledge_skip), proof extraction ``everywhere``
    (the search may have used knowledge there before it was skipped); Allis' rules only with
    at most rules_limits[1] empty squares. (The few arrays it reads, not the tuples that hold
    them: an inlined function pays reference counting for every array of a tuple it takes.)"""
    empty = K.popcount(cell_mask[0] & ~(a | b))
    if skip[empty] and not everywhere:
        return False
    return gravity[0] != 1 or empty <= rules_limits[1]


@nb.njit(cache=True, inline="always")  # inlined: a call would pass every array of Tables
def knowledge_decides(a, b, q, t, rules, pair_budget, recs, cert, tries, pairs, cover, everywhere):
    """(1 when the game's knowledge proves question q at (a, b), -1 when it disproves it, else 0;
    the NO_VERDICT mark to store for (a, b); when it decides, the size of the certificate it
    wrote into ``cert`` (the Stack's certificate): a kind byte, then the payload of
    docs/book-format.md), at a position where knowledge_asked says to ask. ``recs``: the
    table's entries; ``tries``, ``pairs``, ``cover``: the Stack's arrays of those names (not
    the tuples: see knowledge_asked).
    Without gravity a pairing: for q0 one of the second player (the first never completes a
    pattern: disproven), for q1 one of the first player (the second never does: proven). In
    Connect Four Allis' rules (pndb.games.connect4_rules): ``rules``, their lines (t.rules_lines)
    with gravity, None without (see search_frames). ``pair_budget``: the nodes of a
    pairing search (the rules take theirs from t.rules_limits[0], as the outer search does).

    The search (not ``everywhere``) counts the positions it evaluates and their decisions by
    number of empty cells in ``tries``. A position the table has marked for q is not
    asked again: df-pn enters a position many times, and a proof is read after its search (a
    table's marks are all at its solver's budget)."""
    mark = NO_VERDICT << np.uint64(q)
    s = find(recs, a, b)
    if s >= 0 and recs[s, META] & mark != K.ZERO:
        return 0, mark, 0
    if rules is None:  # (the evaluations are calls that pass only the arrays they read)
        found, size = pairing_decides(a, b, q, t, pair_budget, pairs, cover, cert)
        cert[0] = PAIRING
    else:
        w, h = t.columns.shape
        found, size = C.nb_decides(w, h, rules, a, b, t.rules_limits[0], q, cert[1:])
        cert[0] = C.CERTIFICATE_KIND
    if not everywhere:
        empty = K.popcount(t.cell_mask[0] & ~(a | b))
        tries[empty, 0] += 1
        tries[empty, 1] += found != 0
    if found == 0:
        return 0, mark, 0
    return found, K.ZERO, 1 + size


@nb.njit(cache=True, _nrt=False)  # allocates nothing: no reference counts for its arrays
def keep_line(lines, row, tried, cell_images, s):
    """Copy the attacker moves of a sequence found (P.threat_sequence's ``tried``, -1 ended)
    into lines[row], each cell taken to its image under symmetry s (0: itself)."""
    for i in range(tried.shape[0]):
        c = tried[i]
        if c < 0:
            lines[row, i] = -1
            return
        lines[row, i] = K.lowest_cell(cell_images[c, s])


@nb.njit(cache=True)
def solve_one(ka, kb, q, t, rules, steps, tab, st, budget, eps, pair_budget, th_pn=INF, th_dn=INF):
    """(pn, dn, nodes, table) of an ongoing position after at most ``budget`` nodes of df-pn,
    or fewer once its pn reaches ``th_pn`` or its dn ``th_dn`` (INF: no threshold); the table is
    the one given, or a larger one when it grew.

    The classic recursive df-pn (Nagai) written with an explicit stack of frames, one per depth
    (numba's cached recursive functions are not reliable): a frame searches its position until
    pn >= its pn threshold or dn >= its dn threshold, each time descending into the most-proving
    child with thresholds by the 1+eps trick (Pawlewicz and Lew). A frame reads its children's
    numbers from the table once, and afterwards only the child it has just searched: numbers
    read earlier may be stale but never wrong about a proof.

    The frames run in search_frames, whose table arrays never change: when the table is to
    grow, it returns, the table grows here, and it resumes from its stack. (An array variable
    that a loop may reassign costs an atomic reference count increment and decrement at every
    use: with the table grown inside the frame loop, each child's table read paid two.)
    """
    K.images_into(ka, kb, t.sym_bytes, t.cell_images, st.img[0])
    st.avail[0] = K.available(ka, kb, t)
    first0 = K.first_to_move(ka, kb)
    mine, theirs = (ka, kb) if first0 else (kb, ka)
    st.threats[0, 0], st.threats[0, 1] = K.threats_of_both(mine, theirs, t.win_masks)
    st.hashes[0] = K.orbit_hash_of(ka, kb, steps.orbit_hash)
    st.key_a[0] = ka
    st.key_b[0] = kb
    st.th_pn[0] = th_pn
    st.th_dn[0] = th_dn
    st.start[0] = 1
    st.last[0] = -1
    stones0 = K.popcount(ka | kb)
    depth = 0
    counter = 1
    entering = True  # the frame at depth is new: its children are still to be written
    while True:
        grow = tab.recs.shape[0] < tab.arena.shape[0]
        depth, counter, pn, dn, full = search_frames(
            q, t, rules, steps, tab.recs, tab.filled, tab.seen, grow, st, budget, eps, pair_budget, first0,
            stones0, depth, counter, entering,
        )  # fmt: skip
        if full:
            tab = larger_table(tab)
        if depth < 0:
            return pn, dn, counter, tab
        entering = False


@nb.njit(cache=True)
def search_frames(
    q, t, rules, steps, recs, filled, seen, grow, st, budget, eps, pair_budget, first0, stones0, depth,
    counter, entering,
):
    """Run solve_one's frames from ``depth`` (``entering``: its frame is new) until the root's
    frame returns, or until a frame's store fills the table half when it may ``grow``.
    Returns (depth, counter, the root's pn and dn once depth is -1, whether the table is full).

    ``rules``: the Connect Four rules' lines (t.rules_lines) with gravity, None without. Its type
    tells the family at compile time: numba drops the branches on ``rules is None`` that the
    type rules out before it compiles their calls, so a game without gravity never compiles
    Allis' rules, and one with gravity neither pairings nor threat sequences (each family's
    search compiles in about half the time of both)."""
    nsym = t.cell_images.shape[1]
    # Every array the loop reads is bound to a local once, here, and indexed in two dimensions
    # (st_far[depth, i], not a row view): a tuple member read, a row view or an array passed to
    # a call inside the loop costs an atomic reference count increment and decrement, which
    # took a fifth of the search's time.
    order, up_bit, cell_images = t.order, steps.up_bit, t.cell_images
    compose, inverse = steps.compose, steps.inverse
    orbit_hash, st_hashes, st_limit = steps.orbit_hash, st.hashes, st.limit
    rank_bytes = t.rank_bytes
    sym_bytes, win_masks = t.sym_bytes, t.win_masks
    masks_by_cell, mask_counts = t.masks_by_cell, t.mask_counts
    board, forbidden, cap = t.cell_mask[0], t.first_forbidden[0], t.disc_cap[0]
    gravity = t.gravity[0] != 0
    threat_depth = st.threat_depth[0]
    st_img, st_child, st_avail, st_marks, st_n, st_last = st.img, st.child, st.avail, st.marks, st.n, st.last
    st_threats = st.threats
    st_key_a, st_key_b, st_th_pn, st_th_dn, st_start = st.key_a, st.key_b, st.th_pn, st.th_dn, st.start
    st_ka, st_kb, st_near, st_far, st_moves, st_sym = st.ka, st.kb, st.near, st.far, st.moves, st.sym
    st_replies, st_score, seq_levels, seq_tried = st.replies, st.score, st.seq_levels, st.seq_tried
    near_syms = st.near_syms
    st_rank, st_pending = st.rank, st.pending
    st_opponent_sequence, st_sequence_move, st_line = st.opponent_sequence, st.sequence_move, st.line
    root_pn = np.int64(1)
    root_dn = np.int64(1)
    while depth >= 0:
        first = first0 != (depth & 1 == 1)
        side = 0 if first else 1  # the half the mover's stone goes to: a (0) or b (1)
        on_a = EMPTY if first else K.ZERO  # ... as a mask: all ones for a
        if entering:
            entering = False
            # expansion: write the frame's ongoing children (keys canonical, one per symmetry
            # class), their number into st.n, or DECIDED_FOR_MOVER when a child decides the
            # position for its mover, DECIDED_AGAINST_MOVER when knowledge decides it for the
            # other player. (Written out here, not as a function: an inlined function that takes
            # the solver's tuples pays two atomic reference count updates for each of their
            # arrays, some 120 a node, which took a third of the search's time.)
            stones = stones0 + depth
            a = st_img[depth, 0]
            b = st_img[depth, 1]
            mine, theirs = (a, b) if first else (b, a)
            avail = st_avail[depth]
            legal = avail & ~forbidden if stones == 0 else avail
            own_threats = st_threats[depth, 0]
            opponent_threats = st_threats[depth, 1]
            st_marks[depth] = K.ZERO
            # threat sequences are asked where the mover cannot win at once and the opponent has
            # no threat (the opponent's once the frame enters a child, below); the frame's table
            # flags may tell what was found here before
            quiet = opponent_threats == K.ZERO and own_threats & legal == K.ZERO
            sequences = threat_depth != 0 and not gravity and quiet
            s = find(recs, a, b) if sequences else -1
            known = recs[s, META] if s >= 0 else K.ZERO
            opponent = SEQUENCE_UNHELPFUL
            if sequences and own_threats == K.ZERO and stones > 0:
                opponent = SEQUENCE_UNASKED
                if known & OPPONENT_ASKED != K.ZERO:
                    opponent = SEQUENCE_NONE if known & OPPONENT_NONE != K.ZERO else SEQUENCE_UNHELPFUL
            st_opponent_sequence[depth] = opponent
            n = 0
            pending = K.ZERO
            st_sequence_move[depth] = -1
            if own_threats & legal != K.ZERO:
                n = DECIDED_FOR_MOVER
            elif rules is None and sequences:
                if depth > 0 and st_opponent_sequence[depth - 1] == SEQUENCE_NONE:  # the parent showed none
                    st_marks[depth] = NO_SEQUENCE
                else:
                    if known & NO_SEQUENCE == K.ZERO:
                        found = -1
                        if depth > 0 and st_opponent_sequence[depth - 1] == SEQUENCE_FOUND:
                            found = P.sequence_holds(
                                mine, theirs, stones, threat_depth, st_line, depth - 1, cell_images,
                                st_sym[depth - 1, st_last[depth - 1]], board, forbidden, cap, masks_by_cell,
                                mask_counts,
                            )  # fmt: skip
                        if found < 0:
                            found = P.threat_sequence(
                                mine, theirs, stones, threat_depth, seq_levels, seq_tried, board, forbidden,
                                cap, win_masks, masks_by_cell, mask_counts,
                            )  # fmt: skip
                            st_sequence_move[depth] = found
                            if found >= 0 and depth > 0:
                                # the parent's children try this one next, in the parent's frame
                                back = inverse[st_sym[depth - 1, st_last[depth - 1]]]
                                keep_line(st_line, depth - 1, seq_tried, cell_images, back)
                                st_opponent_sequence[depth - 1] = SEQUENCE_FOUND
                        if found >= 0:
                            n = DECIDED_FOR_MOVER
                        else:
                            st_marks[depth] = NO_SEQUENCE
            if n == 0 and pair_budget != 0:
                if knowledge_asked(a, b, t.cell_mask, t.gravity, t.rules_limits, st.knowledge_skip, False):
                    decided, mark, _ = knowledge_decides(
                        a, b, q, t, rules, pair_budget, recs, st.certificate, st.knowledge_tries,
                        st.pairs, st.cover, False,
                    )  # fmt: skip
                    st_marks[depth] |= mark
                    if decided != 0:
                        st_marks[depth] |= KNOWLEDGE_DECIDED << np.uint64(q)
                        n = DECIDED_FOR_MOVER if (decided == 1) == first else DECIDED_AGAINST_MOVER
                if rules is None and n == 0:  # moves on dead cells dropped (patterns.prune_dead)
                    legal = P.prune_dead(a, b, t, legal)
            if n == 0:
                # a draw reaches the mover's goal: q1 for the first player
                draw_wins = q == (1 if first else 0)
                img = st_img[depth]
                nears = K.near_symmetries(img, first, near_syms)  # those that map a child to another
                twins = K.ZERO  # the cells whose children repeat one written
                limit = K.own_key_below(img)
                st_limit[depth] = limit  # for the keys of the children made when entered
                # the cells to try, in move order (their ranks, lowest first): with the opponent's
                # threat cells open, only a stone on one can leave the game on (a child short of
                # the disc cap is no draw, and every other stone leaves the threat playable)
                blocks = opponent_threats & avail
                asks_seen = filled[0] < SEEN_ENTRIES
                tried = legal & blocks if blocks != K.ZERO and stones + 1 < cap else legal
                ranks = K.permute(tried, rank_bytes, 0)
                while ranks != K.ZERO:
                    rank = K.lowest_cell(ranks)
                    cell = order[rank]
                    ranks &= ranks - K.ONE
                    bit = K.ONE << np.uint64(cell)
                    if twins & bit != K.ZERO:
                        continue
                    child_avail = (avail ^ bit) | up_bit[cell]
                    state = K.child_status(
                        first, bit, own_threats, opponent_threats, child_avail, stones + 1, cap
                    )
                    if state == K.DRAW and draw_wins:
                        n = DECIDED_FOR_MOVER
                        break
                    if state != K.ONGOING:  # a draw short of the mover's goal, or the opponent wins next
                        continue
                    if nears:
                        twins |= K.twin_cells(img, first, cell_images, cell, near_syms, nears)
                    stored = True  # whether the table may hold the child; if not, keyed when entered
                    if asks_seen:
                        word, mask = seen_bit(st_hashes[depth] + orbit_hash[side, cell])
                        stored = seen[word] & mask != K.ZERO
                        if not stored and not gravity:  # its numbers are every such child's
                            pending |= K.ONE << np.uint64(rank)
                            continue
                    if stored:
                        best_a, best_b, g = K.canonical_child(img, cell_images[cell], on_a, limit)
                        prefetch(recs, home_block(best_a, best_b, recs.shape[0] - 1))
                    else:
                        best_a = best_b = K.ZERO
                        g = UNKEYED
                    made = 0  # the order: most threats made first, ties in t.order (a stable insertion)
                    reply = K.popcount(child_avail)  # the replies the child starts with: its legal moves
                    if gravity:
                        makes = K.makers_at(mine, theirs, cell, masks_by_cell, mask_counts)
                        made = 2 * makes + K.makers_at(theirs, mine, cell, masks_by_cell, mask_counts)
                        # with gravity the replies are the mover's threats playable after the stone
                        # when it has any: every other reply loses at once
                        forcing = own_threats & up_bit[cell]
                        if makes > 0:
                            made_threats = K.threats_made(mine, theirs, cell, masks_by_cell, mask_counts)
                            forcing |= made_threats & child_avail
                        if forcing != K.ZERO:
                            reply = K.popcount(forcing)
                    j = n
                    while j > 0 and st_score[j - 1] < made:
                        st_score[j] = st_score[j - 1]
                        st_moves[depth, j] = st_moves[depth, j - 1]
                        st_sym[depth, j] = st_sym[depth, j - 1]
                        st_ka[depth, j] = st_ka[depth, j - 1]
                        st_kb[depth, j] = st_kb[depth, j - 1]
                        st_replies[depth, j] = st_replies[depth, j - 1]
                        j -= 1
                    st_score[j] = made
                    st_replies[depth, j] = reply
                    st_rank[depth, j] = rank  # (with gravity the order is the array's, below)
                    st_moves[depth, j] = cell
                    st_sym[depth, j] = g
                    st_ka[depth, j] = best_a
                    st_kb[depth, j] = best_b
                    n += 1
                if gravity:
                    for j in range(n):
                        st_rank[depth, j] = j
            st_n[depth] = n
            st_pending[depth] = pending if n >= 0 else K.ZERO
        n = st_n[depth]
        pending = st_pending[depth]
        # a child the table does not know starts with the mover's number (the one the child's
        # player sums) at its estimated replies, the other at 1 (module docstring).
        # OR node (first player moves): pn = min, dn = sum; AND node: the other way round. A
        # child's "near" number is the one minimised at this node, its "far" number the one summed.
        # A child refuted for the mover (near INF, far 0) is dropped, the frame's last child moved
        # into its place: it is never the least and adds nothing to the sum, and the scans below
        # then read only the children still open (the rank keys keep every choice the same).
        lo = 0 if st_last[depth] < 0 else st_last[depth]
        hi = n if st_last[depth] < 0 else lo + 1
        i = lo
        while i < hi:
            r = st_replies[depth, i]
            pn0, dn0 = (r, np.int64(1)) if first else (np.int64(1), r)
            if st_sym[depth, i] == UNKEYED:
                cpn, cdn = pn0, dn0
            else:
                cpn, cdn = numbers_or(recs, st_ka[depth, i], st_kb[depth, i], q, pn0, dn0)
            near_i, far_i = (cpn, cdn) if first else (cdn, cpn)
            if near_i >= INF and far_i == 0:
                n -= 1
                hi -= 1  # the child moved in was read already, or is read next
                st_moves[depth, i] = st_moves[depth, n]
                st_sym[depth, i] = st_sym[depth, n]
                st_ka[depth, i] = st_ka[depth, n]
                st_kb[depth, i] = st_kb[depth, n]
                st_replies[depth, i] = st_replies[depth, n]
                st_rank[depth, i] = st_rank[depth, n]
                st_near[depth, i] = st_near[depth, n]
                st_far[depth, i] = st_far[depth, n]
                continue
            st_near[depth, i] = near_i
            st_far[depth, i] = far_i
            i += 1
        st_n[depth] = n
        # the sum saturates: INF when a child's number is INF, else at most INF - 1 (numbers are
        # at most INF, so 64 of them sum within int64); a loop without branches, vectorised
        far_sum = np.int64(0)
        far_max = np.int64(0)
        for i in range(n):
            far_sum += st_far[depth, i]
            far_max = max(far_max, st_far[depth, i])
        # the least and second-least near numbers, ties to the child first in the move order: as
        # keys of the number and the rank, and by selects, not branches (which child is least is
        # unpredictable)
        least = NO_CHILD_KEY
        second = NO_CHILD_KEY
        best = -1
        for i in range(n):
            key = st_near[depth, i] << RANK_BITS | st_rank[depth, i]
            best = i if key < least else best
            second = min(second, max(least, key))
            least = min(least, key)
        # a pending child's numbers: the near one (which the child sums) its legal moves, the far 1
        near0 = K.popcount(st_avail[depth]) - 1
        if pending != K.ZERO:  # the pending children, the same numbers each: the first two count
            far_sum += K.popcount(pending)  # (far numbers of 1: far_max need not see them)
            key = near0 << RANK_BITS | K.lowest_cell(pending)
            best = n if key < least else best  # n: the first pending child, written when entered
            second = min(second, max(least, key))
            least = min(least, key)
            rest = pending & (pending - K.ONE)
            if rest != K.ZERO:
                key = near0 << RANK_BITS | K.lowest_cell(rest)
                second = min(second, max(least, key))
        far = INF if far_max >= INF else min(far_sum, INF - 1)
        near = least >> RANK_BITS
        near2 = second >> RANK_BITS
        best_far = st_far[depth, best] if 0 <= best < n else np.int64(1) if best == n else np.int64(0)
        if n == DECIDED_FOR_MOVER:
            near = np.int64(0)
            far = INF
        elif n == DECIDED_AGAINST_MOVER:
            near = INF
            far = np.int64(0)
        pn, dn = (near, far) if first else (far, near)
        if pn >= st_th_pn[depth] or dn >= st_th_dn[depth] or counter >= budget:
            work = counter - st_start[depth] + 1
            store(
                recs, filled, st_key_a[depth], st_key_b[depth], q, pn, dn, work, st_marks[depth],
                st_sequence_move[depth],
            )  # fmt: skip
            word, mask = seen_bit(st_hashes[depth])
            seen[word] |= mask
            if depth == 0:
                root_pn, root_dn = pn, dn
            depth -= 1
            if grow and filled[0] * 2 > recs.shape[0]:
                return depth, counter, root_pn, root_dn, True
            continue
        th_near = st_th_pn[depth] if first else st_th_dn[depth]
        th_far = st_th_dn[depth] if first else st_th_pn[depth]
        child_near = th_near if near2 >= INF else min(th_near, np.int64(near2 * (1.0 + eps)) + 1)
        child_far = th_far - far + best_far if th_far < INF else INF
        st_last[depth] = best
        d = depth + 1
        if rules is None and st_opponent_sequence[depth] == SEQUENCE_UNASKED:
            # whether the opponent, were it to move here, has a threat sequence: if not, it has
            # none after any stone of the mover, so the children this frame enters need not ask
            a = st_img[depth, 0]
            b = st_img[depth, 1]
            opponent, mover = (b, a) if first else (a, b)
            found = P.threat_sequence(
                opponent, mover, stones0 + depth, threat_depth, seq_levels, seq_tried, board, forbidden, cap,
                win_masks, masks_by_cell, mask_counts,
            )  # fmt: skip
            st_opponent_sequence[depth] = SEQUENCE_NONE if found < 0 else SEQUENCE_FOUND
            if found >= 0:
                keep_line(st_line, depth, seq_tried, cell_images, 0)
            st_marks[depth] |= OPPONENT_ASKED | (OPPONENT_NONE if found < 0 else K.ZERO)
        if best == n:  # a pending child is entered: written now, unkeyed
            rank = K.lowest_cell(pending)
            st_pending[depth] = pending ^ (K.ONE << np.uint64(rank))
            st_n[depth] = n + 1
            st_moves[depth, n] = order[rank]
            st_rank[depth, n] = rank
            st_sym[depth, n] = UNKEYED
            st_replies[depth, n] = near0
        # the child's images, reordered so that the frame's position is its canonical key:
        # then its children's order depends on the position alone, not on the path to it
        cell = st_moves[depth, best]
        if st_sym[depth, best] == UNKEYED:
            st_ka[depth, best], st_kb[depth, best], st_sym[depth, best] = K.canonical_child(
                st_img[depth], cell_images[cell], on_a, st_limit[depth]
            )
        g = st_sym[depth, best]
        bit = K.ONE << np.uint64(cell)
        for s in range(2 * nsym):
            st_child[s] = st_img[depth, s]
        for s in range(nsym):
            st_child[2 * s + side] |= cell_images[cell, s]
        for s in range(nsym):
            h = compose[s, g]
            st_img[d, 2 * s] = st_child[2 * h]
            st_img[d, 2 * s + 1] = st_child[2 * h + 1]
        avail = (st_avail[depth] ^ bit) | up_bit[cell]
        mover = st_img[depth, side]
        opponent = st_img[depth, 1 - side]
        child_own = st_threats[depth, 1] & ~bit  # the child's mover is the opponent
        made = K.threats_made(mover, opponent, cell, masks_by_cell, mask_counts)
        child_opponent = (st_threats[depth, 0] & ~bit) | made
        if g != 0:  # the child's frame is its canonical image
            avail = K.permute(avail, sym_bytes, g)
            child_own = K.permute(child_own, sym_bytes, g)
            child_opponent = K.permute(child_opponent, sym_bytes, g)
        st_avail[d] = avail
        st_threats[d, 0] = child_own
        st_threats[d, 1] = child_opponent
        st_last[d] = -1
        st_hashes[d] = st_hashes[depth] + orbit_hash[side, cell]
        st_key_a[d] = st_ka[depth, best]
        st_key_b[d] = st_kb[depth, best]
        st_th_pn[d] = child_near if first else child_far
        st_th_dn[d] = child_far if first else child_near
        counter += 1
        st_start[d] = counter
        entering = True
        depth = d
    return depth, counter, root_pn, root_dn, False


# ---------------------------------------------------------------- proofs


@nb.njit(cache=True, inline="always")
def decided_good(state, q, proven):
    """Whether a decided (not ongoing) status is won for the proof's owner (proven: first,
    else second)."""
    return (K.OUTCOME[state] >= 2 - q) == proven


@nb.njit(cache=True, _nrt=False)
def settled_by_children(n, cs, q, proven, owner):
    """Whether the children's statuses alone settle a position for the proof's owner: one of
    the owner's stones wins now or next, or (the other player to move) every reply loses so."""
    for i in range(n):
        if cs[i] != K.ONGOING and decided_good(cs[i], q, proven):
            if owner:
                return True
        elif not owner:
            return False
    return not owner


@nb.njit(cache=True, _nrt=False)
def decided_good_child(n, cs, q, proven):
    """A child whose status alone makes it won for the proof's owner (a stone that wins now or
    next, or a draw that reaches the owner's goal); -1 when none."""
    for i in range(n):
        if cs[i] != K.ONGOING and decided_good(cs[i], q, proven):
            return i
    return -1


@nb.njit(cache=True, _nrt=False)
def known_good_child(n, cs, ca, cb, q, proven, recs):
    """The ongoing child the table knows won for the proof's owner with the least proof to
    read: the one proven with the least work recorded (a search that took fewer nodes leaves a
    smaller proof); -1 when none is known. The children's table windows are prefetched first,
    so that their reads overlap."""
    for i in range(n):
        if cs[i] == K.ONGOING:
            prefetch(recs, home_block(ca[i], cb[i], recs.shape[0] - 1))
    best = -1
    least = NO_LIMIT
    for i in range(n):
        if cs[i] != K.ONGOING:
            continue
        s = find(recs, ca[i], cb[i])
        if s < 0:
            continue
        pn, dn = entry_numbers(recs[s, META], recs[s, NUMS], q)
        work = np.int64(recs[s, META] >> WORK_SHIFT)
        if ((pn == 0) if proven else (dn == 0)) and work < least:
            best, least = i, work
    return best


@nb.njit(cache=True)
def grown(x, size):
    out = np.empty(size, x.dtype)
    out[: x.shape[0]] = x
    return out


@nb.njit(cache=True)
def new_proof_buffers():
    return ProofBuffers(
        np.empty(64, np.uint64),
        np.empty(64, np.uint64),
        np.empty(64, np.int64),
        np.empty(64, np.int64),
        np.empty(1024, np.uint8),
        np.zeros(2, np.int64),
    )


@nb.njit(cache=True)
def roomier(out, size):
    """The buffers ``out``, or larger ones holding the same records, with room for one more
    record and ``size`` more certificate bytes."""
    count, used = out.used[0], out.used[1]
    if count < out.key_a.shape[0] and used + size <= out.certificates.shape[0]:
        return out
    more = out.key_a.shape[0] * (2 if count == out.key_a.shape[0] else 1)
    room = max(out.certificates.shape[0], 2 * (used + size))
    return ProofBuffers(
        grown(out.key_a, more), grown(out.key_b, more), grown(out.move, more),
        grown(out.certificate_size, more), grown(out.certificates, room), out.used,
    )  # fmt: skip


@nb.njit(cache=True, _nrt=False)  # allocates nothing: no reference counts for the buffers
def record(out, a, b, move, cert, size):
    """Append the proof record (a, b, move) with the certificate cert[:size] (size 0: none) to
    buffers with room for it (roomier)."""
    count, used = out.used[0], out.used[1]
    out.key_a[count] = a
    out.key_b[count] = b
    out.move[count] = move
    out.certificate_size[count] = size
    for i in range(size):
        out.certificates[used + i] = cert[i]
    out.used[0] = count + 1
    out.used[1] = used + size


@nb.njit(cache=True, _nrt=False)
def set_insert(seen, a, b):
    """Add (a, b) to an open-addressing set of pairs (EMPTY marks free slots; seen[0, 0] counts
    the entries, slot 0 holds no pair); False when it was there already."""
    cap = seen.shape[0]
    s = max(1, np.int64(key_hash(a, b) & np.uint64(cap - 1)))
    while seen[s, 0] != EMPTY:
        if seen[s, 0] == a and seen[s, 1] == b:
            return False
        s = max(1, (s + 1) & (cap - 1))
    seen[s, 0] = a
    seen[s, 1] = b
    seen[0, 0] += np.uint64(1)
    return True


@nb.njit(cache=True)
def new_set(cap):
    seen = np.full((cap, 2), EMPTY, np.uint64)
    seen[0, 0] = np.uint64(0)
    return seen


@nb.njit(cache=True)
def larger_set(seen):
    """The set with twice the slots, the same pairs."""
    bigger = new_set(2 * seen.shape[0])
    for i in range(1, seen.shape[0]):
        if seen[i, 0] != EMPTY:
            set_insert(bigger, seen[i, 0], seen[i, 1])
    return bigger


@nb.njit(cache=True, _nrt=False)  # allocates nothing: no reference counts for its arrays
def sequence_move(a, b, threat_depth, levels, tried, board, forbidden, cap, win_masks, by_cell, counts):
    """The cell that starts a threat sequence winning for the player to move at (a, b), or -1:
    the search decides such positions without children, and their proof is the sequence,
    walked as any other proof. (The arrays and numbers of P.threat_sequence; never under
    gravity.)"""
    first = K.first_to_move(a, b)
    mine, theirs = (a, b) if first else (b, a)
    if threat_depth == 0 or K.threat_cells(theirs, mine, win_masks) != K.ZERO:
        return -1
    stones = K.popcount(a | b)
    return P.threat_sequence(
        mine, theirs, stones, threat_depth, levels, tried, board, forbidden, cap, win_masks, by_cell, counts
    )


WALK_DONE = 0  # walk_proof's answers: every position of the proof is read,
WALK_ROOM = 1  # the record buffers or the set of positions read must grow first,
WALK_SEARCH = 2  # the owner's position it stopped at has no winning child the table knows


class ProofWalk(NamedTuple):
    """extract_proof's walk: the positions still to read, and the position walk_proof stopped
    at (WALK_SEARCH) with its children."""

    stack_a: np.ndarray  # uint64[MAX_DEPTH * 64]
    stack_b: np.ndarray
    at: np.ndarray  # int64[2]: the stack's size; the number of children of the position stopped at
    stopped: np.ndarray  # uint64[2]: the position walk_proof stopped at (WALK_SEARCH)
    moves: np.ndarray  # int64[64]: the moves of the position read last (K.statuses_into)
    ca: np.ndarray  # uint64[64]: the keys of its children (those walked on; all at a stop)
    cb: np.ndarray
    cs: np.ndarray  # int64[64]: their statuses
    img: np.ndarray  # uint64[2 * nsym]: scratch for K.key_images
    near: np.ndarray  # int64[nsym]: scratch for K.keys_into


@nb.njit(cache=True)
def new_proof_walk(ka, kb, nsym):
    w = ProofWalk(
        np.empty(MAX_DEPTH * 64, np.uint64), np.empty(MAX_DEPTH * 64, np.uint64), np.zeros(2, np.int64),
        np.zeros(2, np.uint64),
        np.empty(64, np.int64), np.empty(64, np.uint64), np.empty(64, np.uint64), np.empty(64, np.int64),
        np.empty(2 * nsym, np.uint64), np.empty(nsym, np.int64),
    )  # fmt: skip
    w.stack_a[0] = ka
    w.stack_b[0] = kb
    w.at[0] = 1
    return w


@nb.njit(cache=True, _nrt=False)
def push_move(w, out, a, b, found, cert):
    """Record the owner's move ``found`` (a child index of w) at (a, b) and push the child
    unless the game is over in it. (``cert``: any uint8 array; a move has no certificate.)"""
    record(out, a, b, w.moves[found], cert, 0)
    if not K.FIRST_WON <= w.cs[found] <= K.DRAW:
        w.stack_a[w.at[0]] = w.ca[found]
        w.stack_b[w.at[0]] = w.cb[found]
        w.at[0] += 1


@nb.njit(cache=True)
def extract_proof(ka, kb, q, proven, t, rules, steps, tab, st, eps, out, pair_budget):
    """Append to the buffers ``out`` the owner's move at each owner-to-move position of the
    proof (or disproof) tree of the solved position (ka, kb), and CERTIFIED with the
    certificate instead of a move at each position knowledge decides.

    The proof is read from the table where it still is. Where it is not, the position is
    searched again; if the move is still not in the table after that (a small table evicts it
    while it searches), each child is searched on its own, most promising first, and the first
    one found won for the owner is taken: what a search returns never depends on the table
    keeping it. Returns (out, nodes, table).

    A position whose proof an earlier extraction handed out (its REPORTED mark, set as each
    position is read; by the end of the call all of its proof is out) is not read again: the
    outer search stored that proof, and a search that goes through a proven position would
    otherwise hand the same records back again and again. The mark lives with the table entry:
    an entry replaced has lost it, and its proof is handed out once more.
    """
    seen = new_set(1024)
    w = new_proof_walk(ka, kb, t.cell_images.shape[1])
    nodes = 0
    while True:
        event = walk_proof(q, proven, t, rules, tab.recs, st, out, seen, w, pair_budget)
        if event == WALK_DONE:
            return out, nodes, tab
        if event == WALK_ROOM:
            out = roomier(out, st.certificate.shape[0])
            if seen[0, 0] * np.uint64(2) + np.uint64(2) > np.uint64(seen.shape[0]):
                seen = larger_set(seen)
            continue
        # the owner's position (a, b) is searched again; if the move is still not in the table
        # after that, each child on its own, most promising first
        a, b, n = w.stopped[0], w.stopped[1], w.at[1]
        ca, cb, cs = w.ca, w.cb, w.cs
        _, _, used, tab = solve_one(a, b, q, t, rules, steps, tab, st, NO_LIMIT, eps, pair_budget, INF, INF)
        nodes += used
        found = known_good_child(n, cs, ca, cb, q, proven, tab.recs)
        if found < 0:
            near = np.empty(n, np.int64)
            for i in range(n):
                pn, dn = numbers(tab.recs, ca[i], cb[i], q)
                near[i] = pn if proven else dn
            for i in np.argsort(near, kind="mergesort"):
                if cs[i] != K.ONGOING:
                    continue
                pn, dn, used, tab = solve_one(
                    ca[i], cb[i], q, t, rules, steps, tab, st, NO_LIMIT, eps, pair_budget, INF, INF
                )
                nodes += used
                if (pn == 0) if proven else (dn == 0):
                    found = i
                    break
        if found < 0:
            raise RuntimeError("inner proof extraction: a position taken as solved is not")
        push_move(w, out, a, b, found, st.certificate)


@nb.njit(cache=True)
def walk_proof(q, proven, t, rules, recs, st, out, seen, w, pair_budget):
    """extract_proof's walk over the positions of w's stack (each read once: ``seen``), until
    all are read (WALK_DONE), the buffers ``out`` or ``seen`` need room (WALK_ROOM), or an
    owner's position needs a search (WALK_SEARCH: w.stopped holds it, w its children). It runs
    with arrays that never change (extract_proof grows them and searches between its calls):
    an array variable a loop reassigns costs atomic reference counts at every use, which took
    half of the extraction's time. ``rules``: as search_frames'."""
    reported = REPORTED << np.uint64(q)
    # a pairing only disproves q0 and proves q1: for the other owner it is not worth asking
    ask = pair_budget if t.gravity[0] == 1 or proven == (q == 1) else 0
    stack_a, stack_b, at = w.stack_a, w.stack_b, w.at
    moves, ca, cb, cs, img, near = w.moves, w.ca, w.cb, w.cs, w.img, w.near
    cert = st.certificate
    gravity = t.gravity[0] != 0
    threat_depth = 0 if gravity else st.threat_depth[0]
    levels, tried, sym_bytes, cell_images = st.seq_levels, st.seq_tried, t.sym_bytes, t.cell_images
    board, forbidden, cap = t.cell_mask[0], t.first_forbidden[0], t.disc_cap[0]
    win_masks, by_cell, counts = t.win_masks, t.masks_by_cell, t.mask_counts
    sp = at[0]
    while sp > 0:
        if (
            out.used[0] == out.key_a.shape[0]
            or out.used[1] + cert.shape[0] > out.certificates.shape[0]
            or seen[0, 0] * np.uint64(2) + np.uint64(2) > np.uint64(seen.shape[0])
        ):
            at[0] = sp
            return WALK_ROOM
        sp -= 1
        a = stack_a[sp]
        b = stack_b[sp]
        if not set_insert(seen, a, b):
            continue
        s = find(recs, a, b)
        if s >= 0:
            if recs[s, META] & reported != K.ZERO:
                continue
            recs[s, META] |= reported
        owner = K.first_to_move(a, b) == proven
        # knowledge is asked where the search decided by it (for either question: a fact of one
        # may answer the other), or where the table does not say how the search decided
        # (positions it did not store, or evicted), unless the children decide at once (a stone
        # of the owner that wins now or next; replies that all lose)
        asked = ask != 0 and knowledge_asked(
            a, b, t.cell_mask, t.gravity, t.rules_limits, st.knowledge_skip, True
        )
        # the children's statuses, unless at the owner's position none can decide (no stone
        # completes a pattern, a draw is not the owner's goal) and a threat sequence may give
        # the move: they are read below if it does not
        statuses = not owner or asked or threat_depth == 0 or decided_good(K.DRAW, q, proven)
        if not statuses:  # the owner moves: the first player when it proves
            mine, theirs = (a, b) if proven else (b, a)
            statuses = K.threat_cells(mine, theirs, win_masks) & K.legal_mask(a, b, t) != K.ZERO
        n = K.statuses_into(a, b, t, moves, cs) if statuses else 0
        if asked and not settled_by_children(n, cs, q, proven, owner):
            if s < 0 or recs[s, META] & (KNOWLEDGE_DECIDED * np.uint64(3)) != K.ZERO:
                verdict, _, size = knowledge_decides(
                    a, b, q, t, rules, ask, recs, cert, st.knowledge_tries, st.pairs, st.cover, True
                )
                if verdict == (1 if proven else -1):
                    record(out, a, b, CERTIFIED, cert, size)
                    continue
        if owner:
            # a stone whose status decides; else a threat sequence, which decides most of the
            # positions the search proved without children: the one the search stored, or one
            # searched for here (unless the table says there is none); else the child the table
            # knows, which needs every child's key
            found = decided_good_child(n, cs, q, proven)
            cell = -1 if found >= 0 or s < 0 else entry_sequence(recs[s, META])
            unknown = s < 0 or recs[s, META] & NO_SEQUENCE == K.ZERO
            if rules is None and found < 0 and cell < 0 and unknown:
                cell = sequence_move(
                    a, b, threat_depth, levels, tried, board, forbidden, cap, win_masks, by_cell, counts
                )  # fmt: skip
            if not statuses and cell >= 0:  # the sequence's stone: the game goes on after it
                moves[0], cs[0], n = cell, K.ONGOING, 1
            elif not statuses:
                n = K.statuses_into(a, b, t, moves, cs)
            for i in range(n if found < 0 and cell >= 0 else 0):
                if moves[i] == cell:
                    found = i
                    break
            if found >= 0 and not K.FIRST_WON <= cs[found] <= K.DRAW:  # the child walked on: its key
                on_a, limit = K.key_images(a, b, sym_bytes, cell_images, img)
                ca[found], cb[found], _ = K.canonical_child(img, cell_images[moves[found]], on_a, limit)
            if found < 0:
                n = K.keys_into(a, b, t, n, moves, ca, cb, cs, img, near)
                found = known_good_child(n, cs, ca, cb, q, proven, recs)
            at[0] = sp
            if found < 0:
                w.stopped[0], w.stopped[1], at[1] = a, b, n
                return WALK_SEARCH
            push_move(w, out, a, b, found, st.certificate)
            sp = at[0]
        else:
            imaged = False  # the keys of the replies walked on, from the images made once
            on_a = limit = K.ZERO
            for i in range(n):
                # a reply whose status decides it for the owner (the game over, or the owner
                # to move completing a pattern) needs no record: a reader finds that move itself
                if cs[i] != K.ONGOING and decided_good(cs[i], q, proven):
                    continue
                if not K.FIRST_WON <= cs[i] <= K.DRAW:
                    if not imaged:
                        on_a, limit = K.key_images(a, b, sym_bytes, cell_images, img)
                        imaged = True
                    ca[i], cb[i], _ = K.canonical_child(img, cell_images[moves[i]], on_a, limit)
                    stack_a[sp] = ca[i]
                    stack_b[sp] = cb[i]
                    sp += 1
    at[0] = 0
    return WALK_DONE


@nb.njit(cache=True)
def run_job(
    keys_a,
    keys_b,
    q,
    t,
    rules,
    steps,
    tab,
    st,
    budget,
    eps,
    stop_on_proof,
    stop_on_disproof,
    pair_budget,
    proof_pair_budget,
    th_pn,
    th_dn,
):
    """Search the positions in turn (each until ``budget`` nodes or its thresholds), extracting
    each one's proof as soon as it is solved; stop after the first proven (or disproven) one
    when asked.

    Returns (pn, dn, work, count, proof buffers, proof owners, table, subtree): only the first
    ``count`` positions were searched; the table may have grown; subtree: the work the table
    records for each of them after the job (InnerResult).
    """
    n = keys_a.shape[0]
    pns = np.ones(n, np.int64)
    dns = np.ones(n, np.int64)
    work = np.zeros(n, np.int64)
    out = new_proof_buffers()
    owner = np.empty(64, np.bool_)
    count = n
    for i in range(n):
        pns[i], dns[i] = numbers(tab.recs, keys_a[i], keys_b[i], q)
        if pns[i] == 0 or dns[i] == 0:  # solved by an earlier job: only its proof is read
            work[i] = 1
        else:
            pns[i], dns[i], work[i], tab = solve_one(
                keys_a[i], keys_b[i], q, t, rules, steps, tab, st, budget, eps, pair_budget, th_pn, th_dn
            )
        # proofs are read with knowledge whenever the search may have used them (in this job or
        # an earlier one whose table entries it reads)
        if pns[i] == 0 or dns[i] == 0:
            proven = pns[i] == 0
            before = out.used[0]
            out, nodes, tab = extract_proof(
                keys_a[i], keys_b[i], q, proven, t, rules, steps, tab, st, eps, out, proof_pair_budget
            )
            work[i] += nodes
            if owner.shape[0] < out.key_a.shape[0]:
                owner = grown(owner, out.key_a.shape[0])
            owner[before : out.used[0]] = proven
        if (stop_on_proof and pns[i] == 0) or (stop_on_disproof and dns[i] == 0):
            count = i + 1
            break
    subtree = np.empty(count, np.int64)
    for i in range(count):
        subtree[i] = entry_work(tab.recs, keys_a[i], keys_b[i])
    return pns, dns, work, count, out, owner, tab, subtree


def merged(parts):
    """One InnerResult from the slices of a sliced job: (position index, slice result) in
    order; a position's numbers are its last slice's, its work and proofs the sum of all."""
    last = {}
    work = {}
    for i, part in parts:
        last[i] = part
        work[i] = work.get(i, 0) + int(part.work[0])
    order = sorted(last)
    proofs = [part.proofs for _, part in parts]
    return InnerResult(
        pn=np.array([int(last[i].pn[0]) for i in order], np.int64),
        dn=np.array([int(last[i].dn[0]) for i in order], np.int64),
        work=np.array([work[i] for i in order], np.int64),
        proofs=ProofRecords(*(np.concatenate([getattr(p, f) for p in proofs]) for f in ProofRecords._fields)),
        subtree=np.array([int(last[i].subtree[0]) for i in order], np.int64),
    )


def leaf_result(result):
    """An InnerResult as the evaluator contract's LeafResult: this solver's infinity (INF) as
    values.INF, keys as bytes, the certificates of CERTIFIED records cut apart."""
    p = result.proofs
    raw = p.certificates.tobytes()
    ends = np.cumsum(p.certificate_size)
    certified = np.flatnonzero(p.move == CERTIFIED)
    starts = (ends - p.certificate_size)[certified].tolist()
    proofs = LeafProofs(
        keys=keys_from_arrays(p.key_a, p.key_b), moves=p.move.tolist(), proven=p.proven.tolist(),
        certificates=[Certificate(raw[s], raw[s + 1 : e]) for s, e in zip(starts, ends[certified].tolist())],
    )  # fmt: skip
    pn, dn = ([values.INF if x >= INF else x for x in numbers.tolist()] for numbers in (result.pn, result.dn))
    return LeafResult(pn=pn, dn=dn, work=result.work.tolist(), subtree=result.subtree.tolist(), proofs=proofs)


class InnerSolver:
    """One solve's inner df-pn: its table (kept from job to job) and its stack. It is the
    outer search's evaluator (contracts.Evaluator: evaluate()); run() is the same search on the
    solver's own arrays and numbers, for tests and benchmarks."""

    def __init__(self, game, table_mb, knowledge=False, threat_depth=None):
        self.tables = game.tables
        # the family's knowledge, compiled for it alone (search_frames): Allis' rules with gravity
        self.rules = game.tables.rules_lines if game.gravity else None
        self.threat_depth = P.default_threat_depth() if threat_depth is None else int(threat_depth)
        # pairing strategies decide positions of games without gravity (pndb.games.patterns),
        # Allis' rules those of Connect Four (where the game has rules tables)
        known = not game.gravity or len(game.tables.rules_lines) > 0
        self.pair_budget = P.PAIRING_BUDGET if knowledge and known else 0
        # per question and number of empty cells: tries and decisions; where the search skips it
        self.knowledge_stats = np.zeros((2, 65, 2), np.int64)
        self.knowledge_skip = np.zeros((2, 65), np.bool_)
        self.steps = K.step_tables(game.tables)
        self.table = new_table(table_mb)
        t = game.tables
        nsym = t.cell_images.shape[1]
        self.stack = new_stack(nsym, len(t.win_masks), self.threat_depth, len(t.rules_lines))
        self.nodes = 0
        self.family = jit.family(game)
        self.compiled = False  # whether its first job has run (its family's kernels are compiled then)

    def evaluate(self, jobs, should_stop=None):
        """A contracts.LeafResult for each contracts.LeafJob, the jobs run in turn (run())."""
        results = []
        for job in jobs:
            ka, kb = arrays_from_keys(job.keys)
            stops = job.stop_on_proof, job.stop_on_disproof
            inner_job = InnerJob(ka, kb, job.question, job.budget, *stops, job.th_pn, job.th_dn)
            results.append(leaf_result(self.run(inner_job, should_stop)))
        return results

    def run(self, job, should_stop=None):
        """Search a job's positions; an :class:`InnerResult` with the proofs of those solved.

        A budget larger than SLICE is spent one position at a time in slices of SLICE nodes
        (df-pn resumes from its table), asking ``should_stop()`` between slices: Ctrl-C then
        waits a fraction of a second, not for the whole budget. The result then covers the
        positions searched before the stop (a prefix, as when stopping at a proof)."""
        if should_stop is None or job.budget <= SLICE:
            return self.run_slice(job, job.budget)
        parts = []
        for i in range(len(job.keys_a)):
            one = job._replace(keys_a=job.keys_a[i : i + 1], keys_b=job.keys_b[i : i + 1])
            spent = 0
            while True:
                part = self.run_slice(one, min(SLICE, job.budget - spent))
                parts.append((i, part))
                spent += int(part.work[0])
                solved = part.pn[0] == 0 or part.dn[0] == 0
                crossed = part.pn[0] >= job.th_pn or part.dn[0] >= job.th_dn
                if solved or crossed or spent >= job.budget or should_stop():
                    break
            if should_stop() or (job.stop_on_proof and part.pn[0] == 0):
                break
            if job.stop_on_disproof and part.dn[0] == 0:
                break
        return merged(parts)

    def run_slice(self, job, budget):
        """One call of the numba job with ``budget`` nodes per position."""
        q = int(job.question)
        self.stack.knowledge_skip[:] = self.knowledge_skip[q]
        pns, dns, work, count, out, owner, self.table, subtree = run_job(
            np.asarray(job.keys_a, np.uint64), np.asarray(job.keys_b, np.uint64), q,
            self.tables, self.rules, self.steps, self.table, self.stack, int(budget), EPS,
            bool(job.stop_on_proof), bool(job.stop_on_disproof),
            self.pair_budget, self.pair_budget,
            min(int(job.th_pn), int(INF)), min(int(job.th_dn), int(INF)),
        )  # fmt: skip
        if not self.compiled:
            jit.mark_compiled(self.family)
            self.compiled = True
        if self.pair_budget != 0:  # without knowledge there are no tries to count
            self.count_knowledge(q)
        self.nodes += sum(work[:count].tolist())
        records, used = out.used.tolist()
        proofs = ProofRecords(
            key_a=out.key_a[:records], key_b=out.key_b[:records], move=out.move[:records],
            question=np.full(records, q, np.int64), proven=owner[:records],
            certificate_size=out.certificate_size[:records], certificates=out.certificates[:used],
        )  # fmt: skip
        return InnerResult(pn=pns[:count], dn=dns[:count], work=work[:count], proofs=proofs, subtree=subtree)

    def count_knowledge(self, q):
        """Stop asking for question q at positions with a number of empty cells where knowledge
        has shown it rarely decides anything: fewer than one in KNOWLEDGE_RARE of the first
        KNOWLEDGE_TRIAL tries. Judged per number of empty cells because where knowledge pays
        changes with it: in qango6:tournament pairings fail near the start and decide the draw
        later, and a switch for the whole search (judged on its first tries) left it unsolved."""
        tries = self.stack.knowledge_tries
        self.knowledge_stats[q] += tries
        tries[:] = 0
        tried, found = self.knowledge_stats[q, :, 0], self.knowledge_stats[q, :, 1]
        self.knowledge_skip[q] |= (tried >= KNOWLEDGE_TRIAL) & (found * KNOWLEDGE_RARE < tried)

    def memory(self):
        """The table's bytes: in use, backed by the OS so far (estimated), allocated."""
        entries = self.table.recs.shape[0]
        used = int(self.table.filled[0])
        pages = max(1, entries * ENTRY_BYTES // (2 << 20))  # huge pages when the OS gives them
        touched = entries * ENTRY_BYTES * (1.0 - math.exp(-used / pages))
        return TableMemory(
            used=used * ENTRY_BYTES, touched=int(touched), allocated=entries * ENTRY_BYTES,
            limit=self.table.arena.nbytes,
        )  # fmt: skip
