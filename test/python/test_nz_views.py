"""Views of a weight stored NZ (`format=TILEOP_NZ`): the K slices of a hand-written
split-K over a `[K, N]` weight (mla_prolog_quant_v4's wq_a: `view(w, [K/2, N], [k0, 0])`,
one matmul per slice, the partial results summed), and a window a matmul reads as its
weight (one of stacked weights, columns of a `[K, N]` one). A window is whole fractals;
the model reads its tiles at the fractal addresses of the window in the whole matrix.
Each kernel matches an independent numpy golden on both npu engines, figure for figure."""

import ml_dtypes
import numpy as np
import pytest

import pto
import pto.pypto as pypto
from pto.interp.golden import check

K, N, KC = 256, 64, 128  # KC: the K slice of the split-K
BF16, FP32 = pypto.DT_BF16, pypto.DT_FP32
BF = ml_dtypes.bfloat16
ND, NZ = pypto.TileOpFormat.TILEOP_ND, pypto.TileOpFormat.TILEOP_NZ
COUNTS = (1, 13, 40)  # one token, a remainder of the [8, 1] cascade, several bodies


def _x(t: int) -> np.ndarray:
    return np.random.default_rng(t).uniform(-1, 1, (t, K)).astype(BF)


def _w(shape) -> np.ndarray:
    return np.random.default_rng(7).uniform(-0.1, 0.1, shape).astype(BF)


def _f32(a: np.ndarray) -> np.ndarray:
    return a.astype(np.float32)


