"""DeepSeek-V4 mla_prolog_v4's wkv-linear -> kv-rmsnorm with its interleaved RoPE tail
(C -> V), in PyPTO 0.2.0's API; only the import line differs. As mla_wkv_rope.py, but
k_pe's pairs (x0, x1), (x2, x3), ... are rotated together: k_pe is de-interleaved first,
`reshape` to [t, 32, 2], `transpose` of dims 1, 2 to [t, 2, 32] (the evens, then the
odds), `reshape` back to [t, 64], then `x * cos + rotate_half(x) * sin`. The transpose
moves data (npu.vtranspose on the vector pipe); the reshapes are views.

    python examples/pypto/mla_wkv_rope_interleaved.py
"""

from __future__ import annotations

import ml_dtypes
import numpy as np

import pto.pypto as pypto
from pto.interp.golden import check

h, kv_lora_rank, rope_dim, eps = 4096, 512, 64, 1e-6
kv_dim = kv_lora_rank + rope_dim
unroll_list = [128, 64, 32, 16, 1]


def rotate_half(x, t_tile):
    half = rope_dim // 2
    x1 = pypto.view(x, [t_tile, half], [0, 0])
    x2 = pypto.view(x, [t_tile, half], [0, half])
    return pypto.concat([-x2, x1], dim=-1)


@pypto.frontend.jit
def mla_wkv_rope_interleaved(
    x: pypto.Tensor([pypto.DYNAMIC, h], pypto.DT_BF16),
    wkv: pypto.Tensor([h, kv_dim], pypto.DT_BF16),
    gamma_ckv: pypto.Tensor([kv_lora_rank], pypto.DT_BF16),
    cos: pypto.Tensor([pypto.DYNAMIC, rope_dim], pypto.DT_BF16),
    sin: pypto.Tensor([pypto.DYNAMIC, rope_dim], pypto.DT_BF16),
    kv_out: pypto.Tensor([pypto.DYNAMIC, kv_lora_rank], pypto.DT_BF16),
    kr_out: pypto.Tensor([pypto.DYNAMIC, rope_dim], pypto.DT_BF16),
):
    t = x.shape[0]
    for tIdx, t_tile in pypto.loop_unroll(0, t, 1, name="MLA_BS_LOOP", idx_name="tIdx", unroll_list=unroll_list):
        x_tile = pypto.view(x, [t_tile, h], [tIdx, 0], valid_shape=[t_tile, h])
        pypto.set_semantic_label("wkv-linear")
        pypto.set_cube_tile_shapes([32, 32], [256, 256], [64, 64])
        kv = pypto.matmul(x_tile, wkv, pypto.DataType.DT_BF16)
        pypto.set_semantic_label("kv-rmsnorm")
        pypto.set_vec_tile_shapes(4, kv_lora_rank)
        kv_c = pypto.view(kv, [t_tile, kv_lora_rank], [0, 0])
        kv_n = pypto.rms_norm(pypto.cast(kv_c, pypto.DT_FP32), gamma_ckv, eps)
        pypto.assemble(pypto.cast(kv_n, pypto.DT_BF16), [tIdx, 0], kv_out)
        pypto.set_semantic_label("rope")
        pypto.set_vec_tile_shapes(4, rope_dim, rope_dim)  # the transpose is rank 3
        k_pe = pypto.cast(pypto.view(kv, [t_tile, rope_dim], [0, kv_lora_rank]), pypto.DT_FP32)
        cos_tile = pypto.cast(pypto.view(cos, [t_tile, rope_dim], [tIdx, 0]), pypto.DT_FP32)
        sin_tile = pypto.cast(pypto.view(sin, [t_tile, rope_dim], [tIdx, 0]), pypto.DT_FP32)
        x_pe = pypto.reshape(k_pe, [t_tile, rope_dim // 2, 2])
        x_pe = pypto.transpose(x_pe, 1, 2)
        x_pe = pypto.reshape(x_pe, [t_tile, rope_dim])
        k_rope = x_pe * cos_tile + rotate_half(x_pe, t_tile) * sin_tile
        pypto.assemble(pypto.cast(k_rope, pypto.DT_BF16), [tIdx, 0], kr_out)


def golden(x, wkv, gamma, cos, sin):
    f32 = np.float32
    kv = (x.astype(f32) @ wkv.astype(f32)).astype(ml_dtypes.bfloat16).astype(f32)
    c, pe = kv[:, :kv_lora_rank], kv[:, kv_lora_rank:]
    n = c / np.sqrt(np.mean(c * c, axis=-1, keepdims=True) + f32(eps)) * gamma.astype(f32)
    half = rope_dim // 2
    pe = np.concatenate([pe[:, 0::2], pe[:, 1::2]], axis=-1)  # de-interleaved: evens, then odds
    rot = np.concatenate([-pe[:, half:], pe[:, :half]], axis=-1)
    r = pe * cos.astype(f32) + rot * sin.astype(f32)
    return n.astype(ml_dtypes.bfloat16), r.astype(ml_dtypes.bfloat16)


def inputs(t: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((t, h), dtype=np.float32).astype(ml_dtypes.bfloat16)
    wkv = (rng.standard_normal((h, kv_dim), dtype=np.float32) / 64).astype(ml_dtypes.bfloat16)
    gamma = rng.standard_normal(kv_lora_rank, dtype=np.float32).astype(ml_dtypes.bfloat16)
    angle = rng.uniform(0, 2 * np.pi, (t, rope_dim // 2)).astype(np.float32)
    angle = np.concatenate([angle, angle], axis=-1)
    return x, wkv, gamma, np.cos(angle).astype(ml_dtypes.bfloat16), np.sin(angle).astype(ml_dtypes.bfloat16)


def main(tokens=(1, 16, 37)) -> None:
    for t in tokens:
        x, wkv, gamma, cos, sin = inputs(t, t)
        kv = np.zeros((t, kv_lora_rank), ml_dtypes.bfloat16)
        kr = np.zeros((t, rope_dim), ml_dtypes.bfloat16)
        mla_wkv_rope_interleaved(x, wkv, gamma, cos, sin, kv, kr)
        want_kv, want_kr = golden(x, wkv, gamma, cos, sin)
        v1, v2 = check(kv, want_kv), check(kr, want_kr)
        print(
            f"t={t}: {mla_wkv_rope_interleaved.report.cycles:.0f} cycles, {v1.describe('kv')}, {v2.describe('k_rope')}"
        )
        assert v1.ok and v2.ok


if __name__ == "__main__":
    main()
