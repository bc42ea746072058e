"""c135 (outside batch corpus23, k208): LayerNorm -> fused GQA QKV projection (+bias) -> split into q and a concatenated kv output.

x [T, 1024] fp32 (fp32 residual stream in), LayerNorm with rank-1 gamma/beta [1024] fp32 -> bf16
qkv = xn @ w_qkv + b_qkv,   w_qkv [1024, 3072] bf16 in [K, N] layout (no b_trans), b_qkv [3072] bf16 rank-1
q  = qkv[:, 0:2048] * (1/sqrt(128))  -> out q  [T, 2048] bf16       (16 query heads x 128)
kv = [qkv[:, 2048:2560] | qkv[:, 2560:3072]] -> out kv [T, 1024] bf16 (4 kv heads x 128 for k, then v),
     written with the multi-source form pypto.assemble([(k, [t, 0]), (v, [t, 512])], kv_out, parallel=True)
Token loop: pypto.loop over ceil(T/32) tiles, Tensor.view with valid_shape tails, out.assemble(...) method.
"""
import math

import numpy as np
from batch_harness import pypto, run, bf16_round

H = 1024
QD = 2048
KVD = 512
TILE = 32
SCALE = 1.0 / math.sqrt(128.0)


def layer_norm(xt, gamma, beta):
    mean = pypto.sum(xt, -1, keepdim=True) * (1.0 / H)
    xc = xt - mean
    var = pypto.sum(xc * xc, -1, keepdim=True) * (1.0 / H)
    return xc * pypto.rsqrt(var + 1e-5) * gamma + beta


@pypto.frontend.jit(pass_options={"vec_nbuffer_setting": {0: 2}, "cube_l1_reuse_setting": {-1: 2}})
def gqa_qkv(
    x: pypto.Tensor([pypto.DYNAMIC, H], pypto.DT_FP32),
    gamma: pypto.Tensor([H], pypto.DT_FP32),
    beta: pypto.Tensor([H], pypto.DT_FP32),
    w_qkv: pypto.Tensor([H, QD + 2 * KVD], pypto.DT_BF16),
    b_qkv: pypto.Tensor([QD + 2 * KVD], pypto.DT_BF16),
    q_out: pypto.Tensor([pypto.DYNAMIC, QD], pypto.DT_BF16),
    kv_out: pypto.Tensor([pypto.DYNAMIC, 2 * KVD], pypto.DT_BF16),
):
    T = x.shape[0]
    w_qkv.set_cache_policy(pypto.CachePolicy.NONE_CACHEABLE, True)
    for tile in pypto.loop((T + TILE - 1) // TILE, name="qkv_tiles", idx_name="tile"):
        t = tile * TILE
        valid = pypto.min(TILE, T - t)
        xt = x.view([TILE, H], [t, 0], valid_shape=[valid, H])

        pypto.set_semantic_label("attn-layernorm")
        pypto.set_vec_tile_shapes(8, H)
        xn = pypto.cast(layer_norm(xt, gamma, beta), pypto.DT_BF16)

        pypto.set_semantic_label("qkv-linear")
        pypto.set_cube_tile_shapes([32, 32], [256, 1024], [128, 256])
        qkv = pypto.matmul(xn, w_qkv, pypto.DT_FP32)

        pypto.set_semantic_label("qkv-split")
        pypto.set_vec_tile_shapes(8, 512)
        qkv = qkv + pypto.cast(b_qkv, pypto.DT_FP32)
        q = pypto.cast(qkv[:, 0:QD] * SCALE, pypto.DT_BF16)
        k = pypto.cast(qkv[:, QD:QD + KVD], pypto.DT_BF16)
        v = pypto.cast(qkv[:, QD + KVD:QD + 2 * KVD], pypto.DT_BF16)
        q_out.assemble(q, [t, 0])
        pypto.assemble([(k, [t, 0]), (v, [t, KVD])], kv_out, parallel=True)


def make_case(T):
    rng = np.random.default_rng(208 + T)
    x = (rng.standard_normal((T, H)) * 2.0 + 0.3).astype(np.float32)
    g = (1.0 + 0.1 * rng.standard_normal(H)).astype(np.float32)
    be = (0.05 * rng.standard_normal(H)).astype(np.float32)
    w = bf16_round((rng.standard_normal((H, QD + 2 * KVD)) / np.sqrt(H)).astype(np.float32))
    b = bf16_round((0.1 * rng.standard_normal(QD + 2 * KVD)).astype(np.float32))

    mean = x.sum(-1, keepdims=True, dtype=np.float32) * np.float32(1.0 / H)
    xc = (x - mean).astype(np.float32)
    var = (xc * xc).sum(-1, keepdims=True, dtype=np.float32) * np.float32(1.0 / H)
    xn = bf16_round(xc * (np.float32(1.0) / np.sqrt(var + np.float32(1e-5))) * g + be)
    qkv = (xn.astype(np.float64) @ w.astype(np.float64)).astype(np.float32) + b
    q = bf16_round(qkv[:, :QD] * np.float32(SCALE))
    kv = bf16_round(qkv[:, QD:])
    tol = (1e-4, 0.0078125)
    return ([(x, "fp32"), (g, "fp32"), (be, "fp32"), (w, "bf16"), (b, "bf16")],
            [((T, QD), "bf16"), ((T, 2 * KVD), "bf16")], [q, kv], [tol, tol], [])


if __name__ == "__main__":
    run("k208_layernorm_gqa_qkv_split", gqa_qkv, make_case)
