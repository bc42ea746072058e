"""The compiled engine's compiler, its frame: a program's names and lines, the scalar
ops it charges, the pipe timing state it keeps in locals, control flow and index
arithmetic. The `npu` ops are `pto.interp.codegen_npu`'s; what compiles a region is
`pto.interp.codegen`.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from xdsl.dialects import arith, scf
from xdsl.dialects.builtin import FloatAttr, IndexType, IntegerAttr
from xdsl.ir import Block as IrBlock
from xdsl.ir import Operation, Region, SSAValue
from xdsl.traits import IsTerminator

from pto.dialects import npu
from pto.dialects.npu import BufferType, Space
from pto.interp import inline
from pto.interp import npu_ops as ops
from pto.interp.arith import CMP
from pto.interp.cost import CostModel
from pto.interp.machine import PIPES, Core, MachineError, dependence_key

# `_Emitter.offer_turn`'s line.
OFFER = "if core.issue > sched.calm_until: yield YIELD"

# The core's pipe timing tables (`Core`): those by pipe, those by dependence key.
PIPE_TABLES = ("free", "last_done", "busy", "pipe_wait")
KEY_TABLES = ("written", "read")

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


class Emitter:
    """One region's program being written. `hot`: a program for many runs, which keeps
    the pipe timing entries it may use in locals and writes the pipe timing out."""

    handlers: dict[type[Operation], Callable[[Any, Any], None]] = {}

    def __init__(self, hot: bool, ns: dict[str, object]) -> None:
        self.hot = hot
        self.ns = ns
        self.names: dict[SSAValue, str] = {}
        self.free: list[SSAValue] = []
        self.lines: list[str] = []
        self.indent = 1
        self.pending = 0  # scalar ops not yet charged
        self.issued = 0  # issue slots charged since the last `core.issued` update (`count`)
        self.yield_to: list[list[str]] = []  # names an scf.yield assigns, innermost last
        self.statics: dict[SSAValue, Static | None] = {}
        self.known: dict[SSAValue, object] = {}  # the region's constants' values
        # Values known to be Python ints (bools) when the program runs, which an offset, a
        # row count or a flag uses as they are, without an `int(...)` (`bool(...)`) per op.
        self.ints: set[SSAValue] = set()
        self.bools: set[SSAValue] = set()
        self.free_ints: list[str] = []  # index values passed in, made ints once per run
        self.hoisted: dict[str, str] = {}  # expression evaluated once per core -> its name
        self.states: dict[tuple[str, object], str] = {}  # a hot program's (table, key) -> local
        self.fresh_names = 0
        self.rules = inline.Rules(
            aliases={"core.machine": "m", "m.cost": "cost", "cost.issue": "ci", "m.events": "events"},
            tables={f"core.{t}": t for t in (*PIPE_TABLES, *KEY_TABLES)},
            methods=(
                {
                    "core.begin": Core.begin,
                    "core.commit": Core.commit,
                    "core.run": Core.run,
                    "cost.gm_transfer": CostModel.gm_transfer,
                    "cost.gm_latency": CostModel.gm_latency,
                }
                if hot
                else {}
            ),
            hoisted=("core.flag",),
            pure=("cost.",),
            counted={"core.issued": self.count_issue},
            figures={"cost": CostModel},
            bound=("m.hbm_time", "m.gm_access"),
        )

    def program(self, region: Region) -> str:
        """The source of the region's program: `def program(m, core, fv, fallback, *args)`."""
        block = only_block(region)
        args = [self.define(a) for a in block.args]
        self.ints.update(block.args)  # (a task's body and index, a launch's core: ints)
        if self.hot:
            self.keep_states(region)
        self.block(block)
        head = [
            "def program(m, core, fv, fallback, *args):",
            "    ci, cost, numerics, events, sched = m.cost.issue, m.cost, m.numerics, m.events, m.scheduler",
            "    bufs, flags = core.bufs, core.flags",
            f"    {', '.join((*PIPE_TABLES, *KEY_TABLES))} = "
            + ", ".join(f"core.{t}" for t in (*PIPE_TABLES, *KEY_TABLES)),
        ]
        if self.hoisted:  # evaluated on a core's first run of the program, kept after
            key = self.const(object())
            names = "".join(f"{name}, " for name in self.hoisted.values())
            head.append(f"    hoisted = core.memo.get({key})")
            head.append("    if hoisted is None:")
            head.extend(f"        {name} = {expr}" for expr, name in self.hoisted.items())
            head.append(f"        hoisted = core.memo[{key}] = ({names})")
            head.append(f"    {names}= hoisted")
        if self.free:
            head.append(f"    {', '.join(self.names[v] for v in self.free)}, = fv")
            head.extend(f"    {name} = int({name})" for name in self.free_ints)
        if args:
            head.append(f"    {', '.join(args)}, = args")
        load, store = self.sync_lines(cold=False) if self.states else ([], [])
        body = [*head, *(f"    {line}" for line in load), *self.lines, *(f"    {line}" for line in store)]
        return "\n".join([*body, "    return", "    yield"]) + "\n"

    # -- the pipe timing state of a hot program --------------------------------------

    def keep_states(self, region: Region) -> None:
        """A hot program keeps in locals the entries of every pipe and of every buffer
        the region allocates: read when it starts, written back when it ends and around
        every call that may use the tables (`synced`). Nothing else uses them while the
        program runs (the scheduler reads only `issue`), and a dict lookup per use was a
        third of an op's booking."""
        keys: list[tuple[str, object]] = [(t, p) for t in PIPE_TABLES for p in PIPES]
        for op in region.walk():
            if isinstance(op, npu.AllocOp) and (b := self.static(op.result)) is not None:
                keys += [(t, dependence_key(b.space, b.offset)) for t in KEY_TABLES]
        for k in keys:
            self.states.setdefault(k, f"s{len(self.states)}")

    def sync_lines(self, cold: bool) -> tuple[list[str], list[str]]:
        """The lines that read the kept entries from the tables and write them back (`cold`:
        in one call each, for a path that seldom runs: half the source)."""
        names = ", ".join(self.states.values())
        if cold:
            entries = self.const(tuple(self.states))
            return [f"{names}, = states_in(core, {entries})"], [f"states_out(core, {entries}, ({names},))"]
        entries = ", ".join(f"{table}[{self.const(key)}]" for table, key in self.states)
        return [f"{names} = {entries}"], [f"{entries} = {names}"]

    def state(self, table: str, key: object) -> str:
        """An entry of the core's pipe timing tables: a hot program's local, else the
        table's entry."""
        if not self.hot:
            return f"{table}[{self.const(key)}]"
        return self.states[(table, key)]

    def synced(self, *lines: str, cold: bool = False) -> None:
        """Lines that call what may read or write the core's pipe timing tables: the
        locals a hot program keeps are written back before and read again after."""
        load, store = self.sync_lines(cold) if self.hot else ([], [])
        for line in (*store, *lines, *load):
            self.emit(line)

    def write(self, fn: Callable, *args, always: bool = False):
        """`fn(*args)` of the machine model written out here (`pto.interp.inline`), in a
        hot program; a plain one calls it (it runs few times, and writing the model out
        took longer than the calls it saved), unless `always`: an op whose cost a plain
        program then takes once per core (`hoist`), its `Core.run` still a call."""
        if self.hot or always:
            inline.write_out(self, self.rules, fn, *args)
        else:
            self.emit(inline.call_out(self, fn, *args))

    # -- names and lines (what `inline.Target` asks for) ----------------------------------

    def emit(self, line: str) -> None:
        self.lines.append("    " * self.indent + line)

    def emitted(self) -> int:
        return len(self.lines)

    def fresh(self) -> int:
        self.fresh_names += 1
        return self.fresh_names

    def const(self, value: object) -> str:
        name = f"k{len(self.ns)}"
        self.ns[name] = value
        return name

    def hoist(self, expr: str) -> str:
        """A name for `expr`, evaluated once per core, not per op (an op in a loop runs
        many times, a core runs many tasks): a figure of the target (`cost`'s), or an
        object of the core that its ops change but never replace."""
        if expr not in self.hoisted:
            self.hoisted[expr] = f"h{len(self.hoisted)}"
        return self.hoisted[expr]

    def count_issue(self, n: int) -> None:
        self.issued += n

    def define(self, v: SSAValue) -> str:
        self.names[v] = f"v{len(self.names)}"
        return self.names[v]

    def use(self, v: SSAValue) -> str:
        if v not in self.names:  # defined outside the region: passed in
            self.free.append(v)
            self.names[v] = f"f{len(self.free)}"
            if isinstance(v.type, IndexType):
                self.ints.add(v)
                self.free_ints.append(self.names[v])
        return self.names[v]

    def as_int(self, v: SSAValue) -> str:
        """The value as a Python int: an `int(...)` unless it is one (`ints`)."""
        name = self.use(v)
        return name if v in self.ints else f"int({name})"

    def as_bool(self, v: SSAValue) -> str:
        name = self.use(v)
        return name if v in self.bools else f"bool({name})"

    def num(self, n: int) -> str:
        """A number of the region's shapes (an extent, a bound, a byte count) as a name,
        not spelled out: the programs of the same ops on tiles of other sizes are then
        one source, compiled once (`codegen._code`)."""
        return self.const(n)

    def results(self, op: Operation) -> str:
        return "".join(f"{self.define(r)}, " for r in op.results)

    def static(self, v: SSAValue) -> Static | None:
        """`static_buffer`, once per value (a buffer is used by many ops)."""
        if v not in self.statics:
            self.statics[v] = static_buffer(v)
        return self.statics[v]

    def offer_turn(self) -> None:
        """`yield YIELD`, unless the scheduler has said that no other core is far enough
        behind for it to take the turn (`EventScheduler.calm_until`)."""
        self.emit(OFFER)

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

    # -- structure ---------------------------------------------------------------------

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
        handler = self.handlers.get(type(op))
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
        self.block(only_block(region))
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
        self.ints.add(iv)  # (`range` yields ints)
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

    # -- scalar ---------------------------------------------------------------------------

    def constant(self, op: arith.ConstantOp) -> None:
        if not isinstance(op.value, IntegerAttr | FloatAttr):
            return self.generic(op)
        self.known[op.result] = op.value.value.data
        if isinstance(op.value, IntegerAttr):
            self.ints.add(op.result)
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
        if all(v in self.ints for v in op.operands):  # (int arithmetic, `min` and `max` of ints)
            self.ints.add(op.results[0])
        self.emit(f"{self.define(op.results[0])} = {expr}")

    def cmpi(self, op: arith.CmpiOp) -> None:
        infix = _INFIX[CMP[op.predicate.value.data]]
        self.bools.add(op.result)
        self.emit(f"{self.define(op.result)} = {self.use(op.lhs)} {infix} {self.use(op.rhs)}")


