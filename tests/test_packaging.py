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
