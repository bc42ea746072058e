"""c104 (outside batch corpus18, k154) (copied): DeepSeek-V4 mla_prolog_v4, models/deepseek_v4/mla_prolog_v4_impl.py.

Verbatim: `rms_norm`, `rotate_half`, `rope_2d`, `MlaPrologV4Attrs`/`MlaPrologV4Configs`, the loop prologue and the
"wkv-linear" segment of `mla_prolog_v4_compute` (lines 367-388), and `mla_prolog_v4`'s jit options and annotations.
Dropped: the wqa/wqb matmuls and their outputs (q_out, qr_out), so wq_a/wq_b/gamma_cq are not inputs.
Shapes from test_mla_prolog_v4.py test_t16_pa_nd_bf16: h 4096, head_dim 512, rope 64, uniform data; configs from
mla_prolog_v4_in. SK-03 C->V: bf16 x @ wkv [4096, 512] ([K, N]) -> bf16 -> RMSNorm (full(1)/sqrt) * gamma -> bf16
-> nope/rope views -> rope_2d (reshape [t,32,2], transpose, rotate_half, transpose back) -> concat -> assemble.
"""
from dataclasses import dataclass
from typing import List

import numpy as np

from batch_harness import PTO, bf16_round, pypto, run


@dataclass
class MlaPrologV4Attrs:
    eps: float
    layout_query: str
    layout_key: str


@dataclass
class MlaPrologV4Configs:
    unroll_list: List[int]
    cube_l1_reuse_setting: dict[int, int]
    mg_copyin_upper_bound: int
    pg_upper_bound: int
    block_size: int
    t_sub_tile: int
    chunk_size: int


def rms_norm(input_tensor: pypto.Tensor, epsilon: float) -> pypto.Tensor:
    input_fp32 = pypto.cast(input_tensor, pypto.DT_FP32)
    dim = len(input_tensor.shape)
    y = pypto.mul(input_fp32, input_fp32)
    y = pypto.mul(y, 1.0 / input_tensor.shape[dim - 1])
    y = pypto.sum(y, -1, keepdim=True)
    y = pypto.add(y, epsilon)
    y = pypto.sqrt(y)
    ones_vector = pypto.full(y.shape, 1.0, pypto.DT_FP32)
    y = pypto.div(ones_vector, y)
    y = pypto.mul(input_fp32, y)
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


