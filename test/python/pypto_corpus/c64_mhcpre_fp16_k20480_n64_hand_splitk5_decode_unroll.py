import os, sys
if os.environ.get("PTO") == "1":
    import pto.pypto as pypto
else:
    import pypto

# mhc_pre variant with a hand-written split-K on a 2-D input: x [T, 20480] fp16 (5 streams of 4096),
# phi pre-transposed on the host to [K, N] = [20480, 64] fp32 (no b_trans, cacheable).
# The reduction is cut into five K slices of 4096: slice s is the 2-D view x_f32[:, s*4096 : (s+1)*4096]
# (pypto.view at [0, s*4096]) times the phi row block [4096, 64] at [s*4096, 0]; the five fp32 partials
# are summed with pypto.add. The rms of the full row is accumulated from the same slices
# (sum of x^2 per slice, keepdim [t, 1]) and the result is y = acc * rsqrt(sum / K + eps) -> fp32 [T, 64].
# Decode unroll list [256, 64, 16, 4, 1]; cube tiles m [16, 16], k [256, 1024], n [64, 64] (k L0 256: a 512 x 64 fp32 L0B tile exceeds 64 KiB in PyPTO).
S = 5
D = 4096
K = S * D
N = 64
EPS = 1e-6
T = pypto.frontend.dynamic("T")


@pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.SIM})
def mhc_pre_hand_splitk(x: pypto.Tensor([T, K], pypto.DT_FP16),
                        phi: pypto.Tensor([K, N], pypto.DT_FP32),
                        y: pypto.Tensor([T, N], pypto.DT_FP32)):
    for t0, tt in pypto.loop_unroll(0, x.shape[0], 1, name="HC_LOOP", idx_name="t0",
                                    unroll_list=[256, 64, 16, 4, 1]):
        acc = None
        ss = None
        for s in range(S):
            pypto.set_semantic_label("hc-slice-cast")
            pypto.set_vec_tile_shapes(4, 2048)
            xs = pypto.cast(pypto.view(x, [tt, D], [t0, s * D], valid_shape=[tt, D]), pypto.DT_FP32)
            sq = pypto.sum(pypto.mul(xs, xs), -1, keepdim=True)
            ss = sq if ss is None else pypto.add(ss, sq)
            pypto.set_semantic_label("hc-slice-linear")
            pypto.set_cube_tile_shapes([16, 16], [256, 1024], [64, 64])
            part = pypto.matmul(xs, pypto.view(phi, [D, N], [s * D, 0]), pypto.DT_FP32)
            pypto.set_vec_tile_shapes(4, N)
            acc = part if acc is None else pypto.add(acc, part)
        pypto.set_semantic_label("hc-rms")
        pypto.set_vec_tile_shapes(4, N)
        inv = pypto.rsqrt(pypto.add(pypto.mul(ss, 1.0 / K), EPS))
        pypto.assemble(pypto.mul(acc, inv), [t0, 0], y)


def golden(x, phi):
    import numpy as np
    xf = np.asarray(x).astype(np.float64)
    mm = xf @ np.asarray(phi).astype(np.float64)
    return (mm / np.sqrt(np.mean(xf * xf, -1, keepdims=True) + EPS)).astype(np.float32)


def main():
    counts = [int(v) for v in sys.argv[1:]] or [1, 45, 200]
    if os.environ.get("PTO") == "1":
        import numpy as np
        from pto.interp.golden import check
        rng = np.random.default_rng(2707)
        phi = np.ascontiguousarray((rng.standard_normal((N, K)) * 0.01).astype(np.float32).T)
        ok = True
        for t in counts:
            x = rng.standard_normal((t, K)).astype(np.float16)
            y = np.zeros((t, N), np.float32)
            mhc_pre_hand_splitk(x, phi, y)
            rr = check(y, golden(x, phi))
            print(t, rr.describe("y"))
            ok = ok and rr.ok
        print("ALL PASS" if ok else "FAIL")
    else:
        import torch
        phi = (torch.randn(N, K) * 0.01).T.contiguous()
        for t in counts:
            mhc_pre_hand_splitk(torch.randn(t, K).half(), phi, torch.zeros(t, N))
            print("T=%d SIM done" % t, flush=True)
        print("PYPTO-ACCEPTED")


if __name__ == "__main__":
    main()
