"""The `pndb` console script (and `python -m pndb`): Ctrl-C while the command line is still
loading is an exit like any other interruption (130), never a traceback."""

import sys


def main():
    try:
        from pndb.cli import main as cli
    except KeyboardInterrupt:
        sys.stderr.write("interrupted\n")
        sys.exit(130)
    cli()


if __name__ == "__main__":
    main()