def rope_2d(x: pypto.Tensor, cos: pypto.Tensor, sin: pypto.Tensor) -> pypto.Tensor:
    assert len(x.shape) == 2 and len(cos.shape) == 2 and len(sin.shape) == 2
    input_dtype = x.dtype
    pypto.set_vec_tile_shapes(1, 64, 128)
    y = pypto.clone(x)
    y_cast = pypto.cast(y, pypto.DT_FP32)
    x_view = pypto.reshape(x, [x.shape[0], x.shape[1] // 2, 2])
    x_trans = pypto.transpose(x_view, 1, 2)
    x_re_second = pypto.reshape(x_trans, x.shape)
    x_t = rotate_half(x_re_second)
    x_new = pypto.reshape(x_t, [x.shape[0], 2, x.shape[1] // 2])
    x_new_trans = pypto.transpose(x_new, 1, 2)
    x_new_r = pypto.reshape(x_new_trans, x.shape)
    x_new_cast = pypto.cast(x_new_r, pypto.DT_FP32)

    pypto.set_vec_tile_shapes(1, 64)
    cast_cos = pypto.cast(cos, pypto.DT_FP32)
    cast_sin = pypto.cast(sin, pypto.DT_FP32)

    pypto.set_vec_tile_shapes(1, 64, 64)
    x_embed = y_cast * cast_cos + x_new_cast * cast_sin
    return pypto.cast(x_embed, input_dtype)


def mla_prolog_v4_compute(x, wkv, rmsnorm_gamma_ckv, cos, sin, kv_out, attrs, configs):
    t = x.shape[0]
    h = x.shape[1]
    head_dim = rmsnorm_gamma_ckv.shape[0]
    rope_dim = cos.shape[1]
    gamma_ckv_2d = pypto.reshape(rmsnorm_gamma_ckv, [1, rmsnorm_gamma_ckv.shape[0]], inplace=True)
    pypto.set_vec_tile_shapes(4, head_dim)
    gamma_ckv_2d_fp32 = pypto.cast(gamma_ckv_2d, pypto.DataType.DT_FP32)

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
        x_tile = pypto.view(x, [t_tile, h], [t_idx, 0], valid_shape=[t_tile, h])
        pypto.set_vec_tile_shapes(4, 64)
        cos_2d = pypto.view(cos, [t_tile, rope_dim], [t_idx, 0], valid_shape=[t_tile, rope_dim])
        sin_2d = pypto.view(sin, [t_tile, rope_dim], [t_idx, 0], valid_shape=[t_tile, rope_dim])

        pypto.set_semantic_label("wkv-linear")
        pypto.set_cube_tile_shapes([32, 32], [256, 256], [128, 128])
        kv = pypto.matmul(x_tile, wkv, pypto.DataType.DT_BF16)
        pypto.set_vec_tile_shapes(4, 64)
        kv_norm = rms_norm(kv, attrs.eps)
        kv_norm = pypto.mul(kv_norm, gamma_ckv_2d_fp32)
        kv_norm = pypto.cast(kv_norm, pypto.DataType.DT_BF16)

        kv_norm_nope = pypto.view(
            kv_norm, [t_tile, head_dim - rope_dim], [0, 0], valid_shape=[t_tile, head_dim - rope_dim]
        )
        kv_norm_rope = pypto.view(kv_norm, [t_tile, rope_dim], [0, head_dim - rope_dim], valid_shape=[t_tile, rope_dim])
        kv_norm_rope = rope_2d(kv_norm_rope, cos_2d, sin_2d)
        kv_norm = pypto.concat([kv_norm_nope, kv_norm_rope], -1)
        pypto.assemble(kv_norm, [t_idx, 0], kv_out)


_RT = {"stitch_function_max_num": 128}  # "max_workspace_kb": 131072 removed: SIM map::at
if not PTO:
    _RT["run_mode"] = pypto.RunMode.SIM


@pypto.frontend.jit(
    runtime_options=_RT,
)
def mla_prolog_v4(
    x: pypto.Tensor([pypto.DYNAMIC, pypto.STATIC], pypto.DT_BF16),
    wkv: pypto.Tensor([pypto.STATIC, pypto.STATIC], pypto.DT_BF16),
    rmsnorm_gamma_ckv: pypto.Tensor([pypto.STATIC], pypto.DT_BF16),
    cos: pypto.Tensor([pypto.DYNAMIC, pypto.STATIC], pypto.DT_BF16),
    sin: pypto.Tensor([pypto.DYNAMIC, pypto.STATIC], pypto.DT_BF16),
    kv_out: pypto.Tensor([pypto.DYNAMIC, pypto.STATIC], pypto.DT_BF16),
    attrs,
    configs,
):
    pypto.experimental.set_operation_options(combine_axis=True)
    mla_prolog_v4_compute(x, wkv, rmsnorm_gamma_ckv, cos, sin, kv_out, attrs, configs)


H, HD, RD = 4096, 512, 64
ATTRS = MlaPrologV4Attrs(eps=1e-6, layout_query="TND", layout_key="PA_BSND")
CONFIGS = MlaPrologV4Configs(
    unroll_list=[128, 64, 32, 16, 1],
    cube_l1_reuse_setting={2: 4},
    mg_copyin_upper_bound=2 * 1024 * 1024,
    pg_upper_bound=8192,
    block_size=128,
    t_sub_tile=1,
    chunk_size=2,
)


def make_case(T):
    rng = np.random.default_rng(154 + T)
    u = lambda lo, hi, *s: bf16_round(rng.uniform(lo, hi, s))
    x, w, g = u(-1, 1, T, H), u(-0.1, 0.1, H, HD), u(-1, 1, HD)
    cos, sin = u(-1, 1, T, RD), u(-1, 1, T, RD)
    kv = bf16_round(x.astype(np.float64) @ w.astype(np.float64))
    k64 = kv.astype(np.float64)
    ms = (k64 * k64 * (1.0 / HD)).sum(-1, keepdims=True) + 1e-6
    kn = bf16_round(k64 * (1.0 / np.sqrt(ms)) * g.astype(np.float64))
    rope = kn[:, HD - RD:].astype(np.float64)
    xn = np.empty_like(rope)
    xn[:, 0::2] = -rope[:, 1::2]
    xn[:, 1::2] = rope[:, 0::2]
    emb = bf16_round(rope * cos + xn * sin)
    ref = np.concatenate([kn[:, :HD - RD], emb], -1)
    ins = [(x, "bf16"), (w, "bf16"), (g, "bf16"), (cos, "bf16"), (sin, "bf16")]
    return ins, [((T, HD), "bf16")], [ref], [(2e-2, 2e-2)], [ATTRS, CONFIGS]


if __name__ == "__main__":
    run("c104", mla_prolog_v4, make_case)
