"""c124 (outside batch corpus20, k178): DeepSeek-V3.2 MLA prolog, key/value down-projection segment:
token_x @ w_dkv_kr (bf16, NZ) (C) -> split: kv part RMSNorm(gamma_ckv) (V) -> per-token-per-group int8
quant (4 groups of 128) (V); rope part interleaved RoPE (V) -> scatter_update into the paged caches
(kv int8, kr bf16, k scale fp32).

Follows hicann/pypto models/deepseek_v32_exp/mla_prolog_quant_impl.py (r0.2.0): helpers k_nope_quant,
rms_norm, rotate_half, rope_v2 verbatim; MlaTileConfig / RopeTileShapeConfig; pre_compute_2d's
Matmul_kva branch and the "RoPE", "kNope", "kNope Quant" and ScatterUpdate blocks of
mla_prolog_quant_compute verbatim; the decode decorator mla_prolog_quant_d and the decode tile
configuration of deepseekv32_mla_prolog_quant.py (unroll [8, 4, 2, 1], rope tiles [128,128]/[128,128,128]).
The query path (w_dq/w_uq_qr/w_uk matmuls) is left out.  Sizes as the source: h 7168,
kv_lora_rank 512, rope 64 (w_dkv_kr [7168, 576]); caches block_size 128, 4 blocks.
The caches are updated in place, as the source calls it: kv_cache and kv_cache_out are the same
tensor (the harness `call` passes the output array, pre-filled with the old cache, for both).
"""
from dataclasses import dataclass
from typing import List, Tuple

import numpy as np

from batch_harness import pypto, run, bf16_round, fp16_round, PTO


@dataclass
class MlaTileConfig:
    def __init__(self):
        self.tile_b = 8
        self.tile_s = 1
        self.tile_bs = 8
        self.m_tile = 16
        self.mv_tile = 16
        self.pre_quant_cube_tile = [16, 16, 256, 256, 128, 128]
        self.unroll_list = [32, 16, 8, 4, 2, 1]
        self.q_vec_tile0 = 16
        self.q_vec_tile1 = 16
        self.k_vec_tile0 = 16
        self.k_vec_tile1 = 16
        self.cube_l1_reuse_setting = {-1: 4}
        self.pg_upper_bound = 8192
        self.cube_nbuffer_setting = {3: 4}
        self.dynamic_unaligned_enable = False


@dataclass
class RopeTileShapeConfig:
    two_dim: List[int]
    three_dim: List[int]
    four_dim: List[int]


def k_nope_quant(x: pypto.Tensor) -> Tuple[pypto.Tensor, pypto.Tensor]:
    x_fp32 = pypto.cast(x, pypto.DT_FP32)
    abs_res = pypto.abs(x_fp32)
    max_value = pypto.amax(abs_res, -1, keepdim=True)
    scale_quant = pypto.div(pypto.full(max_value.shape, 127.0, pypto.DT_FP32), max_value)
    out_fp32 = pypto.mul(x_fp32, scale_quant)
    out_int32 = pypto.cast(out_fp32, pypto.DT_INT32, pypto.CastMode.CAST_RINT)
    out_half = pypto.cast(out_int32, pypto.DT_FP16, pypto.CastMode.CAST_ROUND)
    out_int8 = pypto.cast(out_half, pypto.DT_INT8, pypto.CastMode.CAST_TRUNC)

    scale_de_quant = pypto.div(pypto.full(scale_quant.shape, 1.0, pypto.DT_FP32), scale_quant)
    return out_int8, scale_de_quant


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


def rotate_half(input_tensor: pypto.Tensor) -> pypto.Tensor:
    shape = input_tensor.shape
    shape_size = len(shape)

    new_shape = list(shape)
    new_shape[shape_size - 1] //= 2

    offset1 = [0] * shape_size
    offset2 = [0] * shape_size
    offset2[shape_size - 1] = new_shape[shape_size - 1]

    x1 = pypto.view(input_tensor, new_shape, offset1)
    x2 = pypto.view(input_tensor, new_shape, offset2)

    return pypto.concat([x2 * (-1.0), x1 + 0.0], -1)


