"""SK-03 in C -> V order (DeepSeek-V4 mla_prolog wqa-linear -> q-rmsnorm):
q = matmul(x_tile, wq_a) -> bf16; qr = rms_norm(q) (no gamma) * gamma_cq (fp32, [1, N]) -> bf16.
Token loop_unroll with unroll_list=[128, 64, 32, 16, 1]; dynamic T.
"""

import os
import sys

if os.environ.get("PTO") == "1":
    import pto.pypto as pypto
else:
    import pypto

H = 1024  # hidden (reduction)
Q_LORA = 512  # q_lora_rank (output width)
EPS = 1e-6
T = pypto.DYNAMIC


@pypto.frontend.jit(
    runtime_options={"run_mode": pypto.RunMode.SIM},
    pass_options={"cube_l1_reuse_setting": {-1: 2, 1: 1}, "vec_nbuffer_setting": {0: 2}},
)
def wqa_linear_q_rmsnorm(
    x: pypto.Tensor([T, H], pypto.DT_BF16),
    wq_a: pypto.Tensor([H, Q_LORA], pypto.DT_BF16),
    gamma_cq: pypto.Tensor([Q_LORA], pypto.DT_BF16),
    qr_out: pypto.Tensor([T, Q_LORA], pypto.DT_BF16),
):
    t = x.shape[0]
    wq_a.set_cache_policy(pypto.CachePolicy.NONE_CACHEABLE, True)
    gamma_cq_2d = pypto.reshape(gamma_cq, [1, Q_LORA], inplace=True)
    pypto.set_vec_tile_shapes(1, Q_LORA)
    gamma_cq_2d_fp32 = pypto.cast(gamma_cq_2d, pypto.DT_FP32)

    for t_idx, t_tile in pypto.loop_unroll(
        0, t, 1, name="MLA_BS_LOOP", idx_name="tIdx", unroll_list=[128, 64, 32, 16, 1]
    ):
        x_tile = pypto.view(x, [t_tile, H], [t_idx, 0], valid_shape=[t_tile, H])

        pypto.set_semantic_label("wqa-linear")
        pypto.set_cube_tile_shapes([32, 32], [512, 512], [64, 64])
        q = pypto.matmul(x_tile, wq_a, pypto.DataType.DT_BF16)

        pypto.set_semantic_label("q-rmsnorm with weight")
        pypto.set_vec_tile_shapes(8, Q_LORA)
        q_fp32 = pypto.cast(q, pypto.DT_FP32)
        qr = pypto.rms_norm(q_fp32, epsilon=EPS)
        qr = pypto.mul(qr, gamma_cq_2d_fp32)
        qr = pypto.cast(qr, pypto.DataType.DT_BF16)
        pypto.assemble(qr, [t_idx, 0], qr_out)


def golden(x, wq_a, gamma):
    import numpy as np

    q = (x.astype(np.float32) @ wq_a.astype(np.float32)).astype(x.dtype).astype(np.float32)
    rms = np.sqrt(np.mean(q * q, axis=-1, keepdims=True) + EPS)
    return q / rms * gamma.astype(np.float32)


def main():
    counts = [int(a) for a in sys.argv[1:]] or ([50, 131, 16] if os.environ.get("PTO") == "1" else [50])
    if os.environ.get("PTO") == "1":
        import ml_dtypes
        import numpy as np

        from pto.interp.golden import check

        rng = np.random.default_rng(4)
        wq_a = (rng.standard_normal((H, Q_LORA)) * 0.03).astype(ml_dtypes.bfloat16)
        gamma = rng.uniform(0.5, 1.5, Q_LORA).astype(ml_dtypes.bfloat16)
        ok_all = True
        for t in counts:
            x = rng.standard_normal((t, H)).astype(ml_dtypes.bfloat16)
            out = np.zeros((t, Q_LORA), dtype=ml_dtypes.bfloat16)
            wqa_linear_q_rmsnorm(x, wq_a, gamma, out)
            r = check(out, golden(x, wq_a, gamma))
            print(f"T={t}: ok={r.ok} {r}")
            ok_all &= bool(r.ok)
        print("PASS" if ok_all else "FAIL")
    else:
        import torch

        torch.manual_seed(4)
        wq_a = (torch.randn(H, Q_LORA) * 0.03).to(torch.bfloat16)
        gamma = (torch.rand(Q_LORA) + 0.5).to(torch.bfloat16)
        for t in counts:
            x = torch.randn(t, H).to(torch.bfloat16)
            out = torch.zeros(t, Q_LORA, dtype=torch.bfloat16)
            wqa_linear_q_rmsnorm(x, wq_a, gamma, out)
            print(f"T={t}: SIM run done, out finite={bool(torch.isfinite(out.float()).all())}")
        print("PYPTO-ACCEPTED")


if __name__ == "__main__":
    main()
