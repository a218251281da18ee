"""Allis' Connect Four rules (pndb.games.connect4.definitions) against the reference minimax.

A rules verdict is a claim about the game value; the reference model (tests/reference.py) has
its own rules and minimax, so every verdict is checked against a value computed without pndb.
"""

import json
import random
from collections import Counter
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import reference as R
from conftest import cli, ref

from pndb.games.connect4 import certificate, compiled
from pndb.games.connect4 import definitions as cr
from pndb.games.connect4.definitions import Certificate, Instance, Rule
from pndb.games import load_game

BASIC = frozenset({Rule.CLAIMEVEN, Rule.BASEINVERSE, Rule.VERTICAL})
DERIVED = [Rule.AFTEREVEN, Rule.LOWINVERSE, Rule.HIGHINVERSE, Rule.BASECLAIM, Rule.BEFORE, Rule.SPECIALBEFORE]
OLD_RULES = cr.ALL_RULES - {Rule.SPECIALBEFORE}  # the evaluator before Specialbefore and combinations

def agrees(value, exact):
    """A rules value against the minimax value (+1 first wins, 0 draw, -1 second wins)."""
    return {
        cr.FIRST_WINS: exact == 1,
        cr.SECOND_WINS: exact == -1,
        cr.FIRST_WONT_WIN: exact <= 0,
        cr.SECOND_WONT_WIN: exact >= 0,
    }[value]


def check_verdict(game, a, b, verdict):
    """The verdict holds in the reference model, and its certificate survives bytes and the
    checker."""
    rg = ref(game.spec)
    assert agrees(verdict.value, R.minimax(rg, a, b)), (game.spec, a, b, verdict)
    cert = certificate.decode_certificate(certificate.encode_certificate(verdict))
    assert cert == verdict.certificate
    assert certificate.check_certificate(game, a, b, cert) == verdict.value
    mine = R.cells_of(a if cert.controller == 1 else b)
    mine |= dead_cells(game.width, cert.threat)
    problems = {tuple(sorted(p)) for p in rg.patterns if not p & mine}
    assert {g for gs in verdict.solved for g in gs} == problems


def checks_in_bytes(game, a, b, verdict):
    """The certificate survives bytes and the checker, which finds the verdict's value."""
    cert = certificate.decode_certificate(certificate.encode_certificate(verdict))
    return cert == verdict.certificate and certificate.check_certificate(game, a, b, cert) == verdict.value


def dead_cells(w, threat):
    """The cells the opponent never gets under a win condition (docs/book-format.md, "Dead"):
    a threat and the cells above it; for a threat combination (x, low), x, the cells two or more
    above x, above(low) and every second cell above that."""
    if threat == cr.NO_THREAT:
        return set()
    if isinstance(threat, cr.Combination):
        x, low = threat
        rx, rl, cx, cl = x // w, low // w, x % w, low % w
        return {x} | {r * w + cx for r in range(rx - 1)} | {r * w + cl for r in range(rl) if r % 2 == 0}
    return set(range(threat % w, threat + 1, w))


def random_positions(spec, count, seed, min_stones=0, max_empty=None, even_empty=False):
    """Positions of random games that avoid winning moves, cut at a random move (at least
    ``min_stones`` in, at most ``max_empty`` cells empty; with an even number of empty cells,
    where the rules apply, if ``even_empty``)."""
    rg = ref(spec)
    rng = random.Random(seed)
    out = []
    while len(out) < count:
        moves = R.random_game(rg, rng, avoid_wins=True)
        lo = min_stones if max_empty is None else max(min_stones, len(rg.cells) - max_empty)
        if len(moves) <= lo:
            continue
        cut = rng.randrange(lo, len(moves))
        if even_empty and (len(rg.cells) - cut) % 2:
            cut += 1 if cut + 1 < len(moves) else -1
        if cut < lo:
            continue
        a = b = 0
        for cell in moves[:cut]:
            a, b = R.play(rg, a, b, cell)
        out.append((a, b))
    return out


def board(moves, width=7, height=6):
    """The position after moves in Allis' notation ('d1 d2 ...': column letter, row from the
    bottom), the first player (White) first."""
    rg = ref(f"connect4:{width}x{height}")
    a = b = 0
    for m in moves.split():
        cell = R.drop(rg, a, b, ord(m[0]) - ord("a"))
        assert cell == (height - int(m[1:])) * width + ord(m[0]) - ord("a"), m
        a, b = R.play(rg, a, b, cell)
    return a, b


