"""Machine descriptions, one TOML file per target in this folder, loaded by name.

No hardware figure lives anywhere else: dialect verifiers, passes and the interpreter
all read them through `load_target`, typed and checked by `pto.targets.schema`.

A file may start from another target, `inherits = "ascend910b1"`, and give only what
differs: its tables are merged into the parent's key by key, at any depth (so a file
can change one path's rate and keep the others). A calibration is such a file.
"""

from __future__ import annotations

import dataclasses
import tomllib
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from xdsl.dialects.builtin import StringAttr
from xdsl.ir import Operation

from pto.dialects.common import ELEM_BYTES
from pto.targets.schema import TargetData, TargetFileError, build

DEFAULT_TARGET = "ascend910b1"
_DIR = Path(__file__).parent


class UnknownTargetError(ValueError):
    pass


@dataclass(frozen=True)
class Target(TargetData):
    """A target's figures (`pto.targets.schema`), and the look-ups by a name in the IR."""

    def capacity(self, space: str) -> int:
        """Bytes available per core in a memory space (`ub`, `l1`, `l0a`, ...)."""
        return getattr(self.memory, space)

    @property
    def block_bytes(self) -> int:
        return self.memory.block_bytes

    def has_path(self, src: str, dst: str) -> bool:
        return f"{src}->{dst}" in self.paths

    def path_rate(self, src: str, dst: str) -> float:
        return self.paths[f"{src}->{dst}"]

    def k_fractal(self, elem: str) -> int:
        """K of one cube fractal, in elements of `elem` (16 for bf16, 8 for f32, 32 for i8)."""
        return max(1, self.cube.k_fractal_bytes // ELEM_BYTES[elem])

    def macs_per_cycle(self, elem: str) -> float:
        """The cube's peak: one fractal's MACs over its passes."""
        f = self.cube.fractal
        return f * self.k_fractal(elem) * f / self.cube.passes[elem]

    def changed(self, **figures: Any) -> Target:
        """A copy with some figures changed, each named `section__key`
        (`latency__task_ready=0`): for tests and calibration sweeps."""
        out: Any = self
        for name, value in figures.items():
            path = name.split("__")
            if not _has(self, path):
                raise TargetFileError(f"no target figure '{'.'.join(path)}'")
            out = _replace(out, path, value)
        return out


def _has(obj: Any, path: list[str]) -> bool:
    return not path or (
        dataclasses.is_dataclass(obj) and hasattr(obj, path[0]) and _has(getattr(obj, path[0]), path[1:])
    )


def _replace(obj: Any, path: list[str], value: Any) -> Any:
    head, *rest = path
    return dataclasses.replace(obj, **{head: _replace(getattr(obj, head), rest, value) if rest else value})


def available_targets() -> list[str]:
    return sorted(p.stem for p in _DIR.glob("*.toml"))


@cache
def load_target(name: str = DEFAULT_TARGET) -> Target:
    path = _DIR / f"{name}.toml"
    if name not in available_targets():  # (a name, not a path: `../targets/x` is no target)
        raise UnknownTargetError(f"unknown target '{name}' (known: {', '.join(available_targets())})")
    raw = _merged(path, ())
    if raw.get("name") != name:  # an inheriting file that kept its parent's name would pass as it
        raise TargetFileError(f"{path}: name is {raw.get('name')!r}, the file says {name!r}")
    return build(Target, raw, str(path))


def _merged(path: Path, chain: tuple[str, ...]) -> dict[str, Any]:
    """The file's table over the tables of the targets it inherits (`chain`: the files
    that inherit it, to refuse a cycle)."""
    try:
        with path.open("rb") as f:
            raw = tomllib.load(f)
    except tomllib.TOMLDecodeError as e:
        raise TargetFileError(f"{path}: not valid TOML ({e})") from None
    parent = raw.pop("inherits", None)
    if parent is None:
        return raw
    if not isinstance(parent, str):
        raise TargetFileError(f"{path}: inherits: expected a target name, got {parent!r}")
    if parent in (*chain, path.stem):
        raise TargetFileError(f"{path}: inherits {parent!r}, which inherits it (a cycle)")
    base = _DIR / f"{parent}.toml"
    if not base.is_file():
        raise TargetFileError(f"{path}: inherits unknown target '{parent}' (known: {', '.join(available_targets())})")
    return _deep_merge(_merged(base, (*chain, path.stem)), raw)


def _deep_merge(base: dict[str, Any], over: dict[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for k, v in over.items():
        out[k] = _deep_merge(out[k], v) if isinstance(v, dict) and isinstance(out.get(k), dict) else v
    return out


def target_of(op: Operation) -> Target:
    """The target named by the nearest `pto.target` attribute around `op` (or the default)."""
    cur: Operation | None = op
    while cur is not None:
        if isinstance(t := cur.attributes.get("pto.target"), StringAttr):
            return load_target(t.data)
        cur = cur.parent_op()
    return load_target(DEFAULT_TARGET)
