"""The compiled engine's compiler: one core program (an `npu.tasks` body or an
`npu.launch` region) to one Python generator function, once per kernel.

SSA values become locals, `scf.for` a Python `for` over `range`, `scf.if` an `if`. Each
`npu` op calls its function in `pto.interp.npu_ops` with its static part decoded here,
so the numerics and the figures are the interpreter's. The generator yields where the
interpreter's core would offer the turn to another core: before the timing of a copy
with a GM end and after a cross-core set (`YIELD`, skipped while the scheduler's
`calm_until` says it would be refused), and at a cross-core wait not yet satisfied
(`Block`). Each `arith` and `scf` op is charged `latency.issue` of SCALAR
as `CoreInterpreter` charges it; the charges of a run of them are added to the clock
one by one in one expression before the next op that reads it, so the float sums are
the interpreter's, and counted in `Core.issued` once per straight run of code (SCALAR's
busy cycles, `Core.settle`). `arith` ops it does not inline run through xDSL's
implementation. A hot program keeps the pipe timing entries it uses in locals
(`_Emitter.state`), synced with the core's tables around calls that use them.
"""

from __future__ import annotations

import math
import operator
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from types import CodeType
from typing import Any

import numpy as np
from xdsl.dialects import arith, scf
from xdsl.dialects.builtin import FloatAttr, IntegerAttr
from xdsl.ir import Block as IrBlock
from xdsl.ir import Operation, Region, SSAValue
from xdsl.traits import IsTerminator

from pto.dialects import npu
from pto.dialects.npu import BufferType, Pipe, Space
from pto.interp import npu_ops as ops
from pto.interp import numerics as nx
from pto.interp.arith import CMP, nonzero
from pto.interp.machine import Event, MachineError, dependence_key
from pto.interp.scf import positive_step

# A core program yields this to offer the turn (the interpreter's `yield_now`).
YIELD = "yield"

# Lines `_Emitter.program` replaces, once every state a hot program keeps in locals is
# known: the locals written back to the core's tables, read from them again. The cold
# pair does it through `states_out` / `states_in`, in a line of source instead of one
# subscript per state, for a copy's slow path (a tile partly outside): compiling those
# pairs written out was half of compiling the standard kernel's hot linear program
# (8.2 ms of it, 4.4 ms without).
_STORE, _LOAD = "\x00store", "\x00load"
_STORE_COLD, _LOAD_COLD = "\x00store cold", "\x00load cold"
# `_Emitter.offer_turn`'s line.
_OFFER = "if core.issue > sched.calm_until: yield YIELD"

# The index arithmetic of `pto.interp.arith`, as Python source over its operands.
_INLINE: dict[type[Operation], str] = {
    arith.AddiOp: "{0} + {1}",
    arith.SubiOp: "{0} - {1}",
    arith.MuliOp: "{0} * {1}",
    arith.DivUIOp: "{0} // {1}",
    arith.RemUIOp: "{0} % {1}",
    arith.CeilDivUIOp: "-(-{0} // {1})",
    arith.MinUIOp: "min({0}, {1})",
    arith.MaxUIOp: "max({0}, {1})",
}
# The inlined divisions: a divisor not known to be a non-zero constant is tested first.
_DIVISIONS = (arith.DivUIOp, arith.RemUIOp, arith.CeilDivUIOp)
_INFIX = {
    operator.eq: "==",
    operator.ne: "!=",
    operator.lt: "<",
    operator.le: "<=",
    operator.gt: ">",
    operator.ge: ">=",
}


@dataclass(frozen=True)
class Block:
    """What a core program yields to wait until `ready()` holds (a cross-core wait)."""

    ready: Callable[[], bool]
    what: str


def enough(sets: list, count: int) -> bool:
    return len(sets) >= count


def states_out(core: object, entries: Sequence[tuple[str, object]], values: Sequence[float]) -> None:
    """`_STORE_COLD`: each (table, key) entry of the core's pipe timing tables set."""
    for (table, key), value in zip(entries, values, strict=True):
        getattr(core, table)[key] = value


def states_in(core: object, entries: Sequence[tuple[str, object]]) -> tuple[float, ...]:
    """`_LOAD_COLD`: each (table, key) entry of the core's pipe timing tables read."""
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
    return _Emitter(hot).program(region, label)


