"""c103 (outside batch corpus18, k153) (copied): GLM-4.5 attention_pre_quant, models/glm_v4_5/glm_attention_pre_quant.py.

Verbatim: `rms_norm_bias`, `rope_data` and `quant_attention_pre_kernel` (body unchanged; the only change is
run_mode SIM added to runtime_options for the SIM run). The test's shapes: hidden 5120, total_head_size 1792
(q 1536 = 12 heads x 128, k 128, v 128), rotary_dim 64, torch.rand data. The NZ int8 weight is passed as a plain
[K, N] array. SK-03: one int8 matmul per loop body (V->C->V): residual add + RMSNorm with bias -> static-scale
int8 quant (per-row loop, setitem into a local tensor) -> int8 @ w [5120, 1792] -> +quant_bias, *deq_scale -> bf16
-> rank-3 per-head q/k RMSNorm with bias -> RoPE on the first 64 of each head -> concat -> outputs.
"""
import numpy as np

from batch_harness import PTO, bf16_round, pypto, run


# pypto
def rms_norm_bias(tensor_value, gamma, bias, mean_coff, eps, tile_shape):
    input_dtype = tensor_value.dtype
    # cast
    pypto.set_vec_tile_shapes(*tile_shape)
    tensor_value_fp32 = pypto.cast(tensor_value, pypto.DT_FP32)

    # square
    square = pypto.mul(tensor_value_fp32, tensor_value_fp32)

    # mean_res
    mean_res = pypto.mul(square, mean_coff)

    # reduce sum
    reduce_asum = pypto.sum(mean_res, -1, keepdim=True)
    reduce_sum = pypto.add(reduce_asum, eps)

    # sqrt
    reduce_sqrt = pypto.sqrt(reduce_sum)

    # div
    res_div = pypto.div(tensor_value_fp32, reduce_sqrt)

    # gamma mul
    res = pypto.mul(res_div, gamma)

    res_add = pypto.add(res, bias)

    # cast
    y_bf16 = pypto.cast(res_add, input_dtype)

    return y_bf16


def rope_data(x1, x2, cos, sin, tile_shape):
    pypto.set_vec_tile_shapes(*tile_shape)
    o1 = pypto.sub(pypto.mul(x1, cos), pypto.mul(x2, sin))
    o2 = pypto.add(pypto.mul(x2, cos), pypto.mul(x1, sin))
    # concat
    res = pypto.concat([o1, o2], 2)

    # cast
    y_bf16 = pypto.cast(res, pypto.DT_BF16)
    return y_bf16


_RT = {"stitch_function_max_num": 128}
if not PTO:
    _RT["run_mode"] = pypto.RunMode.SIM


