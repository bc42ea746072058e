"""NZ (fractal) weights: PyPTO's `format=TILEOP_NZ` on a weight's annotation. The
numerics are the ND twin's bit for bit (the caller passes the logical matrix); the
model reads the weight's tiles at their NZ addresses, so its L2 lines and DMA bursts
differ from ND's in the direction the layout implies, the same on both engines."""

import itertools

import ml_dtypes
import numpy as np
import pytest

import pto.pypto as pypto
from pto.frontend import api
from pto.frontend.checks import BuildError
from pto.interp.l2 import nz_lines_from, tile_lines

K, N, T = 512, 512, 20
ND, NZ = pypto.TileOpFormat.TILEOP_ND, pypto.TileOpFormat.TILEOP_NZ


def query_linear(fmt, k_tile):
    """lightning_indexer_prolog_quant_v4's Query-Linear (int8 x int8 -> dequant), its
    weight in `fmt`, cube tiles with K tile `k_tile` (no `from __future__ import
    annotations` in this file: the annotation reads `fmt`)."""

    @pypto.frontend.jit
    def kernel(
        qr: pypto.Tensor([pypto.DYNAMIC, K], pypto.DT_INT8),
        qs: pypto.Tensor([pypto.DYNAMIC, 1], pypto.DT_FP32),
        w: pypto.Tensor([N, K], pypto.DT_INT8, format=fmt),
        out: pypto.Tensor([pypto.DYNAMIC, N], pypto.DT_BF16),
    ):
        w.set_cache_policy(pypto.CachePolicy.NONE_CACHEABLE, True)
        for i, p in pypto.loop_unroll(0, qr.shape[0], 1, unroll_list=[16, 1]):
            pypto.set_cube_tile_shapes([16, 16], k_tile, [64, 64])
            acc = pypto.matmul(pypto.view(qr, [p, K], [i, 0]), w, pypto.DT_INT32, b_trans=True)
            y = pypto.mul(pypto.cast(acc, pypto.DT_FP32), pypto.view(qs, [p, 1], [i, 0]))
            pypto.assemble(pypto.cast(y, pypto.DT_BF16), [i, 0], out)

    return kernel


def inputs():
    rng = np.random.default_rng(3)
    qr = rng.integers(-127, 128, (T, K)).astype(np.int8)
    qs = rng.uniform(0.001, 0.02, (T, 1)).astype(np.float32)
    w = rng.integers(-127, 128, (N, K)).astype(np.int8)
    return qr, qs, w


def runs(fmt, k_tile):
    """The kernel run on both engines: they must agree figure for figure."""
    qr, qs, w = inputs()
    compiled = api.compile(query_linear(fmt, k_tile).trace(qr, qs, w, np.zeros((T, N), ml_dtypes.bfloat16)))
    ref, got = (api.run(compiled, [qr, qs, w], engine=e) for e in ("interp", "compiled"))
    assert np.array_equal(ref.outputs[0].view(np.uint16), got.outputs[0].view(np.uint16))
    assert ref.report.to_json() == got.report.to_json()
    return got


def test_an_nz_weight_is_traced_as_pto_layout_nz() -> None:
    qr, qs, w = inputs()
    text = str(query_linear(NZ, [64, 256]).trace(qr, qs, w, np.zeros((T, N), ml_dtypes.bfloat16)))
    assert "%w: tensor<512x512xi8> {pto.layout = #pto.layout<nz>" in text
    assert "pto.layout" not in str(query_linear(ND, [64, 256]).trace(qr, qs, w, np.zeros((T, N), ml_dtypes.bfloat16)))


def test_a_narrow_k_slice_of_an_nz_weight_reads_half_the_lines_of_nd() -> None:
    """kL1 = 256 int8 columns: an ND slice is 64 rows of 256 B, each in a line of its
    own (the other half is the next slice's); NZ's is 8 column blocks of 64 x 32 B, 2 KiB
    contiguous each. A none-cacheable weight pays every line from HBM."""
    nd, nz = runs(ND, [64, 256]), runs(NZ, [64, 256])
    assert nz.outputs[0].view(np.uint16).tolist() == nd.outputs[0].view(np.uint16).tolist()
    wd, wz = nd.report.tensors["w"], nz.report.tensors["w"]
    assert wz["misses"] * 2 == wd["misses"] and wz["hbm_read"] * 2 == wd["hbm_read"]
    assert wz["bursts"] * 8 == wd["bursts"]  # 8 blocks against 64 rows per slice
    # (the cube tasks end sooner; the kernel's end may not move, as the AICPU threads
    # hand the next tasks over at the end of a round of polls)
    cube_end = lambda r: max(t.end for t in r.report.task_runs if t.core.startswith("aic"))  # noqa: E731
    assert cube_end(nz) < cube_end(nd) and nz.report.cycles <= nd.report.cycles
    assert nz.report.tensors["qr"] == nd.report.tensors["qr"]  # only the weight changes layout


def test_a_whole_row_slice_is_one_nd_burst_but_one_nz_burst_per_column_block() -> None:
    """kL1 = K: an ND slice of whole rows is one contiguous run, NZ's one per column
    block; both touch exactly the slice's bytes, so lines and cycles are equal."""
    nd, nz = runs(ND, [128, 512]), runs(NZ, [128, 512])
    assert np.array_equal(nz.outputs[0].view(np.uint16), nd.outputs[0].view(np.uint16))
    wd, wz = nd.report.tensors["w"], nz.report.tensors["w"]
    assert wz["misses"] == wd["misses"] and wz["hbm_read"] == wd["hbm_read"]
    assert wz["bursts"] == wd["bursts"] * K // 32
    assert nz.report.cycles == nd.report.cycles


