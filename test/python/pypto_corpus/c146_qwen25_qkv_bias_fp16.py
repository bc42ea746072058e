"""c146 (outside batch corpus26, k241): Qwen2.5-7B attention prolog in fp16: input RMSNorm -> fused QKV projection with bias (V -> C -> V split).

x [t, 3584] fp16, gamma [3584] fp16, w_qkv [4608(N), 3584(K)] fp16 (b_trans=True),
b_qkv [4608] fp16 added by the matmul (extend_params bias_tensor, reshaped in place to [1, 4608]).
Outputs: q [t, 3584], k [t, 512], v [t, 512] fp16 (views of the fused result).
loop_unroll with a non power-of-two factor list [48, 16] (+1).
"""
import numpy as np

from batch_harness import pypto, run, bf16_round, fp16_round  # noqa: F401

H = 3584
Q_DIM = 28 * 128
KV_DIM = 4 * 128
N = Q_DIM + 2 * KV_DIM
EPS = 1e-6


@pypto.frontend.jit(
    pass_options={"cube_l1_reuse_setting": {-1: 2, 1: 1}, "vec_nbuffer_setting": {0: 2}},
    runtime_options={"stitch_function_max_num": 128},
)
def qwen25_qkv_kernel(
    x: pypto.Tensor([pypto.DYNAMIC, H], pypto.DT_FP16),
    gamma: pypto.Tensor([H], pypto.DT_FP16),
    w_qkv: pypto.Tensor([N, H], pypto.DT_FP16),
    b_qkv: pypto.Tensor([N], pypto.DT_FP16),
    q_out: pypto.Tensor([pypto.DYNAMIC, Q_DIM], pypto.DT_FP16),
    k_out: pypto.Tensor([pypto.DYNAMIC, KV_DIM], pypto.DT_FP16),
    v_out: pypto.Tensor([pypto.DYNAMIC, KV_DIM], pypto.DT_FP16),
):
    t = x.shape[0]
    w_qkv.set_cache_policy(pypto.CachePolicy.NONE_CACHEABLE, True)
    bias_2d = pypto.reshape(b_qkv, [1, N], inplace=True)
    gamma_2d = pypto.reshape(gamma, [1, H], inplace=True)
    pypto.set_vec_tile_shapes(1, H)
    gamma_fp32 = pypto.cast(gamma_2d, pypto.DT_FP32)

    for t_idx, t_tile in pypto.loop_unroll(0, t, 1, name="QKV_LOOP", idx_name="t_idx", unroll_list=[48, 16]):
        x_tile = pypto.view(x, [t_tile, H], [t_idx, 0])

        pypto.set_semantic_label("input-rmsnorm")
        pypto.set_vec_tile_shapes(4, H)
        xf = pypto.cast(x_tile, pypto.DT_FP32)
        var = pypto.sum(xf * xf, -1, keepdim=True) * (1.0 / H)
        xn = pypto.cast(xf * pypto.rsqrt(var + EPS) * gamma_fp32, pypto.DT_FP16)

        pypto.set_semantic_label("qkv-linear-bias")
        pypto.set_cube_tile_shapes([16, 64], [128, 512], [256, 256])
        qkv = pypto.matmul(xn, w_qkv, pypto.DT_FP16, b_trans=True,
                           extend_params={"bias_tensor": bias_2d})

        pypto.set_semantic_label("qkv-split")
        pypto.set_vec_tile_shapes(4, 512)
        q = pypto.view(qkv, [t_tile, Q_DIM], [0, 0])
        k = pypto.view(qkv, [t_tile, KV_DIM], [0, Q_DIM])
        v = pypto.view(qkv, [t_tile, KV_DIM], [0, Q_DIM + KV_DIM])
        pypto.assemble(pypto.clone(q), [t_idx, 0], q_out)
        pypto.assemble(pypto.clone(k), [t_idx, 0], k_out)
        pypto.assemble(pypto.clone(v), [t_idx, 0], v_out)


def make_case(T):
    rng = np.random.default_rng(241 + T)
    x = fp16_round(rng.standard_normal((T, H)).astype(np.float32))
    gamma = fp16_round((1.0 + 0.2 * rng.standard_normal(H)).astype(np.float32))
    w = fp16_round((rng.standard_normal((N, H)) / np.sqrt(H)).astype(np.float32))
    b = fp16_round((0.5 * rng.standard_normal(N)).astype(np.float32))
    xf = x.astype(np.float64)
    xn = fp16_round((xf / np.sqrt((xf * xf).mean(-1, keepdims=True) + EPS) * gamma).astype(np.float32))
    qkv = fp16_round((xn.astype(np.float64) @ w.astype(np.float64).T + b).astype(np.float32))
    q, k, v = qkv[:, :Q_DIM], qkv[:, Q_DIM:Q_DIM + KV_DIM], qkv[:, Q_DIM + KV_DIM:]
    return ([(x, "fp16"), (gamma, "fp16"), (w, "fp16"), (b, "fp16")],
            [((T, Q_DIM), "fp16"), ((T, KV_DIM), "fp16"), ((T, KV_DIM), "fp16")],
            [q, k, v], [(1e-3, 1e-3)] * 3, [])


if __name__ == "__main__":
    run("k241_qwen25_qkv_bias_fp16", qwen25_qkv_kernel, make_case)
