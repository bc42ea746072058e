"""c150 (outside batch corpus29, k267): k267 int8_matmul_add: int8 x int8 -> int32 matmul, then an int32 elementwise add of a
residual-like tensor, written with `.move`.

Source: hicann/pypto python/tests/st/interface/test_onboard_new_front.py (`matmul_add`,
        `test_device_run_data_from_device_mix_nodep`); the same kernel with fixed sizes is in
        python/tests/st/test_swim_line.py.
Kept verbatim: the kernel (STATIC-dim annotations with dtypes, vec tile (32, 32), cube tiles
[32,32]x3, a one-trip `pypto.loop(1, name="s0", idx_name="i")`, full-shape `pypto.view`s,
`d.move(pypto.add(pypto.matmul(a0, b0, pypto.DT_INT32), c))`), K = N = 256 as in the test
(tiling * 8), and the test's `pypto.options(pass_options={"enable_slice": False})` around the call.
Changes: rows of a (the test's n = 256) = token count T (1, 37, 200); inputs are random
ints in [-5, 5] (test: all-ones a/b and constant c); numpy golden (exact int32).
"""

import numpy as np

from batch_harness import pypto, run


@pypto.frontend.jit()
def matmul_add(
    a: pypto.Tensor([pypto.STATIC, pypto.STATIC], pypto.DT_INT8),
    b: pypto.Tensor([pypto.STATIC, pypto.STATIC], pypto.DT_INT8),
    c: pypto.Tensor([pypto.STATIC, pypto.STATIC], pypto.DT_INT32),
    d: pypto.Tensor([pypto.STATIC, pypto.STATIC], pypto.DT_INT32),
):
    pypto.set_vec_tile_shapes(32, 32)
    pypto.set_cube_tile_shapes([32, 32], [32, 32], [32, 32])
    for _ in pypto.loop(1, name="s0", idx_name="i"):
        a0 = pypto.view(a, [a.shape[0], a.shape[1]], [0, 0])
        b0 = pypto.view(b, [b.shape[0], b.shape[1]], [0, 0])
        d.move(pypto.add(pypto.matmul(a0, b0, pypto.DT_INT32), c))


K, N = 256, 256


def make_case(T):
    rng = np.random.default_rng(267 + T)
    a = rng.integers(-5, 6, (T, K)).astype(np.float32)
    b = rng.integers(-5, 6, (K, N)).astype(np.float32)
    c = rng.integers(-1000, 1001, (T, N)).astype(np.float32)
    ref = (a.astype(np.int64) @ b.astype(np.int64) + c.astype(np.int64)).astype(np.float32)
    return ([(a, "int8"), (b, "int8"), (c, "int32")], [((T, N), "int32")], [ref], [(0.5, 0.0)], [])


def call(kernel, ins, outs, extra):
    with pypto.options(pass_options={"enable_slice": False}):
        kernel(*ins, *outs, *extra)


if __name__ == "__main__":
    run("k267_int8_matmul_add", matmul_add, make_case, call=call)
