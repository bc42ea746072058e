"""c125 (outside batch corpus20, k179): DeepSeek-V3.2 lightning-indexer prolog, Key-Linear segment:
x @ wk (bf16, NZ, fp32 out) (C) -> LayerNorm(gamma, beta) (V) -> RoPE on the first 64 dims (V) -> concat.

Follows hicann/pypto models/deepseek_v32_exp/lightning_indexer_prolog_quant_impl.py (r0.2.0):
quant_layer_norm, quant_rope_2d, rotate_half verbatim; the loop_unroll body's Key-Linear block
(set_cube_tile_shapes from configs.k_linear, matmul to DT_FP32, the t_tile-dependent vec tile,
cast of the LayerNorm to bf16, rope/nope views, concat) verbatim; decorator of
lightning_indexer_prolog_quant; configs of deepseekv32_lightning_indexer_prolog_quant.py test_b4_s1_2_s2_64k.
The segment ends at k_concat (the source continues with the Key-Hadamard matmul, a second chained
matmul, then quant + scatter into the k cache).  Sizes as the source: h 7168, head_dim 128, rope 64.
"""
from dataclasses import dataclass
from typing import List

import numpy as np

from batch_harness import pypto, run, bf16_round

L0M_INDEX = 0
L1M_INDEX = 1
L0K_INDEX = 2
L1K_INDEX = 3
L0N_INDEX = 4
L1N_INDEX = 5
VEC_TILE_4 = 4
VEC_TILE_32 = 32


@dataclass
class IndexerPrologQuantAttr:
    eps: float
    layerout_query: str
    layerout_key: str


@dataclass
class IndexerPrologQuantConfigs:
    q_linear: List[int]
    q_hd: List[int]
    k_linear: List[int]
    w_linear: List[int]
    unroll_list: List[int]

    cube_l1_reuse_setting: dict[int, int]
    pg_upper_bound: int
    block_size: int
    t_sub_tile: int
    chunk_size: int
    vec_nbuffer_setting: dict[int, int]


def quant_layer_norm(x: pypto.Tensor, gamma: pypto.Tensor, beta: pypto.Tensor, dim: int, epsilon: float):
    pypto.set_semantic_label("Key-LayerNorm")
    actual_dim = dim + len(x.shape) if dim < 0 else dim
    x_dtype = x.dtype

    x_fp32 = pypto.cast(x, pypto.DT_FP32)
    # do division first to avoid overflow
    x_scaled = x_fp32 * (1.0 / x.shape[actual_dim])
    mean = pypto.sum(x_scaled, actual_dim, keepdim=True)

    diff = x_fp32 - mean
    squared_diff = diff * diff
    squared_diff_scaled = squared_diff * (1.0 / x.shape[actual_dim])
    var = pypto.sum(squared_diff_scaled, actual_dim, keepdim=True)
    # add epsilon to avoid division by zero
    var_eps = var + epsilon
    std_var = pypto.sqrt(var_eps)
    res32 = diff / std_var

    gamma32 = pypto.cast(gamma, pypto.DT_FP32)
    beta32 = pypto.cast(beta, pypto.DT_FP32)
    return pypto.cast((res32 * gamma32) + beta32, x_dtype)


def quant_rope_2d(x: pypto.Tensor, cos: pypto.Tensor, sin: pypto.Tensor):
    pypto.set_semantic_label("Key-Rope2D")
    key_rope_dim = 2
    x_dtype = x.dtype
    t_tile = x.shape[0]
    rope_dim = x.shape[1]

    pypto.set_vec_tile_shapes(t_tile, rope_dim)
    cast_cos = pypto.cast(cos, pypto.DT_FP32)
    cast_sin = pypto.cast(sin, pypto.DT_FP32)
    x_view = pypto.cast(x, pypto.DT_FP32)

    pypto.set_vec_tile_shapes(t_tile, rope_dim)
    x_embed = (x_view * cast_cos) + ((rotate_half(x_view)) * cast_sin)
    res = pypto.cast(x_embed, x_dtype)
    return res


def rotate_half(input_tensor: pypto.Tensor) -> pypto.Tensor:
    chunk_size = 2
    shape = input_tensor.shape
    shape_size = len(shape)
    shape[shape_size - 1] //= chunk_size
    offset1 = [0] * shape_size
    offset2 = [0] * shape_size
    offset2[shape_size - 1] = shape[shape_size - 1]
    x1 = pypto.view(input_tensor, shape, offset1)
    x2 = pypto.view(input_tensor, shape, offset2)
    return pypto.concat([x2 * (-1.0), x1 + 0.0], -1)


