#!/usr/bin/env python3
"""c78 (outside batch corpus9, k82): GLM-4.5 attention_pre_quant (models/glm_v4_5/glm_attention_pre_quant.py), kept whole.

SK-03 V -> C -> V with one int8 matmul:
residual add (x + residual_input, bf16 -> fp32) -> RMSNorm (div by sqrt) -> per-row python loop
(range(bs_tile)) applying gamma + bias, static int8 quant (x * x_scale + x_offset, CAST_RINT
int32 -> fp16 -> int8 saturating) written by slice assignment into a pypto.tensor scratch
(x_int8[i:i + 1, 0:] = ...) -> matmul x_int8 [8, 5120] @ weight [5120, 1792] int8 -> int32,
+ quant_bias (int32), cast fp32 * deq_scale -> bf16 -> reshape rank 3 [8, 14, 128] inplace ->
split q/k/v by view with valid_shape -> per-head RMSNorm + bias for q and k (gamma/bias
expand_clone'd) -> half-split RoPE on the first 64 dims (cos/sin [T, 1, 32]) -> concat ->
reshape back with valid_shape. Four outputs: q [T, 1536], k [T, 128], v [T, 128], residual
[T, 5120] (all bf16), written as the model does: q[bs_idx * pypto.symbolic_scalar(bs_tile):, 0:] = q_res.
Signatures as the model: pypto.Tensor([pypto.DYNAMIC, ...], ...) and pypto.Tensor([], ...).
Loop: pypto.loop(bs_loop) over 8-token tiles, act_bs_tile = (bs - bs_idx * bs_tile).min(bs_tile).
T in (1, 37, 136).
"""

import os

import numpy as np

if os.environ.get("PTO") == "1":
    import pto.pypto as pypto
else:
    import pypto

HIDDEN, TOTAL_HEAD, HEAD = 5120, 1792, 128
Q_SIZE, KV_SIZE = 1536, 128
ROTARY = 64
HALF_ROT = ROTARY // 2
EPS = 1e-05
TOKENS = (1, 37, 136)  # (in the suite: a count past 128 that costs less than 200)


def bf16_round(a):
    a = np.ascontiguousarray(a, dtype=np.float32)
    u = a.view(np.uint32).astype(np.uint64)
    u = (u + 0x7FFF + ((u >> 16) & 1)) & 0xFFFF0000
    return u.astype(np.uint32).view(np.float32)


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


@pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.SIM, "stitch_function_max_num": 128})
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

    for bs_idx in pypto.loop(bs_loop, name="LOOP_ATT_PRE_L0", idx_name="bs_idx"):
        act_bs_tile = (bs - bs_idx * bs_tile).min(bs_tile)

        # rms norm
        x_tile = pypto.view(x, [bs_tile, hidden_size], [bs_idx * bs_tile, 0], valid_shape=[act_bs_tile, hidden_size])
        pypto.set_vec_tile_shapes(1, vec_tile_value)
        x_tile_fp32 = pypto.cast(x_tile, calc_dtype)
        # add
        residual_input_tile = pypto.view(
            residual_input, [bs_tile, hidden_size], [bs_idx * bs_tile, 0], valid_shape=[act_bs_tile, hidden_size]
        )
        residual_input_tile_fp32 = pypto.cast(residual_input_tile, calc_dtype)
        x_f32 = pypto.add(residual_input_tile_fp32, x_tile_fp32)

        square = pypto.mul(x_f32, x_f32)
        mean_res = pypto.mul(square, x_mean_coff)
        reduce_asum = pypto.sum(mean_res, -1, keepdim=True)
        reduce_sum = pypto.add(reduce_asum, eps)
        reduce_sqrt = pypto.sqrt(reduce_sum)
        res_div = pypto.div(x_f32, reduce_sqrt)
        residual_bf16 = pypto.cast(x_f32, input_dtype)
        x_int8 = pypto.tensor([bs_tile, hidden_size], pypto.DT_INT8, "x_int8")

        for tmp_idx in range(bs_tile):
            pypto.set_vec_tile_shapes(1, vec_tile_value)
            x_gamma_2d_fp32 = pypto.cast(x_gamma_2d, calc_dtype)
            x_bias_2d_fp32 = pypto.cast(x_bias_2d, calc_dtype)
            x_scale_2d_fp32 = pypto.cast(x_scale_2d, calc_dtype)
            x_offset_2d_fp32 = pypto.cast(x_offset_2d, calc_dtype)

            res_div_single = pypto.view(res_div, [1, hidden_size], [tmp_idx, 0])

            res = pypto.mul(res_div_single, x_gamma_2d_fp32)
            res_add = pypto.add(res, x_bias_2d_fp32)
            x_norm = pypto.cast(res_add, input_dtype)

            # x quant
            pypto.set_vec_tile_shapes(1, vec_tile_value)
            x_norm_fp32 = pypto.cast(x_norm, calc_dtype)
            x_mul = pypto.mul(x_norm_fp32, x_scale_2d_fp32)
            x_add = pypto.add(x_mul, x_offset_2d_fp32)
            x_int32 = pypto.cast(x_add, pypto.DT_INT32, pypto.CastMode.CAST_RINT)
            x_fp16 = pypto.cast(x_int32, pypto.DT_FP16)
            x_int8[tmp_idx : tmp_idx + 1, 0:] = pypto.cast(x_fp16, pypto.DT_INT8, satmode=pypto.SaturationMode.ON)

        pypto.set_cube_tile_shapes([32, 32], [256, 512], [256, 256])
        tmp_c = pypto.matmul(x_int8, weight, pypto.DT_INT32)
        pypto.set_vec_tile_shapes(bs_tile, total_head_size)
        mm_add = pypto.add(tmp_c, quant_bias_2d)
        mm_fp32 = pypto.cast(mm_add, calc_dtype)
        mm_deq_scale = pypto.mul(mm_fp32, deq_scale_2d)
        mm_bf16 = pypto.cast(mm_deq_scale, input_dtype)

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

        k_rope = rope_data(k1, k2, cos_fp32, sin_fp32, [q_batch_tile, q_num_head, half_rotary_dim])
        k_cat = pypto.concat([k_rope, k_pass], 2)

        # post process
        q_res = pypto.reshape(q_cat, [bs_tile, q_size], valid_shape=[act_bs_tile, q_size])
        k_res = pypto.reshape(k_cat, [bs_tile, kv_size], valid_shape=[act_bs_tile, kv_size])
        v_res = pypto.reshape(v_tile, [bs_tile, kv_size], valid_shape=[act_bs_tile, kv_size])

        # update output
        q[bs_idx * pypto.symbolic_scalar(bs_tile) :, 0:] = q_res
        k[bs_idx * pypto.symbolic_scalar(bs_tile) :, 0:] = k_res
        v[bs_idx * pypto.symbolic_scalar(bs_tile) :, 0:] = v_res
        residual[bs_idx * pypto.symbolic_scalar(bs_tile) :, 0:] = residual_bf16


