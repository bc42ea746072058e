"""The compiled engine's compiler: one core program (an `npu.tasks` body or an
`npu.launch` region) to one Python generator function, once per kernel.

SSA values become locals, `scf.for` a Python `for` over `range`, `scf.if` an `if`
(`pto.interp.codegen_base`). Each `npu` op calls its function in `pto.interp.npu_ops`
with its static part decoded here, or has its numerics and its timing written out
(`pto.interp.codegen_npu`): the timing as the model's own functions (`Core.begin`,
`Core.commit`, the flags, `npu_ops.gm_copy`, ...) specialised by `pto.interp.inline`,
so that the model is described once for both engines. The generator yields where the
interpreter's core would offer the turn to another core: before the timing of a copy
with a GM end and after a cross-core set (`YIELD`, skipped while the scheduler's
`calm_until` says it would be refused), and at a cross-core wait not yet satisfied
(`Block`). Each `arith` and `scf` op is charged `latency.issue` of SCALAR as
`CoreInterpreter` charges it; the charges of a run of them are added to the clock one
by one in one expression before the next op that reads it, so the float sums are the
interpreter's, and counted in `Core.issued` once per straight run of code (SCALAR's
busy cycles, `Core.settle`). `arith` ops it does not inline run through xDSL's
implementation. A hot program keeps the pipe timing entries in locals
(`Emitter.keep_states`), synced with the core's tables around calls that use them.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from types import CodeType

from xdsl.ir import Region, SSAValue

from pto.interp import npu_ops as ops
from pto.interp.arith import nonzero
from pto.interp.codegen_npu import NpuEmitter
from pto.interp.scf import positive_step

# A core program yields this to offer the turn (the interpreter's `yield_now`).
YIELD = "yield"


@dataclass(frozen=True)
class Block:
    """What a core program yields to wait until `ready()` holds (a cross-core wait)."""

    ready: Callable[[], bool]
    what: str


def enough(sets: list, count: int) -> bool:
    return len(sets) >= count


def states_out(core: object, entries: Sequence[tuple[str, object]], values: Sequence[float]) -> None:
    """A hot program's kept entries written back on a path that seldom runs (a copy's
    tile partly outside): each (table, key) entry of the core's pipe timing tables set."""
    for (table, key), value in zip(entries, values, strict=True):
        getattr(core, table)[key] = value


def states_in(core: object, entries: Sequence[tuple[str, object]]) -> tuple[float, ...]:
    """`states_out`'s counterpart: each (table, key) entry read."""
    return tuple(getattr(core, table)[key] for table, key in entries)


# Sources compiled so far, most recently used last, at most `CODE_KEPT`. A program's
# source names its values (`const`, `num`, `hoist`), each bound in its own namespace,
# and spells out only what decides its structure, so one source is one code object
# whatever the numbers: the groups of one loop's unroll factors and a tuner's
# configurations repeat a few sources, and `compile()` was about two thirds of the time
# to compile a program. A code object is named after the first region compiled to it.
CODE_KEPT = 64
_CODES: OrderedDict[str, CodeType] = OrderedDict()


def _code(source: str, label: str) -> CodeType:
    code = _CODES.pop(source, None)  # (taken out and put back last: most recently used)
    if code is None:
        code = compile(source, f"<npu program {label}>", "exec")
    _CODES[source] = code
    if len(_CODES) > CODE_KEPT:
        _CODES.popitem(last=False)
    return code


@dataclass
class Program:
    """A compiled core program: `fn(machine, core, free values, fallback, *block args)`
    is a generator; `free` lists the values it uses from outside its region."""

    fn: Callable
    free: list[SSAValue]
    source: str


def compile_region(region: Region, label: str, hot: bool = False) -> Program:
    """The program's `fallback(op, args) -> results` argument runs an op the compiler
    does not inline. `hot`: for a region that runs many times, with its copies between
    GM and allocated buffers, its mmads and its pipe booking written out, at two to three
    times the source."""
    ns: dict[str, object] = {  # (read at each call: a test may replace one)
        "ops": ops,
        "YIELD": YIELD,
        "Block": Block,
        "enough": enough,
        "states_out": states_out,
        "states_in": states_in,
        "nonzero": nonzero,
        "positive_step": positive_step,
    }
    e = NpuEmitter(hot, ns)
    source = e.program(region)
    exec(_code(source, label), ns)  # noqa: S102
    return Program(ns["program"], e.free, source)  # type: ignore[arg-type]
