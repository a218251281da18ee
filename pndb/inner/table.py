"""The inner solver's transposition table: 32-byte entries (KEY_A, KEY_B, NUMS, META), their
layout and flags, lookup, store and growth, and the table the workers of a solve share.

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

Sealed entries. The workers of a solve share one table (shared_table: a file every worker maps),
written without locks, so that a reader may meet an entry half written by another process. An
entry therefore stores in KEY_B not the key's second half but that half XOR seal(KEY_A, NUMS,
META), a mixing hash of the other three words, and lookup() reads NUMS and META once and takes
the entry only when they and the keys agree with the seal: words of two different entries agree
with a seal by chance alone (about 2^-64 a read), and the numbers and facts a reader takes are
those it checked. (Lockless hashing as in chess programs, with the seal over the data words.) A
worker killed in the middle of a write leaves an entry no seal matches: a miss, replaced as any.
A worker's REPORTED marks are its own (Table.reported): a worker must not take another's proof
as handed out before the owner has it.
"""

import mmap
import os
from typing import NamedTuple

import numba as nb
import numpy as np
from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic

from pndb.games.placement import kernels as K
from pndb.defaults import INNER_ENTRY_BYTES as ENTRY_BYTES
from pndb.defaults import inner_table_capacity


INF = np.int64((1 << 32) - 1)  # open numbers saturate below it: pn and dn fit 32 bits each
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
# known), 21-63 work. KEY_B: the key's second half XOR seal(KEY_A, NUMS, META) (sealed entries).
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


class TableMemory(NamedTuple):
    used: int  # bytes of the entries in use
    touched: int  # estimated bytes of the table the OS has backed so far
    allocated: int  # bytes of the table as it is now
    limit: int  # bytes it may grow to (--inner-mb)


class Table(NamedTuple):
    # uint64[size, 4]: KEY_A, KEY_B, NUMS (pn | dn << 32), META; once grown, the arena's first rows
    recs: np.ndarray
    filled: np.ndarray  # int64[1]: entries in use (that this process stored, in a shared table)
    arena: np.ndarray  # uint64[limit, 4]: the memory it may grow into, zero beyond recs
    # uint64[SEEN_WORDS]: the bits of the orbit hashes (kernels.StepTables) of the positions
    # stored (by this process): a child whose bit is clear is not in the table as far as this
    # process knows, and needs neither its canonical key nor a read until it is entered (on the
    # qango6 start three quarters of the children)
    seen: np.ndarray
    # uint64[n, 4]: entries of this process alone that hold its REPORTED marks when recs is
    # shared; no rows: recs holds them
    reported: np.ndarray
    reported_filled: np.ndarray  # int64[1]: entries of ``reported`` in use


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
        reported=np.zeros((0, 4), np.uint64),
        reported_filled=np.zeros(1, np.int64),
    )


REPORTED_MB = 16  # a worker's own table of REPORTED marks beside a shared table


