"""c94 (outside batch corpus17, k144) (copied): copied from PyPTO mainline models/deepseek_v32_exp/mla_prolog_quant_impl.py: rms_norm, quant, dequant and
MlaTileConfig / MlaQuantInputs verbatim; the kernel is mla_prolog_quant_p's jit options and signature style with
mla_prolog_quant_compute's loop (reshape of dequant_scale inplace, loop_unroll, view of the token tile) and
pre_compute_2d's query-b segment verbatim (RmsNorm_qa -> Quant_qMnRes -> QuantMatmul_qb -> Dequant_qb, quant_b, no
smooth), then the loop's Assemble_qNorm block verbatim.
Changes: the first matmul (Matmul_qa) is dropped, so q_a_proj (bf16 [T,1536]) is the kernel input, viewed per tile;
q_b_proj is assembled into an output q_out (the model reshapes it for the rope/nope stages, dropped);
the loop is in a plain helper called by the jit kernel, as mla_prolog_quant_compute is
(SIM's parser refused my first transcription with the loop in the jit body: `quant_inputs.x = ...` is an
attribute assignment); scalar_div (needs pypto_impl / op_wrapper; only used by quant's asymmetric branch) is not copied; run_mode SIM added.
SK-03: V->C->V; int8 w_uq_qr [1536, 3072] [K,N] NZ; dequant scale [3072,1] reshaped to [1,3072].
Tolerances: q_norm int8 codes within 1 (step1); q_norm_scale 1e-7 + 1e-5; q_out 2e-2 + 2e-2.
"""
from dataclasses import dataclass
from typing import List, Tuple

import numpy as np
from batch_harness import PTO, pypto, run, bf16_round

_RT = {"stitch_function_max_num": 128}
if not PTO:
    _RT["run_mode"] = pypto.RunMode.SIM


@dataclass
class MlaTileConfig:
    def __init__(self):
        self.tile_b = 8
        self.tile_s = 1
        self.tile_bs = 8
        self.m_tile = 16
        self.mv_tile = 8  # SIM: 16 refused (ParseInput BuildFunction opSequenceAfterOOO_ 45 vs tileOps 44)
        self.pre_quant_cube_tile = [16, 16, 256, 256, 128, 128]
        self.cube_qb_tile = [16, 16, 256, 256, 128, 128]
        self.cube_wuk_tile = [32, 32, 256, 256, 256, 256]
        self.unroll_list = [32, 16, 8, 4, 2, 1]
        self.q_vec_tile0 = 16
        self.q_vec_tile1 = 16
        self.k_vec_tile0 = 16
        self.k_vec_tile1 = 16
        self.cube_l1_reuse_setting = {-1: 4}
        self.cube_nbuffer_setting = {3: 4}
        self.dynamic_unaligned_enable = False


@dataclass
class MlaQuantInputs:
    dequant_scale_x: pypto.Tensor = None
    dequant_scale_w_dq: pypto.Tensor = None
    dequant_scale_w_uq_qr: pypto.Tensor = None
    dequant_scale_w_dkv_kr: pypto.Tensor = None
    quant_scale_ckv: pypto.Tensor = None
    quant_scale_ckr: pypto.Tensor = None
    smooth_scales_cq: pypto.Tensor = None


def rms_norm(input_tensor: pypto.Tensor, gamma: pypto.Tensor, epsilon: float) -> pypto.Tensor:
    input_fp32 = pypto.cast(input_tensor, pypto.DT_FP32)
    dim = len(input_tensor.shape)
    shape = [1] * dim
    shape[dim - 1] = gamma.shape[0]
    gamma_cast = pypto.reshape(gamma, shape)
    gamma_fp32 = pypto.cast(gamma_cast, pypto.DT_FP32)
    y = pypto.mul(input_fp32, input_fp32)
    y = pypto.mul(y, 1.0 / input_tensor.shape[dim - 1])
    y = pypto.sum(y, -1, keepdim=True)
    y = pypto.add(y, epsilon)
    y = pypto.sqrt(y)
    ones_vector = pypto.full(y.shape, 1.0, pypto.DT_FP32)
    y = pypto.div(ones_vector, y)
    y = pypto.mul(input_fp32, y)
    y = pypto.mul(gamma_fp32, y)
    y = pypto.cast(y, input_tensor.dtype)
    return y


