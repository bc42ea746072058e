"""Lint, format and type checks over the whole package, so the README's test command (and CI) runs them.

Each check prints the tool's own findings when it fails. Configuration: pyproject.toml's
`[tool.ruff]` and `[tool.mypy]`.
"""

import hashlib
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _run(args: list[str], cwd: Path) -> None:
    proc = subprocess.run([sys.executable, "-m", *args], cwd=cwd, capture_output=True, text=True)
    if proc.returncode != 0:
        pytest.fail(f"{' '.join(args)} failed:\n{proc.stdout}{proc.stderr}", pytrace=False)


def test_ruff_check() -> None:
    _run(["ruff", "check", "--no-fix", "."], ROOT)


def test_ruff_format() -> None:
    _run(["ruff", "format", "--check", "."], ROOT)


def _mypy_parent() -> Path:
    """A folder whose `pto` entry is this repository: the root is the package `pto` whatever
    the checkout is called, and mypy names modules after folders. The folder is the same for
    every run from this checkout, so mypy's cache in it stays valid between runs."""
    key = hashlib.sha1(str(ROOT).encode()).hexdigest()[:12]
    parent = Path(tempfile.gettempdir()) / f"pto-mypy-{key}"
    parent.mkdir(exist_ok=True)
    link = parent / "pto"
    if not (link.is_symlink() and link.resolve() == ROOT):
        tmp = parent / f"pto.{os.getpid()}"
        tmp.symlink_to(ROOT, target_is_directory=True)
        tmp.replace(link)
    return parent


def test_mypy() -> None:
    _run(["mypy", "--config-file", str(ROOT / "pyproject.toml"), "-p", "pto"], _mypy_parent())
