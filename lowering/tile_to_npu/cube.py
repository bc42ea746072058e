"""The cube side of `tile-to-npu`: the cube stage of each loop body as `npu.tasks`.

A body of p rows is a grid of (mL0-row, nL0-column) output tiles, as PyPTO cuts it
(mL0 was clipped to the body by tile-assign-shapes). PyPTO's merge counts decide how
many go into one task: `cube_l1_reuse_setting` N merges up to N row tiles of one
column, run one after the other, which share the first K slices of the weight tile (as
many as L1 keeps beside the streaming copies: PyPTO reloads the rest too, measured);
`cube_nbuffer_setting` N merges N such units: of one column where the row tiles' whole K
does not fit in L1 beside the copies, else of one group of row tiles over N columns, which
load the activation once and keep it (`act_kept`; the later units reload every weight
slice, measured). A row tile streams K through L1 (kL1
slices) and L0A/L0B (kL0 steps), with the pass's number of copies of each when they
fit, into an L0C accumulator, then out through the fixpipe with the stage's cast. With
split-K (f32 accumulators only) K is cut into runs as PyPTO cuts it (`split_runs`): the tasks
of every run write their partial tile to a GM workspace that a vector group adds up
(vector.emit_sum_group), as PyPTO does.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TypedDict

from xdsl.builder import ImplicitBuilder
from xdsl.dialects import arith, scf
from xdsl.dialects.builtin import DYNAMIC_INDEX, IndexType, IntegerType, f32
from xdsl.ir import Block, Region, SSAValue

from pto.diagnostics import DiagnosticError
from pto.dialects import npu, tile
from pto.dialects.common import ELEM_BYTES, RoundMode, elem_name
from pto.dialects.npu import MMAD_OUT, BufferType, Pipe, Space
from pto.dialects.pto import tensor_type
from pto.lowering.npu_build import index_const, sync, unrolled, unsupported, valid_rows
from pto.lowering.tile_to_npu import events as ev
from pto.planning.cube import clip_k, group_size, pad

idx = IndexType()

# Kept weight slices are straight-line code, one copy per slice: with tiny K tiles (kL1 =
# 32 of K = 16384) L1 could keep hundreds and the task's IR would grow past 100k lines.
# L1 keeps at most this many (every SK-03 configuration measured keeps 16 or fewer).
MAX_KEPT_SLICES = 16


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
    span: int  # the K columns of a split-K run (all of K without split-K)


def tiles(st: tile.CubeStageOp, fractal: int) -> Tiles:
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
    # entries do not shape the work. tile-assign-shapes clipped M to the body.
    if m0 > pad(m, fractal):
        raise DiagnosticError(st, f"tile-to-npu: M tile {m0} taller than the body ({m} rows): run tile-assign-shapes")
    m1 = m0
    n1 = n0 = min(n0, n)
    k0, k1 = clip_k(k0, k1, k)
    if k1 % k0:
        raise unsupported(st, f"kL1 = {k1} not a multiple of kL0 = {k0}")
    span = split_span(k, k1, elem_name(tensor_type(mm.lhs).element_type)) if st.tiles.is_split_k else k
    return Tiles(m0, m1, n0, n1, k0, k1, k, n, -(-k // span), span)


def split_span(k: int, k1: int, elem: str) -> int:
    """Split-K as PyPTO cuts it (measured): runs of kL1 elements of f32 size, i.e. kL1
    for f32 inputs, 2 kL1 for bf16; one kL1 slice each where that does not divide K (a
    ragged K's last run its last, ragged slice)."""
    chunk = min(k, k1 * ELEM_BYTES["f32"] // ELEM_BYTES[elem])
    return chunk if k % chunk == 0 else k1


def split_runs(k: int, k1: int, elem: str) -> int:
    """The runs of `split_span` (pto-tune's estimate counts them with it too)."""
    return -(-k // split_span(k, k1, elem))


def merge_counts(st: tile.CubeStageOp) -> tuple[int, int]:
    """(l1_reuse, nbuffer): PyPTO's merge counts of cube tasks (see the module docstring)."""
    reuse = st.l1_reuse.value.data if st.l1_reuse is not None else 1
    nbuf = st.nbuffer.value.data if st.nbuffer is not None else 1
    return max(1, reuse), max(1, nbuf)


class CubeBuffers(TypedDict):
    """A cube task's buffers: the copies of each L1 and L0 tile, the weight's K slices
    kept in L1 across a unit's row tiles, per row tile every activation slice kept across
    the task's units (`act_kept`, else none), and the one L0C accumulator."""

    a1: list[SSAValue]
    b1: list[SSAValue]
    kept: list[SSAValue]
    act: list[list[SSAValue]]
    a0: list[SSAValue]
    b0: list[SSAValue]
    acc: SSAValue


class CubeStage:
    """A task is `per_task` units of a body; a unit is `g` output tiles of one column of
    tiles (consecutive row tiles of one column) that share the kept K slices of the
    weight tile (`cube_l1_reuse_setting`)."""

    def __init__(self, lowering, st: tile.CubeStageOp, body, dests):
        self.lowering, self.st, self.body, self.dests = lowering, st, body, dests
        self.t = tiles(st, lowering.target.cube.fractal)
        self.l1b_free = ev.l1b_free(lowering.target.sync.event_ids)
        self.mt = -(-body.rows // self.t.m1)
        self.nt = -(-self.t.n // self.t.n1)  # (the last column tile may be a ragged tail)
        mm = st.matmul
        self.a_el, self.b_el = tensor_type(mm.lhs).element_type, tensor_type(mm.rhs).element_type
        self.acc_name = MMAD_OUT[elem_name(self.a_el)]
        self.cast = next((o for o in st.body.block.ops if isinstance(o, tile.CastOp)), None)
        self.bt = mm.b_trans is not None
        self.check_split()
        reuse, nbuf = merge_counts(st)
        self.g = group_size(self.mt, reuse) if self.t.splits == 1 else 1  # PyPTO merges no split-K tiles
        self.units = self.nt * (self.mt // self.g)
        self.per_task = min(nbuf, self.units)
        self.act_kept = self.keeps_activation()

    def keeps_activation(self) -> bool:
        """Whether a task's units are one group of row tiles over `per_task` columns that
        load each activation slice once (PyPTO 0.2.0, cube_nbuffer_setting 2 with
        cube_l1_reuse_setting 2, measured on stdx `_cnb2`: 16 activation copies for its 2 x 2
        output tiles of 8 K slices, 27 weight copies, i.e. 11 for the first unit and 16 for
        the second): with one split run, whole tasks of whole columns, K in whole kL1 slices
        (no ragged tail), and L1 room for the group's whole K beside the streaming copies
        and the kept weight slices."""
        t = self.t
        if self.per_task == 1 or t.splits > 1 or self.nt % self.per_task or t.k // t.k1 > MAX_KEPT_SLICES:
            return False
        if t.k % t.k1:  # (`kept_k_loop` runs whole K slices, straight-line)
            return False
        a1_bytes = self.block_size(self.types()[0])
        return self.l1_layout()[-1] + self.g * (t.k // t.k1) * a1_bytes <= self.lowering.target.capacity("l1")

    def place(self, rest: int) -> tuple[int, int]:
        """(column, row-tile group) of unit `rest` of a split run: consecutive units down a
        column, or across the columns of one group where the activation is kept."""
        per_col = self.mt // self.g
        return (rest % self.nt, rest // self.nt) if self.act_kept else divmod(rest, per_col)

    def check_split(self) -> None:
        """Split-K: each run's tasks write their f32 partial sums to a GM workspace
        (`psum`, the runs' [tokens, N] blocks one under the other) that a vector group
        then adds up into the outputs, as PyPTO does."""
        self.outs, self.psum = self.dests[self.st.results[0]], None
        if self.st.tiles is not None and self.st.tiles.is_split_k and self.acc_name != "f32":
            # (refused even where K makes one run, which would quietly be no split at all)
            raise unsupported(self.st, f"split-K with an {self.acc_name} accumulator (partial sums are added as f32)")
        if self.t.splits == 1:
            return
        self.tokens = self.lowering.token_count(self.st)
        bt = BufferType([DYNAMIC_INDEX, self.t.n], f32, Space.GM)
        rows = lambda: arith.MuliOp(self.tokens, index_const(self.t.splits)).result  # noqa: E731
        self.psum = self.lowering.workspace(("psum", self.t.splits, bt), bt, rows, "psum")
        self.outs = [self.psum]

    def round_mode(self):
        return self.cast.round.data if self.cast is not None else RoundMode.RINT

    def types(self) -> tuple[BufferType, ...]:
        t = self.t
        b_shape = [t.n1, t.k1] if self.bt else [t.k1, t.n1]
        return (
            BufferType([t.m1, t.k1], self.a_el, Space.L1),
            BufferType(b_shape, self.b_el, Space.L1),
            BufferType([t.m0, t.k0], self.a_el, Space.L0A),
            BufferType([t.k0, t.n0], self.b_el, Space.L0B),
            BufferType([t.m0, t.n0], f32 if self.acc_name == "f32" else IntegerType(32), Space.L0C),
        )

    def emit(self, label: str, after: list[str]) -> None:
        """The group: every unit of every split-K run of a body."""
        count = self.units * self.t.splits
        region = Region(Block(arg_types=[idx, idx]))
        with ImplicitBuilder(region.block):
            b, i = region.block.args
            b.name_hint, i.name_hint = "body", "task"
            self.task(b, i, count)
        npu.TasksOp(label, "cube", self.body.count, -(-count // self.per_task), after, region)

    def task(self, b: SSAValue, i: SSAValue, count: int) -> None:
        """Units i*per_task .. of the body (of `count`)."""
        bufs = self.buffers()
        start, end = self.body.bounds(b)
        n = self.per_task
        unrolled(
            n,
            lambda q: arith.AddiOp(arith.MuliOp(i, index_const(n)).result, index_const(q)).result if n > 1 else i,
            index_const(count) if count % n else None,
            lambda u, q: self.unit(u, start, end, bufs, q == 0),
        )

    # -- buffers ---------------------------------------------------------------------

    def l1_layout(self) -> tuple[int, int, int, int, int]:
        """L1 of a task: (activation copies, weight-part copies, parts of a weight slice,
        kept weight slices, where the kept activation starts): the copies, then the kept
        weight slices, then (`act_kept`) per row tile of a unit its K slices of the
        activation."""
        a1_t, b1_t = self.types()[:2]
        t, cap = self.t, self.lowering.target.capacity
        size = self.block_size
        halves = t.k1 // 2 % t.k0 == 0
        ca, cb, parts = self.l1_copies(size(a1_t), size(b1_t), self.lowering.l1_buffers, cap("l1"), halves)
        part_bytes = size(BufferType([t.n1, t.k1 // parts], self.b_el, Space.L1))
        kept_at = ca * size(a1_t) + cb * part_bytes
        room = min(cap("l1"), self.lowering.target.model.l1_reuse_bytes) - kept_at
        kept = 0 if self.g == 1 else max(0, min(t.k // t.k1, room // size(b1_t), MAX_KEPT_SLICES))
        return ca, cb, parts, kept, kept_at + kept * size(b1_t)

    def block_size(self, bt: BufferType) -> int:
        block = self.lowering.target.block_bytes
        return -(-bt.nbytes() // block) * block  # buffers start on a block

    def buffers(self) -> CubeBuffers:
        a1_t, b1_t, a0_t, b0_t, acc_t = self.types()
        t, cap, l0 = self.t, self.lowering.target.capacity, self.lowering.l0_buffers
        size = self.block_size
        ca, cb, self.parts, kept, act_at = self.l1_layout()
        part_t = BufferType([t.n1, t.k1 // self.parts] if self.bt else [t.k1 // self.parts, t.n1], self.b_el, Space.L1)
        l0 = l0 if l0 * size(a0_t) <= cap("l0a") and l0 * size(b0_t) <= cap("l0b") else 1
        b1_at = ca * size(a1_t)
        kept_at = b1_at + cb * size(part_t)
        slices = t.k // t.k1 if self.act_kept else 0
        at = lambda r, s: act_at + (r * slices + s) * size(a1_t)  # noqa: E731
        return CubeBuffers(
            {
                "a1": [npu.AllocOp(a1_t, j * size(a1_t)).result for j in range(ca)],
                "b1": [npu.AllocOp(part_t, b1_at + j * size(part_t)).result for j in range(cb)],
                "kept": [npu.AllocOp(b1_t, kept_at + j * size(b1_t)).result for j in range(kept)],
                "act": [[npu.AllocOp(a1_t, at(r, s)).result for s in range(slices)] for r in range(self.g)],
                "a0": [npu.AllocOp(a0_t, j * size(a0_t)).result for j in range(l0)],
                "b0": [npu.AllocOp(b0_t, j * size(b0_t)).result for j in range(l0)],
                "acc": npu.AllocOp(acc_t, 0).result,
            }
        )

    @staticmethod
    def l1_copies(a: int, b: int, copies: int, cap: int, halves: bool) -> tuple[int, int, int]:
        """(copies of the activation slice (a bytes), copies of a weight part, parts of
        the weight slice (b bytes)): `copies` of both where they fit; else, if the slice
        halves on kL0 steps, `copies` of the activation and of half weight slices, each
        half loaded by its own copy (the first half of the next slice comes in while the
        second half of this one is consumed); else two of the activation only (loaded
        first, so the next one comes in while this slice computes); else one of each."""
        if copies * (a + b) <= cap:
            return copies, copies, 1
        if copies > 1 and halves and copies * (a + b // 2) <= cap:
            return copies, copies, 2
        if copies * a + b <= cap:
            return copies, 1, 1
        return 1, 1, 1

    # -- one unit: g output tiles sharing the weight tile ------------------------------

    def unit(self, u: SSAValue, start: SSAValue, end: SSAValue, bufs, lead: bool) -> None:
        """Unit u (mod units) of the body, the task's first (`lead`) or not: column ni, row tiles
        mg*g .. mg*g+g-1, one after the other, as PyPTO runs them; its split run is u div
        units."""
        t, per_col, split = self.t, self.mt // self.g, self.t.splits > 1
        si = arith.DivUIOp(u, index_const(self.units)).result if split else index_const(0)
        rest = arith.RemUIOp(u, index_const(self.units)).result if split else u
        if self.act_kept:  # across the columns of one group (`place`)
            ni, mg = arith.RemUIOp(rest, index_const(self.nt)).result, arith.DivUIOp(rest, index_const(self.nt)).result
        else:
            ni, mg = arith.DivUIOp(rest, index_const(per_col)).result, arith.RemUIOp(rest, index_const(per_col)).result
        col = arith.MuliOp(ni, index_const(t.n1)).result
        col.name_hint = "col"
        cols = (col, self.valid_n(col))  # (its columns inside N, once for the unit's loads)
        first = arith.AddiOp(start, arith.MuliOp(mg, index_const(self.g * t.m1))).result
        kstart = arith.MuliOp(si, index_const(t.span)).result
        # A split-K run writes its partial sums into its block of the workspace.
        base = arith.MuliOp(si, self.tokens).result if split else None
        for r in range(self.g):
            row = arith.AddiOp(first, index_const(r * t.m1)).result if r else first
            row.name_hint = "row"
            valid = valid_rows(row, end, t.m1)
            if self.act_kept:
                self.kept_k_loop(bufs, (row, valid), cols, bufs["act"][r], lead, load_kept=r == 0)
            else:
                self.k_loop(bufs, (row, valid), cols, kstart, load_kept=r == 0)
            self.out(bufs["acc"], arith.AddiOp(base, row).result if base else row, cols, valid)

    def k_loop(self, bufs, member, cols, kstart, load_kept: bool) -> None:
        """Stream K for one row tile: slice s into activation copy s % (its copies) and
        weight copy s % (its copies) ("set after use, wait before reuse" on MTE1 -> MTE2),
        each slice in kL0 steps through the L0 copies. The first slices of the weight
        (as many as L1 keeps beside the copies) go to their own L1 space, loaded by the
        unit's first row tile and reused by the others (`cube_l1_reuse_setting`)."""
        t, nb, kept = self.t, len(bufs["a0"]), len(bufs["kept"])
        ca, cb = len(bufs["a1"]), len(bufs["b1"])
        slices = math.lcm(ca, cb)  # the loop body: slices until both rotations repeat
        for j in range(ca):
            npu.SetFlagOp(Pipe.MTE1, Pipe.MTE2, ev.L1A_FREE + j)
        for j in range(cb):
            npu.SetFlagOp(Pipe.MTE1, Pipe.MTE2, self.l1b_free + j)
        for j in range(nb):
            npu.SetFlagOp(Pipe.CUBE, Pipe.MTE1, ev.L0_FREE + j)
        for s_ in range(kept):
            self.k_slice(bufs, member, cols, kstart, index_const(s_ * t.k1), s_, bufs["kept"][s_], load_kept)
        kend = arith.AddiOp(kstart, index_const(t.span)).result
        if t.k % t.span:  # (a ragged K's last run)
            kend = arith.MinUIOp(kend, index_const(t.k)).result
        kbody = Block(arg_types=[idx])
        with ImplicitBuilder(kbody):
            k = kbody.args[0]
            unrolled(
                slices,
                lambda j: arith.AddiOp(k, index_const(j * t.k1)).result if j else k,
                kend,
                lambda kj, j: self.k_slice(bufs, member, cols, kstart, kj, j),
            )
            scf.YieldOp()
        lb = arith.AddiOp(kstart, index_const(kept * t.k1)).result if kept else kstart
        scf.ForOp(lb, kend, index_const(slices * t.k1), [], Region(kbody))
        for j in range(ca):
            npu.WaitFlagOp(Pipe.MTE1, Pipe.MTE2, ev.L1A_FREE + j)
        for j in range(cb):
            npu.WaitFlagOp(Pipe.MTE1, Pipe.MTE2, self.l1b_free + j)
        for j in range(nb):
            npu.WaitFlagOp(Pipe.CUBE, Pipe.MTE1, ev.L0_FREE + j)

    def kept_k_loop(self, bufs, member, cols, act: list[SSAValue], lead: bool, load_kept: bool) -> None:
        """Stream K for one row tile whose activation slices stay in L1 across the task's
        units (`act_kept`): straight-line, loaded by the first unit; the first unit's
        first weight slices in their kept space (as `k_loop`), every other through the
        weight copies."""
        t, kept = self.t, len(bufs["kept"]) if lead else 0
        flags = [(Pipe.MTE1, Pipe.MTE2, ev.L1A_FREE + j) for j in range(len(bufs["a1"]))]
        flags += [(Pipe.MTE1, Pipe.MTE2, self.l1b_free + j) for j in range(len(bufs["b1"]))]
        flags += [(Pipe.CUBE, Pipe.MTE1, ev.L0_FREE + j) for j in range(len(bufs["a0"]))]
        for f in flags:
            npu.SetFlagOp(*f)
        k0 = index_const(0)
        for s_ in range(t.k // t.k1):
            w = bufs["kept"][s_] if s_ < kept else None
            kk = index_const(s_ * t.k1)
            self.k_slice(bufs, member, cols, k0, kk, s_, w, load_kept, act=act[s_], load_act=lead)
        for f in flags:
            npu.WaitFlagOp(*f)

    def k_slice(
        self, bufs, member, cols, kstart, kk: SSAValue, j: int, kept=None, load=True, act=None, load_act=True
    ) -> None:
        """Slice j: the activation into its copy (or into its kept space `act`, if
        `load_act`: else it is there already), then the weight part by part, each into its
        copy (or the whole slice into its kept space, if `load`) and consumed in kL0
        steps. `member` is the row tile (row, valid rows), `cols` its column tile (col,
        columns inside N or None)."""
        t, mm = self.t, self.st.matmul
        (row, valid), (col, ncols), ja = member, cols, j % len(bufs["a1"])
        a1 = bufs["a1"][ja] if act is None else act
        if act is None:
            npu.WaitFlagOp(Pipe.MTE1, Pipe.MTE2, ev.L1A_FREE + ja)
        parts = 1 if kept is not None else self.parts
        kcols = self.valid_k(kk, t.k1) if act is None or load_act or parts == 1 else None
        if act is None or load_act:
            npu.DmaOp(Pipe.MTE2, self.lowering.gm[mm.lhs], [row, kk], a1, [0, 0], rows=valid, cols=kcols)
        kb = t.k1 // parts
        for h in range(parts):
            at = arith.AddiOp(kk, index_const(h * kb)).result if h else kk
            jb = (j * parts + h) % len(bufs["b1"])
            b1 = kept if kept is not None else bufs["b1"][jb]
            if kept is None:
                npu.WaitFlagOp(Pipe.MTE1, Pipe.MTE2, self.l1b_free + jb)
            kv = kcols if parts == 1 else self.valid_k(at, kb)
            if kept is None or load:
                npu.DmaOp(
                    Pipe.MTE2,
                    self.lowering.gm[mm.rhs],
                    [col, at] if self.bt else [at, col],
                    b1,
                    [0, 0],
                    rows=ncols if self.bt else kv,
                    cols=kv if self.bt else ncols,
                    cache=self.lowering.cache_of(mm.rhs),
                )
            sync(Pipe.MTE2, Pipe.MTE1, ev.L1_LOADED + ja * parts + h)
            self.l0_steps(bufs, a1, b1, valid, kk, kstart, h * kb, kb, kv)
            if kept is None:
                npu.SetFlagOp(Pipe.MTE1, Pipe.MTE2, self.l1b_free + jb)
        if act is None:
            npu.SetFlagOp(Pipe.MTE1, Pipe.MTE2, ev.L1A_FREE + ja)

    def valid_k(self, at: SSAValue, width: int) -> SSAValue | None:
        """Of a K slice of `width` from `at`, the columns inside K: a ragged K's last slice
        (PyPTO's tail tile, zero-filled past K in L1), else None (all of them)."""
        if self.t.k % self.t.k1 == 0:
            return None
        v = valid_rows(at, index_const(self.t.k), width)
        v.name_hint = "kcols"
        return v

    def valid_n(self, col: SSAValue) -> SSAValue | None:
        """Of the column tile from `col`, the columns inside N (a ragged N's last tile)."""
        if self.t.n % self.t.n1 == 0:
            return None
        v = valid_rows(col, index_const(self.t.n), self.t.n1)
        v.name_hint = "ncols"
        return v

    def l0_steps(self, bufs, a1, b1, valid, kk, kstart, lo: int, width: int, inside: SSAValue | None) -> None:
        """The kL0 steps over columns lo .. lo + width of the activation slice, which are
        columns 0 .. width of `b1`: of a ragged K's last slice only those that start
        inside K, the `inside` first columns (PyPTO's tail tile is that much shorter)."""
        t, nb = self.t, len(bufs["a0"])
        ub = inside or index_const(width)
        inner = Block(arg_types=[idx])
        with ImplicitBuilder(inner):
            k = inner.args[0]
            unrolled(
                nb,
                lambda q: arith.AddiOp(k, index_const(q * t.k0)).result if q else k,
                ub,
                lambda k_q, q: self.l0_step(bufs, a1, b1, valid, kk, kstart, k_q, lo, q),
            )
            scf.YieldOp()
        scf.ForOp(index_const(0), ub, index_const(nb * t.k0), [], Region(inner))

    def l0_step(self, bufs, a1, b1, valid, kk, kstart, k_b: SSAValue, lo: int, j: int) -> None:
        """One kL0 step into L0 copy j: column k_b of `b1`, lo + k_b of the slice."""
        k_in = arith.AddiOp(k_b, index_const(lo)).result if lo else k_b
        first = arith.AddiOp(arith.SubiOp(kk, kstart), k_in).result
        later = arith.CmpiOp(first, index_const(0), "ne").result
        a0, b0 = bufs["a0"][j], bufs["b0"][j]
        npu.WaitFlagOp(Pipe.CUBE, Pipe.MTE1, ev.L0_FREE + j)
        npu.DmaOp(Pipe.MTE1, b1, [0, k_b] if self.bt else [k_b, 0], b0, [0, 0], transpose=self.bt)
        npu.DmaOp(Pipe.MTE1, a1, [0, k_in], a0, [0, 0])
        sync(Pipe.MTE1, Pipe.CUBE, ev.L0_LOADED + j)
        npu.MmadOp(a0, b0, bufs["acc"], later, rows=valid)
        npu.SetFlagOp(Pipe.CUBE, Pipe.MTE1, ev.L0_FREE + j)

    # -- out through the fixpipe -----------------------------------------------------------

    def out(self, acc, row, cols, valid) -> None:
        col, ncols = cols
        sync(Pipe.CUBE, Pipe.FIXPIPE, ev.ACC_READY)
        for dst in self.outs:
            d_el = elem_name(npu.buf(dst).element_type)
            rnd = self.round_mode() if d_el != self.acc_name else None
            npu.FixpipeOp(acc, [0, 0], dst, [row, col], rows=valid, round=rnd, cols=ncols)
        sync(Pipe.FIXPIPE, Pipe.CUBE, ev.ACC_FREE)
