import os, sys
if os.environ.get("PTO") == "1":
    import pto.pypto as pypto
else:
    import pypto

# Qwen3-style q path, V -> C -> V with a rank-3 output: RMSNorm(x) (hidden 2048, rank-1 bf16 gamma
# cast once before the loop) -> bf16 matmul with W [K, N] (no b_trans) accumulated in fp32
# -> reshape to [t, 16, 128] -> per-head RMSNorm over D (gamma_q rank-1 [D]) -> half-split RoPE
# (gamma_q expand_clone'd to [1, 16, 128] before the loop) over the whole head (rotate_half = concat of two rank-3 views), cos/sin [T, D] broadcast over
# heads through reshape [t, 1, D] -> bf16 [T, 16, 128]. Unroll [64, 16, 1].
HID = 2048
NH = 16
HD = 128
N = NH * HD
EPS = 1e-6
QEPS = 1e-6
T = pypto.frontend.dynamic("T")


def head_rms(v, g, eps):
    ms = (v * v).sum(-1, keepdim=True) * (1.0 / v.shape[-1])
    return v * pypto.rsqrt(ms + eps) * g


@pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.SIM},
                    pass_options={"cube_l1_reuse_setting": {-1: 2, 1: 1}, "vec_nbuffer_setting": {0: 2}})
def q_proj_rope(x: pypto.Tensor([T, HID], pypto.DT_BF16),
                gamma: pypto.Tensor([HID], pypto.DT_BF16),
                wq: pypto.Tensor([HID, N], pypto.DT_BF16),
                gq: pypto.Tensor([HD], pypto.DT_FP32),
                cos: pypto.Tensor([T, HD], pypto.DT_BF16),
                sin: pypto.Tensor([T, HD], pypto.DT_BF16),
                q_out: pypto.Tensor([T, NH, HD], pypto.DT_BF16)):
    pypto.set_vec_tile_shapes(HID)
    g32 = pypto.cast(gamma, pypto.DT_FP32)
    # gamma_q [D] -> [1, NH, D] once (PyPTO broadcasts a single axis per op)
    pypto.set_vec_tile_shapes(NH, HD)
    gq3 = pypto.reshape(pypto.expand_clone(pypto.reshape(gq, [1, HD]), [NH, HD]), [1, NH, HD])
    wq.set_cache_policy(pypto.CachePolicy.NONE_CACHEABLE, True)
    for t0, m in pypto.loop_unroll(0, x.shape[0], 1, name="QLOOP", idx_name="t0", unroll_list=[64, 16, 1]):
        pypto.set_semantic_label("input-rmsnorm")
        pypto.set_vec_tile_shapes(4, HID)
        xt = pypto.cast(pypto.view(x, [m, HID], [t0, 0], valid_shape=[m, HID]), pypto.DT_FP32)
        xn = pypto.cast(head_rms(xt, g32, EPS), pypto.DT_BF16)

        pypto.set_semantic_label("q-linear")
        pypto.set_cube_tile_shapes([32, 32], [256, 512], [128, 128])
        q = pypto.matmul(xn, wq, pypto.DT_FP32)

        pypto.set_semantic_label("q-headnorm")
        q3 = pypto.reshape(q, [m, NH, HD], inplace=True)
        pypto.set_vec_tile_shapes(2, 8, HD)
        qn = head_rms(q3, gq3, QEPS)

        pypto.set_semantic_label("q-rope")
        pypto.set_vec_tile_shapes(4, HD)
        c = pypto.cast(pypto.view(cos, [m, HD], [t0, 0], valid_shape=[m, HD]), pypto.DT_FP32)
        s = pypto.cast(pypto.view(sin, [m, HD], [t0, 0], valid_shape=[m, HD]), pypto.DT_FP32)
        c3 = pypto.reshape(c, [m, 1, HD])
        s3 = pypto.reshape(s, [m, 1, HD])
        pypto.set_vec_tile_shapes(2, 8, HD)
        lo = pypto.view(qn, [m, NH, HD // 2], [0, 0, 0])
        hi = pypto.view(qn, [m, NH, HD // 2], [0, 0, HD // 2])
        rot = pypto.concat([pypto.mul(hi, -1.0), lo + 0.0], -1)
        emb = qn * c3 + rot * s3
        pypto.assemble(pypto.cast(emb, pypto.DT_BF16), [t0, 0, 0], q_out)


def golden(x, gamma, wq, gq, cos, sin):
    import numpy as np, ml_dtypes
    bf = ml_dtypes.bfloat16
    xf = x.astype(np.float64)
    g = gamma.astype(np.float64)
    xn = (xf / np.sqrt(np.mean(xf * xf, -1, keepdims=True) + EPS) * g).astype(bf).astype(np.float64)
    q = (xn @ wq.astype(np.float64)).reshape(-1, NH, HD)
    qn = q / np.sqrt(np.mean(q * q, -1, keepdims=True) + QEPS) * gq.astype(np.float64)
    c = cos.astype(np.float64)[:, None, :]
    s = sin.astype(np.float64)[:, None, :]
    rot = np.concatenate([-qn[..., HD // 2:], qn[..., :HD // 2]], -1)
    return (qn * c + rot * s).astype(bf)


def main():
    counts = [int(a) for a in sys.argv[1:]] or ([1, 45, 200] if os.environ.get("PTO") == "1" else [1, 45, 200])
    if os.environ.get("PTO") == "1":
        import ml_dtypes, numpy as np
        from pto.interp.golden import check
        bf = ml_dtypes.bfloat16
        rng = np.random.default_rng(3101)
        gamma = rng.uniform(0.5, 1.5, HID).astype(bf)
        wq = (rng.standard_normal((HID, N)) * 0.03).astype(bf)
        gq = rng.uniform(0.8, 1.2, HD).astype(np.float32)
        ok = True
        for t in counts:
            x = rng.standard_normal((t, HID)).astype(bf)
            ang = rng.uniform(-3.0, 3.0, (t, HD // 2))
            ang = np.concatenate([ang, ang], -1)
            cos, sin = np.cos(ang).astype(bf), np.sin(ang).astype(bf)
            q_out = np.zeros((t, NH, HD), bf)
            q_proj_rope(x, gamma, wq, gq, cos, sin, q_out)
            r = check(q_out, golden(x, gamma, wq, gq, cos, sin))
            print(t, r.describe("q_out"))
            ok = ok and r.ok
        print("ALL PASS" if ok else "FAIL")
    else:
        import torch
        for t in counts:
            q_proj_rope(torch.randn(t, HID).bfloat16(), torch.ones(HID).bfloat16(),
                        (torch.randn(HID, N) * 0.03).bfloat16(), torch.ones(HD),
                        torch.randn(t, HD).bfloat16(), torch.randn(t, HD).bfloat16(),
                        torch.zeros(t, NH, HD).bfloat16())
            print("T=%d SIM done" % t, flush=True)
        print("PYPTO-ACCEPTED")


if __name__ == "__main__":
    main()
