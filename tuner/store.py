"""The results store: one JSON line per (configuration, token count), keyed by a hash of
the kernel text, the configuration, the target, the token count and the model version,
so `--resume` skips what was measured by the same model, and a changed model or kernel
measures again. Each line is flushed as it is written: an interrupted sweep leaves
every finished evaluation behind."""

from __future__ import annotations

import functools
import hashlib
import json
import os
from pathlib import Path

from pto import __version__
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
    """Records by key; `add` appends to the file (if any) at once."""

    def __init__(self, path: str | None, resume: bool):
        self.path = path
        self.records: dict[str, dict] = {}
        if path and resume and os.path.exists(path):
            self._load(path)
        elif path:
            open(path, "w").close()  # a new sweep starts an empty store

    def _load(self, path: str) -> None:
        with open(path) as f:
            for line in f:
                try:
                    r = json.loads(line)
                except json.JSONDecodeError:  # a line cut short by an interruption
                    continue
                if isinstance(r, dict) and "key" in r:
                    self.records[r["key"]] = r

    def get(self, k: str) -> dict | None:
        return self.records.get(k)

    def add(self, r: dict) -> None:
        self.records[r["key"]] = r
        if self.path:
            with open(self.path, "a") as f:
                f.write(json.dumps(r) + "\n")
