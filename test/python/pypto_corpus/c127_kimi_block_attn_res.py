"""c127 (outside batch corpus20, k181): Kimi block attention-residual forward:
RMSNorm over [bt, L, D] (V) -> pseudo-query projection matmul(proj_weight [1,1,D], k, b_trans) (C)
-> softmax over the L blocks (V) -> weighted sum matmul(alpha [bt,1,L], v) (C).

Follows hicann/pypto models/kimi/block_attn_res_impl.py (master, commit 453a2c3ae; not in r0.2.0):
ai_infra_block_attn_res_forward_kernel and its l_max=32 wrapper, verbatim except where 0.2.0 lacks the
API: pypto.div(..., pypto.PrecisionType.INTRINSIC) -> pypto.div(...) (0.2.0's div takes two operands);
set_pass_options string keys ("DEFAULT", "func8_2") -> -1; runtime option max_workspace_kb dropped;
gamma [1,1,D] pre-expanded to [1,32,D] with expand_clone (0.2.0 broadcasts one axis per binary op).
D = 1536 (the source's second tuned case), L = 24 blocks (dynamic, padded to l_max 32), scale 1.0,
eps 1e-6, enable_rmsnorm True.
"""
import numpy as np

from batch_harness import pypto, run, bf16_round


def ai_infra_block_attn_res_forward_kernel(
    v_flat, proj_weight, gamma_fp32, h_out, rms_cache, alpha_cache_3d, scale, rms_norm_eps, enable_rmsnorm, l_max
):
    """PyPTO function ai_infra_block_attn_res_forward_kernel

    v_flat:         [B*T, L, D]    bf16/fp16
    proj_weight:    [1, 1, D]      fp32
    gamma_fp32:     [1, 1, D]      fp32
    h_out:          [B*T, 1, D]    bf16/fp16
    rms_cache:      [B*T, L, 1]    fp32
    alpha_cache_3d: [B*T, L]       fp32
    """
    bt, l, d = v_flat.shape  # noqa: E741
    dtype = v_flat.dtype
    unroll_list = [1, 64, 128]
    norm_m_tile = 64 * 1024 // (4 * d)
    norm_m_tile = max(norm_m_tile, 1)

    # source keys are strings ("DEFAULT", "func8_0", "func8_2"); PyPTO 0.2.0 takes int group ids only
    # (string keys: "Unable to cast Python instance of type <class 'dict'>"), so DEFAULT -> -1 and the
    # named-function entries are dropped.
    if d == 512:
        pypto.set_pass_options(
            vec_nbuffer_setting={-1: 8},
            cube_nbuffer_setting={-1: 8},
            cube_l1_reuse_setting={-1: 2},
        )
    elif d == 1536:
        pypto.set_pass_options(
            vec_nbuffer_setting={-1: 8},
            cube_nbuffer_setting={-1: 16},
            cube_l1_reuse_setting={-1: 2},
        )

    pypto.experimental.set_operation_options(combine_axis=True)

    # 0.2.0 broadcasts only one axis in a binary op ("Only allow to expand one axis! ... Operand shape:
    # ([1, 1, 1536]) Result shape: ([128, 32, 1536])"), so gamma is pre-expanded along L (not in the source).
    pypto.set_vec_tile_shapes(1, norm_m_tile, d)
    gamma_fp32 = pypto.expand_clone(gamma_fp32, [1, l_max, d])

    for bt_idx, unroll_length in pypto.loop_unroll(
        0,
        bt,
        1,
        name="Block_Attn_Res_T_Loop",
        idx_name="bt_idx",
        unroll_list=unroll_list,
    ):
        tile_bt = unroll_length

        v = pypto.view(v_flat, [tile_bt, l_max, d], [bt_idx, 0, 0], valid_shape=[tile_bt, l, d])

        if enable_rmsnorm:
            pypto.set_semantic_label("RmsNorm")
            pypto.set_vec_tile_shapes(1, norm_m_tile, d)
            v_fp32 = pypto.cast(v, pypto.DT_FP32)
            v_sq = pypto.mul(v_fp32, v_fp32)
            v_sq_sum = pypto.sum(v_sq, dim=-1, keepdim=True)
            mean_val = pypto.div(v_sq_sum, d)                  # source: ..., pypto.PrecisionType.INTRINSIC)
            rms_val = pypto.sqrt(pypto.add(mean_val, rms_norm_eps))
            k_fp32 = pypto.div(v_fp32, rms_val)                # source: ..., pypto.PrecisionType.INTRINSIC)
            k_fp32 = pypto.mul(k_fp32, gamma_fp32)

            pypto.assemble(rms_val, [bt_idx, 0, 0], rms_cache)

        pypto.set_semantic_label("Attention Scores")
        if enable_rmsnorm:
            matmul_lhs = k_fp32
        else:
            pypto.set_vec_tile_shapes(1, norm_m_tile, d)
            matmul_lhs = pypto.cast(v, pypto.DT_FP32)
        pypto.set_vec_tile_shapes(1, 1, d)

        if l_max == 32:
            pypto.set_cube_tile_shapes([l_max, l_max], [512, 512], [16, 16])
        else:
            pypto.set_cube_tile_shapes([l_max, l_max], [128, 512], [16, 16])
        logits_3d = pypto.matmul(proj_weight, matmul_lhs, pypto.DT_FP32, a_trans=False, b_trans=True)
        logits = pypto.reshape(logits_3d, [tile_bt, l_max], valid_shape=[tile_bt, l])

        pypto.set_semantic_label("Attention Softmax")
        pypto.set_vec_tile_shapes(128, l_max)
        if scale != 1.0:
            logits = pypto.mul(logits, scale)
        alpha = pypto.softmax(logits, dim=-1)

        pypto.assemble(alpha, [bt_idx, 0], alpha_cache_3d)

        alpha_3d = pypto.reshape(alpha, [tile_bt, 1, l_max], valid_shape=[tile_bt, 1, l])
        if not enable_rmsnorm:
            pypto.set_vec_tile_shapes(1, norm_m_tile, d)
            v_fp32 = pypto.cast(v, pypto.DT_FP32)

        pypto.set_semantic_label("Weighted Summation")
        if l_max == 32:
            pypto.set_cube_tile_shapes([1, 1], [l_max, l_max], [256, 256])
        else:
            pypto.set_cube_tile_shapes([1, 1], [128, 128], [128, 128])
        h = pypto.matmul(alpha_3d, v_fp32, dtype)

        pypto.assemble(h, [bt_idx, 0, 0], h_out)


