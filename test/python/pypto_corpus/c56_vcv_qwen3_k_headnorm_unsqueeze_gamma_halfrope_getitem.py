import os, sys
if os.environ.get("PTO") == "1":
    import pto.pypto as pypto
else:
    import pypto

# Qwen3 key path (4 kv heads), V -> C -> V: the tile is taken with slicing x[i:i + p, :] and the
# input RMSNorm (H = 3072, fp32 gamma) written with operators; k = xn @ Wk^T (Wk [N, K] = [512, 3072],
# b_trans, fp32) -> reshape [t, 4, 128] -> per-head k_norm with a bf16 [D] gamma: cast, reshaped in
# place to [1, D], expand_clone'd to [4, D] and unsqueeze(0)'d to [1, 4, D] -> half RoPE whose cos/sin
# come as half tables [T, 64] fp32 (sliced, concatenated [c, c] to [t, 128], unsqueeze(1) -> [t, 1, 128]),
# rotate_half with unary minus -> bf16 [T, 4, 128]. Unroll [48, 16, 1] (multiples of 16).
HID = 3072
NH = 4
D = 128
N = NH * D
EPS = 1e-6
T = pypto.frontend.dynamic("T")


@pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.SIM})
def k_path(x: pypto.Tensor([T, HID], pypto.DT_BF16),
           gamma: pypto.Tensor([HID], pypto.DT_FP32),
           wk: pypto.Tensor([N, HID], pypto.DT_BF16),
           k_norm: pypto.Tensor([D], pypto.DT_BF16),
           cos_h: pypto.Tensor([T, D // 2], pypto.DT_FP32),
           sin_h: pypto.Tensor([T, D // 2], pypto.DT_FP32),
           k_out: pypto.Tensor([T, NH, D], pypto.DT_BF16)):
    pypto.set_vec_tile_shapes(NH, D)
    gk = pypto.cast(k_norm, pypto.DT_FP32).reshape([1, D], inplace=True).expand_clone([NH, D]).unsqueeze(0)
    for i, p in pypto.loop_unroll(0, x.shape[0], 1, name="KP", idx_name="i", unroll_list=[48, 16, 1]):
        pypto.set_semantic_label("input-rmsnorm")
        pypto.set_vec_tile_shapes(4, HID)
        xt = pypto.cast(x[i:i + p, :], pypto.DT_FP32)
        xn = xt * (xt * xt).sum(-1, keepdim=True).mul(1.0 / HID).add(EPS).rsqrt() * gamma

        pypto.set_semantic_label("k-linear")
        pypto.set_cube_tile_shapes([16, 16], [256, 512], [128, 128])
        k = pypto.matmul(pypto.cast(xn, pypto.DT_BF16), wk, pypto.DT_FP32, b_trans=True)

        pypto.set_semantic_label("k-norm-rope")
        pypto.set_vec_tile_shapes(8, D // 2)
        ch = cos_h[i:i + p, :]
        sh = sin_h[i:i + p, :]
        pypto.set_vec_tile_shapes(8, D)
        c = pypto.concat([ch, ch], -1).unsqueeze(1)
        s = pypto.concat([sh, sh], -1).unsqueeze(1)
        pypto.set_vec_tile_shapes(8, NH, D)
        k3 = k.reshape([p, NH, D])
        kn = k3 * (k3 * k3).sum(-1, keepdim=True).mul(1.0 / D).add(EPS).rsqrt() * gk
        lo = kn.view([p, NH, D // 2], [0, 0, 0])
        hi = kn.view([p, NH, D // 2], [0, 0, D // 2])
        kr = kn * c + pypto.concat([-hi, lo + 0.0], -1) * s
        pypto.assemble(pypto.cast(kr, pypto.DT_BF16), [i, 0, 0], k_out)


def golden(x, gamma, wk, kn, ch, sh):
    import numpy as np, ml_dtypes
    bf = ml_dtypes.bfloat16
    f = lambda v: np.asarray(v).astype(np.float64)
    a = f(x)
    a = (a / np.sqrt(np.mean(a * a, -1, keepdims=True) + EPS) * f(gamma)).astype(bf)
    k = (f(a) @ f(wk).T).reshape(-1, NH, D)
    k = k / np.sqrt(np.mean(k * k, -1, keepdims=True) + EPS) * f(kn)
    c = np.concatenate([f(ch), f(ch)], -1)[:, None, :]
    s = np.concatenate([f(sh), f(sh)], -1)[:, None, :]
    rot = np.concatenate([-k[..., D // 2:], k[..., :D // 2]], -1)
    return (k * c + rot * s).astype(bf)


def main():
    counts = [int(a) for a in sys.argv[1:]] or [1, 45, 200]
    if os.environ.get("PTO") == "1":
        import ml_dtypes, numpy as np
        from pto.interp.golden import check
        bf = ml_dtypes.bfloat16
        rng = np.random.default_rng(1808)
        gamma = rng.uniform(0.5, 1.5, HID).astype(np.float32)
        wk = (rng.standard_normal((N, HID)) * 0.02).astype(bf)
        kn = rng.uniform(0.8, 1.2, D).astype(bf)
        ok = True
        for t in counts:
            x = rng.standard_normal((t, HID)).astype(bf)
            ang = rng.uniform(-3.0, 3.0, (t, D // 2))
            ch, sh = np.cos(ang).astype(np.float32), np.sin(ang).astype(np.float32)
            k_out = np.zeros((t, NH, D), bf)
            k_path(x, gamma, wk, kn, ch, sh, k_out)
            r = check(k_out, golden(x, gamma, wk, kn, ch, sh))
            print(t, r.describe("k_out"))
            ok = ok and r.ok
        print("ALL PASS" if ok else "FAIL")
    else:
        import torch
        for t in counts:
            k_path(torch.randn(t, HID).bfloat16(), torch.rand(HID) + 0.5, (torch.randn(N, HID) * 0.02).bfloat16(),
                   torch.rand(D).bfloat16() + 0.5, torch.rand(t, D // 2), torch.rand(t, D // 2),
                   torch.zeros(t, NH, D).bfloat16())
            print("T=%d SIM done" % t, flush=True)
        print("PYPTO-ACCEPTED")


if __name__ == "__main__":
    main()
