import os, sys
if os.environ.get("PTO") == "1":
    import pto.pypto as pypto
else:
    import pypto

# DeepSeek-sized hidden (7168) -> 256 output features, fp32 result. Loop with a step of TILE
# (index = row offset), tail rows via valid_shape; 1/sqrt written with Python's `/` on a scalar.
HIDDEN = 7168
NOUT = 256
TILE = 16
EPS = 1e-6
TOKENS = pypto.DYNAMIC


@pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.SIM})
def router_proj(x: pypto.Tensor([TOKENS, HIDDEN], pypto.DT_BF16),
                gamma: pypto.Tensor([HIDDEN], pypto.DT_BF16),
                w: pypto.Tensor([HIDDEN, NOUT], pypto.DT_BF16),
                logits: pypto.Tensor([TOKENS, NOUT], pypto.DT_FP32)):
    n = x.shape[0]
    pypto.set_vec_tile_shapes(HIDDEN)
    gamma_f = pypto.cast(gamma, pypto.DT_FP32)
    for row in pypto.loop(0, n, TILE, name="ROW_LOOP", idx_name="row"):
        valid = pypto.min(TILE, n - row)
        pypto.set_vec_tile_shapes(1, HIDDEN)
        xs = pypto.view(x, [TILE, HIDDEN], [row, 0], valid_shape=[valid, HIDDEN])
        xf = pypto.cast(xs, pypto.DT_FP32)
        den = pypto.sqrt(pypto.sum(xf * xf, -1, keepdim=True) * (1.0 / HIDDEN) + EPS)
        xn = xf * (1.0 / den) * gamma_f
        pypto.set_cube_tile_shapes([16, 16], [512, 1024], [64, 128])
        y = pypto.matmul(pypto.cast(xn, pypto.DT_BF16), w, pypto.DT_FP32)
        pypto.assemble(y, [row, 0], logits)


def golden(x, gamma, w):
    import numpy as np, ml_dtypes
    xf = x.astype(np.float32)
    xn = xf * (1.0 / np.sqrt(np.mean(xf * xf, axis=-1, keepdims=True) + EPS)) * gamma.astype(np.float32)
    return xn.astype(ml_dtypes.bfloat16).astype(np.float32) @ w.astype(np.float32)


def main():
    counts = [int(a) for a in sys.argv[1:]] or ([1, 45, 200] if os.environ.get("PTO") == "1" else [45])
    if os.environ.get("PTO") == "1":
        import ml_dtypes, numpy as np
        from pto.interp.golden import check
        rng = np.random.default_rng(11)
        gamma = rng.uniform(0.5, 1.5, HIDDEN).astype(ml_dtypes.bfloat16)
        w = (rng.standard_normal((HIDDEN, NOUT)) * 0.01).astype(ml_dtypes.bfloat16)
        ok = True
        for n in counts:
            x = rng.standard_normal((n, HIDDEN)).astype(ml_dtypes.bfloat16)
            logits = np.zeros((n, NOUT), np.float32)
            router_proj(x, gamma, w, logits)
            r = check(logits, golden(x, gamma, w))
            print(n, r.describe("logits"))
            ok = ok and r.ok
        print("PASS" if ok else "FAIL")
    else:
        import torch
        for n in counts:
            router_proj(torch.randn(n, HIDDEN).bfloat16(), torch.ones(HIDDEN).bfloat16(),
                        (torch.randn(HIDDEN, NOUT) * 0.01).bfloat16(), torch.zeros(n, NOUT))
        print("PYPTO-ACCEPTED")


if __name__ == "__main__":
    main()
