"""c156 (2026-12-07, outside batch corpus34, k324-k335: odd K and N against ragged cube tiles; its author's k332).

k332: mhc_pre-like, split-K on: x(bf16)->fp32, mm = x32 @ W[24,K]^T (fp32, b_trans), odd K=2901 with
set_cube_tile_shapes([16,16],[512,1024],[128,128], enable_split_k=True) (kL1 tiles 1024,1024,853; kL0 tail 341),
N=24 (one 24-wide tile of nL0=128), out = mm / sqrt(mean(x^2)+eps) fp32; loop_unroll([16, 4]) -> 16/4/1 tiles."""
import numpy as np
from batch_harness import pypto, run, bf16_round, fp16_round

K, N, EPS = 2901, 24, 1e-6


@pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.SIM, "stitch_function_max_num": 128})
def kernel(
    x: pypto.Tensor([pypto.DYNAMIC, K], pypto.DT_BF16),
    w: pypto.Tensor([N, K], pypto.DT_FP32),
    out: pypto.Tensor([pypto.DYNAMIC, N], pypto.DT_FP32),
):
    t = x.shape[0]
    for t_idx, tile_t in pypto.loop_unroll(0, t, 1, name="t_loop", idx_name="t_idx", unroll_list=[16, 4]):
        xv = pypto.view(x, [tile_t, K], [t_idx, 0])
        pypto.set_vec_tile_shapes(min(tile_t, 4), 1456)
        x32 = pypto.cast(xv, pypto.DT_FP32)
        ms = pypto.sum(x32 * x32, -1, keepdim=True) * (1.0 / K)
        den = pypto.sqrt(ms + EPS)
        pypto.set_cube_tile_shapes([16, 16], [512, 1024], [128, 128], enable_split_k=True)
        mm = pypto.matmul(x32, w, pypto.DT_FP32, b_trans=True)
        pypto.set_vec_tile_shapes(min(tile_t, 4), 32)
        pypto.assemble(mm / den, [t_idx, 0], out)


def make_case(T):
    rng = np.random.default_rng(332 + T)
    x = bf16_round(rng.standard_normal((T, K)).astype(np.float32))
    w = (rng.standard_normal((N, K)) / np.sqrt(K)).astype(np.float32)
    x64 = x.astype(np.float64)
    ref = (x64 @ w.T.astype(np.float64)) / np.sqrt((x64 ** 2).mean(-1, keepdims=True) + EPS)
    return ([(x, "bf16"), (w, "fp32")], [((T, N), "fp32")], [ref.astype(np.float32)], [(1e-3, 1e-3)], [])


if __name__ == "__main__":
    run("k332", kernel, make_case)
