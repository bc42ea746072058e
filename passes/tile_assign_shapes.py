"""`tile-assign-shapes`: vector and cube tile shapes for every stage, checked against the target."""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import (
    DenseArrayBase,
    DictionaryAttr,
    IntegerAttr,
    ModuleOp,
    StringAttr,
    TensorType,
    i64,
)
from xdsl.ir import Block, BlockArgument, Operation, Region
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from pto.diagnostics import DiagnosticError, warn
from pto.dialects import tile
from pto.dialects.common import (
    ELEM_BYTES,
    MATMUL_OUT,
    Form,
    FormAttr,
    Layout,
    elem_name,
)
from pto.dialects.pto import tensor_type
from pto.dialects.tile import PhaseAttr
from pto.planning import columns, weights
from pto.planning import vector as vp
from pto.planning.columns import Plan
from pto.planning.cube import BUFFERS, choose, clip_to_body, fit, mhc_tiles, pad
from pto.planning.vector import VEC_ROWS
from pto.targets import Target, UnknownTargetError, load_target, target_of

MHC_VEC_COLS = 2048  # the variant's long scans along the reduction axis


def _check_width(st: tile.VecStageOp, vec: list[int], target: Target) -> None:
    """A vector instruction works on whole 32-byte blocks: a pinned tile narrower than a
    block of the stage's narrowest data (and than its rows) is widened to one block, and
    said (PyPTO 0.2.0 accepts such a tile, `(8, 1)` the leading sizes of a rank-3 one on
    a 2-D op, and would cut each row into a task per column or so)."""
    types = [v.type for o in st.body.block.ops for v in o.operands if isinstance(v.type, TensorType)]
    if not types:
        return
    width = max(t.get_shape()[-1] for t in types)
    block = target.block_bytes // min(ELEM_BYTES[elem_name(t.element_type)] for t in types)
    if vec[-1] < min(block, width):
        wide = [*vec[:-1], min(block, width)]
        warn(
            st,
            f"vector stage '{st.label.data}': tile {vec} is narrower than a "
            f"{target.block_bytes}-byte block of its data ({min(block, width)} elements): widened to {wide} "
            "(where a tile of more sizes was set, a 2-D op takes its first ones, as in PyPTO)",
        )
        st.vec_tile = DenseArrayBase.from_list(i64, wide)


def host_transpose_hint(mm: tile.MatmulOp) -> bool | None:
    """The weight's `pto.host_transpose` argument hint: passed [K, N] (true), as it is
    (false), or the pass's choice (absent: the mhc_pre variant's own tiles transpose it)."""
    src = mm.rhs.owner
    view = isinstance(src, tile.ViewOp)
    if isinstance(src, tile.ViewOp):
        src = src.input.owner
    if isinstance(src, tile.LoadOp) and src.host_transpose is not None:
        return True  # done already
    if isinstance(src, tile.LoadOp) and src.layout is not None and src.layout.data == Layout.NZ:
        return False  # stored in fractals by the caller: the host does not re-lay it out
    arg = src.source if isinstance(src, tile.LoadOp) else None
    if (
        not isinstance(arg, BlockArgument)
        or not isinstance(f := arg.block.parent_op(), func.FuncOp)
        or f.arg_attrs is None
    ):
        return None
    hint = f.arg_attrs.data[arg.index].data.get("pto.host_transpose")
    if not isinstance(hint, IntegerAttr):
        return None
    if hint.value.data and (view or mm.b_trans is None):
        what = "read through a view" if view else "the matmul reads as [K, N] already (no b_trans)"
        raise DiagnosticError(
            mm,
            f"'pto.host_transpose' on a weight {what}: only a whole [N, K] weight "
            "used with b_trans is passed transposed",
        )
    return bool(hint.value.data)


