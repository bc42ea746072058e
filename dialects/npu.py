"""The `npu` dialect: the hardware level, what an Ascend-style core does.

Values are buffers `!npu.buf<128x256xbf16, l0a>`: a static shape (only `gm` buffers may
have a dynamic dim), an element type and a memory space (`gm`, `l1`, `l0a`, `l0b`,
`l0c`, `ub`). On-chip buffers are allocated per core at an explicit byte offset in
their space. Work reaches the cores one of two ways: `npu.graph` holds `npu.tasks`
groups (one task per loop body and tile, each run on a free core of its kind once the
tasks of its body it depends on have ended: PyPTO's runtime), or `npu.launch` runs a
cube program on each AIC and a vector program on each AIV, each with its core index
(static placement). One op is one tile-sized action of one pipe:

- DMA `npu.dma` on MTE2 (GM -> L1/UB), MTE1 (L1 -> L0A/L0B), MTE3 (UB -> GM), with the
  cache policy of its GM side; `npu.fixpipe` moves L0C out (to GM or L1) with an
  optional cast, scalar dequant and atomic add (split-K partial sums);
- the cube `npu.mmad` (L0A x L0B -> L0C, overwrite or accumulate, optionally on the
  valid rows of a partial tile);
- vector instructions on whole UB buffers (`npu.vadd`, `npu.vmuls`, `npu.vreduce`,
  `npu.vcast`, ...), `npu.vcopy` of a column range between two UB buffers, and
  `npu.vtranspose` of the last two dims of a rank-3 UB buffer (each row's columns);
- synchronisation: `npu.set_flag`/`npu.wait_flag` between the pipes of one core,
  `npu.barrier` on one pipe, `npu.cross_core_set`/`npu.cross_core_wait` between cores.

What this level checks: the hardware rules. Every allocation fits its space's capacity
(from the target data file) and is block-aligned; a DMA uses a data path the target has
and the pipe that serves it; cube ops read L0A/L0B and write L0C, vector ops read and
write UB; cube programs and tasks touch no UB, vector ones no L1/L0; a task group
depends only on earlier groups of its graph over the same bodies. A kernel argument
marked `npu.layout = #pto.layout<nz>` (a weight stored in fractals) is a static 2-D GM
buffer of whole fractals that only DMAs into L1 read (`verify_arg_hints`).
"""

from __future__ import annotations

from collections.abc import Sequence
from enum import auto

from xdsl.dialects import arith
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    I64,
    ArrayAttr,
    DenseArrayBase,
    DictionaryAttr,
    Float32Type,
    FloatAttr,
    IndexType,
    IntAttr,
    IntegerAttr,
    IntegerType,
    StringAttr,
    UnitAttr,
    f32,
    i1,
    i64,
)
from xdsl.dialects.func import FuncOp
from xdsl.dialects.utils import EnumAttribute
from xdsl.ir import (
    Attribute,
    Block,
    Dialect,
    Operation,
    ParametrizedAttribute,
    Region,
    SSAValue,
    TypeAttribute,
)
from xdsl.irdl import (
    AttrSizedOperandSegments,
    IRDLOperation,
    irdl_attr_definition,
    irdl_op_definition,
    operand_def,
    opt_operand_def,
    opt_prop_def,
    prop_def,
    region_def,
    result_def,
    traits_def,
    var_operand_def,
)
from xdsl.parser import AttrParser, Parser, UnresolvedOperand
from xdsl.printer import Printer
from xdsl.traits import NoTerminator
from xdsl.utils.exceptions import VerifyException
from xdsl.utils.str_enum import StrEnum

from pto.diagnostics import DiagnosticError
from pto.dialects.common import (
    ELEM_BYTES,
    FLOAT_ELEMS,
    PREDICATES,
    AngleEnum,
    CachePolicy,
    CachePolicyAttr,
    Layout,
    LayoutAttr,
    ReduceKind,
    ReduceKindAttr,
    RoundMode,
    RoundModeAttr,
    broadcasts_to,
    check_cast,
    dims_str,
    elem_name,
    nz_error,
    nz_window_error,
    parse_rounding,
    parse_types_tail,
    parse_window,
    print_rounding,
    print_types_tail,
    print_window,
)
from pto.targets import target_of


class Space(StrEnum):
    GM = auto()
    L1 = auto()
    L0A = auto()
    L0B = auto()
    L0C = auto()
    UB = auto()


SPACES = tuple(Space)  # a buffer type stores its space as an index into this
CUBE_SPACES = (Space.L1, Space.L0A, Space.L0B, Space.L0C)


class Pipe(StrEnum):
    MTE1 = auto()
    MTE2 = auto()
    MTE3 = auto()
    FIXPIPE = auto()
    CUBE = auto()
    VECTOR = auto()
    SCALAR = auto()
    ALL = auto()


@irdl_attr_definition
class PipeAttr(AngleEnum, EnumAttribute[Pipe]):
    name = "npu.pipe"


# The pipe that serves each on-chip data path.
DMA_PIPE = {
    (Space.GM, Space.L1): Pipe.MTE2,
    (Space.GM, Space.UB): Pipe.MTE2,
    (Space.L1, Space.L0A): Pipe.MTE1,
    (Space.L1, Space.L0B): Pipe.MTE1,
    (Space.UB, Space.GM): Pipe.MTE3,
    (Space.UB, Space.L1): Pipe.MTE3,
    (Space.L1, Space.UB): Pipe.MTE1,
}


@irdl_attr_definition
class BufferType(ParametrizedAttribute, TypeAttribute):
    """`!npu.buf<128x1024xbf16, l1>`: a buffer in one memory space."""

    name = "npu.buf"

    shape: ArrayAttr[IntAttr]
    element_type: Attribute
    space: IntAttr  # index into Space, kept as data so the type prints compactly

    def __init__(self, shape: Sequence[int], element_type: Attribute, space: Space):
        super().__init__(ArrayAttr([IntAttr(d) for d in shape]), element_type, IntAttr(SPACES.index(space)))

    def get_shape(self) -> tuple[int, ...]:
        return tuple(d.data for d in self.shape.data)

    @property
    def mem(self) -> Space:
        return SPACES[self.space.data]

    @property
    def elem(self) -> str:
        return elem_name(self.element_type)

    def nbytes(self) -> int:
        n = ELEM_BYTES[self.elem]
        for d in self.get_shape():
            n *= d
        return n

    @staticmethod
    def check(shape: Sequence[int], elem: Attribute, space: Space) -> str | None:
        if elem_name(elem) not in ELEM_BYTES:
            return f"buffer element type must be one of {', '.join(ELEM_BYTES)}, got {elem}"
        if space != Space.GM and DYNAMIC_INDEX in shape:
            return f"only gm buffers may have a dynamic dim, got {dims_str(shape)} in {space.value}"
        if any(d == 0 or d < DYNAMIC_INDEX for d in shape) or not shape:
            return "buffer dims must be positive"
        return None

    def verify(self) -> None:
        if self.space.data not in range(len(Space)):
            raise VerifyException("unknown memory space")
        if (msg := BufferType.check(self.get_shape(), self.element_type, self.mem)) is not None:
            raise VerifyException(msg)

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        start = parser.pos
        parser.parse_punctuation("<")
        shape, elem = parser.parse_ranked_shape()
        parser.parse_punctuation(",")
        space = parser.parse_str_enum(Space)
        parser.parse_punctuation(">")
        if (msg := cls.check(shape, elem, space)) is not None:
            parser.raise_error(msg, start, parser.pos)
        return (ArrayAttr([IntAttr(d) for d in shape]), elem, IntAttr(SPACES.index(space)))

    def print_parameters(self, printer: Printer) -> None:
        printer.print_string(f"<{dims_str(self.get_shape())}x")
        printer.print_attribute(self.element_type)
        printer.print_string(f", {self.mem.value}>")


def buf(v: SSAValue) -> BufferType:
    if not isinstance(v.type, BufferType):
        raise VerifyException(f"expected an !npu.buf, got {v.type}")
    return v.type


def _need_space(op: Operation, v: SSAValue, spaces: Sequence[Space], what: str) -> BufferType:
    t = buf(v)
    if t.mem not in spaces:
        raise VerifyException(
            f"'{op.name}' {what} must be in {' or '.join(s.value for s in spaces)}, got {t.mem.value}"
        )
    return t


# --------------------------------------------------------------------------- launch


def host_only(op: Operation) -> str:
    """The error of a launch or graph met inside a core program (both engines say it)."""
    where = "an 'npu.launch' region or an 'npu.tasks' body"
    return f"'{op.name}' runs on the host: it cannot be inside a core program ({where})"


def check_on_host(op: Operation) -> None:
    """A launch or graph starts cores; inside a core program it would start them from a
    core, and a graph inside a graph would interleave two graphs' task bookkeeping."""
    parent = op.parent_op()
    while parent is not None:
        if isinstance(parent, (LaunchOp, TasksOp)):
            raise VerifyException(host_only(op))
        if isinstance(op, GraphOp) and isinstance(parent, GraphOp):
            raise VerifyException("'npu.graph' cannot nest")
        parent = parent.parent_op()


