"""The stacked numerics program of a task group (`pto.interp.stacked`): the group's
region as Python that runs once for all of its tasks, with no timing (the timing model
has scheduled every task already, `pto.interp.compiled.run_graph`).

`def numerics(S, fv, body, task)`: S is the group's `stacked.Stack`, `fv` the values
the region uses from outside it, body and task the block arguments as `Stack.args`
gives them. Index arithmetic is the same Python over ints or numpy arrays (min and max
through `stacked.mn`/`mx`); loop bounds and branches go through `stacked.u`, which
refuses a value that differs between tasks. Each `npu` op is one call of `Stack`; flags
and barriers order pipes, not data, and are left out. What the stacked pass cannot run
(a cross-core flag, a GM allocation, an on-chip reshape, buffers that overlap with
other types or shapes, an `arith` op that is not index arithmetic) makes the program
`NotStackable` here, and its graph runs per task.
"""

from __future__ import annotations

from xdsl.dialects import arith, scf
from xdsl.dialects.builtin import FloatAttr, IntegerAttr
from xdsl.ir import Operation, Region, SSAValue

from pto.dialects import npu
from pto.dialects.npu import BufferType, Space
from pto.interp import npu_ops as ops
from pto.interp import stacked
from pto.interp.arith import CMP
from pto.interp.codegen_base import _INLINE, only_block
from pto.interp.stacked import NotStackable

_MINMAX: dict[type[Operation], str] = {arith.MinUIOp: "mn({0}, {1})", arith.MaxUIOp: "mx({0}, {1})"}
_NO_DATA = (npu.SetFlagOp, npu.WaitFlagOp, npu.BarrierOp)


