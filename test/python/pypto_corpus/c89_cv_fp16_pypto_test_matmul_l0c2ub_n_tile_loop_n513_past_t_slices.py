#!/usr/bin/env python3
"""c89 (outside batch corpus13, k115) (copied): PyPTO ST test `matmul_l0c2ub_kernel_basic` (python/tests/st/operation/matmul/test_matmul_l0c2ub.py)
with its case L01 "fp16_TInsert" (testcase/matmul_l0c2ub_test_case.py): k = 256, n = 513, viewshape [128, 128],
tileshape [[64, 128], [128, 128], [64, 128]], vec_tileshape [128, 128], fp16 in / fp16 out.

SK-03 C -> V: a [T, 256] fp16 @ b [256, 513] fp16 -> fp16 -> + c [T, 513] fp16 -> out [T, 513] fp16.
Two pypto.loop levels (m tiles of 128 tokens, n tiles of 128 columns: 513 = 4*128 + 1), slice reads
a[m0:m0 + 128, :], b[:, n0:n0 + 128], c[m0:m0 + 128, n0:n0 + 128] and slice write out[m0:m0+128, n0:n0+128] = r
(the tails run past T and past 513, as in the test: m = 129 and n = 513 there). Config dataclass argument.
Changed: m is a_tensor.shape[0] (dynamic token axis) instead of config.shape[0], and a/c/out are annotated
pypto.Tensor([pypto.DYNAMIC, ...], pypto.DT_FP16) instead of pypto.Tensor(); b keeps pypto.Tensor().
Dropped: set_pass_options(sg_set_scope=10000 / -1) (the case is for product "950"; SIM 0.2.0 gives Errcode FFFFFF,
~/ascend/log: `Cannot mix cube and vector op on a CV seperate platform ... please check your setting: sg_set_scope=10000`).
"""
from dataclasses import dataclass

import numpy as np

from batch_harness import PTO, pypto, run, fp16_round  # (the batch's _common.py)


@dataclass
class MatmulL0C2UBConfig:
    """MatmulL0C2UB 配置参数"""

    shape: tuple
    tile_shape: tuple
    vec_tile_shape: tuple
    view_shape: tuple
    a_dtype: object
    b_dtype: object
    c_dtype: object
    out_dtype: object
    a_trans: bool = False
    b_trans: bool = False
    extend_params: dict = None


L01 = {
    "id": "L01",
    "name": "fp16_TInsert",
    "m": 129,
    "k": 256,
    "n": 513,
    "a_trans": False,
    "b_trans": False,
    "viewshape": [128, 128],
    "tileshape": [[64, 128], [128, 128], [64, 128]],
    "vec_tileshape": [128, 128],
    "extend_params": {},
}
CONFIG = MatmulL0C2UBConfig(
    shape=(L01["m"], L01["k"], L01["n"]),
    tile_shape=tuple(L01["tileshape"]),
    vec_tile_shape=tuple(L01["vec_tileshape"]),
    view_shape=tuple(L01["viewshape"]),
    a_dtype=pypto.DT_FP16, b_dtype=pypto.DT_FP16, c_dtype=pypto.DT_FP16, out_dtype=pypto.DT_FP16,
    a_trans=L01["a_trans"], b_trans=L01["b_trans"], extend_params=L01["extend_params"],
)


@pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.SIM},
                    debug_options={"runtime_debug_mode": 0, "compile_debug_mode": 0})
def matmul_l0c2ub_kernel_basic(
    a_tensor: pypto.Tensor([pypto.DYNAMIC, ...], pypto.DT_FP16),
    b_tensor: pypto.Tensor(),
    c_tensor: pypto.Tensor([pypto.DYNAMIC, ...], pypto.DT_FP16),
    out_tensor: pypto.Tensor([pypto.DYNAMIC, ...], pypto.DT_FP16),
    config: MatmulL0C2UBConfig,
):
    """基础 kernel：matmul → add（不带 extend_params）"""
    _, k, n = config.shape
    m = a_tensor.shape[0]
    m_view, n_view = config.view_shape

    pypto.set_cube_tile_shapes(*config.tile_shape)

    m_loop = (m + m_view - 1) // m_view
    n_loop = (n + n_view - 1) // n_view

    for m_idx in pypto.loop(0, m_loop, 1, name="LOOP_L0_mIdx", idx_name="m_idx"):
        for n_idx in pypto.loop(0, n_loop, 1, name="LOOP_L0_nIdx", idx_name="n_idx"):
            if config.a_trans:
                a_view = a_tensor[:, m_idx * m_view:m_idx * m_view + m_view]
            else:
                a_view = a_tensor[m_idx * m_view:m_idx * m_view + m_view, :]

            if config.b_trans:
                b_view = b_tensor[n_idx * n_view:n_idx * n_view + n_view, :]
            else:
                b_view = b_tensor[:, n_idx * n_view:n_idx * n_view + n_view]

            mat_result = pypto.matmul(
                a_view,
                b_view,
                out_dtype=config.out_dtype,
                a_trans=config.a_trans,
                b_trans=config.b_trans,
            )

            c_view = c_tensor[
                m_idx * m_view:m_idx * m_view + m_view,
                n_idx * n_view:n_idx * n_view + n_view,
            ]

            pypto.set_vec_tile_shapes(*config.vec_tile_shape)
            result = pypto.add(mat_result, c_view)

            out_tensor[
                m_idx * m_view:m_idx * m_view + m_view,
                n_idx * n_view:n_idx * n_view + n_view,
            ] = result


def make_case(T):
    rng = np.random.default_rng(115 + T)
    _, K, N = CONFIG.shape
    a = fp16_round(rng.standard_normal((T, K)) * 0.5)
    b = fp16_round(rng.standard_normal((K, N)) * 0.1)
    c = fp16_round(rng.standard_normal((T, N)))
    ref = fp16_round(fp16_round(a.astype(np.float64) @ b) + c)
    return [(a, "fp16"), (b, "fp16"), (c, "fp16")], [((T, N), "fp16")], [ref], [(2e-2, 2e-2)], [CONFIG]


if __name__ == "__main__":
    run("c89", matmul_l0c2ub_kernel_basic, make_case)