def test_every_position_of_4x4():
    """Every verdict holds; Specialbefore and threat combinations decide positions that the
    rules without them leave open, and lose none."""
    game = load_game("connect4:4x4")
    rg = ref(game.spec)
    decided, new = 0, Counter()
    for a, b in R.enumerate_positions(rg):
        verdict = compiled.evaluate(game, a, b)
        old = compiled.evaluate(game, a, b, OLD_RULES, combinations=False)
        assert old.value is None or verdict.value is not None
        if verdict.value is not None:
            decided += 1
            check_verdict(game, a, b, verdict)
            if old.value != verdict.value:
                new[new_kind(verdict)] += 1
    assert decided > 40000  # the rules decide about half of the White-to-move positions
    assert new["combination"] > 0 and new["specialbefore"] > 0, new


def new_kind(verdict):
    """What a verdict the rules without Specialbefore and combinations did not give uses."""
    if isinstance(verdict.certificate.threat, cr.Combination):
        return "combination"
    return (
        "specialbefore" if Rule.SPECIALBEFORE in {i.rule for i in verdict.certificate.instances} else "other"
    )


@pytest.mark.parametrize("spec", ["connect4:5x4", "connect4:4x5"])
def test_random_positions_of_small_boards(spec):
    game = load_game(spec)
    decided = 0
    for a, b in random_positions(spec, 400, seed=5, min_stones=8):
        verdict = compiled.evaluate(game, a, b)
        if verdict.value is not None:
            decided += 1
            check_verdict(game, a, b, verdict)
    assert decided > 50


@pytest.mark.parametrize(
    "spec, max_empty, count",
    [
        ("connect4:6x4", 14, 400),
        ("connect4:5x5", 13, 400),
        ("connect4:6x5", 14, 400),
        ("connect4:7x6", 16, 1000),
    ],
)
def test_random_endgames(spec, max_empty, count):
    """Both questions, and both kinds of verdict: the player to move does not win, or (with a
    threat) the other player wins."""
    game = load_game(spec)
    decided = {}
    for a, b in random_positions(spec, count, seed=7, max_empty=max_empty):
        verdict = compiled.evaluate(game, a, b)
        if verdict.value is not None:
            decided[verdict.value] = decided.get(verdict.value, 0) + 1
            check_verdict(game, a, b, verdict)
    assert len(decided) >= 3 and sum(decided.values()) >= 20, decided


@pytest.mark.parametrize("spec", ["connect4:4x4", "connect4:5x4", "connect4:5x5"])
def test_other_chosen_sets(spec):
    """Every chosen set must be right, not only the first one found: instances in random
    orders make the search return other sets."""
    game = load_game(spec)
    rng = random.Random(17)
    for a, b in random_positions(spec, 300, seed=19, max_empty=14):
        for _ in range(3):
            verdict = compiled.evaluate(game, a, b, rng=rng)
            if verdict.value is not None:
                check_verdict(game, a, b, verdict)


@pytest.mark.parametrize("rule", DERIVED)
def test_each_rule_with_the_basic_ones(rule):
    """Each derived rule, added alone to Claimeven, Baseinverse and Vertical, decides positions
    they do not decide, and rightly."""
    game = load_game("connect4:4x4")
    needed = 0
    for a, b in random_positions(game.spec, 1500, seed=11):
        verdict = compiled.evaluate(game, a, b, BASIC | {rule})
        if verdict.value is None:
            continue
        check_verdict(game, a, b, verdict)
        if compiled.evaluate(game, a, b, BASIC).value is None:
            assert rule in {i.rule for i in verdict.certificate.instances}
            needed += 1
    assert needed > 0


@pytest.mark.parametrize("rule", sorted(BASIC))
def test_each_basic_rule_alone(rule):
    game = load_game("connect4:4x4")
    decided = 0
    for a, b in random_positions(game.spec, 1500, seed=13):
        verdict = compiled.evaluate(game, a, b, {rule})
        if verdict.value is not None:
            assert {i.rule for i in verdict.certificate.instances} <= {rule}
            check_verdict(game, a, b, verdict)
            decided += 1
    assert decided > 0


# Allis' worked examples on the 7 x 6 board (thesis chapters 3, 4 and 10).
GAME_3_1 = "d1 d2 d3 e1 d4 e2 d5 d6 c1 c2 c3 a1"  # diagram 4.1 (the game of diagram 3.1)