def golden(x, r, xg, xb, xs, xo, w, qb, ds, qg, qbi, kg, kbi, cos, sin):
    xf = x + r
    rms = np.sqrt((xf * xf * np.float32(1.0 / HIDDEN)).sum(-1, keepdims=True) + np.float32(EPS))
    xn = bf16_round(xf / rms * xg + xb)
    xi = np.clip(np.rint(xn * xs + xo), -128, 127).astype(np.int64)
    mm = (xi.astype(np.float64) @ w.astype(np.float64) + qb.astype(np.float64)).astype(np.float32)  # (exact in f64: |sum| < 2**53; numpy's int matmul has no BLAS)
    mm = bf16_round(mm * ds)
    t = x.shape[0]
    m3 = mm.reshape(t, TOTAL_HEAD // HEAD, HEAD)
    nq, nkv = Q_SIZE // HEAD, KV_SIZE // HEAD

    def head_norm(a, g, b):
        rr = np.sqrt((a * a * np.float32(1.0 / HEAD)).sum(-1, keepdims=True) + np.float32(EPS))
        return bf16_round(a / rr * g + b)

    def rope(a):
        a1, a2 = a[..., :HALF_ROT], a[..., HALF_ROT:ROTARY]
        o = np.concatenate([a1 * cos - a2 * sin, a2 * cos + a1 * sin], -1)
        return np.concatenate([bf16_round(o), a[..., ROTARY:]], -1)

    qn = rope(head_norm(m3[:, :nq], qg, qbi)).reshape(t, Q_SIZE)
    kn = rope(head_norm(m3[:, nq : nq + nkv], kg, kbi)).reshape(t, KV_SIZE)
    vv = m3[:, nq + nkv :].reshape(t, KV_SIZE)
    return qn, kn, vv, bf16_round(xf)


def main():
    rng = np.random.default_rng(82)

    def b(lo, hi, s):
        return bf16_round(rng.uniform(lo, hi, s).astype(np.float32))

    xg, xb = b(0.5, 1.5, (HIDDEN,)), b(-0.1, 0.1, (HIDDEN,))
    xs, xo = b(15.0, 25.0, (HIDDEN,)), b(-1.0, 1.0, (HIDDEN,))
    w = rng.integers(-127, 128, (HIDDEN, TOTAL_HEAD)).astype(np.int8)
    qb = rng.integers(-128, 128, (TOTAL_HEAD,)).astype(np.int32)
    ds = rng.uniform(2e-6, 4e-6, (TOTAL_HEAD,)).astype(np.float32)
    qg, qbi = b(0.5, 1.5, (HEAD,)), b(-0.1, 0.1, (HEAD,))
    kg, kbi = b(0.5, 1.5, (HEAD,)), b(-0.1, 0.1, (HEAD,))
    all_ok = True
    for T in TOKENS:
        x, r = b(-1, 1, (T, HIDDEN)), b(-1, 1, (T, HIDDEN))
        cos, sin = b(-1, 1, (T, 1, HALF_ROT)), b(-1, 1, (T, 1, HALF_ROT))
        params = (xg, xb, xs, xo)
        if os.environ.get("PTO") == "1":
            import ml_dtypes

            bf = ml_dtypes.bfloat16
            refs = golden(x, r, xg, xb, xs, xo, w, qb, ds, qg, qbi, kg, kbi, cos, sin)
            outs = [np.zeros((T, n), dtype=bf) for n in (Q_SIZE, KV_SIZE, KV_SIZE, HIDDEN)]
            quant_attention_pre_kernel(
                x.astype(bf),
                r.astype(bf),
                *[p.astype(bf) for p in params],
                w,
                qb,
                ds,
                qg.astype(bf),
                qbi.astype(bf),
                kg.astype(bf),
                kbi.astype(bf),
                cos.astype(bf),
                sin.astype(bf),
                *outs,
            )
            ok = True
            for name, got, ref in zip(("q", "k", "v", "residual"), outs, refs, strict=True):
                got = got.astype(np.float32)
                err = np.abs(got - ref)
                tol = 2e-2 + 2e-2 * np.abs(ref)
                good = bool(np.isfinite(got).all() and (err <= tol).all())
                ok &= good
                print(f"  T={T} {name}: {'ok' if good else 'BAD'} max_abs_err={err.max():.4g} bad={(err > tol).sum()}")
            all_ok &= ok
        else:
            import torch

            def tb(a):
                return torch.from_numpy(a).to(torch.bfloat16)

            outs = [torch.zeros((T, n), dtype=torch.bfloat16) for n in (Q_SIZE, KV_SIZE, KV_SIZE, HIDDEN)]
            quant_attention_pre_kernel(
                tb(x),
                tb(r),
                *[tb(p) for p in params],
                torch.from_numpy(w),
                torch.from_numpy(qb),
                torch.from_numpy(ds),
                tb(qg),
                tb(qbi),
                tb(kg),
                tb(kbi),
                tb(cos),
                tb(sin),
                *outs,
            )
            print(f"  T={T}: SIM ran")
    if os.environ.get("PTO") == "1":
        print("ALL PASS" if all_ok else "FAIL")
        return
    print("k82 SIM accepted")


if __name__ == "__main__":
    main()
