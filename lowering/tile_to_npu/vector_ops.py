"""Instruction selection for one tile op of a vector stage: npu vector instructions on
`[r, ...]` UB buffers (r rows of the task's tile)."""

from __future__ import annotations

from collections.abc import Callable

from xdsl.dialects.builtin import IntegerType, TensorType, f16, f32
from xdsl.ir import Attribute, Operation, SSAValue

from pto.dialects import npu, pto, tile
from pto.dialects.common import ReduceKind, RoundMode, elem_name
from pto.dialects.npu import BufferType, Space
from pto.dialects.pto import tensor_type
from pto.lowering.npu_build import divide, unsupported
from pto.lowering.tile_to_npu.ub import UbAllocator
from pto.planning.ub_ops import select_constants

_BINARY = {
    tile.AddOp: npu.VAddOp,
    tile.SubOp: npu.VSubOp,
    tile.MulOp: npu.VMulOp,
    tile.DivOp: npu.VDivOp,
    tile.MaxOp: npu.VMaxOp,
    tile.MinOp: npu.VMinOp,
}
_UNARY = {
    tile.SqrtOp: npu.VSqrtOp,
    tile.RsqrtOp: npu.VRsqrtOp,
    tile.AbsOp: npu.VAbsOp,
    tile.ExpOp: npu.VExpOp,
    tile.LogOp: npu.VLnOp,
}
_SCALAR = {tile.MulsOp: npu.VMulsOp, tile.AddsOp: npu.VAddsOp, tile.MaxsOp: npu.VMaxsOp, tile.MinsOp: npu.VMinsOp}


# Ops whose result may be a rank-3 token tile `[r, A, B]`: the views and the per-row
# transpose of the interleaved RoPE (`[r, D] -> [r, D/2, 2] -> [r, 2, D/2] -> [r, D]`).
# Every other vector op works on rank-2 (or weight-only rank-1) buffers.
_RANK3 = (tile.ReshapeOp, tile.TransposeOp)

Part = Callable[[list[int]], list[int]]
# Ops that take each element on its own: a weight stage's tasks run them on parts of the
# weight as they run them on the whole.
ELEMENTWISE = (*_BINARY, *_UNARY, *_SCALAR, tile.ReciprocalOp, tile.RdivsOp, tile.CastOp)


def check_rank(op: Operation, shape: list[int]) -> None:
    if len(shape) > 3 or len(shape) == 3 and not isinstance(op, _RANK3):
        raise unsupported(op, f"rank-{len(shape)} tiles (rank 3 only as a tile.reshape or tile.transpose result)")


class _Emit:
    """The buffers of one op: its result buffers and temporaries that die with it."""

    def __init__(self, op: Operation, r: int, ub: UbAllocator, chunk: tuple[int, int] | None, part: Part | None):
        self.op, self.r, self.ub, self.chunk, self.part = op, r, ub, chunk, part
        self.tmps: list[SSAValue] = []

    def out(self, v: SSAValue) -> SSAValue:
        t = v.type
        assert isinstance(t, TensorType)
        shape = list(t.get_shape()) if tile.weight_only(v) else [self.r, *t.get_shape()[1:]]
        if self.part is not None:
            shape = self.part(shape)
        if self.chunk is not None and shape[-1] == self.chunk[0]:
            shape[-1] = self.chunk[1]
        check_rank(self.op, shape)
        b = self.ub.alloc(shape, t.element_type, self.op.location)
        self.ub.bufs[v] = b
        return b

    def tmp(self, shape: list[int], elem: Attribute) -> SSAValue:
        self.tmps.append(self.ub.alloc(shape, elem, self.op.location))
        return self.tmps[-1]

    def release(self, buf: SSAValue) -> None:
        """A temporary dead before the op ends: later buffers of the op may take its bytes."""
        self.tmps.remove(buf)
        self.ub.free(buf)


