"""c152 (2026-12-07, outside corpus33 (held-out batch B, k314-k323: from hicann/pypto's model code); its author's k316).

k316: DeepSeek-V4 MLA prolog (quant), `wqa-linear` -> `q-rmsnorm with weight` -> quant segment
(C -> V -> Quant): q = x @ wq_a in fp32, the K axis split by hand into two 2048-wide halves whose
partial products are added; RMSNorm (fp32 in) * gamma_cq; symmetric per-token int8 quant;
assemble qr (int8) and qr_scale (fp32).

Source: hicann/pypto models/deepseek_v4/mla_prolog_quant_v4_impl.py
        @883e7dfb018da764a65fd2c2f8c1e1d2de2d2471 (mla_prolog_v4_compute lines 424-466;
        quant, rms_norm helpers verbatim)
Changes for 0.2.0 / self-containment:
  - only the wqa-linear / q-rmsnorm / quant block and its two outputs (qr_out, qr_scale_out) are
    kept; the wqb / wkv / rope paths and their inputs are dropped.
  - wq_a loses `format=pypto.TileOpFormat.TILEOP_NZ`: the CPU harness passes plain ND arrays (the
    source gets NZ from torch_npu.npu_format_cast, not available here).
  - runtime_options gains "run_mode": pypto.RunMode.SIM; "max_workspace_kb" removed (not in 0.2.0).
  - shapes kept at source size (h=4096, q_lora_rank=1024, k_tile=2048).
"""
from dataclasses import dataclass
from typing import List, Tuple

import numpy as np

from batch_harness import pypto, run, bf16_round


@dataclass
class MlaPrologV4Attrs:
    eps: float


@dataclass
class MlaPrologV4Configs:
    unroll_list: List[int]
    cube_l1_reuse_setting: dict
    mg_copyin_upper_bound: int
    pg_upper_bound: int
    block_size: int
    t_sub_tile: int
    chunk_size: int


def quant(
    input_tensor: pypto.Tensor,
    is_symmetry: bool = True,
    has_smooth_factor: bool = False,
    smooth_factor: pypto.Tensor = None,
) -> Tuple[pypto.Tensor, pypto.Tensor]:
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
    else:
        max_value = pypto.amax(input_tensor_fp32, -1, keepdim=True)
        min_value = pypto.amin(input_tensor_fp32, -1, keepdim=True)
        scale_de_quant = pypto.max(pypto.div(pypto.sub(max_value, min_value), 255.0), 1e-12)
        _offset = pypto.sub(127.0, pypto.div(max_value, scale_de_quant))
        scale_quant = pypto.div(pypto.full(max_value.shape, 1.0, pypto.DT_FP32), max_value)
        out_fp32 = pypto.mul(input_tensor_fp32, scale_quant)
        out_int32 = pypto.cast(out_fp32, pypto.DT_INT32, pypto.CastMode.CAST_RINT)
        out_half = pypto.cast(out_int32, pypto.DT_FP16, pypto.CastMode.CAST_ROUND)
        out_int8 = pypto.cast(out_half, pypto.DT_INT8, pypto.CastMode.CAST_TRUNC, satmode=pypto.SaturationMode.ON)
        return out_int8, scale_de_quant


def rms_norm(input_tensor: pypto.Tensor, epsilon: float) -> pypto.Tensor:
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


def mla_prolog_v4_wqa_compute(x, wq_a, rmsnorm_gamma_cq, qr_out, qr_scale_out, attrs, configs):
    t = x.shape[0]
    h = x.shape[1]
    q_lora_rank = rmsnorm_gamma_cq.shape[0]
    k_tile = 2048
    gamma_cq_2d = pypto.reshape(rmsnorm_gamma_cq, [1, rmsnorm_gamma_cq.shape[0]], inplace=True)
    pypto.set_vec_tile_shapes(4, q_lora_rank)
    gamma_cq_2d_fp32 = pypto.cast(gamma_cq_2d, pypto.DataType.DT_FP32)

    unroll_list = configs.unroll_list
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
        x_tile = pypto.view(x, [t_tile, h], [t_idx, 0], valid_shape=[t_tile, h])
        pypto.set_semantic_label("wqa-linear")
        pypto.set_cube_tile_shapes([tile_bs, tile_bs], [256, 256], [128, 128])
        for i in range(2):
            x_tile1 = pypto.view(x_tile, [t_tile, k_tile], [0, i * k_tile])
            wq_a_tile1 = pypto.view(wq_a, [k_tile, q_lora_rank], [i * k_tile, 0])
            if i == 0:
                q = pypto.matmul(x_tile1, wq_a_tile1, pypto.DT_FP32)
            else:
                q = q + pypto.matmul(x_tile1, wq_a_tile1, pypto.DT_FP32)

        pypto.set_semantic_label("q-rmsnorm with weight")
        qr = rms_norm(q, attrs.eps)
        qr = pypto.mul(qr, gamma_cq_2d_fp32)
        qr_quant, qr_scale = quant(qr)
        pypto.assemble(qr_quant, [t_idx, 0], qr_out)
        pypto.assemble(qr_scale, [t_idx, 0], qr_scale_out)


