#!/usr/bin/env python3
"""c86 (outside batch corpus12, k108) (fresh, helper-heavy style): key projection followed by a per-head L2 normalisation (qk-l2-norm, no weight)
and a fixed temperature, every step in a @pypto.frontend.function helper or a nested Python function.

SK-03 C -> V: x [T, 1024] bf16 @ wk [1024, 512] bf16 ([K, N]) -> fp32 acc [t, 512] -> for each of 4 heads (columns
h*128 .. h*128+127, pypto.view on the matmul result): y_h * rsqrt(sum(y_h^2) + 1e-6) * 2.5 -> bf16 -> assembled at
[i, h*128] into out [T, 512] bf16. Helpers: plain Python functions return tensors; the @pypto.frontend.function helper head_l2_store
([...]-shaped Tensor annotation, scalar params) writes via pypto.assemble (SIM 0.2.0 refuses `return` inside a
@pypto.frontend.function: probes/s1_sim_refused_k108_function_return.py).
Loop: n_tiles = (T + TB - 1) // TB, pypto.loop(n_tiles), i = t * TB, rows = pypto.min(TB, T - i).
"""
import numpy as np

from batch_harness import PTO, pypto, run, bf16_round  # (the batch's _common.py)

H, NH, HD, TB = 1024, 4, 128, 32
N = NH * HD
TAU = 2.5
EPS = 1e-6


def load_rows(src, i, rows):
    return pypto.view(src, [TB, H], [i, 0], valid_shape=[rows, H])


def project(xt, wk):
    pypto.set_cube_tile_shapes([32, 32], [128, 256], [128, 128])
    return pypto.matmul(xt, wk, pypto.DT_FP32)


def l2norm(yh):
    ss = pypto.sum(pypto.mul(yh, yh), -1, keepdim=True)
    return pypto.mul(pypto.mul(yh, pypto.rsqrt(pypto.add(ss, EPS))), TAU)


@pypto.frontend.function
def head_l2_store(y: pypto.Tensor([...], pypto.DT_FP32), out: pypto.Tensor([pypto.DYNAMIC, N], pypto.DT_BF16),
                  i, rows, h):
    yh = pypto.view(y, [TB, HD], [0, h * HD], valid_shape=[rows, HD])
    pypto.assemble(pypto.cast(l2norm(yh), pypto.DT_BF16), [i, h * HD], out)


def n_tiles(T):
    return (T + TB - 1) // TB


@pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.SIM})
def key_l2(
    x: pypto.Tensor([pypto.DYNAMIC, H], pypto.DT_BF16),
    wk: pypto.Tensor([H, N], pypto.DT_BF16),
    out: pypto.Tensor([pypto.DYNAMIC, N], pypto.DT_BF16),
):
    T = x.shape[0]
    for t in pypto.loop(n_tiles(T), name="key_tok", idx_name="t"):
        i = t * TB
        rows = pypto.min(TB, T - i)
        pypto.set_vec_tile_shapes(16, 512)
        y = project(load_rows(x, i, rows), wk)
        pypto.set_vec_tile_shapes(16, HD)
        for h in range(NH):
            head_l2_store(y, out, i, rows, h)


rng = np.random.default_rng(108)
WK = bf16_round(rng.normal(0, 0.03, (H, N)))


def make_case(T):
    x = bf16_round(rng.normal(0, 1, (T, H)))
    y = (x.astype(np.float64) @ WK.astype(np.float64)).reshape(T, NH, HD)
    y = y / np.sqrt((y * y).sum(-1, keepdims=True) + EPS) * TAU
    return [(x, "bf16"), (WK, "bf16")], [((T, N), "bf16")], [bf16_round(y.reshape(T, N))], [(2e-2, 2e-2)], []


if __name__ == "__main__":
    run("k108", key_l2, make_case)
