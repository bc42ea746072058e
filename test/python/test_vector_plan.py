"""The vector phase plan (planning/vector.py): tile-assign-shapes decides it and measures
UB with `need`; tile-to-npu emits it. The two must place every task alike."""

from __future__ import annotations

from pathlib import Path

import pytest
from kernels import context, example, parse
from xdsl.dialects.builtin import ModuleOp

from pto.dialects import npu, tile
from pto.lowering.pto_sk03_pipeline import PtoSk03PipelinePass
from pto.planning import columns
from pto.planning import vector as vp
from pto.planning.ub import Arena
from pto.targets import load_target

TESTS = Path(__file__).resolve().parents[1]
BLOCK = load_target().block_bytes


def planned(module: ModuleOp) -> list[tuple[str, tuple[int, ...]]]:
    """(first stage, every UB buffer's offset in allocation order) of every phase, in the
    order tile-to-npu emits them."""
    out = []
    for loop in (o for o in module.walk() if isinstance(o, tile.TokenLoopOp)):
        for phase in vp.phases(loop):
            ph = phase[0].phase
            assert ph is not None
            cols = columns.plan(phase, vp.gm_views(vp.loop_stages(phase)), *ph.columns) if ph.columns else None
            assert not isinstance(cols, str)
            out.append((phase[0].label.data, vp.need(phase, ph.rows.data, ph.copies.data, cols, BLOCK).offsets))
    return out


def emitted(module: ModuleOp) -> list[tuple[str, tuple[int, ...]]]:
    """(group label, its task's UB buffers' offsets in program order) of every vector
    group but the split-K sums."""
    out = []
    for g in (o for o in module.walk() if isinstance(o, npu.TasksOp) and o.kind.data == "vector"):
        if not g.label.data.endswith(".sum"):
            offsets = tuple(
                a.offset.value.data for a in g.walk() if isinstance(a, npu.AllocOp) and a.offset is not None
            )
            out.append((g.label.data, offsets))
    return out


def lower_both(module: ModuleOp) -> tuple[list, list]:
    *before, last = PtoSk03PipelinePass().passes()
    ctx = context()
    for p in before:
        p.apply(ctx, module)
    plan = planned(module)
    last.apply(ctx, module)
    return plan, emitted(module)


def tile_chunks() -> list[str]:
    """The hand-written tile IR of the tile-to-npu lit test that lowers (chunks with a vector stage)."""
    text = (TESTS / "lowering" / "tile-to-npu.mlir").read_text()
    return [c for c in text.split("// -----") if "tile.vec_stage" in c and "expected-error" not in c]


def agree(plan: list, made: list) -> None:
    """Each phase's buffers at the same offsets, in the same order, in both."""
    assert len(plan) == len(made)
    for (stage, need), (label, got) in zip(plan, made, strict=True):
        assert label.startswith(stage + "."), (stage, label)
        assert need == got, f"{label}: planned ub offsets {need}, emitted {got}"


@pytest.mark.parametrize(
    "name",
    [
        "sk03_standard.mlir",
        "indexer_query_linear_int8.mlir",
        "mla_wkv_rmsnorm.mlir",
        "mla_wqa_qrmsnorm.mlir",
        "hc_pre.mlir",
    ],
)
def test_planner_and_emitter_place_the_examples_alike(name: str) -> None:
    agree(*lower_both(example(name)))


@pytest.mark.parametrize("n", range(len(tile_chunks())))
def test_planner_and_emitter_place_hand_written_phases_alike(n: int) -> None:
    from pto.lowering.tile_to_npu import TileToNpuPass
    from pto.passes.tile_assign_shapes import TileAssignShapesPass

    module = parse(tile_chunks()[n])
    TileAssignShapesPass().apply(context(), module)
    plan = planned(module)
    # (a weight stage's tasks are planned by planning/weights.py, not as a phase)
    weights = {st.label.data for st in module.walk() if isinstance(st, tile.VecStageOp) and st.phase is None}
    TileToNpuPass().apply(context(), module)
    agree(plan, [(label, got) for label, got in emitted(module) if label not in weights])