@pypto.frontend.jit(
    runtime_options={
        "stitch_function_max_num": 128,
        "device_sched_mode": 1,
        "run_mode": pypto.RunMode.SIM,
    },
    pass_options={"vec_nbuffer_setting": {-1: 2}},
)
def mla_prolog_v4_wqa(
    x: pypto.Tensor([pypto.DYNAMIC, pypto.STATIC], pypto.DT_BF16),
    wq_a: pypto.Tensor([pypto.STATIC, pypto.STATIC], pypto.DT_BF16),
    rmsnorm_gamma_cq: pypto.Tensor([pypto.STATIC], pypto.DT_BF16),
    qr_out: pypto.Tensor([pypto.DYNAMIC, pypto.STATIC], pypto.DT_INT8),
    qr_scale_out: pypto.Tensor([pypto.DYNAMIC, pypto.STATIC], pypto.DT_FP32),
    attrs,
    configs,
):
    pypto.experimental.set_operation_options(combine_axis=True)
    mla_prolog_v4_wqa_compute(x, wq_a, rmsnorm_gamma_cq, qr_out, qr_scale_out, attrs, configs)


# ---------------------------------------------------------------- golden (numpy)
H, QL, EPS = 4096, 1024, 1e-6


def g_quant_sym(x):
    x = x.astype(np.float32)
    mx = np.abs(x).max(-1, keepdims=True)
    sq = np.float32(127.0) / mx
    o = np.rint(x * sq)                       # CAST_RINT (half to even)
    o = np.clip(np.trunc(o.astype(np.float16).astype(np.float32)), -128, 127)  # fp16 ROUND, int8 TRUNC sat
    return o.astype(np.float32), (np.float32(1.0) / sq).astype(np.float32)


def make_case(T):
    rng = np.random.default_rng(316 + T)
    x = bf16_round(rng.standard_normal((T, H)).astype(np.float32))
    wq_a = bf16_round((rng.standard_normal((H, QL)) * 0.02).astype(np.float32))
    gamma = bf16_round(rng.uniform(0.5, 1.5, QL).astype(np.float32))

    q = (x[:, :2048] @ wq_a[:2048]).astype(np.float32) + (x[:, 2048:] @ wq_a[2048:]).astype(np.float32)
    y = (q * q).sum(-1, keepdims=True, dtype=np.float32) * np.float32(1.0 / QL) + np.float32(EPS)
    qr = q * (np.float32(1.0) / np.sqrt(y)) * gamma[None, :]
    q8, sc = g_quant_sym(qr)

    attrs = MlaPrologV4Attrs(eps=EPS)
    configs = MlaPrologV4Configs(
        unroll_list=[128, 64, 32, 16, 1],
        cube_l1_reuse_setting={2: 4},
        mg_copyin_upper_bound=2 * 1024 * 1024,
        pg_upper_bound=8192,
        block_size=128,
        t_sub_tile=1,
        chunk_size=2,
    )
    ins = [(x, "bf16"), (wq_a, "bf16"), (gamma, "bf16")]
    outs = [((T, QL), "int8"), ((T, 1), "fp32")]
    return ins, outs, [q8, sc], ["step1", (1e-7, 1e-4)], [attrs, configs]


if __name__ == "__main__":
    run("k316_v4q_wqa_splitk_qnorm_quant", mla_prolog_v4_wqa, make_case)