@irdl_op_definition
class LaunchOp(IRDLOperation):
    """`npu.launch cube 24 (%c) { ... } vector 48 (%v) { ... }`: run the cube program
    on `cube` AICs and the vector program on `vector` AIVs, all at once; each region's
    argument is the core index. Either program may be absent (count 0, empty region).
    Counts are at most the target's core counts."""

    name = "npu.launch"

    cube_cores = prop_def(IntegerAttr[IntegerType])
    vector_cores = prop_def(IntegerAttr[IntegerType])
    cube = region_def()
    vector = region_def()
    traits = traits_def(NoTerminator())

    def __init__(self, cube_cores: int, cube: Region, vector_cores: int, vector: Region):
        super().__init__(
            properties={"cube_cores": IntegerAttr(cube_cores, i64), "vector_cores": IntegerAttr(vector_cores, i64)},
            regions=[cube, vector],
        )

    @classmethod
    def parse(cls, parser: Parser) -> LaunchOp:
        counts = {"cube": 0, "vector": 0}
        regions = {"cube": Region(), "vector": Region()}
        for kind in ("cube", "vector"):
            if parser.parse_optional_keyword(kind):
                counts[kind] = parser.parse_integer(allow_negative=False)
                parser.parse_punctuation("(")
                arg = parser.parse_argument(expect_type=False)
                parser.parse_punctuation(")")
                regions[kind] = parser.parse_region((arg.resolve(IndexType()),))
        attrs = parser.parse_optional_attr_dict_with_keyword()
        op = cls(counts["cube"], regions["cube"], counts["vector"], regions["vector"])
        if attrs is not None:
            op.attributes.update(attrs.data)
        return op

    def print(self, printer: Printer) -> None:
        for kind, count, region in (
            ("cube", self.cube_cores, self.cube),
            ("vector", self.vector_cores, self.vector),
        ):
            if not region.blocks:
                continue
            printer.print_string(f" {kind} {count.value.data} (")
            printer.print_block_argument(region.block.args[0], print_type=False)
            printer.print_string(") ")
            printer.print_region(region, print_entry_block_args=False)
        printer.print_op_attributes(self.attributes, print_keyword=True)

    def verify_(self) -> None:
        check_on_host(self)
        target = target_of(self)
        for kind, count, region, limit in (
            ("cube", self.cube_cores.value.data, self.cube, target.cube_cores),
            ("vector", self.vector_cores.value.data, self.vector, target.vector_cores),
        ):
            if count < 0 or count > limit:
                raise VerifyException(f"{kind} core count {count} is outside 0..{limit} of target {target.name}")
            if (count == 0) != (not region.blocks):
                raise VerifyException(f"the {kind} program needs a region exactly when its core count is positive")
            if region.blocks:
                args = region.block.args
                if len(region.blocks) != 1 or len(args) != 1 or not isinstance(args[0].type, IndexType):
                    raise VerifyException(f"the {kind} program is one block with one index argument (the core id)")
        _check_core_kind(self.cube, "cube")
        _check_core_kind(self.vector, "vector")


def _check_core_kind(region: Region, kind: str) -> None:
    """The cube side touches no UB and runs no vector instruction; the vector side
    touches no L1/L0."""
    for op in region.walk():
        for v in (*op.operands, *op.results):
            if not isinstance(v.type, BufferType):
                continue
            if kind == "cube" and v.type.mem == Space.UB:
                raise DiagnosticError(op, f"the cube program cannot touch UB ('{op.name}')")
            if kind == "vector" and v.type.mem in CUBE_SPACES:
                raise DiagnosticError(op, f"the vector program cannot touch {v.type.mem.value} ('{op.name}')")
        if kind == "cube" and isinstance(op, VectorOp):
            raise DiagnosticError(op, f"'{op.name}' is a vector instruction: it belongs in the vector program")


@irdl_op_definition
class GraphOp(IRDLOperation):
    """`npu.graph cube 24 vector 48 { ... }`: a task graph dispatched to free cores, the
    way PyPTO's runtime runs a kernel (`npu.launch` is the static alternative: one
    program per core). The block holds scalar set-up (trip counts, GM workspaces) and
    `npu.tasks` groups; a task runs on one core of its kind once every task it depends
    on has finished, and tasks of every group may be in flight at once.

    `stitch N` (PyPTO's `stitch_function_max_num`): the loop bodies, in order (loop by
    loop, as the groups come), are sewn N at a time into device tasks that run one
    after another: no task of a body in stitch s starts before every task of stitch
    s - 1 has ended. Without it every body is in one stitch."""

    name = "npu.graph"

    cube_cores = prop_def(IntegerAttr[IntegerType])
    vector_cores = prop_def(IntegerAttr[IntegerType])
    stitch = opt_prop_def(IntegerAttr[IntegerType])
    body = region_def("single_block")
    traits = traits_def(NoTerminator())

    def __init__(self, cube_cores: int, vector_cores: int, body: Region, stitch: int | None = None):
        props = {"cube_cores": IntegerAttr(cube_cores, i64), "vector_cores": IntegerAttr(vector_cores, i64)}
        if stitch is not None:
            props["stitch"] = IntegerAttr(stitch, i64)
        super().__init__(properties=props, regions=[body])

    @classmethod
    def parse(cls, parser: Parser) -> GraphOp:
        counts = {}
        for kind in ("cube", "vector"):
            parser.parse_keyword(kind)
            counts[kind] = parser.parse_integer(allow_negative=False)
        stitch = parser.parse_integer(allow_negative=False) if parser.parse_optional_keyword("stitch") else None
        body = parser.parse_region()
        if not body.blocks:  # `{}`: an empty graph still has its block
            body.add_block(Block())
        op = cls(counts["cube"], counts["vector"], body, stitch)
        if (attrs := parser.parse_optional_attr_dict_with_keyword()) is not None:
            op.attributes.update(attrs.data)
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(f" cube {self.cube_cores.value.data} vector {self.vector_cores.value.data} ")
        if self.stitch is not None:
            printer.print_string(f"stitch {self.stitch.value.data} ")
        printer.print_region(self.body)
        printer.print_op_attributes(self.attributes, print_keyword=True)

    def groups(self) -> list[TasksOp]:
        return [o for o in self.body.block.ops if isinstance(o, TasksOp)]

    def verify_(self) -> None:
        check_on_host(self)
        target = target_of(self)
        for kind, count, limit in (
            ("cube", self.cube_cores.value.data, target.cube_cores),
            ("vector", self.vector_cores.value.data, target.vector_cores),
        ):
            if count < 1 or count > limit:
                raise VerifyException(f"{kind} core count {count} is outside 1..{limit} of target {target.name}")
        if self.stitch is not None and self.stitch.value.data < 1:
            raise VerifyException(f"stitch {self.stitch.value.data}: at least one loop body per stitch")
        seen: dict[str, TasksOp] = {}
        for g in self.groups():
            label = g.label.data
            if len(set(g.deps())) != len(g.deps()):
                raise DiagnosticError(g, f'task group "{label}" names a group twice in `after`')
            if label in seen:
                raise DiagnosticError(g, f'task group "{label}" is defined twice in this graph')
            for dep in g.deps():
                if dep not in seen:
                    raise DiagnosticError(
                        g, f'task group "{label}" depends on "{dep}", which is not an earlier group of this graph'
                    )
                if seen[dep].bodies is not g.bodies and not _one(seen[dep].bodies):
                    raise DiagnosticError(
                        g, f'task group "{label}" depends on "{dep}" body by body: both need the same body count value'
                    )
            seen[label] = g
        _check_successors(list(self.groups()))


def _one(v: SSAValue) -> bool:
    """Whether a body count is the constant 1: a group outside the token loops (a weight
    task), which groups of any loop may depend on (they wait for it whole)."""
    c = v.owner
    return isinstance(c, arith.ConstantOp) and isinstance(c.value, IntegerAttr) and c.value.value.data == 1


def _check_successors(groups: list[TasksOp]) -> None:
    """A group's `succ` counts agree with the groups after it: at most every task of them
    (a HUB counting once), at least one if any group is after it, none if none is."""
    for g in groups:
        counts = g.succ_counts()
        if counts is None:
            continue
        after = [d for d in groups if g.label.data in d.deps()]
        most = sum(1 if d.hub is not None else d.per_body.value.data for d in after)
        label = g.label.data
        if max(counts) > most:
            raise DiagnosticError(
                g, f'task group "{label}" gives a task {max(counts)} successors, but the groups after it have {most}'
            )
        if after and min(counts) < 1:
            names = ", ".join(f'"{d.label.data}"' for d in after)
            raise DiagnosticError(g, f'task group "{label}" gives a task no successor, but {names} come after it')
    for d in groups:
        needs = d.needs_lists() or []
        p = next((p for p in groups if p.label.data in d.deps()), None)
        if p is not None and any(not n or min(n) < 0 or max(n) >= p.per_body.value.data for n in needs):
            name, last = p.label.data, p.per_body.value.data - 1
            raise DiagnosticError(d, f'task group "{d.label.data}" needs none, or tasks of "{name}" not in 0..{last}')


