"""`tile-assign-shapes`: vector and cube tile shapes for every stage, checked against the target."""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import (
    DenseArrayBase,
    IntegerAttr,
    ModuleOp,
    StringAttr,
    TensorType,
    i64,
)
from xdsl.ir import BlockArgument, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import Rewriter

from pto.diagnostics import DiagnosticError
from pto.dialects import tile
from pto.dialects.common import (
    ELEM_BYTES,
    MATMUL_OUT,
    CubeTileAttr,
    Form,
    FormAttr,
    Layout,
    elem_name,
)
from pto.dialects.pto import tensor_type
from pto.targets import Target, UnknownTargetError, load_target, target_of

VEC_ROWS = (8, 4, 2, 1)  # the seed's `(4, hidden)`, more rows when UB allows
MHC_VEC_COLS = 2048  # the variant's long scans along the reduction axis
# Cube tile policy (the seed's SK03.md settings, not hardware limits): L0 tiles at most
# 128 rows (M) and 256 columns (N), as its standard `m = [128, 128]`, `n = [256, 256]`;
# N is halved, not below 64, while the tasks would leave over a fifth of the cube cores idle.
M_L0_MAX = 128
N_L0_MAX = 256
N_L0_MIN_SPLIT = 64
CORE_SHARE = 0.8
# kL0 candidates, largest first: SK03.md's largest K tile (512) halved down to one fractal.
K_L0 = (512, 256, 128, 64, 32, 16)
# kL1 = kL0 times the first of these whose L1 tiles fit (SK03.md's k = [256, 1024] is 4x).
K_L1_TIMES = (4, 2)
# L1 copies of each operand to leave room for when choosing kL1, in case tile-to-npu is
# asked for two (l1-buffers=2). The check asks only for one.
BUFFERS = 2
# The mhc_pre variant's tiles by the body's token rows (the seed's hc_pre settings):
# (rows up to, m, k, n, split-K); bodies taller than the last entry use the last.
MHC_TILES = (
    (32, [16, 16], [512, 1024], [128, 128], False),
    (64, [16, 16], [512, 1024], [128, 128], True),
    (None, [16, 16], [512, 2048], [128, 128], True),
)


