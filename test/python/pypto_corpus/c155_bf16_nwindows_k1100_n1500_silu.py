"""c155 (2026-12-07, outside batch corpus34, k324-k335: odd K and N against ragged cube tiles; its author's k330).

k330: RMSNorm(bf16) -> bf16 x W[K,N] (no trans) taken in N windows by a loop over pypto.view(w, [K, 512], ...)
with a partial last window (512, 512, 476; valid_shape), fp32 out + bias + SiLU -> bf16. K=1100 (kL0=128,
kL1=256 -> 76 tail), nL0=nL1=128 -> the 476 window ends in a 92-wide tile; token pypto.loop of 16 with a tail."""
import numpy as np
from batch_harness import pypto, run, bf16_round, fp16_round

K, N, NW, TILE, EPS = 1100, 1500, 512, 16, 1e-6
NWIN = (N + NW - 1) // NW


@pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.SIM})
def kernel(
    x: pypto.Tensor([pypto.DYNAMIC, K], pypto.DT_BF16),
    gamma: pypto.Tensor([1, K], pypto.DT_BF16),
    w: pypto.Tensor([K, N], pypto.DT_BF16),
    bias: pypto.Tensor([1, N], pypto.DT_FP32),
    out: pypto.Tensor([pypto.DYNAMIC, N], pypto.DT_BF16),
):
    t = x.shape[0]
    pypto.set_vec_tile_shapes(1, 552)
    g32 = pypto.cast(gamma, pypto.DT_FP32)
    for idx in pypto.loop(0, (t + TILE - 1) // TILE, 1, name="TOK", idx_name="idx"):
        off = idx * TILE
        valid = (t - off).min(TILE)
        xv = pypto.view(x, [TILE, K], [off, 0], valid_shape=[valid, K])
        pypto.set_vec_tile_shapes(4, 552)
        x32 = pypto.cast(xv, pypto.DT_FP32)
        ms = pypto.sum(x32 * x32, -1, keepdim=True) * (1.0 / K)
        nb = pypto.cast(x32 * pypto.rsqrt(ms + EPS) * g32, pypto.DT_BF16)
        for n_idx in pypto.loop(0, NWIN, 1, name="NWIN", idx_name="n_idx"):
            n_off = n_idx * NW
            nvalid = (N - n_off).min(NW)
            wv = pypto.view(w, [K, NW], [0, n_off], valid_shape=[K, nvalid])
            bv = pypto.view(bias, [1, NW], [0, n_off], valid_shape=[1, nvalid])
            pypto.set_cube_tile_shapes([16, 16], [128, 256], [128, 128])
            mm = pypto.matmul(nb, wv, pypto.DT_FP32)
            pypto.set_vec_tile_shapes(16, 128)
            z = mm + bv
            s = z / (pypto.exp(pypto.neg(z)) + 1.0)
            pypto.assemble(pypto.cast(s, pypto.DT_BF16), [off, n_off], out)


def make_case(T):
    rng = np.random.default_rng(330 + T)
    x = bf16_round(rng.standard_normal((T, K)).astype(np.float32))
    g = bf16_round(rng.uniform(0.5, 1.5, (1, K)).astype(np.float32))
    w = bf16_round((rng.standard_normal((K, N)) / np.sqrt(K)).astype(np.float32))
    b = rng.uniform(-0.5, 0.5, (1, N)).astype(np.float32)
    rs = 1.0 / np.sqrt((x * x).mean(-1, keepdims=True) + EPS)
    nb = bf16_round(x * rs * g)
    z = nb @ w + b
    ref = bf16_round(z / (1.0 + np.exp(-z)))
    return ([(x, "bf16"), (g, "bf16"), (w, "bf16"), (b, "fp32")], [((T, N), "bf16")], [ref],
            [(1e-4, 0.0078125)], [])


if __name__ == "__main__":
    run("k330", kernel, make_case)
