#!/usr/bin/env python3
"""c87 (outside batch corpus13, k114) (copied): GLM-4.5 MatMul-AllReduce-Add-RmsNorm, with world_size = 1
(python/tests/st/operator/distributed/test_matmul_allreduce_add_rmsnorm.py `_matmul_allreduce_add_rmsnorm` and
`matmul_allreduce_add_rmsnorm_kernel`).

SK-03 C -> V: in [T, 1536] bf16 @ matmul_weight [5120, 1536] bf16 (b_trans) -> bf16 -> + residual (fp32) ->
RMSNorm (mul, * 1/H, sum, + eps, sqrt, div) -> per-row loop `for tmp_idx in range(8)`: * gamma + bias (1-D [H] bf16
reshaped to [1, H] inplace) -> bf16 written by `hidden_bf16[tmp_idx:tmp_idx + 1] = ...` into a `pypto.tensor`.
Outputs out [T, H] bf16 and residual_out [T, H] bf16 (the add before the norm), written with
`out[bs_idx * pypto.symbolic_scalar(8):] = ...`. Views with valid_shape `(T - bs_idx * 8).min(8)`.
Changed: with one rank the shmem all-reduce is the identity, so the shmem_* calls are removed and
`all_reduce_out = matmul_result` (the model's set_vec_tile_shapes(1, H) before shmem_load is kept);
`new_ir=False` dropped from jit (0.2.0 has no such keyword); group_name/world_size parameters dropped.
"""
import numpy as np

from batch_harness import PTO, pypto, run, bf16_round  # (the batch's _common.py)

K, H = 1536, 5120


def _matmul_allreduce_add_rmsnorm(
    in_tensor,
    matmul_weight,
    residual,
    gamma,
    bias,
    out_tensor,
    residual_out,
    eps,
):
    batch_size = in_tensor.shape[0]
    hidden_size = matmul_weight.shape[0]

    in_tensor_mean_coff = 1.0 / hidden_size
    view_row_shape = 8
    bs_loop = (batch_size + view_row_shape - 1) // view_row_shape

    pypto.set_vec_tile_shapes(hidden_size)
    gamma_2d = pypto.reshape(gamma, [1, hidden_size], inplace=True)
    bias_2d = pypto.reshape(bias, [1, hidden_size], inplace=True)

    for bs_idx in pypto.loop(bs_loop, name="LOOP_MM_ALLREDUCE_ADD_RMSNORM", idx_name="bs_idx"):
        in_tensor_tile = pypto.view(
            in_tensor,
            (view_row_shape, in_tensor.shape[1]),
            [bs_idx * view_row_shape, 0],
            valid_shape=[(batch_size - bs_idx * view_row_shape).min(view_row_shape), in_tensor.shape[1]],
        )

        pypto.set_vec_tile_shapes(view_row_shape, hidden_size)

        pypto.set_cube_tile_shapes([8, 8], [128, 256], [256, 512])
        matmul_result = pypto.matmul(in_tensor_tile, matmul_weight, pypto.DT_BF16, b_trans=True)

        pypto.set_vec_tile_shapes(1, hidden_size)
        all_reduce_out = matmul_result  # world_size == 1: the shmem all-reduce is the identity

        residual_tile = pypto.view(
            residual,
            (view_row_shape, hidden_size),
            [bs_idx * view_row_shape, 0],
            valid_shape=[(batch_size - bs_idx * view_row_shape).min(view_row_shape), hidden_size],
        )

        all_reduce_out_fp32 = pypto.cast(all_reduce_out, pypto.DT_FP32)
        residual_tile_fp32 = pypto.cast(residual_tile, pypto.DT_FP32)
        add_out = pypto.add(all_reduce_out_fp32, residual_tile_fp32)

        square = pypto.mul(add_out, add_out)
        mean_res = pypto.mul(square, in_tensor_mean_coff)
        reduce_asum = pypto.sum(mean_res, -1, True)
        reduce_sum = pypto.add(reduce_asum, eps)
        reduce_sqrt = pypto.sqrt(reduce_sum)
        res_div = pypto.div(add_out, reduce_sqrt)

        hidden_bf16 = pypto.tensor([view_row_shape, hidden_size], pypto.DT_BF16, "hidden_bf16")
        residual_bf16_tmp = pypto.cast(add_out, in_tensor.dtype)
        for tmp_idx in range(view_row_shape):
            gamma_2d_fp32 = pypto.cast(gamma_2d, pypto.DT_FP32)
            bias_2d_fp32 = pypto.cast(bias_2d, pypto.DT_FP32)
            res_div_single = pypto.view(res_div, [1, hidden_size], [tmp_idx, 0])
            res = pypto.mul(res_div_single, gamma_2d_fp32)
            res_add = pypto.add(res, bias_2d_fp32)
            in_tensor_norm = pypto.cast(res_add, in_tensor.dtype)
            hidden_bf16[tmp_idx:tmp_idx + 1] = in_tensor_norm

        residual_out[bs_idx * pypto.symbolic_scalar(view_row_shape):] = residual_bf16_tmp
        out_tensor[bs_idx * pypto.symbolic_scalar(view_row_shape):] = hidden_bf16


@pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.SIM})
def matmul_allreduce_add_rmsnorm_kernel(
    in_tensor: pypto.Tensor([pypto.DYNAMIC, ...], pypto.DT_BF16),
    matmul_weight: pypto.Tensor(),
    residual: pypto.Tensor([pypto.DYNAMIC, ...], pypto.DT_BF16),
    gamma: pypto.Tensor(),
    bias: pypto.Tensor(),
    out_tensor: pypto.Tensor([pypto.DYNAMIC, ...], pypto.DT_BF16),
    residual_out: pypto.Tensor([pypto.DYNAMIC, ...], pypto.DT_BF16),
    eps,
):
    _matmul_allreduce_add_rmsnorm(
        in_tensor, matmul_weight, residual, gamma, bias, out_tensor, residual_out, eps
    )


def make_case(T):
    rng = np.random.default_rng(114 + T)
    x = bf16_round(rng.standard_normal((T, K)))
    w = bf16_round(rng.standard_normal((H, K)) * 0.03)
    res = bf16_round(rng.standard_normal((T, H)))
    g = bf16_round(1.0 + 0.2 * rng.standard_normal(H))
    b = bf16_round(0.1 * rng.standard_normal(H))
    eps = 1e-5
    mm = bf16_round(x.astype(np.float64) @ w.T.astype(np.float64))
    add = mm.astype(np.float64) + res
    y = add / np.sqrt((add * add).mean(-1, keepdims=True) + eps) * g + b
    ins = [(x, "bf16"), (w, "bf16"), (res, "bf16"), (g, "bf16"), (b, "bf16")]
    outs = [((T, H), "bf16"), ((T, H), "bf16")]
    return ins, outs, [bf16_round(y), bf16_round(add)], [(2e-2, 2e-2), (2e-2, 2e-2)], [eps]


if __name__ == "__main__":
    run("k114", matmul_allreduce_add_rmsnorm_kernel, make_case)