@pypto.frontend.jit(
    runtime_options={"stitch_function_max_num": 64, "device_sched_mode": 0},  # source adds "max_workspace_kb": 300000 (unknown to 0.2.0: IndexError map::at)
)
def ai_infra_block_attn_res_forward_kernel_l_max_32(
    v_flat: pypto.Tensor([pypto.DYNAMIC, pypto.DYNAMIC, pypto.STATIC]),
    proj_weight: pypto.Tensor([pypto.STATIC, pypto.STATIC, pypto.STATIC]),
    gamma_fp32: pypto.Tensor([pypto.STATIC, pypto.STATIC]),
    h_out: pypto.Tensor([pypto.DYNAMIC, pypto.STATIC, pypto.STATIC]),
    rms_cache: pypto.Tensor([pypto.DYNAMIC, pypto.DYNAMIC, pypto.STATIC]),
    alpha_cache_3d: pypto.Tensor([pypto.DYNAMIC, pypto.DYNAMIC]),
    scale: float,
    rms_norm_eps: float,
    enable_rmsnorm: bool,
):
    ai_infra_block_attn_res_forward_kernel(
        v_flat, proj_weight, gamma_fp32, h_out, rms_cache, alpha_cache_3d, scale, rms_norm_eps, enable_rmsnorm, 32
    )


L, D = 24, 1536
EPS = 1e-6
f32 = np.float32


def make_case(T):
    rng = np.random.default_rng(181 + T)
    v = bf16_round(rng.standard_normal((T, L, D)))
    q = bf16_round(rng.standard_normal(D) / np.sqrt(D * 4)).reshape(1, 1, D)   # proj_weight (bf16 -> fp32)
    gamma = bf16_round(rng.uniform(0.5, 1.5, D)).reshape(1, 1, D)
    # golden (fp64 like the source's CPU golden; bf16 rounding of h only)
    v64 = v.astype(np.float64)
    rms = np.sqrt((v64 ** 2).mean(-1, keepdims=True) + EPS)             # [T, L, 1]
    k = v64 / rms * gamma
    logits = (k * q).sum(-1)                                             # [T, L]
    e = np.exp(logits - logits.max(-1, keepdims=True))
    alpha = e / e.sum(-1, keepdims=True)
    h = bf16_round((alpha[:, :, None] * v64).sum(1, keepdims=True))     # [T, 1, D]
    ins = [(v, "bf16"), (q, "fp32"), (gamma, "fp32")]
    outs = [((T, 1, D), "bf16"), ((T, L, 1), "fp32"), ((T, L), "fp32")]
    return ins, outs, [h, rms, alpha], [(1e-4, 0.0078125), (1e-5, 1e-4), (1e-5, 1e-4)], [1.0, EPS, True]


if __name__ == "__main__":
    run("k181_kimi_block_attn_res", ai_infra_block_attn_res_forward_kernel_l_max_32, make_case)