def quant(
    input_tensor: pypto.Tensor,
    is_symmetry: bool = True,
    has_smooth_factor: bool = False,
    smooth_factor: pypto.Tensor = None,
) -> Tuple[pypto.Tensor, pypto.Tensor]:
    input_fp32 = pypto.cast(input_tensor, pypto.DT_FP32)
    if has_smooth_factor:
        input_fp32 = pypto.mul(input_fp32, smooth_factor)
    if is_symmetry:
        abs_res = pypto.abs(input_fp32)
        max_value = pypto.amax(abs_res, -1, keepdim=True)
        temp127 = pypto.full(max_value.shape, 127.0, pypto.DT_FP32)
        scale_quant = temp127 / max_value
        out_fp32 = pypto.mul(input_fp32, scale_quant)
        out_int32 = pypto.cast(out_fp32, pypto.DT_INT32, pypto.CastMode.CAST_RINT)
        out_half = pypto.cast(out_int32, pypto.DT_FP16, pypto.CastMode.CAST_ROUND)
        out_int8 = pypto.cast(out_half, pypto.DT_INT8, pypto.CastMode.CAST_TRUNC, satmode=pypto.SaturationMode.ON)
        temp1 = pypto.full(max_value.shape, 1.0, pypto.DT_FP32)
        scale_de_quant = temp1 / scale_quant
        return out_int8, scale_de_quant
    else:
        max_value = pypto.amax(input_fp32, -1, keepdim=True)
        min_value = pypto.amin(input_fp32, -1, keepdim=True)
        scale_de_quant = max(pypto.div(pypto.sub(max_value, min_value), 255.0), 1e-12)
        _offset = pypto.sub(127.0, pypto.div(max_value, scale_de_quant))
        scale_quant = scalar_div(max_value, 1.0, True)  # noqa: F821 (not copied)
        out_fp32 = pypto.mul(input_fp32, scale_quant)
        out_int32 = pypto.cast(out_fp32, pypto.DT_INT32, pypto.CastMode.CAST_RINT)
        out_half = pypto.cast(out_int32, pypto.DT_FP16, pypto.CastMode.CAST_ROUND)
        out_int8 = pypto.cast(out_half, pypto.DT_INT8, pypto.CastMode.CAST_TRUNC, satmode=pypto.SaturationMode.ON)
        return out_int8, scale_de_quant


def dequant(
    dtype: pypto.DataType, input_tensor: pypto.Tensor, scale: pypto.Tensor, w_scale: pypto.Tensor
) -> pypto.Tensor:
    dequant_res = pypto.cast(input_tensor, pypto.DT_FP32)
    dequant_res = dequant_res * scale
    dequant_res = dequant_res * w_scale
    return pypto.cast(dequant_res, dtype)


def mla_prolog_quant_q_compute(q_a_proj_in, w_uq_qr, dequant_scale, gamma_cq, q_norm_out, q_norm_scale_out, q_out,
                               epsilon_cq, tile_config):
    dtype = q_a_proj_in.dtype
    q_lora_rank = q_a_proj_in.shape[1]
    nq = w_uq_qr.shape[1]
    t = q_a_proj_in.shape[0]
    quant_inputs = MlaQuantInputs()

    is_quant = False
    if dequant_scale.shape[0] != 0:
        dequant_scale_wuqr_reshape = pypto.reshape(dequant_scale, [1, nq], inplace=True)
        quant_inputs.dequant_scale_w_uq_qr = dequant_scale_wuqr_reshape
        is_quant = True

    unroll_list = tile_config.unroll_list
    for bs_offset, unroll_length in pypto.loop_unroll(
        0,
        t,
        1,
        name="MLA_BS_LOOP",
        idx_name="bs_offset",
        unroll_list=unroll_list,
    ):
        tile_bs = unroll_length

        pypto.set_vec_tile_shapes(tile_bs, 128)
        q_a_proj = pypto.view(q_a_proj_in, [tile_bs, q_lora_rank], [bs_offset, 0])

        # ---- pre_compute_2d, query-b segment (verbatim) ----
        dequant_scale_w_uq_qr = quant_inputs.dequant_scale_w_uq_qr
        is_quant_b = dequant_scale_w_uq_qr is not None
        smooth_scales_cq = quant_inputs.smooth_scales_cq
        is_smooth = smooth_scales_cq is not None
        dtype_quant_b_out = pypto.DT_INT32 if is_quant_b else dtype
        mv = tile_config.mv_tile

        pypto.set_vec_tile_shapes(mv, q_lora_rank)
        pypto.set_semantic_label("RmsNorm_qa")
        norm_res = rms_norm(q_a_proj, gamma_cq, epsilon_cq)

        if is_quant_b:
            pypto.set_vec_tile_shapes(mv, q_lora_rank)
            pypto.set_semantic_label("Quant_qMnRes")
            if is_smooth:
                quant_res = quant(norm_res, True, True, smooth_scales_cq)
            else:
                quant_res = quant(norm_res, True, False)
            norm_quant = quant_res[0]
            norm_quant_scale = quant_res[1]
            pypto.set_semantic_label("QuantMatmul_qb")
            pypto.set_cube_tile_shapes(
                [tile_config.cube_qb_tile[0], tile_config.cube_qb_tile[1]],
                [tile_config.cube_qb_tile[2], tile_config.cube_qb_tile[3]],
                [tile_config.cube_qb_tile[4], tile_config.cube_qb_tile[5]],
            )
            q_b_proj_tmp = pypto.matmul(norm_quant, w_uq_qr, dtype_quant_b_out)
            pypto.set_semantic_label("Dequant_qb")
            q_b_proj = dequant(dtype, q_b_proj_tmp, norm_quant_scale, dequant_scale_w_uq_qr)
        else:
            pypto.set_cube_tile_shapes(
                [tile_config.cube_qb_tile[0], tile_config.cube_qb_tile[1]],
                [tile_config.cube_qb_tile[2], tile_config.cube_qb_tile[3]],
                [tile_config.cube_qb_tile[4], tile_config.cube_qb_tile[5]],
            )
            pypto.set_semantic_label("Matmul_qb")
            q_b_proj = pypto.matmul(norm_res, w_uq_qr, dtype)
        q_kv = [q_b_proj, None, norm_quant, norm_quant_scale]

        ############# q_norm ############# (verbatim from mla_prolog_quant_compute)
        pypto.set_semantic_label("Assemble_qNorm")
        q_norm = q_kv[2]
        pypto.set_vec_tile_shapes(tile_bs, q_lora_rank)
        pypto.assemble(q_norm, [bs_offset, 0], q_norm_out)
        if is_quant:
            q_norm_scale = q_kv[3]
            pypto.set_vec_tile_shapes(tile_bs, 1)
            pypto.assemble(q_norm_scale, [bs_offset, 0], q_norm_scale_out)

        # added: the q projection itself
        pypto.set_vec_tile_shapes(tile_bs, 512)
        pypto.assemble(q_kv[0], [bs_offset, 0], q_out)