def test_liveness_fits_the_primitives_rmsnorm_pypto_compiles() -> None:
    """Issue 32's case: an RMSNorm written from primitives with PyPTO's `(4, H)` tiles fits
    with its 4 rows (whole rows at H = 4096: two f32 tiles live at a time, not every
    intermediate; column chunks of half a row at H = 7168, said in a warning)."""
    for h, chunk in ((4096, None), (7168, 3584)):
        module = parse(PRIMITIVES_NORM.replace("HH", str(h)).replace("INV", repr(1.0 / h)))
        *before, last = PtoSk03PipelinePass().passes()
        for p in before:
            p.apply(context(), module)
        first = next(o for o in module.walk() if isinstance(o, tile.VecStageOp))
        assert first.phase is not None and first.phase.rows.data == 4
        assert (first.phase.columns or (0, None))[1] == chunk
        plan = planned(module)
        last.apply(context(), module)
        agree(plan, emitted(module))


PRIMITIVES_NORM = """
func.func @k(%x: tensor<?xHHxbf16>, %g: tensor<HHxbf16>, %w: tensor<256xHHxbf16>) -> tensor<?x256xf32> {
  %xf = pto.cast %x none {pto.vec_tile = array<i64: 4, HH>} : tensor<?xHHxbf16> -> tensor<?xHHxf32>
  %sq = pto.mul %xf, %xf {pto.vec_tile = array<i64: 4, HH>} : tensor<?xHHxf32>, tensor<?xHHxf32> -> tensor<?xHHxf32>
  %s = pto.reduce sum %sq {pto.vec_tile = array<i64: 4, HH>} : tensor<?xHHxf32> -> tensor<?x1xf32>
  %m = pto.muls %s, INV {pto.vec_tile = array<i64: 4, HH>} : tensor<?x1xf32> -> tensor<?x1xf32>
  %e = pto.adds %m, 1.0e-06 {pto.vec_tile = array<i64: 4, HH>} : tensor<?x1xf32> -> tensor<?x1xf32>
  %r = pto.sqrt %e {pto.vec_tile = array<i64: 4, HH>} : tensor<?x1xf32> -> tensor<?x1xf32>
  %n = pto.div %xf, %r {pto.vec_tile = array<i64: 4, HH>} : tensor<?xHHxf32>, tensor<?x1xf32> -> tensor<?xHHxf32>
  %gf = pto.cast %g none {pto.vec_tile = array<i64: HH>} : tensor<HHxbf16> -> tensor<HHxf32>
  %y = pto.mul %n, %gf {pto.vec_tile = array<i64: 4, HH>} : tensor<?xHHxf32>, tensor<HHxf32> -> tensor<?xHHxf32>
  %yb = pto.cast %y rint {pto.vec_tile = array<i64: 4, HH>} : tensor<?xHHxf32> -> tensor<?xHHxbf16>
  %o = pto.matmul %yb, %w b_trans : tensor<?xHHxbf16>, tensor<256xHHxbf16> -> tensor<?x256xf32>
  func.return %o : tensor<?x256xf32>
}
"""


def test_a_column_chunk_loop_frees_what_it_has_read_last() -> None:
    """An outside author's bias + GELU post phase (e33): `(4, 2048)` tiles over 8192-wide
    rows run as column chunks (exp and reciprocal are elementwise) and keep their 4 rows:
    each chunk value is freed after its last reader, so about three chunks are live at a
    time, not every intermediate (seven, which would need the rows cut to 2)."""
    module = parse(GELU_POST)
    *before, last = PtoSk03PipelinePass().passes()
    for p in before:
        p.apply(context(), module)
    post = next(o for o in module.walk() if isinstance(o, tile.VecStageOp))  # (the 16-token body)
    assert post.phase is not None and post.phase.rows.data == 4 and post.phase.columns == (8192, 2048)
    plan = planned(module)
    last.apply(context(), module)
    agree(plan, emitted(module))


