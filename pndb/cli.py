"""The pndb command line (click)."""

import sys

import click
import numpy as np

from pndb import __version__
from pndb.games import BUILTIN_SPECS, EXAMPLE_SPECS, GameError, MoveError, load_game, play_moves, render
from pndb.games import kernels as K
from pndb.games.notation import outcome_text

USER_ERRORS = (GameError, MoveError)


class Cli(click.Group):
    """A click group that turns user errors into one line on stderr and exit code 2."""

    def invoke(self, ctx):
        try:
            return super().invoke(ctx)
        except USER_ERRORS as e:
            click.echo(f"error: {e}", err=True)
            sys.exit(2)


@click.group(cls=Cli, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="pndb")
def main():
    """pndb: solve two-player games with proof-number search on a persistent, resumable
    proof database, and export the proof as a book anyone can check."""


@main.command()
def games():
    """List every game spec with its cells, symmetries and win patterns."""
    click.echo(f"{'spec':24} {'board':>6} {'cells':>5} {'syms':>4} {'patterns':>8}  rules")
    for spec in EXAMPLE_SPECS:
        g = load_game(spec)
        rules = []
        if g.gravity:
            rules.append("gravity")
        if g.first_move_forbidden:
            rules.append(f"first move not on {len(g.first_move_forbidden)} cells")
        if g.disc_cap:
            rules.append(f"draw after {g.disc_cap} stones")
        board = f"{g.width}x{g.height}"
        click.echo(
            f"{spec:24} {board:>6} {g.ncells:>5} {len(g.symmetries):>4} {len(g.patterns):>8}  {', '.join(rules)}"
        )
    click.echo("\nParametrised: " + ", ".join(s for s in BUILTIN_SPECS if s not in EXAMPLE_SPECS))
    click.echo("Aliases: tictactoe = mnk:3,3,3, connect4 = connect4:7x6, qango6:burg = qango6:castle")
    click.echo("Your own game: file:PATH.json (docs/game-format.md)")


@main.command()
@click.argument("game")
@click.option("--moves", "-m", default="", help="Moves from the start, e.g. c3d4 or 4453 (Connect Four).")
def show(game, moves):
    """Print the board of GAME after --moves, whose turn it is, and the outcome if it is over."""
    g = load_game(game)
    a, b, _ = play_moves(g, moves)
    click.echo(f"{g.spec} ({g.title}), {bin(a | b).count('1')} stones")
    click.echo(render(g, a, b))
    state = K.status(np.uint64(a), np.uint64(b), g.tables)
    if state == K.ONGOING:
        side = "first player (X)" if K.first_to_move(np.uint64(a), np.uint64(b)) else "second player (O)"
        click.echo(f"to move: {side}")
    else:
        click.echo(f"game over: {outcome_text(state)}")
