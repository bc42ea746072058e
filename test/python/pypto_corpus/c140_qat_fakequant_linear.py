"""c140 (outside batch corpus22, k196): QAT linear: symmetric per-channel fake-quant of the weight (V) -> projection with it (C).

Follows hicann/pypto models/qat/qat_impl.py (HEAD, ai_infra_qat_symmetric_per_channel_kernel) verbatim for
the weight stage: loop_unroll over the weight's output channels with unroll_list [512, 32, 8],
set_vec_tile_shapes(32, 512), combine_axis, cast -> maximum(scale, eps) -> div -> round(decimals=0)
-> clip(min_v, max_v) -> mul -> cast bf16 -> assemble (the fake-quantised weight is an output).
The QAT forward then uses it in the layer's projection: a second loop (loop_unroll over the tokens) does
y = x @ w_fq^T (b_trans) reading the tensor the first loop wrote.  4-bit (min -8, max 7), eps 1e-4,
m = 2048 as the source test; n = 1000 output channels (source test 38344) so that the [512, 32, 8] list
leaves 32- and 8-row remainders (1000 = 512 + 15*32 + 8).
Changes: the weight's row count is STATIC here (source: DYNAMIC), the token loop + matmul are added.
"""
import numpy as np

from batch_harness import pypto, run, bf16_round

N, M = 1000, 2048
EPS, MIN_V, MAX_V = 1e-4, -8.0, 7.0


@pypto.frontend.jit(
    runtime_options={
        "stitch_function_max_num": 64,
    },
)
def qat_per_channel_linear_kernel(
    x: pypto.Tensor([pypto.DYNAMIC, M], pypto.DT_BF16),
    weight: pypto.Tensor([N, M], pypto.DT_BF16),
    scale: pypto.Tensor([N, 1], pypto.DT_BF16),
    output_bf16: pypto.Tensor([N, M], pypto.DT_BF16),
    y: pypto.Tensor([pypto.DYNAMIC, N], pypto.DT_BF16),
    eps,
    min_v,
    max_v,
):
    pypto.experimental.set_operation_options(combine_axis=True)
    n, m = weight.shape
    unroll_list = [512, 32, 8]
    pypto.set_vec_tile_shapes(32, 512)

    for n_offset, unroll_length in pypto.loop_unroll(
        0, n, 1, name="LOOP_N_UNROLL", idx_name="n_offset", unroll_list=unroll_list
    ):
        tile_n = unroll_length

        weight_tile = pypto.view(weight, [tile_n, m], [n_offset, 0])
        weight_fp32 = pypto.cast(weight_tile, pypto.DT_FP32)
        scale_tile = pypto.view(scale, [tile_n, 1], [n_offset, 0])
        scale_fp32 = pypto.cast(scale_tile, pypto.DT_FP32)

        protected_scale = pypto.maximum(scale_fp32, eps)
        normalized = pypto.div(weight_fp32, protected_scale)
        rounded = pypto.round(normalized, decimals=0)
        clamped = pypto.clip(rounded, min_v, max_v)
        output = pypto.mul(clamped, protected_scale)

        output_tile = pypto.cast(output, pypto.DT_BF16)

        pypto.assemble(output_tile, [n_offset, 0], output_bf16)

    # the QAT layer's projection with the fake-quantised weight
    t = x.shape[0]
    for t_offset, tile_t in pypto.loop_unroll(
        0, t, 1, name="LOOP_T_UNROLL", idx_name="t_offset", unroll_list=[64, 16, 4, 1]
    ):
        x_tile = pypto.view(x, [tile_t, m], [t_offset, 0])
        if tile_t >= 64:
            pypto.set_cube_tile_shapes([64, 64], [256, 512], [128, 128])
        else:
            pypto.set_cube_tile_shapes([16, 16], [256, 512], [128, 128])
        y_tile = pypto.matmul(x_tile, output_bf16, pypto.DT_BF16, b_trans=True)
        pypto.set_vec_tile_shapes(16, 512)
        pypto.assemble(y_tile, [t_offset, 0], y)


f32 = np.float32


def make_case(T):
    rng = np.random.default_rng(196 + T)
    w = bf16_round(rng.uniform(-1, 1, (N, M)).astype(f32) / np.sqrt(M))
    s = bf16_round((np.abs(w).max(1, keepdims=True) / 6.0).astype(f32))
    x = bf16_round(rng.standard_normal((T, M)).astype(f32))
    ps = np.maximum(s, f32(EPS))
    q = np.clip(np.round((w / ps).astype(f32)), MIN_V, MAX_V).astype(f32)
    w_fq = bf16_round((q * ps).astype(f32))
    ref = bf16_round((x.astype(np.float64) @ w_fq.astype(np.float64).T).astype(f32))
    return ([(x, "bf16"), (w, "bf16"), (s, "bf16")], [((N, M), "bf16"), ((T, N), "bf16")], [w_fq, ref],
            [(1e-4, 0.0078125), (1e-4, 0.0078125)], [EPS, MIN_V, MAX_V])


if __name__ == "__main__":
    run("k196_qat_fakequant_linear", qat_per_channel_linear_kernel, make_case)
