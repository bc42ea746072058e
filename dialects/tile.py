"""The `tile` dialect: the V/C-staged level, what a PyPTO expert writes by hand.

A kernel is a `func.func` whose inputs are followed by its outputs (destination style:
`tile.store` writes token tiles into them; the function returns nothing). Its body is
one `tile.token_loop` per unroll factor (the remainder cascade), each over the dynamic
token axis with a static tile height. Inside a loop body the work is grouped, in flow
order, into `tile.vec_stage` and `tile.cube_stage` regions, each with its semantic label
and tile shapes; `tile.load` brings a token tile (with its valid rows for a tail) or a
whole weight (with its cache policy) into the loop, `tile.store` assembles the result.
Compute ops mirror `pto`'s on static tile shapes.

Weight-only work that the matmul reads (W8A16's int8 weight cast to f16) is a *weight
stage*: a `tile.vec_stage` in the function's block, before the loops, over whole loads
of weights; it runs once per launch and the loops `tile.load` its result as a weight.

What this level checks: the skeleton rules. One loop level (token loops never nest, and
every stage but a weight stage lives in one); exactly one cube stage per loop body,
holding exactly one matmul; compute ops only inside stages; cube tile axes with
0 < L0 <= L1, L1 % L0 == 0 and K/N tiles aligned to the target's block; vector tile
ranks that match the data.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import ClassVar

from xdsl.dialects import func
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    DenseArrayBase,
    DictionaryAttr,
    IndexType,
    IntAttr,
    IntegerAttr,
    IntegerType,
    StringAttr,
    TensorType,
    UnitAttr,
    i64,
)
from xdsl.ir import Attribute, BlockArgument, Dialect, Operation, Region, SSAValue
from xdsl.irdl import (
    AttrSizedOperandSegments,
    IRDLOperation,
    ParametrizedAttribute,
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
    var_result_def,
)
from xdsl.parser import AttrParser, Parser, UnresolvedOperand
from xdsl.printer import Printer
from xdsl.traits import IsTerminator, NoTerminator
from xdsl.utils.exceptions import VerifyException

from pto.diagnostics import DiagnosticError
from pto.dialects import pto
from pto.dialects.common import (
    ELEM_BYTES,
    I64_MAX,
    CachePolicy,
    CachePolicyAttr,
    CubeTileAttr,
    Layout,
    LayoutAttr,
    dims_str,
    elem_name,
    nz_error,
    nz_window_error,
    parse_i64,
    parse_types_tail,
    print_types_tail,
)
from pto.targets import target_of


def _enclosing(op: Operation, kind: type[Operation]) -> Operation | None:
    cur = op.parent_op()
    while cur is not None and not isinstance(cur, kind):
        cur = cur.parent_op()
    return cur


def weight_only(v: SSAValue, memo: dict[SSAValue, bool] | None = None) -> bool:
    """Whether `v` is the same for every token tile: a whole (row-less) load, or what
    ops and stages compute from such values only (a gamma's cast, a bias reshaped).
    Weight-only work keeps its static shape where token tiles have rows. A caller that
    asks of many values of unchanging IR passes a `memo` (a per-head chain of a few
    hundred ops is otherwise walked again from every op of it)."""
    if memo is not None and v in memo:
        return memo[v]
    if isinstance(v, BlockArgument):  # a kernel argument read whole; not the loop's row
        res = isinstance(v.type, TensorType) and DYNAMIC_INDEX not in v.type.get_shape()
    elif isinstance(owner := v.owner, LoadOp):
        res = owner.row is None
    elif isinstance(owner, StageBase):
        y = owner.body.block.last_op
        res = y is not None and weight_only(y.operands[owner.results.index(v)], memo)
    else:
        assert isinstance(owner, Operation)
        res = all(weight_only(o, memo) for o in owner.operands)
    if memo is not None:
        memo[v] = res
    return res


# --------------------------------------------------------------------------- loops


@irdl_op_definition
class TokenLoopOp(IRDLOperation):
    """`tile.token_loop %i = %lb to %ub step S { ... }`: one token tile of S rows per
    iteration, `%i` the first row. `%ub` may be dynamic (the token count, or where the
    next factor of the cascade starts). A tile may be partial only when the loop says
    so with `tail` (the last iteration covers `ub - i < S` rows; loads and stores then
    carry the valid row count)."""

    name = "tile.token_loop"

    lower = operand_def(IndexType)
    upper = operand_def(IndexType)
    step = prop_def(IntegerAttr[IndexType])
    tail = opt_prop_def(UnitAttr)
    body = region_def("single_block")
    traits = traits_def(NoTerminator())

    def __init__(self, lower: SSAValue, upper: SSAValue, step: int, body: Region, tail: bool = False):
        props: dict[str, Attribute] = {"step": IntegerAttr(step, IndexType())}
        if tail:
            props["tail"] = UnitAttr()
        super().__init__(operands=[lower, upper], properties=props, regions=[body])

    @property
    def rows(self) -> int:
        return self.step.value.data

    @property
    def index(self) -> BlockArgument:
        return self.body.block.args[0]

    @classmethod
    def parse(cls, parser: Parser) -> TokenLoopOp:
        iv = parser.parse_argument(expect_type=False)
        parser.parse_punctuation("=")
        lb = parser.parse_operand(IndexType())
        parser.parse_keyword("to")
        ub = parser.parse_operand(IndexType())
        parser.parse_keyword("step")
        at = parser.pos
        step = parser.parse_integer(allow_negative=False, allow_boolean=False)
        if step > I64_MAX:
            parser.raise_error(f"integer {step} does not fit in i64", at, parser.pos)
        tail = parser.parse_optional_keyword("tail") is not None
        attrs = parser.parse_optional_attr_dict_with_keyword()
        body = parser.parse_region((iv.resolve(IndexType()),))
        op = cls(lb, ub, step, body, tail)
        if attrs is not None:
            op.attributes.update(attrs.data)
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_block_argument(self.index, print_type=False)
        printer.print_string(" = ")
        printer.print_operand(self.lower)
        printer.print_string(" to ")
        printer.print_operand(self.upper)
        printer.print_string(f" step {self.rows}" + (" tail" if self.tail else ""))
        printer.print_op_attributes(self.attributes, print_keyword=True)
        printer.print_string(" ")
        printer.print_region(self.body, print_entry_block_args=False)

    def verify_(self) -> None:
        if self.rows <= 0:
            raise VerifyException("'tile.token_loop' step must be positive")
        block = self.body.block
        if len(block.args) != 1 or not isinstance(block.args[0].type, IndexType):
            raise VerifyException("'tile.token_loop' body takes exactly one index argument")
        if _enclosing(self, TokenLoopOp) is not None:
            raise VerifyException("SK-03 has a single token loop: 'tile.token_loop' cannot nest")
        cubes = [op for op in block.ops if isinstance(op, CubeStageOp)]
        if len(cubes) != 1:
            raise VerifyException(f"an SK-03 loop body holds exactly one cube stage, found {len(cubes)}")
        for op in block.ops:
            if isinstance(op, pto.ShapedOp):
                raise DiagnosticError(op, f"'{op.name}' must be inside a tile.vec_stage or tile.cube_stage")


# -------------------------------------------------------------------------- stages


def is_weight_stage(op: Operation) -> bool:
    """A `tile.vec_stage` in the function's block (not in a loop) whose results are all
    weight-only: work done once per launch that a loop loads as a weight."""
    return (
        isinstance(op, VecStageOp)
        and isinstance(op.parent_op(), func.FuncOp)
        and bool(op.results)
        and all(weight_only(r) for r in op.results)
    )


class StageBase(IRDLOperation):
    label = prop_def(StringAttr)
    outs = var_result_def(TensorType)
    body = region_def("single_block")

    @staticmethod
    def _parse_body(parser: Parser) -> tuple[list[Attribute], DictionaryAttr | None, Region]:
        types: list[Attribute] = []
        if parser.parse_optional_punctuation("->"):
            types = parser.parse_comma_separated_list(parser.Delimiter.PAREN, parser.parse_type)
        attrs = parser.parse_optional_attr_dict_with_keyword()
        body = parser.parse_region()
        return types, attrs, body

    def _print_body(self, printer: Printer) -> None:
        if self.outs:
            printer.print_string(" -> (")
            printer.print_list(self.outs, lambda r: printer.print_attribute(r.type))
            printer.print_string(")")
        printer.print_op_attributes(self.attributes, print_keyword=True)
        printer.print_string(" ")
        printer.print_region(self.body)

    def verify_stage(self) -> None:
        loop = _enclosing(self, TokenLoopOp)
        if loop is None and not is_weight_stage(self):
            raise VerifyException(
                f"'{self.name}' must be inside a tile.token_loop "
                "(outside, only a tile.vec_stage of weight-only work: a weight stage)"
            )
        if _enclosing(self, StageBase) is not None:
            raise VerifyException(f"'{self.name}' cannot nest inside another stage")
        term = self.body.block.last_op
        if not isinstance(term, YieldOp):
            raise VerifyException(f"'{self.name}' body must end with tile.yield")
        got = [v.type for v in term.values]
        want = [r.type for r in self.outs]
        if got != want:
            raise VerifyException(
                f"'{self.name}' yields ({', '.join(map(str, got))}) but its results are ({', '.join(map(str, want))})"
            )
        if not self.label.data:
            raise VerifyException(f"'{self.name}' needs a non-empty semantic label")


@irdl_attr_definition
class PhaseAttr(ParametrizedAttribute):
    """`#tile.phase<rows = 8, copies = 2>` or `#tile.phase<rows = 4, copies = 1, chunk = 512
    of 4096>`: the plan of a vector phase (the vector stages one group of tasks runs),
    on the phase's first stage: the rows of a task's tile, the tiles one task merges
    (each in its own UB copy), and, for a phase cut into column chunks, the chunk width
    of the rows' width. tile-assign-shapes decides it (or keeps a pinned one);
    tile-to-npu emits it."""

    name = "tile.phase"

    rows: IntAttr
    copies: IntAttr
    chunk: IntAttr  # 0: whole rows
    width: IntAttr  # the row width the chunks cut (0: whole rows)

    def __init__(self, rows: int, copies: int, chunk: int | None = None, width: int | None = None):
        super().__init__(IntAttr(rows), IntAttr(copies), IntAttr(chunk or 0), IntAttr(width or 0))

    @property
    def columns(self) -> tuple[int, int] | None:
        """(row width, chunk width) of a column-tiled phase."""
        return (self.width.data, self.chunk.data) if self.chunk.data else None

    @staticmethod
    def check(rows: int, copies: int, chunk: int, width: int) -> str | None:
        if rows < 1 or copies < 1:
            return "phase rows and copies must be at least 1"
        if chunk < 0 or width < 0 or (chunk == 0) != (width == 0):
            return f"phase chunk {chunk} of {width}: both positive, or neither given (whole rows)"
        if chunk and (chunk >= width or width % chunk):
            return f"phase chunk {chunk} must divide the row width {width} (and be narrower)"
        return None

    def verify(self) -> None:
        if (msg := self.check(self.rows.data, self.copies.data, self.chunk.data, self.width.data)) is not None:
            raise VerifyException(msg)

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        start = parser.pos
        vals = []
        parser.parse_punctuation("<")
        for i, key in enumerate(("rows", "copies")):
            if i:
                parser.parse_punctuation(",")
            parser.parse_keyword(key)
            parser.parse_punctuation("=")
            vals.append(parse_i64(parser))
        chunk = width = 0
        if parser.parse_optional_punctuation(","):
            parser.parse_keyword("chunk")
            parser.parse_punctuation("=")
            chunk = parse_i64(parser)
            parser.parse_keyword("of")
            width = parse_i64(parser)
        parser.parse_punctuation(">")
        if (msg := cls.check(vals[0], vals[1], chunk, width)) is not None:
            parser.raise_error(msg, start, parser.pos)
        return (IntAttr(vals[0]), IntAttr(vals[1]), IntAttr(chunk), IntAttr(width))

    def print_parameters(self, printer: Printer) -> None:
        cols = f", chunk = {self.chunk.data} of {self.width.data}" if self.chunk.data else ""
        printer.print_string(f"<rows = {self.rows.data}, copies = {self.copies.data}{cols}>")


@irdl_op_definition
class VecStageOp(StageBase):
    """`%r = tile.vec_stage "q-rmsnorm" tile [4, 1024] nbuffer 2 -> (types) { ... }`:
    vector work of one token tile. `tile` is the vector tile shape (rank = the data's
    rank), `nbuffer` how many UB copies of each tile rotate (2 = ping-pong). Both are
    optional until tile-shape assignment."""

    name = "tile.vec_stage"

    vec_tile = opt_prop_def(DenseArrayBase)
    nbuffer = opt_prop_def(IntegerAttr[IntegerType])
    phase = opt_prop_def(PhaseAttr)

    def __init__(
        self,
        label: str,
        body: Region,
        result_types: Sequence[Attribute],
        vec_tile: Sequence[int] | None = None,
        nbuffer: int | None = None,
        phase: PhaseAttr | None = None,
    ):
        props: dict[str, Attribute] = {"label": StringAttr(label)}
        if vec_tile is not None:
            props["vec_tile"] = DenseArrayBase.from_list(i64, vec_tile)
        if nbuffer is not None:
            props["nbuffer"] = IntegerAttr(nbuffer, i64)
        if phase is not None:
            props["phase"] = phase
        super().__init__(properties=props, regions=[body], result_types=[result_types])

    @classmethod
    def parse(cls, parser: Parser) -> VecStageOp:
        label = parser.parse_str_literal()
        tile = None
        nbuf = None
        if parser.parse_optional_keyword("tile"):
            tile = parser.parse_comma_separated_list(parser.Delimiter.SQUARE, lambda: parse_i64(parser))
        if parser.parse_optional_keyword("nbuffer"):
            nbuf = parse_i64(parser)
        phase = PhaseAttr.new(PhaseAttr.parse_parameters(parser)) if parser.parse_optional_keyword("phase") else None
        types, attrs, body = StageBase._parse_body(parser)
        op = cls(label, body, types, tile, nbuf, phase)
        if attrs is not None:
            op.attributes.update(attrs.data)
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_string_literal(self.label.data)
        if self.vec_tile is not None:
            printer.print_string(f" tile [{', '.join(map(str, self.vec_tile.get_values()))}]")
        if self.nbuffer is not None:
            printer.print_string(f" nbuffer {self.nbuffer.value.data}")
        if self.phase is not None:
            printer.print_string(" phase ")
            self.phase.print_parameters(printer)
        self._print_body(printer)

    def verify_(self) -> None:
        self.verify_stage()
        if self.nbuffer is not None and self.nbuffer.value.data < 1:
            raise VerifyException("'tile.vec_stage' nbuffer must be at least 1")
        if is_weight_stage(self):
            self.verify_weight_stage()
        if self.phase is not None:
            self.verify_phase(self.phase)
        for op in self.body.block.ops:
            if isinstance(op, MatmulOp):
                raise VerifyException("'tile.matmul' belongs in a tile.cube_stage, not a vector stage")
        if self.vec_tile is None:
            return
        shape = self.vec_tile.get_values()
        if not shape or min(shape) < 1:
            raise VerifyException("'tile.vec_stage' tile sizes must be positive")
        memo: dict[SSAValue, bool] = {}
        for op in self.body.block.ops:
            if (
                isinstance(op, pto.ShapedOp)
                and not isinstance(op, ReshapeOp | ViewOp)  # views move no data
                and not isinstance(op, TransposeOp)  # it permutes whole rows: only the tile's rows apply
                and not all(weight_only(r, memo) for r in op.results)  # nor is it tiled by token rows
            ):
                # (the widest operand's rank: a broadcast operand may come first, `b - x`)
                rank = max(o.type.get_num_dims() for o in op.operands if isinstance(o.type, TensorType))
                if rank != len(shape):
                    raise VerifyException(
                        f"vector tile [{', '.join(map(str, shape))}] has rank {len(shape)} "
                        f"but '{op.name}' works on rank-{rank} data"
                    )

    def verify_weight_stage(self) -> None:
        """Its tasks write each result to a GM workspace: the loops read it as a weight."""
        if self.phase is not None:
            raise VerifyException("a weight stage (a tile.vec_stage outside the loops) has no phase: it reads no rows")
        for r in self.results:
            for use in r.uses:
                if not (isinstance(use.operation, LoadOp) and use.operation.row is None):
                    raise VerifyException(
                        f"a weight stage's result is read by a whole tile.load (it lives in GM), "
                        f"not by '{use.operation.name}'"
                    )

    def verify_phase(self, ph: PhaseAttr) -> None:
        nbuf = self.nbuffer.value.data if self.nbuffer is not None else 1
        if ph.copies.data > nbuf:
            raise VerifyException(f"'tile.vec_stage' phase copies {ph.copies.data} exceed nbuffer {nbuf}")
        loop = self.parent_op()
        if isinstance(loop, TokenLoopOp) and ph.rows.data > loop.rows:
            raise VerifyException(f"'tile.vec_stage' phase rows {ph.rows.data} exceed the body's {loop.rows} rows")
        widths = {
            t.get_shape()[-1]
            for o in self.body.block.ops
            for v in (*o.operands, *o.results)
            if isinstance(t := v.type, TensorType) and t.get_shape()
        }
        if ph.columns is not None and ph.width.data not in widths:
            raise VerifyException(
                f"'tile.vec_stage' phase chunks rows {ph.width.data} wide, but no value of the stage is that wide"
            )


@irdl_op_definition
class CubeStageOp(StageBase):
    """`%r = tile.cube_stage "linear" tiles <m = [128, 128], k = [256, 1024], n = [256, 256],
    split_k> l1_reuse 2 nbuffer 1 -> (types) { ... }`: the one matmul of a token tile with its
    per-axis [L0, L1] cube tiles (optional until tile-shape assignment), whether K is
    split across cores (partial sums accumulated in GM), and PyPTO's merge counts:
    `l1_reuse N` (`cube_l1_reuse_setting`) merges up to N cube tasks that load the same
    weight tile (row tiles of one column of the output) into one task, which loads that
    tile once for all of them; `nbuffer N` (`cube_nbuffer_setting`) merges N cube tasks
    of a body into one."""

    name = "tile.cube_stage"

    tiles = opt_prop_def(CubeTileAttr)
    l1_reuse = opt_prop_def(IntegerAttr[IntegerType])
    nbuffer = opt_prop_def(IntegerAttr[IntegerType])

    def __init__(
        self,
        label: str,
        body: Region,
        result_types: Sequence[Attribute],
        tiles: CubeTileAttr | None = None,
        l1_reuse: int | None = None,
        nbuffer: int | None = None,
    ):
        props: dict[str, Attribute] = {"label": StringAttr(label)}
        if tiles is not None:
            props["tiles"] = tiles
        if l1_reuse is not None:
            props["l1_reuse"] = IntegerAttr(l1_reuse, i64)
        if nbuffer is not None:
            props["nbuffer"] = IntegerAttr(nbuffer, i64)
        super().__init__(properties=props, regions=[body], result_types=[result_types])

    @classmethod
    def parse(cls, parser: Parser) -> CubeStageOp:
        label = parser.parse_str_literal()
        tiles = None
        if parser.parse_optional_keyword("tiles"):  # the attribute's own syntax, without its name
            tiles = CubeTileAttr.new(CubeTileAttr.parse_parameters(parser))
        reuse = parse_i64(parser) if parser.parse_optional_keyword("l1_reuse") else None
        nbuf = parse_i64(parser) if parser.parse_optional_keyword("nbuffer") else None
        types, attrs, body = StageBase._parse_body(parser)
        op = cls(label, body, types, tiles, reuse, nbuf)
        if attrs is not None:
            op.attributes.update(attrs.data)
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_string_literal(self.label.data)
        if self.tiles is not None:
            printer.print_string(" tiles ")
            self.tiles.print_parameters(printer)
        if self.l1_reuse is not None:
            printer.print_string(f" l1_reuse {self.l1_reuse.value.data}")
        if self.nbuffer is not None:
            printer.print_string(f" nbuffer {self.nbuffer.value.data}")
        self._print_body(printer)

    @property
    def matmul(self) -> MatmulOp:
        return next(op for op in self.body.block.ops if isinstance(op, MatmulOp))

    def verify_(self) -> None:
        self.verify_stage()
        if self.nbuffer is not None and self.nbuffer.value.data < 1:
            raise VerifyException("'tile.cube_stage' nbuffer must be at least 1")
        if self.l1_reuse is not None and self.l1_reuse.value.data < 1:
            raise VerifyException("'tile.cube_stage' l1_reuse must be at least 1")
        mms = [op for op in self.body.block.ops if isinstance(op, MatmulOp)]
        if len(mms) != 1:
            raise VerifyException(f"a cube stage holds exactly one tile.matmul, found {len(mms)}")
        if self.tiles is None:
            return
        if (msg := CubeTileAttr.check(self.tiles.axes)) is not None:
            raise VerifyException(msg)
        mm = mms[0]
        lhs, rhs = mm.lhs.type, mm.rhs.type
        assert isinstance(lhs, TensorType) and isinstance(rhs, TensorType)
        block = target_of(self).block_bytes
        _, k, _, n = mm.mkn()
        for ax, t, whole in (("k", lhs, k), ("n", rhs, n)):
            nbytes = ELEM_BYTES.get(elem_name(t.element_type), 1)
            for size in self.tiles.axes[ax]:
                # (a tile of the whole axis ends where its rows do: a ragged N of one tile)
                if size * nbytes % block and size != whole:
                    raise VerifyException(
                        f"cube tile axis '{ax}' size {size} is {size * nbytes} bytes of "
                        f"{elem_name(t.element_type)}, not a multiple of the {block}-byte block"
                    )


@irdl_op_definition
class YieldOp(IRDLOperation):
    """Terminates a stage, yielding its results."""

    name = "tile.yield"
    values = var_operand_def()
    traits = traits_def(IsTerminator())
    assembly_format = "($values^ `:` type($values))? attr-dict"

    def __init__(self, *values: SSAValue):
        super().__init__(operands=[values])

    def verify_(self) -> None:
        parent = self.parent_op()
        if not isinstance(parent, StageBase):
            where = f"a {parent.name}" if parent is not None else "no op"
            hint = " (a kernel ends with func.return)" if parent is not None and parent.name == "func.func" else ""
            raise VerifyException(f"'tile.yield' terminates a tile.vec_stage or tile.cube_stage, not {where}{hint}")


# --------------------------------------------------------------------- data movement


def _row_suffix(parser: Parser) -> tuple[UnresolvedOperand | None, UnresolvedOperand | None]:
    row = None
    if parser.parse_optional_punctuation("["):
        row = parser.parse_unresolved_operand()
        parser.parse_punctuation("]")
    valid = parser.parse_unresolved_operand() if parser.parse_optional_keyword("valid") else None
    return row, valid


def _print_row_suffix(printer: Printer, row: SSAValue | None, valid: SSAValue | None) -> None:
    """`[%i] valid %n`, each part when present (`_row_suffix` parses it)."""
    if row is not None:
        printer.print_string("[")
        printer.print_operand(row)
        printer.print_string("]")
    if valid is not None:
        printer.print_string(" valid ")
        printer.print_operand(valid)


def _check_rows(
    op: Operation,
    glob: TensorType[Attribute],
    tile: TensorType[Attribute],
    row: SSAValue | None,
    valid: SSAValue | None,
    verb: str,
) -> None:
    if not tile.has_static_shape():
        raise VerifyException(f"'{op.name}' tile type must be static, got {tile}")
    if glob.element_type != tile.element_type:
        raise VerifyException(f"'{op.name}' cannot change the element type")
    if row is None:
        if glob != tile:
            raise VerifyException(f"'{op.name}' without a row offset {verb} the whole tensor: types must match")
        if valid is not None:
            raise VerifyException(f"'{op.name}' 'valid' needs a row offset")
        return
    if glob.get_num_dims() != tile.get_num_dims() or glob.get_shape()[1:] != tile.get_shape()[1:]:
        raise VerifyException(
            f"'{op.name}' a token tile keeps every dim but the first: "
            f"{dims_str(glob.get_shape())} vs {dims_str(tile.get_shape())}"
        )
    g0 = glob.get_shape()[0]
    if g0 != DYNAMIC_INDEX and tile.get_shape()[0] > g0:
        raise VerifyException(f"'{op.name}' tile of {tile.get_shape()[0]} rows exceeds the {g0} rows of the tensor")


@irdl_op_definition
class LoadOp(IRDLOperation):
    """`%t = tile.load %x[%i] valid %n cache none_cacheable : tensor<?x4096xbf16> ->
    tensor<128x4096xbf16>`: rows [%i, %i + 128) of a global tensor (a token tile; only
    `valid` of them exist in a tail, the rest read as zero), or without `[%i]` the whole
    tensor (a weight). `cache` is the L2 policy of the read. `host_transpose` (whole
    rank-2 tensors only): the result is the tensor transposed, a layout change the host
    makes once before the kernel runs (the mhc_pre variant's pre-transposed weight).
    `layout nz` (whole rank-2 weights the matmul reads as its weight operand): the
    tensor is stored in fractals (PyPTO's TILEOP_NZ); the result is the same matrix."""

    name = "tile.load"

    source = operand_def(TensorType)
    row = opt_operand_def(IndexType)
    valid = opt_operand_def(IndexType)
    cache = opt_prop_def(CachePolicyAttr)
    host_transpose = opt_prop_def(UnitAttr)
    layout = opt_prop_def(LayoutAttr)
    result = result_def(TensorType)
    irdl_options = (AttrSizedOperandSegments(as_property=True),)

    def __init__(
        self,
        source: SSAValue,
        result_type: Attribute,
        row: SSAValue | None = None,
        valid: SSAValue | None = None,
        cache: CachePolicy | None = None,
        host_transpose: bool = False,
        layout: Layout | None = None,
    ):
        props: dict[str, Attribute] = {}
        if cache is not None:
            props["cache"] = CachePolicyAttr(cache)
        if host_transpose:
            props["host_transpose"] = UnitAttr()
        if layout is not None:
            props["layout"] = LayoutAttr(layout)
        super().__init__(operands=[source, row, valid], properties=props, result_types=[result_type])

    @classmethod
    def parse(cls, parser: Parser) -> LoadOp:
        src = parser.parse_unresolved_operand()
        row, valid = _row_suffix(parser)
        cache = None
        if parser.parse_optional_keyword("cache"):
            cache = parser.parse_str_enum(CachePolicy)
        host_t = parser.parse_optional_keyword("host_transpose") is not None
        layout = parser.parse_str_enum(Layout) if parser.parse_optional_keyword("layout") else None
        attrs, st, rt = parse_types_tail(parser)
        idx = IndexType()
        op = cls(
            parser.resolve_operand(src, st),
            rt,
            None if row is None else parser.resolve_operand(row, idx),
            None if valid is None else parser.resolve_operand(valid, idx),
            cache,
            host_t,
            layout,
        )
        op.attributes.update(attrs)
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_operand(self.source)
        _print_row_suffix(printer, self.row, self.valid)
        if self.cache is not None:
            printer.print_string(" cache " + self.cache.data.value)
        if self.host_transpose is not None:
            printer.print_string(" host_transpose")
        if self.layout is not None:
            printer.print_string(" layout " + self.layout.data.value)
        print_types_tail(printer, self.attributes, self.source.type, self.result.type)

    def verify_(self) -> None:
        src, res = self.source.type, self.result.type
        assert isinstance(src, TensorType) and isinstance(res, TensorType)
        if self.host_transpose is not None:
            if self.row is not None or src.get_num_dims() != 2:
                raise VerifyException("'tile.load' host_transpose applies to a whole rank-2 tensor")
            src = TensorType(src.element_type, list(reversed(src.get_shape())))
        _check_rows(self, src, res, self.row, self.valid, "loads")
        if self.layout is not None and self.layout.data == Layout.NZ:
            self.verify_nz(src)

    def verify_nz(self, src: TensorType) -> None:
        """An NZ weight: whole fractals, loaded whole, read only as a matmul's weight."""
        if self.row is not None or self.host_transpose is not None:
            raise VerifyException("'tile.load' layout nz is a whole weight's, not a token tile's or host_transpose's")
        target = target_of(self)
        if msg := nz_error(src.get_shape(), elem_name(src.element_type), target.cube.fractal, target.block_bytes):
            raise VerifyException(f"'tile.load' {msg}")
        elem = elem_name(src.element_type)
        uses = list(self.result.uses)
        while uses:
            use = uses.pop()
            op = use.operation
            if isinstance(op, ViewOp):  # a window of whole fractals, read by the matmul in turn
                t = op.result.type
                assert isinstance(t, TensorType)
                msg = nz_window_error(op.starts, t.get_shape(), elem, target.cube.fractal, target.block_bytes)
                if msg is not None:
                    raise VerifyException(f"'tile.load' layout nz: {msg}")
                uses += op.result.uses
            elif not (isinstance(op, MatmulOp) and use.index == 1):
                raise VerifyException(
                    f"'tile.load' layout nz is read only as a tile.matmul's weight operand, not by '{op.name}'"
                )


@irdl_op_definition
class StoreOp(IRDLOperation):
    """`tile.store %t, %out[%i] valid %n : tensor<128x1024xbf16> -> tensor<?x1024xbf16>`:
    write the first `valid` rows (all rows without it) of a tile into rows [%i, ..) of
    an output argument (PyPTO's `assemble`). `%out[%i, 448]` writes a narrower tile into
    the output's columns [448, 448 + its width) only (a rank-2 output assembled in
    column windows, each a store of its own: `assemble(t, [row, 448], out)`); of a
    rank-3 output `[T, H, D]`, the column counts through each token's H * D."""

    name = "tile.store"

    value = operand_def(TensorType)
    dest = operand_def(TensorType)
    row = opt_operand_def(IndexType)
    valid = opt_operand_def(IndexType)
    column = opt_prop_def(IntegerAttr)
    irdl_options = (AttrSizedOperandSegments(as_property=True),)

    def __init__(
        self,
        value: SSAValue,
        dest: SSAValue,
        row: SSAValue | None = None,
        valid: SSAValue | None = None,
        column: int | None = None,
    ):
        props = {} if column is None else {"column": IntegerAttr(column, i64)}
        super().__init__(operands=[value, dest, row, valid], properties=props)

    @property
    def col(self) -> int:
        """The first column written (0 for whole rows)."""
        return 0 if self.column is None else self.column.value.data

    @classmethod
    def parse(cls, parser: Parser) -> StoreOp:
        val = parser.parse_unresolved_operand()
        parser.parse_punctuation(",")
        dst = parser.parse_unresolved_operand()
        row, column = None, None
        if parser.parse_optional_punctuation("["):
            row = parser.parse_unresolved_operand()
            if parser.parse_optional_punctuation(","):
                column = parser.parse_integer(allow_negative=False)
            parser.parse_punctuation("]")
        valid = parser.parse_unresolved_operand() if parser.parse_optional_keyword("valid") else None
        attrs, vt, dt = parse_types_tail(parser)
        idx = IndexType()
        op = cls(
            parser.resolve_operand(val, vt),
            parser.resolve_operand(dst, dt),
            None if row is None else parser.resolve_operand(row, idx),
            None if valid is None else parser.resolve_operand(valid, idx),
            column,
        )
        op.attributes.update(attrs)
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_operand(self.value)
        printer.print_string(", ")
        printer.print_operand(self.dest)
        if self.row is not None:
            printer.print_string("[")
            printer.print_operand(self.row)
            printer.print_string("]" if self.column is None else f", {self.col}]")
        if self.valid is not None:
            printer.print_string(" valid ")
            printer.print_operand(self.valid)
        print_types_tail(printer, self.attributes, self.value.type, self.dest.type)

    def verify_(self) -> None:
        dest, value = self.dest.type, self.value.type
        assert isinstance(dest, TensorType) and isinstance(value, TensorType)
        if self.column is None:
            _check_rows(self, dest, value, self.row, self.valid, "stores")
            return
        # A column window: checked as a store into the window's [?, w] columns, those of
        # each token's row (all its dims after the first, flattened).
        d, v, c = dest.get_shape(), value.get_shape(), self.col
        if self.row is None or len(d) < 2 or len(v) != 2 or DYNAMIC_INDEX in (*d[1:], v[1]):
            raise VerifyException(
                f"'{self.name}' a column offset takes a rank-2 token tile of an output with static dims after "
                f"the first, got {dims_str(v)} into {dims_str(d)}"
            )
        width = math.prod(d[1:])
        if c < 0 or c + v[1] > width:
            raise VerifyException(f"'{self.name}' columns [{c}, {c + v[1]}) exceed the output's {width} columns")
        window = TensorType(dest.element_type, [d[0], v[1]])
        _check_rows(self, window, value, self.row, self.valid, "stores")


# --------------------------------------------------------------- compute (static tiles)


@irdl_op_definition
class RmsNormOp(pto.RmsNormBase):
    """RMSNorm over the last axis (see RmsNormBase). On one static token tile."""

    name = "tile.rms_norm"
    STATIC_SHAPES: ClassVar[bool] = True


@irdl_op_definition
class MatmulOp(pto.MatmulBase):
    """The one cube matmul of an SK-03 kernel (see MatmulBase). On one static token tile."""

    name = "tile.matmul"
    STATIC_SHAPES: ClassVar[bool] = True


@irdl_op_definition
class CastOp(pto.CastBase):
    """Element-type conversion (see CastBase). On one static token tile."""

    name = "tile.cast"
    STATIC_SHAPES: ClassVar[bool] = True


@irdl_op_definition
class AddOp(pto.BinaryBase):
    """Elementwise `lhs + rhs` with broadcasting. On one static token tile."""

    name = "tile.add"
    STATIC_SHAPES: ClassVar[bool] = True


@irdl_op_definition
class SubOp(pto.BinaryBase):
    """Elementwise `lhs - rhs` with broadcasting. On one static token tile."""

    name = "tile.sub"
    STATIC_SHAPES: ClassVar[bool] = True


@irdl_op_definition
class MulOp(pto.BinaryBase):
    """Elementwise `lhs * rhs` with broadcasting (e.g. the RMSNorm gamma). On one static token tile."""

    name = "tile.mul"
    STATIC_SHAPES: ClassVar[bool] = True


@irdl_op_definition
class DivOp(pto.BinaryBase):
    """Elementwise `lhs / rhs` with broadcasting (e.g. a per-row norm). On one static token tile."""

    name = "tile.div"
    STATIC_SHAPES: ClassVar[bool] = True


@irdl_op_definition
class MaxOp(pto.BinaryBase):
    """Elementwise `max(lhs, rhs)` with broadcasting. On one static token tile."""

    name = "tile.max"
    STATIC_SHAPES: ClassVar[bool] = True


@irdl_op_definition
class MinOp(pto.BinaryBase):
    """Elementwise `min(lhs, rhs)` with broadcasting. On one static token tile."""

    name = "tile.min"
    STATIC_SHAPES: ClassVar[bool] = True


@irdl_op_definition
class SqrtOp(pto.UnaryBase):
    """Elementwise square root. On one static token tile."""

    name = "tile.sqrt"
    STATIC_SHAPES: ClassVar[bool] = True


@irdl_op_definition
class RsqrtOp(pto.UnaryBase):
    """Elementwise `1 / sqrt(x)`. On one static token tile."""

    name = "tile.rsqrt"
    STATIC_SHAPES: ClassVar[bool] = True


@irdl_op_definition
class AbsOp(pto.UnaryBase):
    """Elementwise absolute value. On one static token tile."""

    name = "tile.abs"
    STATIC_SHAPES: ClassVar[bool] = True


@irdl_op_definition
class ExpOp(pto.UnaryBase):
    """Elementwise `e ** x`. On one static token tile."""

    name = "tile.exp"
    STATIC_SHAPES: ClassVar[bool] = True


@irdl_op_definition
class LogOp(pto.UnaryBase):
    """Elementwise natural logarithm. On one static token tile."""

    name = "tile.log"
    STATIC_SHAPES: ClassVar[bool] = True


@irdl_op_definition
class ReciprocalOp(pto.UnaryBase):
    """Elementwise `1 / x`. On one static token tile."""

    name = "tile.reciprocal"
    STATIC_SHAPES: ClassVar[bool] = True


@irdl_op_definition
class MulsOp(pto.ScalarBase):
    """Multiply by an f32 immediate. On one static token tile."""

    name = "tile.muls"
    STATIC_SHAPES: ClassVar[bool] = True


@irdl_op_definition
class AddsOp(pto.ScalarBase):
    """Add an f32 immediate. On one static token tile."""

    name = "tile.adds"
    STATIC_SHAPES: ClassVar[bool] = True


@irdl_op_definition
class MaxsOp(pto.ScalarBase):
    """The larger of each element and an f32 immediate. On one static token tile."""

    name = "tile.maxs"
    STATIC_SHAPES: ClassVar[bool] = True


@irdl_op_definition
class MinsOp(pto.ScalarBase):
    """The smaller of each element and an f32 immediate. On one static token tile."""

    name = "tile.mins"
    STATIC_SHAPES: ClassVar[bool] = True


@irdl_op_definition
class RdivsOp(pto.ScalarBase):
    """An f32 immediate divided by each element. On one static token tile."""

    name = "tile.rdivs"
    STATIC_SHAPES: ClassVar[bool] = True


@irdl_op_definition
class SelectOp(pto.SelectBase):
    """One of two values by a comparison, elementwise. On one static token tile."""

    name = "tile.select"
    STATIC_SHAPES: ClassVar[bool] = True


@irdl_op_definition
class ReduceOp(pto.ReduceBase):
    """Row reduction over the last axis (see ReduceBase). On one static token tile."""

    name = "tile.reduce"
    STATIC_SHAPES: ClassVar[bool] = True


@irdl_op_definition
class QuantOp(pto.QuantBase):
    """Symmetric per-token INT8 quantisation (see QuantBase). On one static token tile."""

    name = "tile.quant"
    STATIC_SHAPES: ClassVar[bool] = True


@irdl_op_definition
class DequantOp(pto.DequantBase):
    """Undo activation and weight scales after an int8 matmul (see DequantBase). On one static token tile."""

    name = "tile.dequant"
    STATIC_SHAPES: ClassVar[bool] = True


@irdl_op_definition
class ReshapeOp(pto.ReshapeBase):
    """Reshape, optionally in place (see ReshapeBase). On one static token tile."""

    name = "tile.reshape"
    STATIC_SHAPES: ClassVar[bool] = True


@irdl_op_definition
class TransposeOp(pto.TransposeBase):
    """The last two dims swapped (see TransposeBase). On one static token tile: each
    row's columns permuted (`tile-to-npu`: `npu.vtranspose`)."""

    name = "tile.transpose"
    STATIC_SHAPES: ClassVar[bool] = True


@irdl_op_definition
class SliceOp(pto.SliceBase):
    """Columns of the last axis (see SliceBase). On one static token tile."""

    name = "tile.slice"
    STATIC_SHAPES: ClassVar[bool] = True


@irdl_op_definition
class ConcatOp(pto.ConcatBase):
    """Concatenation along the last axis (see ConcatBase). On one static token tile."""

    name = "tile.concat"
    STATIC_SHAPES: ClassVar[bool] = True


@irdl_op_definition
class ViewOp(pto.ViewBase):
    """A window of a weight, read in place (see ViewBase): of a whole `tile.load` that
    is not host-transposed (its indices are then those of the tensor in global memory)."""

    name = "tile.view"
    STATIC_SHAPES: ClassVar[bool] = True

    def verify_shapes(self) -> None:
        super().verify_shapes()
        src = self.input.owner
        if not isinstance(src, LoadOp) or src.row is not None or src.host_transpose is not None:
            raise VerifyException(
                f"'{self.name}' views a weight: its input must be a whole tile.load (no token row, not host_transpose)"
            )


# The tile op each pto compute op becomes in pto-to-tile: the same op on one static tile.
TWIN: dict[type[Operation], type[Operation]] = {
    pto.RmsNormOp: RmsNormOp,
    pto.MatmulOp: MatmulOp,
    pto.CastOp: CastOp,
    pto.AddOp: AddOp,
    pto.SubOp: SubOp,
    pto.MulOp: MulOp,
    pto.DivOp: DivOp,
    pto.MaxOp: MaxOp,
    pto.MinOp: MinOp,
    pto.SqrtOp: SqrtOp,
    pto.RsqrtOp: RsqrtOp,
    pto.AbsOp: AbsOp,
    pto.ExpOp: ExpOp,
    pto.LogOp: LogOp,
    pto.ReciprocalOp: ReciprocalOp,
    pto.MulsOp: MulsOp,
    pto.AddsOp: AddsOp,
    pto.MaxsOp: MaxsOp,
    pto.MinsOp: MinsOp,
    pto.RdivsOp: RdivsOp,
    pto.SelectOp: SelectOp,
    pto.ReduceOp: ReduceOp,
    pto.QuantOp: QuantOp,
    pto.DequantOp: DequantOp,
    pto.ReshapeOp: ReshapeOp,
    pto.TransposeOp: TransposeOp,
    pto.SliceOp: SliceOp,
    pto.ConcatOp: ConcatOp,
    pto.ViewOp: ViewOp,
}

TILE = Dialect("tile", [TokenLoopOp, VecStageOp, CubeStageOp, YieldOp, LoadOp, StoreOp, *TWIN.values()], [PhaseAttr])
