#!/usr/bin/env python3
"""c77 (outside batch corpus9, k84): k84: DeepSeek MLA kv_a projection in **fp32**, C -> V: compressed-kv RMSNorm + raw k_pe.

SK-03 C -> V. x [T, 1536] fp32 @ w_dkv_kr [1536, 576] fp32 ([K, N]) -> fp32 ("Matmul_kva"),
then as in models/deepseek_v32_exp/mla_prolog_quant_impl.py: view compressed_kv [t, 512] at
[0, 0] and k_pe [t, 64] at [0, 512]; the model's rms_norm(input, gamma, eps) helper (gamma
reshaped inside, full(1.0)/sqrt, cast back to the input dtype = fp32) on compressed_kv.
Outputs: kv_norm [T, 512] fp32 and k_pe [T, 1, 64] fp32 (rank 3, reshape inplace).
Dynamic T from pypto.frontend.dynamic("t") inside a kernel factory; the MlaTileConfig
dataclass for tiles; loop_unroll [8, 1]; T in (1, 37, 200).
"""

import os
from dataclasses import dataclass

import numpy as np

if os.environ.get("PTO") == "1":
    import pto.pypto as pypto
else:
    import pypto

H, KV_LORA_RANK, ROPE_DIM = 1536, 512, 64
EPS = 1e-6
TOKENS = (1, 37, 200)


@dataclass
class MlaTileConfig:
    def __init__(self):
        self.m_tile = 16
        self.pre_quant_cube_tile = [16, 16, 128, 512, 128, 128]
        self.unroll_list = [8, 1]
        self.k_vec_tile0 = 8
        self.k_vec_tile1 = 512


def rms_norm(input_tensor, gamma, epsilon: float):
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


def kv_a_kernel(h, kv_lora_rank, rope_dim, epsilon_ckv, tile_config):
    t = pypto.frontend.dynamic("t")

    @pypto.frontend.jit(
        pass_options={"cube_l1_reuse_setting": {-1: 4}},
        runtime_options={"run_mode": pypto.RunMode.SIM, "stitch_function_max_num": 128},
    )
    def kv_a_fp32(
        token_x: pypto.Tensor((t, h), pypto.DT_FP32),
        w_dkv_kr: pypto.Tensor((h, kv_lora_rank + rope_dim), pypto.DT_FP32),
        gamma_ckv: pypto.Tensor((kv_lora_rank,), pypto.DT_FP32),
        kv_norm_out: pypto.Tensor((t, kv_lora_rank), pypto.DT_FP32),
        k_pe_out: pypto.Tensor((t, 1, rope_dim), pypto.DT_FP32),
    ):
        dtype = token_x.dtype
        for bs_offset, unroll_length in pypto.loop_unroll(
            0,
            t,
            1,
            name="MLA_BS_LOOP",
            idx_name="bs_offset",
            unroll_list=tile_config.unroll_list,
        ):
            tile_bs = unroll_length
            x_view = pypto.view(token_x, [tile_bs, h], [bs_offset, 0])

            pypto.set_cube_tile_shapes(
                [tile_config.pre_quant_cube_tile[0], tile_config.pre_quant_cube_tile[1]],
                [tile_config.pre_quant_cube_tile[2], tile_config.pre_quant_cube_tile[3]],
                [tile_config.pre_quant_cube_tile[4], tile_config.pre_quant_cube_tile[5]],
            )
            pypto.set_semantic_label("Matmul_kva")
            kv_tmp = pypto.matmul(x_view, w_dkv_kr, dtype)

            pypto.set_vec_tile_shapes(tile_config.k_vec_tile0, tile_config.k_vec_tile1)
            pypto.set_semantic_label("RmsNorm_compressedkv")
            compressed_kv = pypto.view(kv_tmp, [tile_bs, kv_lora_rank], [0, 0])
            k_nope = rms_norm(compressed_kv, gamma_ckv, epsilon_ckv)
            pypto.assemble(k_nope, [bs_offset, 0], kv_norm_out)

            pypto.set_semantic_label("Assemble_kPe")
            pypto.set_vec_tile_shapes(tile_config.k_vec_tile0, 1, rope_dim)
            k_pe_view = pypto.view(kv_tmp, [tile_bs, rope_dim], [0, kv_lora_rank])
            k_pe_3d = pypto.reshape(k_pe_view, [tile_bs, 1, rope_dim], inplace=True)
            pypto.assemble(k_pe_3d, [bs_offset, 0, 0], k_pe_out)

    return kv_a_fp32


def golden(x, w, gamma):
    kv = (x.astype(np.float64) @ w.astype(np.float64)).astype(np.float32)
    c = kv[:, :KV_LORA_RANK]
    rms = np.sqrt((c * c * np.float32(1.0 / KV_LORA_RANK)).sum(-1, keepdims=True) + np.float32(EPS))
    return gamma * (c / rms), kv[:, KV_LORA_RANK:].reshape(-1, 1, ROPE_DIM)


def main():
    rng = np.random.default_rng(84)
    w = rng.normal(0.0, 0.03, (H, KV_LORA_RANK + ROPE_DIM)).astype(np.float32)
    gamma = rng.uniform(0.5, 1.5, (KV_LORA_RANK,)).astype(np.float32)
    kernel = kv_a_kernel(H, KV_LORA_RANK, ROPE_DIM, EPS, MlaTileConfig())
    all_ok = True
    for T in TOKENS:
        x = rng.normal(0.0, 1.0, (T, H)).astype(np.float32)
        if os.environ.get("PTO") == "1":
            kv_ref, pe_ref = golden(x, w, gamma)
            kv_o = np.zeros((T, KV_LORA_RANK), dtype=np.float32)
            pe_o = np.zeros((T, 1, ROPE_DIM), dtype=np.float32)
            kernel(x, w, gamma, kv_o, pe_o)
            ok = True
            for name, got, ref in (("kv_norm", kv_o, kv_ref), ("k_pe", pe_o, pe_ref)):
                err = np.abs(got - ref)
                tol = 1e-3 + 1e-3 * np.abs(ref)
                good = bool(np.isfinite(got).all() and (err <= tol).all())
                ok &= good
                print(f"  T={T} {name}: {'ok' if good else 'BAD'} max_abs_err={err.max():.4g} bad={(err > tol).sum()}")
            all_ok &= ok
        else:
            import torch

            kv_o = torch.zeros((T, KV_LORA_RANK))
            pe_o = torch.zeros((T, 1, ROPE_DIM))
            kernel(torch.from_numpy(x), torch.from_numpy(w), torch.from_numpy(gamma), kv_o, pe_o)
            print(f"  T={T}: SIM ran")
    if os.environ.get("PTO") == "1":
        print("ALL PASS" if all_ok else "FAIL")
        return
    print("k84 SIM accepted")


if __name__ == "__main__":
    main()
