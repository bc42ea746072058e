"""c145 (outside batch corpus26, k237): Qwen3-0.6B MLP front half in fp16: post-attention RMSNorm -> fused gate_up projection -> SwiGLU (V -> C -> V).

x [t, 1024] fp16, gamma [1024] fp16, w_gate_up [1024(K), 6144(N)] fp16 ([K, N] layout, no transpose;
columns 0..3071 = gate, 3072..6143 = up), out h [t, 3072] fp16 = silu(gate) * up.
Token loop with a step (pypto.loop(0, t, 32)), valid_shape on the tail tile, helpers written as
@pypto.frontend.function with an out parameter + out.move(), result written back by slice assignment.
"""
import numpy as np

from batch_harness import pypto, run, bf16_round, fp16_round  # noqa: F401

H = 1024
INTER = 3072
TILE = 32
EPS = 1e-6


@pypto.frontend.function
def rmsnorm_fp16(x: pypto.Tensor(), gamma_fp32: pypto.Tensor(), out: pypto.Tensor(), eps: float):
    x_fp32 = pypto.cast(x, pypto.DT_FP32)
    var = pypto.sum(x_fp32 * x_fp32, -1, keepdim=True) / x.shape[-1]
    y = x_fp32 * pypto.rsqrt(var + eps) * gamma_fp32
    out.move(pypto.cast(y, pypto.DT_FP16))


@pypto.frontend.function
def silu_mul(gate: pypto.Tensor(), up: pypto.Tensor(), out: pypto.Tensor()):
    sig = 1.0 / (pypto.exp(gate * -1.0) + 1.0)
    out.move(pypto.cast(gate * sig * up, pypto.DT_FP16))


@pypto.frontend.jit(
    pass_options={"cube_l1_reuse_setting": {-1: 2, 1: 1}, "vec_nbuffer_setting": {0: 2}},
)
def qwen3_mlp_gate_up_kernel(
    x: pypto.Tensor([pypto.DYNAMIC, H], pypto.DT_FP16),
    gamma: pypto.Tensor([H], pypto.DT_FP16),
    w_gate_up: pypto.Tensor([H, 2 * INTER], pypto.DT_FP16),
    h_out: pypto.Tensor([pypto.DYNAMIC, INTER], pypto.DT_FP16),
):
    t = x.shape[0]
    w_gate_up.set_cache_policy(pypto.CachePolicy.NONE_CACHEABLE, True)
    pypto.set_vec_tile_shapes(1, H)
    gamma_fp32 = pypto.cast(pypto.reshape(gamma, [1, H], inplace=True), pypto.DT_FP32)

    for t_idx in pypto.loop(0, t, TILE, name="MLP_T_LOOP", idx_name="t_idx"):
        valid_t = (t - t_idx).min(TILE)
        x_tile = pypto.view(x, [TILE, H], [t_idx, 0], valid_shape=[valid_t, H])

        pypto.set_semantic_label("post-attn-rmsnorm")
        pypto.set_vec_tile_shapes(8, H)
        normed = pypto.tensor([TILE, H], pypto.DT_FP16, "normed")
        rmsnorm_fp16(x_tile, gamma_fp32, normed, EPS)

        pypto.set_semantic_label("gate-up-linear")
        pypto.set_cube_tile_shapes([32, 32], [256, 512], [128, 256])
        gate_up = pypto.matmul(normed, w_gate_up, pypto.DT_FP32)

        pypto.set_semantic_label("swiglu")
        pypto.set_vec_tile_shapes(8, 1024)
        gate = pypto.view(gate_up, [TILE, INTER], [0, 0], valid_shape=[valid_t, INTER])
        up = pypto.view(gate_up, [TILE, INTER], [0, INTER], valid_shape=[valid_t, INTER])
        act = pypto.tensor([TILE, INTER], pypto.DT_FP16, "act")
        silu_mul(gate, up, act)
        h_out[t_idx:t_idx + TILE, :] = act


def make_case(T):
    rng = np.random.default_rng(237 + T)
    x = fp16_round(rng.standard_normal((T, H)).astype(np.float32))
    gamma = fp16_round((1.0 + 0.2 * rng.standard_normal(H)).astype(np.float32))
    w = fp16_round((rng.standard_normal((H, 2 * INTER)) / np.sqrt(H)).astype(np.float32))
    xf = x.astype(np.float64)
    rstd = 1.0 / np.sqrt((xf * xf).mean(-1, keepdims=True) + EPS)
    normed = fp16_round((xf * rstd * gamma.astype(np.float64)).astype(np.float32)).astype(np.float64)
    gu = (normed @ w.astype(np.float64)).astype(np.float32).astype(np.float64)
    g, u = gu[:, :INTER], gu[:, INTER:]
    h = fp16_round((g / (1.0 + np.exp(-g)) * u).astype(np.float32))
    return ([(x, "fp16"), (gamma, "fp16"), (w, "fp16")],
            [((T, INTER), "fp16")], [h], [(1e-3, 1e-3)], [])


if __name__ == "__main__":
    run("k237_qwen3_mlp_swiglu_fp16", qwen3_mlp_gate_up_kernel, make_case)