@pypto.frontend.jit(runtime_options=_RT)
def quant_attention_pre_kernel(
    x: pypto.Tensor([pypto.DYNAMIC, ...], pypto.DT_BF16),
    residual_input: pypto.Tensor([pypto.DYNAMIC, ...], pypto.DT_BF16),
    x_gamma: pypto.Tensor([], pypto.DT_BF16),
    x_bias: pypto.Tensor([], pypto.DT_BF16),
    x_scale: pypto.Tensor([], pypto.DT_BF16),
    x_offset: pypto.Tensor([], pypto.DT_BF16),
    weight: pypto.Tensor([], pypto.DT_INT8),
    quant_bias: pypto.Tensor([], pypto.DT_INT32),
    deq_scale: pypto.Tensor([], pypto.DT_FP32),
    q_gamma: pypto.Tensor([], pypto.DT_BF16),
    q_bias: pypto.Tensor([], pypto.DT_BF16),
    k_gamma: pypto.Tensor([], pypto.DT_BF16),
    k_bias: pypto.Tensor([], pypto.DT_BF16),
    cos: pypto.Tensor([pypto.DYNAMIC, ...], pypto.DT_BF16),
    sin: pypto.Tensor([pypto.DYNAMIC, ...], pypto.DT_BF16),
    q: pypto.Tensor([pypto.DYNAMIC, ...], pypto.DT_BF16),
    k: pypto.Tensor([pypto.DYNAMIC, ...], pypto.DT_BF16),
    v: pypto.Tensor([pypto.DYNAMIC, ...], pypto.DT_BF16),
    residual: pypto.Tensor([pypto.DYNAMIC, ...], pypto.DT_BF16),
):
    """
    JIT compiled kernel for fused attention_pre_quant operation.

    This kernel performs the following operations in sequence:
    1. Add residual connection: x = residual + hidden_states
    2. RMS normalization: x_norm = RMSNorm(x)
    3. Input quantization: x_int8 = Quantize(x_norm)
    4. Quantized QKV projection: qkv = Dequantize(MatMul(x_int8, weight))
    5. Split QKV: q, k, v = Split(qkv)
    6. Q/K normalization: q_norm = RMSNorm(q), k_norm = RMSNorm(k)
    7. Apply RoPE: q_rope = RoPE(q_norm), k_rope = RoPE(k_norm)
    """
    hidden_size = x.shape[1]
    total_head_size = weight.shape[1]
    head_size = q_gamma.shape[0]
    bs = x.shape[0]
    half_rotary_dim = cos.shape[-1]
    q_size = q.shape[-1]
    kv_size = k.shape[-1]
    bs_tile = 8

    x_mean_coff = 1.0 / x.shape[-1]
    qk_mean_coff = 1.0 / head_size
    eps = 1e-05
    rotary_dim = half_rotary_dim * 2
    stay_dim = head_size - rotary_dim

    q_num_head = q_size // head_size
    kv_num_head = kv_size // head_size
    kv_index = q_num_head + kv_num_head

    bs_loop = (bs + bs_tile - 1) // bs_tile
    calc_dtype = pypto.DT_FP32
    input_dtype = x.dtype
    tiling_value = 128
    vec_tile_value = 5120
    q_batch_tile = 4
    # 4. 定义动态函数
    pypto.set_vec_tile_shapes(vec_tile_value)
    x_gamma_2d = pypto.reshape(x_gamma, [1, hidden_size], inplace=True)
    x_bias_2d = pypto.reshape(x_bias, [1, hidden_size], inplace=True)
    x_scale_2d = pypto.reshape(x_scale, [1, hidden_size], inplace=True)
    x_offset_2d = pypto.reshape(x_offset, [1, hidden_size], inplace=True)
    quant_bias_2d = pypto.reshape(quant_bias, [1, total_head_size], inplace=True)
    deq_scale_2d = pypto.reshape(deq_scale, [1, total_head_size], inplace=True)
    q_gamma_2d = pypto.reshape(q_gamma, [1, 1, head_size], inplace=True)
    q_bias_2d = pypto.reshape(q_bias, [1, 1, head_size], inplace=True)
    k_gamma_2d = pypto.reshape(k_gamma, [1, 1, head_size], inplace=True)
    k_bias_2d = pypto.reshape(k_bias, [1, 1, head_size], inplace=True)

    pypto.set_vec_tile_shapes(1, 1, head_size)
    q_gamma_2d_fp32 = pypto.cast(q_gamma_2d, calc_dtype)
    q_bias_2d_fp32 = pypto.cast(q_bias_2d, calc_dtype)
    k_gamma_2d_fp32 = pypto.cast(k_gamma_2d, calc_dtype)
    k_bias_2d_fp32 = pypto.cast(k_bias_2d, calc_dtype)
    q_gamma_expand = pypto.expand_clone(q_gamma_2d_fp32, [1, q_num_head, head_size])
    q_bias_expand = pypto.expand_clone(q_bias_2d_fp32, [1, q_num_head, head_size])
    k_gamma_expand = pypto.expand_clone(k_gamma_2d_fp32, [1, kv_num_head, head_size])
    k_bias_expand = pypto.expand_clone(k_bias_2d_fp32, [1, kv_num_head, head_size])

    # 5. 实现kernel逻辑，循环展开BS动态轴
    for bs_idx in pypto.loop(bs_loop, name="LOOP_ATT_PRE_L0", idx_name="bs_idx"):
        act_bs_tile = (bs - bs_idx * bs_tile).min(bs_tile)

        # rms norm
        x_tile = pypto.view(x, [bs_tile, hidden_size], [bs_idx * bs_tile, 0], valid_shape=[act_bs_tile, hidden_size])
        # init
        pypto.set_vec_tile_shapes(1, vec_tile_value)
        x_tile_fp32 = pypto.cast(x_tile, calc_dtype)
        # add
        residual_input_tile = pypto.view(
            residual_input, [bs_tile, hidden_size], [bs_idx * bs_tile, 0], valid_shape=[act_bs_tile, hidden_size]
        )
        residual_input_tile_fp32 = pypto.cast(residual_input_tile, calc_dtype)
        x_f32 = pypto.add(residual_input_tile_fp32, x_tile_fp32)  # tile_x

        square = pypto.mul(x_f32, x_f32)  # square
        mean_res = pypto.mul(square, x_mean_coff)  # mean_res = square * mean_coff
        reduce_asum = pypto.sum(mean_res, -1, keepdim=True)  # reduce_asum = mean_res.sum(dim=-1, keepdim=True)
        reduce_sum = pypto.add(reduce_asum, eps)  # reduce_sum = reduce_asum + eps
        reduce_sqrt = pypto.sqrt(reduce_sum)  # reduce_sqrt = torch.sqrt(reduce_sum)
        res_div = pypto.div(x_f32, reduce_sqrt)  # res_div = x_f32 / reduce_sqrt
        residual_bf16 = pypto.cast(x_f32, input_dtype)
        x_int8 = pypto.tensor([bs_tile, hidden_size], pypto.DT_INT8, "x_int8")

        for tmp_idx in range(bs_tile):
            pypto.set_vec_tile_shapes(1, vec_tile_value)
            x_gamma_2d_fp32 = pypto.cast(x_gamma_2d, calc_dtype)
            x_bias_2d_fp32 = pypto.cast(x_bias_2d, calc_dtype)
            x_scale_2d_fp32 = pypto.cast(x_scale_2d, calc_dtype)
            x_offset_2d_fp32 = pypto.cast(x_offset_2d, calc_dtype)

            res_div_single = pypto.view(res_div, [1, hidden_size], [tmp_idx, 0])

            res = pypto.mul(res_div_single, x_gamma_2d_fp32)  # res = res_div * weight
            res_add = pypto.add(res, x_bias_2d_fp32)
            x_norm = pypto.cast(res_add, input_dtype)

            # x quant
            pypto.set_vec_tile_shapes(1, vec_tile_value)
            x_norm_fp32 = pypto.cast(x_norm, calc_dtype)  # bf16 -> fp32
            x_mul = pypto.mul(x_norm_fp32, x_scale_2d_fp32)
            x_add = pypto.add(x_mul, x_offset_2d_fp32)
            x_int32 = pypto.cast(x_add, pypto.DT_INT32, pypto.CastMode.CAST_RINT)  # Align ascendC
            x_fp16 = pypto.cast(x_int32, pypto.DT_FP16)
            x_int8[tmp_idx:tmp_idx + 1, 0:] = pypto.cast(x_fp16, pypto.DT_INT8, satmode=pypto.SaturationMode.ON)

        pypto.set_cube_tile_shapes([32, 32], [256, 512], [256, 256])
        tmp_c = pypto.matmul(x_int8, weight, pypto.DT_INT32)
        pypto.set_vec_tile_shapes(bs_tile, total_head_size)
        mm_add = pypto.add(tmp_c, quant_bias_2d)
        mm_fp32 = pypto.cast(mm_add, calc_dtype)  # int32 -> fp32
        mm_deq_scale = pypto.mul(mm_fp32, deq_scale_2d)
        mm_bf16 = pypto.cast(mm_deq_scale, input_dtype)  # fp32 -> bf16

        pypto.set_vec_tile_shapes(bs_tile, head_size)
        mm_3d = pypto.reshape(mm_bf16, [bs_tile, total_head_size // head_size, head_size], inplace=True)
        pypto.set_vec_tile_shapes(bs_tile, tiling_value, head_size)

        # split
        q_tile = pypto.view(
            mm_3d, [bs_tile, q_num_head, head_size], [0, 0, 0], valid_shape=[act_bs_tile, q_num_head, head_size]
        )
        k_tile = pypto.view(
            mm_3d,
            [bs_tile, kv_num_head, head_size],
            [0, q_num_head, 0],
            valid_shape=[act_bs_tile, kv_num_head, head_size],
        )
        v_tile = pypto.view(
            mm_3d,
            [bs_tile, kv_num_head, head_size],
            [0, kv_index, 0],
            valid_shape=[act_bs_tile, kv_num_head, head_size],
        )

        # rms norm
        q_norm = rms_norm_bias(
            q_tile, q_gamma_expand, q_bias_expand, qk_mean_coff, eps, [q_batch_tile, q_num_head, head_size]
        )
        k_norm = rms_norm_bias(
            k_tile, k_gamma_expand, k_bias_expand, qk_mean_coff, eps, [q_batch_tile, kv_num_head, head_size]
        )

        q_rot = pypto.view(
            q_norm, [bs_tile, q_num_head, rotary_dim], [0, 0, 0], valid_shape=[act_bs_tile, q_num_head, rotary_dim]
        )
        q_pass = pypto.view(
            q_norm, [bs_tile, q_num_head, stay_dim], [0, 0, rotary_dim], valid_shape=[act_bs_tile, q_num_head, stay_dim]
        )

        k_rot = pypto.view(
            k_norm, [bs_tile, kv_num_head, rotary_dim], [0, 0, 0], valid_shape=[act_bs_tile, kv_num_head, rotary_dim]
        )
        k_pass = pypto.view(
            k_norm,
            [bs_tile, kv_num_head, stay_dim],
            [0, 0, rotary_dim],
            valid_shape=[act_bs_tile, kv_num_head, stay_dim],
        )

        # apply rope
        # cast
        pypto.set_vec_tile_shapes(q_batch_tile, q_num_head, head_size)
        cos_tile = pypto.view(
            cos, [bs_tile, 1, half_rotary_dim], [bs_idx * bs_tile, 0, 0], valid_shape=[act_bs_tile, 1, half_rotary_dim]
        )
        sin_tile = pypto.view(
            sin, [bs_tile, 1, half_rotary_dim], [bs_idx * bs_tile, 0, 0], valid_shape=[act_bs_tile, 1, half_rotary_dim]
        )
        q_fp32 = pypto.cast(q_rot, calc_dtype)
        k_fp32 = pypto.cast(k_rot, calc_dtype)
        cos_fp32 = pypto.cast(cos_tile, calc_dtype)
        sin_fp32 = pypto.cast(sin_tile, calc_dtype)

        # q split
        q1 = pypto.view(
            q_fp32,
            [bs_tile, q_num_head, half_rotary_dim],
            [0, 0, 0],
            valid_shape=[act_bs_tile, q_num_head, half_rotary_dim],
        )
        q2 = pypto.view(
            q_fp32,
            [bs_tile, q_num_head, half_rotary_dim],
            [0, 0, half_rotary_dim],
            valid_shape=[act_bs_tile, q_num_head, half_rotary_dim],
        )

        # rope data
        q_rope = rope_data(q1, q2, cos_fp32, sin_fp32, [q_batch_tile, q_num_head, half_rotary_dim])
        q_cat = pypto.concat([q_rope, q_pass], 2)

        # k split
        k1 = pypto.view(
            k_fp32,
            [bs_tile, kv_num_head, half_rotary_dim],
            [0, 0, 0],
            valid_shape=[act_bs_tile, kv_num_head, half_rotary_dim],
        )
        k2 = pypto.view(
            k_fp32,
            [bs_tile, kv_num_head, half_rotary_dim],
            [0, 0, half_rotary_dim],
            valid_shape=[act_bs_tile, kv_num_head, half_rotary_dim],
        )

        # rope data
        k_rope = rope_data(k1, k2, cos_fp32, sin_fp32, [q_batch_tile, q_num_head, half_rotary_dim])
        k_cat = pypto.concat([k_rope, k_pass], 2)

        # post process
        q_res = pypto.reshape(q_cat, [bs_tile, q_size], valid_shape=[act_bs_tile, q_size])
        k_res = pypto.reshape(k_cat, [bs_tile, kv_size], valid_shape=[act_bs_tile, kv_size])
        v_res = pypto.reshape(v_tile, [bs_tile, kv_size], valid_shape=[act_bs_tile, kv_size])

        # # 6. 将结果搬运到输出tensor上
        # # update output
        q[bs_idx * pypto.symbolic_scalar(bs_tile):, 0:] = q_res
        k[bs_idx * pypto.symbolic_scalar(bs_tile):, 0:] = k_res
        v[bs_idx * pypto.symbolic_scalar(bs_tile):, 0:] = v_res
        residual[bs_idx * pypto.symbolic_scalar(bs_tile):, 0:] = residual_bf16


H, NT, HD, QS, KVS, HALF = 5120, 1792, 128, 1536, 128, 32
EPS = 1e-5


def _rms_bias(x64, g, b):
    ms = (x64 * x64 * (1.0 / x64.shape[-1])).sum(-1, keepdims=True) + EPS
    return x64 / np.sqrt(ms) * g + b


def make_case(T):
    rng = np.random.default_rng(153 + T)
    r = lambda *s: bf16_round(rng.random(s, dtype=np.float32))  # torch.rand in bf16
    x, res_in = r(T, H), r(T, H)
    xg, xb, xs, xo = r(H), r(H), r(H), r(H)
    w = rng.integers(-128, 128, size=(H, NT)).astype(np.int8)
    qb = rng.integers(-128, 128, size=(NT,)).astype(np.int32)
    dq = rng.random(NT, dtype=np.float32)
    qg, qbias, kg, kbias = r(HD), r(HD), r(HD), r(HD)
    cos, sin = r(T, 1, HALF), r(T, 1, HALF)

    # golden
    xf = x.astype(np.float64) + res_in.astype(np.float64)
    xf32 = (x + res_in).astype(np.float32)  # fp32 add is exact-ish; residual out is bf16 of it
    residual = bf16_round(xf32)
    x_norm = bf16_round(_rms_bias(xf32.astype(np.float64), xg, xb))
    # quant, written fp32 order: x_norm * scale + offset -> rint -> fp16 -> int8 (sat)
    x_add = (x_norm.astype(np.float32) * xs.astype(np.float32)).astype(np.float32) + xo.astype(np.float32)
    codes = np.clip(np.rint(x_add.astype(np.float32)), -128, 127).astype(np.int64)
    acc = (codes.astype(np.float64) @ w.astype(np.float64) + qb.astype(np.float64)).astype(np.int64)  # (exact in f64: |sum| < 2**53; numpy's int matmul has no BLAS)
    mm = bf16_round(acc.astype(np.float32).astype(np.float64) * dq.astype(np.float64))
    mm3 = mm.reshape(T, NT // HD, HD).astype(np.float64)
    qn = bf16_round(_rms_bias(mm3[:, :QS // HD], qg, qbias))
    kn = bf16_round(_rms_bias(mm3[:, QS // HD:QS // HD + 1], kg, kbias))
    vv = mm3[:, QS // HD + 1:]

    def rope(t):
        t = t.astype(np.float64)
        x1, x2 = t[..., :HALF], t[..., HALF:2 * HALF]
        c, s = cos.astype(np.float64), sin.astype(np.float64)
        o = bf16_round(np.concatenate([x1 * c - x2 * s, x2 * c + x1 * s], -1))
        return np.concatenate([o, t[..., 2 * HALF:]], -1)

    q_ref = rope(qn).reshape(T, QS)
    k_ref = rope(kn).reshape(T, KVS)
    v_ref = vv.reshape(T, KVS)
    ins = [(x, "bf16"), (res_in, "bf16"), (xg, "bf16"), (xb, "bf16"), (xs, "bf16"), (xo, "bf16"), (w, "int8"),
           (qb, "int32"), (dq, "fp32"), (qg, "bf16"), (qbias, "bf16"), (kg, "bf16"), (kbias, "bf16"),
           (cos, "bf16"), (sin, "bf16")]
    outs = [((T, QS), "bf16"), ((T, KVS), "bf16"), ((T, KVS), "bf16"), ((T, H), "bf16")]
    tol = (2e-2, 2e-2)
    return ins, outs, [q_ref, k_ref, v_ref, residual], [tol, tol, tol, (1e-4, 7.8125e-3)], []


if __name__ == "__main__":
    run("c103", quant_attention_pre_kernel, make_case)
