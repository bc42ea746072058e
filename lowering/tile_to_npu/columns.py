"""Column tiling for `tile-to-npu`: a vector phase whose vector tile is narrower than
its rows (the mhc_pre variant's long reductions, a pinned `(4, 64)` tile on 512-wide
rows) runs each task as loops over column chunks of the tile's width.

The phase's values are *wide* (`[rows, K]`, or a `[K]` vector such as gamma) or
*narrow* (`[rows, 1]`). Loop 1 streams the chunks of the wide inputs that reductions
need (a `reduce`, the sum of squares of an `rms_norm`) and accumulates partial
reductions into narrow accumulators; wide results that need no reduction are stored
chunk by chunk in the same loop. The narrow ops then run once on `[rows, 1]`. Loop 2
streams the chunks again (reloading the inputs rather than keeping whole rows in UB)
to compute the wide values that use a reduction (the normalised rows) and stores them,
folding the reductions of those values for a loop 3, and so on. Which values go in
which loop is the phase plan's (`planning/columns.py`, `schedule`).
"""

from __future__ import annotations

from xdsl.builder import ImplicitBuilder
from xdsl.dialects import arith, scf
from xdsl.dialects.builtin import DYNAMIC_INDEX, IndexType, IntegerType, f16, f32
from xdsl.ir import Block, Operation, Region, SSAValue

from pto.dialects import npu, tile
from pto.dialects.common import ReduceKind, RoundMode, elem_name
from pto.dialects.npu import BufferType, Pipe
from pto.dialects.pto import tensor_type
from pto.lowering.npu_build import divide, index_const, sync, unsupported
from pto.lowering.tile_to_npu import events
from pto.lowering.tile_to_npu.vector_ops import quotient
from pto.planning.columns import REDUCTIONS, Plan, loop_frees, loop_need, schedule
from pto.planning.ub_ops import in_place

F32_MAX = 3.4028234663852886e38
# Identity of each accumulation (the partial reduction of a chunk is combined into it).
_INIT = {
    ReduceKind.SUM: 0.0,
    ReduceKind.MEAN: 0.0,
    ReduceKind.ABSMAX: 0.0,
    ReduceKind.MAX: -F32_MAX,
    ReduceKind.MIN: F32_MAX,
}
_COMBINE = {
    ReduceKind.SUM: npu.VAddOp,
    ReduceKind.MEAN: npu.VAddOp,
    ReduceKind.ABSMAX: npu.VMaxOp,
    ReduceKind.MAX: npu.VMaxOp,
    ReduceKind.MIN: npu.VMinOp,
}


def task(
    lowering, p: Plan, r: int, row: SSAValue, valid: SSAValue, ub, dests, event: int, chunk: SSAValue | None = None
) -> None:
    """One task of the phase (rows [row, row + valid)) as column-chunk loops; with
    `chunk` (an elementwise phase), only that chunk."""
    p.chunk = chunk
    inside = {res for o in p.ops for res in o.results}
    outs: dict[SSAValue, list[SSAValue]] = {
        v: [d for u in p.outer.get(v, []) for d in dests.get(u, [])] for v in inside
    }
    # Narrow inputs (e.g. a per-token scale) are loaded once, before the loops.
    loaded = False
    for o in p.ops:
        for v in o.operands:
            if p.value(v) not in inside and v not in ub.bufs and not p.wide(v):
                t = tensor_type(v)
                if tile.weight_only(v):  # a weight (a [1, N] bias): its own shape, read whole
                    buf = ub.alloc(list(t.get_shape()), t.element_type, o.location)
                    npu.DmaOp(Pipe.MTE2, lowering.gm[v], [0] * t.get_num_dims(), buf, [0] * t.get_num_dims())
                else:
                    buf = ub.alloc([r, *t.get_shape()[1:]], t.element_type, o.location)
                    npu.DmaOp(Pipe.MTE2, lowering.gm[v], [row, 0], buf, [0, 0], rows=valid)
                ub.bufs[v] = buf
                loaded = True
    if loaded:
        sync(Pipe.MTE2, Pipe.VECTOR, event + events.VEC_LOADED)
    # Accumulators of the reductions (an rms_norm accumulates its sum of squares).
    accs: dict[Operation, SSAValue] = {}
    for o in p.ops:
        if isinstance(o, REDUCTIONS):
            accs[o] = ub.alloc([r, 1], f32, o.location)  # (a quant's amax: 0 is its identity, as a sum's)
            npu.VDupOp(_INIT[o.kind.data] if isinstance(o, tile.ReduceOp) else 0.0, accs[o])
    for ps in schedule(p, lambda v: bool(outs.get(v))):
        if ps.targets(p):
            _chunk_loop(lowering, p, r, row, valid, ub, outs, event, ps.targets(p), ps.stores, accs, ps.folds)
        for o in ps.after:  # the narrow work, once per task
            if isinstance(o, tile.ReduceOp):
                if o.kind.data == ReduceKind.MEAN:
                    divide(accs[o], p.k, ub.alloc([r, 1], f32, o.location))
                ub.bufs[o.result] = accs[o]
                _alias(p, ub.bufs, o.result)
            elif isinstance(o, tile.RmsNormOp):
                divide(accs[o], p.k, ub.alloc([r, 1], f32, o.location))
                npu.VAddsOp(accs[o], o.eps.value.data, accs[o])
                npu.VSqrtOp(accs[o], accs[o])
            elif isinstance(o, tile.QuantOp):  # the scale amax / 127; the amax stays for the rows
                tmp = ub.alloc([r, 1], f32, o.location)
                ub.bufs[o.scale] = ub.alloc([r, 1], f32, o.location)
                divide(accs[o], 127, tmp, ub.bufs[o.scale])
                _alias(p, ub.bufs, o.scale)
            else:
                lowering.vector_op(o, r, ub)
                _alias(p, ub.bufs, o.results[0])
    stored = lambda vs: [v for v in vs if outs.get(v)]  # noqa: E731
    narrow_out = [v for v in stored([res for o in p.ops for res in o.results]) if not p.wide(v)]
    if narrow_out:
        sync(Pipe.VECTOR, Pipe.MTE3, event + events.VEC_COMPUTED)
        for v in narrow_out:
            buf = ub.bufs[v]
            for dst in outs[v]:
                rank = len(npu.buf(buf).get_shape())
                npu.DmaOp(Pipe.MTE3, buf, [0] * rank, dst, [row] + [0] * (rank - 1), rows=valid)
    sync(Pipe.MTE3 if narrow_out else Pipe.VECTOR, Pipe.MTE2, event + events.VEC_STORED)


