"""c131 (outside batch corpus21, k189): MatMul -> per-head RMSNorm (C->V), Qwen3-style k projection + k_norm, head-major output.

x [T, 3072] bf16, w_k [3072, 1024] bf16 ([K, N]), gamma_k [128] bf16 (per-head norm weight,
reshaped to [1,1,128] and expanded to [1, 8, 128] with expand_clone), output k_bnsd [8, T, 128]
bf16 (heads first: the [tile, 8, 128] result is transposed to [8, tile, 128] before assemble).
Token loop: loop_unroll with an odd list [16, 2] (1 appended).
"""
import numpy as np
from batch_harness import pypto, run, bf16_round

HID = 3072
NKV = 8
HD = 128
N = NKV * HD


@pypto.frontend.jit(pass_options={"cube_l1_reuse_setting": {-1: 2, 1: 1}})
def k189_kproj_headnorm_bnsd(
    x: pypto.Tensor([pypto.DYNAMIC, HID], pypto.DT_BF16),
    w_k: pypto.Tensor([HID, N], pypto.DT_BF16),
    gamma_k: pypto.Tensor([HD], pypto.DT_BF16),
    k_bnsd: pypto.Tensor([NKV, pypto.DYNAMIC, HD], pypto.DT_BF16),
):
    n_tok = x.shape[0]
    pypto.set_vec_tile_shapes(1, 1, HD)
    g3 = pypto.cast(pypto.reshape(gamma_k, [1, 1, HD]), pypto.DT_FP32)

    for b0, bt in pypto.loop_unroll(n_tok, name="k_loop", idx_name="b0", unroll_list=[16, 2]):
        pypto.set_semantic_label("k-linear")
        pypto.set_cube_tile_shapes([16, 16], [256, 1024], [128, 128])
        kf = pypto.matmul(x[b0:b0 + bt, :], w_k, pypto.DT_FP32)

        pypto.set_semantic_label("k-headnorm")
        pypto.set_vec_tile_shapes(2, NKV, HD)
        k3 = pypto.reshape(kf, [bt, NKV, HD])
        ms = pypto.sum(k3 * k3, -1, keepdim=True) * (1.0 / HD)
        gk = pypto.expand_clone(g3, [1, NKV, HD])   # one axis at a time
        kn = k3 * pypto.rsqrt(ms + 1e-6) * gk
        kn_bf = pypto.cast(kn, pypto.DT_BF16)
        pypto.set_vec_tile_shapes(NKV, 2, HD)
        kt = pypto.transpose(kn_bf, 0, 1)          # [8, bt, 128]
        pypto.assemble(kt, [0, b0, 0], k_bnsd)


def make_case(T):
    rng = np.random.default_rng(189 + T)
    x = bf16_round(rng.standard_normal((T, HID)).astype(np.float32))
    w = bf16_round((rng.standard_normal((HID, N)) / np.sqrt(HID)).astype(np.float32))
    g = bf16_round((1.0 + 0.2 * rng.standard_normal(HD)).astype(np.float32))
    k = (x.astype(np.float64) @ w.astype(np.float64)).astype(np.float32).reshape(T, NKV, HD)
    ms = (k * k).sum(-1, keepdims=True, dtype=np.float32) * np.float32(1.0 / HD)
    kn = k * (np.float32(1) / np.sqrt(ms + np.float32(1e-6))) * g
    ref = bf16_round(kn.astype(np.float32)).transpose(1, 0, 2).copy()
    return ([(x, "bf16"), (w, "bf16"), (g, "bf16")], [((NKV, T, HD), "bf16")], [ref],
            [(1e-4, 0.0078125)], [])


if __name__ == "__main__":
    run("k189_kproj_headnorm_bnsd", k189_kproj_headnorm_bnsd, make_case)
