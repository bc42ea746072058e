"""Machine descriptions, one TOML file per target in this folder, loaded by name.

No hardware figure lives anywhere else: dialect verifiers, passes and the interpreter
all read them through `load_target`.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from xdsl.dialects.builtin import StringAttr
from xdsl.ir import Operation

DEFAULT_TARGET = "ascend910b1"
_DIR = Path(__file__).parent


class UnknownTargetError(ValueError):
    pass


@dataclass(frozen=True)
class Target:
    name: str
    raw: dict[str, Any]

    @property
    def cube_cores(self) -> int:
        return self.raw["cube_cores"]

    @property
    def vector_cores(self) -> int:
        return self.raw["vector_cores"]

    @property
    def clock_mhz(self) -> int:
        return self.raw["clock_mhz"]

    def capacity(self, space: str) -> int:
        """Bytes available per core in a memory space (`ub`, `l1`, `l0a`, ...)."""
        return self.raw["memory"][space]

    @property
    def block_bytes(self) -> int:
        return self.raw["memory"]["block_bytes"]

    @property
    def l2(self) -> dict[str, int]:
        return self.raw["l2"]

    @property
    def paths(self) -> dict[str, int]:
        return self.raw["paths"]

    def has_path(self, src: str, dst: str) -> bool:
        return f"{src}->{dst}" in self.raw["paths"]

    def path_rate(self, src: str, dst: str) -> int:
        return self.raw["paths"][f"{src}->{dst}"]

    def macs_per_cycle(self, elem: str) -> int:
        return self.raw["cube"]["macs_per_cycle"][elem]

    @property
    def vector_bytes_per_repeat(self) -> int:
        return self.raw["vector"]["bytes_per_repeat"]

    def latency(self, what: str) -> int:
        return self.raw["latency"][what]


def available_targets() -> list[str]:
    return sorted(p.stem for p in _DIR.glob("*.toml"))


@cache
def load_target(name: str = DEFAULT_TARGET) -> Target:
    path = _DIR / f"{name}.toml"
    if not path.is_file():
        raise UnknownTargetError(
            f"unknown target '{name}' (known: {', '.join(available_targets())})"
        )
    with path.open("rb") as f:
        raw = tomllib.load(f)
    return Target(name, raw)


def target_of(op: Operation) -> Target:
    """The target named by the nearest `pto.target` attribute around `op` (or the default)."""
    cur: Operation | None = op
    while cur is not None:
        if isinstance(t := cur.attributes.get("pto.target"), StringAttr):
            return load_target(t.data)
        cur = cur.parent_op()
    return load_target(DEFAULT_TARGET)