def _alias(p: Plan, bufs: dict[SSAValue, SSAValue], v: SSAValue) -> None:
    """A stage's result is the buffer of the value its stage yields."""
    for u in p.outer.get(v, []):
        bufs[u] = bufs[v]


def _chunk_loop(
    lowering,
    p: Plan,
    r: int,
    row,
    valid,
    ub,
    outs,
    event: int,
    targets: list[SSAValue],
    stores: list[SSAValue],
    accs: dict[Operation, SSAValue],
    folds: list[Operation],
) -> None:
    """`scf.for %c = 0 to K step cw`: compute `targets` chunk by chunk (loading what they
    need), fold the chunks of `folds`' inputs into `accs`, store `stores`."""
    producer: dict[SSAValue, Operation] = {res: o for o in p.ops for res in o.results}
    need = loop_need(p, targets)
    frees = loop_frees(p, need, stores, folds)
    body = Block(arg_types=[IndexType()])
    with ImplicitBuilder(body):
        col = body.args[0]
        chunk: dict[SSAValue, SSAValue] = {}
        for o in p.ops:  # loads first, in program order
            for v in o.operands:
                if p.value(v) in need and p.value(v) not in producer and v not in chunk:
                    chunk[v] = _load(lowering, p, v, r, row, valid, col, o, ub)
        sync(Pipe.MTE2, Pipe.VECTOR, event + events.VEC_LOADED)
        saved = ub.bufs
        ub.bufs = {**saved, **chunk}
        for o in p.ops:
            res = o.results[0]
            if res in need and res in producer:
                if isinstance(o, tile.RmsNormOp):
                    _normalise(o, r, p.cw, ub, accs[o])
                elif isinstance(o, tile.QuantOp):
                    _quantise(o, r, p.cw, ub, accs[o])
                else:
                    dead = in_place(o, [v for v in frees.get(o, []) if ub.bufs.get(v) in ub.sizes])
                    if dead is not None:
                        ub.free_slot(ub.bufs[dead])  # (as planning.ub_ops._chunk_loop)
                    lowering.vector_op(o, r, ub, (p.k, p.cw))
                _alias(p, ub.bufs, res)
            if isinstance(o, REDUCTIONS) and o in folds:
                _accumulate(o, r, ub, accs[o])
            for v in frees.get(o, []):
                if ub.bufs[v] in ub.sizes:
                    ub.free_slot(ub.bufs[v])
        if stores:
            sync(Pipe.VECTOR, Pipe.MTE3, event + events.VEC_COMPUTED)
            for v in stores:
                for dst in outs[v]:
                    npu.DmaOp(Pipe.MTE3, ub.bufs[v], [0, 0], dst, [row, col], rows=valid)
            sync(Pipe.MTE3, Pipe.MTE2, event + events.VEC_STORED)
        else:
            sync(Pipe.VECTOR, Pipe.MTE2, event + events.VEC_STORED)
        ub.bufs = saved
        scf.YieldOp()
    if p.chunk is None:
        scf.ForOp(index_const(0), index_const(p.k), index_const(p.cw), [], Region(body))
        return
    lo = arith.MuliOp(p.chunk, index_const(p.cw)).result
    scf.ForOp(lo, arith.AddiOp(lo, index_const(p.cw)).result, index_const(p.cw), [], Region(body))


