"""DeepSeek-V4 mla_prolog_v4's wkv-linear -> kv-rmsnorm (C -> V), in PyPTO 0.2.0's API;
only the import line differs. The RoPE tail that follows it in mla_prolog_v4 (views
at column offsets, concat) is left out here; `mla_wkv_rope.py` has it.

    python examples/pypto/mla_wkv_rmsnorm.py
"""

from __future__ import annotations

import ml_dtypes
import numpy as np

import pto.pypto as pypto
from pto.interp.golden import check

h, kv_lora_rank, eps = 4096, 512, 1e-6
unroll_list = [128, 64, 32, 16, 1]


@pypto.frontend.jit
def mla_wkv(
    x: pypto.Tensor([pypto.DYNAMIC, h], pypto.DT_BF16),
    wkv: pypto.Tensor([h, kv_lora_rank], pypto.DT_BF16),
    gamma_ckv: pypto.Tensor([kv_lora_rank], pypto.DT_BF16),
    kv_out: pypto.Tensor([pypto.DYNAMIC, kv_lora_rank], pypto.DT_BF16),
):
    t = x.shape[0]
    for tIdx, t_tile in pypto.loop_unroll(0, t, 1, name="MLA_BS_LOOP", idx_name="tIdx", unroll_list=unroll_list):
        x_tile = pypto.view(x, [t_tile, h], [tIdx, 0], valid_shape=[t_tile, h])
        pypto.set_semantic_label("wkv-linear")
        pypto.set_cube_tile_shapes([32, 32], [256, 256], [128, 128])
        kv = pypto.matmul(x_tile, wkv, pypto.DataType.DT_BF16)
        pypto.set_semantic_label("kv-rmsnorm")
        pypto.set_vec_tile_shapes(4, 64)
        kv = pypto.rms_norm(pypto.cast(kv, pypto.DT_FP32), gamma_ckv, eps)
        pypto.assemble(pypto.cast(kv, pypto.DT_BF16), [tIdx, 0], kv_out)


def golden(x, wkv, gamma):
    kv = (x.astype(np.float32) @ wkv.astype(np.float32)).astype(ml_dtypes.bfloat16).astype(np.float32)
    n = kv / np.sqrt(np.mean(kv * kv, axis=-1, keepdims=True) + np.float32(eps)) * gamma.astype(np.float32)
    return n.astype(ml_dtypes.bfloat16)


def inputs(t: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((t, h), dtype=np.float32).astype(ml_dtypes.bfloat16)
    wkv = (rng.standard_normal((h, kv_lora_rank), dtype=np.float32) / 64).astype(ml_dtypes.bfloat16)
    gamma = rng.standard_normal(kv_lora_rank, dtype=np.float32).astype(ml_dtypes.bfloat16)
    return x, wkv, gamma


def main(tokens=(1, 16, 37)) -> None:
    for t in tokens:
        x, wkv, gamma = inputs(t, t)
        out = np.zeros((t, kv_lora_rank), ml_dtypes.bfloat16)
        mla_wkv(x, wkv, gamma, out)
        v = check(out, golden(x, wkv, gamma))
        print(f"t={t}: {mla_wkv.report.cycles:.0f} cycles, {v.describe('kv')}")
        assert v.ok


if __name__ == "__main__":
    main()