def emit_op(
    op: Operation, r: int, ub: UbAllocator, chunk: tuple[int, int] | None = None, part: Part | None = None
) -> None:
    """Emit one tile op; with `chunk` (K, cw), a value K wide is a chunk cw wide; with
    `part` (a weight stage's task), a weight-only value's shape is its part of the task."""
    e, bufs = _Emit(op, r, ub, chunk, part), ub.bufs
    if isinstance(op, pto.BinaryBase) and type(op) in _BINARY:
        _BINARY[type(op)](bufs[op.lhs], bufs[op.rhs], e.out(op.result))
    elif isinstance(op, pto.UnaryBase) and type(op) in _UNARY:
        _UNARY[type(op)](bufs[op.input], e.out(op.result))
    elif isinstance(op, pto.ScalarBase) and type(op) in _SCALAR:
        _SCALAR[type(op)](bufs[op.input], op.scalar.value.data, e.out(op.result))
    elif isinstance(op, tile.ReciprocalOp | tile.RdivsOp):
        # The hardware divides, c / x, the constant broadcast from one element: the result
        # may take x's buffer (planning.ub_ops.in_place), as no whole-tile vdup writes it first.
        dst = e.out(op.result)
        c = e.tmp([1] * len(npu.buf(dst).get_shape()), tensor_type(op.result).element_type)
        npu.VDupOp(op.scalar.value.data if isinstance(op, tile.RdivsOp) else 1.0, c)
        npu.VDivOp(c, bufs[op.input], dst)
    elif isinstance(op, tile.SelectOp):
        _select(op, e)
    elif isinstance(op, tile.CastOp):
        npu.VCastOp(bufs[op.input], e.out(op.result), op.round.data, op.sat is not None)
    elif isinstance(op, tile.ReduceOp):
        _reduce(op, e)
    elif isinstance(op, tile.RmsNormOp):
        _rms_norm(op, e)
    elif isinstance(op, tile.QuantOp):
        _quant(op, e)
    elif isinstance(op, tile.DequantOp):
        _dequant(op, e)
    elif isinstance(op, tile.SliceOp | tile.ConcatOp):
        _columns(op, e)
    elif isinstance(op, tile.ReshapeOp):
        _reshape(op, e)
    elif isinstance(op, tile.TransposeOp):
        _transpose(op, e)
    elif isinstance(op, tile.LoadOp):
        raise unsupported(op, "loads inside a stage")
    else:
        raise unsupported(op, f"'{op.name}' in a vector stage")
    for b in e.tmps:
        ub.free(b)


def _select(op: tile.SelectOp, e: _Emit) -> None:
    """A compare and a select (`npu.vsel`); an immediate is a one-element vdup of the
    type it is compared or selected as (planning.ub_ops.select_constants)."""
    dst = e.out(op.result)
    items: list[SSAValue] = []
    for x, elem in zip(op.items(), select_constants(op), strict=True):
        if isinstance(x, SSAValue):
            items.append(e.ub.bufs[x])
            continue
        assert elem is not None  # (an immediate's type)
        c = e.tmp([1] * len(npu.buf(dst).get_shape()), elem)
        npu.VDupOp(x, c)
        items.append(c)
    lhs, rhs, on_true, on_false = items
    npu.VSelOp(op.predicate.data, lhs, rhs, on_true, on_false, dst)


def _reshape(op: tile.ReshapeOp, e: _Emit) -> None:
    """A UB buffer seen with another shape: a weight-only value's (its static shape), or
    a token tile's `[r, ...]` (the rows stay; each row's columns are one contiguous run,
    so splitting or merging them moves nothing). Neither name is freed before the task
    copy ends: one would free the bytes the other still reads."""
    if e.chunk is not None:  # columns.plan does not column-tile reshapes; a guard
        raise unsupported(op, "'tile.reshape' in a column-tiled vector phase")
    src = e.ub.bufs[op.input]
    t = tensor_type(op.result)
    shape = list(t.get_shape()) if tile.weight_only(op.result) else [e.r, *t.get_shape()[1:]]
    check_rank(op, shape)
    e.ub.sizes.pop(src, None)
    e.ub.bufs[op.result] = npu.ReshapeOp(src, BufferType(shape, t.element_type, Space.UB)).result


def _transpose(op: tile.TransposeOp, e: _Emit) -> None:
    """Each row's `[A, B]` columns as `[B, A]`: one `npu.vtranspose` into a new buffer
    (data moves, on the vector pipe)."""
    if e.chunk is not None:  # columns.plan does not column-tile transposes; a guard
        raise unsupported(op, "'tile.transpose' in a column-tiled vector phase")
    npu.VTransposeOp(e.ub.bufs[op.input], e.out(op.result))


def _reduce(op: tile.ReduceOp, e: _Emit) -> None:
    src = e.ub.bufs[op.input]
    dst = e.out(op.result)
    kind = op.kind.data
    npu.VReduceOp(ReduceKind.SUM if kind == ReduceKind.MEAN else kind, src, dst)
    if kind == ReduceKind.MEAN:
        divide(dst, tensor_type(op.input).get_shape()[-1], e.tmp(list(npu.buf(dst).get_shape()), f32))


def _as_f32(x: SSAValue, v: SSAValue, e: _Emit) -> SSAValue:
    if elem_name(tensor_type(v).element_type) == "f32":
        return x
    xf = e.tmp(list(npu.buf(x).get_shape()), f32)
    npu.VCastOp(x, xf, RoundMode.NONE)
    return xf


