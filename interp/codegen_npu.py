"""The compiled engine's compiler, its `npu` ops. Each op calls its function of
`pto.interp.npu_ops`, or, on buffers whose shapes are static, writes out its numerics
(the same numpy calls) and its timing: the model's own functions (`npu_ops.gm_copy`,
`Core.begin`, ...) written out with what is known when compiling (`pto.interp.inline`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from xdsl.ir import Operation, SSAValue

from pto.dialects import npu
from pto.dialects.npu import BufferType, Space
from pto.interp import npu_ops as ops
from pto.interp import numerics as nx
from pto.interp.codegen_base import BASE_HANDLERS, OFFER, Emitter, inside, mem, rank, window
from pto.interp.inline import Hoisted, Obj, Rt
from pto.interp.machine import Core, dependence_key

CORE, MACHINE = Rt("core"), Rt("m")


class NpuEmitter(Emitter):
    def __init__(self, hot: bool, ns: dict[str, object]) -> None:
        super().__init__(hot, ns)
        self.specs: dict[Operation, ops.CopySpec] = {}

    def spec(self, op: npu.DmaOp | npu.FixpipeOp) -> ops.CopySpec:
        if op not in self.specs:
            self.specs[op] = ops.CopySpec.of(op)
        return self.specs[op]

    def inside(self, offset: str, extent: int, dim: int) -> bool | str:
        """`inside`, or the run-time test of an offset that is a name, its bound a `num`."""
        known = inside(offset, extent, dim)
        return f"0 <= {offset} <= {self.num(dim - extent)}" if known is None else known

    def window(self, offsets: Sequence[str], extent: Sequence[int | str]) -> str:
        """`window`, its numeric extents `num`s."""
        return window(offsets, [self.num(e) if isinstance(e, int) else e for e in extent])

    def key(self, v: SSAValue) -> str | Rt:
        """The dependence key of a buffer (`Buf.key`): known for an allocated one, else
        read at run time."""
        b = self.static(v)
        return dependence_key(b.space, b.offset) if b is not None else Rt(f"{self.use(v)}.key")

    def buf(self, v: SSAValue) -> Obj:
        """A buffer as the model's functions see it: an allocated one's key, space and
        shape known."""
        b = self.static(v)
        name = self.use(v)
        if b is None:
            return Obj(name, {"key": self.key(v)})
        array = Obj(f"{name}.array", {"shape": b.shape, "dtype": b.dtype})
        return Obj(name, {"key": self.key(v), "space": b.space, "array": array})

    def call(self, expr: str, op: Operation | None = None, tables: bool = False) -> None:
        """An op with effects on the machine: charge the scalar ops before it first.
        `tables`: it may read or write the core's pipe timing tables (`synced`)."""
        self.flush()
        line = f"{self.define(op.results[0])} = {expr}" if op is not None else expr
        if tables:
            self.synced(line)
        else:
            self.emit(line)

    # -- allocation and views -------------------------------------------------------------

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

    # -- copies ------------------------------------------------------------------------------

    def offsets(self, static: tuple[int, ...], dyn) -> str:
        return "".join(f"{o}, " for o in self.offset_list(static, dyn))

    def offset_list(self, static: tuple[int, ...], dyn) -> list[str]:
        it = iter(dyn)
        return [self.as_int(next(it)) if s == npu.DYN else str(s) for s in static]

    def bind(self, offsets: list[str]) -> list[str]:
        """Offsets as names or numbers: an `int(...)` of a dynamic one is taken once."""
        out: list[str] = []
        for o in offsets:
            if not o.lstrip("-").isdigit() and not o.isidentifier():
                name = f"o{len(self.lines)}_{len(out)}"
                self.emit(f"{name} = {o}")
                o = name
            out.append(o)
        return out

    def copy(self, op: npu.DmaOp | npu.FixpipeOp) -> None:
        if isinstance(op, npu.DmaOp) and self.onchip_dma(op):
            return
        if self.hot and self.gm_dma(op):
            return
        self.generic_copy(op)

    def generic_copy(self, op: npu.DmaOp | npu.FixpipeOp, cold: bool = False) -> None:
        fn = "dma" if isinstance(op, npu.DmaOp) else "fixpipe"
        rows = self.as_int(op.rows) if op.rows is not None else "None"
        cols = self.as_int(op.cols) if op.cols is not None else "None"
        s = self.spec(op)
        so, do = self.offsets(s.src_static, op.src_offsets), self.offsets(s.dst_static, op.dst_offsets)
        args = f"{self.use(op.src)}, {self.use(op.dst)}, ({so}), ({do}), {rows}, {cols}"
        self.flush()
        copy = [f"gm = ops.{fn}(m, core, {self.const(op)}, {self.const(s)}, {args})"]
        if Space.GM in (mem(op.src), mem(op.dst)):
            copy += [OFFER, "ops.gm_copy(m, core, gm)"]
        self.synced(*copy, cold=cold)

    def onchip_dma(self, op: npu.DmaOp) -> bool:
        """A DMA between two allocated on-chip buffers, all of whose rows it copies: its
        shapes, bytes and rate are static, so only its dynamic offsets are checked here
        (out of bounds, `ops.dma` runs to raise its error) and `ops.dma`'s work is
        written out with them. Whether it applies is decided here, once."""
        src, dst = self.static(op.src), self.static(op.dst)
        s = self.spec(op)
        sext = tuple(reversed(s.ext)) if s.transpose else s.ext
        if src is None or dst is None or s.has_rows or s.has_cols:
            return False
        if not (len(sext) == src.ndim and len(s.ext) == dst.ndim):
            return False
        so = self.offset_list(s.src_static, op.src_offsets)
        do = self.offset_list(s.dst_static, op.dst_offsets)
        axes = [*zip(sext, src.shape, strict=True), *zip(s.ext, dst.shape, strict=True)]
        if False in (inside(o, e, d) for o, (e, d) in zip(so + do, axes, strict=True)):
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
        nbytes = math.prod(sext) * src.dtype.itemsize
        bufs = self.buf(op.src), self.buf(op.dst)
        self.write(ops.onchip_copy_time, CORE, op, s.pipe, *bufs, nbytes, s.transpose, always=True)
        return True

    def gm_dma(self, op: npu.DmaOp | npu.FixpipeOp) -> bool:
        """A DMA between GM and an allocated on-chip buffer, not transposed, or a fixpipe
        from one to GM that is not an atomic add: `ops.dma` (`ops.fixpipe`) and
        `ops.gm_copy` in one, under a test of every offset (a tile outside fails it, and
        the generic copy runs to raise its error). An op-heavy kernel is mostly these."""
        s = self.spec(op)
        load, store = mem(op.src) == Space.GM, mem(op.dst) == Space.GM
        chip = self.static(op.dst if load else op.src)
        if load == store or chip is None or s.transpose:
            return False
        if isinstance(op, npu.FixpipeOp) and op.atomic_add is not None:
            return False
        if not len(s.ext) == chip.ndim == rank(op.src) == rank(op.dst):
            return False
        so = self.offset_list(s.src_static, op.src_offsets)
        do = self.offset_list(s.dst_static, op.dst_offsets)
        if False in (inside(o, e, d) for o, e, d in zip(do if load else so, s.ext, chip.shape, strict=True)):
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
        """The extent the copy moves: of a partial tile (`rows`, `cols`), its valid rows
        and columns."""
        ext = [self.num(e) for e in s.ext]
        if op.rows is not None:
            rows, ext[0] = ext[0], f"o{len(self.lines)}_rows"
            self.emit(f"{ext[0]} = max(0, min({self.as_int(op.rows)}, {rows}))")
        if op.cols is not None:
            cols, ext[-1] = ext[-1], f"o{len(self.lines)}_cols"
            self.emit(f"{ext[-1]} = max(0, min({self.as_int(op.cols)}, {cols}))")
        return ext

    def gm_dma_body(
        self, op: npu.DmaOp | npu.FixpipeOp, s: ops.CopySpec, so: list[str], do: list[str], ext: list[str]
    ) -> None:
        """The numerics of `ops.dma` / `ops.fixpipe` and the timing of `ops.gm_copy`."""
        src, dst = self.use(op.src), self.use(op.dst)
        load = mem(op.src) == Space.GM
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
        if load and op.cols is not None:  # and the columns
            self.emit(f"    if {ext[-1]} < {self.num(s.ext[-1])}:")
            self.emit(f"        {dst}.array[{self.window(do, s.ext)}][..., {ext[-1]}:] = 0")
        offs, extent = tuple(map(_value, gm_offs)), tuple(map(Rt, ext))
        if not load:
            where = f"({''.join(f'{o}, ' for o in gm_offs)}), ({''.join(f'{e}, ' for e in ext)})"
            self.emit(f"m.count_writes({gm}, {where})")
        moved = op.src.type if isinstance(op, npu.DmaOp) else op.dst.type  # (a fixpipe converts)
        assert isinstance(moved, BufferType)
        self.emit(f"nbytes = {' * '.join(ext)} * {np.dtype(nx.DTYPES[moved.elem]).itemsize}")
        self.offer_turn()
        copy = {  # an `ops.GmCopy`, its run-time parts names
            "op": op,
            "pipe": s.pipe,
            "gm": Rt(gm),
            "offs": offs,
            "ext": extent,
            "write": not load,
            "cacheable": s.cacheable,
            "adjust": None,
            "reads": (self.key(op.src),),
            "writes": (self.key(op.dst),),
            "nbytes": Rt("nbytes"),
            "drain": None,
            "rows_unit": Hoisted(self.hoist("cost.l1_rows_unit")) if load and mem(op.dst) == Space.L1 else 1,
        }
        if isinstance(op, npu.FixpipeOp):  # (`ops.fixpipe`'s: rows, columns, L0C element bytes)
            acc = self.static(op.src)
            assert acc is not None
            cols = math.prod(s.ext[1:]) if op.cols is None else extent[-1]
            copy["drain"] = (extent[0], cols, acc.dtype.itemsize)
        self.write(ops.gm_copy, MACHINE, CORE, Obj(None, copy))

    # -- compute ------------------------------------------------------------------------

    def mmad(self, op: npu.MmadOp) -> None:
        rows = self.as_int(op.rows) if op.rows is not None else "None"
        acc = self.as_bool(op.accumulate) if op.accumulate is not None else "False"
        a, b, c = (self.use(v) for v in (op.lhs, op.rhs, op.acc))
        if not self.hot or None in (self.static(op.lhs), self.static(op.rhs), self.static(op.acc)):
            self.call(f"ops.mmad(m, core, {self.const(op)}, {a}, {b}, {c}, {rows}, {acc})", tables=True)
            return
        # `ops.mmad` written out: the shapes and the element type are the buffers' types'
        self.flush()
        self.emit(f"accumulate = {acc}")
        self.emit("if numerics:")
        self.emit(f"    ops.mmad_value({a}.array, {b}.array, {c}.array, accumulate)")
        rows_v = None if op.rows is None else Rt(self.as_int(op.rows))
        if rows_v is not None:
            self.emit(f"rows = {rows_v.expr}")
            rows_v = Rt("rows")
        accumulate = Rt("accumulate") if op.accumulate is not None else False
        self.write(ops.mmad_time, CORE, op, *map(self.buf, (op.lhs, op.rhs, op.acc)), rows_v, accumulate)

    def vector(self, op: Operation) -> None:
        name, compute = ops.vector_kernel(op)
        *srcs, dst = (self.use(v) for v in op.operands)
        static = [self.static(v) for v in op.operands]
        if None not in static:  # `ops.vector` written out: its bytes are the types'
            nbytes = max(math.prod(b.shape) * b.dtype.itemsize for b in static if b is not None)
            arrays = "".join(f", {s}.array" for s in srcs)
            self.flush()
            self.emit("if numerics:")
            self.emit(f"    {dst}.array[...] = {self.const(compute)}({dst}.array{arrays})")
            bufs = [self.buf(v) for v in op.operands]
            self.write(ops.vector_time, CORE, op, name, tuple(bufs[:-1]), bufs[-1], nbytes, always=True)
            return
        self.call(
            f"ops.vector(m, core, {self.const(op)}, {name!r}, {self.const(compute)}, "
            f"({''.join(f'{s}, ' for s in srcs)}), {dst})",
            tables=True,
        )

    def vcopy(self, op: npu.VCopyOp) -> None:
        self.call(f"ops.vcopy(m, core, {self.const(op)}, {self.use(op.src)}, {self.use(op.dst)})", tables=True)

    # -- synchronisation -----------------------------------------------------------------
    # Flags are `Core.set_flag` / `Core.wait_flag` written out (a core program is mostly
    # flags: a call each cost as much as the rest of its bookkeeping).

    def set_flag(self, op: npu.SetFlagOp) -> None:
        self.flush()
        self.write(Core.set_flag, CORE, op.src_pipe.data, op.dst_pipe.data, op.event.value.data)

    def wait_flag(self, op: npu.WaitFlagOp) -> None:
        self.flush()
        self.write(Core.wait_flag, CORE, op, op.src_pipe.data, op.dst_pipe.data, op.event.value.data)

    def barrier(self, op: npu.BarrierOp) -> None:
        self.call(f"core.barrier({self.const(op.pipe.data)})", tables=True)

    def cross_set(self, op: npu.CrossCoreSetOp) -> None:
        self.call(f"ops.cross_set(m, core, {op.flag.value.data})", tables=True)
        self.offer_turn()

    def cross_wait(self, op: npu.CrossCoreWaitOp) -> None:
        flag = op.flag.value.data
        self.call(f"n = {self.as_int(op.count)}")
        self.emit("if n > 0:")
        self.emit(f"    sets = m.cross.setdefault({flag}, [])")
        self.emit("    if len(sets) < n:")
        waiting = f"f'cross-core flag {flag} ({{n}} sets)'"
        self.emit(f"        yield Block(lambda sets=sets, n=n: enough(sets, n), {waiting})")
        self.emit(f"    ops.cross_wait_time(m, core, {flag}, n)")


def _value(offset: str) -> int | Rt:
    """An offset of the source (a number or a name) as `inline` takes values."""
    return int(offset) if offset.lstrip("-").isdigit() else Rt(offset)


NpuEmitter.handlers = {
    **BASE_HANDLERS,
    npu.AllocOp: NpuEmitter.alloc,
    npu.DimOp: NpuEmitter.value_op,
    npu.ReshapeOp: NpuEmitter.value_op,
    npu.ViewOp: NpuEmitter.value_op,
    npu.DmaOp: NpuEmitter.copy,
    npu.FixpipeOp: NpuEmitter.copy,
    npu.MmadOp: NpuEmitter.mmad,
    npu.VCopyOp: NpuEmitter.vcopy,
    npu.SetFlagOp: NpuEmitter.set_flag,
    npu.WaitFlagOp: NpuEmitter.wait_flag,
    npu.BarrierOp: NpuEmitter.barrier,
    npu.CrossCoreSetOp: NpuEmitter.cross_set,
    npu.CrossCoreWaitOp: NpuEmitter.cross_wait,
    **dict.fromkeys(ops.VECTOR_OPS, NpuEmitter.vector),
}
