import os, sys
if os.environ.get("PTO") == "1":
    import pto.pypto as pypto
else:
    import pypto

# Qwen-sized V -> C: H = 5120 -> N = 640, W [K, N] bf16. Flat pypto.loop over ceil(T / 64) tiles;
# the tail is handled by hand with a symbolic `if` (recorded as pypto.cond): full tiles take a static [64, H] view, the last
# partial tile a view with valid_shape = T - off. RMSNorm and matmul written as Tensor methods;
# pass options set inside the kernel with pypto.set_pass_options.
H = 5120
N = 640
TILE = 64
EPS = 1e-6
T = pypto.DYNAMIC


def norm_proj_tile(xt, gamma, w, y, off):
    pypto.set_vec_tile_shapes(4, H)
    g = pypto.cast(gamma, pypto.DT_FP32)
    xf = pypto.cast(xt, pypto.DT_FP32)
    inv = xf.mul(xf).sum(-1, keepdim=True).mul(1.0 / H).add(EPS).rsqrt()
    xn = pypto.cast(xf.mul(inv).mul(g), pypto.DT_BF16)
    pypto.set_cube_tile_shapes([64, 64], [256, 512], [128, 128])
    yt = xn.matmul(w, pypto.DT_BF16)
    pypto.assemble(yt, [off, 0], y)


@pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.SIM})
def qwen_proj(x: pypto.Tensor([T, H], pypto.DT_BF16),
              gamma: pypto.Tensor([H], pypto.DT_BF16),
              w: pypto.Tensor([H, N], pypto.DT_BF16),
              y: pypto.Tensor([T, N], pypto.DT_BF16)):
    pypto.set_pass_options(cube_l1_reuse_setting={-1: 2, 1: 1}, vec_nbuffer_setting={0: 2})
    t = x.shape[0]
    n_tiles = (t + TILE - 1) // TILE
    for i in pypto.loop(n_tiles, name="QWEN_TILES", idx_name="i"):
        off = i * TILE
        if off + TILE <= t:
            norm_proj_tile(pypto.view(x, [TILE, H], [off, 0]), gamma, w, y, off)
        else:
            norm_proj_tile(pypto.view(x, [TILE, H], [off, 0], valid_shape=[t - off, H]), gamma, w, y, off)


def golden(x, gamma, w):
    import numpy as np, ml_dtypes
    xf = x.astype(np.float32)
    xn = xf / np.sqrt(np.mean(xf * xf, -1, keepdims=True) + EPS) * gamma.astype(np.float32)
    return (xn.astype(ml_dtypes.bfloat16).astype(np.float32) @ w.astype(np.float32)).astype(ml_dtypes.bfloat16)


def main():
    counts = [int(a) for a in sys.argv[1:]] or ([1, 45, 200] if os.environ.get("PTO") == "1" else [45])
    if os.environ.get("PTO") == "1":
        import ml_dtypes, numpy as np
        from pto.interp.golden import check
        bf16 = ml_dtypes.bfloat16
        rng = np.random.default_rng(808)
        gamma = rng.uniform(0.5, 1.5, H).astype(bf16)
        w = (rng.standard_normal((H, N)) * 0.02).astype(bf16)
        ok = True
        for t in counts:
            x = rng.standard_normal((t, H)).astype(bf16)
            y = np.zeros((t, N), bf16)
            qwen_proj(x, gamma, w, y)
            r = check(y, golden(x, gamma, w))
            print(t, r.describe("y"))
            ok = ok and r.ok
        print("PASS" if ok else "FAIL")
    else:
        import torch
        for t in counts:
            qwen_proj(torch.randn(t, H).bfloat16(), torch.ones(H).bfloat16(),
                      (torch.randn(H, N) * 0.02).bfloat16(), torch.zeros(t, N).bfloat16())
        print("PYPTO-ACCEPTED")


if __name__ == "__main__":
    main()
