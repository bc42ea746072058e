import os, sys
if os.environ.get("PTO") == "1":
    import pto.pypto as pypto
else:
    import pypto

# V -> C -> V: RMSNorm (reciprocal of sqrt) -> matmul with [K, N] weight -> + bias -> SiLU.
# Flat pypto.loop over token tiles of TILE rows, the tail handled with valid_shape.
HIDDEN = 2048
OUT = 1024
TILE = 32
EPS = 1e-5
NTOK = pypto.DYNAMIC


@pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.SIM},
                    pass_options={"vec_nbuffer_setting": {0: 2}})
def norm_linear_silu(hs: pypto.Tensor([NTOK, HIDDEN], pypto.DT_BF16),
                     ln_w: pypto.Tensor([HIDDEN], pypto.DT_BF16),
                     w: pypto.Tensor([HIDDEN, OUT], pypto.DT_BF16),
                     bias: pypto.Tensor([OUT], pypto.DT_FP32),
                     y: pypto.Tensor([NTOK, OUT], pypto.DT_BF16)):
    ntok = hs.shape[0]
    n_tiles = (ntok + TILE - 1) // TILE
    for i in pypto.loop(n_tiles, name="tok_tiles", idx_name="i"):
        off = i * TILE
        rows = pypto.min(TILE, ntok - off)
        pypto.set_vec_tile_shapes(8, HIDDEN)
        g = pypto.cast(ln_w, pypto.DT_FP32)
        xt = pypto.view(hs, [TILE, HIDDEN], [off, 0], valid_shape=[rows, HIDDEN])
        xf = pypto.cast(xt, pypto.DT_FP32)
        msq = pypto.sum(pypto.mul(xf, xf), -1, keepdim=True)
        msq = pypto.div(msq, float(HIDDEN))
        inv = pypto.reciprocal(pypto.sqrt(pypto.add(msq, EPS)))
        xn = pypto.mul(pypto.mul(xf, inv), g)
        xn = pypto.cast(xn, pypto.DT_BF16)

        pypto.set_cube_tile_shapes([32, 32], [256, 512], [128, 256])
        h = pypto.matmul(xn, w, pypto.DT_FP32)

        pypto.set_vec_tile_shapes(8, OUT)
        h = pypto.add(h, bias)
        h = pypto.mul(h, pypto.sigmoid(h))
        pypto.assemble(pypto.cast(h, pypto.DT_BF16), [off, 0], y)


def golden(hs, ln_w, w, bias):
    import numpy as np, ml_dtypes
    x = hs.astype(np.float32)
    x = x * (1.0 / np.sqrt(np.mean(x ** 2, -1, keepdims=True) + EPS)) * ln_w.astype(np.float32)
    x = x.astype(ml_dtypes.bfloat16).astype(np.float32)
    h = x @ w.astype(np.float32) + bias
    h = h / (1.0 + np.exp(-h))
    return h.astype(ml_dtypes.bfloat16)


def main():
    counts = [int(a) for a in sys.argv[1:]] or ([1, 45, 200] if os.environ.get("PTO") == "1" else [45])
    if os.environ.get("PTO") == "1":
        import ml_dtypes, numpy as np
        from pto.interp.golden import check
        rng = np.random.default_rng(6)
        ln_w = rng.uniform(0.9, 1.1, HIDDEN).astype(ml_dtypes.bfloat16)
        w = (rng.standard_normal((HIDDEN, OUT)) * 0.03).astype(ml_dtypes.bfloat16)
        bias = rng.standard_normal(OUT).astype(np.float32) * 0.5
        all_ok = True
        for n in counts:
            hs = (rng.standard_normal((n, HIDDEN)) * 3).astype(ml_dtypes.bfloat16)
            y = np.zeros((n, OUT), ml_dtypes.bfloat16)
            norm_linear_silu(hs, ln_w, w, bias, y)
            r = check(y, golden(hs, ln_w, w, bias))
            print(n, r.describe("y"))
            all_ok &= r.ok
        print("PASS" if all_ok else "FAIL")
    else:
        import torch
        for n in counts:
            hs = torch.randn(n, HIDDEN).bfloat16()
            ln_w = torch.ones(HIDDEN).bfloat16()
            w = (torch.randn(HIDDEN, OUT) * 0.03).bfloat16()
            bias = torch.randn(OUT)
            y = torch.zeros(n, OUT).bfloat16()
            norm_linear_silu(hs, ln_w, w, bias, y)
        print("PYPTO-ACCEPTED")


if __name__ == "__main__":
    main()
