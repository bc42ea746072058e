"""DeepSeek-V4 hc_pre, the mhc_pre variant of SK-03 (a huge reduction, a tiny output),
with the cube tiles chosen per unroll factor as hc_pre_impl.py does, in PyPTO 0.2.0's
API; only the import line differs. (The manual split-K branch of hc_pre is not
supported: see docs/pypto.md.)

    python examples/pypto/hc_pre.py
"""

from __future__ import annotations

import ml_dtypes
import numpy as np

import pto.pypto as pypto
from pto.interp.golden import check

hc, d, mix_hc = 4, 4096, 24
unroll_list = [256, 64, 16, 4, 1]


@pypto.frontend.jit(runtime_options={"stitch_function_max_num": 128, "device_sched_mode": 0})
def hc_pre(
    x: pypto.Tensor([pypto.DYNAMIC, hc, d], pypto.DT_BF16),
    hc_fn: pypto.Tensor([mix_hc, hc * d], pypto.DT_FP32),
    y: pypto.Tensor([pypto.DYNAMIC, mix_hc], pypto.DT_FP32),
):
    t = x.shape[0]
    for t_idx, unrollLength in pypto.loop_unroll(0, t, 1, name="t_loop", idx_name="t_idx", unroll_list=unroll_list):
        tile_t = unrollLength
        x_tile = pypto.view(x, [tile_t, hc, d], [t_idx, 0, 0])
        pypto.set_pass_options(sg_set_scope=1)
        pypto.set_vec_tile_shapes(1, 2048)
        x_fp32 = pypto.cast(pypto.reshape(x_tile, [tile_t, hc * d], inplace=True), pypto.DT_FP32)
        pypto.set_semantic_label("hc-linear")
        if tile_t <= 32:
            pypto.set_cube_tile_shapes([16, 16], [512, 1024], [128, 128], enable_split_k=False)
        elif tile_t <= 64:
            pypto.set_cube_tile_shapes([16, 16], [512, 1024], [128, 128], enable_split_k=True)
        else:
            pypto.set_cube_tile_shapes([16, 16], [512, 2 * 1024], [128, 128], enable_split_k=True)
        mm = pypto.matmul(x_fp32, hc_fn, pypto.DT_FP32, b_trans=True)
        pypto.set_semantic_label("hc-norm")
        sq = pypto.sum(x_fp32 * x_fp32, -1, keepdim=True)
        r = pypto.sqrt(sq * (1.0 / (hc * d)) + 1e-6)
        pypto.set_pass_options(sg_set_scope=-1)
        pypto.assemble(pypto.div(mm, r), [t_idx, 0], y)


def golden(x, hc_fn):
    xf = x.reshape(x.shape[0], hc * d).astype(np.float32)
    return (xf @ hc_fn.T) / np.sqrt(np.mean(xf * xf, axis=-1, keepdims=True) + np.float32(1e-6))


def inputs(t: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((t, hc, d), dtype=np.float32).astype(ml_dtypes.bfloat16)
    hc_fn = (rng.standard_normal((mix_hc, hc * d), dtype=np.float32) / 128).astype(np.float32)
    return x, hc_fn


def main(tokens=(1, 5, 70)) -> None:
    for t in tokens:
        x, hc_fn = inputs(t, t)
        out = np.zeros((t, mix_hc), np.float32)
        hc_pre(x, hc_fn, out)
        v = check(out, golden(x, hc_fn))
        print(f"t={t}: {hc_pre.report.cycles:.0f} cycles, {v.describe('y')}")
        assert v.ok


if __name__ == "__main__":
    main()