BASE_HANDLERS: dict[type[Operation], Callable[[Any, Any], None]] = {
    scf.ForOp: Emitter.scf_for,
    scf.IfOp: Emitter.scf_if,
    arith.ConstantOp: Emitter.constant,
    arith.CmpiOp: Emitter.cmpi,
    **dict.fromkeys(_INLINE, Emitter.inline),
}


def only_block(region: Region) -> IrBlock:
    if len(region.blocks) != 1:
        raise MachineError(
            region.parent_op(), "the compiled engine runs core programs of one block (the interp engine can)"
        )
    return region.blocks.first  # type: ignore[return-value]


@dataclass(frozen=True)
class Static:
    """An on-chip buffer whose array is its type's shape: the result of an `npu.alloc`."""

    space: Space
    offset: int
    shape: tuple[int, ...]
    dtype: np.dtype

    @property
    def ndim(self) -> int:
        return len(self.shape)


def static_buffer(v: SSAValue) -> Static | None:
    t = v.type
    if not isinstance(v.owner, npu.AllocOp) or not isinstance(t, BufferType) or t.mem == Space.GM:
        return None
    spec = ops.AllocSpec.of(v.owner)
    return Static(t.mem, spec.offset, t.get_shape(), np.dtype(spec.dtype))


def inside(offset: str, extent: int, dim: int) -> bool | None:
    """`ops.check` of one axis: True or False if the offset is a number, None if it is
    known only at run time (`NpuEmitter.inside` writes the test)."""
    if not extent:
        return True
    if offset.lstrip("-").isdigit():
        return 0 <= int(offset) <= dim - extent
    return None


def window(offsets: Sequence[str], extent: Sequence[int | str]) -> str:
    """`o:o + e` per axis; the extents are numbers or names."""
    return ", ".join(f"{o}:{o} + {e}" for o, e in zip(offsets, extent, strict=True))


def rank(v: SSAValue) -> int:
    t = v.type
    assert isinstance(t, BufferType)
    return len(t.get_shape())


def mem(v: SSAValue) -> Space:
    t = v.type
    assert isinstance(t, BufferType)
    return t.mem