class _Emitter:
    def __init__(self, hot: bool) -> None:
        self.hot = hot
        self.ns: dict[str, object] = {
            "ops": ops,
            "YIELD": YIELD,
            "Block": Block,
            "enough": enough,
            "states_out": states_out,
            "states_in": states_in,
            "nonzero": nonzero,
            "positive_step": positive_step,
            "SCALAR": Pipe.SCALAR,
            "VECTOR": Pipe.VECTOR,
            "Event": Event,
        }
        self.names: dict[SSAValue, str] = {}
        self.free: list[SSAValue] = []
        self.lines: list[str] = []
        self.indent = 1
        self.pending = 0  # scalar ops not yet charged
        self.issued = 0  # issue slots charged since the last `core.issued` update (`count`)
        self.yield_to: list[list[str]] = []  # names an scf.yield assigns, innermost last
        self.statics: dict[SSAValue, _Static | None] = {}
        self.known: dict[SSAValue, object] = {}  # the region's constants' values
        self.specs: dict[Operation, ops.CopySpec] = {}
        self.hoisted: dict[str, str] = {}  # expression evaluated once per core -> its name
        # A hot program's pipe timing state in locals (`state`): (table, key) -> local.
        self.states: dict[tuple[str, object], str] = {}

    def program(self, region: Region, label: str) -> Program:
        block = _only_block(region)
        args = [self.define(a) for a in block.args]
        self.block(block)
        head = [
            "def program(m, core, fv, fallback, *args):",
            "    busy = core.busy",
            "    ci = m.cost.issue",
            "    flags, last_done, pipe_wait = core.flags, core.last_done, core.pipe_wait",
            "    numerics, cost = m.numerics, m.cost",
            "    sched = m.scheduler",
            "    bufs = core.bufs",
        ]
        if self.hot:  # what the written-out copies and pipe booking read
            head.append("    fixed_in, fixed_out = cost.dma_fixed(False), cost.dma_fixed(True)")
            head.append("    free, written, read, events = core.free, core.written, core.read, m.events")
        if self.hoisted:  # evaluated on a core's first run of the program, kept after
            key = self.const(object())
            names = "".join(f"{name}, " for name in self.hoisted.values())
            head.append(f"    hoisted = core.memo.get({key})")
            head.append("    if hoisted is None:")
            head.append(f"        hoisted = core.memo[{key}] = ({''.join(f'{e}, ' for e in self.hoisted)})")
            head.append(f"    {names}= hoisted")
        if self.free:
            head.append(f"    {', '.join(self.names[v] for v in self.free)}, = fv")
        if args:
            head.append(f"    {', '.join(args)}, = args")
        lines = [*head, f"    {_LOAD}", *self.lines, f"    {_STORE}", "    return", "    yield"]
        source = "\n".join(self.states_synced(lines)) + "\n"
        exec(_code(source, label), self.ns)  # noqa: S102
        return Program(self.ns["program"], self.free, source)  # type: ignore[arg-type]

    def states_synced(self, lines: list[str]) -> list[str]:
        """`lines` with each `_STORE` / `_LOAD` the assignment of every state kept in a
        local to its table entry / from it (or nothing: a program that keeps none)."""
        if not self.states:
            return [line for line in lines if line.strip() not in (_STORE, _LOAD, _STORE_COLD, _LOAD_COLD)]
        names = ", ".join(self.states.values())
        entries = ", ".join(f"{table}[{self.const(key)}]" for table, key in self.states)
        cold = self.const(tuple(self.states))
        sync = {
            _STORE: f"{entries} = {names}",
            _LOAD: f"{names} = {entries}",
            _STORE_COLD: f"states_out(core, {cold}, ({names},))",
            _LOAD_COLD: f"{names}, = states_in(core, {cold})",
        }
        return [line.replace(m, sync[m]) if (m := line.strip()) in sync else line for line in lines]

    # -- names and lines ---------------------------------------------------------------------

    def emit(self, line: str) -> None:
        self.lines.append("    " * self.indent + line)

    def define(self, v: SSAValue) -> str:
        self.names[v] = f"v{len(self.names)}"
        return self.names[v]

    def use(self, v: SSAValue) -> str:
        if v not in self.names:  # defined outside the region: passed in
            self.free.append(v)
            self.names[v] = f"f{len(self.free)}"
        return self.names[v]

    def const(self, value: object) -> str:
        name = f"k{len(self.ns)}"
        self.ns[name] = value
        return name

    def num(self, n: int) -> str:
        """A number of the region's shapes (an extent, a bound, a byte count) as a name,
        not spelled out: the programs of the same ops on tiles of other sizes are then
        one source, compiled once (`_code`)."""
        return self.const(n)

    def inside(self, offset: str, extent: int, dim: int) -> bool | str:
        """`_inside`, or the run-time test of an offset that is a name, its bound a `num`."""
        known = _inside(offset, extent, dim)
        return f"0 <= {offset} <= {self.num(dim - extent)}" if known is None else known

    def window(self, offsets: list[str], extent: Sequence[int | str]) -> str:
        """`_window`, its numeric extents `num`s."""
        return _window(offsets, [self.num(e) if isinstance(e, int) else e for e in extent])

    def state(self, table: str, key: object) -> str:
        """An entry of the core's pipe timing tables (`free`, `pipe_wait`, `last_done`,
        `busy` by pipe; `written`, `read` by an allocated buffer's key): in a hot program
        a local, read when the program starts and written back when it ends and around
        every call that may read or write the tables (`synced`); nothing else does while
        the program runs (the scheduler reads only `issue`), and a dict lookup per use
        was a third of an op's booking. A key computed at run time (a GM tensor's,
        `_DynamicKey`) stays a lookup: no allocated buffer's key is a GM tensor's."""
        if isinstance(key, _DynamicKey):
            return f"{table}[{key.expr}]"
        if not self.hot:
            return f"{table}[{self.const(key)}]"
        if (table, key) not in self.states:
            self.states[(table, key)] = f"s{len(self.states)}"
        return self.states[(table, key)]

    def synced(self, *lines: str, cold: bool = False) -> None:
        """Lines that call what may read or write the core's pipe timing tables: the
        locals `state` keeps are written back before and read again after (`cold`: on
        a path that seldom runs, in the short form)."""
        if self.hot:
            self.emit(_STORE_COLD if cold else _STORE)
        for line in lines:
            self.emit(line)
        if self.hot:
            self.emit(_LOAD_COLD if cold else _LOAD)

    def hoist(self, expr: str) -> str:
        """A name for `expr`, evaluated once per core, not per op (an op in a loop runs
        many times, a core runs many tasks): a figure of the target (`cost`'s), or an
        object of the core that its ops change but never replace."""
        if expr not in self.hoisted:
            self.hoisted[expr] = f"h{len(self.hoisted)}"
        return self.hoisted[expr]

    def static(self, v: SSAValue) -> _Static | None:
        """`_static_buffer`, once per value (a buffer is used by many ops)."""
        if v not in self.statics:
            self.statics[v] = _static_buffer(v)
        return self.statics[v]

    def spec(self, op: npu.DmaOp | npu.FixpipeOp) -> ops.CopySpec:
        if op not in self.specs:
            self.specs[op] = ops.CopySpec.of(op)
        return self.specs[op]

    def results(self, op: Operation) -> str:
        return "".join(f"{self.define(r)}, " for r in op.results)

    def offer_turn(self) -> None:
        """`yield YIELD`, unless the scheduler has said that no other core is far enough
        behind for it to take the turn (`EventScheduler.calm_until`)."""
        self.emit(_OFFER)

    def flush(self) -> None:
        """Charge the pending scalar ops, one addition each, as the interpreter does."""
        if self.pending:
            self.emit(f"core.issue = core.issue{' + ci' * self.pending}")
            self.issued += self.pending
            self.pending = 0

    def count(self) -> None:
        """Add the issue slots charged since the last count to `core.issued` (SCALAR's
        busy cycles, `Core.settle`): once per straight run of code, not per op, so at
        the end of a block and before a loop or branch."""
        self.flush()
        if self.issued:
            self.emit(f"core.issued += {self.issued}")
            self.issued = 0

    # -- structure -------------------------------------------------------------------------

    def block(self, block: IrBlock) -> None:
        start = len(self.lines)
        for op in block.ops:
            self.op(op)
        self.count()
        if len(self.lines) == start:
            self.emit("pass")

    def op(self, op: Operation) -> None:
        if op.name.startswith(ops.SCALAR_OPS):
            self.pending += 1
        handler = _HANDLERS.get(type(op))
        if handler is not None:
            handler(self, op)
        elif isinstance(op, (npu.LaunchOp, npu.GraphOp)):
            raise MachineError(op, npu.host_only(op))
        elif any(r.blocks for r in op.regions) or (op.has_trait(IsTerminator) and not isinstance(op, scf.YieldOp)):
            raise MachineError(op, f"the compiled engine cannot run '{op.name}' in a core program")
        elif isinstance(op, scf.YieldOp):
            self.scf_yield(op)
        else:
            self.generic(op)

    def nested(self, region: Region, targets: list[str]) -> None:
        self.indent += 1
        self.yield_to.append(targets)
        self.block(_only_block(region))
        self.yield_to.pop()
        self.indent -= 1

    def scf_for(self, op: scf.ForOp) -> None:
        self.count()
        carried = [self.define(r) for r in op.results]
        if carried:
            self.emit(f"{', '.join(carried)}, = {', '.join(self.use(v) for v in op.iter_args)},")
        iv, *args = op.body.block.args
        step = self.use(op.step)
        if not self.known_int(op.step) > 0:
            self.emit(f"if not {step} > 0: positive_step({self.const(op)}, {step})")
        self.emit(f"for {self.define(iv)} in range({self.use(op.lb)}, {self.use(op.ub)}, {step}):")
        if args:
            self.emit(f"    {', '.join(self.define(a) for a in args)}, = {', '.join(carried)},")
        self.nested(op.body, carried)

    def scf_if(self, op: scf.IfOp) -> None:
        self.count()
        targets = [self.define(r) for r in op.results]
        self.emit(f"if {self.use(op.cond)}:")
        self.nested(op.true_region, targets)
        if op.false_region.blocks:
            self.emit("else:")
            self.nested(op.false_region, targets)

    def scf_yield(self, op: scf.YieldOp) -> None:
        targets = self.yield_to[-1] if self.yield_to else []
        if targets:
            self.emit(f"{', '.join(targets)}, = {', '.join(self.use(v) for v in op.operands)},")

    def generic(self, op: Operation) -> None:
        args = "".join(f"{self.use(v)}, " for v in op.operands)
        out = self.results(op)
        line = f"{out} = fallback({self.const(op)}, ({args}))" if out else f"fallback({self.const(op)}, ({args}))"
        if op.name.startswith(ops.SCALAR_OPS):  # (xDSL's arith: values only)
            self.emit(line)
        else:
            self.synced(line)

    # -- scalar ----------------------------------------------------------------------------------

    def constant(self, op: arith.ConstantOp) -> None:
        if not isinstance(op.value, IntegerAttr | FloatAttr):
            return self.generic(op)
        self.known[op.result] = op.value.value.data
        self.emit(f"{self.define(op.result)} = {self.const(op.value.value.data)}")

    def known_int(self, v: SSAValue) -> int:
        """The value of an integer constant of the region; 0 for any other value."""
        value = self.known.get(v)
        return value if isinstance(value, int) else 0

    def inline(self, op: Operation) -> None:
        if isinstance(op, _DIVISIONS) and not self.known_int(op.operands[1]):
            divisor = self.use(op.operands[1])
            self.emit(f"if not {divisor}: nonzero({self.const(op)}, {divisor})")
        expr = _INLINE[type(op)].format(*(self.use(v) for v in op.operands))
        self.emit(f"{self.define(op.results[0])} = {expr}")

    def cmpi(self, op: arith.CmpiOp) -> None:
        infix = _INFIX[CMP[op.predicate.value.data]]
        self.emit(f"{self.define(op.result)} = {self.use(op.lhs)} {infix} {self.use(op.rhs)}")

    # -- npu ---------------------------------------------------------------------------------------

    def call(self, expr: str, op: Operation | None = None, tables: bool = False) -> None:
        """An op with effects on the machine: charge the scalar ops before it first.
        `tables`: it may read or write the core's pipe timing tables (`synced`)."""
        self.flush()
        line = f"{self.define(op.results[0])} = {expr}" if op is not None else expr
        if tables:
            self.synced(line)
        else:
            self.emit(line)

    def alloc(self, op: npu.AllocOp) -> None:
        t = op.result.type
        assert isinstance(t, BufferType)
        o = self.const(op)
        if t.mem == Space.GM:
            return self.call(f"ops.gm_alloc(m, {o}, ({''.join(f'{self.use(v)}, ' for v in op.operands)}))", op)
        spec = self.const(ops.AllocSpec.of(op))
        self.flush()
        v = self.define(op.result)
        self.emit(f"{v} = bufs.get({spec})")  # (`alloc_once` after a core's first run: a call saved)
        self.emit(f"if {v} is None: {v} = ops.alloc_once(m, core, {o}, {spec})")

    def value_op(self, op: npu.DimOp | npu.ReshapeOp | npu.ViewOp) -> None:
        fn = {npu.DimOp: "dim", npu.ReshapeOp: "reshape", npu.ViewOp: "view"}[type(op)]
        self.call(f"ops.{fn}({self.const(op)}, {self.use(op.operands[0])})", op)

    def offsets(self, static: tuple[int, ...], dyn) -> str:
        return "".join(f"{o}, " for o in self.offset_list(static, dyn))

    def offset_list(self, static: tuple[int, ...], dyn) -> list[str]:
        it = iter(dyn)
        return [f"int({self.use(next(it))})" if s == npu.DYN else str(s) for s in static]

    def copy(self, op: npu.DmaOp | npu.FixpipeOp) -> None:
        if isinstance(op, npu.DmaOp) and self.onchip_dma(op):
            return
        if self.hot and self.gm_dma(op):
            return
        self.generic_copy(op)

    def generic_copy(self, op: npu.DmaOp | npu.FixpipeOp, cold: bool = False) -> None:
        fn = "dma" if isinstance(op, npu.DmaOp) else "fixpipe"
        rows = f"int({self.use(op.rows)})" if op.rows is not None else "None"
        s = self.spec(op)
        so, do = self.offsets(s.src_static, op.src_offsets), self.offsets(s.dst_static, op.dst_offsets)
        args = f"{self.use(op.src)}, {self.use(op.dst)}, ({so}), ({do}), {rows}"
        self.flush()
        copy = [f"gm = ops.{fn}(m, core, {self.const(op)}, {self.const(s)}, {args})"]
        if Space.GM in (_mem(op.src), _mem(op.dst)):
            copy += [_OFFER, "ops.gm_copy(m, core, gm)"]
        self.synced(*copy, cold=cold)

    def onchip_dma(self, op: npu.DmaOp) -> bool:
        """A DMA between two allocated on-chip buffers, all of whose rows it copies: its
        shapes, bytes and rate are static, so only its dynamic offsets are checked here
        (out of bounds, `ops.dma` runs to raise its error) and `ops.dma`'s work is
        written out with them. Whether it applies is decided here, once."""
        src, dst = self.static(op.src), self.static(op.dst)
        s = self.spec(op)
        sext = tuple(reversed(s.ext)) if s.transpose else s.ext
        if src is None or dst is None or s.has_rows or not (len(sext) == src.ndim and len(s.ext) == dst.ndim):
            return False
        so = self.offset_list(s.src_static, op.src_offsets)
        do = self.offset_list(s.dst_static, op.dst_offsets)
        axes = [*zip(sext, src.shape, strict=True), *zip(s.ext, dst.shape, strict=True)]
        if False in (_inside(o, e, d) for o, (e, d) in zip(so + do, axes, strict=True)):
            return False  # outside whatever the loop does: the generic path raises
        self.flush()
        names = [self.use(op.src), self.use(op.dst)]
        so, do = self.bind(so), self.bind(do)
        tests = [t for o, (e, d) in zip(so + do, axes, strict=True) if isinstance(t := self.inside(o, e, d), str)]
        if tests:
            self.emit(f"if not ({' and '.join(tests)}):")
            self.emit(
                f"    ops.dma(m, core, {self.const(op)}, {self.const(s)}, {names[0]}, {names[1]}, "
                f"({''.join(f'{o}, ' for o in so)}), ({''.join(f'{o}, ' for o in do)}), None)"
            )
        data = f"{names[0]}.array[{self.window(so, sext)}]{'.T' if s.transpose else ''}"
        self.emit("if numerics:")
        self.emit(f"    ops.move({names[1]}.array[{self.window(do, s.ext)}], {data})")
        nbytes = self.num(math.prod(sext) * src.dtype.itemsize)
        cycles = f"{nbytes} / cost.path_rate({self.const(src.space)}, {self.const(dst.space)})"
        cycles = self.hoist(f"cost.transposed({cycles})" if s.transpose else cycles)
        self.book(op, s.pipe, cycles, [self.static_key(op.src)], [self.static_key(op.dst)], nbytes)
        return True

    def gm_dma(self, op: npu.DmaOp | npu.FixpipeOp) -> bool:
        """A DMA between GM and an allocated on-chip buffer, not transposed, or a fixpipe
        from one to GM that is not an atomic add: `ops.dma` (`ops.fixpipe`) and
        `ops.gm_copy` in one, under a test of every offset (a tile outside fails it, and
        the generic copy runs to raise its error). An op-heavy kernel is mostly these."""
        s = self.spec(op)
        load, store = _mem(op.src) == Space.GM, _mem(op.dst) == Space.GM
        chip = self.static(op.dst if load else op.src)
        if load == store or chip is None or s.transpose:
            return False
        if isinstance(op, npu.FixpipeOp) and op.atomic_add is not None:
            return False
        if not len(s.ext) == chip.ndim == _rank(op.src) == _rank(op.dst):
            return False
        so = self.offset_list(s.src_static, op.src_offsets)
        do = self.offset_list(s.dst_static, op.dst_offsets)
        if False in (_inside(o, e, d) for o, e, d in zip(do if load else so, s.ext, chip.shape, strict=True)):
            return False  # outside whatever the loop does: the generic copy raises
        self.flush()
        so, do = self.bind(so), self.bind(do)
        ext = self.valid_extent(op, s)
        gm, gm_offs, chip_offs = (self.use(op.src), so, do) if load else (self.use(op.dst), do, so)
        tests = [
            t
            for o, e, d in zip(chip_offs, s.ext, chip.shape, strict=True)
            if isinstance(t := self.inside(o, e, d), str)
        ]
        tests += [f"0 <= {o} <= {gm}.array.shape[{i}] - {e}" for i, (o, e) in enumerate(zip(gm_offs, ext, strict=True))]
        self.emit(f"if {' and '.join(tests)}:")
        self.indent += 1
        before = self.issued
        self.gm_dma_body(op, s, so, do, ext)
        self.indent -= 1
        self.emit("else:")
        self.indent += 1
        # the generic copy counts its own slot: the written-out one is taken back here
        self.emit(f"core.issued -= {self.issued - before}")
        self.generic_copy(op, cold=True)  # (a tile partly outside, or a tail's empty one)
        self.indent -= 1
        return True

    def valid_extent(self, op: npu.DmaOp | npu.FixpipeOp, s: ops.CopySpec) -> list[str]:
        """The extent the copy moves: of a partial tile (`rows`), its valid rows."""
        ext = [self.num(e) for e in s.ext]
        if op.rows is not None:
            rows, ext[0] = ext[0], f"o{len(self.lines)}_rows"
            self.emit(f"{ext[0]} = max(0, min(int({self.use(op.rows)}), {rows}))")
        return ext

    def gm_dma_body(
        self, op: npu.DmaOp | npu.FixpipeOp, s: ops.CopySpec, so: list[str], do: list[str], ext: list[str]
    ) -> None:
        src, dst = self.use(op.src), self.use(op.dst)
        load = _mem(op.src) == Space.GM
        gm, gm_offs = (src, so) if load else (dst, do)
        into, data = f"{dst}.array[{self.window(do, ext)}]", f"{src}.array[{self.window(so, ext)}]"
        self.emit("if numerics:")
        if isinstance(op, npu.DmaOp):
            self.emit(f"    ops.move({into}, {data})")
        else:
            self.emit(f"    ops.fixpipe_value({self.const(op)}, {data}, {into})")
        if load and op.rows is not None:  # the rows past the valid ones are zeroed
            self.emit(f"    if {ext[0]} < {self.num(s.ext[0])}:")
            self.emit(f"        {dst}.array[{self.window(do, s.ext)}][{ext[0]}:] = 0")
        offs, extent = f"({''.join(f'{o}, ' for o in gm_offs)})", f"({''.join(f'{e}, ' for e in ext)})"
        if not load:
            self.emit(f"m.count_writes({gm}, {offs}, {extent})")
        moved = op.src.type if isinstance(op, npu.DmaOp) else op.dst.type  # (a fixpipe converts)
        assert isinstance(moved, BufferType)
        self.emit(f"nbytes = {' * '.join(ext)} * {np.dtype(nx.DTYPES[moved.elem]).itemsize}")
        self.offer_turn()
        write, cacheable = not load, s.cacheable
        self.emit(f"hits, misses, evicted = m.gm_access({gm}, {offs}, {extent}, {write}, {cacheable})")
        self.emit("core.hbm_lines += evicted" + ("" if write and cacheable else " + misses"))  # (`ops.gm_copy`)
        reads, writes = [self.key(op.src)], [self.key(op.dst)]
        self.begin(s.pipe, reads, writes)
        latency = f"{self.hoist('cost.gm_latency(1)')} if misses else {self.hoist('cost.gm_latency(0)')}"
        if isinstance(op, npu.FixpipeOp):  # priced by the target's fixpipe form (`ops.gm_copy`)
            acc = self.static(op.src)
            assert acc is not None
            drain = f"({ext[0]}, {self.num(math.prod(s.ext[1:]))}, {acc.dtype.itemsize})"
            self.emit(f"moved = cost.fixpipe_gm(t, {drain}, hits, misses, evicted, m.hbm_time)")
            self.commit(op, s.pipe, "moved", reads, writes, "nbytes", latency)
            return
        fixed = "fixed_out" if write else "fixed_in"
        self.emit(f"moved = cost.gm_transfer(t + {fixed}, hits, misses, {write}, {cacheable}, m.hbm_time, evicted)")
        self.commit(op, s.pipe, f"{fixed} + moved", reads, writes, "nbytes", latency)

    # -- pipe timing ---------------------------------------------------------------------

    def key(self, v: SSAValue) -> Key:
        """The dependence key of a buffer (`Buf.key`): known for an allocated one, else
        read at run time."""
        return self.static_key(v) if self.static(v) is not None else _DynamicKey(f"{self.use(v)}.key")

    def static_key(self, v: SSAValue) -> str:
        """The dependence key of an allocated buffer (`_static_buffer`)."""
        b = self.static(v)
        assert b is not None
        return dependence_key(b.space, b.offset)

    def book(self, op: Operation, pipe: Pipe, cycles: str, reads: list[str], writes: list[str], nbytes: str) -> None:
        """`core.run` of an op on allocated buffers (`static_key`) whose cost does not
        depend on when it starts: a call, or in a hot program written out (`begin`,
        `commit`), at half the cost per op but three times the source."""
        self.flush()
        if self.hot:
            self.begin(pipe, reads, writes)
            self.commit(op, pipe, cycles, reads, writes, nbytes, "0.0")
        else:
            r, w = (f"({''.join(f'{self.const(k)}, ' for k in keys)})" for keys in (reads, writes))
            self.emit(f"core.run({self.const(op)}, {self.const(pipe)}, {cycles}, 0.0, {r}, {w}, {nbytes})")

    def begin(self, pipe: Pipe, reads: Sequence[Key], writes: Sequence[Key]) -> None:
        """`t = core.begin(pipe, reads, writes)` written out (`state`)."""
        self.emit("core.issue = t = core.issue + ci")
        self.issued += 1
        deps = [self.state("free", pipe), self.state("pipe_wait", pipe)]
        deps += [self.state("written", k) for k in [*reads, *writes]] + [self.state("read", k) for k in writes]
        self.emit(f"t = max(t, {', '.join(deps)})")

    def commit(
        self,
        op: Operation,
        pipe: Pipe,
        cycles: str,
        reads: Sequence[Key],
        writes: Sequence[Key],
        nbytes: str,
        latency: str,
    ) -> None:
        """`core.commit(op, pipe, t, cycles, latency, reads, writes, nbytes)` written out."""
        free, last, busy = (self.state(table, pipe) for table in ("free", "last_done", "busy"))
        if latency == "0.0":  # (t, a float, + c + 0.0 is t + c: an addition saved per op)
            self.emit(f"c = {cycles}")
            self.emit(f"{free} = done = t + c")
            took = "c + 0.0"
        else:
            self.emit(f"c, lat = {cycles}, {latency}")
            self.emit("done = t + c + lat")
            self.emit(f"{free} = t + c")
            took = "c + lat"
        self.emit(f"if done > {last}: {last} = done")
        self.emit(f"{busy} = {busy} + c")
        for k in reads:
            self.emit(f"if done > {self.state('read', k)}: {self.state('read', k)} = done")
        for k in writes:
            self.emit(f"{self.state('written', k)} = done")
        event = f"Event(core.name, {pipe.value!r}, {op.name!r}, t, {took}, {nbytes}, c)"
        self.emit(f"if events is not None: events.append({event})")

    def bind(self, offsets: list[str]) -> list[str]:
        """Offsets as names or numbers: an `int(...)` of a dynamic one is taken once."""
        out: list[str] = []
        for o in offsets:
            if not o.lstrip("-").isdigit():
                name = f"o{len(self.lines)}_{len(out)}"
                self.emit(f"{name} = {o}")
                o = name
            out.append(o)
        return out

    def mmad(self, op: npu.MmadOp) -> None:
        rows = f"int({self.use(op.rows)})" if op.rows is not None else "None"
        acc = f"bool({self.use(op.accumulate)})" if op.accumulate is not None else "False"
        a, b, c = (self.use(v) for v in (op.lhs, op.rhs, op.acc))
        lhs, rhs = self.static(op.lhs), self.static(op.rhs)
        if not self.hot or lhs is None or rhs is None or self.static(op.acc) is None:
            self.call(f"ops.mmad(m, core, {self.const(op)}, {a}, {b}, {c}, {rows}, {acc})", tables=True)
            return
        # `ops.mmad` written out: the shapes and the element type are the buffers' types'
        self.flush()
        self.emit(f"accumulate = {acc}")
        self.emit("if numerics:")
        self.emit(f"    ops.mmad_value({a}.array, {b}.array, {c}.array, accumulate)")
        (mm, k), n = lhs.shape, rhs.shape[1]
        ka, kb, kc = (self.static_key(v) for v in (op.lhs, op.rhs, op.acc))
        self.begin(Pipe.CUBE, [ka, kb], [kc])
        self.commit(
            op,
            Pipe.CUBE,
            f"cost.mmad({self.num(mm)}, {self.num(k)}, {self.num(n)}, {nx.NAMES[lhs.dtype]!r}, {rows})",
            [ka, kb],
            [kc],
            "0",
            "0.0",
        )
        macs = f"cost.mmad_macs({self.num(mm)}, {self.num(k)}, {self.num(n)}, {nx.NAMES[lhs.dtype]!r}, {rows})"
        self.emit(f"core.macs += {self.hoist(macs) if rows == 'None' else macs}")
        acc_read = self.state("read", kc)
        self.emit(f"if accumulate and done > {acc_read}: {acc_read} = done  # the accumulator is read too")

    def vector(self, op: Operation) -> None:
        name, compute = ops.vector_kernel(op)
        *srcs, dst = (self.use(v) for v in op.operands)
        static = [self.static(v) for v in op.operands]
        if None not in static:  # `ops.vector` written out: its bytes are the types'
            nbytes = self.num(max(math.prod(b.shape) * b.dtype.itemsize for b in static if b is not None))
            arrays = "".join(f", {s}.array" for s in srcs)
            self.emit("if numerics:")
            self.emit(f"    {dst}.array[...] = {self.const(compute)}({dst}.array{arrays})")
            keys = [self.static_key(v) for v in op.operands]
            cycles = self.hoist(f"cost.vector({name!r}, {nbytes})")
            self.book(op, Pipe.VECTOR, cycles, keys[:-1], keys[-1:], nbytes)
            return
        self.call(
            f"ops.vector(m, core, {self.const(op)}, {name!r}, {self.const(compute)}, "
            f"({''.join(f'{s}, ' for s in srcs)}), {dst})",
            tables=True,
        )

    def vcopy(self, op: npu.VCopyOp) -> None:
        self.call(f"ops.vcopy(m, core, {self.const(op)}, {self.use(op.src)}, {self.use(op.dst)})", tables=True)

    # Flags are inlined `Core.set_flag` / `Core.wait_flag` (a core program is mostly
    # flags: a call each cost as much as the rest of its bookkeeping).

    def flag(self, src: Pipe, dst: Pipe, event: int) -> str:
        """The core's list of a flag's pending sets (`Core.flags`), taken once per run of
        the program."""
        return self.hoist(f"flags.setdefault({self.const((src, dst, event))}, [])")

    def set_flag(self, op: npu.SetFlagOp) -> None:
        src, dst, event = op.src_pipe.data, op.dst_pipe.data, op.event.value.data
        self.flush()
        self.emit(f"{self.flag(src, dst, event)}.append({self.state('last_done', src)})")

    def wait_flag(self, op: npu.WaitFlagOp) -> None:
        src, dst, event = op.src_pipe.data, op.dst_pipe.data, op.event.value.data
        pending = self.flag(src, dst, event)
        self.flush()
        self.emit(f"if not {pending}:  # never set: the interpreter's error (it raises)")
        self.emit(f"    core.wait_flag({self.const(op)}, {self.const(src)}, {self.const(dst)}, {event})")
        self.emit(f"t = {pending}.pop(0)")
        if dst == Pipe.SCALAR:
            self.emit("if t > core.issue:")
            self.emit("    core.issue = t")
        else:
            wait = self.state("pipe_wait", dst)
            self.emit(f"if t > {wait}:")
            self.emit(f"    {wait} = t")

    def barrier(self, op: npu.BarrierOp) -> None:
        self.call(f"core.barrier({self.const(op.pipe.data)})", tables=True)

    def cross_set(self, op: npu.CrossCoreSetOp) -> None:
        self.call(f"m.cross.setdefault({op.flag.value.data}, []).append(core.end())", tables=True)
        self.offer_turn()

    def cross_wait(self, op: npu.CrossCoreWaitOp) -> None:
        flag = op.flag.value.data
        self.call(f"n = int({self.use(op.count)})")
        self.emit("if n > 0:")
        self.emit(f"    sets = m.cross.setdefault({flag}, [])")
        self.emit("    if len(sets) < n:")
        waiting = f"f'cross-core flag {flag} ({{n}} sets)'"
        self.emit(f"        yield Block(lambda sets=sets, n=n: enough(sets, n), {waiting})")
        self.emit(f"    ops.cross_wait_time(m, core, {flag}, n)")


