"""AT-11 quant variant of SK-03: RMSNorm (V) -> symmetric per-token INT8 quant (V) ->
int8 x int8 matmul to DT_INT32 (C) -> dequant cast * x_scale * w_scale (V) -> bf16.
Quant: amax(|x|) per token, q = x * (127 / amax) cast RINT(int32) -> ROUND(fp16) -> TRUNC(int8, sat ON),
dequant scale = amax / 127 (also written out). loop_unroll [128, 64, 32, 16, 8, 1].
"""

import os
import sys

if os.environ.get("PTO") == "1":
    import pto.pypto as pypto
else:
    import pypto

K = 1024
N = 512
EPS = 1e-6
T = pypto.DYNAMIC


@pypto.frontend.jit(
    runtime_options={"run_mode": pypto.RunMode.SIM},
    pass_options={"cube_l1_reuse_setting": {-1: 2, 1: 1}, "vec_nbuffer_setting": {0: 2}},
)
def norm_quant_linear(
    x: pypto.Tensor([T, K], pypto.DT_BF16),
    gamma: pypto.Tensor([K], pypto.DT_BF16),
    w_q: pypto.Tensor([N, K], pypto.DT_INT8),
    w_scale: pypto.Tensor([N, 1], pypto.DT_FP32),
    y: pypto.Tensor([T, N], pypto.DT_BF16),
    x_scale_out: pypto.Tensor([T, 1], pypto.DT_FP32),
):
    t = x.shape[0]
    w_q.set_cache_policy(pypto.CachePolicy.NONE_CACHEABLE, True)
    w_scale_row = pypto.reshape(w_scale, [1, N], inplace=True)

    for t_idx, t_tile in pypto.loop_unroll(
        0, t, 1, name="IndexerPrologLoop", idx_name="tIdx", unroll_list=[128, 64, 32, 16, 8, 1]
    ):
        x_tile = pypto.view(x, [t_tile, K], [t_idx, 0])

        pypto.set_semantic_label("Query-RmsNorm")
        pypto.set_vec_tile_shapes(4, K)
        normed = pypto.rms_norm(pypto.cast(x_tile, pypto.DT_FP32), gamma, EPS)

        pypto.set_semantic_label("Query-Quant")
        x_abs = pypto.abs(normed)
        x_max = pypto.amax(x_abs, -1, keepdim=True)
        quant_scale = 127.0 / x_max
        x_scaled = normed * quant_scale
        x_i32 = pypto.cast(x_scaled, pypto.DT_INT32, pypto.CastMode.CAST_RINT)
        x_f16 = pypto.cast(x_i32, pypto.DT_FP16, pypto.CastMode.CAST_ROUND)
        x_i8 = pypto.cast(x_f16, pypto.DT_INT8, pypto.CastMode.CAST_TRUNC, pypto.SaturationMode.ON)
        dequant_scale = x_max / 127.0
        pypto.assemble(dequant_scale, [t_idx, 0], x_scale_out)

        pypto.set_semantic_label("Query-Linear")
        m = 16 if t_tile < 16 else t_tile
        pypto.set_cube_tile_shapes([m, m], [256, 1024], [128, 256])
        acc = pypto.matmul(x_i8, w_q, pypto.DT_INT32, b_trans=True)

        pypto.set_semantic_label("Query-Dequant")
        pypto.set_vec_tile_shapes(4, N)
        deq = pypto.cast(acc, pypto.DT_FP32)
        deq = deq * dequant_scale
        deq = deq * w_scale_row
        pypto.assemble(pypto.cast(deq, pypto.DT_BF16), [t_idx, 0], y)


def golden(x, gamma, w_q, w_scale):
    import numpy as np

    xf = x.astype(np.float32)
    rms = np.sqrt(np.mean(xf * xf, axis=-1, keepdims=True) + EPS)
    normed = xf / rms * gamma.astype(np.float32)
    amax = np.max(np.abs(normed), axis=-1, keepdims=True)
    q = np.clip(np.trunc(np.round(normed * (np.float32(127.0) / amax))), -128, 127).astype(np.int8)
    acc = q.astype(np.int32) @ w_q.astype(np.int32).T
    x_scale = amax / np.float32(127.0)
    y = acc.astype(np.float32) * x_scale * w_scale.reshape(1, -1)
    return y, x_scale


def main():
    counts = [int(a) for a in sys.argv[1:]] or ([27, 133, 8] if os.environ.get("PTO") == "1" else [27])
    if os.environ.get("PTO") == "1":
        import ml_dtypes
        import numpy as np

        from pto.interp.golden import check

        rng = np.random.default_rng(5)
        gamma = rng.uniform(0.5, 1.5, K).astype(ml_dtypes.bfloat16)
        w_q = rng.integers(-127, 128, (N, K)).astype(np.int8)
        w_scale = rng.uniform(1e-4, 1e-3, (N, 1)).astype(np.float32)
        ok_all = True
        for t in counts:
            x = rng.standard_normal((t, K)).astype(ml_dtypes.bfloat16)
            y = np.zeros((t, N), dtype=ml_dtypes.bfloat16)
            xs = np.zeros((t, 1), dtype=np.float32)
            norm_quant_linear(x, gamma, w_q, w_scale, y, xs)
            want_y, want_s = golden(x, gamma, w_q, w_scale)
            r = check(y, want_y)
            rs = check(xs, want_s)
            print(f"T={t}: y ok={r.ok} {r}\n       x_scale ok={rs.ok} {rs}")
            ok_all &= bool(r.ok) and bool(rs.ok)
        print("PASS" if ok_all else "FAIL")
    else:
        import torch

        torch.manual_seed(5)
        gamma = (torch.rand(K) + 0.5).to(torch.bfloat16)
        w_q = torch.randint(-127, 128, (N, K), dtype=torch.int8)
        w_scale = torch.rand(N, 1) * 9e-4 + 1e-4
        for t in counts:
            x = torch.randn(t, K).to(torch.bfloat16)
            y = torch.zeros(t, N, dtype=torch.bfloat16)
            xs = torch.zeros(t, 1, dtype=torch.float32)
            norm_quant_linear(x, gamma, w_q, w_scale, y, xs)
            print(f"T={t}: SIM run done, out finite={bool(torch.isfinite(y.float()).all())}")
        print("PYPTO-ACCEPTED")


if __name__ == "__main__":
    main()