def _split_k(fmt):
    """x @ w over two K slices, summed, then RMSNorm (f32 out), w `[K, N]` in `fmt`."""

    @pypto.frontend.jit
    def kernel(
        x: pypto.Tensor([pypto.DYNAMIC, K], BF16),
        w: pypto.Tensor([K, N], BF16, format=fmt),
        out: pypto.Tensor([pypto.DYNAMIC, N], FP32),
    ):
        for idx, p in pypto.loop_unroll(0, x.shape[0], 1, unroll_list=[8]):
            xt = pypto.view(x, [p, K], [idx, 0])
            pypto.set_cube_tile_shapes([16, 16], [64, 64], [64, 64])
            y = None  # as mla_prolog_quant_v4 writes it: the first product, then a sum
            for i in range(K // KC):
                part = pypto.matmul(pypto.view(xt, [p, KC], [0, i * KC]), pypto.view(w, [KC, N], [i * KC, 0]), FP32)
                y = part if y is None else y + part
            pypto.assemble(pypto.rms_norm(y, None, 1e-6), [idx, 0], out)

    return kernel


def _both_engines(compiled, inputs: list):
    runs = [pto.run(compiled, inputs, engine=e) for e in ("interp", "compiled")]
    assert np.array_equal(runs[0].outputs[0], runs[1].outputs[0])
    assert runs[0].report.to_json() == runs[1].report.to_json()
    return runs[1]


@pytest.mark.parametrize("fmt", [ND, NZ])
def test_a_hand_split_k_over_row_slices_of_a_k_n_weight(fmt) -> None:
    """The slices become one matmul over the whole weight with split-K pinned."""
    k, w = _split_k(fmt), _w((K, N))
    for t in COUNTS:
        x, out = _x(t), np.zeros((t, N), np.float32)
        k(x, w, out)
        y = _f32(x) @ _f32(w)
        assert check(out, y / np.sqrt((y * y).mean(-1, keepdims=True) + 1e-6)).ok, (fmt, t)
    module = k.trace(x, w, out)
    matmuls = [o for o in module.walk() if o.name == "pto.matmul"]
    assert len(matmuls) == 1 and "split_k" in str(matmuls[0].attributes["pto.cube_tile"])
    assert not [o for o in module.walk() if o.name in ("pto.view", "pto.slice")]
    _both_engines(pto.compile(module), [x, w])


def _window(fmt, stacked: bool):
    """A matmul whose weight is a window of a weight in `fmt`: the second of two stacked
    `[N, K]` weights (b_trans), or the right half of a `[K, 2N]` one."""

    @pypto.frontend.jit
    def kernel(
        x: pypto.Tensor([pypto.DYNAMIC, K], BF16),
        w: pypto.Tensor([2 * N, K] if stacked else [K, 2 * N], BF16, format=fmt),
        out: pypto.Tensor([pypto.DYNAMIC, N], BF16),
    ):
        for idx, p in pypto.loop_unroll(0, x.shape[0], 1, unroll_list=[8]):
            wv = pypto.view(w, [N, K], [N, 0]) if stacked else pypto.view(w, [K, N], [0, N])
            y = pypto.matmul(pypto.view(x, [p, K], [idx, 0]), wv, FP32, b_trans=stacked)
            pypto.assemble(pypto.cast(y, BF16), [idx, 0], out)

    return kernel


# The window's L2 figures at T = 1 (one cube task reads it once, none_cacheable):
# stacked: rows [64, 128) of a [128, 256] bf16 matrix. ND: one 32 KiB run. NZ: 16 column
# blocks of 128 rows x 32 bytes, the window half of each (2 KiB): 16 bursts.
# columns: [64, 128) of a [256, 128] one. ND: 256 runs of 128 bytes, each in a line of
# its own (a 256-byte row: two rows a line, 128 lines). NZ: column blocks 4..7, one run.
LINES = {(ND, True): (64, 1), (NZ, True): (64, 16), (ND, False): (128, 256), (NZ, False): (64, 1)}


@pytest.mark.parametrize("fmt", [ND, NZ])
@pytest.mark.parametrize("stacked", [True, False])
def test_a_window_of_a_weight_read_by_the_matmul(fmt, stacked: bool) -> None:
    k = _window(fmt, stacked)
    w = _w((2 * N, K) if stacked else (K, 2 * N))
    want_w = _f32(w[N:]).T if stacked else _f32(w[:, N:])
    for t in COUNTS:
        x, out = _x(t), np.zeros((t, N), BF)
        k(x, w, out)
        assert check(out, _f32(x) @ want_w).ok, (fmt, stacked, t)
    x = _x(1)
    r = _both_engines(pto.compile(k.trace(x, w, np.zeros((1, N), BF))), [x, w])
    stats = r.report.tensors["w"]
    assert (stats["misses"], stats["bursts"]) == LINES[fmt, stacked]


def test_a_window_that_cuts_nz_fractals_is_refused_at_the_view() -> None:
    @pypto.frontend.jit
    def kernel(
        x: pypto.Tensor([pypto.DYNAMIC, K], BF16),
        w: pypto.Tensor([K, N], BF16, format=NZ),
        out: pypto.Tensor([pypto.DYNAMIC, N], FP32),
    ):
        for idx, p in pypto.loop_unroll(0, x.shape[0], 1, unroll_list=[8]):
            xt = pypto.view(x, [p, K], [idx, 0])
            a = pypto.matmul(pypto.view(xt, [p, 120], [0, 0]), pypto.view(w, [120, N], [0, 0]), FP32)
            b = pypto.matmul(pypto.view(xt, [p, K - 120], [0, 120]), pypto.view(w, [K - 120, N], [120, 0]), FP32)
            pypto.assemble(a + b, [idx, 0], out)

    with pytest.raises(pypto.BuildError, match=r"test_nz_views.py:\d+: error: .*'w': a window 120x64 at \[0, 0\]") as e:
        kernel(_x(4), _w((K, N)), np.zeros((4, N), np.float32))
    assert "cuts its 16x16 fractals" in str(e.value)
    assert e.value.where is not None and e.value.where[1] == kernel.fn.__code__.co_firstlineno + 8


def test_a_window_of_an_nz_weight_read_by_a_vector_op_is_refused_at_its_line() -> None:
    @pypto.frontend.jit
    def kernel(
        x: pypto.Tensor([pypto.DYNAMIC, N], FP32),
        w: pypto.Tensor([2 * N, N], BF16, format=NZ),
        out: pypto.Tensor([pypto.DYNAMIC, N], FP32),
    ):
        for idx, p in pypto.loop_unroll(0, x.shape[0], 1, unroll_list=[8]):
            wf = pypto.cast(pypto.view(w, [N, N], [N, 0]), FP32)  # the line the error names
            pypto.assemble(pypto.matmul(pypto.view(x, [p, N], [idx, 0]), wf, FP32), [idx, 0], out)

    with pytest.raises(pypto.BuildError, match=r"'pto.cast' reads the NZ argument #1: an NZ tensor is only") as e:
        kernel(np.zeros((4, N), np.float32), _w((2 * N, N)), np.zeros((4, N), np.float32))
    assert e.value.where is not None and e.value.where[1] == kernel.fn.__code__.co_firstlineno + 7
