"""Go's kernels and game (pndb/games/go/) against the plain model written from docs/go.md
(tests/go_reference.py): random games on every board size, move by move (legal moves, captures,
suicide, superko, passes, the end and the score); keys under symmetry; specs and moves through
the command line.

PNDB_GO_GAMES multiplies the number of games (the defaults keep the test to seconds; the
figures in the commit that added it came from PNDB_GO_GAMES=10)."""

import os
import random

import pytest
from conftest import assert_user_error, run_process
from go_reference import BLACK, EMPTY, PASS, WHITE, RefGo, State

from pndb.games import MoveError, load_game
from pndb.games.go.game import Position, code
from pndb.games.go.notation import PASS as GO_PASS
from pndb.values import Status

SCALE = int(os.environ.get("PNDB_GO_GAMES", "1"))
# (board, games): thousands on the smallest boards, fewer where a game is long
BOARDS = [((2, 2), 900), ((2, 3), 450), ((3, 3), 150), ((3, 4), 60), ((4, 4), 30), ((5, 5), 15), ((7, 7), 3)]


def position_of(state):
    """The reference state as pndb's Position."""

    def bits(board, colour):
        return sum(1 << i for i, c in enumerate(board) if c == colour)

    history = frozenset(code(bits(b, BLACK), bits(b, WHITE)) for b in state.history)
    return Position(
        bits(state.board, BLACK), bits(state.board, WHITE), state.to_move == BLACK, state.passes, history
    )


def ref_move(move):
    return PASS if move == GO_PASS else move


def random_game(ref, game, rng, events):
    """Play one random game in both models, comparing them after every move; count in
    ``events`` the captures, suicides and superko refusals the reference met."""
    state = ref.start()
    pos = game.start()
    limit = 3 * ref.points + 6  # then both players pass
    for ply in range(10_000):
        assert position_of(state) == pos
        assert game.is_position(pos)
        ref_legal = ref.legal_moves(state)
        legal = [ref_move(m) for m in game.legal_moves(pos)]
        assert sorted(legal, key=str) == sorted(ref_legal, key=str), (state, legal, ref_legal)
        for p in range(ref.points):  # why each empty point is refused
            if not ref.over(state) and state.board[p] == EMPTY and p not in ref_legal:
                placed = ref.place(state.board, p, state.to_move)
                events["suicide" if placed is None else "superko"] += 1
                reason = game.illegal_reason(pos, p)
                assert ("suicide" if placed is None else "superko") in reason, reason
        if ref.over(state):
            assert legal == []
            m = ref.margin(state.board)
            assert game.margin(pos) == m
            want = {2: Status.FIRST_WON, 1: Status.DRAW, 0: Status.SECOND_WON}[ref.outcome(state.board)]
            assert game.status(pos) == want
            events["ends"] += 1
            return
        assert game.status(pos) == Status.ONGOING
        assert game.margin(pos) == ref.margin(state.board)  # the score of boards on the way too
        stones = [m for m in ref_legal if m != PASS]
        if ply >= limit or not stones or rng.random() < 0.08:
            move = PASS
        else:
            move = rng.choice(stones)
        before = sum(c != EMPTY for c in state.board)
        state = ref.play(state, move)
        events["captures"] += before + (move != PASS) > sum(c != EMPTY for c in state.board)
        pos = game.play(pos, GO_PASS if move == PASS else move)
    raise AssertionError("a game that does not end")


