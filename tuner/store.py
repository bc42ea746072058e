"""The results store: one JSON line per (configuration, token count), keyed by a hash of
the kernel text, the configuration, the target, the token count and the model version,
so `--resume` skips what was measured by the same model, and a changed model or kernel
measures again. Each line is flushed as it is written: an interrupted sweep leaves
every finished evaluation behind."""

from __future__ import annotations

import functools
import hashlib
import json
import math
import os
from pathlib import Path

from pto import __version__
from pto.tuner.evaluate import FIGURES
from pto.tuner.kernel import TuneError
from pto.tuner.space import Config, key

# What the measured cycles depend on: the lowering, the model and the target figures.
MODEL_SOURCES = ("passes", "lowering", "interp", "targets")


@functools.cache
def model_version() -> str:
    root = Path(__file__).resolve().parent.parent
    h = hashlib.sha256(__version__.encode())
    for folder in MODEL_SOURCES:
        for f in sorted((root / folder).glob("**/*")):
            if f.suffix in (".py", ".toml"):
                h.update(f.read_bytes())
    return f"{__version__}+{h.hexdigest()[:12]}"


def record_key(kernel: str, c: Config, target: str, tokens: int) -> str:
    text = "\0".join((kernel, key(c), target, str(tokens), model_version()))
    return hashlib.sha256(text.encode()).hexdigest()[:24]


class Store:
    """Records by key; `add` appends to the file (if any) at once. A store that cannot be
    read or written is a TuneError before anything is measured."""

    def __init__(self, path: str | None, resume: bool):
        self.path = path
        self.records: dict[str, dict] = {}
        self._newline = False  # the file ends in a line cut short: the next record starts a new one
        try:
            if path and resume and os.path.exists(path):
                self._load(path)
                open(path, "a").close()  # (writable, as the sweep will need)
            elif path:
                open(path, "w").close()  # a new sweep starts an empty store
        except OSError as e:
            raise TuneError(f"cannot use the store '{path}': {e.strerror or e}") from None

    def _load(self, path: str) -> None:
        with open(path, "rb") as f:
            data = f.read()
        self._newline = bool(data) and not data.endswith(b"\n")
        for line in data.splitlines():
            try:
                r = json.loads(line.decode())
            except (UnicodeDecodeError, json.JSONDecodeError):  # a line cut short, or not this tool's
                continue
            if _valid(r):  # (any other line is measured again: a store's figures decide the result)
                self.records[r["key"]] = r

    def get(self, k: str) -> dict | None:
        return self.records.get(k)

    def add(self, r: dict) -> None:
        self.records[r["key"]] = r
        if self.path:
            try:
                with open(self.path, "a") as f:
                    f.write(("\n" if self._newline else "") + json.dumps(r) + "\n")
            except OSError as e:
                raise TuneError(f"cannot write the store '{self.path}': {e.strerror or e}") from None
            self._newline = False


def _valid(r: object) -> bool:
    """A record as `Sweep.measure` writes it: its key, its token count, and an error or
    every figure, the cycles a finite number >= 0."""
    if not isinstance(r, dict) or not isinstance(r.get("key"), str) or not _number(r.get("tokens")):
        return False
    if "error" in r:
        return isinstance(r["error"], str)
    return all(_number(r.get(f)) for f in FIGURES)


def _number(v: object) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v) and v >= 0
