"""The cube side of `tile-to-npu`: the cube stage of each loop body as `npu.tasks`.

A body of p rows is a grid of (mL0-row, nL0-column) output tiles, as PyPTO cuts it
(mL0 was clipped to the body by tile-assign-shapes). PyPTO's merge counts decide how
many go into one task: `cube_l1_reuse_setting` N merges up to N row tiles of one
column, which share the weight tile (each K slice of it comes into L1 once for all of
them); `cube_nbuffer_setting` N merges N such units. A task streams K through L1 (kL1
slices) and L0A/L0B (kL0 steps), with the pass's number of copies of each when they
fit, into L0C accumulators, then out through the fixpipe with the stage's cast. With
split-K (f32 accumulators; into other outputs through an f32 workspace that a vector
group casts, `psum`) K is cut into runs of one kL1 slice each, as PyPTO does: the
first run's tasks write their tile, the tasks of the other runs (a second group, after
the first body by body) add theirs (atomic_add).
"""
from __future__ import annotations

from dataclasses import dataclass

from xdsl.builder import ImplicitBuilder
from xdsl.dialects import arith, scf
from xdsl.dialects.builtin import DYNAMIC_INDEX, IndexType, IntegerType, f32
from xdsl.ir import Block, Region, SSAValue

from pto.diagnostics import DiagnosticError
from pto.dialects import npu, tile
from pto.dialects.npu import MMAD_OUT, BufferType, Pipe, Space
from pto.dialects.pto import RoundMode, elem_name
from pto.lowering.npu_build import c, sync, unsupported, valid_rows
from pto.lowering.tile_to_npu import events as ev

idx = IndexType()


@dataclass
class Tiles:
    m0: int
    m1: int
    n0: int
    n1: int
    k0: int
    k1: int
    k: int
    n: int
    splits: int


