"""DeepSeek-V4 mla_prolog_v4's wqa-linear -> q-rmsnorm (C -> V), as the seed quotes it
from mla_prolog_v4_impl.py, in PyPTO 0.2.0's API; only the import line differs. Its
`rms_norm(x, eps)` is the repository's helper, written from primitives (PyPTO's own
formula); the pipeline recognises it as the RMSNorm stage.

    python examples/pypto/mla_wqa_qrmsnorm.py
"""

from __future__ import annotations

from dataclasses import dataclass

import ml_dtypes
import numpy as np

import pto.pypto as pypto
from pto.interp.golden import check

h, q_lora_rank = 4096, 1024


@dataclass
class MlaPrologV4Configs:
    unroll_list: tuple = (128, 64, 32, 16, 1)
    eps: float = 1e-6


attrs = MlaPrologV4Configs()


def rms_norm(x, eps):
    """x / sqrt(mean(x^2) + eps), in f32."""
    x = pypto.cast(x, pypto.DT_FP32)
    n = x.shape[-1]
    y = pypto.sqrt(pypto.sum(x * x * (1.0 / n), -1, keepdim=True) + eps)
    ones = pypto.full(y.shape, 1.0, pypto.DT_FP32)
    return x * ones / y


@pypto.frontend.jit(pass_options={"cube_l1_reuse_setting": {-1: 2, 1: 1}})
def mla_wqa(
    x: pypto.Tensor([pypto.DYNAMIC, h], pypto.DT_BF16),
    wq_a: pypto.Tensor([h, q_lora_rank], pypto.DT_BF16),
    gamma_cq: pypto.Tensor([q_lora_rank], pypto.DT_BF16),
    qr_out: pypto.Tensor([pypto.DYNAMIC, q_lora_rank], pypto.DT_BF16),
):
    t = x.shape[0]
    gamma_cq_2d_fp32 = pypto.cast(pypto.reshape(gamma_cq, [1, q_lora_rank], inplace=True), pypto.DT_FP32)
    for tIdx, t_tile in pypto.loop_unroll(
        0, t, 1, name="MLA_BS_LOOP", idx_name="tIdx", unroll_list=list(attrs.unroll_list)
    ):
        x_tile = pypto.view(x, [t_tile, h], [tIdx, 0], valid_shape=[t_tile, h])
        pypto.set_semantic_label("wqa-linear")
        pypto.set_cube_tile_shapes([32, 32], [512, 512], [64, 64])
        q = pypto.matmul(x_tile, wq_a, pypto.DataType.DT_BF16)
        pypto.set_semantic_label("q-rmsnorm with weight")
        pypto.set_vec_tile_shapes(8, q_lora_rank)
        qr = rms_norm(q, attrs.eps)
        qr = pypto.mul(qr, gamma_cq_2d_fp32)
        qr = pypto.cast(qr, pypto.DataType.DT_BF16)
        pypto.assemble(qr, [tIdx, 0], qr_out)


def golden(x, wq_a, gamma):
    q = (x.astype(np.float32) @ wq_a.astype(np.float32)).astype(ml_dtypes.bfloat16).astype(np.float32)
    n = q / np.sqrt(np.mean(q * q, axis=-1, keepdims=True) + np.float32(attrs.eps))
    n = n * gamma.astype(np.float32)
    return n.astype(ml_dtypes.bfloat16)


def inputs(t: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((t, h), dtype=np.float32).astype(ml_dtypes.bfloat16)
    wq_a = (rng.standard_normal((h, q_lora_rank), dtype=np.float32) / 64).astype(ml_dtypes.bfloat16)
    gamma = rng.standard_normal(q_lora_rank, dtype=np.float32).astype(ml_dtypes.bfloat16)
    return x, wq_a, gamma


def main(tokens=(1, 16, 33)) -> None:
    for t in tokens:
        x, wq_a, gamma = inputs(t, t)
        out = np.zeros((t, q_lora_rank), ml_dtypes.bfloat16)
        mla_wqa(x, wq_a, gamma, out)
        v = check(out, golden(x, wq_a, gamma))
        print(f"t={t}: {mla_wqa.report.cycles:.0f} cycles, {v.describe('qr')}")
        assert v.ok


if __name__ == "__main__":
    main()
