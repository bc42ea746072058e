"""The shape of a target file: every section and key, with its type.

A target is loaded into these frozen dataclasses, so that a reader writes
`target.l2.line_bytes`, and a file with a key that nothing reads, a missing key or a
value of the wrong type is refused at load with the file and the key named.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from dataclasses import dataclass
from typing import Any


class TargetFileError(ValueError):
    """A target file that does not match this schema."""


@dataclass(frozen=True)
class Memory:
    """Bytes per core of each on-chip space."""

    ub: int
    l1: int
    l0a: int
    l0b: int
    l0c: int
    block_bytes: int  # UB/L1 allocation granule and tile alignment


@dataclass(frozen=True)
class L2:
    size: int  # the platform's figure
    sim_size: int  # what the reference simulator models
    line_bytes: int
    ways: int
    hit_latency: int
    miss_penalty: int


@dataclass(frozen=True)
class Cube:
    macs_per_cycle: dict[str, int]  # by input element type
    fractal: int


@dataclass(frozen=True)
class Vector:
    bytes_per_repeat: int
    cycles_per_repeat: dict[str, float]  # by instruction, `default` for the rest
    fixed_cycles: int


@dataclass(frozen=True)
class Latency:
    copy_in: int
    copy_out: int
    task_dispatch: int
    task_ready: int
    task_turnaround: int
    stitch: int
    issue: int


@dataclass(frozen=True)
class Sync:
    event_ids: int  # per pipe pair of the intra-core flags


@dataclass(frozen=True)
class Dma:
    transpose_rate_factor: float


@dataclass(frozen=True)
class Model:
    dma_fixed_costs: bool
    gm_read_rate: int
    gm_write_rate: int
    hbm_total: int
    hbm_window: int
    atomic_add_factor: int
    hub_pairs: int


@dataclass(frozen=True)
class TargetData:
    name: str
    arch: str
    cube_cores: int
    vector_cores: int
    clock_mhz: int
    memory: Memory
    l2: L2
    cube: Cube
    vector: Vector
    paths: dict[str, float]  # "src->dst": bytes per cycle per core
    latency: Latency
    sync: Sync
    dma: Dma
    model: Model


def build(cls: type, raw: dict[str, Any], where: str) -> Any:
    """`cls` from a TOML table, every key checked; `where` names the file and table."""
    hints = typing.get_type_hints(cls)
    names = [f.name for f in dataclasses.fields(cls)]
    if unknown := sorted(set(raw) - set(names)):
        raise TargetFileError(f"{where}: unknown key '{unknown[0]}' (known: {', '.join(names)})")
    if missing := [n for n in names if n not in raw]:
        raise TargetFileError(f"{where}: missing key '{missing[0]}'")
    return cls(**{n: _value(hints[n], raw[n], f"{where}.{n}") for n in names})


def _value(kind: Any, v: Any, where: str) -> Any:
    if isinstance(kind, type) and dataclasses.is_dataclass(kind):
        if not isinstance(v, dict):
            raise TargetFileError(f"{where}: expected a table, got {v!r}")
        return build(kind, v, where)
    origin = typing.get_origin(kind)
    if origin is dict:
        _, elem = typing.get_args(kind)
        if not isinstance(v, dict):
            raise TargetFileError(f"{where}: expected a table, got {v!r}")
        return {k: _value(elem, x, f"{where}.{k}") for k, x in v.items()}
    return _scalar(kind, v, where)


def _scalar(kind: Any, v: Any, where: str) -> Any:
    ok = {
        bool: isinstance(v, bool),
        int: isinstance(v, int) and not isinstance(v, bool),
        float: isinstance(v, int | float) and not isinstance(v, bool),
        str: isinstance(v, str),
    }
    if kind not in ok or isinstance(kind, types.UnionType):
        raise TypeError(f"schema type {kind} of {where} is not supported")  # a bug here, not in the file
    if not ok[kind]:
        raise TargetFileError(f"{where}: expected {kind.__name__}, got {v!r}")
    return v  # an int where a float is asked stays an int, as TOML wrote it (PEP 484)
