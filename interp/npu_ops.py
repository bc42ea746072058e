"""What each `npu` op does to the machine: its numerics on whole tiles (numpy) and the
accounting of the model (buffers, L2, pipe timing), in one place for both engines. The
xDSL interpreter (`pto.interp.npu`) and the compiled engine (`pto.interp.compiled`)
decode an op's static part once (`CopySpec`, `AllocSpec`, `vector_kernel`) and call
these functions with its run-time values, so their outputs and figures cannot drift.

A copy with a GM end is two steps, `dma`/`fixpipe` (the numerics and the write counts)
and `gm_copy` (L2 and timing): between them the engine lets cores that are behind in
model time run, so that L2 sees the GM accesses of all cores in model-time order.
With `Machine.numerics` off, no tile is computed or copied; bounds, L2 and timing are
unchanged.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial

import numpy as np
from xdsl.dialects.builtin import DYNAMIC_INDEX
from xdsl.ir import Operation

from pto.dialects import npu
from pto.dialects.common import CachePolicy, RoundMode
from pto.dialects.npu import DYN, BufferType, Pipe, Space
from pto.interp import numerics as nx
from pto.interp.machine import Core, GmTensor, Machine, MachineError, dependence_key

# Ops charged `latency.issue` of SCALAR each (index arithmetic, loop control).
SCALAR_OPS = ("arith.", "scf.")


@dataclass(eq=False)
class Buf:
    """An on-chip buffer of one core."""

    array: np.ndarray
    space: Space
    offset: int
    key: str = field(init=False)  # what the pipe timing's data dependences track

    def __post_init__(self) -> None:
        self.key = dependence_key(self.space, self.offset)


def space(v: Buf | GmTensor) -> Space:
    return v.space if isinstance(v, Buf) else Space.GM


def tile(op: Operation, v: Buf | GmTensor, offs: tuple[int, ...], ext: tuple[int, ...], what: str) -> np.ndarray:
    check(op, v, offs, ext, what)
    return v.array[tuple(slice(o, o + e) for o, e in zip(offs, ext, strict=True))]


def check(op: Operation, v: Buf | GmTensor, offs: tuple[int, ...], ext: tuple[int, ...], what: str) -> None:
    """A tile `[offs, +ext)` lies inside `v`: else a MachineError naming both."""
    for o, e, d in zip(offs, ext, v.array.shape, strict=True):
        if e and (o < 0 or o + e > d):  # moving nothing (a tail's missing tile) is no access
            raise _outside(op, v, offs, ext, what)


def _outside(op: Operation, v: Buf | GmTensor, offs: tuple[int, ...], ext: tuple[int, ...], what: str):
    a = v.array
    ax, o, e = next(
        (ax, o, e) for ax, (o, e, d) in enumerate(zip(offs, ext, a.shape, strict=True)) if e and (o < 0 or o + e > d)
    )
    name = v.name if isinstance(v, GmTensor) else f"{space(v).value} buffer at offset {v.offset}"
    return MachineError(
        op,
        f"'{op.name}' {what} [{o}, +{e}) of axis {ax} is outside {name} "
        f"({'x'.join(map(str, a.shape))}, {a.nbytes} bytes)",
    )


def tile_bytes(op: Operation, v: Buf | GmTensor, offs: tuple[int, ...], ext: tuple[int, ...], what: str) -> int:
    """`tile(...).nbytes` without making the view (a timing-only run moves no data)."""
    check(op, v, offs, ext, what)
    a = v.array
    if len(ext) != a.ndim:
        return tile(op, v, offs, ext, what).nbytes
    return math.prod(ext) * a.itemsize


# Unsigned integers of each element size: a copy between equal dtypes moves raw bits.
_RAW: dict[int, np.dtype] = {
    1: np.dtype(np.uint8),
    2: np.dtype(np.uint16),
    4: np.dtype(np.uint32),
    8: np.dtype(np.uint64),
}


def move(out: np.ndarray, data: np.ndarray) -> None:
    """`out[...] = data`; between equal dtypes as raw bits, the same bytes at up to twice
    the speed (a bf16 copy goes through ml_dtypes' element loop otherwise)."""
    raw = _RAW.get(out.itemsize) if out.dtype == data.dtype else None
    if raw is None:
        out[...] = data
        return
    src = data.view(raw)
    if src.ndim == 2 and src.strides[0] < src.strides[1]:
        # A transposed tile of a wider buffer: reading its columns strides by the whole
        # buffer width and thrashes the CPU cache; copying the rows out first, then
        # transposing the compact copy, is up to twice as fast.
        src = np.ascontiguousarray(src.T).T
    out.view(raw)[...] = src


def merge(static: tuple[int, ...], dyn) -> tuple[int, ...]:
    it = iter(dyn)
    return tuple(int(next(it)) if s == DYN else s for s in static)


# -- allocation --------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)  # one per op: hashed by identity, a key of `Core.bufs`
class AllocSpec:
    """An on-chip `npu.alloc`, decoded once."""

    type: BufferType
    space: Space
    offset: int
    need: int  # its end in the space
    dtype: np.dtype
    shape: tuple[int, ...]
    nbytes: int

    @staticmethod
    def of(op: npu.AllocOp) -> AllocSpec:
        t = op.result.type
        assert isinstance(t, BufferType)
        off = op.offset.value.data if op.offset is not None else 0
        return AllocSpec(t, t.mem, off, off + t.nbytes(), nx.DTYPES[t.elem], t.get_shape(), t.nbytes())


def check_capacity(m: Machine, core: Core, op: Operation, s: AllocSpec) -> None:
    cap = m.target.capacity(s.space.value)
    if s.need > cap:
        raise MachineError(
            op,
            f"{core.name}: buffer {s.type} at offset {s.offset} needs {s.need} bytes of "
            f"{s.space.value}, which has {cap}",
        )


def alloc(core: Core, s: AllocSpec) -> Buf:
    core.peak[s.space] = max(core.peak.get(s.space, 0), s.need)
    m = core.machine
    if m.numerics:
        return _buffer(core, s)
    # A timing-only run's cores share one blank memory (`Machine.blank`): one buffer per
    # op serves them all (nothing of a Buf is a core's own; 3% of such a run was views).
    buf = m.blank_bufs.get(s)
    if buf is None:
        buf = m.blank_bufs[s] = _buffer(core, s)
    return buf


def _buffer(core: Core, s: AllocSpec) -> Buf:
    view = core.space(s.space)[s.offset : s.offset + s.nbytes].view(s.dtype).reshape(s.shape)
    return Buf(view, s.space, s.offset)


def alloc_once(m: Machine, core: Core, op: Operation, s: AllocSpec) -> Buf:
    """`check_capacity` and `alloc` the first time the op runs on the core, its buffer
    after: the same view of the same bytes, and the peak is already counted."""
    buf = core.bufs.get(s)
    if buf is None:
        if s not in m.fitting:
            check_capacity(m, core, op, s)
            m.fitting.add(s)
        buf = core.bufs[s] = alloc(core, s)
    return buf


def gm_alloc(m: Machine, op: npu.AllocOp, args) -> GmTensor:
    t = op.result.type
    assert isinstance(t, BufferType)
    it = iter(args)
    shape = tuple(int(next(it)) if d == DYNAMIC_INDEX else d for d in t.get_shape())
    name = op.result.name_hint or f"ws{len(m.l2.names)}"
    dtype = nx.DTYPES[t.elem]
    # A timing-only run writes no data: one poison element seen at every index, not a
    # workspace's worth of memory filled (at 100k tokens, hundreds of MB).
    value = nx.poison(shape, dtype) if m.numerics else np.broadcast_to(nx.poison((), dtype), shape)
    return m.gm(fresh(m, name), value)


def fresh(m: Machine, name: str) -> str:
    names, n, base = m.l2.stats, 1, name
    while name in names:
        name = f"{base}_{n}"
        n += 1
    return name


def dim(op: npu.DimOp, src: Buf | GmTensor) -> int:
    return src.array.shape[op.dim.value.data]


def reshape(op: npu.ReshapeOp, src: Buf | GmTensor) -> Buf | GmTensor:
    t = op.result.type
    assert isinstance(t, BufferType)
    shape = tuple(-1 if d == DYNAMIC_INDEX else d for d in t.get_shape())
    if isinstance(src, Buf):  # the same UB bytes, seen with another shape
        return Buf(src.array.reshape(shape), src.space, src.offset)
    return src.reshaped(shape)


def view(op: npu.ViewOp, src: GmTensor) -> GmTensor:
    shape = [n if n != DYNAMIC_INDEX else d for n, d in zip(op.result.type.get_shape(), src.array.shape, strict=True)]
    return src.window(op.starts, shape)


# -- data movement -------------------------------------------------------------------------


@dataclass(frozen=True)
class CopySpec:
    """The static part of an `npu.dma` or `npu.fixpipe`, decoded once."""

    src_static: tuple[int, ...]
    n_src: int
    dst_static: tuple[int, ...]
    n_dst: int
    has_rows: bool
    ext: tuple[int, ...]
    has_cols: bool = False
    # A DMA's attributes, read once (an xDSL attribute read costs a DMA's own bookkeeping)
    pipe: Pipe = Pipe.FIXPIPE
    transpose: bool = False
    cacheable: bool = True

    @staticmethod
    def of(op: npu.DmaOp | npu.FixpipeOp) -> CopySpec:
        ends = (
            op.static_src.get_values(),
            len(op.src_offsets),
            op.static_dst.get_values(),
            len(op.dst_offsets),
            op.rows is not None,
            op.extent(),
            op.cols is not None,
        )
        if not isinstance(op, npu.DmaOp):
            return CopySpec(*ends)
        cacheable = op.cache is None or op.cache.data != CachePolicy.NONE_CACHEABLE
        return CopySpec(*ends, op.pipe.data, op.transpose is not None, cacheable)

    def split(self, args) -> tuple:
        """(src, dst, src offsets, dst offsets, rows, cols) from the op's operand values."""
        ns, nd = self.n_src, self.n_dst
        so = merge(self.src_static, args[2 : 2 + ns])
        do = merge(self.dst_static, args[2 + ns : 2 + ns + nd])
        rest = iter(args[2 + ns + nd :])
        rows = int(next(rest)) if self.has_rows else None
        cols = int(next(rest)) if self.has_cols else None
        return args[0], args[1], so, do, rows, cols


def valid_extent(ext: tuple[int, ...], rows: int | None, cols: int | None) -> tuple[int, ...]:
    """The part of a tile of `ext` a copy with `rows` and `cols` moves."""
    if rows is not None:
        ext = (max(0, min(rows, ext[0])), *ext[1:])
    if cols is not None:
        ext = (*ext[:-1], max(0, min(cols, ext[-1])))
    return ext


@dataclass
class GmCopy:
    """A copy with a GM end whose numerics are done and whose timing is not."""

    op: Operation
    pipe: Pipe
    gm: GmTensor
    offs: tuple[int, ...]
    ext: tuple[int, ...]
    write: bool
    cacheable: bool
    adjust: Callable[[float], float] | None
    reads: tuple
    writes: tuple
    nbytes: int
    drain: tuple | None = None  # a fixpipe's (rows, n, L0C element bytes)
    rows_unit: int = 1  # a copy into L1: charged for its rows rounded up to this many


def dma(m: Machine, core: Core, op: npu.DmaOp, s: CopySpec, src, dst, so, do, rows, cols=None) -> GmCopy | None:
    """The numerics of a DMA; an on-chip one is booked here, a GM one is returned."""
    transpose = s.transpose
    ext = s.ext
    vext = valid_extent(ext, rows, cols)
    sext = tuple(reversed(vext)) if transpose else vext
    if m.numerics:
        data = tile(op, src, so, sext, "source")
        move(tile(op, dst, do, vext, "destination"), data.T if transpose else data)
        nbytes = data.nbytes
    else:
        nbytes = tile_bytes(op, src, so, sext, "source")
        check(op, dst, do, vext, "destination")
    if vext != ext and isinstance(dst, Buf):  # a load's rows and columns past the valid ones
        zeros = tile(op, dst, do, ext, "destination")
        if m.numerics:
            zeros[vext[0] :] = 0
            zeros[..., vext[-1] :] = 0
    gm = src if isinstance(src, GmTensor) else dst if isinstance(dst, GmTensor) else None
    if gm is None:
        onchip_copy_time(core, op, s.pipe, src, dst, nbytes, transpose)
        return None
    adjust = m.cost.transposed if transpose else None
    reads, writes = (src.key,), (dst.key,)
    offs, gext = (so, sext) if gm is src else (do, vext)
    if gm is dst:
        m.count_writes(gm, do, vext)
    unit = m.cost.l1_rows_unit if gm is src and dst.space is Space.L1 else 1
    return GmCopy(op, s.pipe, gm, offs, gext, gm is dst, s.cacheable, adjust, reads, writes, nbytes, None, unit)


# The timing of each op, for both engines: the compiled engine writes these functions
# out into its programs (`pto.interp.inline`), with what it knows of their arguments
# when compiling folded in, so they keep to the Python it can specialise (`Core.begin`).


def onchip_copy_time(core: Core, op: Operation, pipe: Pipe, src: Buf, dst: Buf, nbytes: int, transpose: bool) -> None:
    """A DMA between on-chip buffers: its bytes at the path's rate."""
    cycles = nbytes / core.machine.cost.path_rate(src.space, dst.space)
    if transpose:
        cycles = core.machine.cost.transposed(cycles)
    core.run(op, pipe, cycles, 0.0, (src.key,), (dst.key,), nbytes)


def gm_copy(m: Machine, core: Core, c: GmCopy) -> None:
    """Charge a copy with a GM end: L2 sees its lines now, and the shared HBM is booked
    from when the copy really starts (after its pipe, flag and data waits)."""
    hits, misses, evicted = m.gm_access(c.gm, c.offs, c.ext, c.write, c.cacheable)
    core.hbm_lines += evicted if c.write and c.cacheable else misses + evicted  # (as `gm_transfer` books)
    t = core.begin(c.pipe, c.reads, c.writes)
    if c.pipe is not Pipe.FIXPIPE:  # a DMA (known when the compiled engine writes this out: no branch)
        fixed = m.cost.dma_fixed(c.write)
        cycles = m.cost.gm_transfer(t + fixed, hits, misses, c.write, c.cacheable, m.hbm_time, evicted)
        if c.adjust is not None:
            cycles = c.adjust(cycles)
        # (a copy into L1 charged for whole `rows_unit` rows; an expression, not a branch: the
        # unit is the target's, read when the compiled engine's program runs)
        rows = c.ext[0]
        cycles = cycles * (-(-rows // c.rows_unit) * c.rows_unit / rows if c.rows_unit > 1 and rows else 1)
        total = fixed + cycles
    else:
        total = m.cost.fixpipe_copy(t, c.drain, c.adjust, hits, misses, evicted, m.hbm_time)
    core.commit(c.op, c.pipe, t, total, m.cost.gm_latency(misses), c.reads, c.writes, c.nbytes)


def mmad_time(core: Core, op: Operation, a: Buf, b: Buf, c: Buf, rows: int | None, accumulate: bool) -> None:
    """An mmad priced by its padded MACs; an accumulating one reads its accumulator too
    (its wait on the accumulator's writer is the write's own)."""
    cost = core.machine.cost
    (mm, k), n = a.array.shape, b.array.shape[1]
    cycles, macs = cost.mmad_priced(mm, k, n, nx.NAMES[a.array.dtype], rows, accumulate)
    core.macs += macs
    done = core.run(op, Pipe.CUBE, cycles, 0.0, (a.key, b.key), (c.key,), 0)
    if accumulate and done > core.read[c.key]:
        core.read[c.key] = done


def vector_time(core: Core, op: Operation, name: str, srcs: tuple[Buf, ...], dst: Buf, nbytes: int) -> None:
    """A vector op priced by its largest operand's bytes (`CostModel.vector`)."""
    cycles = core.machine.cost.vector(name, nbytes)
    core.run(op, Pipe.VECTOR, cycles, 0.0, tuple(b.key for b in srcs), (dst.key,), nbytes)


def cross_set(m: Machine, core: Core, flag: int) -> None:
    """A cross-core set: the flag is set when every pipe of the core is done."""
    m.cross.setdefault(flag, []).append(core.end())


def fixpipe(m: Machine, core: Core, op: npu.FixpipeOp, s: CopySpec, src, dst, so, do, rows, cols=None) -> GmCopy | None:
    """The numerics of a fixpipe; one to L1 is booked here, one to GM is returned."""
    vext = valid_extent(s.ext, rows, cols)
    valid = vext[0]
    acc = tile(op, src, so, vext, "source")
    out = tile(op, dst, do, vext, "destination")
    if m.numerics:
        fixpipe_value(op, acc, out)
    reads, writes = (src.key,), (dst.key,)
    drain = (valid, math.prod(vext[1:]), acc.itemsize)
    if isinstance(dst, GmTensor):
        atomic = op.atomic_add is not None
        if not atomic:  # atomic adds accumulate: not counted as writes
            m.count_writes(dst, do, vext)
        adjust = m.cost.atomic_add if atomic else None
        return GmCopy(op, Pipe.FIXPIPE, dst, do, vext, True, True, adjust, reads, writes, out.nbytes, drain)
    cycles = m.cost.fixpipe_onchip(out.nbytes, space(dst).value, *drain)
    core.run(op, Pipe.FIXPIPE, cycles, reads=reads, writes=writes, nbytes=out.nbytes)
    return None


def fixpipe_value(op: npu.FixpipeOp, acc: np.ndarray, out: np.ndarray) -> None:
    if op.atomic_add is None:
        out[...] = fixpipe_converted(op, acc, out.dtype)
        return
    val, s_el = _dequantised(op, acc)
    d_el, mode = nx.NAMES[out.dtype], _fixpipe_round(op)
    if d_el == s_el == "i32":  # an integer add: exact (and wraps)
        out[...] = out + val
    elif d_el != "f32":
        out[...] = nx.cast(nx.f32(out) + nx.f32(val), "f32", d_el, mode)
    else:
        out[...] = out + nx.f32(val)


def fixpipe_converted(op: npu.FixpipeOp, acc: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """What a fixpipe without an atomic add writes for `acc` into a `dtype` destination:
    `acc` itself, not a copy, when it neither dequantises nor converts (the stacked
    pass stores it from there: the int8 example's 16 MB of int32 a run)."""
    val, s_el = _dequantised(op, acc)
    d_el = nx.NAMES[np.dtype(dtype)]
    return val if s_el == d_el else nx.cast(val, s_el, d_el, _fixpipe_round(op))


def _dequantised(op: npu.FixpipeOp, acc: np.ndarray) -> tuple[np.ndarray, str]:
    if op.deq is not None:
        return nx.f32(acc) * np.float32(op.deq.value.data), "f32"
    return acc, nx.NAMES[acc.dtype]


def _fixpipe_round(op: npu.FixpipeOp) -> RoundMode:
    return op.round.data if op.round is not None else RoundMode.RINT


# -- cube ----------------------------------------------------------------------------------


def mmad(m: Machine, core: Core, op: npu.MmadOp, a: Buf, b: Buf, c: Buf, rows: int | None, accumulate: bool) -> None:
    if m.numerics:
        mmad_value(a.array, b.array, c.array, accumulate)
    mmad_time(core, op, a, b, c, rows, accumulate)


def mmad_value(a: np.ndarray, b: np.ndarray, c: np.ndarray, accumulate: bool) -> None:
    prod = nx.matmul(a, b)
    if accumulate:
        # (an int32 sum wraps mod 2^32 as the accumulator does; a float one is `c + prod`)
        np.add(c, prod, out=c)
    else:
        c[...] = prod


# -- vector --------------------------------------------------------------------------------

# compute(dst array, *source arrays) -> the value stored into dst
Compute = Callable[..., object]


def vector(m: Machine, core: Core, op: Operation, name: str, compute: Compute, srcs: tuple[Buf, ...], dst: Buf) -> None:
    """A vector op over whole buffers: `name` prices it (`CostModel.vector`)."""
    if m.numerics:
        dst.array[...] = compute(dst.array, *(b.array for b in srcs))
    vector_time(core, op, name, srcs, dst, max(b.array.nbytes for b in (*srcs, dst)))


def vcopy(m: Machine, core: Core, op: npu.VCopyOp, src: Buf, dst: Buf) -> None:
    sc, dc, w = op.src_col.value.data, op.dst_col.value.data, op.width.value.data
    part = src.array[..., sc : sc + w]
    if m.numerics:
        dst.array[..., dc : dc + w] = part
    vector_time(core, op, "vcopy", (src,), dst, part.nbytes)


def _calc(a: np.ndarray) -> np.ndarray:
    return a.astype(np.int64) if a.dtype.kind == "i" else nx.f32(a)


def _binary(fn, dst, lhs, rhs):
    return fn(_calc(lhs), _calc(rhs)).astype(dst.dtype, copy=False)


def _unary(name, dst, src):
    return nx.unary(name, src).astype(dst.dtype, copy=False)


def _scalar(fn, s, dst, src):
    return fn(nx.f32(src), s).astype(dst.dtype, copy=False)


def _dup(s, dst):
    return s


def _select(predicate, dst, lhs, rhs, on_true, on_false):
    return nx.select(predicate, lhs, rhs, on_true, on_false).astype(dst.dtype, copy=False)


def _reduce(kind, dst, src):
    return nx.reduce(src, kind).astype(dst.dtype, copy=False)


def _cast(mode, sat, dst, src):
    return nx.cast(src, nx.NAMES[src.dtype], nx.NAMES[dst.dtype], mode, sat)


_BINARY = {
    npu.VAddOp: np.add,
    npu.VSubOp: np.subtract,
    npu.VMulOp: np.multiply,
    npu.VDivOp: np.divide,
    npu.VMaxOp: np.maximum,
    npu.VMinOp: np.minimum,
}
_UNARY = {npu.VSqrtOp: "sqrt", npu.VRsqrtOp: "rsqrt", npu.VAbsOp: "abs", npu.VExpOp: "exp", npu.VLnOp: "log"}
_SCALAR = {npu.VMulsOp: np.multiply, npu.VAddsOp: np.add, npu.VMaxsOp: np.maximum, npu.VMinsOp: np.minimum}
VECTOR_OPS: tuple[type[Operation], ...] = (
    *_BINARY,
    *_UNARY,
    *_SCALAR,
    npu.VDupOp,
    npu.VSelOp,
    npu.VReduceOp,
    npu.VCastOp,
    npu.VTransposeOp,
)


# Kernels whose result's bits do not depend on their operands' memory layout: elementwise
# IEEE operations numpy rounds correctly on any path (a contiguous operand takes numpy's
# SIMD loops, a strided one its scalar loops) and casts. Left out: max and min (a signed
# zero's pick) and exp and log (SIMD approximations), and reductions (their summation
# order follows the layout). The stacked pass reads such an operand where it lies.
_LAYOUT_FREE_FNS = (np.add, np.subtract, np.multiply, np.divide)
_LAYOUT_FREE_UNARY = ("sqrt", "rsqrt", "abs", "reciprocal")


def layout_free(compute: Compute) -> bool:
    """Whether a `vector_kernel` compute gives the same bits on strided operands."""
    fn = getattr(compute, "func", None)
    if fn is _cast:
        return True
    if fn in (_binary, _scalar):
        return compute.args[0] in _LAYOUT_FREE_FNS  # type: ignore[attr-defined]
    return fn is _unary and compute.args[0] in _LAYOUT_FREE_UNARY  # type: ignore[attr-defined]


def c_ordered(a: np.ndarray) -> bool:
    """Whether `a`'s axes lie in C order, gaps allowed: numpy's result of an elementwise
    op on it is then C-contiguous (one in another order is laid out in that order)."""
    steps = [st for n, st in zip(a.shape, a.strides, strict=True) if n > 1]
    return all(x > y > 0 for x, y in zip(steps, steps[1:], strict=False)) and (not steps or steps[-1] > 0)


def _transpose(dst, src):
    return src.transpose(0, 2, 1)


def vector_kernel(op: Operation) -> tuple[str, Compute]:
    """The cost name and the numerics of one of `VECTOR_OPS`."""
    name, t = op.name.split(".")[1], type(op)
    if t in _BINARY:
        return name, partial(_binary, _BINARY[t])
    if t in _UNARY:
        return name, partial(_unary, _UNARY[t])
    if t in _SCALAR:
        return name, partial(_scalar, _SCALAR[t], np.float32(op.scalar.value.data))  # type: ignore[attr-defined]
    if isinstance(op, npu.VDupOp):
        return name, partial(_dup, np.float32(op.scalar.value.data))
    if isinstance(op, npu.VSelOp):
        return name, partial(_select, op.predicate.data)
    if isinstance(op, npu.VReduceOp):
        return name, partial(_reduce, op.kind.data)
    if isinstance(op, npu.VTransposeOp):
        return name, _transpose
    assert isinstance(op, npu.VCastOp)
    return name, partial(_cast, op.round.data, op.sat is not None)


# -- synchronisation -----------------------------------------------------------------------


def cross_wait_time(m: Machine, core: Core, flag: int, count: int) -> None:
    """After a cross-core wait for `count` sets of `flag` that have happened: the core
    resumes at the model time of the `count`-th earliest."""
    core.issue = max(core.issue, sorted(m.cross[flag])[count - 1])
