"""DeepSeek-V4 lightning_indexer_prolog_quant_v4's Query-Linear (V -> C -> V): the int8
activation qr and its per-token scale come in, the int8 weight idx_wq_b (NONE_CACHEABLE)
gives int32, cast to f32 and multiplied by both scales (the dequant, as the seed
describes it), in PyPTO 0.2.0's API; only the import line differs.

    python examples/pypto/indexer_query_linear_int8.py
"""

from __future__ import annotations

from dataclasses import dataclass, field

import ml_dtypes
import numpy as np

import pto.pypto as pypto
from pto.interp.golden import check

q_lora_rank, idx_nq, head_dim = 1024, 64, 128


@dataclass
class IndexerPrologQuantConfig:
    unroll_list: list = field(default_factory=lambda: [128, 64, 32, 16, 8, 1])


cfg = IndexerPrologQuantConfig()


@pypto.frontend.jit(pass_options={"cube_l1_reuse_setting": {-1: 2, 1: 1}, "vec_nbuffer_setting": {0: 2}})
def query_linear(
    qr: pypto.Tensor([pypto.DYNAMIC, q_lora_rank], pypto.DT_INT8),
    qr_scale: pypto.Tensor([pypto.DYNAMIC, 1], pypto.DT_FP32),
    idx_wq_b: pypto.Tensor([idx_nq * head_dim, q_lora_rank], pypto.DT_INT8),
    idx_wq_b_scale: pypto.Tensor([idx_nq * head_dim, 1], pypto.DT_FP32),
    q_out: pypto.Tensor([pypto.DYNAMIC, idx_nq * head_dim], pypto.DT_BF16),
):
    t = qr.shape[0]
    idx_wq_b.set_cache_policy(pypto.CachePolicy.NONE_CACHEABLE, True)
    # Reshape inplace will not generate data move
    w_qb_scale = pypto.reshape(idx_wq_b_scale, [1, idx_nq * head_dim], inplace=True)
    for tIdx, t_tile in pypto.loop_unroll(
        0, t, 1, name="IndexerPrologLoop", idx_name="tIdx", unroll_list=cfg.unroll_list
    ):
        q_int8 = pypto.view(qr, [t_tile, q_lora_rank], [tIdx, 0])
        q_scale = pypto.view(qr_scale, [t_tile, 1], [tIdx, 0])
        pypto.set_semantic_label("Query-Linear")
        pypto.set_cube_tile_shapes([128, 128], [256, 1024], [256, 256])
        q_acc = pypto.matmul(q_int8, idx_wq_b, pypto.DT_INT32, b_trans=True)
        pypto.set_semantic_label("Query-Dequant")
        pypto.set_vec_tile_shapes(1, idx_nq * head_dim)
        q_fp32 = pypto.cast(q_acc, pypto.DT_FP32)
        q_fp32 = pypto.mul(pypto.mul(q_fp32, q_scale), w_qb_scale)
        pypto.assemble(pypto.cast(q_fp32, pypto.DT_BF16), [tIdx, 0], q_out)


def golden(qr, qr_scale, w, w_scale):
    acc = qr.astype(np.int64) @ w.astype(np.int64).T
    return (acc.astype(np.float32) * qr_scale * w_scale.reshape(1, -1)).astype(ml_dtypes.bfloat16)


def inputs(t: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    n = idx_nq * head_dim
    qr = rng.integers(-127, 128, (t, q_lora_rank)).astype(np.int8)
    qr_scale = rng.uniform(0.001, 0.02, (t, 1)).astype(np.float32)
    w = rng.integers(-127, 128, (n, q_lora_rank)).astype(np.int8)
    w_scale = rng.uniform(0.001, 0.02, (n, 1)).astype(np.float32)
    return qr, qr_scale, w, w_scale


def main(tokens=(1, 8, 21)) -> None:
    for t in tokens:
        args = inputs(t, t)
        out = np.zeros((t, idx_nq * head_dim), ml_dtypes.bfloat16)
        query_linear(*args, out)
        v = check(out, golden(*args))
        print(f"t={t}: {query_linear.report.cycles:.0f} cycles, {v.describe('q')}")
        assert v.ok


if __name__ == "__main__":
    main()
