"""c91 (outside batch corpus15, k130) (copied): DeepSeek-V4 mla_prolog_quant_v4 -- "q-rmsnorm with weight" -> quant -> "wqb-linear" (int8, NZ)
-> dequant -> per-head rms_norm -> bf16 -> the nope view assembled into q_out.   V -> C -> V.

Source: hicann/pypto models/deepseek_v4/mla_prolog_quant_v4_impl.py: quant (184-240), dequant (242-263),
rms_norm (266-294), mla_prolog_v4_compute lines 461-487, jit options of mla_prolog_v4 (520-527), unroll list of
test_mla_prolog_quant_v4.py.  Changes: the kernel input is the fp32 wqa-linear result q (given as bf16 and cast);
the wqa-linear / wkv-linear matmuls and the rope part are dropped; head_num 16 (wq_b [1024, 8192]) not 64;
q_out holds the nope columns only ([t, 16, 448]).
"""
import numpy as np

from batch_harness import PTO, pypto, run, bf16_round  # (the batch's _common.py)


def quant(input_tensor, is_symmetry=True, has_smooth_factor=False, smooth_factor=None):
    if input_tensor.dtype != pypto.DT_FP32:
        input_tensor_fp32 = pypto.cast(input_tensor, pypto.DT_FP32)
    else:
        input_tensor_fp32 = input_tensor
    if has_smooth_factor:
        input_tensor_fp32 = pypto.mul(input_tensor_fp32, smooth_factor)
    if is_symmetry:
        abs_res = pypto.abs(input_tensor_fp32)
        max_value = pypto.amax(abs_res, -1, keepdim=True)
        scale_quant = pypto.div(pypto.full(max_value.shape, 127.0, pypto.DT_FP32), max_value)
        out_fp32 = pypto.mul(input_tensor_fp32, scale_quant)
        out_int32 = pypto.cast(out_fp32, pypto.DT_INT32, pypto.CastMode.CAST_RINT)
        out_half = pypto.cast(out_int32, pypto.DT_FP16, pypto.CastMode.CAST_ROUND)
        out_int8 = pypto.cast(out_half, pypto.DT_INT8, pypto.CastMode.CAST_TRUNC, satmode=pypto.SaturationMode.ON)
        scale_de_quant = pypto.div(pypto.full(scale_quant.shape, 1.0, pypto.DT_FP32), scale_quant)
        return out_int8, scale_de_quant
    raise NotImplementedError


def dequant(input_tensor, scale, w_scale):
    dequant_res = pypto.cast(input_tensor, pypto.DT_FP32)
    dequant_res = dequant_res * scale
    dequant_res = dequant_res * w_scale
    return dequant_res


def rms_norm(input_tensor, epsilon):
    dim = len(input_tensor.shape)
    y = pypto.mul(input_tensor, input_tensor)
    y = pypto.sum(y, -1, keepdim=True)
    y = pypto.mul(y, 1.0 / input_tensor.shape[dim - 1])
    y = pypto.add(y, epsilon)
    y = pypto.sqrt(y)
    ones_vector = pypto.full(y.shape, 1.0, pypto.DT_FP32)
    y = pypto.div(ones_vector, y)
    y = pypto.mul(input_tensor, y)
    return y


EPS = 1e-6
UNROLL = [128, 64, 32, 16, 1]
HEAD_NUM, HEAD_DIM, ROPE_DIM, QL = 16, 512, 64, 1024