def _load(lowering, p: Plan, v: SSAValue, r: int, row, valid, col, user: Operation, ub) -> SSAValue:
    t = tensor_type(v)
    src = lowering.gm[v]
    token = isinstance(src.type, BufferType) and DYNAMIC_INDEX in src.type.get_shape()
    if len(t.get_shape()) == 1:
        buf = ub.alloc([p.cw], t.element_type, user.location)
        npu.DmaOp(Pipe.MTE2, src, [col], buf, [0])
    elif token:
        buf = ub.alloc([r, p.cw], t.element_type, user.location)
        npu.DmaOp(Pipe.MTE2, src, [row, col], buf, [0, 0], rows=valid)
    elif list(t.get_shape())[:-1] == [1]:  # a weight row [1, K] (a reshaped gamma): its chunk
        buf = ub.alloc([1, p.cw], t.element_type, user.location)
        npu.DmaOp(Pipe.MTE2, src, [0, col], buf, [0, 0])
    elif list(t.get_shape()) == [p.k, 1]:  # a dequant's [N, 1] weight scale: its rows, transposed
        buf = ub.alloc([1, p.cw], t.element_type, user.location)
        npu.DmaOp(Pipe.MTE2, src, [col, 0], buf, [0, 0], transpose=True)
    else:
        raise unsupported(user, "column tiles of a tensor without a token axis")
    return buf


def _accumulate(o: Operation, r: int, ub, acc: SSAValue) -> None:
    x = ub.bufs[o.operands[0]]
    part = ub.alloc([r, 1], f32, o.location)
    temps = [part]
    if isinstance(o, tile.QuantOp):  # max |x| of the chunk (max is exact in any order)
        xf = _as_f32(x, r, ub, o, temps)
        npu.VReduceOp(ReduceKind.ABSMAX, xf, part)
        npu.VMaxOp(acc, part, acc)
    elif isinstance(o, tile.RmsNormOp):
        xf = _as_f32(x, r, ub, o, temps)
        sq = ub.alloc(list(npu.buf(xf).get_shape()), f32, o.location)
        temps.append(sq)
        npu.VMulOp(xf, xf, sq)
        npu.VReduceOp(ReduceKind.SUM, sq, part)
        npu.VAddOp(acc, part, acc)
    else:
        assert isinstance(o, tile.ReduceOp)
        kind = o.kind.data
        npu.VReduceOp(ReduceKind.SUM if kind == ReduceKind.MEAN else kind, x, part)
        _COMBINE[kind](acc, part, acc)
    _release(ub, temps)


def _release(ub, temps: list[SSAValue]) -> None:
    """A chunk's temporaries, dead when its op ends: the later ops of the pass and the next
    passes take their slots (planning.ub_ops frees them in this order)."""
    for b in temps:
        ub.free_slot(b)


def _as_f32(x: SSAValue, r: int, ub, o: Operation, temps: list[SSAValue]) -> SSAValue:
    if npu.buf(x).elem == "f32":
        return x
    xf = ub.alloc(list(npu.buf(x).get_shape()), f32, o.location)
    temps.append(xf)
    npu.VCastOp(x, xf, RoundMode.NONE)
    return xf


def _quantise(o: tile.QuantOp, r: int, cw: int, ub, amax: SSAValue) -> None:
    """One chunk of quant: x * 127 / amax (in the kernel's order), then f32 -> i32 (rint)
    -> f16 (round) -> i8 (trunc, saturated unless `wrap`), as the whole row's
    (vector_ops._quant)."""
    temps: list[SSAValue] = []
    xf = _as_f32(ub.bufs[o.input], r, ub, o, temps)
    t = ub.alloc([r, cw], f32, o.location)
    scale = ub.alloc([r, 1], f32, o.location) if o.scale_row else None
    quotient(o, xf, amax, t, scale)
    i32b = ub.alloc([r, cw], IntegerType(32), o.location)
    npu.VCastOp(t, i32b, RoundMode.RINT)
    h = ub.alloc([r, cw], f16, o.location)
    npu.VCastOp(i32b, h, RoundMode.ROUND)
    ub.bufs[o.quantized] = ub.alloc([r, cw], IntegerType(8), o.location)
    npu.VCastOp(h, ub.bufs[o.quantized], RoundMode.TRUNC, sat=o.wrap is None)
    _release(ub, [*temps, t, *([scale] if scale is not None else []), i32b, h])


def _normalise(o: tile.RmsNormOp, r: int, cw: int, ub, scale: SSAValue) -> None:
    """One chunk of rms_norm: x / sqrt(mean(x^2) + eps) [* gamma], in f32 (`scale` holds
    the root)."""
    temps: list[SSAValue] = []
    xf = _as_f32(ub.bufs[o.input], r, ub, o, temps)
    res_f32 = elem_name(tensor_type(o.result).element_type) == "f32"
    y = ub.alloc([r, cw], f32, o.location)
    npu.VDivOp(xf, scale, y)
    if o.gamma is not None:
        npu.VMulOp(y, _as_f32(ub.bufs[o.gamma], r, ub, o, temps), y)
    if res_f32:
        ub.bufs[o.result] = y
    else:
        out = ub.alloc([r, cw], tensor_type(o.result).element_type, o.location)
        npu.VCastOp(y, out, RoundMode.RINT)
        ub.bufs[o.result] = out
        temps.append(y)
    _release(ub, temps)