def tiles(st: tile.CubeStageOp) -> Tiles:
    mm = st.matmul
    if st.tiles is None:
        raise DiagnosticError(st, "tile-to-npu needs cube tile shapes: run tile-assign-shapes first")
    if mm.a_trans is not None:
        raise unsupported(mm, "a_trans")
    ax = st.tiles.axes
    (m0, m1), (n0, n1) = ax["m"], ax["n"]
    k0, k1 = ax["k"][0], ax["k"][-1]
    m, k, _, n = mm.mkn()
    # PyPTO makes each L0 block of the output (mL0 x nL0) a cube task: the M and N L1
    # entries do not shape the work. A tile larger than the data covers just the
    # (fractal-padded) data.
    m1 = m0 = min(m0, (m + 15) // 16 * 16)
    n1 = n0 = min(n0, n)
    k1 = min(k1, k)
    k0 = min(k0, k1)
    if n % n1 or k % k1 or k1 % k0:
        raise unsupported(st, f"N = {n} or K = {k} not a multiple of its tile (nL0 = {n1}, kL1 = {k1}), "
                              f"or kL1 not of kL0 = {k0}")
    # Split-K as PyPTO cuts it: one run per kL1 slice.
    return Tiles(m0, m1, n0, n1, k0, k1, k, n, k // k1 if st.tiles.is_split_k else 1)


def merge_counts(st: tile.CubeStageOp) -> tuple[int, int]:
    """(l1_reuse, nbuffer): PyPTO's merge counts of cube tasks (see the module docstring)."""
    reuse = st.l1_reuse.value.data if st.l1_reuse is not None else 1
    nbuf = st.nbuffer.value.data if st.nbuffer is not None else 1
    return max(1, reuse), max(1, nbuf)


class CubeStage:
    """A task is `per_task` units of a body; a unit is `g` output tiles of one column of
    tiles (consecutive row tiles of one column) that share the weight tile:
    each K slice of it is loaded into L1 once for all of them (`cube_l1_reuse_setting`),
    their accumulators side by side in L0C."""

    def __init__(self, lw, st: tile.CubeStageOp, body, dests):
        self.lw, self.st, self.body, self.dests = lw, st, body, dests
        self.t = tiles(st)
        self.mt = -(-body.rows // self.t.m1)
        self.nt = self.t.n // self.t.n1
        mm = st.matmul
        self.a_el, self.b_el = mm.lhs.type.element_type, mm.rhs.type.element_type  # type: ignore[union-attr]
        self.acc_name = MMAD_OUT[elem_name(self.a_el)]
        self.cast = next((o for o in st.body.block.ops if isinstance(o, tile.CastOp)), None)
        self.bt = mm.b_trans is not None
        self.check_split()
        reuse, nbuf = merge_counts(st)
        self.g = self.group_size(reuse)
        self.units = self.nt * (self.mt // self.g)
        self.per_task = min(nbuf, self.units)

    def check_split(self) -> None:
        """Split-K adds partial sums in GM (f32 only). Into one f32 output they go
        directly; otherwise into an f32 workspace that a vector group then casts to the
        outputs (`psum`), as PyPTO adds its partials in a vector task."""
        self.outs, self.psum = self.dests[self.st.results[0]], None
        if self.t.splits == 1:
            return
        if self.acc_name != "f32":
            raise unsupported(self.st, f"split-K with an {self.acc_name} accumulator (partial sums are added in GM as f32)")
        if self.cast is None and len(self.outs) == 1 and elem_name(self.outs[0].type.element_type) == "f32":  # type: ignore[union-attr]
            return
        ws = npu.AllocOp(BufferType([DYNAMIC_INDEX, self.t.n], f32, Space.GM), None, [self.lw.token_count(self.st)])
        ws.result.name_hint = "psum"
        self.psum = ws.result
        self.outs = [ws.result]

    def round_mode(self):
        return self.cast.round.data if self.cast is not None else RoundMode.RINT

    def types(self) -> tuple[BufferType, ...]:
        t = self.t
        b_shape = [t.n1, t.k1] if self.bt else [t.k1, t.n1]
        return (BufferType([t.m1, t.k1], self.a_el, Space.L1), BufferType(b_shape, self.b_el, Space.L1),
                BufferType([t.m0, t.k0], self.a_el, Space.L0A), BufferType([t.k0, t.n0], self.b_el, Space.L0B),
                BufferType([t.m0, t.n0], f32 if self.acc_name == "f32" else IntegerType(32), Space.L0C))

    def group_size(self, reuse: int) -> int:
        """The most row tiles (a divisor of the body's, at most `reuse`) whose
        accumulators fit L0C and whose A slices fit L1 beside one B slice."""
        a1, b1, _, _, acc = self.types()
        cap = self.lw.target.capacity
        for g in range(min(reuse, self.mt), 0, -1):
            if self.mt % g == 0 and g * acc.nbytes() <= cap("l0c") and g * a1.nbytes() + b1.nbytes() <= cap("l1"):
                return g
        return 1

    def emit(self, label: str, after: list[str]) -> str:
        """Emit the group(s); returns the label of the last one (what a later phase waits for)."""
        self.group(label, after, self.units, run=0)
        if self.t.splits == 1:
            return label
        self.group(label + ".add", [label], self.units * (self.t.splits - 1), run=1)
        return label + ".add"

    def group(self, label: str, after: list[str], count: int, run: int) -> None:
        region = Region(Block(arg_types=[idx, idx]))
        with ImplicitBuilder(region.block):
            b, i = region.block.args
            b.name_hint, i.name_hint = "body", "task"
            self.task(b, i, count, run)
        npu.TasksOp(label, "cube", self.body.count, -(-count // self.per_task), after, region)

    def task(self, b: SSAValue, i: SSAValue, count: int, run: int) -> None:
        """Units i*per_task .. of the body (of `count`); `run` 0 is the first split-K run
        (or the only one), 1 the runs that add."""
        bufs = self.buffers()
        start, end = self.body.bounds(b)
        n = self.per_task
        for q in range(n):
            u = arith.AddiOp(arith.MuliOp(i, c(n)).result, c(q)).result if n > 1 else i
            if q == 0 or count % n == 0:
                self.unit(u, start, end, bufs, run)
                continue
            guard = Block()
            with ImplicitBuilder(guard):
                self.unit(u, start, end, bufs, run)
                scf.YieldOp()
            scf.IfOp(arith.CmpiOp(u, c(count), "ult").result, [], Region(guard))

    # -- buffers ---------------------------------------------------------------------

    def buffers(self) -> dict[str, list]:
        a1_t, b1_t, a0_t, b0_t, acc_t = self.types()
        cap, g, l1, l0 = self.lw.target.capacity, self.g, self.lw.l1_buffers, self.lw.l0_buffers
        l1 = l1 if l1 * (g * a1_t.nbytes() + b1_t.nbytes()) <= cap("l1") else 1
        l0 = l0 if l0 * a0_t.nbytes() <= cap("l0a") and l0 * b0_t.nbytes() <= cap("l0b") else 1
        b1_at = l1 * g * a1_t.nbytes()
        return {
            "a1": [[npu.AllocOp(a1_t, (j * g + r) * a1_t.nbytes()).result for r in range(g)] for j in range(l1)],
            "b1": [npu.AllocOp(b1_t, b1_at + j * b1_t.nbytes()).result for j in range(l1)],
            "a0": [npu.AllocOp(a0_t, j * a0_t.nbytes()).result for j in range(l0)],
            "b0": [npu.AllocOp(b0_t, j * b0_t.nbytes()).result for j in range(l0)],
            "acc": [npu.AllocOp(acc_t, r * acc_t.nbytes()).result for r in range(g)],  # one per member
        }

    # -- one unit: g output tiles sharing the weight tile ------------------------------

    def unit(self, u: SSAValue, start: SSAValue, end: SSAValue, bufs, run: int) -> None:
        """Unit u (mod units) of the body: column ni, row tiles mg*g .. mg*g+g-1; its split
        run is u div units (+1 in the adding group)."""
        t, per_col = self.t, self.mt // self.g
        si = arith.AddiOp(arith.DivUIOp(u, c(self.units)).result, c(run)).result if run else c(0)
        rest = arith.RemUIOp(u, c(self.units)).result if run else u
        ni, mg = arith.DivUIOp(rest, c(per_col)).result, arith.RemUIOp(rest, c(per_col)).result
        col = arith.MuliOp(ni, c(t.n1)).result
        col.name_hint = "col"
        first = arith.AddiOp(start, arith.MuliOp(mg, c(self.g * t.m1))).result
        members = []
        for r in range(self.g):
            row = arith.AddiOp(first, c(r * t.m1)).result if r else first
            row.name_hint = "row"
            valid = valid_rows(row, end, t.m1)
            members.append((row, valid))
        kstart = arith.MuliOp(si, c(t.k // t.splits)).result
        self.k_loop(bufs, members, col, kstart)
        for acc, (row, valid) in zip(bufs["acc"], members, strict=True):
            self.out(acc, row, col, valid, run)

    def k_loop(self, bufs, members, col, kstart) -> None:
        """Stream K: slice s into L1 copy s % copies ("set after use, wait before reuse"
        on MTE1 -> MTE2), each slice in kL0 steps through the L0 copies."""
        t, copies, nb = self.t, len(bufs["b1"]), len(bufs["a0"])
        for j in range(copies):
            npu.SetFlagOp(Pipe.MTE1, Pipe.MTE2, ev.L1_FREE + j)
        for j in range(nb):
            npu.SetFlagOp(Pipe.CUBE, Pipe.MTE1, ev.L0_FREE + j)
        kend = arith.AddiOp(kstart, c(t.k // t.splits)).result
        kbody = Block(arg_types=[idx])
        with ImplicitBuilder(kbody):
            for j in range(copies):
                if j == 0:
                    self.k_slice(bufs, members, col, kstart, kbody.args[0], 0)
                    continue
                kj = arith.AddiOp(kbody.args[0], c(j * t.k1)).result
                guard = Block()
                with ImplicitBuilder(guard):
                    self.k_slice(bufs, members, col, kstart, kj, j)
                    scf.YieldOp()
                scf.IfOp(arith.CmpiOp(kj, kend, "ult").result, [], Region(guard))
            scf.YieldOp()
        scf.ForOp(kstart, kend, c(copies * t.k1), [], Region(kbody))
        for j in range(copies):
            npu.WaitFlagOp(Pipe.MTE1, Pipe.MTE2, ev.L1_FREE + j)
        for j in range(nb):
            npu.WaitFlagOp(Pipe.CUBE, Pipe.MTE1, ev.L0_FREE + j)

    def k_slice(self, bufs, members, col, kstart, kk: SSAValue, j: int) -> None:
        """One K slice into L1 copy j: the weight once, the activation of every member."""
        t, mm = self.t, self.st.matmul
        b1 = bufs["b1"][j]
        npu.WaitFlagOp(Pipe.MTE1, Pipe.MTE2, ev.L1_FREE + j)
        npu.DmaOp(Pipe.MTE2, self.lw.gm[mm.rhs], [col, kk] if self.bt else [kk, col], b1, [0, 0],
                  cache=self.lw.cache_of(mm.rhs))
        for a1, (row, valid) in zip(bufs["a1"][j], members, strict=True):
            npu.DmaOp(Pipe.MTE2, self.lw.gm[mm.lhs], [row, kk], a1, [0, 0], rows=valid)
        sync(Pipe.MTE2, Pipe.MTE1, ev.L1_LOADED + j)
        nb = len(bufs["a0"])
        inner = Block(arg_types=[idx])
        with ImplicitBuilder(inner):
            self.l0_step(bufs, bufs["a1"][j], b1, members, kk, kstart, inner.args[0], 0)
            for q in range(1, nb):
                k_q = arith.AddiOp(inner.args[0], c(q * t.k0)).result
                guard = Block()
                with ImplicitBuilder(guard):
                    self.l0_step(bufs, bufs["a1"][j], b1, members, kk, kstart, k_q, q)
                    scf.YieldOp()
                scf.IfOp(arith.CmpiOp(k_q, c(t.k1), "ult").result, [], Region(guard))
            scf.YieldOp()
        scf.ForOp(c(0), c(t.k1), c(nb * t.k0), [], Region(inner))
        npu.SetFlagOp(Pipe.MTE1, Pipe.MTE2, ev.L1_FREE + j)

    def l0_step(self, bufs, a1s, b1, members, kk, kstart, k_in: SSAValue, j: int) -> None:
        """One kL0 step into L0 copy j: every member accumulates (the B block stays in L0B
        while the A blocks of the members pass)."""
        t = self.t
        first = arith.AddiOp(arith.SubiOp(kk, kstart), k_in).result
        later = arith.CmpiOp(first, c(0), "ne").result
        a0, b0 = bufs["a0"][j], bufs["b0"][j]
        for r, (a1, acc, (_, valid)) in enumerate(zip(a1s, bufs["acc"], members, strict=True)):
            npu.WaitFlagOp(Pipe.CUBE, Pipe.MTE1, ev.L0_FREE + j)
            if r == 0:
                npu.DmaOp(Pipe.MTE1, b1, [0, k_in] if self.bt else [k_in, 0], b0, [0, 0], transpose=self.bt)
            npu.DmaOp(Pipe.MTE1, a1, [0, k_in], a0, [0, 0])
            sync(Pipe.MTE1, Pipe.CUBE, ev.L0_LOADED + j)
            npu.MmadOp(a0, b0, acc, later, rows=valid)
            npu.SetFlagOp(Pipe.CUBE, Pipe.MTE1, ev.L0_FREE + j)

    # -- out through the fixpipe -----------------------------------------------------------

    def out(self, acc, row, col, valid, run: int) -> None:
        sync(Pipe.CUBE, Pipe.FIXPIPE, ev.ACC_READY)
        for dst in self.outs:
            d_el = elem_name(dst.type.element_type)  # type: ignore[union-attr]
            rnd = self.round_mode() if d_el != self.acc_name else None
            npu.FixpipeOp(acc, [0, 0], dst, [row, col], rows=valid, round=rnd, atomic_add=run > 0)
        sync(Pipe.FIXPIPE, Pipe.CUBE, ev.ACC_FREE)