def pad(x: int, fractal: int) -> int:
    """`x` rounded up to whole cube fractals (the target's `cube.fractal`)."""
    return -(-x // fractal) * fractal


def body_m(m: int, rows: int, fractal: int) -> int:
    """An M tile of `m` rows on a body of `rows` tokens: at most the body, fractal-padded
    (PyPTO specialises each body for its factor); pto-tune's pruning and estimate use it."""
    return min(m, pad(rows, fractal))


def _bytes(t: TensorType, rows: int | None = None, cols: int | None = None) -> int:
    shape = list(t.get_shape())
    if rows is not None:
        shape[0] = min(shape[0], rows)
    if cols is not None:
        shape[-1] = min(shape[-1], cols)
    n = ELEM_BYTES[elem_name(t.element_type)]
    for d in shape:
        n *= d
    return n


def _row_tiled(v: SSAValue, tile_rows: int) -> bool:
    t = v.type
    return isinstance(t, TensorType) and bool(t.get_shape()) and t.get_shape()[0] == tile_rows


def ub_need(stage: tile.VecStageOp, vec: list[int], tile_rows: int, copies: int | None = None) -> tuple[int, str]:
    """UB bytes a vector stage needs with tile `vec`: one buffer per distinct operand and
    result, token-tile ones cut to the vector tile and multiplied by `copies` (default:
    `nbuffer`, the tiles merged into one task, each in its own UB copy)."""
    nbuf = copies if copies is not None else stage.nbuffer.value.data if stage.nbuffer is not None else 1
    seen: set[SSAValue] = set()
    total, biggest, what = 0, 0, ""
    for op in stage.body.block.ops:
        if isinstance(op, tile.YieldOp) or isinstance(op, tile.ReshapeOp) and op.inplace is not None:
            continue  # an in-place reshape is a view: its result is counted where it is read
        for v in (*op.operands, *op.results):
            if v in seen or not isinstance(v.type, TensorType):
                continue
            seen.add(v)
            if _row_tiled(v, tile_rows):
                cols = vec[-1] if v.type.get_shape()[-1] > 1 else None
                b = _bytes(v.type, vec[0], cols) * nbuf
            else:
                b = _bytes(v.type)
            total += b
            if b > biggest:
                biggest, what = b, f"{v.type} ({op.name})"
    return total, what


def _check_width(st: tile.VecStageOp, vec: list[int], target: Target) -> None:
    """A vector instruction works on whole 32-byte blocks: a pinned tile narrower than a
    block of the stage's narrowest data (and than its rows) is not a tile the hardware
    runs (and would cut each row into thousands of chunk tasks)."""
    types = [v.type for o in st.body.block.ops for v in o.operands if isinstance(v.type, TensorType)]
    if not types:
        return
    width = max(t.get_shape()[-1] for t in types)
    block = target.block_bytes // min(ELEM_BYTES[elem_name(t.element_type)] for t in types)
    if vec[-1] < min(block, width):
        raise DiagnosticError(
            st,
            f"vector stage '{st.label.data}': tile {vec} is narrower than a "
            f"{target.block_bytes}-byte block of its data ({min(block, width)} elements)",
        )


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
            for loop in (o for o in f.walk() if isinstance(o, tile.TokenLoopOp)):
                for st in loop.body.block.ops:
                    if isinstance(st, tile.VecStageOp):
                        self.vector(st, loop.rows, target, mhc)
                    elif isinstance(st, tile.CubeStageOp):
                        self.cube(st, loop.rows, target, mhc)

    # ------------------------------------------------------------------ vector

    def vector(self, st: tile.VecStageOp, rows: int, target: Target, mhc: bool) -> None:
        cap = target.capacity("ub")
        if st.vec_tile is not None:
            # A pinned tile must fit once; fewer merged copies than nbuffer asks for are
            # tile-to-npu's call (it column-tiles or cuts rows, and says so).
            vec = list(st.vec_tile.get_values())
            _check_width(st, vec, target)
            need, what = ub_need(st, vec, rows, copies=1)
            if need > cap:
                raise DiagnosticError(
                    st,
                    f"vector stage '{st.label.data}': tile {vec} needs {need} bytes of ub "
                    f"(largest buffer {what}), but {target.name} has {cap}",
                )
            return
        data = next(
            (
                o.operands[0].type
                for o in st.body.block.ops
                # (views and per-row transposes are not the stage's data: its rank-2 rows are)
                if not isinstance(o, (tile.YieldOp, tile.ReshapeOp, tile.TransposeOp)) and o.operands
            ),
            None,
        )
        if not isinstance(data, TensorType):
            return
        shape = list(data.get_shape())
        cols = shape[-1]
        if mhc and cols > MHC_VEC_COLS and cols % MHC_VEC_COLS == 0:
            cols = MHC_VEC_COLS
        need, what = 0, ""
        for r in VEC_ROWS:
            if r > shape[0] and r != 1:
                continue
            vec = [r, *shape[1:-1], cols]
            need, what = ub_need(st, vec, rows)
            if need <= cap:
                st.vec_tile = DenseArrayBase.from_list(i64, vec)
                return
        raise DiagnosticError(
            st,
            f"vector stage '{st.label.data}': even a one-row tile needs {need} bytes of ub "
            f"(largest buffer {what}), but {target.name} has {cap}",
        )

    # -------------------------------------------------------------------- cube

    def cube(self, st: tile.CubeStageOp, rows: int, target: Target, mhc: bool) -> None:
        mm = st.matmul
        m, k, _, n = mm.mkn()
        in_elem = elem_name(tensor_type(mm.lhs).element_type)
        in_bytes, acc_bytes = ELEM_BYTES[in_elem], ELEM_BYTES[MATMUL_OUT[in_elem][0]]
        wanted = host_transpose_hint(mm)
        if st.tiles is None:
            if mhc:
                st.tiles = self.mhc_tiles(rows)
                if wanted is not False:
                    self.host_transpose(mm)
            else:
                st.tiles = self.choose(m, k, n, in_bytes, acc_bytes, 1, BUFFERS, BUFFERS, target)
        if wanted and mm.b_trans is not None:
            self.host_transpose(mm)
        st.tiles = self.clip_to_body(st.tiles, rows, target.cube.fractal)
        self.check(st, in_bytes, acc_bytes, target)

    @staticmethod
    def clip_to_body(t: CubeTileAttr, rows: int, fractal: int) -> CubeTileAttr:
        """A body of `rows` tokens is one tile along M at most (PyPTO specialises each
        body for its factor): an M tile larger than the body shrinks to it, fractal-padded."""
        (m0, m1), ax = t.axes["m"], t.axes
        m = body_m(m1, rows, fractal)
        if m1 <= m:
            return t
        m0 = min(m0, m)
        return CubeTileAttr([m0 if m % m0 == 0 else m, m], ax["k"], ax["n"], split_k=t.is_split_k)

    @staticmethod
    def mhc_tiles(rows: int) -> CubeTileAttr:
        _, m, k, n, split_k = next(e for e in MHC_TILES if e[0] is None or rows <= e[0])
        return CubeTileAttr(m, k, n, split_k=split_k)

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
    def choose(
        m: int, k: int, n: int, in_bytes: int, acc_bytes: int, nbuf: int, a_cp: int, w_cp: int, target: Target
    ) -> CubeTileAttr:
        fr = target.cube.fractal
        m0 = min(M_L0_MAX, pad(m, fr))
        n0 = min(N_L0_MAX, pad(n, fr))
        tasks = lambda n0: -(-m // m0) * -(-n // n0)  # noqa: E731
        while n0 > N_L0_MIN_SPLIT and tasks(n0) < CORE_SHARE * target.cube_cores:
            n0 //= 2
        while pad(m0, fr) * pad(n0, fr) * acc_bytes * nbuf > target.capacity("l0c") and n0 > fr:
            n0 //= 2
        k0 = next(
            (
                c
                for c in K_L0
                if c <= max(fr, pad(k, fr))
                and pad(m0, fr) * c * in_bytes * nbuf <= target.capacity("l0a")
                and pad(n0, fr) * c * in_bytes * nbuf <= target.capacity("l0b")
                and c * in_bytes % target.block_bytes == 0
            ),
            K_L0[-1],
        )
        k1 = k0
        for mult in K_L1_TIMES:
            cand = k0 * mult
            l1_rows = a_cp * pad(m0, fr) + w_cp * pad(n0, fr)
            if cand <= pad(k, fr) and l1_rows * cand * in_bytes <= target.capacity("l1"):
                k1 = cand
                break
        return CubeTileAttr([m0, m0], [k0, k1], [n0, n0])

    @staticmethod
    def check(st: tile.CubeStageOp, in_bytes: int, acc_bytes: int, target: Target) -> None:
        """One copy of each tile must fit (tile-to-npu adds copies only where they fit)."""
        assert st.tiles is not None
        # A tile larger than the data only occupies the (fractal-padded) data.
        m, k, _, n = st.matmul.mkn()
        fr = target.cube.fractal
        dims = zip(st.tiles.axes.items(), (m, k, n), strict=False)
        ax = {a: [min(v, pad(d, fr)) for v in vals] for (a, vals), d in dims}
        m0, m1 = ax["m"]
        n0, n1 = ax["n"]
        k0, k_a1, k_b1 = ax["k"][0], ax["k"][1], ax["k"][-1]
        el = elem_name(tensor_type(st.matmul.lhs).element_type)
        label = st.label.data
        needs = [
            ("l0a", f"L0A tile m={m0} x k={k0} {el}", pad(m0, fr) * pad(k0, fr) * in_bytes),
            ("l0b", f"L0B tile k={k0} x n={n0} {el}", pad(n0, fr) * pad(k0, fr) * in_bytes),
            ("l0c", f"L0C tile m={m0} x n={n0} accumulator", pad(m0, fr) * pad(n0, fr) * acc_bytes),
            (
                "l1",
                f"L1 tiles m={m1} x k={k_a1} + n={n1} x k={k_b1} of {el}",
                (pad(m1, fr) * pad(k_a1, fr) + pad(n1, fr) * pad(k_b1, fr)) * in_bytes,
            ),
        ]
        for space, what, need in needs:
            if need > target.capacity(space):
                raise DiagnosticError(
                    st,
                    f"cube stage '{label}': {what} needs {need} bytes of {space}, "
                    f"but {target.name} has {target.capacity(space)}",
                )