@pytest.mark.parametrize(
    "moves",
    [
        GAME_3_1,  # diagram 4.1: Black wins at b2 or f2 (Afterevens b2-e2, c2-f2, diagram 6.4)
        GAME_3_1 + " c4 a2",  # diagram 4.2
        GAME_3_1 + " e3 g1",  # diagram 4.7
        GAME_3_1 + " c4 a2 c5 c6 e3 a3 a4 a5 e4 a6 e5 e6",  # diagram 3.1
    ],
)
def test_aftereven_examples(moves):
    """Black will win (Black's threats are "b2, b6, f2 or f6", section 3.1): the rules find one
    of these even threats as win condition. Allis' own chosen set (section 6.4: the Afterevens
    b2-e2 and c2-f2 and Claimevens elsewhere) checks, and fails without the Afterevens."""
    game = load_game("connect4:7x6")
    a, b = board(moves)
    verdict = compiled.evaluate(game, a, b)
    assert verdict.value == cr.SECOND_WINS
    assert verdict.certificate.threat in board_cells("b2 b6 f2 f6")
    groups = ("b2 c2 d2 e2", "c2 d2 e2 f2")
    afterevens = tuple(Instance(Rule.AFTEREVEN, tuple(sorted(board_cells(g)))) for g in groups)
    claimevens = []
    for col in "abcdefg":
        for row in (2, 4, 6):
            lower, upper = board_cells(f"{col}{row - 1} {col}{row}")
            if not (a | b) >> lower & 1 and not (col in "bf" and row == 2):  # b1-b2, f1-f2: Afterevens
                claimevens.append(Instance(Rule.CLAIMEVEN, (lower, upper)))
    allis = Certificate(2, cr.NO_THREAT, afterevens + tuple(claimevens))
    assert certificate.check_certificate(game, a, b, allis) == cr.FIRST_WONT_WIN
    with pytest.raises(certificate.CertificateError):
        certificate.check_certificate(game, a, b, allis._replace(instances=tuple(claimevens)))


def board_cells(names, width=7, height=6):
    return [(height - int(n[1:])) * width + ord(n[0]) - ord("a") for n in names.split()]


def test_claimeven_example():
    """Diagram 4.12: every column has an even number of empty squares; follow-up (Claimevens
    only) draws."""
    game = load_game("connect4:7x6")
    a, b = board("c1 d1 d2 d3 d4 d5 d6 c2")
    verdict = compiled.evaluate(game, a, b, {Rule.CLAIMEVEN})
    assert verdict.value == cr.FIRST_WONT_WIN


def test_before_example():
    """Section 10.1: on the empty 6 x 6 board Black's set needs Befores."""
    game = load_game("connect4:6x6")
    assert compiled.evaluate(game, 0, 0, BASIC | {Rule.AFTEREVEN}).value is None
    verdict = compiled.evaluate(game, 0, 0, BASIC | {Rule.BEFORE})
    assert verdict.value == cr.FIRST_WONT_WIN
    assert Rule.BEFORE in {i.rule for i in verdict.certificate.instances}


def test_odd_threat_example():
    """Diagram 3.14 (diagram 3.11 after forced moves): "the odd threat White has on a3 is strong
    enough to win the game"; without the win condition the rules say nothing (Black to move)."""
    game = load_game("connect4:7x6")
    a, b = board("d1 d2 c1 e1 d3 c2 c3 e2 a1 b1 b2 d4 b3 e3 e4")
    verdict = compiled.evaluate(game, a, b)
    assert verdict.value == cr.FIRST_WINS
    assert verdict.certificate.threat == board_cells("a3")[0]
    assert certificate.check_certificate(game, a, b, verdict.certificate) == cr.FIRST_WINS


# Diagram 6.10 (section 6.9), as far as the text gives it: White to move; Black's group d2-g2
# with e2 directly playable, f1-f2 and g1-g2 Claimevens, d3 directly playable, a1-d1 to be
# solved by a Baseinverse that may lose b1, b1-e4 a problem. The other stones (c1 c2 c4 c5, e1)
# are a completion; Pascal Pons' solver gives this position (its moves 35334334) -1 for White
# to move: a loss, so Black wins, as the rules say.
SPECIALBEFORE_6_10 = "c1 e1 c2 c3 d1 c4 c5 d2"