def _rms_norm(op: tile.RmsNormOp, e: _Emit) -> None:
    r, cols = e.r, tensor_type(op.input).get_shape()[-1]
    xf = _as_f32(e.ub.bufs[op.input], op.input, e)
    sq, s = e.tmp([r, cols], f32), e.tmp([r, 1], f32)
    npu.VMulOp(xf, xf, sq)
    npu.VReduceOp(ReduceKind.SUM, sq, s)
    divide(s, cols, e.tmp([r, 1], f32))
    e.release(sq)  # the normalised rows take its place: two wide f32 tiles live, not three
    npu.VAddsOp(s, op.eps.value.data, s)
    npu.VSqrtOp(s, s)
    res_f32 = elem_name(tensor_type(op.result).element_type) == "f32"
    y = e.out(op.result) if res_f32 else e.tmp([r, cols], f32)
    npu.VDivOp(xf, s, y)
    if op.gamma is not None:
        npu.VMulOp(y, _as_f32(e.ub.bufs[op.gamma], op.gamma, e), y)
    if not res_f32:
        npu.VCastOp(y, e.out(op.result), RoundMode.RINT)


def quotient(op: tile.QuantOp, x: SSAValue, amax: SSAValue, t: SSAValue, scale: SSAValue | None) -> None:
    """t = x * 127 / amax in the order the kernel wrote it (SK03.md's golden's by default;
    `scale` a [r, 1] buffer for 127 / amax or 1 / amax first): each f32 step rounds."""
    order = op.order_name
    if op.scale_row:
        assert scale is not None
        npu.VDupOp(127.0 if order == "scale_first" else 1.0, scale)
        npu.VDivOp(scale, amax, scale)
        if order == "reciprocal_scale_first":
            npu.VMulsOp(scale, 127.0, scale)
        npu.VMulOp(x, scale, t)
        if order == "reciprocal_first":
            npu.VMulsOp(t, 127.0, t)
    elif order == "divide_first":
        npu.VDivOp(x, amax, t)
        npu.VMulsOp(t, 127.0, t)
    else:
        npu.VMulsOp(x, 127.0, t)
        npu.VDivOp(t, amax, t)


def _quant(op: tile.QuantOp, e: _Emit) -> None:
    r, cols = e.r, tensor_type(op.input).get_shape()[-1]
    x = e.ub.bufs[op.input]
    if elem_name(tensor_type(op.input).element_type) != "f32":  # a bf16/f16 input: widened (exact)
        wide = e.tmp([r, cols], f32)
        npu.VCastOp(x, wide, RoundMode.NONE)
        x = wide
    amax = e.tmp([r, 1], f32)
    npu.VReduceOp(ReduceKind.ABSMAX, x, amax)
    divide(amax, 127, e.tmp([r, 1], f32), e.out(op.scale))
    t = e.tmp([r, cols], f32)
    quotient(op, x, amax, t, e.tmp([r, 1], f32) if op.scale_row else None)
    # The hardware's chain: f32 -> i32 (rint) -> f16 (round) -> i8 (trunc, saturated unless `wrap`).
    # Each step's source dies as the next is made: two wide buffers live, not four.
    i32b = e.tmp([r, cols], IntegerType(32))
    npu.VCastOp(t, i32b, RoundMode.RINT)
    e.release(t)
    h = e.tmp([r, cols], f16)
    npu.VCastOp(i32b, h, RoundMode.ROUND)
    e.release(i32b)
    npu.VCastOp(h, e.out(op.quantized), RoundMode.TRUNC, sat=op.wrap is None)


def _dequant(op: tile.DequantOp, e: _Emit) -> None:
    bufs = e.ub.bufs
    y = e.out(op.result)
    if elem_name(tensor_type(op.input).element_type) == "i32":
        npu.VCastOp(bufs[op.input], y, RoundMode.RINT)
    else:
        npu.VMulsOp(bufs[op.input], 1.0, y)
    scales = [op.act_scale] if op.w_scale is None else [op.act_scale, op.w_scale]
    if op.scales_product is not None and op.w_scale is not None:  # act * w as [r, N] (0 + w is exact)
        both = e.tmp(list(npu.buf(y).get_shape()), f32)
        npu.VDupOp(0.0, both)
        npu.VAddOp(both, bufs[op.w_scale], both)
        npu.VMulOp(both, bufs[op.act_scale], both)
        npu.VMulOp(y, both, y)
        return
    for s in reversed(scales) if op.w_scale_first else scales:  # in the op's order: the products round
        npu.VMulOp(y, bufs[s], y)


def _columns(op: tile.SliceOp | tile.ConcatOp, e: _Emit) -> None:
    """A column slice is one vcopy into a new `[r, W]` buffer; a concatenation one vcopy
    per input into a new `[r, sum of widths]` buffer."""
    if e.chunk is not None:  # columns.plan does not column-tile these; a guard
        raise unsupported(op, f"'{op.name}' in a column-tiled vector phase")
    bufs = e.ub.bufs
    if isinstance(op, tile.SliceOp):
        npu.VCopyOp(bufs[op.input], op.start, e.out(op.result), 0, op.width)
        return
    dst, col = e.out(op.result), 0
    for v in op.inputs:
        w = tensor_type(v).get_shape()[-1]
        npu.VCopyOp(bufs[v], 0, dst, col, w)
        col += w