@dataclass(frozen=True)
class _DynamicKey:
    """A buffer's dependence key read at run time (`expr`): a GM tensor's, or a buffer
    that is not an `npu.alloc`'s result."""

    expr: str


# A dependence key: an allocated buffer's (`machine.dependence_key`), known when compiling, or
# one read at run time.
Key = str | _DynamicKey


def _only_block(region: Region) -> IrBlock:
    if len(region.blocks) != 1:
        raise MachineError(
            region.parent_op(), "the compiled engine runs core programs of one block (the interp engine can)"
        )
    return region.blocks.first  # type: ignore[return-value]


@dataclass(frozen=True)
class _Static:
    """An on-chip buffer whose array is its type's shape: the result of an `npu.alloc`."""

    space: Space
    offset: int
    shape: tuple[int, ...]
    dtype: np.dtype

    @property
    def ndim(self) -> int:
        return len(self.shape)


def _static_buffer(v: SSAValue) -> _Static | None:
    t = v.type
    if not isinstance(v.owner, npu.AllocOp) or not isinstance(t, BufferType) or t.mem == Space.GM:
        return None
    spec = ops.AllocSpec.of(v.owner)
    return _Static(t.mem, spec.offset, t.get_shape(), np.dtype(spec.dtype))


def _inside(offset: str, extent: int, dim: int) -> bool | None:
    """`ops.check` of one axis: True or False if the offset is a number, None if it is
    known only at run time (`_Emitter.inside` writes the test)."""
    if not extent:
        return True
    if offset.lstrip("-").isdigit():
        return 0 <= int(offset) <= dim - extent
    return None


