"""c95 (outside batch corpus17, k145) (copied): copied from PyPTO mainline models/deepseek_v32_exp/lightning_indexer_prolog_quant_impl.py:
quant_layer_norm, the constants, IndexerPrologQuantConfigs / IndexerPrologQuantAttr verbatim; the jit kernel
lightning_indexer_prolog_quant's options, its prologue (reshape inplace of gamma/beta), its loop_unroll and the
"Key-Linear" -> "Key-LayerNorm" block verbatim; the test's config (test_b4_s1_2_s2_64k) and its caller decorator
@pypto.options(pass_options={"enable_slice": False}).
Changes: cube_l1_reuse_setting {"Query-Linear": 4} -> {-1: 4} (SIM: "Unable to cast Python instance of type dict"); only the Key path up to k_bf16 is kept (Query path, rope, Hadamard matmul, key quant, scatter_update and
Weight-Linear dropped) and k_bf16 is assembled into a new output k_out; head_dim is read from wk_in.shape[1]
(the source reads hadamard_q_in.shape[0]); run_mode SIM added.
SK-03: C->V. bf16 x [T,7168] @ NZ bf16 wk [7168,128] [K,N] -> fp32 -> LayerNorm (mean of x*(1/n), var, sqrt,
divide, gamma, beta [128] -> [1,128]) -> bf16.
Tolerance 1e-2 + 1e-2.
"""
from dataclasses import dataclass
from typing import List

import numpy as np
from batch_harness import PTO, pypto, run, bf16_round

SHAPE_DIM_2 = 2
SHAPE_DIM_3 = 3
L0M_INDEX = 0
L1M_INDEX = 1
L0K_INDEX = 2
L1K_INDEX = 3
L0N_INDEX = 4
L1N_INDEX = 5
VEC_TILE_256 = 256
VEC_TILE_128 = 128
VEC_TILE_64 = 64
VEC_TILE_8 = 8
VEC_TILE_4 = 4
VEC_TILE_32 = 32

_RT = {"stitch_function_max_num": 128, "device_sched_mode": 1}
if not PTO:
    _RT["run_mode"] = pypto.RunMode.SIM


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


@pypto.frontend.jit(
    pass_options={"cube_l1_reuse_setting": {-1: 4}},  # SIM: {"Query-Linear": 4} -> dict cast error
    runtime_options=_RT,
)
def lightning_indexer_prolog_quant_key(
    x_in: pypto.Tensor([pypto.DYNAMIC, pypto.STATIC], pypto.DT_BF16),
    wk_in: pypto.Tensor([pypto.STATIC, pypto.STATIC], pypto.DT_BF16, format=pypto.TileOpFormat.TILEOP_NZ),
    ln_gamma_k_in: pypto.Tensor([pypto.STATIC], pypto.DT_BF16),
    ln_beta_k_in: pypto.Tensor([pypto.STATIC], pypto.DT_BF16),
    k_out: pypto.Tensor([pypto.DYNAMIC, pypto.STATIC], pypto.DT_BF16),
    configs,
    attrs,
):
    x_dtype = x_in.dtype
    # 动态轴
    t = x_in.shape[0]
    h = x_in.shape[1]
    head_dim = wk_in.shape[1]

    gamma_2d = pypto.reshape(ln_gamma_k_in, [1, ln_gamma_k_in.shape[0]], inplace=True)
    beta_2d = pypto.reshape(ln_beta_k_in, [1, ln_beta_k_in.shape[0]], inplace=True)

    unroll_list = configs.unroll_list
    for t_idx, unroll_length in pypto.loop_unroll(
        0,
        t,
        1,
        name="IndexerPrologQuantQuantLoop",
        idx_name="tIdx",
        unroll_list=unroll_list,
    ):
        t_tile = unroll_length

        # 获取key计算的各阶段Tile参数
        k_linear = configs.k_linear
        pypto.set_semantic_label("Key-Linear")
        pypto.set_cube_tile_shapes(
            [k_linear[L0M_INDEX], k_linear[L1M_INDEX]],
            [k_linear[L0K_INDEX], k_linear[L1K_INDEX]],
            [k_linear[L0N_INDEX], k_linear[L1N_INDEX]],
        )
        x = pypto.view(x_in, [t_tile, h], [t_idx, 0], valid_shape=[t_tile, h])  # 这里将t_tile分档，offset不需要乘t_tile
        k = pypto.matmul(x, wk_in, pypto.DT_FP32)  # (t_tile, head_dim)

        if t_tile <= 32:
            pypto.set_vec_tile_shapes(min(t_tile, VEC_TILE_4), head_dim)
        else:
            pypto.set_vec_tile_shapes(min(t_tile, VEC_TILE_32), head_dim)
        k_bf16 = pypto.cast(quant_layer_norm(k, gamma_2d, beta_2d, -1, attrs.eps), x_dtype)

        # added: write k_bf16 (the source goes on to rope / Hadamard)
        pypto.set_vec_tile_shapes(t_tile, head_dim)
        pypto.assemble(k_bf16, [t_idx, 0], k_out)


H, HD = 7168, 128


def make_case(T):
    rng = np.random.default_rng(145 + T)
    x = bf16_round(rng.uniform(-1, 1, (T, H)).astype(np.float32))
    wk = bf16_round(rng.uniform(-0.05, 0.05, (H, HD)).astype(np.float32))
    g = bf16_round(rng.uniform(0.5, 1.5, HD).astype(np.float32))
    b = bf16_round(rng.uniform(-0.5, 0.5, HD).astype(np.float32))
    k = x.astype(np.float64) @ wk.astype(np.float64)
    mu = k.mean(-1, keepdims=True)
    var = ((k - mu) ** 2).mean(-1, keepdims=True)
    ref = bf16_round((k - mu) / np.sqrt(var + 1e-6) * g + b)
    return ([(x, "bf16"), (wk, "bf16"), (g, "bf16"), (b, "bf16")], [((T, HD), "bf16")], [ref], [(1e-2, 1e-2)], [])


CONFIGS = IndexerPrologQuantConfigs(
    q_linear=[16, 16, 512, 512, 128, 128],
    q_hd=[32, 32, 128, 128, 128, 128],
    k_linear=[16, 16, 512, 512, 64, 64],
    w_linear=[16, 16, 1024, 1024, 32, 32],
    unroll_list=[32, 16, 8, 4, 2, 1],
    cube_l1_reuse_setting={1: 4},
    block_size=128,
    t_sub_tile=1,
    chunk_size=2,
    vec_nbuffer_setting={-1: 1},
)
ATTRS = IndexerPrologQuantAttr(eps=1e-6, layerout_query="TND", layerout_key="PA_BSND")


@pypto.options(pass_options={"enable_slice": False})
def test_key_path():
    run("c95", lightning_indexer_prolog_quant_key, make_case,
        call=lambda k, i, o, e: k(*i, *o, CONFIGS, ATTRS))


if __name__ == "__main__":
    test_key_path()