@pypto.frontend.jit(
    runtime_options={
        "stitch_function_max_num": 128,
        "device_sched_mode": 1,
        "run_mode": pypto.RunMode.SIM,
    },
    pass_options={"vec_nbuffer_setting": {-1: 2}},
)
def mla_prolog_quant_wqb(
    q_in: pypto.Tensor([pypto.DYNAMIC, pypto.STATIC], pypto.DT_BF16),
    wq_b: pypto.Tensor([pypto.STATIC, pypto.STATIC], pypto.DT_INT8, format=pypto.TileOpFormat.TILEOP_NZ),
    rmsnorm_gamma_cq: pypto.Tensor([pypto.STATIC], pypto.DT_BF16),
    wq_b_scale: pypto.Tensor([pypto.STATIC, pypto.STATIC], pypto.DT_FP32),
    q_out: pypto.Tensor([pypto.DYNAMIC, pypto.STATIC, pypto.STATIC], pypto.DT_BF16),
    qr_out: pypto.Tensor([pypto.DYNAMIC, pypto.STATIC], pypto.DT_INT8),
    qr_scale_out: pypto.Tensor([pypto.DYNAMIC, pypto.STATIC], pypto.DT_FP32),
):
    t = q_in.shape[0]
    q_lora_rank = rmsnorm_gamma_cq.shape[0]
    head_dim = HEAD_DIM
    head_num = wq_b.shape[1] // head_dim
    rope_dim = ROPE_DIM
    gamma_cq_2d = pypto.reshape(rmsnorm_gamma_cq, [1, rmsnorm_gamma_cq.shape[0]], inplace=True)
    wq_b_scale = pypto.reshape(wq_b_scale, [1, wq_b_scale.shape[0]], inplace=True)
    pypto.set_vec_tile_shapes(4, q_lora_rank)
    gamma_cq_2d_fp32 = pypto.cast(gamma_cq_2d, pypto.DataType.DT_FP32)

    unroll_list = UNROLL
    for t_idx, unroll_length in pypto.loop_unroll(
        0,
        t,
        1,
        name="MLA_BS_LOOP",
        idx_name="bs_offset",
        unroll_list=unroll_list,
    ):
        t_tile = unroll_length
        tile_bs = min(t_tile, 128)
        pypto.set_vec_tile_shapes(4, 4096)
        q_tile = pypto.view(q_in, [t_tile, q_lora_rank], [t_idx, 0], valid_shape=[t_tile, q_lora_rank])
        q = pypto.cast(q_tile, pypto.DT_FP32)

        pypto.set_semantic_label("q-rmsnorm with weight")
        qr = rms_norm(q, EPS)
        qr = pypto.mul(qr, gamma_cq_2d_fp32)
        qr_quant, qr_scale = quant(qr)
        pypto.assemble(qr_quant, [t_idx, 0], qr_out)
        pypto.assemble(qr_scale, [t_idx, 0], qr_scale_out)
        pypto.set_semantic_label("wqb-linear")
        pypto.set_cube_tile_shapes([tile_bs, tile_bs], [128, 1024, 512], [256, 256])
        qb = pypto.matmul(qr_quant, wq_b, pypto.DataType.DT_INT32)

        pypto.set_vec_tile_shapes(4, 4096)
        qb_dequant = dequant(qb, qr_scale, wq_b_scale)
        q_3d = pypto.reshape(qb_dequant, [t_tile, head_num, head_dim])
        pypto.set_vec_tile_shapes(4, 8, 512)
        qr2_3d = rms_norm(q_3d, EPS)
        qr2_3d_cast = pypto.cast(qr2_3d, pypto.DataType.DT_BF16)
        qr2_3d_nope = pypto.view(
            qr2_3d_cast,
            [t_tile, head_num, head_dim - rope_dim],
            [0, 0, 0],
            valid_shape=[t_tile, head_num, head_dim - rope_dim],
        )
        pypto.assemble(pypto.clone(qr2_3d_nope), [t_idx, 0, 0], q_out)


def f32(a):
    return np.asarray(a, np.float32)


def make_case(T):
    rng = np.random.default_rng(130 + T)
    N = HEAD_NUM * HEAD_DIM
    q = bf16_round(rng.standard_normal((T, QL)))
    w = rng.integers(-127, 128, (QL, N)).astype(np.float32)
    g = bf16_round(1.0 + 0.1 * rng.standard_normal(QL))
    ws = f32(rng.uniform(0.5, 1.5, (N, 1)) / 2000.0)
    # fp32 golden in the kernel's op order
    y = (q * q).sum(-1, keepdims=True, dtype=np.float32) * f32(1.0 / QL)
    r = f32(1.0) / np.sqrt(y + f32(EPS))
    qr = q * r * g
    amax = np.abs(qr).max(-1, keepdims=True)
    sq = f32(127.0) / amax
    codes = np.clip(np.rint(qr * sq), -127, 127)
    sdq = f32(1.0) / sq
    acc = (codes.astype(np.float64) @ w.astype(np.float64)).astype(np.float32)  # (exact in f64: |sum| < 2**53; numpy's int matmul has no BLAS)
    deq = acc * sdq * ws.reshape(1, N)
    d3 = deq.reshape(T, HEAD_NUM, HEAD_DIM).astype(np.float64)
    n3 = d3 / np.sqrt((d3 ** 2).mean(-1, keepdims=True) + EPS)
    ref = bf16_round(n3[:, :, :HEAD_DIM - ROPE_DIM])
    ins = [(q, "bf16"), (w, "int8"), (g, "bf16"), (ws, "fp32")]
    outs = [((T, HEAD_NUM, HEAD_DIM - ROPE_DIM), "bf16"), ((T, QL), "int8"), ((T, 1), "fp32")]
    return ins, outs, [ref, codes, sdq], [(2e-2, 2e-2), "step1", (1e-7, 1e-5)], []


if __name__ == "__main__":
    run("c91", mla_prolog_quant_wqb, make_case)