def test_specialbefore_example():
    """The Specialbefore of diagram 6.10 (group d2-g2, special pair e2-d3, Claimevens f1-f2 and
    g1-g2) is in the chosen set; without Specialbefore the rules find nothing, and Allis'
    Before in its place (the Vertical e2-e3) does not hold with the rest."""
    game = load_game("connect4:7x6")
    a, b = board(SPECIALBEFORE_6_10)
    verdict = compiled.evaluate(game, a, b)
    assert verdict.value == cr.SECOND_WINS
    assert checks_in_bytes(game, a, b, verdict)  # no minimax here: 7 x 6 is too big for it
    d2, e2, f2, g2, d3, f1, g1, e3 = board_cells("d2 e2 f2 g2 d3 f1 g1 e3")
    special = Instance(Rule.SPECIALBEFORE, (d2, e2, f2, g2, e2, d3, f1, f2, g1, g2))
    assert special in verdict.certificate.instances
    assert compiled.evaluate(game, a, b, OLD_RULES, combinations=False) == cr.NO_VERDICT
    before = Instance(Rule.BEFORE, (d2, e2, f2, g2, e2, e3, f1, f2, g1, g2))
    others = tuple(i for i in verdict.certificate.instances if i != special)
    with pytest.raises(certificate.CertificateError):
        certificate.check_certificate(game, a, b, verdict.certificate._replace(instances=others + (before,)))
    for wrong in (
        (d2, e2, f2, g2, e2, f1, g1, g2),  # x in the column of an empty square of the group
        (d2, e2, f2, g2, f2, d3, e2, e3, g1, g2),  # s0 not directly playable
        (d2, e2, f2, g2, e2, e3, f1, f2, g1, g2),  # x not directly playable
        (d2, e2, f2, g2, e2, d3, g1, g2, f1, f2),  # the other pairs out of order
    ):
        x = Instance(Rule.SPECIALBEFORE, wrong)
        with pytest.raises(certificate.CertificateError):
            certificate.check_certificate(game, a, b, verdict.certificate._replace(instances=others + (x,)))


# Section 8.3, variant 1 (diagram 8.4 after White's answer g2): White's half-filled groups d1-g4
# and d3-g3 cross at f3, Black has played f1 and White g2, Black to move. The text fixes d1 d2
# d3 e1 e2 e3 f1 g1 g2; the other stones are a completion. Pons' solver gives this position (its
# moves 114273744556555) -1 for Black to move: White wins, as the rules say.
COMBINATION_8_4 = "a1 a2 d1 b1 g1 c1 g2 d2 d3 e1 e2 f1 e3 e4 e5"


def test_threat_combination_example():
    """The threat combination f3 (crossing) with g3-g4 decides the position, which the rules
    without combinations leave open; in Allis' diagram 8.3 itself (g2 and f1 still empty) the
    restricted combination does not apply, and a certificate claiming it is rejected."""
    game = load_game("connect4:7x6")
    a, b = board(COMBINATION_8_4)
    verdict = compiled.evaluate(game, a, b)
    f3, g3, g2, f1, g4, f2 = board_cells("f3 g3 g2 f1 g4 f2")
    assert verdict.value == cr.FIRST_WINS and verdict.certificate.threat == (f3, g3)
    assert checks_in_bytes(game, a, b, verdict)  # no minimax here: 7 x 6 is too big for it
    assert compiled.evaluate(game, a, b, OLD_RULES, combinations=False) == cr.NO_VERDICT
    assert compiled.evaluate(game, a, b, combinations=False) == cr.NO_VERDICT
    for wrong in ((g3, f3), (f3, g4), (f2, g3)):
        with pytest.raises(certificate.CertificateError):
            wrong_threat = verdict.certificate._replace(threat=cr.Combination(*wrong))
            certificate.check_certificate(game, a, b, wrong_threat)
    a83, b83 = a & ~(1 << g2), b & ~(1 << f1)  # diagram 8.3: g3 is not directly playable
    assert cr.Combination(f3, g3) not in cr.combinations(cr.board_of(game, a83, b83), a83, 1)
    with pytest.raises(certificate.CertificateError):
        certificate.check_certificate(game, a83, b83, verdict.certificate)


@pytest.mark.parametrize("moves", ["", "d1 d2 c1 e1 d3 c2 c3 e2"])
def test_white_wins_examples(moves):
    """The empty 7 x 6 board and diagram 3.11 are White wins (chapter 13, section 3.4): no
    verdict may claim otherwise."""
    a, b = board(moves)
    assert compiled.evaluate(load_game("connect4:7x6"), a, b) == cr.NO_VERDICT