class StackedEmitter:
    def __init__(self, ns: dict[str, object]) -> None:
        self.ns = ns
        self.names: dict[SSAValue, str] = {}
        self.free: list[SSAValue] = []
        self.lines: list[str] = []
        self.indent = 1
        self.yield_to: list[list[str]] = []
        self.task: SSAValue | None = None  # the task block argument
        self.splits: set[int] = set()  # the q of each `task // q` and `task % q`
        # Index values a * task + b of constants a > 0, b: (a, b); and the integer
        # constants. A row and a column block picked from `2 * task + j` (hc_pre's cast:
        # two tiles a task) split the task axis as `task` itself would (`task_split`).
        self.affine: dict[SSAValue, tuple[int, int]] = {}
        self.ints: dict[SSAValue, int] = {}

    def program(self, region: Region) -> str:
        block = only_block(region)
        check_allocs(region)
        args = [self.define(a) for a in block.args]
        self.task = block.args[1] if len(block.args) > 1 else None
        self.block(block)
        head = ["def numerics(S, fv, *args):"]
        if self.free:
            head.append(f"    {', '.join(self.names[v] for v in self.free)}, = fv")
        if args:
            head.append(f"    {', '.join(args)}, = args")
        return "\n".join([*head, *self.lines, "    return"]) + "\n"

    def emit(self, line: str) -> None:
        self.lines.append("    " * self.indent + line)

    def const(self, value: object) -> str:
        name = f"k{len(self.ns)}"
        self.ns[name] = value
        return name

    def define(self, v: SSAValue) -> str:
        self.names[v] = f"v{len(self.names)}"
        return self.names[v]

    def use(self, v: SSAValue) -> str:
        if v not in self.names:
            self.free.append(v)
            self.names[v] = f"f{len(self.free)}"
        return self.names[v]

    def block(self, block) -> None:
        start = len(self.lines)
        for op in block.ops:
            self.op(op)
        if len(self.lines) == start:
            self.emit("pass")

    def nested(self, region: Region, targets: list[str]) -> None:
        self.indent += 1
        self.yield_to.append(targets)
        self.block(only_block(region))
        self.yield_to.pop()
        self.indent -= 1

    def op(self, op: Operation) -> None:  # noqa: C901  (one dispatch over the op kinds)
        t = type(op)
        if isinstance(op, _NO_DATA):
            return
        if t in _INLINE or t in _MINMAX:
            self.task_split(op)
            form = _MINMAX.get(t) or _INLINE[t]
            self.emit(f"{self.define(op.results[0])} = nz({form.format(*(self.use(v) for v in op.operands))})")
        elif isinstance(op, arith.ConstantOp) and isinstance(op.value, IntegerAttr | FloatAttr):
            if isinstance(op.value, IntegerAttr):
                self.ints[op.result] = op.value.value.data
            self.emit(f"{self.define(op.result)} = {self.const(op.value.value.data)}")
        elif isinstance(op, arith.CmpiOp):
            cmp = self.const(CMP[op.predicate.value.data])
            self.emit(f"{self.define(op.result)} = {cmp}({self.use(op.lhs)}, {self.use(op.rhs)})")
        elif isinstance(op, scf.ForOp):
            self.scf_for(op)
        elif isinstance(op, scf.IfOp):
            targets = [self.define(r) for r in op.results]
            self.emit(f"if u({self.use(op.cond)}):")
            self.nested(op.true_region, targets)
            if op.false_region.blocks:
                self.emit("else:")
                self.nested(op.false_region, targets)
        elif isinstance(op, scf.YieldOp):
            if self.yield_to and self.yield_to[-1]:
                self.emit(f"{', '.join(self.yield_to[-1])}, = {', '.join(self.use(v) for v in op.operands)},")
        elif isinstance(op, npu.AllocOp) and _mem(op.result) != Space.GM:
            self.emit(f"{self.define(op.result)} = S.alloc({self.const(ops.AllocSpec.of(op))})")
        elif isinstance(op, npu.DimOp | npu.ReshapeOp | npu.ViewOp) and _mem(op.operands[0]) == Space.GM:
            fn = {npu.DimOp: "dim", npu.ReshapeOp: "reshape", npu.ViewOp: "view"}[t]
            self.emit(f"{self.define(op.results[0])} = ops.{fn}({self.const(op)}, {self.use(op.operands[0])})")
        elif isinstance(op, npu.DmaOp | npu.FixpipeOp):
            self.copy(op)
        elif isinstance(op, npu.MmadOp):
            acc = self.use(op.accumulate) if op.accumulate is not None else "False"
            a, b, c = (self.use(v) for v in (op.lhs, op.rhs, op.acc))
            self.emit(f"S.mmad({a}, {b}, {c}, {acc})")
        elif isinstance(op, ops.VECTOR_OPS):
            _, compute = ops.vector_kernel(op)
            *srcs, dst = (self.use(v) for v in op.operands)
            transpose = isinstance(op, npu.VTransposeOp)
            self.emit(f"S.vector({self.const(compute)}, {transpose}, [{', '.join(srcs)}], {dst})")
        elif isinstance(op, npu.VCopyOp):
            self.emit(f"S.vcopy({self.const(op)}, {self.use(op.src)}, {self.use(op.dst)})")
        else:
            raise NotStackable(f"'{op.name}' in a stacked program")

    def task_split(self, op: Operation) -> None:
        """Note the split of a `(a * task + b) // q` or `% q` with a dividing q and
        0 <= b < a: q // a (with task = (q // a) * i + r, the quotient is i and the
        remainder a * r + b, each a fixed step along its task axis), and which values
        are a * task + b."""
        if len(op.operands) != 2:
            return
        x, y = op.operands
        if self.task is not None and not self.affine:
            self.affine[self.task] = (1, 0)
        ab, c = self.affine.get(x), self.ints.get(y)
        if ab is None and isinstance(op, arith.AddiOp | arith.MuliOp):  # (a constant first)
            ab, c = self.affine.get(y), self.ints.get(x)
        if ab is None or c is None:
            return
        (a, b), out = ab, op.results[0]
        if isinstance(op, arith.MuliOp) and c > 0:
            self.affine[out] = (a * c, b * c)
        elif isinstance(op, arith.AddiOp):
            self.affine[out] = (a, b + c)
        elif isinstance(op, arith.DivUIOp | arith.RemUIOp) and c > 0 and c % a == 0 and 0 <= b < a:
            self.splits.add(c // a)

    def scf_for(self, op: scf.ForOp) -> None:
        carried = [self.define(r) for r in op.results]
        if carried:
            self.emit(f"{', '.join(carried)}, = {', '.join(self.use(v) for v in op.iter_args)},")
        iv, *args = op.body.block.args
        bounds = ", ".join(self.use(v) for v in (op.lb, op.ub, op.step))
        self.emit(f"for {self.define(iv)} in loop({bounds}):")
        if args:
            self.emit(f"    {', '.join(self.define(a) for a in args)}, = {', '.join(carried)},")
        self.nested(op.body, carried)

    def copy(self, op: npu.DmaOp | npu.FixpipeOp) -> None:
        if op.cols is not None:  # (a ragged K or N tail: the per-task numerics run it)
            raise NotStackable("a copy of valid columns")
        s = ops.CopySpec.of(op)
        so, do = self.offsets(s.src_static, op.src_offsets), self.offsets(s.dst_static, op.dst_offsets)
        rows = self.use(op.rows) if op.rows is not None else "None"
        args = f"{self.const(s)}, {self.use(op.src)}, {self.use(op.dst)}, [{so}], [{do}], {rows}"
        if isinstance(op, npu.DmaOp):
            self.emit(f"S.dma({args})")
        else:
            self.emit(f"S.fixpipe({self.const(op)}, {args})")

    def offsets(self, static: tuple[int, ...], dyn) -> str:
        it = iter(dyn)
        return ", ".join(self.use(next(it)) if o == npu.DYN else str(o) for o in static)


def _mem(v: SSAValue) -> Space:
    t = v.type
    if not isinstance(t, BufferType):
        raise NotStackable("a value that is not a buffer")
    return t.mem


def check_allocs(region: Region) -> None:
    """No on-chip reshape: a stacked slot holds one type and shape (`Stack.alloc`).
    Buffers at overlapping bytes are slots of their own, each forgetting what it held
    when another is written (`Slot.overlaps`)."""
    for op in region.walk():
        if isinstance(op, npu.ReshapeOp) and _mem(op.operands[0]) != Space.GM:
            raise NotStackable("an on-chip reshape")


def compile_stacked(region: Region) -> tuple | None:
    """(numerics function, free values, task split), or None for a program the stacked
    pass cannot run. The split is the q of the program's `task // q` and `task % q` if
    it has one such q (`stacked.Stack`), else 1."""
    ns: dict[str, object] = {
        "ops": ops,
        "u": stacked.u,
        "mn": stacked.mn,
        "mx": stacked.mx,
        "nz": stacked.nz,
        "loop": stacked.loop,
    }
    e = StackedEmitter(ns)
    try:
        source = e.program(region)
    except NotStackable:
        return None
    exec(compile(source, "<npu stacked program>", "exec"), ns)  # noqa: S102
    return ns["numerics"], e.free, (min(e.splits) if len(e.splits) == 1 else 1)
