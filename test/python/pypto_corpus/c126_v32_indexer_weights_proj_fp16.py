"""c126 (outside batch corpus20, k180): DeepSeek-V3.2 lightning-indexer prolog, Weight-Linear segment:
x @ w_proj (bf16, NZ, [7168, 64], bf16 out) (C) -> cast fp32, scale by 1/(sqrt(head_num)*sqrt(head_dim)) (V)
-> fp16 output.

Follows hicann/pypto models/deepseek_v32_exp/lightning_indexer_prolog_quant_impl.py (r0.2.0),
lightning_indexer_prolog_quant: the Weight-Linear block of the loop_unroll body verbatim, the kernel
decorator, the shape reads (head_num from w_proj_in, head_dim from hadamard_q_in, which is kept as
an input only for its shape, as in the source) and the configs of
deepseekv32_lightning_indexer_prolog_quant.py test_b4_s1_2_s2_64k (w_linear [16,16,1024,1024,32,32]).
Sizes as the source: h 7168, head_num 64, head_dim 128.
"""
import math
from dataclasses import dataclass
from typing import List

import numpy as np

from batch_harness import pypto, run, bf16_round, fp16_round

L0M_INDEX = 0
L1M_INDEX = 1
L0K_INDEX = 2
L1K_INDEX = 3
L0N_INDEX = 4
L1N_INDEX = 5


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


@pypto.frontend.jit(
    pass_options={"cube_l1_reuse_setting": {1: 4},
                  "pg_upper_bound": 8192},
    runtime_options={"stitch_function_max_num": 128,
                    "device_sched_mode": 1}
)
def indexer_weights_linear(
    x_in: pypto.Tensor([pypto.DYNAMIC, pypto.STATIC], pypto.DT_BF16),
    w_proj_in: pypto.Tensor([pypto.STATIC, pypto.STATIC], pypto.DT_BF16, format=pypto.TileOpFormat.TILEOP_NZ),
    hadamard_q_in: pypto.Tensor([pypto.STATIC, pypto.STATIC], pypto.DT_BF16),
    weights_out: pypto.Tensor([pypto.DYNAMIC, pypto.STATIC], pypto.DT_FP16),

    configs
):
    x_dtype = x_in.dtype
    # 动态轴
    t = x_in.shape[0]
    h = x_in.shape[1]
    head_num = w_proj_in.shape[1]
    head_dim = hadamard_q_in.shape[0]

    unroll_list = configs.unroll_list
    for t_idx, unroll_length in pypto.loop_unroll(0, t, 1, name="IndexerPrologQuantQuantLoop", idx_name="tIdx",
                                                unroll_list=unroll_list, ):
        t_tile = unroll_length
        x = pypto.view(x_in, [t_tile, h], [t_idx, 0], valid_shape=[t_tile, h])  # 这里将t_tile分档，offset不需要乘t_tile

        pypto.set_semantic_label("Weight-Linear")
        w_linear = configs.w_linear
        pypto.set_cube_tile_shapes([w_linear[L0M_INDEX], w_linear[L1M_INDEX]],
                                [w_linear[L0K_INDEX], w_linear[L1K_INDEX]],
                                [w_linear[L0N_INDEX], w_linear[L1N_INDEX]])
        pypto.set_vec_tile_shapes(t_tile, head_num)
        weights = pypto.cast(pypto.matmul(x, w_proj_in, x_dtype), pypto.DT_FP32)
        weights = pypto.mul(weights, 1.0 / (math.sqrt(head_num) * math.sqrt(head_dim)))
        weights_f16 = pypto.cast(weights, pypto.DT_FP16)
        pypto.assemble(weights_f16, [t_idx, 0], weights_out)


H, N, D = 7168, 64, 128
f32 = np.float32


def make_case(T):
    rng = np.random.default_rng(180 + T)
    x = bf16_round(rng.uniform(-1, 1, (T, H)))
    w = bf16_round(rng.uniform(-1, 1, (H, N)))
    had = bf16_round(rng.uniform(-1, 1, (D, D)))
    mm = bf16_round(x.astype(np.float64) @ w.astype(np.float64))
    ref = fp16_round(mm * f32(1.0 / (math.sqrt(N) * math.sqrt(D))))
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
    ins = [(x, "bf16"), (w, "bf16"), (had, "bf16")]
    return ins, [((T, N), "fp16")], [ref], [(1e-4, 0.0078125)], [configs]


if __name__ == "__main__":
    run("k180_v32_indexer_weights_proj_fp16", indexer_weights_linear, make_case)