def test_no_controller():
    """An odd number of empty squares, or a finished game: the rules say nothing."""
    game = load_game("connect4:4x4")
    a, b = board("a1", 4, 4)
    assert compiled.evaluate(game, a, b) == cr.NO_VERDICT
    a, b = board("a1 b1 a2 b2 c1 b3 a3 b4", 4, 4)  # the second player won in column b
    assert compiled.evaluate(game, a, b) == cr.NO_VERDICT


def test_search_budget():
    """Out of search nodes, the rules say nothing (rather than something unproven)."""
    game = load_game("connect4:4x4")
    assert compiled.evaluate(game, 0, 0, max_nodes=0) == cr.NO_VERDICT
    assert compiled.evaluate(game, 0, 0, max_nodes=100).value == cr.FIRST_WONT_WIN


def test_documented_certificate():
    """The example payload of docs/book-format.md is valid on the empty 4 x 4 board."""
    payload = bytes.fromhex("02 ff 05 01 02 04 00 01 02 07 03 01 02 0c 08 02 02 0d 0e 05 04 09 05 0a 06")
    game = load_game("connect4:4x4")
    cert = certificate.decode_certificate(payload)
    assert certificate.check_certificate(game, 0, 0, cert) == cr.FIRST_WONT_WIN
    assert R.minimax(ref(game.spec), 0, 0) <= 0


def test_tampered_certificates_are_rejected():
    """Dropping an instance, moving a cell, or adding a conflicting instance breaks a
    certificate; so do malformed bytes."""
    game = load_game("connect4:6x4")
    checked = 0
    for a, b in random_positions(game.spec, 60, seed=3):
        verdict = compiled.evaluate(game, a, b)
        if verdict.value is None or not verdict.certificate.instances:
            continue
        payload = certificate.encode_certificate(verdict)
        cert = verdict.certificate
        for k in range(len(cert.instances)):
            if not verdict.solved[k]:
                continue
            rest = cert.instances[:k] + cert.instances[k + 1 :]
            others = {g for j, gs in enumerate(verdict.solved) if j != k for g in gs}
            if set(verdict.solved[k]) <= others:
                continue  # that instance was not needed
            with pytest.raises(certificate.CertificateError):
                certificate.check_certificate(game, a, b, cert._replace(instances=rest))
            checked += 1
        first = cert.instances[0]
        dup = cert._replace(instances=cert.instances + (first,))
        if first.rule not in (Rule.AFTEREVEN, Rule.BEFORE):
            with pytest.raises(certificate.CertificateError):
                certificate.check_certificate(game, a, b, dup)
        moved = first._replace(cells=tuple((c + 1) % 24 for c in first.cells))
        try:
            moved_cert = cert._replace(instances=(moved,) + cert.instances[1:])
            value = certificate.check_certificate(game, a, b, moved_cert)
        except certificate.CertificateError:
            pass
        else:  # a moved instance that is still valid must still prove only the truth
            assert agrees(value, R.minimax(ref(game.spec), a, b))
        with pytest.raises(certificate.CertificateError):
            certificate.check_certificate(game, a, b, cert._replace(controller=3 - cert.controller))
        other = first.cells[0] if cert.threat == cr.NO_THREAT else cr.NO_THREAT
        with pytest.raises(certificate.CertificateError):  # a win condition is no won't-win, and back
            certificate.check_certificate(game, a, b, cert._replace(threat=other))
    assert checked > 10
    for bad in (payload[:-1], payload + b"\0", b"\x03" + payload[1:], payload[:2] + b"\x09" + payload[3:]):
        with pytest.raises(certificate.CertificateError):
            certificate.decode_certificate(bad)
    for bad in (b"\x01\xfe", b"\x01\xfe\x00\x01", b"\x01\xfe\x00\x01\x01"):  # a combination, cut short
        with pytest.raises(certificate.CertificateError):
            certificate.decode_certificate(bad)