def shared_table(region):
    """A table in ``region`` (a contracts.SharedRegion), shared with the other processes that
    map it: its entries the largest power of two that fits, never grown (grow needs room only
    this process writes), its REPORTED marks in a table of this process (REPORTED_MB)."""
    entries = 1 << ((region.bytes // ENTRY_BYTES).bit_length() - 1)
    fd = os.open(region.path, os.O_RDWR)
    try:
        memory = mmap.mmap(fd, entries * ENTRY_BYTES, flags=mmap.MAP_SHARED)
    finally:
        os.close(fd)
    if hasattr(mmap, "MADV_HUGEPAGE"):
        memory.madvise(mmap.MADV_HUGEPAGE)
    recs = np.frombuffer(memory, np.uint64).reshape(entries, 4)  # page-aligned: cache lines too
    marks = zero_arena(inner_table_capacity(REPORTED_MB))
    return Table(
        recs=recs, filled=np.zeros(1, np.int64), arena=recs, seen=np.zeros(SEEN_WORDS, np.uint64),
        reported=marks, reported_filled=np.zeros(1, np.int64),
    )  # fmt: skip


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
def mix(x):
    """A bijection of 64-bit words whose every output bit depends on every input bit
    (SplitMix64's finalizer)."""
    x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return x ^ (x >> np.uint64(31))


@nb.njit(cache=True, inline="always")
def seal(ka, nums, meta):
    """The word XORed into KEY_B of an entry with these KEY_A, NUMS and META (sealed entries)."""
    return mix(mix(ka ^ meta) ^ nums)


@nb.njit(cache=True, inline="always")
def write_entry(recs, s, ka, kb, nums, meta):
    """Write the entry of (ka, kb) with these NUMS and META into slot s, sealed."""
    recs[s, KEY_A] = ka
    recs[s, NUMS] = nums
    recs[s, META] = meta
    recs[s, KEY_B] = kb ^ seal(ka, nums, meta)


@nb.njit(cache=True, inline="always")
def home_block(ka, kb, mask):
    return np.int64(key_hash(ka, kb) & np.uint64(mask)) & ~np.int64(WINDOW - 1)


@nb.njit(cache=True, inline="always")
def seen_bit(h):
    """The word of Table.seen and the bit in it that stand for orbit hash h (its top 16 bits)."""
    top = h >> np.uint64(48)
    return np.int64(top >> np.uint64(6)), K.ONE << (top & np.uint64(63))


@nb.njit(cache=True, inline="always")
def lookup(recs, ka, kb):
    """(slot, NUMS, META) of the entry of (ka, kb), its words read once and checked against its
    seal; (-1, 0, 0) when there is none (or it is being written by another process)."""
    home = home_block(ka, kb, recs.shape[0] - 1)
    for s in range(home, home + WINDOW):
        meta = recs[s, META]
        if meta == 0:
            break
        if recs[s, KEY_A] == ka:
            nums = recs[s, NUMS]
            if recs[s, KEY_B] ^ seal(ka, nums, meta) == kb:
                return s, nums, meta
    return -1, K.ZERO, K.ZERO


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
    s, nums, meta = lookup(recs, ka, kb)
    if s < 0:
        return pn0, dn0
    return entry_numbers(meta, nums, q)


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
    _, _, meta = lookup(recs, ka, kb)
    return np.int64(meta >> WORK_SHIFT)


@nb.njit(cache=True, inline="always")
def entry_sequence(meta):
    """The first stone of a threat sequence that wins for the player to move, as a table entry's
    META ``meta`` records it; -1 when it records none."""
    return np.int64((meta & SEQUENCE_CELL) >> SEQUENCE_SHIFT) - 1


@nb.njit(cache=True, _nrt=False)  # allocates nothing: no atomic reference counts for its arrays
def store(recs, filled, ka, kb, q, pn, dn, work, marks, sequence):
    """Record a search's result: a fact when it solved the question, else its numbers; the
    NO_VERDICT ``marks`` it found, and the first stone of a threat ``sequence`` that wins for the
    player to move (-1: none found). The entry merged with is the one lookup() would take.
    (A Table's arrays, not the tuple: binding it cost reference counts for each.)"""
    home = home_block(ka, kb, recs.shape[0] - 1)
    victim = home
    least = EMPTY
    meta = K.ZERO
    nums = UNKNOWN
    found = False
    for s in range(home, home + WINDOW):
        m = recs[s, META]
        if m == 0:
            victim = s
            break
        if recs[s, KEY_A] == ka:
            n = recs[s, NUMS]
            if recs[s, KEY_B] ^ seal(ka, n, m) == kb:
                victim, meta, nums, found = s, m, n, True
                break
        if m >> WORK_SHIFT < least:
            least = m >> WORK_SHIFT
            victim = s
    if not found:
        if recs[victim, META] == 0:
            filled[0] += 1
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
        nums = np.uint64(pn) | (np.uint64(dn) << np.uint64(32))
        flags = flags & ~np.uint64(16) | np.uint64(q << 4)
    meta = ((meta >> WORK_SHIFT) + np.uint64(work)) << WORK_SHIFT | flags | np.uint64(hi << 2) | np.uint64(lo)
    write_entry(recs, victim, ka, kb, nums, meta)


@nb.njit(cache=True, inline="always")
def mark_reported(recs, s, nums, meta, ka, kb, bit, marks, marks_filled):
    """Whether the proof of (ka, kb) was handed out before (its REPORTED ``bit`` is set), and
    mark it so now: in its entry (slot ``s`` of ``recs``, whose words lookup() read as ``nums``
    and ``meta``; -1: no entry, no mark), or, where this process keeps its marks in a table of
    its own (``marks`` has rows: Table.reported), there."""
    if marks.shape[0] == 0:
        if s < 0:
            return False
        if meta & bit != K.ZERO:
            return True
        write_entry(recs, s, ka, kb, nums, meta | bit)
        return False
    _, _, own = lookup(marks, ka, kb)
    if own & bit != K.ZERO:
        return True
    store(marks, marks_filled, ka, kb, 0, 1, 1, 1, bit, -1)
    return False


@nb.njit(cache=True)
def stored_keys(recs):
    """The keys (key_a, key_b) and META of the entries in use of ``recs``, for tests and
    benchmarks that read a table."""
    used = np.flatnonzero(recs[:, META] != K.ZERO)
    ka = np.empty(used.shape[0], np.uint64)
    kb = np.empty(used.shape[0], np.uint64)
    meta = np.empty(used.shape[0], np.uint64)
    for i in range(used.shape[0]):
        s = used[i]
        ka[i], meta[i] = recs[s, KEY_A], recs[s, META]
        kb[i] = recs[s, KEY_B] ^ seal(ka[i], recs[s, NUMS], meta[i])
    return ka, kb, meta


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
        for s in range(old):  # (a loop: a slice assignment compiles numba's shape-error message, ~5 s)
            for w in range(recs.shape[1]):
                recs[s, w] = tab.recs[s, w]
    mask = recs.shape[0] - 1
    for window in range(0, old, WINDOW):
        stay = window  # the next slot of the window for an entry that stays in it
        for s in range(window, window + WINDOW):
            if recs[s, META] == 0:
                break
            ka = recs[s, KEY_A]
            to = home_block(ka, recs[s, KEY_B] ^ seal(ka, recs[s, NUMS], recs[s, META]), mask)
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
    return Table(recs, tab.filled, tab.arena, tab.seen, tab.reported, tab.reported_filled)