@pypto.frontend.jit(
    pass_options={"cube_l1_reuse_setting": {1: 4},
                  "pg_upper_bound": 8192},
    runtime_options={"stitch_function_max_num": 128,
                    "device_sched_mode": 1}
)
def indexer_key_linear(
    x_in: pypto.Tensor([pypto.DYNAMIC, pypto.STATIC], pypto.DT_BF16),
    wk_in: pypto.Tensor([pypto.STATIC, pypto.STATIC], pypto.DT_BF16, format=pypto.TileOpFormat.TILEOP_NZ),
    ln_gamma_k_in: pypto.Tensor([pypto.STATIC], pypto.DT_BF16),
    ln_beta_k_in: pypto.Tensor([pypto.STATIC], pypto.DT_BF16),
    cos_idx_rope_in: pypto.Tensor([pypto.DYNAMIC, pypto.STATIC], pypto.DT_BF16),
    sin_idx_rope_in: pypto.Tensor([pypto.DYNAMIC, pypto.STATIC], pypto.DT_BF16),
    k_out: pypto.Tensor([pypto.DYNAMIC, pypto.STATIC], pypto.DT_BF16),

    configs,
    attrs
):
    x_dtype = x_in.dtype
    # 动态轴
    t = x_in.shape[0]
    h = x_in.shape[1]
    head_dim = wk_in.shape[1]
    rope_head_dim = cos_idx_rope_in.shape[1]

    gamma_2d = pypto.reshape(ln_gamma_k_in, [1, ln_gamma_k_in.shape[0]], inplace=True)
    beta_2d = pypto.reshape(ln_beta_k_in, [1, ln_beta_k_in.shape[0]], inplace=True)

    unroll_list = configs.unroll_list
    for t_idx, unroll_length in pypto.loop_unroll(0, t, 1, name="IndexerPrologQuantQuantLoop", idx_name="tIdx",
                                                unroll_list=unroll_list, ):
        t_tile = unroll_length
        rope_cos = pypto.view(cos_idx_rope_in, [t_tile, rope_head_dim], [t_idx, 0],
                            valid_shape=[t_tile, rope_head_dim])
        rope_sin = pypto.view(sin_idx_rope_in, [t_tile, rope_head_dim], [t_idx, 0],
                            valid_shape=[t_tile, rope_head_dim])

        # 获取key计算的各阶段Tile参数
        k_linear = configs.k_linear
        pypto.set_semantic_label("Key-Linear")
        pypto.set_cube_tile_shapes([k_linear[L0M_INDEX], k_linear[L1M_INDEX]],
                                [k_linear[L0K_INDEX], k_linear[L1K_INDEX]],
                                [k_linear[L0N_INDEX], k_linear[L1N_INDEX]])
        x = pypto.view(x_in, [t_tile, h], [t_idx, 0], valid_shape=[t_tile, h])  # 这里将t_tile分档，offset不需要乘t_tile
        k = pypto.matmul(x, wk_in, pypto.DT_FP32)  # (t_tile, head_dim)

        if t_tile <= 32:
            pypto.set_vec_tile_shapes(min(t_tile, VEC_TILE_4), head_dim)
        else:
            pypto.set_vec_tile_shapes(min(t_tile, VEC_TILE_32), head_dim)
        k_bf16 = pypto.cast(quant_layer_norm(k, gamma_2d, beta_2d, -1, attrs.eps), x_dtype)

        k_rope = pypto.view(k_bf16, [t_tile, rope_head_dim], [0, 0], valid_shape=[t_tile, rope_head_dim])
        k_nope = pypto.view(k_bf16, [t_tile, head_dim - rope_head_dim], [0, rope_head_dim],
                            valid_shape=[t_tile, head_dim - rope_head_dim])
        k_roped = quant_rope_2d(k_rope, rope_cos, rope_sin)  # (t_tile, rope_head_dim)
        pypto.set_vec_tile_shapes(t_tile, head_dim)
        k_nope = pypto.cast(pypto.cast(k_nope, pypto.DT_FP32), k_bf16.dtype)
        k_concat = pypto.concat([k_roped, k_nope], -1)
        # (source: pypto.set_semantic_label("Key-Hadamard"); hadamard_k = pypto.matmul(k_concat, ...) ...)
        pypto.assemble(k_concat, [t_idx, 0], k_out)


H, D, ROPE = 7168, 128, 64
EPS = 1e-6
f32 = np.float32


def make_case(T):
    rng = np.random.default_rng(179 + T)
    x = bf16_round(rng.uniform(-1, 1, (T, H)))
    wk = bf16_round(rng.uniform(-1, 1, (H, D)))
    gamma = bf16_round(rng.uniform(-1, 1, D))
    beta = bf16_round(rng.uniform(-1, 1, D))
    ang = rng.uniform(0, 2 * np.pi, (T, ROPE))
    cos, sin = bf16_round(np.cos(ang)), bf16_round(np.sin(ang))
    k = (x.astype(np.float64) @ wk.astype(np.float64)).astype(f32)
    mean = (k * f32(1.0 / D)).sum(-1, keepdims=True, dtype=f32)
    diff = k - mean
    var = (diff * diff * f32(1.0 / D)).sum(-1, keepdims=True, dtype=f32)
    kb = bf16_round(diff / np.sqrt(var + f32(EPS)) * gamma + beta)
    kr = kb[:, :ROPE]
    rot = np.concatenate([-kr[:, ROPE // 2:], kr[:, :ROPE // 2]], -1)
    ref = np.concatenate([bf16_round(kr * cos + rot * sin), kb[:, ROPE:]], -1)
    configs = IndexerPrologQuantConfigs(
        q_linear=[16, 16, 512, 512, 128, 128],
        q_hd=[32, 32, 128, 128, 128, 128],
        k_linear=[16, 16, 512, 512, 64, 64],
        w_linear=[16, 16, 1024, 1024, 32, 32],
        unroll_list=[32, 16, 8, 4, 2, 1],
        cube_l1_reuse_setting={1: 4},
        pg_upper_bound=8192,
        block_size=128,
        t_sub_tile=1,
        chunk_size=2,
        vec_nbuffer_setting={-1: 1},
    )
    attrs = IndexerPrologQuantAttr(eps=EPS, layerout_query="TND", layerout_key="PA_BSND")
    ins = [(x, "bf16"), (wk, "bf16"), (gamma, "bf16"), (beta, "bf16"), (cos, "bf16"), (sin, "bf16")]
    return ins, [((T, D), "bf16")], [ref], [(1e-4, 0.0078125)], [configs, attrs]


if __name__ == "__main__":
    run("k179_v32_indexer_key_linear_ln_rope", indexer_key_linear, make_case)