def rope_v2(
    x: pypto.Tensor, cos: pypto.Tensor, sin: pypto.Tensor, tile_config: RopeTileShapeConfig
) -> pypto.Tensor:
    seq_size = x.shape[0]
    d_r = x.shape[1]
    x_dtype = x.dtype

    pypto.set_vec_tile_shapes(tile_config.two_dim[0], tile_config.two_dim[1])
    cast_x = pypto.cast(x, pypto.DT_FP32)
    cast_cos = pypto.cast(cos, pypto.DT_FP32)
    cast_sin = pypto.cast(sin, pypto.DT_FP32)

    pypto.set_vec_tile_shapes(*tile_config.three_dim)
    x_view = pypto.reshape(cast_x, [seq_size, d_r // 2, 2])
    x_trans = pypto.transpose(x_view, 1, 2)
    x_re_second = pypto.reshape(x_trans, [seq_size, d_r])

    pypto.set_vec_tile_shapes(tile_config.two_dim[0], tile_config.two_dim[1])
    x_embded = x_re_second * cast_cos + rotate_half(x_re_second) * cast_sin

    return pypto.cast(x_embded, x.dtype)


@pypto.frontend.jit(
    pass_options={
        "cube_l1_reuse_setting": {-1: 3, 0: 1, 1: 1},
        "cube_nbuffer_setting": {-1: 6, 0: 1, 1: 4},
    },
)
def mla_prolog_kv_d(
    token_x: pypto.Tensor([pypto.DYNAMIC, pypto.STATIC], pypto.DT_BF16),
    w_dkv_kr: pypto.Tensor([pypto.STATIC, pypto.STATIC], pypto.DT_BF16, format=pypto.TileOpFormat.TILEOP_NZ),
    gamma_ckv: pypto.Tensor([pypto.STATIC], pypto.DT_BF16),
    cos: pypto.Tensor([pypto.DYNAMIC, pypto.STATIC], pypto.DT_BF16),
    sin: pypto.Tensor([pypto.DYNAMIC, pypto.STATIC], pypto.DT_BF16),
    cache_index: pypto.Tensor([pypto.DYNAMIC], pypto.DT_INT64),
    kv_cache: pypto.Tensor([pypto.STATIC, pypto.STATIC, pypto.STATIC, pypto.STATIC], pypto.DT_INT8),
    kr_cache: pypto.Tensor([pypto.STATIC, pypto.STATIC, pypto.STATIC, pypto.STATIC], pypto.DT_BF16),
    k_scale_cache: pypto.Tensor([pypto.STATIC, pypto.STATIC, pypto.STATIC, pypto.STATIC], pypto.DT_FP32),
    kv_cache_out: pypto.Tensor([pypto.STATIC, pypto.STATIC, pypto.STATIC, pypto.STATIC], pypto.DT_INT8),
    kr_cache_out: pypto.Tensor([pypto.STATIC, pypto.STATIC, pypto.STATIC, pypto.STATIC], pypto.DT_BF16),
    k_scale_cache_out: pypto.Tensor([pypto.STATIC, pypto.STATIC, pypto.STATIC, pypto.STATIC], pypto.DT_FP32),
    epsilon_ckv, tile_config, rope_cfg
):
    dtype = token_x.dtype
    h = token_x.shape[1]
    qk_rope_head_dim = sin.shape[1]
    kv_lora_rank = kv_cache.shape[3]

    t = token_x.shape[0]

    k_cache_index_2d = pypto.reshape(cache_index, [t, 1], inplace=True)

    unroll_list = tile_config.unroll_list
    for bs_offset, unroll_length in pypto.loop_unroll(0, t, 1, name="MLA_BS_LOOP", idx_name="bs_offset",
                                                      unroll_list=unroll_list, ):
        tile_bs = unroll_length

        pypto.set_vec_tile_shapes(tile_bs, 128)
        x_view = pypto.view(token_x, [tile_bs, h], [bs_offset, 0])

        # pre_compute_2d, kv branch (is_quant_a False)
        pypto.set_cube_tile_shapes([tile_config.pre_quant_cube_tile[0], tile_config.pre_quant_cube_tile[1]],
                                   [tile_config.pre_quant_cube_tile[2], tile_config.pre_quant_cube_tile[3]],
                                   [tile_config.pre_quant_cube_tile[4], tile_config.pre_quant_cube_tile[5]])
        pypto.set_semantic_label("Matmul_kva")
        kv_tmp = pypto.matmul(x_view, w_dkv_kr, dtype)

        cos_2d_view = pypto.view(cos, [tile_bs, qk_rope_head_dim], [bs_offset, 0])
        sin_2d_view = pypto.view(sin, [tile_bs, qk_rope_head_dim], [bs_offset, 0])

        ########### RoPE #################
        pypto.set_vec_tile_shapes(tile_config.k_vec_tile0, tile_config.k_vec_tile1)
        pypto.set_semantic_label("RotaryPosEmb")
        k_pe_view = pypto.view(kv_tmp, [tile_bs, qk_rope_head_dim], [0, kv_lora_rank])
        k_rope_2d = rope_v2(k_pe_view, cos_2d_view, sin_2d_view, rope_cfg)

        ############### kNope ##############

        compressed_kv = pypto.view(kv_tmp, [tile_bs, kv_lora_rank], [0, 0])
        pypto.set_semantic_label("RmsNorm_compressedkv")
        pypto.set_vec_tile_shapes(tile_config.k_vec_tile0, tile_config.k_vec_tile1)
        k_nope = rms_norm(compressed_kv, gamma_ckv, epsilon_ckv)

        ########### kNope Quant ############
        pypto.set_semantic_label("Quant_knope")
        pypto.set_vec_tile_shapes(32, kv_lora_rank)
        k_nope_split = pypto.reshape(k_nope, [tile_bs, 4, kv_lora_rank // 4])
        pypto.set_vec_tile_shapes(32, 4, kv_lora_rank // 4)
        k_nope_quant_res = k_nope_quant(k_nope_split)
        k_nope_quant_tensor = k_nope_quant_res[0]
        k_nope_scale = k_nope_quant_res[1]

        pypto.set_vec_tile_shapes(32, 4, kv_lora_rank // 4)
        k_nope_2d = pypto.reshape(k_nope_quant_tensor, [tile_bs, kv_lora_rank])
        k_scale_2d = pypto.reshape(k_nope_scale, [tile_bs, 4])

        k_rope_4d = pypto.reshape(k_rope_2d, [tile_bs, 1, 1, qk_rope_head_dim], inplace=True)
        k_nope_4d = pypto.reshape(k_nope_2d, [tile_bs, 1, 1, kv_lora_rank], inplace=True)
        k_scale_4d = pypto.reshape(k_scale_2d, [tile_bs, 1, 1, 4], inplace=True)
        index = pypto.view(k_cache_index_2d, [tile_bs, 1], [bs_offset, 0])
        pypto.set_semantic_label("ScatterUpdate_krCache")
        pypto.set_vec_tile_shapes(32, 1, 1, qk_rope_head_dim)
        kr_cache_out[:] = pypto.scatter_update(kr_cache, -2, index, k_rope_4d)
        pypto.set_semantic_label("ScatterUpdate_kvCache")
        pypto.set_vec_tile_shapes(32, 1, 1, kv_lora_rank)
        kv_cache_out[:] = pypto.scatter_update(kv_cache, -2, index, k_nope_4d)
        pypto.set_semantic_label("ScatterUpdate_kScaleCache")
        pypto.set_vec_tile_shapes(32, 1, 1, 4)
        k_scale_cache_out[:] = pypto.scatter_update(k_scale_cache, -2, index, k_scale_4d)


def decode_tile_config():
    """deepseekv32_mla_prolog_quant.py decode test configuration (tile_bs 8)."""
    tile_config = MlaTileConfig()
    tile_config.tile_bs = 8
    c0 = 16
    m_tile_value = (min(32, tile_config.tile_bs) + c0 - 1) // c0 * c0
    mv_tile_value = min(8, tile_config.tile_bs)
    tile_config.m_tile = m_tile_value
    tile_config.pre_quant_cube_tile = [m_tile_value, m_tile_value, 256, 256, 128, 128]
    tile_config.mv_tile = mv_tile_value
    tile_config.q_vec_tile0 = 1
    tile_config.q_vec_tile1 = 32
    tile_config.k_vec_tile0 = 2
    tile_config.k_vec_tile1 = 512
    tile_config.unroll_list = [8, 4, 2, 1]
    return tile_config


H, KVL, ROPE = 7168, 512, 64
BLOCK_NUM, BLOCK_SIZE = 4, 128
EPS = 1e-5
f32 = np.float32


def make_case(T):
    rng = np.random.default_rng(178 + T)
    x = bf16_round(rng.uniform(-1, 1, (T, H)))
    w = bf16_round(rng.uniform(-1, 1, (H, KVL + ROPE)) * np.sqrt(3.0 / H))
    gamma = bf16_round(rng.uniform(-1, 1, KVL))
    ang = rng.uniform(0, 2 * np.pi, (T, ROPE))
    cos, sin = bf16_round(np.cos(ang)), bf16_round(np.sin(ang))
    idx = rng.permutation(BLOCK_NUM * BLOCK_SIZE)[:T].astype(np.int64)
    kv_cache = rng.integers(-128, 128, (BLOCK_NUM, BLOCK_SIZE, 1, KVL)).astype(np.int8)
    kr_cache = bf16_round(rng.standard_normal((BLOCK_NUM, BLOCK_SIZE, 1, ROPE)))
    ks_cache = rng.uniform(0, 1, (BLOCK_NUM, BLOCK_SIZE, 1, 4)).astype(f32)

    kv = bf16_round(x.astype(np.float64) @ w.astype(np.float64))
    # rope part (rope_v2): de-interleave, x*cos + rotate_half(x)*sin
    kpe = kv[:, KVL:]
    xr = np.concatenate([kpe[:, 0::2], kpe[:, 1::2]], -1)
    rot = np.concatenate([-xr[:, ROPE // 2:], xr[:, :ROPE // 2]], -1)
    k_rope = bf16_round(xr * cos + rot * sin)
    # nope part: rms_norm -> bf16 -> per 128-group quant
    ckv = kv[:, :KVL]
    ms = (ckv * ckv * f32(1.0 / KVL)).sum(-1, keepdims=True, dtype=f32) + f32(EPS)
    k_nope = bf16_round(gamma * (ckv * (f32(1.0) / np.sqrt(ms))))
    g = k_nope.reshape(T, 4, KVL // 4)
    mx = np.abs(g).max(-1, keepdims=True)
    sq = (f32(127.0) / mx).astype(f32)
    q = np.clip(fp16_round(np.rint((g * sq).astype(f32))), -128, 127).reshape(T, KVL)
    sc = (f32(1.0) / sq).reshape(T, 4)

    kv_ref = kv_cache.astype(f32).reshape(-1, KVL).copy()
    kr_ref = kr_cache.reshape(-1, ROPE).copy()
    ks_ref = ks_cache.reshape(-1, 4).copy()
    kv_ref[idx] = q
    kr_ref[idx] = k_rope
    ks_ref[idx] = sc

    ins = [(x, "bf16"), (w, "bf16"), (gamma, "bf16"), (cos, "bf16"), (sin, "bf16"), (idx, "int32"),
           (kv_cache, "int8"), (kr_cache, "bf16"), (ks_cache, "fp32")]
    outs = [(kv_cache.shape, "int8"), (kr_cache.shape, "bf16"), (ks_cache.shape, "fp32")]
    refs = [kv_ref.reshape(kv_cache.shape), kr_ref.reshape(kr_cache.shape), ks_ref.reshape(ks_cache.shape)]
    rope_cfg = RopeTileShapeConfig(two_dim=[128, 128], three_dim=[128, 128, 128], four_dim=[16, 128, 128, 128])
    return ins, outs, refs, ["step1", (1e-4, 0.0078125), (1e-6, 5e-3)], [EPS, decode_tile_config(), rope_cfg]


def call(kernel, ins, outs, extra):
    """in-place caches as in the source: cache input == cache output (pre-filled with the old cache);
    cache_index handed over as int64 (the harness has no int64 dtype)."""
    ins = list(ins)
    if PTO:
        ins[5] = ins[5].astype(np.int64)
        for o, i in zip(outs, ins[6:9]):
            o[...] = i
    else:
        import torch
        ins[5] = ins[5].to(torch.int64)
        for o, i in zip(outs, ins[6:9]):
            o.copy_(i)
    return kernel(*ins[:6], *outs, *outs, *extra)


if __name__ == "__main__":
    run("k178_v32_mla_kv_rmsnorm_kquant", mla_prolog_kv_d, make_case, call=call)
