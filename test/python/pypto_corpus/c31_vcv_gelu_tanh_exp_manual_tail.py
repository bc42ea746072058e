import os, sys
if os.environ.get("PTO") == "1":
    import pto.pypto as pypto
else:
    import pypto

# V -> C -> V: RMSNorm -> matmul (W [N, K], b_trans) -> GELU (tanh form, tanh built from exp:
# tanh(z) = 1 - 2 / (exp(2z) + 1)). No loop_unroll: a pypto.loop over the full 32-row tiles and a
# second pypto.loop over the leftover rows one at a time; both bodies come from one Python helper.
H = 2560
N = 1280
TILE = 32
EPS = 1e-6
GELU_C = 0.7978845608028654   # sqrt(2/pi)
T = pypto.frontend.dynamic("T")


def norm_mm_gelu(x, gamma, w, out, off, rows):
    pypto.set_vec_tile_shapes(8, H)
    xf = pypto.cast(pypto.view(x, [rows, H], [off, 0]), pypto.DT_FP32)
    g = pypto.cast(gamma, pypto.DT_FP32)
    ms = pypto.sum(pypto.mul(xf, xf), -1, keepdim=True)
    inv = pypto.rsqrt(pypto.add(pypto.mul(ms, 1.0 / H), EPS))
    xn = pypto.cast(pypto.mul(pypto.mul(xf, inv), g), pypto.DT_BF16)
    pypto.set_cube_tile_shapes([32, 32], [256, 512], [128, 128])
    h = pypto.matmul(xn, w, pypto.DT_FP32, b_trans=True)
    pypto.set_vec_tile_shapes(8, N)
    inner = pypto.mul(pypto.add(h, pypto.mul(pypto.mul(pypto.mul(h, h), h), 0.044715)), GELU_C)
    e2 = pypto.exp(pypto.mul(inner, 2.0))
    th = 1.0 - pypto.reciprocal(pypto.add(e2, 1.0)) * 2.0
    act = pypto.mul(pypto.mul(h, 0.5), pypto.add(th, 1.0))
    pypto.assemble(pypto.cast(act, pypto.DT_BF16), [off, 0], out)


@pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.SIM})
def norm_linear_gelu(x: pypto.Tensor([T, H], pypto.DT_BF16),
                     gamma: pypto.Tensor([H], pypto.DT_BF16),
                     w: pypto.Tensor([N, H], pypto.DT_BF16),
                     out: pypto.Tensor([T, N], pypto.DT_BF16)):
    t = x.shape[0]
    n_full = t // TILE
    for i in pypto.loop(n_full, name="FULL_TILES", idx_name="i"):
        norm_mm_gelu(x, gamma, w, out, i * TILE, TILE)
    for j in pypto.loop(n_full * TILE, t, 1, name="TAIL_ROWS", idx_name="j"):
        norm_mm_gelu(x, gamma, w, out, j, 1)


def golden(x, gamma, w):
    import numpy as np, ml_dtypes
    xf = x.astype(np.float32)
    xn = xf / np.sqrt((xf ** 2).mean(-1, keepdims=True) + EPS) * gamma.astype(np.float32)
    h = xn.astype(ml_dtypes.bfloat16).astype(np.float32) @ w.astype(np.float32).T
    y = 0.5 * h * (1.0 + np.tanh(GELU_C * (h + 0.044715 * h ** 3)))
    return y.astype(ml_dtypes.bfloat16)


def main():
    counts = [int(a) for a in sys.argv[1:]] or ([1, 45, 200] if os.environ.get("PTO") == "1" else [45])
    if os.environ.get("PTO") == "1":
        import ml_dtypes, numpy as np
        from pto.interp.golden import check
        bf16 = ml_dtypes.bfloat16
        rng = np.random.default_rng(303)
        gamma = rng.uniform(0.5, 1.5, H).astype(bf16)
        w = (rng.standard_normal((N, H)) * 0.03).astype(bf16)
        ok = True
        for t in counts:
            x = rng.standard_normal((t, H)).astype(bf16)
            out = np.zeros((t, N), bf16)
            norm_linear_gelu(x, gamma, w, out)
            r = check(out, golden(x, gamma, w))
            print(t, r.describe("out"))
            ok = ok and r.ok
        print("PASS" if ok else "FAIL")
    else:
        import torch
        for t in counts:
            norm_linear_gelu(torch.randn(t, H).bfloat16(), (torch.rand(H) + 0.5).bfloat16(),
                             (torch.randn(N, H) * 0.03).bfloat16(), torch.zeros(t, N).bfloat16())
        print("PYPTO-ACCEPTED")


if __name__ == "__main__":
    main()