@pytest.mark.parametrize(
    "spec, count",
    [("connect4:4x4", 300), ("connect4:5x4", 200), ("connect4:6x4", 150), ("connect4:5x5", 150),
     ("connect4:6x5", 100), ("connect4:7x6", 100)],
)  # fmt: skip
def test_compiled_equals_python(spec, count):
    """The numba kernels find the instances of the Python definitions in the same order and run
    the same search: the same verdict, certificate and solved groups, for every rule subset,
    instance order (rng) and node budget (a small one runs out)."""
    game = load_game(spec)
    rng = random.Random(23)
    decided = 0
    for k, (a, b) in enumerate(random_positions(spec, count, seed=29)):
        rules = cr.ALL_RULES if k % 3 else frozenset(rng.sample(sorted(cr.ALL_RULES), rng.randrange(1, 8)))
        nodes = (20000, 30, 3)[k % 3]
        seed = rng.random() if k % 2 else None
        order = (lambda: random.Random(seed)) if seed is not None else (lambda: None)
        fast = compiled.evaluate(game, a, b, rules, order(), nodes)
        slow = compiled.evaluate(game, a, b, rules, order(), nodes, compiled=False)
        assert fast == slow, (spec, a, b, rules, nodes)
        if fast.value is not None:
            decided += 1
            assert certificate.check_certificate(game, a, b, fast.certificate) == fast.value
        if rules == cr.ALL_RULES and seed is None:  # what the inner search asks: its payload too
            claims = {None: (0, 0), cr.FIRST_WINS: (1, 1), cr.SECOND_WINS: (-1, -1)}
            claims |= {cr.FIRST_WONT_WIN: (-1, 0), cr.SECOND_WONT_WIN: (0, 1)}
            w, h = game.tables.columns.shape
            lines = cr.lines_of(game)
            for q in (0, 1):  # a question the verdict does not answer: no verdict, no payload
                out = np.zeros(compiled.payload_bound(len(lines)), np.uint8)
                found, size = compiled.nb_decides(w, h, lines, np.uint64(a), np.uint64(b), nodes, q, out)
                assert found == claims[fast.value][q], (spec, a, b, q)
                payload = certificate.encode_certificate(fast) if found != 0 else b""
                assert out[:size].tobytes() == payload, (spec, a, b, q)
    assert decided >= 3


@pytest.mark.parametrize("spec, count", [("connect4:5x4", 150), ("connect4:6x5", 100), ("connect4:7x6", 100)])
def test_unsolved_problems_found_without_instances(spec, count):
    """The compiled evaluation skips a win condition where _nb_unsolved finds a problem that no
    instance solves; it finds exactly the problems that the Python definitions' instances leave
    unsolved, under every win condition of random positions."""
    game = load_game(spec)
    lines = cr.lines_of(game)
    w, h = game.tables.columns.shape
    seen = Counter()
    for a, b in random_positions(spec, count, seed=31):
        setting = cr._setting(cr.board_of(game, a, b), a, b)
        for threat in setting.threats if setting else ():
            bd = cr.board_of(game, a, b, threat)
            dead = cr._dead(bd, threat)
            problems = [g for g in bd.lines if not g & setting.mine and not g & dead]
            opponent = (a | b) & ~setting.mine
            through = [0] * (w * h)
            for p, g in enumerate(problems):
                for s in cr._cells(g):
                    through[s] |= 1 << p
            solved = 0
            for x in cr.instances(bd, opponent):
                solved |= x.solved(through) if cr._useful(x, through) else 0
            unsolved = np.zeros(len(problems), np.bool_)
            count = compiled._nb_unsolved(
                w, h, np.uint64(bd.region), np.uint64(bd.occupied), np.uint64(opponent),
                np.array(bd.top, np.int64), lines, np.array(problems, np.uint64), unsolved,
            )  # fmt: skip
            expected = [not solved >> p & 1 for p in range(len(problems))]
            assert unsolved.tolist() == expected and count == sum(expected), (spec, a, b, threat)
            seen[count > 0] += 1
    assert seen[True] >= 10 and seen[False] >= 10


def test_solve_with_rules_gives_verified_book(tmp_path):
    """connect4:5x4 solved with knowledge (a small inner budget, so that the outer search meets
    positions the rules decide): the database holds rule certificates, `check` accepts them,
    and the exported book carries one that tools/verify.py accepts."""
    db, book = tmp_path / "db", tmp_path / "b.pnbook"
    for args in (
        ("solve", "connect4:5x4", "--db", db, "--inner-nodes", "300", "--quiet"),
        ("check", db),
        ("export", db, "-o", book),
    ):
        r = cli(*args)
        assert r.returncode == 0, r.stdout + r.stderr
    status = json.loads(cli("status", "--json", db).stdout)
    assert status["result"] == "draw" and status["certificates"] > 0
    tool = Path(__file__).resolve().parent.parent / "tools" / "verify.py"
    r = subprocess.run([sys.executable, str(tool), str(book)], capture_output=True, text=True)
    assert r.returncode == 0 and "certificates" in r.stdout, r.stdout + r.stderr