def _window(offsets: list[str], extent: Sequence[int | str]) -> str:
    """`o:o + e` per axis; the extents are numbers or names."""
    return ", ".join(f"{o}:{o} + {e}" for o, e in zip(offsets, extent, strict=True))


def _rank(v: SSAValue) -> int:
    t = v.type
    assert isinstance(t, BufferType)
    return len(t.get_shape())


def _mem(v: SSAValue) -> Space:
    t = v.type
    assert isinstance(t, BufferType)
    return t.mem


# Each handler takes the op type it is registered for.
_HANDLERS: dict[type[Operation], Callable[[_Emitter, Any], None]] = {
    scf.ForOp: _Emitter.scf_for,
    scf.IfOp: _Emitter.scf_if,
    arith.ConstantOp: _Emitter.constant,
    arith.CmpiOp: _Emitter.cmpi,
    npu.AllocOp: _Emitter.alloc,
    npu.DimOp: _Emitter.value_op,
    npu.ReshapeOp: _Emitter.value_op,
    npu.ViewOp: _Emitter.value_op,
    npu.DmaOp: _Emitter.copy,
    npu.FixpipeOp: _Emitter.copy,
    npu.MmadOp: _Emitter.mmad,
    npu.VCopyOp: _Emitter.vcopy,
    npu.SetFlagOp: _Emitter.set_flag,
    npu.WaitFlagOp: _Emitter.wait_flag,
    npu.BarrierOp: _Emitter.barrier,
    npu.CrossCoreSetOp: _Emitter.cross_set,
    npu.CrossCoreWaitOp: _Emitter.cross_wait,
    **dict.fromkeys(_INLINE, _Emitter.inline),
    **dict.fromkeys(ops.VECTOR_OPS, _Emitter.vector),
}
