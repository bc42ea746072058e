import os, sys
if os.environ.get("PTO") == "1":
    import pto.pypto as pypto
else:
    import pypto

# fp16 end to end (fp16 activations, weight, gamma and output), with Tensor methods instead of
# module functions: x.mul(x).sum(...).rsqrt(), w consumed via Tensor.matmul-free pypto.matmul.
H = 2048
N = 512
EPS = 1e-6
T = pypto.DYNAMIC


@pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.SIM})
def fp16_proj(x: pypto.Tensor([T, H], pypto.DT_FP16),
              gamma: pypto.Tensor([H], pypto.DT_FP16),
              w: pypto.Tensor([N, H], pypto.DT_FP16),
              out: pypto.Tensor([T, N], pypto.DT_FP16)):
    pypto.set_vec_tile_shapes(H)
    g = pypto.cast(gamma, pypto.DT_FP32)
    for r, m in pypto.loop_unroll(0, x.shape[0], 1, name="R", idx_name="r", unroll_list=[16, 8, 2]):
        pypto.set_vec_tile_shapes(4, H)
        xf = pypto.cast(pypto.view(x, [m, H], [r, 0], valid_shape=[m, H]), pypto.DT_FP32)
        inv = xf.mul(xf).sum(-1, keepdim=True).mul(1.0 / H).add(EPS).rsqrt()
        xn = pypto.cast(xf.mul(inv).mul(g), pypto.DT_FP16)
        pypto.set_cube_tile_shapes([16, 16], [256, 1024], [128, 128])
        pypto.assemble(pypto.matmul(xn, w, pypto.DT_FP16, b_trans=True), [r, 0], out)


def golden(x, gamma, w):
    import numpy as np
    xf = x.astype(np.float32)
    xn = (xf / np.sqrt(np.mean(xf * xf, -1, keepdims=True) + EPS) * gamma.astype(np.float32)).astype(np.float16)
    return (xn.astype(np.float32) @ w.astype(np.float32).T).astype(np.float16)


def main():
    counts = [int(a) for a in sys.argv[1:]] or ([1, 45, 200] if os.environ.get("PTO") == "1" else [45])
    if os.environ.get("PTO") == "1":
        import ml_dtypes, numpy as np
        from pto.interp.golden import check
        rng = np.random.default_rng(22)
        gamma = rng.uniform(0.5, 1.5, H).astype(np.float16)
        w = (rng.standard_normal((N, H)) * 0.03).astype(np.float16)
        ok = True
        for t in counts:
            x = rng.standard_normal((t, H)).astype(np.float16)
            out = np.zeros((t, N), np.float16)
            fp16_proj(x, gamma, w, out)
            r = check(out, golden(x, gamma, w))
            print(t, r.describe("out"))
            ok = ok and r.ok
        print("PASS" if ok else "FAIL")
    else:
        import torch
        for t in counts:
            fp16_proj(torch.randn(t, H).half(), torch.ones(H).half(), (torch.randn(N, H) * 0.03).half(),
                      torch.zeros(t, N).half())
        print("PYPTO-ACCEPTED")


if __name__ == "__main__":
    main()
