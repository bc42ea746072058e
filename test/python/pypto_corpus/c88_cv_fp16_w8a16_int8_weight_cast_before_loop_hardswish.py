#!/usr/bin/env python3
"""c88 (outside batch corpus13, k117) (fresh): weight-only int8 (W8A16) linear in fp16.

SK-03 (weight dequant) C -> V: w int8 [2048, 768] is cast to fp16 once, before the token loop (the int8 values are
exact in fp16); x [T, 2048] fp16 -> ONE matmul x @ w_fp16 -> fp32 -> * w_scale [1, 768] fp32 (per output channel)
+ bias [1, 768] fp32 -> hardswish y * clip(y + 3, 0, 6) / 6 (pypto.clip) -> fp16 out [T, 768].
Loop: pypto.loop_unroll(0, T, 1, unroll_list=[64, 16, 1]) with x[i:i + n, :] row slices and out[i:i + n, :] = ...
"""
import numpy as np

from batch_harness import PTO, pypto, run, fp16_round  # (the batch's _common.py)

K, N = 2048, 768


@pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.SIM})
def w8a16_linear(
    x: pypto.Tensor([pypto.DYNAMIC, K], pypto.DT_FP16),
    w: pypto.Tensor([K, N], pypto.DT_INT8),
    w_scale: pypto.Tensor([1, N], pypto.DT_FP32),
    bias: pypto.Tensor([1, N], pypto.DT_FP32),
    out: pypto.Tensor([pypto.DYNAMIC, N], pypto.DT_FP16),
):
    T = x.shape[0]
    pypto.set_vec_tile_shapes(64, N)
    w16 = pypto.cast(w, pypto.DT_FP16)
    for i, n in pypto.loop_unroll(0, T, 1, name="w8a16", idx_name="i", unroll_list=[64, 16, 1]):
        pypto.set_cube_tile_shapes([16, 64], [256, 512], [128, 256])
        acc = pypto.matmul(x[i:i + n, :], w16, pypto.DT_FP32)
        pypto.set_vec_tile_shapes(16, N)
        y = acc * w_scale + bias
        hs = y * pypto.clip(y + 3.0, 0.0, 6.0) * (1.0 / 6.0)
        out[i:i + n, :] = pypto.cast(hs, pypto.DT_FP16)


def make_case(T):
    rng = np.random.default_rng(117 + T)
    x = fp16_round(rng.standard_normal((T, K)) * 0.5)
    w = rng.integers(-127, 128, (K, N)).astype(np.float32)
    s = (rng.uniform(0.5, 1.5, (1, N)) / 127 / np.sqrt(K) * 8).astype(np.float32)
    b = (0.5 * rng.standard_normal((1, N))).astype(np.float32)
    y = (x.astype(np.float64) @ w) * s + b
    hs = y * np.clip(y + 3, 0, 6) / 6
    return [(x, "fp16"), (w, "int8"), (s, "fp32"), (b, "fp32")], [((T, N), "fp16")], [fp16_round(hs)], [(2e-2, 2e-2)], []


if __name__ == "__main__":
    run("c88", w8a16_linear, make_case)
