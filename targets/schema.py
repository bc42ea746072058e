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


# How an mmad is priced: `fractal`, the cube's passes over whole fractals (`Cube`), or
# `opsim`, PyPTO 0.2.0's simulator's per-op formula of the output tile, independent of K.
CUBE_FORMS = ("fractal", "opsim")
OPSIM_KEYS = ("mul_r0", "mul_r1", "mulacc_r0", "mulacc_r1")


@dataclass(frozen=True)
class Cube:
    """`fractal`: one mmad costs `mad_head_cycles + passes * ceil(m / fractal) * ceil(k /
    kt) * ceil(n / fractal)` cycles, kt = `k_fractal_bytes` / the input's element bytes.
    `opsim`: `floor((r0 * M * N * bytes * 2e-6 + r1) * 2000) + 1`, M and N the valid rows
    and columns padded to whole fractals, bytes the input element's; (r0, r1) = `opsim`'s
    mul_* for an mmad that overwrites its accumulator, mulacc_* for one that adds to it."""

    form: str  # one of CUBE_FORMS
    fractal: int  # M and N of one cube step (fractal)
    k_fractal_bytes: int  # K of one fractal, in bytes of the input
    passes: dict[str, int]  # cycles per fractal, by input element type
    mad_head_cycles: float  # issue cost of each mmad (one per K-block)
    opsim: dict[str, float]  # the opsim form's coefficients (OPSIM_KEYS), else empty

    def __post_init__(self) -> None:
        if self.form not in CUBE_FORMS:
            raise TargetFileError(f"form: expected one of {', '.join(CUBE_FORMS)}, got {self.form!r}")
        if self.form == "opsim" and (missing := [k for k in OPSIM_KEYS if k not in self.opsim]):
            raise TargetFileError(f"opsim: the opsim form needs {missing[0]}")
        if unknown := sorted(set(self.opsim) - set(OPSIM_KEYS)):
            raise TargetFileError(f"opsim: unknown key '{unknown[0]}' (known: {', '.join(OPSIM_KEYS)})")


# How a FIXPIPE (L0C -> GM or L1) is priced: `drain`, the device's per-tile drain
# (`Fixpipe`), or `copy`, as a copy of the output's bytes (PyPTO 0.2.0's simulator).
FIXPIPE_FORMS = ("drain", "copy")


@dataclass(frozen=True)
class Fixpipe:
    """The drain of one output tile of m rows and n columns of an L0C with elements of
    `bytes_c` bytes: `drain_fixed_cycles + m * (max(drain_row_cycles, bytes_c * n /
    drain_rate) + drain_odd_cycles * (odd(N1) - 1))`, N1 = ceil(n / (c0_bytes / bytes_c)),
    odd(x) = x without its factors of 2."""

    form: str  # one of FIXPIPE_FORMS
    drain_fixed_cycles: float
    drain_row_cycles: float
    drain_rate: float  # L0C bytes per cycle of one row
    drain_odd_cycles: float
    c0_bytes: int

    def __post_init__(self) -> None:
        if self.form not in FIXPIPE_FORMS:
            raise TargetFileError(f"form: expected one of {', '.join(FIXPIPE_FORMS)}, got {self.form!r}")


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
    l1_rows_unit: int  # a GM -> L1 copy is charged for its rows rounded up to this many


@dataclass(frozen=True)
class Model:
    dma_fixed_costs: bool
    gm_read_rate: int
    gm_write_rate: int
    hbm_total: int
    hbm_window: int
    atomic_add_factor: int
    hub_pairs: int
    weight_task: bool  # weight-only work before the cube: one task of its own (tile-to-npu)
    l1_reuse_bytes: int  # the L1 that kept weight slices (cube_l1_reuse_setting) may fill


@dataclass(frozen=True)
class Aicpu:
    """PyPTO's AICPU scheduler threads (`device_sched_mode` 0, interp/aicpu.py): each
    serves `cube_cores` AICs and `vector_cores` AIVs, polling them in turn; finding a
    task ended costs `resolve_cycles` per successor on top of the poll, and at the end of
    each round of polls it dispatches ready tasks to its idle cores."""

    enabled: bool  # model them (else a graph task waits fixed latencies: [latency])
    cube_cores: int  # AICs per scheduler thread
    vector_cores: int  # AIVs per scheduler thread
    start_cycles: int  # from the graph's start to the threads' first poll
    poll_cycles: int  # one poll of one core
    resolve_cycles: int  # per successor of a task found ended
    dispatch_cycles: int  # one task handed to an idle core
    hub_rounds: int  # round ends of any thread a HUB task takes to hand on
    end_cycles: int  # from the last task's end to the end HUB's time (the graph's end)


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
    fixpipe: Fixpipe
    vector: Vector
    paths: dict[str, float]  # "src->dst": bytes per cycle per core
    latency: Latency
    sync: Sync
    dma: Dma
    model: Model
    aicpu: Aicpu


def build(cls: type, raw: dict[str, Any], where: str) -> Any:
    """`cls` from a TOML table, every key checked; `where` names the file and table."""
    hints = typing.get_type_hints(cls)
    names = [f.name for f in dataclasses.fields(cls)]
    if unknown := sorted(set(raw) - set(names)):
        raise TargetFileError(f"{where}: unknown key '{unknown[0]}' (known: {', '.join(names)})")
    if missing := [n for n in names if n not in raw]:
        raise TargetFileError(f"{where}: missing key '{missing[0]}'")
    values = {n: _value(hints[n], raw[n], f"{where}.{n}") for n in names}
    try:
        return cls(**values)
    except TargetFileError as e:  # a value the dataclass itself refuses
        raise TargetFileError(f"{where}.{e}") from None


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