def test_a_reduction_of_a_normalised_row_runs_in_three_passes() -> None:
    """RMSNorm, then the amax of the normalised row and the row divided by amax / 127
    (a per-token quant as an author writes it, not fused), at `(4, 128)` tiles of a
    1024-wide row: three passes over the chunks (sum of squares, amax, the quotient), not
    whole rows; both engines bit for bit, the golden, planner and emitter alike."""
    import warnings

    import ml_dtypes
    import numpy as np

    import pto
    import pto.pypto as pypto
    from pto.interp.golden import check

    h, n, bf16, fp32 = 1024, 64, pypto.DT_BF16, pypto.DT_FP32

    @pypto.frontend.jit
    def k(
        x: pypto.Tensor([pypto.DYNAMIC, h], bf16),
        w: pypto.Tensor([n, h], bf16),
        out: pypto.Tensor([pypto.DYNAMIC, n], fp32),
        scale_out: pypto.Tensor([pypto.DYNAMIC, 1], fp32),
    ):
        for i, p in pypto.loop_unroll(0, x.shape[0], 1, unroll_list=[8, 1]):
            pypto.set_vec_tile_shapes(4, 128)
            xt = pypto.cast(pypto.view(x, [p, h], [i, 0]), fp32)
            xn = xt * pypto.rsqrt(pypto.sum(xt * xt, -1, keepdim=True) / h + 1e-6)
            scale = pypto.amax(pypto.abs(xn), -1, keepdim=True) / 127.0
            q = pypto.cast(pypto.round(xn / scale), bf16)
            pypto.assemble(pypto.matmul(q, w, fp32, b_trans=True), [i, 0], out)
            pypto.assemble(scale, [i, 0], scale_out)

    t = 13
    rng = np.random.default_rng(7)
    x = rng.standard_normal((t, h)).astype(ml_dtypes.bfloat16)
    w = rng.standard_normal((n, h)).astype(ml_dtypes.bfloat16)
    out, scale_out = np.zeros((t, n), np.float32), np.zeros((t, 1), np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("error", pypto.LoweringWarning)  # (no "whole rows", no rows cut)
        warnings.filterwarnings("ignore", "pto.pypto: k: .*remark")
        k(x, w, out, scale_out)
    xf = x.astype(np.float64)
    xn = xf / np.sqrt((xf * xf).mean(-1, keepdims=True) + 1e-6)
    s = np.abs(xn).max(-1, keepdims=True) / 127
    assert check(scale_out, s).ok
    q = np.rint(xn / s)
    assert check(out, q @ w.astype(np.float64).T).ok
    module = k.trace(x, w, out, scale_out)
    compiled = pto.compile(module)
    runs = [pto.run(compiled, [x, w], engine=e) for e in ("interp", "compiled")]
    assert all(np.array_equal(a, b) for a, b in zip(runs[0].outputs, runs[1].outputs, strict=True))
    *before, last = PtoSk03PipelinePass().passes()
    module = k.trace(x, w, out, scale_out)
    for ps in before:
        ps.apply(context(), module)
    norm = next(o for o in module.walk() if isinstance(o, tile.VecStageOp))
    assert norm.phase is not None and norm.phase.columns == (1024, 128) and norm.phase.rows.data == 4
    plan = planned(module)
    last.apply(context(), module)
    agree(plan, emitted(module))


GELU_POST = """
func.func @k(%x: tensor<?x256xbf16>, %w: tensor<256x8192xbf16>, %b: tensor<8192xf32>) -> tensor<?x8192xbf16>
    attributes {pto.unroll = array<i64: 16>} {
  %y = pto.matmul %x, %w : tensor<?x256xbf16>, tensor<256x8192xbf16> -> tensor<?x8192xf32>
  %z = pto.add %y, %b {pto.vec_tile = array<i64: 4, 2048>} : tensor<?x8192xf32>, tensor<8192xf32> -> tensor<?x8192xf32>
  %a = pto.muls %z, -1.702 {pto.vec_tile = array<i64: 4, 2048>} : tensor<?x8192xf32> -> tensor<?x8192xf32>
  %e = pto.exp %a {pto.vec_tile = array<i64: 4, 2048>} : tensor<?x8192xf32> -> tensor<?x8192xf32>
  %d = pto.adds %e, 1.0 {pto.vec_tile = array<i64: 4, 2048>} : tensor<?x8192xf32> -> tensor<?x8192xf32>
  %g = pto.reciprocal %d {pto.vec_tile = array<i64: 4, 2048>} : tensor<?x8192xf32> -> tensor<?x8192xf32>
  %m = pto.mul %z, %g {pto.vec_tile = array<i64: 4, 2048>} : tensor<?x8192xf32>, tensor<?x8192xf32> -> tensor<?x8192xf32>
  %o = pto.cast %m rint {pto.vec_tile = array<i64: 4, 2048>} : tensor<?x8192xf32> -> tensor<?x8192xbf16>
  func.return %o : tensor<?x8192xbf16>
}
"""


def test_arena_copies_are_disjoint() -> None:
    a = Arena(32)
    first = a.alloc(100)  # rounded to 128
    a.free(*first)
    assert a.alloc(64) == (0, 64)  # the hole is reused within a copy
    a.new_copy()
    assert a.alloc(32) == (128, 32)  # a new copy starts above the high-water mark


@pytest.mark.parametrize("vec_tile", ["8, 4096", "16, 512", "1, 16 * 1024"])
def test_hc_pre_with_the_vector_tiles_pypto_compiles(vec_tile: str, tmp_path: Path) -> None:
    """hc_pre's norm at `(8, 4096)` (refused before liveness: every intermediate of a
    256-row body counted at once) and the public source's own tiles run and match."""
    import runpy
    import warnings

    src = (TESTS.parent / "examples" / "pypto" / "hc_pre.py").read_text()
    assert "pypto.set_vec_tile_shapes(1, 2048)" in src
    kernel = tmp_path / "hc_pre_tiles.py"
    kernel.write_text(src.replace("pypto.set_vec_tile_shapes(1, 2048)", f"pypto.set_vec_tile_shapes({vec_tile})"))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (cuts of the pinned tile are said; here they are expected)
        runpy.run_path(str(kernel), run_name="not_main")["main"](tokens=(1, 70))


PLANNER_CASES = sorted((Path(__file__).parent / "Inputs" / "planner").glob("*.mlir"))


@pytest.mark.parametrize("path", PLANNER_CASES, ids=lambda p: p.stem)
def test_planner_and_emitter_agree_off_the_easy_path(path: Path) -> None:
    """Forms where the two once differed (review of issue 32): a weight-only mean, a
    column-tiled reduction of an earlier stage's result, a [1, N] weight in a column-tiled
    phase, a stage yielding a loaded value. Each lowers, verifies and places alike."""
    from pto.driver.verify import verify_each
    from pto.lowering.tile_to_npu import TileToNpuPass
    from pto.passes.tile_assign_shapes import TileAssignShapesPass

    module = parse(path.read_text(), str(path))
    if any(isinstance(o, tile.TokenLoopOp) for o in module.walk()):
        TileAssignShapesPass().apply(context(), module)
        plan = planned(module)
        TileToNpuPass().apply(context(), module)
        made = emitted(module)
    else:
        plan, made = lower_both(module)
    agree(plan, made)
    verify_each(module)


def test_a_dequant_by_the_scales_product_is_planned_as_emitted() -> None:
    """`acc * (s * ws)` fused as `pto.dequant ... scales_product` takes one more `[r, N]`
    buffer (the product): the plan measures it where tile-to-npu allocates it."""
    from test_fuse_stages import _div_of_muls, _quant_args, _quant_kernel

    from pto.passes.pto_fuse_stages import PtoFuseStagesPass

    module = _quant_kernel(_div_of_muls, lambda f, s, ws: f * (s * ws)).trace(*_quant_args())
    PtoFuseStagesPass().apply(context(), module)
    *before, last = PtoSk03PipelinePass().passes()
    for p in before:
        p.apply(context(), module)
    assert any(isinstance(o, tile.DequantOp) and o.scales_product is not None for o in module.walk())
    plan = planned(module)
    last.apply(context(), module)
    agree(plan, emitted(module))


ELEMENTWISE_CHAIN = """
func.func @k(%x: tensor<?x4096xf32>, %w: tensor<256x4096xf32>) -> tensor<?x256xf32> {
  %a = pto.abs %x {pto.vec_tile = array<i64: 8, 4096>} : tensor<?x4096xf32> -> tensor<?x4096xf32>
  %b = pto.muls %a, 2.0 {pto.vec_tile = array<i64: 8, 4096>} : tensor<?x4096xf32> -> tensor<?x4096xf32>
  %c = pto.exp %b {pto.vec_tile = array<i64: 8, 4096>} : tensor<?x4096xf32> -> tensor<?x4096xf32>
  %d = pto.reciprocal %c {pto.vec_tile = array<i64: 8, 4096>} : tensor<?x4096xf32> -> tensor<?x4096xf32>
  %e = pto.mul %d, %d {pto.vec_tile = array<i64: 8, 4096>} : tensor<?x4096xf32>, tensor<?x4096xf32> -> tensor<?x4096xf32>
  %o = pto.matmul %e, %w b_trans : tensor<?x4096xf32>, tensor<256x4096xf32> -> tensor<?x256xf32>
  func.return %o : tensor<?x256xf32>
}
"""


def test_a_chain_of_elementwise_ops_holds_one_buffer() -> None:
    """Each one-instruction element-wise op writes over the operand that dies at it (the
    device allows dst == src): x, |x|, 2|x|, its exp, the reciprocal and its square share
    one [8, 4096] f32 buffer (128 KB; one each would be 768 KB), planned and emitted alike,
    and the numbers are the chain's."""
    import numpy as np

    import pto
    from pto.interp.golden import check

    module = parse(ELEMENTWISE_CHAIN)
    plan, made = lower_both(module)
    agree(plan, made)
    (stage, offsets), *_ = plan
    tile_bytes = 8 * 4096 * 4
    assert stage == "pre" and len(offsets) >= 6 and set(offsets) <= {0, tile_bytes}, offsets
    # (the reciprocal's constant: one block after the shared buffer)
    assert offsets.count(tile_bytes) == 1, offsets
    rng = np.random.default_rng(3)
    x = rng.uniform(-1, 1, (11, 4096)).astype(np.float32)
    w = rng.standard_normal((256, 4096)).astype(np.float32)
    runs = [pto.run(pto.compile(parse(ELEMENTWISE_CHAIN)), [x, w], engine=e) for e in ("interp", "compiled")]
    assert np.array_equal(runs[0].outputs[0], runs[1].outputs[0])
    d = np.float32(1) / np.exp(np.abs(x) * np.float32(2))
    assert check(runs[0].outputs[0], (d * d).astype(np.float64) @ w.T.astype(np.float64)).ok


def test_a_layernorm_in_column_chunks_fits_the_rows_pypto_compiles() -> None:
    """corpus17's k152: a LayerNorm of f32 rows 3072 wide with PyPTO's (16, 1024) tile.
    Three passes over the chunks (the sum, the centred squares, the normalised rows); each
    chunk's temporaries are freed when their op ends, so the 16 rows fit (they were cut to 8)."""
    import warnings

    import numpy as np

    import pto.pypto as pypto
    from pto.interp.golden import check

    h, n, f32 = 3072, 64, pypto.DT_FP32

    @pypto.frontend.jit
    def k(
        x: pypto.Tensor([pypto.DYNAMIC, h], f32),
        w: pypto.Tensor([h, n], f32),
        out: pypto.Tensor([pypto.DYNAMIC, n], f32),
    ):
        for i in pypto.loop(pypto.ceildiv(x.shape[0], 16)):
            pypto.set_vec_tile_shapes(16, 1024)
            xt = pypto.view(x, [16, h], [i * 16, 0], valid_shape=[(x.shape[0] - i * 16).min(16), h])
            mean = pypto.sum(xt, -1, keepdim=True) / h
            var = pypto.var(xt, -1, correction=0, keepdim=True)
            xn = (xt - mean) * pypto.rsqrt(var + 1e-5)
            out[i * 16 : (i + 1) * 16, :] = pypto.matmul(xn, w, f32)

    rng = np.random.default_rng(5)
    x, w = rng.normal(0.3, 1.5, (21, h)).astype(np.float32), rng.normal(0, 0.02, (h, n)).astype(np.float32)
    out = np.zeros((21, n), np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("error", pypto.LoweringWarning)  # (no rows cut)
        k(x, w, out)
    xd = x.astype(np.float64)
    xn = (xd - xd.mean(-1, keepdims=True)) / np.sqrt(xd.var(-1, keepdims=True) + 1e-5)
    assert check(out, xn @ w.astype(np.float64)).ok


@pytest.mark.parametrize(
    "ir",
    [
        # a weight stage whose tile fills UB: the reciprocal's constant is counted (it was not)
        """func.func @k(%x: tensor<?x256xf32>, %w: tensor<96x256xf32>) -> tensor<?x96xf32> {
  %r = pto.reciprocal %w : tensor<96x256xf32> -> tensor<96x256xf32>
  %y = pto.matmul %x, %r b_trans : tensor<?x256xf32>, tensor<96x256xf32> -> tensor<?x96xf32>
  func.return %y : tensor<?x96xf32>
}""",
        # c / g of a rank-1 weight: the constant has g's rank
        """func.func @k(%x: tensor<?x256xf32>, %g: tensor<256xf32>, %w: tensor<96x256xf32>) -> tensor<?x96xf32> {
  %r = pto.rdivs %g, 3.0 : tensor<256xf32> -> tensor<256xf32>
  %m = pto.mul %x, %r : tensor<?x256xf32>, tensor<256xf32> -> tensor<?x256xf32>
  %y = pto.matmul %m, %w b_trans : tensor<?x256xf32>, tensor<96x256xf32> -> tensor<?x96xf32>
  func.return %y : tensor<?x96xf32>
}""",
    ],
    ids=["weight_stage", "rank1"],
)
def test_a_reciprocals_constant_is_planned_where_it_is_emitted(ir: str) -> None:
    from pto.frontend import api

    a, b = (api.run(api.compile(parse(ir)), tokens=8, engine=e, golden=True) for e in ("interp", "compiled"))
    assert a.ok and b.ok and a.report.to_json() == b.report.to_json()