@pypto.frontend.jit(
    pass_options={
        "cube_l1_reuse_setting": {-1: 4},
    },
    runtime_options=_RT,
)
def mla_prolog_quant_q_path(
    q_a_proj_in: pypto.Tensor([pypto.DYNAMIC, pypto.STATIC], pypto.DT_BF16),
    w_uq_qr: pypto.Tensor([pypto.STATIC, pypto.STATIC], pypto.DT_INT8, format=pypto.TileOpFormat.TILEOP_NZ),
    dequant_scale: pypto.Tensor([pypto.STATIC, pypto.STATIC], pypto.DT_FP32),
    gamma_cq: pypto.Tensor([pypto.STATIC], pypto.DT_BF16),
    q_norm_out: pypto.Tensor([pypto.DYNAMIC, pypto.STATIC], pypto.DT_INT8),
    q_norm_scale_out: pypto.Tensor([pypto.DYNAMIC, pypto.STATIC], pypto.DT_FP32),
    q_out: pypto.Tensor([pypto.DYNAMIC, pypto.STATIC], pypto.DT_BF16),
    epsilon_cq,
    tile_config,
):
    mla_prolog_quant_q_compute(q_a_proj_in, w_uq_qr, dequant_scale, gamma_cq, q_norm_out, q_norm_scale_out, q_out,
                               epsilon_cq, tile_config)


QL, NQ, EPS = 1536, 16 * 192, 1e-5


def make_case(T):
    rng = np.random.default_rng(144 + T)
    x = bf16_round(rng.uniform(-1, 1, (T, QL)).astype(np.float32))
    g = bf16_round(rng.uniform(-1, 1, QL).astype(np.float32))
    w = rng.integers(-127, 128, (QL, NQ)).astype(np.float32)
    ws = rng.uniform(1e-3, 3e-3, (NQ, 1)).astype(np.float32)
    xd = x.astype(np.float64)
    rstd = 1.0 / np.sqrt((xd * xd).mean(-1, keepdims=True) + EPS)
    nr = bf16_round(xd * rstd * g)                                  # rms_norm output, bf16
    amax = np.abs(nr).max(-1, keepdims=True).astype(np.float32)
    sq = (np.float32(127.0) / amax).astype(np.float32)              # temp127 / max_value (f32)
    q = np.clip(np.rint((nr * sq).astype(np.float32)), -127, 127)   # RINT -> fp16 -> int8 sat
    sdq = (np.float32(1.0) / sq).astype(np.float32)                 # temp1 / scale_quant
    acc = q.astype(np.float64) @ w.astype(np.float64)               # exact int32
    out = bf16_round(((acc.astype(np.float32) * sdq).astype(np.float32) * ws[:, 0][None, :]).astype(np.float32))
    return ([(x, "bf16"), (w, "int8"), (ws, "fp32"), (g, "bf16")],
            [((T, QL), "int8"), ((T, 1), "fp32"), ((T, NQ), "bf16")],
            [q, sdq, out], ["step1", (1e-7, 1e-5), (2e-2, 2e-2)], [EPS, MlaTileConfig()])


if __name__ == "__main__":
    run("c94", mla_prolog_quant_q_path, make_case)