@dataclass(frozen=True)
class TileAssignShapesPass(ModulePass):
    """Choose vector tiles and per-axis cube tiles for every stage, and check them.

    Vector stages: `[r, C]` (whole rows, r the largest of 8, 4, 2, 1 within the tile
    height whose UB working set, n-buffered token tiles included, fits); the mhc_pre
    variant scans `[min(8, R), 2048]` along its long reduction axis. Cube stages:
    m = [M fractal-padded, up to 128]*2, n = [up to 256, halved while too few tasks for the
    cores]*2, k = [the largest kL0 whose L0A/L0B tiles fit, 4*kL0 if L1 allows]; the
    mhc_pre variant takes its settings as a whole by tile height t: m=[16,16]
    k=[512,1024] n=[128,128] for t <= 32, split-K from t > 32, k=[512,2048] for t > 64,
    and a weight transposed once on the host instead of `b_trans`. Pinned shapes are
    kept. Every choice is checked against the target: L0A/L0B/L0C/L1/UB capacities with
    their n-buffered copies (a tile larger than its data counts as the 16-padded data),
    32-byte alignment, L0 <= L1 and L1 % L0 == 0; a violation names the buffer, its level
    and the bytes needed and available.
    """

    name = "tile-assign-shapes"

    target: str = ""

    def __post_init__(self) -> None:
        if self.target:  # an unknown name is a bad command line (UnknownTargetError is a ValueError)
            load_target(self.target)

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for f in op.walk():
            if not isinstance(f, func.FuncOp):
                continue
            try:
                target = load_target(self.target) if self.target else target_of(f)
            except UnknownTargetError as e:
                raise DiagnosticError(f, str(e)) from None
            if self.target:
                f.attributes["pto.target"] = StringAttr(self.target)
            form = f.attributes.get("pto.form")
            mhc = isinstance(form, FormAttr) and form.data == Form.MHC_PRE
            options = f.attributes.get("pto.options")
            names = set(options.data) if isinstance(options, DictionaryAttr) else set()
            said: dict[tuple, list] = {}  # a cut made in several unrolled bodies: one warning
            cap = target.capacity("ub")
            for st in [o for o in f.body.block.ops if tile.is_weight_stage(o)]:
                self.weight_stage(st, target)
            for loop in (o for o in f.walk() if isinstance(o, tile.TokenLoopOp)):
                pinned = {st for st in loop.body.block.ops if isinstance(st, tile.VecStageOp) and st.vec_tile}
                for st in loop.body.block.ops:
                    if isinstance(st, tile.VecStageOp):
                        self.vector(st, loop.rows, target, mhc)
                    elif isinstance(st, tile.CubeStageOp):
                        self.cube(st, loop.rows, target, mhc)
                stages = [o for o in loop.body.block.ops if isinstance(o, tile.StageBase)]
                cube = next((i for i, o in enumerate(stages) if isinstance(o, tile.CubeStageOp)), len(stages))
                for phase in vp.phases(loop):
                    post = cube < stages.index(phase[0])
                    self.plan_phase(phase, loop.rows, target, pinned, names, said, post)
            for (_, what, why), at in said.items():
                bodies = ", ".join(str(rows) for rows in sorted(rows for _, rows, _ in at))
                most = max(n for *_, n in at)
                where = f"in the {bodies}-token bod{'ies' if len(at) > 1 else 'y'}"
                warn(at[0][0], f"{what}: {why} needs {most} bytes of ub as pinned, {target.name} has {cap} ({where})")

    # ------------------------------------------------------------------ vector

    @staticmethod
    def weight_stage(st: tile.VecStageOp, target: Target) -> None:
        """A weight stage's tile `[r, c]` of its result: the pinned one (else the whole
        result) cut to divide it and to fit UB, said when a pinned one is cut."""
        res = tensor_type(st.results[0])
        if len(st.results) != 1 or res.get_num_dims() != 2:
            raise DiagnosticError(st, f"a weight stage of one rank-2 result is tiled here, got {res}")
        whole = (res.get_shape()[0], res.get_shape()[1])
        pinned = st.vec_tile.get_values() if st.vec_tile is not None else None
        if pinned is not None and len(pinned) != 2:
            raise DiagnosticError(st, f"weight stage '{st.label.data}': tile {list(pinned)} for rank-2 data")
        wanted = (pinned[0], pinned[1]) if pinned is not None else whole
        cap = target.capacity("ub")
        rc = weights.choose(st, whole, wanted, cap, target.block_bytes)
        if rc is None:  # (columns are cut to whole blocks that divide the row: a long prime row is not)
            one = (1, min(whole[1], wanted[1]))
            nbytes = weights.need(st, whole, one, target.block_bytes)
            raise DiagnosticError(
                st,
                f"weight stage '{st.label.data}': a tile {list(one)} needs {nbytes} bytes of ub, "
                f"but {target.name} has {cap}",
            )
        asked = (min(wanted[0], whole[0]), min(wanted[1], whole[1]))
        if pinned is not None and rc != asked:
            nbytes = weights.need(st, whole, asked, target.block_bytes)
            why = (
                f"it needs {nbytes} bytes of ub, {target.name} has {cap}"
                if nbytes > cap
                else f"it does not divide the {list(whole)} weight"
            )
            warn(st, f"weight stage '{st.label.data}': tile {list(pinned)} cut to {list(rc)} ({why})")
        st.vec_tile = DenseArrayBase.from_list(i64, list(rc))
        st.nbuffer = IntegerAttr(1, i64)

    def vector(self, st: tile.VecStageOp, rows: int, target: Target, mhc: bool) -> None:
        """The stage's own tile: a pinned one is kept; otherwise the most rows of
        VEC_ROWS whose tile fits once (rows save more vector instructions than copies;
        the phase plan then merges as many copies as fit)."""
        cap, block = target.capacity("ub"), target.block_bytes
        if st.vec_tile is not None:  # (its rows are cut with a warning if the phase does not fit)
            _check_width(st, list(st.vec_tile.get_values()), target)
            return
        shape = vp.data_shape(st, vp.gm_views(vp.loop_stages([st])))
        if shape is None:
            return
        cols = shape[-1]
        if mhc and cols > MHC_VEC_COLS and cols % MHC_VEC_COLS == 0:
            cols = MHC_VEC_COLS
        for r in VEC_ROWS:
            if r > shape[0] and r != 1:
                continue
            if vp.need([st], min(r, rows), 1, self.stage_columns(st, cols), block).bytes <= cap:
                st.vec_tile = DenseArrayBase.from_list(i64, [r, *shape[1:-1], cols])
                return
        # Not even one whole row fits: one row, which the phase plan cuts into column chunks
        # (or refuses, naming the bytes, if the phase cannot be column-tiled).
        st.vec_tile = DenseArrayBase.from_list(i64, [1, *shape[1:-1], cols])

    @staticmethod
    def stage_columns(st: tile.VecStageOp, cw: int) -> Plan | None:
        """The column plan of a stage alone with chunks `cw` wide, if its rows are wider."""
        views = vp.gm_views(vp.loop_stages([st]))
        k = vp.data_cols(st, views)
        p = columns.plan([st], views, k, cw) if cw < k else None
        return p if isinstance(p, Plan) else None

    # ------------------------------------------------------------------- phases

    def plan_phase(
        self,
        phase: list[tile.VecStageOp],
        rows: int,
        target: Target,
        pinned: set,
        options,
        said: dict[tuple, list],
        post: bool = False,
    ) -> None:
        """Decide the phase's tile rows, copies and column chunks (`#tile.phase` on its
        first stage): the stages' own rows with the copies nbuffer asks for if they fit,
        else fewer copies, column chunks, fewer rows (vector.candidates' order), each
        reduction of what was pinned said in a warning. A pinned plan is checked."""
        first, cap, block = phase[0], target.capacity("ub"), target.block_bytes
        label = first.label.data
        views = vp.gm_views(vp.loop_stages(phase))
        for st in phase[1:]:
            if st.phase is not None:
                raise DiagnosticError(
                    st, f"vector stage '{st.label.data}': a phase plan goes on its phase's first stage '{label}'"
                )
        # The phase's nbuffer is its stages' largest, recorded (with the plan) on its first stage.
        asked = max((st.nbuffer.value.data for st in phase if st.nbuffer is not None), default=1)
        if asked > (most := vp.max_copies(target.sync.event_ids)):
            raise DiagnosticError(
                first, f"vector stage '{label}': nbuffer {asked} (at most {most}: two event ids per copy)"
            )
        if asked > 1:
            first.nbuffer = IntegerAttr(asked, i64)
        if first.phase is not None:
            self.check_pinned_plan(phase, first.phase, views, target)
            return
        chosen = min([rows, *(int(st.vec_tile.get_values()[0]) for st in phase if st.vec_tile is not None)])
        want = self.pinned_columns(phase, views)
        rows_pinned = any(st in pinned for st in phase)
        pinned_rows = min([rows, *(int(st.vec_tile.get_values()[0]) for st in phase if st in pinned and st.vec_tile)])
        keep = "vec_nbuffer_setting" in options and not rows_pinned
        c = vp.choose(phase, rows, chosen, asked, want, cap, block, keep_copies=keep)
        if isinstance(c, vp.Need) and post and (at := vp.cuts(phase, cap, block)):
            # After the cube nothing waits for the phase but the next one: cut it into parts
            # that fit, each a phase of its own (`vp.post_phases`), their values through GM.
            parts = cut_phase(phase, at, pinned)
            for st in (st for part in parts for st in part if st.vec_tile is None):  # a part's own tile
                self.vector(st, rows, target, False)
            why = f"one row of the fused phase needs {c.bytes} bytes of ub ({target.name} has {cap})"
            warn(first, f"vector stage '{label}': {why}: cut into {len(parts)} phases, their values through GM")
            for part in parts:
                self.plan_phase(part, rows, target, pinned, options, said)
            return
        if isinstance(c, vp.Need):
            raise DiagnosticError(
                first,
                f"vector stage '{label}': even a one-row tile of the fused phase ({len(phase)} stage(s)) needs "
                f"{c.bytes} bytes of ub (largest buffer {c.largest}), but {target.name} has {cap}",
            )
        first.phase = PhaseAttr(c.rows, c.copies, c.cols.cw if c.cols else None, c.cols.k if c.cols else None)
        asked = min(asked, -(-rows // chosen) * vp.chunk_tasks(want))  # (a body of fewer tiles merges fewer)
        if (c.rows, c.copies, c.cols) != (chosen, asked, want) or rows_pinned and c.rows < pinned_rows:
            # The bytes of what was pinned: the pinned rows (whole rows or the pinned
            # chunks) with every copy asked for.
            full = vp.need(phase, pinned_rows if rows_pinned else chosen, asked, want, block).bytes
            why = f"the fused phase ({len(phase)} stage(s))"  # (each unrolled body is planned for its own rows)
            cuts = [
                (rows_pinned and c.rows < pinned_rows, f"tile rows {pinned_rows} -> {c.rows}"),
                (
                    "vec_nbuffer_setting" in options and c.copies < asked,
                    f"vec_nbuffer_setting {asked} -> {c.copies} tiles merged per task (each in a UB copy of its own)",
                ),
                (
                    rows_pinned and c.cols is not None and want is None,
                    f"pinned whole rows -> column chunks of {c.cols and c.cols.cw}",
                ),
            ]
            for cut, what in cuts:
                if cut:
                    key = (first.location, f"vector stage '{label}': {what}", why)
                    said.setdefault(key, []).append((first, rows, full))

    @staticmethod
    def check_pinned_plan(phase: list[tile.VecStageOp], ph: PhaseAttr, views, target: Target) -> None:
        """A plan pinned by a user or the tuner is kept if its task fits UB."""
        label, cap, cols = phase[0].label.data, target.capacity("ub"), None
        if ph.columns is not None:
            p = columns.plan(phase, views, *ph.columns)
            if isinstance(p, str):
                raise DiagnosticError(phase[0], f"vector stage '{label}': phase {ph} cannot be column-tiled: {p}")
            cols = p
        if ph.copies.data > (most := vp.max_copies(target.sync.event_ids)):
            raise DiagnosticError(
                phase[0],
                f"vector stage '{label}': phase copies {ph.copies.data} (at most {most}: two event ids per copy)",
            )
        n = vp.need(phase, ph.rows.data, ph.copies.data, cols, target.block_bytes)
        if n.bytes > cap:
            raise DiagnosticError(
                phase[0],
                f"vector stage '{label}': phase <{ph.rows.data} rows, {ph.copies.data} copies> needs "
                f"{n.bytes} bytes of ub (largest buffer {n.largest}), but {target.name} has {cap}",
            )

    @staticmethod
    def pinned_columns(phase: list[tile.VecStageOp], views) -> Plan | None:
        """The column plan a stage's narrow vector tile asks for, if the phase allows it."""
        narrow = vp.pinned_columns(phase)
        if narrow is None:
            return None
        k, cw = narrow
        said = None
        if k % cw and (fit := vp.dividing_chunk(k, cw)) is not None:
            # PyPTO runs a last, narrower chunk; chunks here are equal: the widest that divides
            st = next(st for st in phase if st.vec_tile is not None and int(st.vec_tile.get_values()[-1]) == cw)
            tile_ = list(st.vec_tile.get_values())  # type: ignore[union-attr]
            said = st, f"vector tile {tile_}: its width {cw} does not divide the {k}-column row: column chunks of {fit}"
            narrow = (k, fit)
        p = columns.plan(phase, views, *narrow)
        if said is not None and not isinstance(p, str):  # (said only of chunks that are made)
            warn(*said)
        if isinstance(p, str):
            st = next(st for st in phase if st.vec_tile is not None and int(st.vec_tile.get_values()[-1]) < narrow[0])
            warn(
                st,
                f"vector tile {list(st.vec_tile.get_values())} is narrower than the {narrow[0]}-column row, but "  # type: ignore[union-attr]
                f"{p}: each task processes whole rows",
            )
            return None
        return p

    # -------------------------------------------------------------------- cube

    def cube(self, st: tile.CubeStageOp, rows: int, target: Target, mhc: bool) -> None:
        mm = st.matmul
        m, k, _, n = mm.mkn()
        in_elem = elem_name(tensor_type(mm.lhs).element_type)
        in_bytes, acc_bytes = ELEM_BYTES[in_elem], ELEM_BYTES[MATMUL_OUT[in_elem][0]]
        wanted = host_transpose_hint(mm)
        if st.tiles is None:
            if mhc:
                st.tiles = mhc_tiles(rows)
                if wanted is not False:
                    self.host_transpose(mm)
            else:
                st.tiles = choose(m, k, n, in_bytes, acc_bytes, 1, BUFFERS, BUFFERS, target)
        if wanted and mm.b_trans is not None:
            self.host_transpose(mm)
        st.tiles = clip_to_body(st.tiles, rows, target.cube.fractal)
        st.tiles, said = fit(st.tiles, k, n, in_bytes, target, MATMUL_OUT[in_elem][0])
        for what in said:
            warn(st, f"cube stage '{st.label.data}': pinned tiles changed to run here: {what}")
        self.check(st, in_bytes, acc_bytes, target)

    @staticmethod
    def host_transpose(mm: tile.MatmulOp) -> None:
        """Replace `b_trans` by a weight laid out [K, N] once on the host."""
        load = mm.rhs.owner
        if mm.b_trans is None or not isinstance(load, tile.LoadOp) or load.row is not None:
            return
        t = load.result.type
        assert isinstance(t, TensorType)
        k_n = TensorType(t.element_type, list(reversed(t.get_shape())))
        new = tile.LoadOp(load.source, k_n, cache=load.cache.data if load.cache else None, host_transpose=True)
        new.location = load.location
        new.result.name_hint = load.result.name_hint
        Rewriter().replace_op(load, new)
        mm.b_trans = None

    @staticmethod
    def check(st: tile.CubeStageOp, in_bytes: int, acc_bytes: int, target: Target) -> None:
        """One copy of each tile must fit (tile-to-npu adds copies only where they fit)."""
        assert st.tiles is not None
        # A tile larger than the data only occupies the (fractal-padded) data.
        m, k, _, n = st.matmul.mkn()
        fr = target.cube.fractal
        dims = zip(st.tiles.axes.items(), (m, k, n), strict=False)
        ax = {a: [min(v, pad(d, fr)) for v in vals] for (a, vals), d in dims}
        # A cube task is one mL0 x nL0 block of the output, as in PyPTO: L1 holds mL0 rows
        # of the activation and nL0 of the weight (tile-to-npu emits so); the L1 entries
        # of M and N do not size a buffer.
        m0, n0 = ax["m"][0], ax["n"][0]
        k0, k_a1, k_b1 = ax["k"][0], ax["k"][1], ax["k"][-1]
        el = elem_name(tensor_type(st.matmul.lhs).element_type)
        label = st.label.data
        needs = [
            ("l0a", f"L0A tile m={m0} x k={k0} {el}", pad(m0, fr) * pad(k0, fr) * in_bytes),
            ("l0b", f"L0B tile k={k0} x n={n0} {el}", pad(n0, fr) * pad(k0, fr) * in_bytes),
            ("l0c", f"L0C tile m={m0} x n={n0} accumulator", pad(m0, fr) * pad(n0, fr) * acc_bytes),
            (
                "l1",
                f"L1 tiles m={m0} x k={k_a1} + n={n0} x k={k_b1} of {el}",
                (pad(m0, fr) * pad(k_a1, fr) + pad(n0, fr) * pad(k_b1, fr)) * in_bytes,
            ),
        ]
        for space, what, need in needs:
            if need > target.capacity(space):
                raise DiagnosticError(
                    st,
                    f"cube stage '{label}': {what} needs {need} bytes of {space}, "
                    f"but {target.name} has {target.capacity(space)}",
                )


def cut_phase(phase: list[tile.VecStageOp], at: list[int], pinned: set) -> list[list[tile.VecStageOp]]:
    """The phase cut before the ops `vp.part_ops(phase)[i]`, i in `at`: a cut inside a
    stage splits it in two (`split_stage`; the halves of a stage whose tile is `pinned`
    keep it, the others get their own). The parts, in order."""
    ops = vp.part_ops(phase)
    starts = {ops[i] for i in at}
    parts: list[list[tile.VecStageOp]] = [[]]
    for st in phase:
        label, n = st.label.data, 0
        while True:
            body = [o for o in st.body.block.ops if o in ops]
            k = next((i for i, o in enumerate(body) if o in starts and i > 0), None)
            if body and body[0] in starts and parts[-1]:
                parts.append([])
            if k is None:
                parts[-1].append(st)
                break
            n += 1
            keep = st in pinned
            head, st = split_stage(st, body[k], f"{label}.{n}", keep)
            pinned |= {head, st} if keep else set()
            parts[-1].append(head)
            parts.append([])
    return parts


def split_stage(
    st: tile.VecStageOp, at: Operation, name: str, keep_tile: bool
) -> tuple[tile.VecStageOp, tile.VecStageOp]:
    """`st` as two stages, the second (`name`) from op `at` on: the first yields what the
    second reads of it and the results of `st` it computes; uses are rewired, `st` erased."""
    block = st.body.block
    ret = block.last_op
    assert isinstance(ret, tile.YieldOp)
    ops = [o for o in block.ops if o is not ret]
    k = ops.index(at)
    head, tail = ops[:k], set(ops[k:])
    head_set = set(head)
    made = [r for o in head for r in o.results]
    first_out = [r for r in made if r in ret.operands or any(u.operation in tail for u in r.uses)]
    second_out = [v for v in ret.operands if not (isinstance(v.owner, Operation) and v.owner in head_set)]
    stages = []
    for part, outs, label in ((head, first_out, st.label.data), (ops[k:], second_out, name)):
        region = Region(Block())
        for o in part:
            o.detach()
            region.block.add_op(o)
        region.block.add_op(tile.YieldOp(*outs))
        new = tile.VecStageOp(label, region, [v.type for v in outs])
        drop = ("label", "phase") if keep_tile else ("label", "phase", "vec_tile")
        new.properties.update({n: a for n, a in st.properties.items() if n not in drop})
        new.attributes.update(st.attributes)
        new.location = st.location
        Rewriter.insert_op(new, InsertPoint.before(st))
        stages.append(new)
    a, b = stages
    for v, r in zip(first_out, a.results, strict=True):
        v.replace_uses_with_if(r, lambda u: u.operation in tail)
    results = {**dict(zip(first_out, a.results, strict=True)), **dict(zip(second_out, b.results, strict=True))}
    for v, r in zip(ret.operands, st.results, strict=True):
        r.replace_all_uses_with(results[v])
    ret.detach()
    ret.erase()
    st.detach()
    st.erase()
    return a, b
