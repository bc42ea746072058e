"""The corpus the text mutations start from: every valid `.mlir` chunk of the repository."""

from __future__ import annotations

import contextlib
import hashlib
import io
import os
import re
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from pto.bench.fuzzing.cases import PKG
from pto.tools import pto_opt


@dataclass
class Seed:
    name: str
    text: str
    level: str  # pto, tile, npu or other


def corpus_paths() -> list[Path]:
    """Every tracked .mlir of examples/ and test/ (lit's Output/ copies are not tracked)."""
    try:
        out = subprocess.run(["git", "ls-files", "*.mlir"], cwd=PKG, capture_output=True, text=True, check=True)
        paths = [PKG / p for p in out.stdout.split()]
    except (OSError, subprocess.CalledProcessError):
        paths = [p for p in PKG.rglob("*.mlir") if "Output" not in p.parts]
    return sorted(p for p in paths if p.parts[len(PKG.parts)] in ("examples", "test") and p.is_file())


def split_chunks(text: str) -> list[str]:
    return [c for c in re.split(r"^// -----\s*$", text, flags=re.M) if c.strip()]


def level_of(text: str) -> str:
    text = re.sub(r"//[^\n]*", "", text)  # CHECK lines of a pto test may name npu ops
    for level in ("npu", "tile", "pto"):
        if re.search(rf"\b{level}\.[a-z_]+", text):
            return level
    return "other"


def quiet_call(fn, *args):
    """fn(*args) with stdout and stderr captured: (return value or exit code, out, err)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            rc = fn(*args)
        except SystemExit as e:
            rc = e.code if isinstance(e.code, int) else 1
    return rc, out.getvalue(), err.getvalue()


def load_corpus() -> list[Seed]:
    """The chunks `pto-opt` accepts as they are (the 'valid .mlir' of the issue)."""
    seeds: list[Seed] = []
    with tempfile.TemporaryDirectory(prefix="ptofuzz-corpus-") as d:
        path = os.path.join(d, "chunk.mlir")
        for p in corpus_paths():
            for i, chunk in enumerate(split_chunks(p.read_text(errors="replace"))):
                Path(path).write_text(chunk)
                if quiet_call(pto_opt.main, [path])[0] == 0:
                    seeds.append(Seed(f"{p.relative_to(PKG)}#{i}", chunk, level_of(chunk)))
    return seeds


def tree_digest(paths: list[Path]) -> dict[str, str]:
    return {str(p): hashlib.sha256(p.read_bytes()).hexdigest() for p in paths if p.is_file()}
