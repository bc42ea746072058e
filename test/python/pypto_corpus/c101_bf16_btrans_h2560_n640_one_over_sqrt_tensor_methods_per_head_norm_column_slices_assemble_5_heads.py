"""c101 (outside batch corpus17, k151) (fresh): QK-norm style. bf16 x [T,2560] -> RMSNorm helper with Tensor methods and a Python-float
reciprocal `1.0 / (ms + eps).sqrt()`, fp32 gamma [2560] reshaped (not inplace) in the loop -> bf16 @ bf16
w [640, 2560] ([N,K], b_trans) -> fp32 -> per-head RMSNorm over 5 heads of 128, each head a column slice
z[:, h*128:(h+1)*128] of the matmul tile, times a bf16 head gamma [128] -> bf16, each head assembled at
[off, h*128].  loop_unroll [32, 4, 1].
Tolerance 2e-2 + 2e-2.
"""
import numpy as np
from batch_harness import PTO, pypto, run, bf16_round

H, NH, HD, EPS = 2560, 5, 128, 1e-6
N = NH * HD
_RT = {} if PTO else {"run_mode": pypto.RunMode.SIM}


def rms(x32, eps):
    ms = x32.mul(x32).sum(-1, keepdim=True).mul(1.0 / x32.shape[-1])
    return x32.mul(1.0 / (ms + eps).sqrt())


@pypto.frontend.jit(runtime_options=_RT)
def q_proj_head_norm(
    x: pypto.Tensor([pypto.DYNAMIC, H], pypto.DT_BF16),
    gamma: pypto.Tensor([H], pypto.DT_FP32),
    w: pypto.Tensor([N, H], pypto.DT_BF16),
    head_gamma: pypto.Tensor([HD], pypto.DT_BF16),
    out: pypto.Tensor([pypto.DYNAMIC, N], pypto.DT_BF16),
):
    t = x.shape[0]
    for off, tile in pypto.loop_unroll(0, t, 1, name="TOK", idx_name="off", unroll_list=[32, 4, 1]):
        pypto.set_vec_tile_shapes(4, 1280)
        xt = pypto.view(x, [tile, H], [off, 0], valid_shape=[tile, H])
        g = pypto.reshape(gamma, [1, H])
        xn = pypto.cast(rms(pypto.cast(xt, pypto.DT_FP32), EPS).mul(g), pypto.DT_BF16)

        pypto.set_cube_tile_shapes([16, 32], [256, 512], [128, 128])
        z = pypto.matmul(xn, w, pypto.DT_FP32, b_trans=True)

        pypto.set_vec_tile_shapes(4, HD)
        hg = pypto.cast(pypto.reshape(head_gamma, [1, HD]), pypto.DT_FP32)
        for h in range(NH):
            zh = z[:, h * HD:(h + 1) * HD]
            yh = pypto.cast(rms(zh, EPS).mul(hg), pypto.DT_BF16)
            pypto.assemble(yh, [off, h * HD], out)


def make_case(T):
    rng = np.random.default_rng(151 + T)
    x = bf16_round(rng.normal(0, 1, (T, H)))
    g = rng.uniform(0.5, 1.5, H).astype(np.float32)
    w = bf16_round(rng.normal(0, 0.03, (N, H)))
    hg = bf16_round(rng.uniform(0.5, 1.5, HD))
    xd = x.astype(np.float64)
    xn = bf16_round(xd / np.sqrt((xd * xd).mean(-1, keepdims=True) + EPS) * g)
    z = (xn.astype(np.float64) @ w.T.astype(np.float64)).reshape(T, NH, HD)
    y = z / np.sqrt((z * z).mean(-1, keepdims=True) + EPS) * hg
    return ([(x, "bf16"), (g, "fp32"), (w, "bf16"), (hg, "bf16")], [((T, N), "bf16")],
            [bf16_round(y.reshape(T, N))], [(2e-2, 2e-2)], [])


if __name__ == "__main__":
    run("c101", q_proj_head_norm, make_case)
