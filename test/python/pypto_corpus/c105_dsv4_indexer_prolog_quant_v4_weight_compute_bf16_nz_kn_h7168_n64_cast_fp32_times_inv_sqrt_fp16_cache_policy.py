"""c105 (outside batch corpus18, k155) (copied): DeepSeek-V4 lightning indexer prolog quant, models/deepseek_v4/lightning_indexer_prolog_quant_v4_impl.py.

Verbatim: `quant_lightning_indexer_prolog_kernel`'s jit options (pass_options cube_l1_reuse_setting {-1: 2, 1: 1},
vec_nbuffer_setting, runtime options), annotations, set_cache_policy(NONE_CACHEABLE, True), the loop_unroll with
`combine_axis`, and its "Weight-Compute" block (lines 275-287). Dropped: the Query-Linear / dequant / rope /
Hadamard / quant path (corpus15's k131 took the Query-Linear) and its inputs/outputs; so qr, idx_wq_b, hadamard,
qr_scale, idx_wq_b_scale, q and q_scale are gone; `t` is read from x.shape[0] (the source reads qr.shape[0]) and
head_dim 128 is a constant (the source reads hadamard.shape[0]). unroll_list [128, 64, 32, 16, 8, 1] from the
caller. SK-03 C->V: bf16 x [T, 7168] @ NZ weights_proj [7168, 64] ([K, N]) -> bf16 -> fp32 * 1/(sqrt(64)*sqrt(128))
-> fp16 -> assemble.
"""
import math
from dataclasses import dataclass
from typing import List

import numpy as np

from batch_harness import PTO, bf16_round, fp16_round, pypto, run


@dataclass
class IndexerPrologQuantConfig:
    unroll_list: List[int]


_RT = {"stitch_function_max_num": 128, "device_sched_mode": 1}  # "max_workspace_kb": 65536 removed: SIM map::at
if not PTO:
    _RT["run_mode"] = pypto.RunMode.SIM

HEAD_DIM = 128


@pypto.frontend.jit(
    pass_options={
        "cube_l1_reuse_setting": {-1: 2, 1: 1},
        "vec_nbuffer_setting": {0: 2},
    },
    runtime_options=_RT,
)
def quant_lightning_indexer_prolog_kernel(
    x: pypto.Tensor([pypto.DYNAMIC, pypto.STATIC], pypto.DT_BF16),
    weights_proj: pypto.Tensor([pypto.STATIC, pypto.STATIC], pypto.DT_BF16, format=pypto.TileOpFormat.TILEOP_NZ),
    weights: pypto.Tensor([pypto.DYNAMIC, pypto.STATIC], pypto.DT_FP16),
    tile_config,
):
    weights_proj.set_cache_policy(pypto.CachePolicy.NONE_CACHEABLE, True)
    x_dtype = x.dtype
    # dynamic axis
    t = x.shape[0]
    # static axes
    h = x.shape[1]
    idx_nq = weights_proj.shape[1]
    head_dim = HEAD_DIM

    unroll_list = tile_config.unroll_list
    for t_idx, unroll_length in pypto.loop_unroll(
        0,
        t,
        1,
        name="IndexerPrologLoop",
        idx_name="t_idx",
        unroll_list=unroll_list,
    ):
        # use for perf optimization
        pypto.experimental.set_operation_options(combine_axis=True)
        t_tile = unroll_length

        pypto.set_semantic_label("Weight-Compute")
        x_in = pypto.view(x, [t_tile, h], [t_idx, 0])
        # (t_tile, h) @ (h, idx_nq) --> (t_tile, idx_nq)
        pypto.set_cube_tile_shapes(
            [32, 64],
            [h // 8, h],  # SIM: [h // 4, h] -> L0A 32 x 1792 bf16 = 114688 B exceeds MEM_L0A 65536
            [idx_nq // 4, idx_nq // 4],
        )
        pypto.set_vec_tile_shapes(t_tile, idx_nq)
        weights_fp32 = pypto.cast(pypto.matmul(x_in, weights_proj, x_dtype), pypto.DT_FP32)
        weights_mul = pypto.mul(weights_fp32, 1.0 / (math.sqrt(idx_nq) * math.sqrt(head_dim)))
        weights_fp16 = pypto.cast(weights_mul, pypto.DT_FP16)
        pypto.assemble(weights_fp16, [t_idx, 0], weights)


H, NQ = 7168, 64


def make_case(T):
    rng = np.random.default_rng(155 + T)
    x = bf16_round(rng.uniform(-1, 1, (T, H)))
    w = bf16_round(rng.uniform(-0.1, 0.1, (H, NQ)))
    mm = bf16_round(x.astype(np.float64) @ w.astype(np.float64))
    c = np.float32(1.0 / (math.sqrt(NQ) * math.sqrt(HEAD_DIM)))
    ref = fp16_round(mm.astype(np.float64) * np.float64(c))
    return ([(x, "bf16"), (w, "bf16")], [((T, NQ), "fp16")], [ref], [(2e-3, 1e-2)],
            [IndexerPrologQuantConfig(unroll_list=[128, 64, 32, 16, 8, 1])])


if __name__ == "__main__":
    run("c105", quant_lightning_indexer_prolog_kernel, make_case)
