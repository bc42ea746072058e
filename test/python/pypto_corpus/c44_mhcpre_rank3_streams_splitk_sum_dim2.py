import os, sys
if os.environ.get("PTO") == "1":
    import pto.pypto as pypto
else:
    import pypto

# mhc_pre variant with the streams kept rank-3: x [T, 4, 4096] bf16, phi pre-transposed on the host
# to [K, N] = [16384, 24] fp32 (no b_trans, left cacheable: reused every iteration).
# Split-K by hand along the stream axis: for each stream s the rank-3 view x[:, s:s+1, :]
# ([t, 1, 4096] at [t0, s, 0]) is cast to fp32 and reshaped in place to [t, 4096] and multiplied by the phi row block
# [4096, 24] at [s * 4096, 0]; the four fp32 partials are added. The norm is built from
# sum over -1 (keepdim, [t, 4, 1]) then sum over dim -2 ([t, 1]): y = acc / sqrt(mean(x^2) + eps).
# Unroll [16] (1 appended); cube m tile 16.
S = 4
D = 4096
K = S * D
N = 24
EPS = 1e-6
T = pypto.frontend.dynamic("T")


@pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.SIM, "stitch_function_max_num": 128},
                    pass_options={"cube_nbuffer_setting": {-1: 4}})
def mhc_pre(x: pypto.Tensor([T, S, D], pypto.DT_BF16),
            phi: pypto.Tensor([K, N], pypto.DT_FP32),
            y: pypto.Tensor([T, N], pypto.DT_FP32)):
    for t0, u in pypto.loop_unroll(0, x.shape[0], 1, name="HC", idx_name="t0", unroll_list=[16]):
        pypto.set_semantic_label("hc-norm")
        pypto.set_vec_tile_shapes(1, S, 1024)
        x3 = pypto.cast(pypto.view(x, [u, S, D], [t0, 0, 0], valid_shape=[u, S, D]), pypto.DT_FP32)
        per_stream = pypto.sum(x3 * x3, -1, keepdim=True)
        pypto.set_vec_tile_shapes(8, S, 1)
        tot = pypto.sum(per_stream, -2)
        pypto.set_vec_tile_shapes(8, 1)
        den = pypto.sqrt(tot * (1.0 / K) + EPS)

        pypto.set_semantic_label("hc-linear")
        pypto.set_cube_tile_shapes([16, 16], [512, 1024], [32, 32])
        acc = None
        for s in range(S):
            pypto.set_vec_tile_shapes(1, 1, 2048)
            xs = pypto.cast(pypto.view(x, [u, 1, D], [t0, s, 0], valid_shape=[u, 1, D]), pypto.DT_FP32)
            pypto.set_vec_tile_shapes(1, 2048)
            xs2 = pypto.reshape(xs, [u, D], inplace=True)
            ps = pypto.matmul(xs2, pypto.view(phi, [D, N], [s * D, 0]), pypto.DT_FP32)
            acc = ps if acc is None else pypto.add(acc, ps)

        pypto.set_semantic_label("hc-scale")
        pypto.set_vec_tile_shapes(8, N)
        pypto.assemble(pypto.div(acc, den), [t0, 0], y)


def golden(x, phi):
    import numpy as np
    xf = x.astype(np.float64).reshape(x.shape[0], K)
    acc = xf @ phi.astype(np.float64)
    return (acc / np.sqrt(np.mean(xf * xf, -1, keepdims=True) + EPS)).astype(np.float32)


def main():
    counts = [int(a) for a in sys.argv[1:]] or [1, 45, 200]
    if os.environ.get("PTO") == "1":
        import ml_dtypes, numpy as np
        from pto.interp.golden import check
        rng = np.random.default_rng(3606)
        phi = (rng.standard_normal((K, N)) * 0.01).astype(np.float32)
        ok = True
        for t in counts:
            x = rng.standard_normal((t, S, D)).astype(ml_dtypes.bfloat16)
            y = np.zeros((t, N), np.float32)
            mhc_pre(x, phi, y)
            r = check(y, golden(x, phi))
            print(t, r.describe("y"))
            ok = ok and r.ok
        print("ALL PASS" if ok else "FAIL")
    else:
        import torch
        for t in counts:
            mhc_pre(torch.randn(t, S, D).bfloat16(), torch.randn(K, N) * 0.01, torch.zeros(t, N))
            print("T=%d SIM done" % t, flush=True)
        print("PYPTO-ACCEPTED")


if __name__ == "__main__":
    main()
