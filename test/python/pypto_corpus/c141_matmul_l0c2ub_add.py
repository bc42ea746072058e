"""c141 (outside batch corpus22, k198): PyPTO operator test "matmul -> add" (L0C -> UB): out = A @ B + C (C -> V, residual add).

Follows hicann/pypto python/tests/st/operation/matmul/test_matmul_l0c2ub.py (HEAD) verbatim:
matmul_l0c2ub_kernel_basic with untyped pypto.Tensor() annotations and a MatmulL0C2UBConfig argument,
sg_set_scope=10000 around the whole body, 2-D pypto.loop over m/n view tiles, tensor slicing for the views and
for the store (out_tensor[m0:m1, n0:n1] = result), set_vec_tile_shapes before the add.  Case L02
("bf16_TExtract": bf16 in/out, view [128, 128], cube tiles [[128,128],[128,128],[128,128]], vec [64, 64]).
Sizes: m = tokens, k = 1024, n = 513 (L01's odd n; L02 uses k 128, n 129).
Change: the sg_set_scope=10000 / -1 pair is removed (the test is for the 950 product; PyPTO 0.2.0's simulated
CV-separate platform refuses mixing cube and vector ops in one subgraph).
"""
from dataclasses import dataclass

import numpy as np

from batch_harness import pypto, run, bf16_round


@dataclass
class MatmulL0C2UBConfig:
    shape: tuple
    tile_shape: tuple
    vec_tile_shape: tuple
    view_shape: tuple
    a_dtype: pypto.DataType
    b_dtype: pypto.DataType
    c_dtype: pypto.DataType
    out_dtype: pypto.DataType
    a_trans: bool = False
    b_trans: bool = False
    extend_params: dict = None


@pypto.frontend.jit(debug_options={"runtime_debug_mode": 0, "compile_debug_mode": 0})
def matmul_l0c2ub_kernel_basic(
    a_tensor: pypto.Tensor(),
    b_tensor: pypto.Tensor(),
    c_tensor: pypto.Tensor(),
    out_tensor: pypto.Tensor(),
    config: MatmulL0C2UBConfig,
):
    m, k, n = config.shape
    m_view, n_view = config.view_shape

    # source: pypto.set_pass_options(sg_set_scope=10000) (mix cube + vector in one subgraph, L0C -> UB);
    # PyPTO 0.2.0's SIM (CV-separate platform) refuses it: "Cannot mix cube and vector op on a CV seperate
    # platform ... please check your setting: sg_set_scope=10000" (ExpandFunction, Errcode FFFFFF)
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


K, N = 1024, 513
f32 = np.float32


def make_case(T):
    rng = np.random.default_rng(198 + T)
    a = bf16_round(rng.standard_normal((T, K)).astype(f32))
    b = bf16_round((rng.standard_normal((K, N)) / np.sqrt(K)).astype(f32))
    c = bf16_round(rng.standard_normal((T, N)).astype(f32))
    mm = bf16_round((a.astype(np.float64) @ b.astype(np.float64)).astype(f32))
    ref = bf16_round(mm + c)
    cfg = MatmulL0C2UBConfig(
        shape=(T, K, N), tile_shape=([128, 128], [128, 128], [128, 128]), vec_tile_shape=(64, 64),
        view_shape=(128, 128), a_dtype=pypto.DT_BF16, b_dtype=pypto.DT_BF16, c_dtype=pypto.DT_BF16,
        out_dtype=pypto.DT_BF16, a_trans=False, b_trans=False, extend_params={})
    return ([(a, "bf16"), (b, "bf16"), (c, "bf16")], [((T, N), "bf16")], [ref], [(1e-4, 0.0078125)], [cfg])


if __name__ == "__main__":
    run("k198_matmul_l0c2ub_add", matmul_l0c2ub_kernel_basic, make_case)