@irdl_op_definition
class TasksOp(IRDLOperation):
    """`npu.tasks "linear.128" cube (%b, %i) in (%n, 8) after ["rmsnorm.128"] { ... }`:
    a group of `%n` x 8 tasks, one run of the region each, on one core of the kind, with
    its body index `%b` (one loop body: the tokens of one unrolled iteration) and its
    task index `%i` within the body. Task (b, i) may start once every task of body b of
    each group in `after` has finished (of a group with the body count constant 1 and
    another body count value, work outside the token loops: every task of it). Each
    task starts `latency.task_dispatch` cycles after the core takes it and ends when all
    its pipes are done. `hub` (after the
    `after` list): PyPTO's runtime puts a HUB task between the body's producers and
    these tasks (every task needs every producer, and they form many pairs), one more
    task to become ready between them; `hub [k0, k1, ...]`: each task's place among the
    successors of its HUB (PyPTO puts a HUB in front of each block of tasks that need the
    same producers, and a HUB hands on its successors one after another), without it
    the tasks' order in the body. `succ [n0, n1, ...]` (one count per task of a
    body, or `succ n` for all): how many tasks each task hands on to (of the groups after
    it in this graph, the HUB counting once), which PyPTO's schedulers resolve one by one
    when it ends. `needs [[j, ...], ...]` (one list per task of a body; one group in
    `after`, no `hub`): the tasks of that group's body each task waits for, instead of all
    (a split-K run waits for the vector tiles of its K range)."""

    name = "npu.tasks"

    label = prop_def(StringAttr)
    kind = prop_def(StringAttr)
    per_body = prop_def(IntegerAttr[IntegerType])
    after = prop_def(ArrayAttr[StringAttr])
    hub = opt_prop_def(UnitAttr)
    hub_order = opt_prop_def(ArrayAttr[IntegerAttr[IntegerType]])
    succ = opt_prop_def(ArrayAttr[IntegerAttr[IntegerType]])
    needs = opt_prop_def(ArrayAttr[ArrayAttr[IntegerAttr[IntegerType]]])
    bodies = operand_def(IndexType)
    body = region_def("single_block")
    traits = traits_def(NoTerminator())

    def __init__(self, label: str, kind: str, bodies: SSAValue, per_body: int, after: Sequence[str], body: Region):
        super().__init__(
            operands=[bodies],
            properties={
                "label": StringAttr(label),
                "kind": StringAttr(kind),
                "per_body": IntegerAttr(per_body, i64),
                "after": ArrayAttr([StringAttr(a) for a in after]),
            },
            regions=[body],
        )

    def deps(self) -> list[str]:
        return [a.data for a in self.after.data]

    def succ_counts(self) -> list[int] | None:
        """`succ`'s counts, one per task of a body (None without it)."""
        if self.succ is None:
            return None
        counts = [a.value.data for a in self.succ.data]
        return counts * self.per_body.value.data if len(counts) == 1 else counts

    def needs_lists(self) -> list[list[int]] | None:
        return None if self.needs is None else [[j.value.data for j in n.data] for n in self.needs.data]

    @classmethod
    def parse(cls, parser: Parser) -> TasksOp:
        label = parser.parse_str_literal()
        kind = "cube" if parser.parse_optional_keyword("cube") else (parser.parse_keyword("vector") or "vector")
        args = parser.parse_comma_separated_list(
            parser.Delimiter.PAREN, lambda: parser.parse_argument(expect_type=False)
        )
        if len(args) != 2:
            parser.raise_error("'npu.tasks' takes two block arguments: (%body, %task)")
        parser.parse_keyword("in")
        parser.parse_punctuation("(")
        bodies = parser.resolve_operand(parser.parse_unresolved_operand(), IndexType())
        parser.parse_punctuation(",")
        per_body = parser.parse_integer(allow_negative=False)
        parser.parse_punctuation(")")
        after: list[str] = []
        if parser.parse_optional_keyword("after"):
            after = parser.parse_comma_separated_list(parser.Delimiter.SQUARE, parser.parse_str_literal)
        hub = parser.parse_optional_keyword("hub") is not None
        order: list[int] | None = None
        if hub and parser.parse_optional_punctuation("[") is not None:
            order = parser.parse_comma_separated_list(parser.Delimiter.NONE, parser.parse_integer)
            parser.parse_punctuation("]")
        succ: list[int] | None = None
        if parser.parse_optional_keyword("succ"):
            if parser.parse_optional_punctuation("[") is not None:
                succ = parser.parse_comma_separated_list(parser.Delimiter.NONE, parser.parse_integer)
                parser.parse_punctuation("]")
            else:
                succ = [parser.parse_integer()]
        needs = None
        if parser.parse_optional_keyword("needs"):
            ints = lambda: parser.parse_comma_separated_list(parser.Delimiter.SQUARE, parser.parse_integer)  # noqa: E731
            needs = parser.parse_comma_separated_list(parser.Delimiter.SQUARE, ints)
        region = parser.parse_region([a.resolve(IndexType()) for a in args])
        op = cls(label, kind, bodies, per_body, after, region)
        if hub:
            op.hub = UnitAttr()
        if order is not None:
            op.hub_order = ArrayAttr([IntegerAttr(c, i64) for c in order])
        if succ is not None:
            op.succ = ArrayAttr([IntegerAttr(c, i64) for c in succ])
        if needs is not None:
            op.needs = ArrayAttr([ArrayAttr([IntegerAttr(j, i64) for j in n]) for n in needs])
        if (attrs := parser.parse_optional_attr_dict_with_keyword()) is not None:
            op.attributes.update(attrs.data)
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_string_literal(self.label.data)
        printer.print_string(f" {self.kind.data} (")
        printer.print_list(self.body.block.args, lambda a: printer.print_block_argument(a, print_type=False))
        printer.print_string(") in (")
        printer.print_operand(self.bodies)
        printer.print_string(f", {self.per_body.value.data})")
        if self.after.data:
            printer.print_string(" after [")
            printer.print_list(self.deps(), printer.print_string_literal)
            printer.print_string("]")
        if self.hub is not None:
            printer.print_string(" hub")
        if self.hub_order is not None:
            printer.print_string(f" [{', '.join(str(a.value.data) for a in self.hub_order.data)}]")
        if self.succ is not None:
            counts = [a.value.data for a in self.succ.data]
            printer.print_string(f" succ {counts[0]}" if len(counts) == 1 else f" succ [{', '.join(map(str, counts))}]")
        if (needs := self.needs_lists()) is not None:
            printer.print_string(f" needs [{', '.join(str(n) for n in needs)}]")
        printer.print_string(" ")
        if self.body.block.ops:
            printer.print_region(self.body, print_entry_block_args=False)
        else:  # xDSL would print the entry block's label, which the named arguments forbid
            printer.print_string("{\n}")
        printer.print_op_attributes(self.attributes, print_keyword=True)

    def verify_(self) -> None:
        if not isinstance(self.parent_op(), GraphOp):
            raise VerifyException("'npu.tasks' must be directly inside an 'npu.graph'")
        if self.kind.data not in ("cube", "vector"):
            raise VerifyException(f"task kind must be cube or vector, got {self.kind.data}")
        if self.per_body.value.data < 1:
            raise VerifyException("a body needs at least one task")
        if self.hub is not None and not self.after.data:
            raise VerifyException("'hub' needs an 'after' list: a HUB stands between producers and their consumers")
        if self.hub_order is not None:
            if self.hub is None:
                raise VerifyException("a HUB order needs 'hub'")
            places = [a.value.data for a in self.hub_order.data]
            if len(places) != self.per_body.value.data or min(places) < 0:
                raise VerifyException(
                    f"'hub [...]' gives a place among its HUB's successors to each task of a body "
                    f"({self.per_body.value.data}), none negative: got {places}"
                )
        if self.succ is not None:
            counts = [a.value.data for a in self.succ.data]
            if len(counts) not in (1, self.per_body.value.data):
                raise VerifyException(
                    f"'succ' gives {len(counts)} counts: one for every task, or one per task of a body "
                    f"({self.per_body.value.data})"
                )
            if min(counts) < 0:
                raise VerifyException(f"'succ' count {min(counts)} is negative")
        if (needs := self.needs_lists()) is not None and (
            len(self.after.data) != 1 or self.hub is not None or len(needs) != self.per_body.value.data
        ):
            raise VerifyException(
                f"'needs' gives each task of a body ({self.per_body.value.data}) the tasks it waits for of "
                f"its one producer group (one group in 'after', no 'hub'): got {len(needs)} lists"
            )
        args = self.body.block.args
        if len(args) != 2 or not all(isinstance(a.type, IndexType) for a in args):
            raise VerifyException("the task region takes two index arguments: (%body, %task)")
        _check_core_kind(self.body, self.kind.data)


# ------------------------------------------------------------------------ allocation


