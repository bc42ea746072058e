import os, sys
if os.environ.get("PTO") == "1":
    import pto.pypto as pypto
else:
    import pypto

# V -> C with a flat tile loop and a weight stored per head: x [T, 1536] bf16 (q_lora_rank-sized),
# W given as [16, 128, 1536] bf16 (heads, head_dim, K) and reshaped in place (no data move) to the
# [N, K] = [2048, 1536] matrix used with b_trans. Loop: for i in pypto.loop(ceil(T / 64)) (one
# argument), tile view [64, 1536] at [i*64, 0] with valid_shape=[pypto.min(64, T - i*64), 1536].
# RMSNorm with a rank-1 bf16 gamma cast inside the loop; inverse root as 1 / sqrt(...) with Python `/`
# on a scalar; matmul to fp32 -> bf16 y [T, 2048]; no post-stage.
H = 1536
NH = 16
HD = 128
N = NH * HD
TILE = 64
EPS = 1e-6
T = pypto.frontend.dynamic("T")


@pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.SIM})
def head_weight_proj(x: pypto.Tensor([T, H], pypto.DT_BF16),
                     gamma: pypto.Tensor([H], pypto.DT_BF16),
                     w_heads: pypto.Tensor([NH, HD, H], pypto.DT_BF16),
                     y: pypto.Tensor([T, N], pypto.DT_BF16)):
    t = x.shape[0]
    w = pypto.reshape(w_heads, [N, H], inplace=True)
    for i in pypto.loop((t + TILE - 1) // TILE, name="ROWS", idx_name="i"):
        valid = pypto.min(TILE, t - i * TILE)
        pypto.set_semantic_label("q-norm")
        pypto.set_vec_tile_shapes(H)
        g = pypto.cast(gamma, pypto.DT_FP32)
        pypto.set_vec_tile_shapes(8, H)
        xf = pypto.cast(pypto.view(x, [TILE, H], [i * TILE, 0], valid_shape=[valid, H]), pypto.DT_FP32)
        ms = pypto.mul(pypto.sum(pypto.mul(xf, xf), -1, keepdim=True), 1.0 / H)
        inv = 1.0 / pypto.sqrt(pypto.add(ms, EPS))
        xn = pypto.cast(pypto.mul(pypto.mul(xf, inv), g), pypto.DT_BF16)

        pypto.set_semantic_label("q-linear")
        pypto.set_cube_tile_shapes([64, 64], [256, 512], [128, 128])
        yt = pypto.matmul(xn, w, pypto.DT_FP32, b_trans=True)
        pypto.set_vec_tile_shapes(8, N)
        pypto.assemble(pypto.cast(yt, pypto.DT_BF16), [i * TILE, 0], y)


def golden(x, gamma, w_heads):
    import numpy as np, ml_dtypes
    f32 = np.float32
    bf = ml_dtypes.bfloat16
    xf = np.asarray(x).astype(f32)
    ms = (xf * xf).sum(-1, keepdims=True, dtype=f32) * f32(1.0 / H)
    xn = (xf * (f32(1.0) / np.sqrt(ms + f32(EPS))) * np.asarray(gamma).astype(f32)).astype(bf)
    w = np.asarray(w_heads).astype(np.float64).reshape(N, H)
    return (xn.astype(np.float64) @ w.T).astype(f32).astype(bf)


def main():
    counts = [int(v) for v in sys.argv[1:]] or [1, 45, 200]
    if os.environ.get("PTO") == "1":
        import ml_dtypes, numpy as np
        from pto.interp.golden import check
        bf = ml_dtypes.bfloat16
        rng = np.random.default_rng(2909)
        gamma = rng.uniform(0.5, 1.5, H).astype(bf)
        w_heads = (rng.standard_normal((NH, HD, H)) * 0.02).astype(bf)
        ok = True
        for t in counts:
            x = rng.standard_normal((t, H)).astype(bf)
            y = np.zeros((t, N), bf)
            head_weight_proj(x, gamma, w_heads, y)
            rr = check(y, golden(x, gamma, w_heads))
            print(t, rr.describe("y"))
            ok = ok and rr.ok
        print("ALL PASS" if ok else "FAIL")
    else:
        import torch
        for t in counts:
            head_weight_proj(torch.randn(t, H).bfloat16(), (torch.rand(H) + 0.5).bfloat16(),
                             (torch.randn(NH, HD, H) * 0.02).bfloat16(), torch.zeros(t, N).bfloat16())
            print("T=%d SIM done" % t, flush=True)
        print("PYPTO-ACCEPTED")


if __name__ == "__main__":
    main()