def brute_lines(base, shape, elem_bytes, offsets, extent, line):
    """The lines of a tile of an NZ matrix at byte `base`, element by element: (r, c) is
    at element (c // C0) * H * C0 + r * C0 + c % C0."""
    h, c0 = shape[0], 32 // elem_bytes
    rs, cs = np.meshgrid(np.arange(extent[0]) + offsets[0], np.arange(extent[1]) + offsets[1], indexing="ij")
    addr = base + ((cs // c0) * h * c0 + rs * c0 + cs % c0) * elem_bytes
    return np.unique(addr // line).tolist()


@pytest.mark.parametrize(("elem_bytes", "base"), [(1, 0), (2, 1024), (2, 96)])
def test_nz_lines_are_the_fractal_addresses(elem_bytes: int, base: int) -> None:
    shape, c0 = (64, 256), 32 // elem_bytes
    for (r, c), (er, ec) in itertools.product(
        [(0, 0), (16, c0), (5, 3), (48, 2 * c0 + 1)], [(16, c0), (7, 40), (16, 64)]
    ):
        if r + er > shape[0] or c + ec > shape[1]:
            continue
        start = base + ((c // c0) * shape[0] * c0 + r * c0 + c % c0) * elem_bytes
        first, p = nz_lines_from(start, c % c0, shape[0] * 32, c0, (er, ec), elem_bytes, 512)
        assert (p.rel + first).tolist() == brute_lines(base, shape, elem_bytes, (r, c), (er, ec), 512)


def test_nd_and_nz_bursts_of_a_tile() -> None:
    # ND: a tile of whole rows is one run, a narrower one a run per row
    assert tile_lines(0, (64, 256), (0, 0), (16, 256), 2, 512)[1].runs == 1
    assert tile_lines(0, (64, 256), (0, 0), (16, 128), 2, 512)[1].runs == 16
    # NZ: a run per column block, one run if the tile has every row
    assert nz_lines_from(0, 0, 64 * 32, 16, (16, 128), 2, 512)[1].runs == 8
    assert nz_lines_from(0, 0, 64 * 32, 16, (64, 128), 2, 512)[1].runs == 1


# ------------------------------------------------------------------------- refusals


def test_nz_on_a_token_tensor_is_refused() -> None:
    @pypto.frontend.jit
    def kernel(
        x: pypto.Tensor([pypto.DYNAMIC, 64], pypto.DT_BF16, format=NZ),
        w: pypto.Tensor([32, 64], pypto.DT_BF16),
        out: pypto.Tensor([pypto.DYNAMIC, 32], pypto.DT_FP32),
    ):
        for i, p in pypto.loop_unroll(0, x.shape[0], 1, unroll_list=[1]):
            pypto.assemble(pypto.matmul(pypto.view(x, [p, 64], [i, 0]), w, pypto.DT_FP32, b_trans=True), [i, 0], out)

    x, w = np.zeros((4, 64), ml_dtypes.bfloat16), np.zeros((32, 64), ml_dtypes.bfloat16)
    with pytest.raises(BuildError, match="parameter 'x' has the token axis: only a weight the matmul reads"):
        kernel(x, w, np.zeros((4, 32), np.float32))


def test_an_nz_weight_read_by_a_vector_op_is_refused_at_its_line() -> None:
    @pypto.frontend.jit
    def kernel(
        x: pypto.Tensor([pypto.DYNAMIC, 64], pypto.DT_BF16),
        w: pypto.Tensor([32, 64], pypto.DT_BF16, format=NZ),
        out: pypto.Tensor([pypto.DYNAMIC, 32], pypto.DT_FP32),
    ):
        wf = pypto.cast(w, pypto.DT_FP32)  # the line the error names
        for i, p in pypto.loop_unroll(0, x.shape[0], 1, unroll_list=[1]):
            pypto.assemble(pypto.matmul(pypto.view(x, [p, 64], [i, 0]), wf, pypto.DT_FP32, b_trans=True), [i, 0], out)

    x, w = np.zeros((4, 64), ml_dtypes.bfloat16), np.zeros((32, 64), ml_dtypes.bfloat16)
    with pytest.raises(
        BuildError, match=r"'pto.cast' reads the NZ argument #1: an NZ tensor is only a pto.matmul"
    ) as e:
        kernel(x, w, np.zeros((4, 32), np.float32))
    assert e.value.where is not None and e.value.where[1] == kernel.fn.__code__.co_firstlineno + 6


def test_an_nz_weight_of_partial_fractals_is_refused() -> None:
    @pypto.frontend.jit
    def kernel(
        x: pypto.Tensor([pypto.DYNAMIC, 48], pypto.DT_INT8),
        w: pypto.Tensor([32, 48], pypto.DT_INT8, format=NZ),
        out: pypto.Tensor([pypto.DYNAMIC, 32], pypto.DT_INT32),
    ):
        for i, p in pypto.loop_unroll(0, x.shape[0], 1, unroll_list=[1]):
            pypto.assemble(pypto.matmul(pypto.view(x, [p, 48], [i, 0]), w, pypto.DT_INT32, b_trans=True), [i, 0], out)

    x, w = np.zeros((4, 48), np.int8), np.zeros((32, 48), np.int8)
    with pytest.raises(BuildError, match="an NZ i8 tensor is whole 16x32 fractals: 32x48 is not a multiple of them"):
        kernel(x, w, np.zeros((4, 32), np.int32))


def test_a_format_that_is_not_a_tileopformat_is_refused() -> None:
    with pytest.raises(BuildError, match="format must be a pypto.TileOpFormat"):
        pypto.Tensor([16, 32], pypto.DT_BF16, format="NZ")
