"""The wheel carries every package: pyproject.toml lists packages by hand, and setuptools
silently leaves out a subpackage that is not listed."""

from pathlib import Path

import pytest

tomllib = pytest.importorskip("tomllib")  # Python 3.11

ROOT = Path(__file__).resolve().parent.parent


def test_every_package_is_listed():
    listed = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"])
    packages = {
        ".".join(init.parent.relative_to(ROOT).parts) for init in (ROOT / "pndb").rglob("__init__.py")
    }
    assert packages - listed == set()


def test_the_page_of_serve_is_package_data():
    """pndb/web is no package: its files reach the wheel only through package-data."""
    globs = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]["pndb"]
    files = {p.relative_to(ROOT / "pndb") for p in (ROOT / "pndb" / "web").iterdir()}
    assert files and {f for f in files if not any(f.match(g) for g in globs)} == set()
