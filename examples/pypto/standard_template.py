"""SK03.md's standard template (RMSNorm -> MatMul over `pypto.loop` tiles with a
valid_shape tail), written in PyPTO 0.2.0's API; only the import line differs.

    python examples/pypto/standard_template.py
"""

from __future__ import annotations

import ml_dtypes
import numpy as np

import pto.pypto as pypto
from pto.interp.golden import check

DT_FP32, DT_BF16 = pypto.DT_FP32, pypto.DT_BF16
K, N, TILE = 4096, 1024, 64
v_tiles, c_tiles = (4, K), ([64, 64], [128, 512], [128, 128])
eps, dtype, output_dtype = 1e-6, DT_FP32, DT_BF16
rms_norm, cast = pypto.rms_norm, pypto.cast


@pypto.frontend.jit(pass_options={"cube_l1_reuse_setting": {-1: 2, 1: 1}, "vec_nbuffer_setting": {0: 2}})
def linear_projection_kernel(
    input: pypto.Tensor([pypto.DYNAMIC, K], DT_BF16),
    weight: pypto.Tensor([N, K], DT_BF16),
    gamma: pypto.Tensor([K], DT_BF16),
    output: pypto.Tensor([pypto.DYNAMIC, N], DT_BF16),
):
    T = input.shape[0]
    tile_count = (T + TILE - 1) // TILE
    gamma_fp32 = pypto.cast(gamma, DT_FP32)
    weight.set_cache_policy(pypto.CachePolicy.NONE_CACHEABLE, True)
    for idx in pypto.loop(tile_count):  # Loop: Tile (or loop_unroll)
        offset = idx * TILE
        tile_len = pypto.min(TILE, T - offset)
        x_tile = pypto.view(input, [TILE, K], [offset, 0], valid_shape=[tile_len, K])
        # V: Pre-Norm (RMSNorm)
        pypto.set_vec_tile_shapes(*v_tiles)
        normed = rms_norm(x_tile, gamma_fp32, eps)
        normed_bf16 = pypto.cast(normed, DT_BF16)
        # C: Linear Projection
        pypto.set_cube_tile_shapes(*c_tiles)
        projected = pypto.matmul(normed_bf16, weight, dtype, b_trans=True)
        pypto.assemble(cast(projected, output_dtype), [offset, 0], output)


def golden(x, w, gamma):
    """SK03.md's formula: x / sqrt(mean(x^2) + eps) * gamma, in bf16, then x @ w.T."""
    xf = x.astype(np.float32)
    n = xf / np.sqrt(np.mean(xf * xf, axis=-1, keepdims=True) + np.float32(eps)) * gamma.astype(np.float32)
    nb = n.astype(ml_dtypes.bfloat16).astype(np.float32)
    return (nb @ w.astype(np.float32).T).astype(ml_dtypes.bfloat16)


def inputs(t: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((t, K), dtype=np.float32).astype(ml_dtypes.bfloat16)
    w = (rng.standard_normal((N, K), dtype=np.float32) / 64).astype(ml_dtypes.bfloat16)
    gamma = rng.standard_normal(K, dtype=np.float32).astype(ml_dtypes.bfloat16)
    return x, w, gamma


def main(tokens=(1, 64, 100)) -> None:
    for t in tokens:
        x, w, gamma = inputs(t, t)
        out = np.zeros((t, N), ml_dtypes.bfloat16)
        linear_projection_kernel(x, w, gamma, out)
        v = check(out, golden(x, w, gamma))
        print(f"t={t}: {linear_projection_kernel.report.cycles:.0f} cycles, {v.describe('output')}")
        assert v.ok


if __name__ == "__main__":
    main()
