"""c144 (outside batch corpus24, k221): (fresh): bf16 x [t, 1024] @ w [K=1024, N=3072] (no b_trans) -> bf16, split: q = cols [0, 2048) reshaped
[t, 16, 128] with per-head RMSNorm (gamma [128]) -> out_q [t, 16, 128]; k = cols [2048, 3072) -> out_k [t, 1024].
loop_unroll [16, 4, 1], Tensor slicing/reshape methods."""
import numpy as np
from batch_harness import pypto, run, bf16_round

K, NQ, HD, NK, EPS = 1024, 16, 128, 1024, 1e-6
N = NQ * HD + NK


@pypto.frontend.jit
def split_headnorm(
    x: pypto.Tensor([pypto.DYNAMIC, K], pypto.DT_BF16),
    w: pypto.Tensor([K, N], pypto.DT_BF16),
    gq: pypto.Tensor([HD], pypto.DT_BF16),
    out_q: pypto.Tensor([pypto.DYNAMIC, NQ * HD], pypto.DT_BF16),
    out_k: pypto.Tensor([pypto.DYNAMIC, NK], pypto.DT_BF16),
):
    t = x.shape[0]
    pypto.set_vec_tile_shapes(1, 1, HD)
    # PyPTO 0.2.0 refused the [1,1,HD] -> [tt,NQ,HD] broadcast ("Only allow to expand one axis"), and an
    # expand_clone'd [1,NQ,HD] gamma failed its passes ("Run pass failed"): the head norm runs on [tt*NQ, HD] rows
    pypto.set_vec_tile_shapes(1, HD)
    g2 = pypto.cast(pypto.reshape(gq, [1, HD], inplace=True), pypto.DT_FP32)
    for t_idx, tt in pypto.loop_unroll(0, t, 1, name="T", idx_name="t_idx", unroll_list=[16, 4, 1]):
        xt = pypto.view(x, [tt, K], [t_idx, 0])
        pypto.set_semantic_label("qk-linear")
        pypto.set_cube_tile_shapes([32, 32], [256, 512], [128, 128])
        y = pypto.matmul(xt, w, pypto.DT_BF16)
        pypto.set_semantic_label("split")
        pypto.set_vec_tile_shapes(4, 512)
        k_part = pypto.view(y, [tt, NK], [0, NQ * HD])
        pypto.assemble(k_part, [t_idx, 0], out_k)
        q_part = pypto.view(y, [tt, NQ * HD], [0, 0])
        # PyPTO 0.2.0 failed its passes ("Run pass failed") on reshape([tt*NQ, HD]) / reshape([tt, NQ, HD]) of this
        # column slice of the matmul result: the head norm runs head by head on [tt, HD] views, out_q is [t, NQ*HD]
        pypto.set_semantic_label("q-headnorm")
        pypto.set_vec_tile_shapes(4, HD)
        for h in range(NQ):
            qh = pypto.view(q_part, [tt, HD], [0, h * HD])
            qf = pypto.cast(qh, pypto.DT_FP32)
            ms = pypto.sum(qf * qf, -1, keepdim=True) * (1.0 / HD)
            qn = pypto.cast(qf * pypto.rsqrt(ms + EPS) * g2, pypto.DT_BF16)
            pypto.assemble(qn, [t_idx, h * HD], out_q)


def make_case(T):
    rng = np.random.default_rng(221 + T)
    x = bf16_round(rng.standard_normal((T, K)))
    w = bf16_round(rng.standard_normal((K, N)) / np.sqrt(K))
    g = bf16_round(rng.uniform(0.5, 1.5, HD))
    y = bf16_round(x.astype(np.float64) @ w.astype(np.float64))
    q = y[:, :NQ * HD].reshape(T, NQ, HD)
    ms = (q * q).sum(-1, keepdims=True, dtype=np.float32) / HD
    rq = bf16_round(q / np.sqrt(ms + EPS) * g)
    return ([(x, "bf16"), (w, "bf16"), (g, "bf16")], [((T, NQ * HD), "bf16"), ((T, NK), "bf16")],
            [rq.reshape(T, NQ * HD), y[:, NQ * HD:]], [(1e-4, 0.0078125), (1e-4, 0.0078125)], [])


if __name__ == "__main__":
    run("k221_bf16_split_headnorm", split_headnorm, make_case)