@pytest.mark.parametrize("size,games", BOARDS, ids=[f"{w}x{h}" for (w, h), _ in BOARDS])
def test_kernels_agree_with_the_reference_over_random_games(size, games):
    w, h = size
    rng = random.Random(w * 10 + h)
    events = dict(suicide=0, superko=0, captures=0, ends=0)
    for komi in (0, 1, -2):
        ref, game = RefGo(w, h, komi), load_game(f"go:{w}x{h}:komi={komi}")
        for _ in range(max(1, games * SCALE // 3)):
            random_game(ref, game, rng, events)
    assert events["ends"] == 3 * max(1, games * SCALE // 3)
    # the games met every rule they test
    assert events["captures"] > 0 and events["suicide"] > 0, events
    if w * h <= 16:
        assert events["superko"] > 0, events


def symmetric_images(state, ref):
    """The reference state under every symmetry of its board (8 for a square, else 4)."""
    w, h = ref.width, ref.height
    maps = [lambda r, c: (r, c), lambda r, c: (r, w - 1 - c), lambda r, c: (h - 1 - r, c),
            lambda r, c: (h - 1 - r, w - 1 - c)]  # fmt: skip
    if w == h:
        maps += [lambda r, c: (c, r), lambda r, c: (w - 1 - c, h - 1 - r), lambda r, c: (c, h - 1 - r),
                 lambda r, c: (w - 1 - c, r)]  # fmt: skip

    def image(board, f):
        out = [EMPTY] * len(board)
        for i, colour in enumerate(board):
            r, c = f(*divmod(i, w))
            out[r * w + c] = colour
        return tuple(out)

    return [
        State(
            image(state.board, f), state.to_move, state.passes, frozenset(image(b, f) for b in state.history)
        )
        for f in maps
    ]


@pytest.mark.parametrize("w,h", [(3, 3), (3, 2), (4, 4)])
def test_keys_are_the_same_under_symmetry_and_differ_with_the_history(w, h):
    ref, game = RefGo(w, h), load_game(f"go:{w}x{h}")
    rng = random.Random(7)
    seen = {}
    for _ in range(60):
        state = ref.start()
        for _ in range(rng.randrange(1, 12)):
            moves = ref.legal_moves(state)
            if ref.over(state):
                break
            state = ref.play(state, rng.choice(moves))
        images = symmetric_images(state, ref)
        assert len(images) == len(game.symmetries)
        keys = {game.key(position_of(s)) for s in images}
        assert len(keys) == 1
        key = keys.pop()
        # the key stands for one of the images, and for nothing else
        assert game.position(key) in [position_of(s) for s in images]
        whole = frozenset((s.board, s.to_move, s.passes, s.history) for s in images)
        assert seen.setdefault(key, whole) == whole
    assert len(seen) > 30


def test_the_same_board_with_another_history_is_another_position():
    game = load_game("go:3x3")
    a, _ = game.parse_moves("a1 pass b2")  # a corner, then the centre
    b, _ = game.parse_moves("b2 pass a1")  # the centre, then a corner: no symmetry maps one onto the other
    assert (a.black, a.white, a.black_to_move) == (b.black, b.white, b.black_to_move)
    assert a.history != b.history
    assert game.key(a) != game.key(b)
    assert game.rank(game.play(a, GO_PASS)) > game.rank(a)
    assert all(game.rank(game.play(a, m)) > game.rank(a) for m in game.legal_moves(a))


def test_a_move_that_repeats_a_board_is_refused_by_superko():
    """On 2x2 after a1 b1 a2 b2 a1 a2 (White holds three points), Black's a1 would capture all
    three and leave Black's lone a1 of the first move: refused, and by the reference too."""
    game, ref = load_game("go:2x2"), RefGo(2, 2)
    pos, _ = game.parse_moves("a1 b1 a2 b2 a1 a2")
    state = ref.start()
    for m in (0, 1, 2, 3, 0, 2):
        state = ref.play(state, m)
    assert position_of(state) == pos and pos.white == 0b1110  # b1 a2 b2
    assert 0 not in ref.legal_moves(state) and ref.place(state.board, 0, BLACK) is not None
    assert game.legal_moves(pos) == [GO_PASS]
    assert "superko" in game.illegal_reason(pos, 0)
    with pytest.raises(MoveError, match="move 7 'a1': it repeats an earlier board"):
        game.parse_moves("a1 b1 a2 b2 a1 a2 a1")
    # after a pass the board is still one of the history's, and a1 still refused
    assert game.legal_moves(game.play(game.play(pos, GO_PASS), GO_PASS)) == []


@pytest.mark.parametrize(
    "spec,words",
    [
        ("go:9x9", ["1x1 to 7x7"]),
        ("go:0x3", ["1x1 to 7x7"]),
        ("go:3x3:komi=x", ["komi", "integer"]),
        ("go:3x3:komi=1.5", ["komi", "integer"]),
        ("go:3x3:komi=11", ["komi", "at most 10"]),
        ("go:3x3:komi=-11", ["komi", "at most 10"]),
        ("go:3", ["malformed Go spec"]),
        ("go:3x3:handicap=2", ["malformed Go spec"]),
    ],
)
def test_a_bad_go_spec_is_one_line(spec, words):
    assert_user_error(run_process("show", spec), spec, *words, silent=True)


def test_show_plays_moves_and_names_an_illegal_one():
    ran = run_process("show", "go:2x2", "--moves", "a1 b2 pass pass")
    assert ran.returncode == 0, ran.stderr
    assert "game over: a draw" in ran.stdout and "margin +0" in ran.stdout
    ran = run_process("show", "go:3x3:komi=-1", "--moves", "b2passb1")
    assert ran.returncode == 0 and "to move: second player (O)" in ran.stdout
    assert "1 . X ." in ran.stdout
    assert_user_error(run_process("show", "go:2x2", "--moves", "a1 b1 b2 a2"), "a2", "suicide", silent=True)
    assert_user_error(
        run_process("show", "go:2x2", "--moves", "a1 pass pass a2"), "already over", silent=True
    )
    assert_user_error(run_process("show", "go:2x2", "--moves", "a1 c1"), "off the 2x2 board", silent=True)


def test_play_a_game_spec_against_the_rules_alone():
    """`pndb play GAME` (no book): on 1x1 a stone is suicide, so both players pass and the empty
    board is a draw; a bad move is asked again."""
    import subprocess

    from conftest import PNDB

    ran = subprocess.run([PNDB, "play", "go:1x1"], input="a1\nzz\npass\n", capture_output=True, text=True,
                         timeout=120)  # fmt: skip
    assert ran.returncode == 0, ran.stderr
    assert "suicide" in ran.stderr and "malformed" in ran.stderr
    assert "pndb plays pass" in ran.stdout and "game over: a draw" in ran.stdout