@irdl_op_definition
class AllocOp(IRDLOperation):
    """`%b = npu.alloc ub [4096] : !npu.buf<4x1024xf32, ub>`: a per-core buffer at a byte
    offset of its space; the buffer must be block-aligned and end within the space's
    capacity. `%w = npu.alloc gm (%t) : !npu.buf<?x4096xbf16, gm>`: a global workspace,
    its dynamic dim given by an operand (no offset)."""

    name = "npu.alloc"

    dyn_sizes = var_operand_def(IndexType)
    offset = opt_prop_def(IntegerAttr[IntegerType])
    result = result_def(BufferType)

    def __init__(self, result_type: BufferType, offset: int | None = None, dyn_sizes: Sequence[SSAValue] = ()):
        props: dict[str, Attribute] = {}
        if offset is not None:
            props["offset"] = IntegerAttr(offset, i64)
        super().__init__(operands=[dyn_sizes], properties=props, result_types=[result_type])

    @classmethod
    def parse(cls, parser: Parser) -> AllocOp:
        parser.parse_str_enum(Space)  # repeated in the type, kept for reading
        offset = None
        sizes: list[SSAValue] = []
        if parser.parse_optional_punctuation("["):
            offset = parser.parse_integer(allow_negative=False)
            parser.parse_punctuation("]")
        if parser.parse_optional_punctuation("("):
            sizes = parser.parse_comma_separated_list(parser.Delimiter.NONE, lambda: parser.parse_operand(IndexType()))
            parser.parse_punctuation(")")
        attrs = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        t = parser.parse_type()
        if not isinstance(t, BufferType):
            parser.raise_error(f"expected an !npu.buf type, got {t}")
        op = cls(t, offset, sizes)
        op.attributes.update(attrs)
        return op

    def print(self, printer: Printer) -> None:
        t = buf(self.result)
        printer.print_string(f" {t.mem.value}")
        if self.offset is not None:
            printer.print_string(f" [{self.offset.value.data}]")
        if self.dyn_sizes:
            printer.print_string(" (")
            printer.print_list(self.dyn_sizes, printer.print_operand)
            printer.print_string(")")
        printer.print_op_attributes(self.attributes)
        printer.print_string(" : ")
        printer.print_attribute(t)

    def verify_(self) -> None:
        t = buf(self.result)
        ndyn = t.get_shape().count(DYNAMIC_INDEX)
        if ndyn != len(self.dyn_sizes):
            raise VerifyException(f"'npu.alloc' needs {ndyn} size operands for {t}, got {len(self.dyn_sizes)}")
        if t.mem == Space.GM:
            if self.offset is not None:
                raise VerifyException("'npu.alloc' gm workspaces take no offset")
            return
        if self.offset is None:
            raise VerifyException(f"'npu.alloc' a {t.mem.value} buffer needs a byte offset")
        target = target_of(self)
        off, size = self.offset.value.data, t.nbytes()
        cap, block = target.capacity(t.mem.value), target.block_bytes
        if off < 0 or off % block:
            raise VerifyException(
                f"'npu.alloc' offset {off} in {t.mem.value} is not a multiple of the {block}-byte block"
            )
        if off + size > cap:
            raise VerifyException(
                f"buffer {t} at offset {off} needs {off + size} bytes of {t.mem.value}, but {target.name} has {cap}"
            )


@irdl_op_definition
class DimOp(IRDLOperation):
    """`%t = npu.dim %x, 0 : !npu.buf<?x4096xbf16, gm>`: the size of one dim of a buffer
    (the token count of a global tensor)."""

    name = "npu.dim"
    source = operand_def(BufferType)
    dim = prop_def(IntegerAttr[I64])
    result = result_def(IndexType)
    assembly_format = "$source `,` $dim attr-dict `:` type($source)"

    def __init__(self, source: SSAValue, dim: int):
        super().__init__(operands=[source], properties={"dim": IntegerAttr(dim, i64)}, result_types=[IndexType()])

    def verify_(self) -> None:
        rank = len(buf(self.source).get_shape())
        if not 0 <= self.dim.value.data < rank:
            raise VerifyException(f"'npu.dim' dim {self.dim.value.data} is out of range for a rank-{rank} buffer")


@irdl_op_definition
class ReshapeOp(IRDLOperation):
    """`%v = npu.reshape %x : !npu.buf<?x4x4096xbf16, gm> -> !npu.buf<?x16384xbf16, gm>`:
    view a GM buffer, or a UB buffer (a vector task's weight-only value: a gamma's
    [H] as [1, H]), with another shape of the same element count (an in-place reshape:
    no data moves). A dynamic dim must be dim 0 of both."""

    name = "npu.reshape"
    source = operand_def(BufferType)
    result = result_def(BufferType)
    assembly_format = "$source attr-dict `:` type($source) `->` type($result)"

    def __init__(self, source: SSAValue, result_type: BufferType):
        super().__init__(operands=[source], result_types=[result_type])

    def verify_(self) -> None:
        s, r = buf(self.source), buf(self.result)
        if s.mem != r.mem or s.mem not in (Space.GM, Space.UB):
            raise VerifyException("'npu.reshape' views a gm or ub buffer in the same space")
        if s.element_type != r.element_type:
            raise VerifyException("'npu.reshape' cannot change the element type")
        ss, rs = list(s.get_shape()), list(r.get_shape())
        if DYNAMIC_INDEX in ss or DYNAMIC_INDEX in rs:
            if not (ss[0] == rs[0] == DYNAMIC_INDEX and DYNAMIC_INDEX not in ss[1:] + rs[1:]):
                raise VerifyException("'npu.reshape' a dynamic dim must be dim 0 of both")
            ss, rs = ss[1:], rs[1:]
        if _prod(ss) != _prod(rs):
            raise VerifyException(f"'npu.reshape' element count differs: {s} vs {r}")


@irdl_op_definition
class ViewOp(IRDLOperation):
    """`%v = npu.view %w at [512, 0] : !npu.buf<1024x4096xbf16, gm> -> !npu.buf<512x4096xbf16, gm>`:
    a window of a static gm buffer, in place. Its elements keep their addresses in the
    source (L2 lines included): rows of a row-major buffer are contiguous, a column
    window is strided by the source's rows. A dynamic dim (an output's token axis) is
    taken whole: `npu.view %out at [0, 448] : !npu.buf<?x512xbf16, gm> ->
    !npu.buf<?x64xbf16, gm>` is the columns an assemble at `[row, 448]` writes."""

    name = "npu.view"
    source = operand_def(BufferType)
    offsets = prop_def(DenseArrayBase)
    result = result_def(BufferType)

    def __init__(self, source: SSAValue, offsets: Sequence[int], result_type: BufferType):
        super().__init__(
            operands=[source],
            properties={"offsets": DenseArrayBase.from_list(i64, list(offsets))},
            result_types=[result_type],
        )

    @property
    def starts(self) -> list[int]:
        return [int(o) for o in self.offsets.get_values()]

    def contiguous(self) -> bool:
        """Whether the window is one run of the source's memory: every dim after its last
        partial one is whole, every dim before it a single index."""
        s, r = buf(self.source).get_shape(), buf(self.result).get_shape()
        partial = [ax for ax, (a, b) in enumerate(zip(s, r, strict=True)) if a != b]
        return not partial or all(r[ax] == 1 for ax in range(partial[-1]))

    @classmethod
    def parse(cls, parser: Parser) -> ViewOp:
        return parse_window(cls, parser)  # type: ignore[return-value]

    def print(self, printer: Printer) -> None:
        print_window(printer, self.source, self.starts, self.result, self.attributes)

    def verify_(self) -> None:
        s, r = buf(self.source), buf(self.result)
        if s.mem != Space.GM or r.mem != Space.GM:
            raise VerifyException("'npu.view' views gm buffers only")
        if s.element_type != r.element_type:
            raise VerifyException("'npu.view' cannot change the element type")
        ss, rs, offs = list(s.get_shape()), list(r.get_shape()), self.starts
        if not ss or len(rs) != len(ss) or len(offs) != len(ss):
            raise VerifyException(
                f"'npu.view' takes a window of a buffer, one offset per dim: {len(offs)} offsets, {s} -> {r}"
            )
        for ax, (o, n, d) in enumerate(zip(offs, rs, ss, strict=True)):
            if DYNAMIC_INDEX in (n, d):  # (its size is known at run time only)
                if n != d or o != 0:
                    raise VerifyException(f"'npu.view' takes the dynamic dim {ax} whole, at offset 0")
            elif o < 0 or n < 1 or o + n > d:
                raise VerifyException(f"'npu.view' [{o}, {o + n}) of dim {ax} is outside the source's {d}")


def _prod(dims: Sequence[int]) -> int:
    n = 1
    for d in dims:
        n *= d
    return n


# ---------------------------------------------------------------------- index lists

DYN = -(2**63)  # marks a dynamic entry in a static index list, as MLIR's kDynamic


def parse_index_list(parser: Parser) -> tuple[list[int], list[UnresolvedOperand]]:
    """`[%r, 0, %c]` -> ([DYN, 0, DYN], [%r, %c])."""
    static: list[int] = []
    dyn: list[UnresolvedOperand] = []

    def one() -> None:
        if (o := parser.parse_optional_unresolved_operand()) is not None:
            static.append(DYN)
            dyn.append(o)
        else:
            static.append(parser.parse_integer(allow_negative=False))

    parser.parse_comma_separated_list(parser.Delimiter.SQUARE, one)
    return static, dyn


def print_index_list(printer: Printer, static: Sequence[int], dyn: Sequence[SSAValue]) -> None:
    it = iter(dyn)
    printer.print_string("[")
    printer.print_list(static, lambda s: printer.print_operand(next(it)) if s == DYN else printer.print_string(str(s)))
    printer.print_string("]")


def _check_index_list(
    op: Operation, what: str, t: BufferType, static: Sequence[int], ndyn: int, extent: Sequence[int], limited=()
) -> None:
    """Offsets of `t` for a tile of `extent`; an axis in `limited` (a `rows` or `cols`
    count) may hold fewer, checked when the copy runs."""
    if len(static) != len(t.get_shape()):
        raise VerifyException(f"'{op.name}' {what} needs {len(t.get_shape())} offsets, got {len(static)}")
    if sum(1 for s in static if s == DYN) != ndyn:
        raise VerifyException(f"'{op.name}' {what}: dynamic offsets and operands disagree")
    for ax, (off, ext, dim) in enumerate(zip(static, extent, t.get_shape(), strict=False)):
        if dim != DYNAMIC_INDEX and ax not in limited and (ext > dim or (off != DYN and off + ext > dim)):
            raise VerifyException(
                f"'{op.name}' {what}: rows/cols [{'?' if off == DYN else off}, +{ext}) of axis {ax} "
                f"exceed its size {dim}"
            )


# ----------------------------------------------------------------------------- DMA


class _CopyBase(IRDLOperation):
    src = operand_def(BufferType)
    dst = operand_def(BufferType)
    src_offsets = var_operand_def(IndexType)
    dst_offsets = var_operand_def(IndexType)
    rows = opt_operand_def(IndexType)
    cols = opt_operand_def(IndexType)
    static_src = prop_def(DenseArrayBase)
    static_dst = prop_def(DenseArrayBase)
    irdl_options = (AttrSizedOperandSegments(as_property=True),)

    def extent(self) -> tuple[int, ...]:
        """The copied tile's shape, as laid out in the destination."""
        raise NotImplementedError

    def _print_ends(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_operand(self.src)
        print_index_list(printer, self.static_src.get_values(), self.src_offsets)
        printer.print_string(" -> ")
        printer.print_operand(self.dst)
        print_index_list(printer, self.static_dst.get_values(), self.dst_offsets)
        if self.rows is not None:
            printer.print_string(" rows ")
            printer.print_operand(self.rows)
        if self.cols is not None:
            printer.print_string(" cols ")
            printer.print_operand(self.cols)

    @staticmethod
    def _parse_ends(parser: Parser):
        src = parser.parse_unresolved_operand()
        ss, sd = parse_index_list(parser)
        parser.parse_punctuation("->")
        dst = parser.parse_unresolved_operand()
        ds, dd = parse_index_list(parser)
        rows = parser.parse_unresolved_operand() if parser.parse_optional_keyword("rows") else None
        cols = parser.parse_unresolved_operand() if parser.parse_optional_keyword("cols") else None
        return src, ss, sd, dst, ds, dd, rows, cols

    @staticmethod
    def _resolve(parser: Parser, ends, st: Attribute, dt: Attribute):
        src, ss, sd, dst, ds, dd, rows, cols = ends
        idx = IndexType()
        return (
            parser.resolve_operand(src, st),
            ss,
            [parser.resolve_operand(o, idx) for o in sd],
            parser.resolve_operand(dst, dt),
            ds,
            [parser.resolve_operand(o, idx) for o in dd],
            None if rows is None else parser.resolve_operand(rows, idx),
            None if cols is None else parser.resolve_operand(cols, idx),
        )

    def verify_ends(self, transposed: bool) -> None:
        s, d = buf(self.src), buf(self.dst)
        ext = self.extent()
        src_ext = tuple(reversed(ext)) if transposed else ext
        last = len(ext) - 1
        limited = {0} if self.rows is not None else set()
        limited |= {last} if self.cols is not None else set()
        src_limited = {last - a for a in limited} if transposed else limited
        _check_index_list(self, "source", s, self.static_src.get_values(), len(self.src_offsets), src_ext, src_limited)
        _check_index_list(self, "destination", d, self.static_dst.get_values(), len(self.dst_offsets), ext, limited)


@irdl_op_definition
class DmaOp(_CopyBase):
    """`npu.dma mte2 %x[%r, 0] -> %a1[0, 0] rows %n cache none_cacheable : !src -> !dst`:
    copy one tile on a DMA pipe. The tile's shape is the on-chip side's (the destination
    for a load, the source for a store); offsets index both ends. `rows` limits a tail
    copy to that many rows and `cols` to that many columns of the on-chip tile's last
    axis (a ragged tail of K or N; a load zero-fills the rest); `transpose` reads the source
    tile transposed (a strided, slower read); `cache` is the L2 policy of the GM side."""

    name = "npu.dma"

    pipe = prop_def(PipeAttr)
    cache = opt_prop_def(CachePolicyAttr)
    transpose = opt_prop_def(UnitAttr)

    def __init__(
        self,
        pipe: Pipe,
        src: SSAValue,
        src_offsets: Sequence[int | SSAValue],
        dst: SSAValue,
        dst_offsets: Sequence[int | SSAValue],
        rows: SSAValue | None = None,
        cache: CachePolicy | None = None,
        transpose: bool = False,
        cols: SSAValue | None = None,
    ):
        props: dict[str, Attribute] = {"pipe": PipeAttr(pipe)}
        if cache is not None:
            props["cache"] = CachePolicyAttr(cache)
        if transpose:
            props["transpose"] = UnitAttr()
        _init_copy(self, src, src_offsets, dst, dst_offsets, rows, cols, props)

    def extent(self) -> tuple[int, ...]:
        s, d = buf(self.src), buf(self.dst)
        if d.mem == Space.GM:
            return tuple(reversed(s.get_shape())) if self.transpose else s.get_shape()
        return d.get_shape()

    @classmethod
    def parse(cls, parser: Parser) -> DmaOp:
        pipe = parser.parse_str_enum(Pipe)
        ends = cls._parse_ends(parser)
        cache = parser.parse_str_enum(CachePolicy) if parser.parse_optional_keyword("cache") else None
        transpose = parser.parse_optional_keyword("transpose") is not None
        attrs, st, dt = parse_types_tail(parser)
        src, ss, sd, dst, ds, dd, rows, cols = cls._resolve(parser, ends, st, dt)
        op = cls(pipe, src, _merge(ss, sd), dst, _merge(ds, dd), rows, cache, transpose, cols)
        op.attributes.update(attrs)
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(" " + self.pipe.data.value)
        self._print_ends(printer)
        if self.cache is not None:
            printer.print_string(" cache " + self.cache.data.value)
        if self.transpose is not None:
            printer.print_string(" transpose")
        print_types_tail(printer, self.attributes, self.src.type, self.dst.type)

    def verify_(self) -> None:
        s, d = buf(self.src), buf(self.dst)
        path = (s.mem, d.mem)
        target = target_of(self)
        if path not in DMA_PIPE or not target.has_path(s.mem.value, d.mem.value):
            raise VerifyException(f"target {target.name} has no data path {s.mem.value} -> {d.mem.value}")
        if DMA_PIPE[path] != self.pipe.data:
            raise VerifyException(
                f"{s.mem.value} -> {d.mem.value} runs on {DMA_PIPE[path].value}, not {self.pipe.data.value}"
            )
        if s.element_type != d.element_type:
            raise VerifyException("'npu.dma' cannot convert element types (use npu.vcast or npu.fixpipe)")
        if self.cache is not None and Space.GM not in path:
            raise VerifyException("'npu.dma' a cache policy needs a gm side")
        if self.transpose is not None and len(s.get_shape()) != 2:
            raise VerifyException("'npu.dma' transpose works on rank-2 tiles")
        self.verify_ends(self.transpose is not None)


def _merge(static: Sequence[int], dyn: Sequence[SSAValue]) -> list[int | SSAValue]:
    it = iter(dyn)
    return [next(it) if s == DYN else s for s in static]


def _init_copy(op: _CopyBase, src, src_offsets, dst, dst_offsets, rows, cols, props) -> None:
    def split(offs):
        return [DYN if isinstance(o, SSAValue) else o for o in offs], [o for o in offs if isinstance(o, SSAValue)]

    ss, sd = split(src_offsets)
    ds, dd = split(dst_offsets)
    props["static_src"] = DenseArrayBase.from_list(i64, ss)
    props["static_dst"] = DenseArrayBase.from_list(i64, ds)
    IRDLOperation.__init__(op, operands=[src, dst, sd, dd, rows, cols], properties=props)


# Fixpipe conversions out of L0C: accumulator type -> output types.
FIXPIPE_OUT = {"f32": ("f32", "bf16", "f16"), "i32": ("i32", "f32", "f16", "bf16")}


@irdl_op_definition
class FixpipeOp(_CopyBase):
    """`npu.fixpipe %acc[0, 0] -> %out[%r, %c] rows %n round rint deq 0.5 atomic_add :
    !npu.buf<128x256xf32, l0c> -> !npu.buf<?x1024xbf16, gm>`: move an L0C tile out on
    the FIXPIPE, converting to the destination's element type (`round` mode when it
    narrows), optionally multiplying by a scalar dequant scale `deq`, and with
    `atomic_add` adding into the destination (split-K partial sums). `rows` and `cols`
    limit a tail tile's store to its valid rows and columns (the rest of the
    destination is left as it was)."""

    name = "npu.fixpipe"

    round = opt_prop_def(RoundModeAttr)
    deq = opt_prop_def(FloatAttr[Float32Type])
    atomic_add = opt_prop_def(UnitAttr)

    def __init__(
        self,
        src: SSAValue,
        src_offsets,
        dst: SSAValue,
        dst_offsets,
        rows: SSAValue | None = None,
        round: RoundMode | None = None,
        deq: float | None = None,
        atomic_add: bool = False,
        cols: SSAValue | None = None,
    ):
        props: dict[str, Attribute] = {}
        if round is not None:
            props["round"] = RoundModeAttr(round)
        if deq is not None:
            props["deq"] = FloatAttr(deq, f32)
        if atomic_add:
            props["atomic_add"] = UnitAttr()
        _init_copy(self, src, src_offsets, dst, dst_offsets, rows, cols, props)

    def extent(self) -> tuple[int, ...]:
        return buf(self.src).get_shape()

    @classmethod
    def parse(cls, parser: Parser) -> FixpipeOp:
        ends = cls._parse_ends(parser)
        rnd = parser.parse_str_enum(RoundMode) if parser.parse_optional_keyword("round") else None
        deq = parser.parse_float() if parser.parse_optional_keyword("deq") else None
        atomic = parser.parse_optional_keyword("atomic_add") is not None
        attrs, st, dt = parse_types_tail(parser)
        src, ss, sd, dst, ds, dd, rows, cols = cls._resolve(parser, ends, st, dt)
        op = cls(src, _merge(ss, sd), dst, _merge(ds, dd), rows, rnd, deq, atomic, cols)
        op.attributes.update(attrs)
        return op

    def print(self, printer: Printer) -> None:
        self._print_ends(printer)
        if self.round is not None:
            printer.print_string(" round " + self.round.data.value)
        if self.deq is not None:
            printer.print_string(" deq ")
            printer.print_float(self.deq.value.data, f32)
        if self.atomic_add is not None:
            printer.print_string(" atomic_add")
        print_types_tail(printer, self.attributes, self.src.type, self.dst.type)

    def verify_(self) -> None:
        s = _need_space(self, self.src, (Space.L0C,), "source")
        d = buf(self.dst)
        target = target_of(self)
        if not target.has_path(s.mem.value, d.mem.value):
            raise VerifyException(f"target {target.name} has no data path l0c -> {d.mem.value}")
        if s.elem not in FIXPIPE_OUT or d.elem not in FIXPIPE_OUT[s.elem]:
            raise VerifyException(f"'npu.fixpipe' cannot convert {s.elem} to {d.elem}")
        narrows = s.elem != d.elem and not (s.elem == "i32" and d.elem == "f32" and self.deq is None)
        if narrows and self.round is None:
            raise VerifyException(f"'npu.fixpipe' {s.elem} -> {d.elem} rounds: give a round mode")
        if self.round is not None and self.round.data == RoundMode.NONE:
            raise VerifyException("'npu.fixpipe' round mode 'none' is implied by omitting it")
        if self.deq is not None and s.elem != "i32":
            raise VerifyException("'npu.fixpipe' deq applies to i32 accumulators")
        if self.atomic_add is not None and d.mem != Space.GM:
            raise VerifyException("'npu.fixpipe' atomic_add needs a gm destination")
        self.verify_ends(False)


# ----------------------------------------------------------------------------- cube

MMAD_OUT = {"bf16": "f32", "f16": "f32", "i8": "i32", "f32": "f32"}


@irdl_op_definition
class MmadOp(IRDLOperation):
    """`npu.mmad %a, %b -> %c rows %r acc %k : !a, !b -> !c`: C[M,N] (L0C) = A[M,K]
    (L0A) x B[K,N] (L0B), added to C when `acc` is true (later K tiles), overwriting it
    otherwise. The accumulator is f32 for bf16/f16/f32 inputs, i32 for i8. `rows` says
    how many rows of A hold data (a partial tile: the cube computes only their
    fractals; the rest of C is left as computed from A's zero fill)."""

    name = "npu.mmad"

    lhs = operand_def(BufferType)
    rhs = operand_def(BufferType)
    acc = operand_def(BufferType)
    rows = opt_operand_def(IndexType)
    accumulate = opt_operand_def(i1)
    irdl_options = (AttrSizedOperandSegments(as_property=True),)

    assembly_format = (
        "$lhs `,` $rhs `->` $acc (`rows` $rows^)? (`acc` $accumulate^)? attr-dict `:` type($lhs) `,` type($rhs) "
        "`->` type($acc)"
    )

    def __init__(
        self,
        lhs: SSAValue,
        rhs: SSAValue,
        acc: SSAValue,
        accumulate: SSAValue | None = None,
        rows: SSAValue | None = None,
    ):
        super().__init__(operands=[lhs, rhs, acc, rows, accumulate])

    def verify_(self) -> None:
        a = _need_space(self, self.lhs, (Space.L0A,), "lhs")
        b = _need_space(self, self.rhs, (Space.L0B,), "rhs")
        c = _need_space(self, self.acc, (Space.L0C,), "accumulator")
        (m, k), (kb, n) = a.get_shape(), b.get_shape()
        if k != kb or c.get_shape() != (m, n):
            raise VerifyException(
                f"'npu.mmad' shapes {dims_str(a.get_shape())} x {dims_str(b.get_shape())} -> "
                f"{dims_str(c.get_shape())} do not agree"
            )
        if a.elem != b.elem or a.elem not in MMAD_OUT:
            raise VerifyException(f"'npu.mmad' takes two bf16, f16, i8 or f32 inputs, got {a.elem} and {b.elem}")
        if c.elem != MMAD_OUT[a.elem]:
            raise VerifyException(f"'npu.mmad' {a.elem} inputs accumulate in {MMAD_OUT[a.elem]}, got {c.elem}")


# --------------------------------------------------------------------------- vector


class VectorOp(IRDLOperation):
    """Base of the vector instructions: every buffer operand lives in UB."""

    def verify_(self) -> None:
        for v in self.operands:
            if isinstance(v.type, BufferType):
                _need_space(self, v, (Space.UB,), "operand")
        self.verify_vector()

    def verify_vector(self) -> None:
        pass


class VBinaryBase(VectorOp):
    """`npu.vadd %a, %b -> %d : !a, !b -> !d`: elementwise on UB tiles; `a` and `b`
    broadcast, trailing-aligned (a dim of 1 or a missing leading dim: a per-row scalar
    [R,1], a per-column vector [1,C] or [C])."""

    lhs = operand_def(BufferType)
    rhs = operand_def(BufferType)
    dst = operand_def(BufferType)
    assembly_format = "$lhs `,` $rhs `->` $dst attr-dict `:` type($lhs) `,` type($rhs) `->` type($dst)"

    def __init__(self, lhs: SSAValue, rhs: SSAValue, dst: SSAValue):
        super().__init__(operands=[lhs, rhs, dst])

    def verify_vector(self) -> None:
        a, b, d = buf(self.lhs), buf(self.rhs), buf(self.dst)
        for t, what in ((a, "lhs"), (b, "rhs")):
            if not broadcasts_to(t.get_shape(), d.get_shape()):
                raise VerifyException(
                    f"'{self.name}' {what} {dims_str(t.get_shape())} does not broadcast to {dims_str(d.get_shape())}"
                )
        if not (a.element_type == b.element_type == d.element_type):
            raise VerifyException(f"'{self.name}' operands must share one element type")


class VUnaryBase(VectorOp):
    """`npu.vsqrt %a -> %d : !a -> !d`: elementwise float function, same shape/type."""

    src = operand_def(BufferType)
    dst = operand_def(BufferType)
    assembly_format = "$src `->` $dst attr-dict `:` type($src) `->` type($dst)"

    def __init__(self, src: SSAValue, dst: SSAValue):
        super().__init__(operands=[src, dst])

    def verify_vector(self) -> None:
        s, d = buf(self.src), buf(self.dst)
        if s.get_shape() != d.get_shape() or s.element_type != d.element_type:
            raise VerifyException(f"'{self.name}' source and destination must have one shape and element type")
        if s.elem not in ("bf16", "f16", "f32"):
            raise VerifyException(f"'{self.name}' works on float data")


class VScalarBase(VectorOp):
    """`npu.vmuls %a, 0.5 -> %d : !a -> !d`: elementwise with an f32 immediate."""

    src = operand_def(BufferType)
    scalar = prop_def(FloatAttr[Float32Type])
    dst = operand_def(BufferType)
    assembly_format = "$src `,` $scalar `->` $dst attr-dict `:` type($src) `->` type($dst)"

    def __init__(self, src: SSAValue, scalar: float, dst: SSAValue):
        super().__init__(operands=[src, dst], properties={"scalar": FloatAttr(scalar, f32)})

    def verify_vector(self) -> None:
        s, d = buf(self.src), buf(self.dst)
        if s.get_shape() != d.get_shape() or s.element_type != d.element_type:
            raise VerifyException(f"'{self.name}' source and destination must have one shape and element type")


@irdl_op_definition
class VAddOp(VBinaryBase):
    """`dst = lhs + rhs`."""

    name = "npu.vadd"


@irdl_op_definition
class VSubOp(VBinaryBase):
    """`dst = lhs - rhs`."""

    name = "npu.vsub"


@irdl_op_definition
class VMulOp(VBinaryBase):
    """`dst = lhs * rhs`."""

    name = "npu.vmul"


@irdl_op_definition
class VDivOp(VBinaryBase):
    """`dst = lhs / rhs`."""

    name = "npu.vdiv"


@irdl_op_definition
class VMaxOp(VBinaryBase):
    """`dst = max(lhs, rhs)`."""

    name = "npu.vmax"


@irdl_op_definition
class VMinOp(VBinaryBase):
    """`dst = min(lhs, rhs)`."""

    name = "npu.vmin"


@irdl_op_definition
class VSqrtOp(VUnaryBase):
    """`dst = sqrt(src)`."""

    name = "npu.vsqrt"


@irdl_op_definition
class VRsqrtOp(VUnaryBase):
    """`dst = 1 / sqrt(src)`."""

    name = "npu.vrsqrt"


@irdl_op_definition
class VAbsOp(VUnaryBase):
    """`dst = |src|`."""

    name = "npu.vabs"


@irdl_op_definition
class VExpOp(VUnaryBase):
    """`dst = exp(src)`."""

    name = "npu.vexp"


@irdl_op_definition
class VLnOp(VUnaryBase):
    """`dst = ln(src)`."""

    name = "npu.vln"


@irdl_op_definition
class VMulsOp(VScalarBase):
    """`dst = src * scalar`."""

    name = "npu.vmuls"


@irdl_op_definition
class VAddsOp(VScalarBase):
    """`dst = src + scalar`."""

    name = "npu.vadds"


@irdl_op_definition
class VMaxsOp(VScalarBase):
    """`dst = max(src, scalar)` (a lower clamp)."""

    name = "npu.vmaxs"


@irdl_op_definition
class VMinsOp(VScalarBase):
    """`dst = min(src, scalar)` (an upper clamp)."""

    name = "npu.vmins"


@irdl_op_definition
class VDupOp(VectorOp):
    """`npu.vdup 0.0 -> %d : !d`: fill a UB buffer with an immediate."""

    name = "npu.vdup"
    scalar = prop_def(FloatAttr[Float32Type])
    dst = operand_def(BufferType)
    assembly_format = "$scalar `->` $dst attr-dict `:` type($dst)"

    def __init__(self, scalar: float, dst: SSAValue):
        super().__init__(operands=[dst], properties={"scalar": FloatAttr(scalar, f32)})

    def verify_vector(self) -> None:
        t = self.dst.type
        if not isinstance(t, BufferType) or t.elem in FLOAT_ELEMS:
            return
        half = 2 ** (8 * ELEM_BYTES[t.elem] - 1)
        low, high = -half, half - 1
        value = self.scalar.value.data
        if not (float(value).is_integer() and low <= value <= high):
            raise VerifyException(
                f"'npu.vdup' immediate {value:g} is not a value of {t.elem}: an integer in [{low}, {high}]"
            )


@irdl_op_definition
class VSelOp(VectorOp):
    """`npu.vsel gt %a, %b, %x, %y -> %d`: `d = a PRED b ? x : y` elementwise, a compare
    into the mask register and a select by it (two instructions, priced as `vsel`). All
    four sources broadcast to `d` (an immediate is a one-element vdup); `a` and `b` share
    a float type, `x`, `y` and `d` another."""

    name = "npu.vsel"
    predicate = prop_def(StringAttr)
    lhs = operand_def(BufferType)
    rhs = operand_def(BufferType)
    on_true = operand_def(BufferType)
    on_false = operand_def(BufferType)
    dst = operand_def(BufferType)
    assembly_format = (
        "$predicate $lhs `,` $rhs `,` $on_true `,` $on_false `->` $dst attr-dict "
        "`:` type($lhs) `,` type($rhs) `,` type($on_true) `,` type($on_false) `->` type($dst)"
    )

    def __init__(
        self, predicate: str, lhs: SSAValue, rhs: SSAValue, on_true: SSAValue, on_false: SSAValue, dst: SSAValue
    ):
        super().__init__(operands=[lhs, rhs, on_true, on_false, dst], properties={"predicate": StringAttr(predicate)})

    def verify_vector(self) -> None:
        d = buf(self.dst)
        srcs = (self.lhs, "lhs"), (self.rhs, "rhs"), (self.on_true, "on_true"), (self.on_false, "on_false")
        for v, what in srcs:
            shape = buf(v).get_shape()
            if not broadcasts_to(shape, d.get_shape()):
                raise VerifyException(
                    f"'{self.name}' {what} {dims_str(shape)} does not broadcast to {dims_str(d.get_shape())}"
                )
        if self.predicate.data not in PREDICATES:
            raise VerifyException(f"'{self.name}' predicate must be one of {', '.join(PREDICATES)}")
        if buf(self.lhs).element_type != buf(self.rhs).element_type or buf(self.lhs).elem not in FLOAT_ELEMS:
            raise VerifyException(f"'{self.name}' compares two buffers of one float type")
        if not (buf(self.on_true).element_type == buf(self.on_false).element_type == d.element_type):
            raise VerifyException(f"'{self.name}' selects from buffers of the destination's type")


@irdl_op_definition
class VReduceOp(VectorOp):
    """`npu.vreduce sum %a -> %d : !npu.buf<4x1024xf32, ub> -> !npu.buf<4x1xf32, ub>`:
    reduce the last axis (sum, max, min, absmax; mean is a sum and a vmuls)."""

    name = "npu.vreduce"
    kind = prop_def(ReduceKindAttr)
    src = operand_def(BufferType)
    dst = operand_def(BufferType)

    def __init__(self, kind: ReduceKind, src: SSAValue, dst: SSAValue):
        super().__init__(operands=[src, dst], properties={"kind": ReduceKindAttr(kind)})

    @classmethod
    def parse(cls, parser: Parser) -> VReduceOp:
        kind = parser.parse_str_enum(ReduceKind)
        s = parser.parse_unresolved_operand()
        parser.parse_punctuation("->")
        d = parser.parse_unresolved_operand()
        attrs, st, dt = parse_types_tail(parser)
        op = cls(kind, parser.resolve_operand(s, st), parser.resolve_operand(d, dt))
        op.attributes.update(attrs)
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(f" {self.kind.data.value} ")
        printer.print_operand(self.src)
        printer.print_string(" -> ")
        printer.print_operand(self.dst)
        print_types_tail(printer, self.attributes, self.src.type, self.dst.type)

    def verify_vector(self) -> None:
        s, d = buf(self.src), buf(self.dst)
        if self.kind.data == ReduceKind.MEAN:
            raise VerifyException("'npu.vreduce' has no mean: reduce sum, then npu.vmuls by 1/K")
        want = (*s.get_shape()[:-1], 1)
        if d.get_shape() != want or d.element_type != s.element_type:
            raise VerifyException(f"'npu.vreduce' destination must be {dims_str(want)}x{s.elem}, got {d}")


@irdl_op_definition
class VCastOp(VectorOp):
    """`npu.vcast %a -> %d trunc sat : !npu.buf<..xf16, ub> -> !npu.buf<..xi8, ub>`:
    convert element types with a round mode and, to an integer type, optional saturation
    (the same table of conversions as `pto.cast`)."""

    name = "npu.vcast"
    src = operand_def(BufferType)
    dst = operand_def(BufferType)
    round = prop_def(RoundModeAttr)
    sat = opt_prop_def(UnitAttr)

    def __init__(self, src: SSAValue, dst: SSAValue, round: RoundMode, sat: bool = False):
        props: dict[str, Attribute] = {"round": RoundModeAttr(round)}
        if sat:
            props["sat"] = UnitAttr()
        super().__init__(operands=[src, dst], properties=props)

    @classmethod
    def parse(cls, parser: Parser) -> VCastOp:
        s = parser.parse_unresolved_operand()
        parser.parse_punctuation("->")
        d = parser.parse_unresolved_operand()
        mode, sat = parse_rounding(parser)
        attrs, st, dt = parse_types_tail(parser)
        op = cls(parser.resolve_operand(s, st), parser.resolve_operand(d, dt), mode, sat)
        op.attributes.update(attrs)
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_operand(self.src)
        printer.print_string(" -> ")
        printer.print_operand(self.dst)
        print_rounding(printer, self.round, self.sat)
        print_types_tail(printer, self.attributes, self.src.type, self.dst.type)

    def verify_vector(self) -> None:
        s, d = buf(self.src), buf(self.dst)
        if s.get_shape() != d.get_shape():
            raise VerifyException("'npu.vcast' source and destination shapes differ")
        if (msg := check_cast(s.elem, d.elem, self.round.data, self.sat is not None)) is not None:
            raise VerifyException(f"'npu.vcast' {msg}")


@irdl_op_definition
class VCopyOp(VectorOp):
    """`npu.vcopy %a [cols 512] -> %d [cols 0] width 64 : !npu.buf<4x576xbf16, ub> ->
    !npu.buf<4x64xbf16, ub>`: copy columns `[S, S + W)` of every row of one UB buffer to
    columns `[D, D + W)` of another (a column slice, one input of a concatenation). The
    other columns of the destination are left as they are. Both buffers have the same
    leading dims (rows) and element type; both ranges lie inside their buffers."""

    name = "npu.vcopy"
    src = operand_def(BufferType)
    dst = operand_def(BufferType)
    src_col = prop_def(IntegerAttr[I64])
    dst_col = prop_def(IntegerAttr[I64])
    width = prop_def(IntegerAttr[I64])
    assembly_format = (
        "$src `[` `cols` $src_col `]` `->` $dst `[` `cols` $dst_col `]` `width` $width attr-dict "
        "`:` type($src) `->` type($dst)"
    )

    def __init__(self, src: SSAValue, src_col: int, dst: SSAValue, dst_col: int, width: int):
        super().__init__(
            operands=[src, dst],
            properties={
                "src_col": IntegerAttr(src_col, i64),
                "dst_col": IntegerAttr(dst_col, i64),
                "width": IntegerAttr(width, i64),
            },
        )

    def verify_vector(self) -> None:
        s, d = buf(self.src), buf(self.dst)
        if s.get_shape()[:-1] != d.get_shape()[:-1]:
            raise VerifyException(
                f"'npu.vcopy' source {dims_str(s.get_shape())} and destination {dims_str(d.get_shape())} "
                "must have the same rows (every dim but the last)"
            )
        if s.element_type != d.element_type:
            raise VerifyException(f"'npu.vcopy' copies without conversion: {s.elem} to {d.elem} (use npu.vcast)")
        w = self.width.value.data
        if w < 1:
            raise VerifyException(f"'npu.vcopy' width must be positive, got {w}")
        for t, col, what in ((s, self.src_col.value.data, "source"), (d, self.dst_col.value.data, "destination")):
            if col < 0 or col + w > t.get_shape()[-1]:
                raise VerifyException(
                    f"'npu.vcopy' {what} columns [{col}, {col + w}) are outside its {t.get_shape()[-1]} columns"
                )


@irdl_op_definition
class VTransposeOp(VectorOp):
    """`npu.vtranspose %a -> %d : !npu.buf<4x32x2xf32, ub> -> !npu.buf<4x2x32xf32, ub>`:
    per row (dim 0), the `[A, B]` matrix of its columns transposed to `[B, A]` (the
    interleaved RoPE's evens-then-odds). A2/A3's `vtranspose` instruction takes 16x16
    blocks of 16-bit elements only; a row permutation of any width and element type is
    the `vgather` its platform file lists for f32 as well (each element fetched from its
    source offset), so the op is priced as one pass of the vector unit over its bytes at
    `vector.cycles_per_repeat.vtranspose` (docs/model.md). Rank 3 both, the same rows
    and element type, the destination's last two dims the source's swapped."""

    name = "npu.vtranspose"
    src = operand_def(BufferType)
    dst = operand_def(BufferType)
    assembly_format = "$src `->` $dst attr-dict `:` type($src) `->` type($dst)"

    def __init__(self, src: SSAValue, dst: SSAValue):
        super().__init__(operands=[src, dst])

    def verify_vector(self) -> None:
        s, d = buf(self.src), buf(self.dst)
        ss, ds = list(s.get_shape()), list(d.get_shape())
        if len(ss) != VTRANSPOSE_RANK or len(ds) != VTRANSPOSE_RANK:
            raise VerifyException(
                f"'npu.vtranspose' permutes the columns of each row of rank-{VTRANSPOSE_RANK} buffers, "
                f"got {dims_str(ss)} -> {dims_str(ds)}"
            )
        if ds != [ss[0], ss[2], ss[1]]:
            raise VerifyException(
                f"'npu.vtranspose' destination {dims_str(ds)} is not the source {dims_str(ss)} "
                "with its last two dims swapped"
            )
        if s.element_type != d.element_type:
            raise VerifyException(f"'npu.vtranspose' moves without conversion: {s.elem} to {d.elem}")


VTRANSPOSE_RANK = 3


# ------------------------------------------------------------------------------ sync

_SYNC_PIPES = (Pipe.MTE1, Pipe.MTE2, Pipe.MTE3, Pipe.FIXPIPE, Pipe.CUBE, Pipe.VECTOR, Pipe.SCALAR)


class FlagBase(IRDLOperation):
    src_pipe = prop_def(PipeAttr)
    dst_pipe = prop_def(PipeAttr)
    event = prop_def(IntegerAttr[IntegerType])

    def __init__(self, src: Pipe, dst: Pipe, event: int):
        super().__init__(
            properties={"src_pipe": PipeAttr(src), "dst_pipe": PipeAttr(dst), "event": IntegerAttr(event, i64)}
        )

    @classmethod
    def parse(cls, parser: Parser):
        s = parser.parse_str_enum(Pipe)
        parser.parse_punctuation("->")
        d = parser.parse_str_enum(Pipe)
        parser.parse_punctuation(",")
        e = parser.parse_integer(allow_negative=False)
        attrs = parser.parse_optional_attr_dict()
        op = cls(s, d, e)
        op.attributes.update(attrs)
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(f" {self.src_pipe.data.value} -> {self.dst_pipe.data.value}, {self.event.value.data}")
        printer.print_op_attributes(self.attributes)

    def verify_(self) -> None:
        s, d = self.src_pipe.data, self.dst_pipe.data
        if s not in _SYNC_PIPES or d not in _SYNC_PIPES:
            raise VerifyException(f"'{self.name}' needs two named pipes, not 'all'")
        if s == d:
            raise VerifyException(f"'{self.name}' orders two different pipes; use npu.barrier within one")
        ids = target_of(self).sync.event_ids
        if not 0 <= self.event.value.data < ids:
            raise VerifyException(f"'{self.name}' event id must be in 0..{ids - 1}")


@irdl_op_definition
class SetFlagOp(FlagBase):
    """`npu.set_flag mte2 -> vector, 0`: when the source pipe's earlier work is done,
    raise event 0 for the destination pipe of the same core."""

    name = "npu.set_flag"


@irdl_op_definition
class WaitFlagOp(FlagBase):
    """`npu.wait_flag mte2 -> vector, 0`: the destination pipe waits for that event."""

    name = "npu.wait_flag"


@irdl_op_definition
class BarrierOp(IRDLOperation):
    """`npu.barrier vector`: later work on the pipe waits for all earlier work on it
    (`all`: on every pipe of the core)."""

    name = "npu.barrier"
    pipe = prop_def(PipeAttr)

    def __init__(self, pipe: Pipe):
        super().__init__(properties={"pipe": PipeAttr(pipe)})

    @classmethod
    def parse(cls, parser: Parser) -> BarrierOp:
        op = cls(parser.parse_str_enum(Pipe))
        op.attributes.update(parser.parse_optional_attr_dict())
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(" " + self.pipe.data.value)
        printer.print_op_attributes(self.attributes)


@irdl_op_definition
class CrossCoreSetOp(IRDLOperation):
    """`npu.cross_core_set 3`: once this core's earlier work is done, add one to the
    kernel-wide counter of flag 3 (e.g. a vector core's tile is in GM)."""

    name = "npu.cross_core_set"
    flag = prop_def(IntegerAttr[I64])
    assembly_format = "$flag attr-dict"

    def __init__(self, flag: int):
        super().__init__(properties={"flag": IntegerAttr(flag, i64)})


@irdl_op_definition
class CrossCoreWaitOp(IRDLOperation):
    """`npu.cross_core_wait 3, %n`: wait until flag 3's counter has reached `%n` (a cube
    core waiting for the vector cores that produce its tile)."""

    name = "npu.cross_core_wait"
    flag = prop_def(IntegerAttr[I64])
    count = operand_def(IndexType)
    assembly_format = "$flag `,` $count attr-dict"

    def __init__(self, flag: int, count: SSAValue):
        super().__init__(operands=[count], properties={"flag": IntegerAttr(flag, i64)})


def verify_arg_hints(f: Operation) -> None:
    """The `npu.*` hints on a kernel's arguments: `npu.host_transpose` (a unit
    attribute) and `npu.layout` (an NZ weight: whole fractals, read only by the cube's
    copy-in to L1, whose model reads the fractal addresses)."""
    if not isinstance(f, FuncOp) or f.arg_attrs is None:
        return
    for arg, d in zip(f.args, f.arg_attrs.data, strict=True):
        assert isinstance(d, DictionaryAttr)
        attr = d.data.get("npu.layout")
        if attr is None:
            continue
        if not isinstance(attr, LayoutAttr):
            raise VerifyException(f"argument {arg.index}: 'npu.layout' must be a #pto.layout<...>")
        if attr.data != Layout.NZ:
            continue
        t = arg.type
        if not isinstance(t, BufferType) or t.mem != Space.GM:
            raise VerifyException(f"argument {arg.index}: 'npu.layout' belongs on a GM buffer")
        target = target_of(f)
        if (msg := nz_error(t.get_shape(), t.elem, target.cube.fractal, target.block_bytes)) is not None:
            raise VerifyException(f"argument {arg.index}: {msg}")
        uses = list(arg.uses)
        while uses:
            use = uses.pop()
            op = use.operation
            if isinstance(op, ViewOp):  # a window of whole fractals, which the DMAs read in turn
                r = buf(op.result)
                if msg := nz_window_error(op.starts, r.get_shape(), r.elem, target.cube.fractal, target.block_bytes):
                    raise DiagnosticError(op, f"'npu.view' {msg}")
                uses += op.result.uses
                continue
            dst = op.dst.type if isinstance(op, DmaOp) else None
            if use.index != 0 or not isinstance(dst, BufferType) or dst.mem != Space.L1:
                raise DiagnosticError(op, f"'{op.name}' reads the NZ argument #{arg.index}: only a DMA into L1 does")


NPU = Dialect(
    "npu",
    [
        LaunchOp,
        GraphOp,
        TasksOp,
        AllocOp,
        DimOp,
        ReshapeOp,
        ViewOp,
        DmaOp,
        FixpipeOp,
        MmadOp,
        VAddOp,
        VSubOp,
        VMulOp,
        VDivOp,
        VMaxOp,
        VMinOp,
        VSqrtOp,
        VRsqrtOp,
        VAbsOp,
        VExpOp,
        VLnOp,
        VMulsOp,
        VAddsOp,
        VMaxsOp,
        VMinsOp,
        VDupOp,
        VSelOp,
        VReduceOp,
        VCastOp,
        VCopyOp,
        VTransposeOp,
        SetFlagOp,
        WaitFlagOp,
        BarrierOp,
        CrossCoreSetOp,
        CrossCoreWaitOp,
    ],
    [BufferType, PipeAttr],
)
