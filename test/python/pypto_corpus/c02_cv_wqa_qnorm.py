import os, sys
if os.environ.get("PTO") == "1":
    import pto.pypto as pypto
else:
    import pypto

# mla_prolog_v4 "wqa-linear -> q-rmsnorm" (C -> V): x @ wq_a ([K, N], no transpose),
# then RMSNorm over q_lora_rank with gamma_cq reshaped to [1, R] (not in place).
HIDDEN = 4096
Q_LORA = 1024
EPS = 1e-6
UNROLL = [128, 64, 32, 16, 1]
T = pypto.DYNAMIC


def rms_norm(x, eps):
    # x: fp32 [t, R]
    sq = pypto.mul(x, x)
    mean = pypto.sum(sq, -1, keepdim=True)
    mean = pypto.mul(mean, 1.0 / x.shape[-1])
    mean = pypto.add(mean, eps)
    return pypto.div(x, pypto.sqrt(mean))


@pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.SIM},
                    pass_options={"cube_l1_reuse_setting": {-1: 2, 1: 1}, "vec_nbuffer_setting": {0: 2}})
def mla_wqa(x: pypto.Tensor([T, HIDDEN], pypto.DT_BF16),
            wq_a: pypto.Tensor([HIDDEN, Q_LORA], pypto.DT_BF16),
            gamma_cq: pypto.Tensor([Q_LORA], pypto.DT_BF16),
            qr_out: pypto.Tensor([T, Q_LORA], pypto.DT_BF16)):
    t = x.shape[0]
    pypto.set_vec_tile_shapes(1, Q_LORA)
    gamma_cq_2d = pypto.reshape(gamma_cq, [1, Q_LORA])
    gamma_cq_2d_fp32 = pypto.cast(gamma_cq_2d, pypto.DT_FP32)
    for tIdx, t_tile in pypto.loop_unroll(0, t, 1, name="MLA_BS_LOOP", idx_name="tIdx", unroll_list=UNROLL):
        x_tile = pypto.view(x, [t_tile, HIDDEN], [tIdx, 0], valid_shape=[t_tile, HIDDEN])
        pypto.set_semantic_label("wqa-linear")
        pypto.set_cube_tile_shapes([32, 32], [512, 512], [64, 64])
        q = pypto.matmul(x_tile, wq_a, pypto.DataType.DT_BF16)
        pypto.set_semantic_label("q-rmsnorm with weight")
        pypto.set_vec_tile_shapes(8, Q_LORA)
        qf = pypto.cast(q, pypto.DT_FP32)
        qr = rms_norm(qf, EPS)
        qr = pypto.mul(qr, gamma_cq_2d_fp32)
        qr = pypto.cast(qr, pypto.DataType.DT_BF16)
        pypto.assemble(qr, [tIdx, 0], qr_out)


def golden(x, wq_a, gamma_cq):
    import numpy as np, ml_dtypes
    q = x.astype(np.float32) @ wq_a.astype(np.float32)
    q = q.astype(ml_dtypes.bfloat16).astype(np.float32)          # matmul emits bf16
    r = q / np.sqrt((q * q).mean(-1, keepdims=True) + EPS)
    r = r * gamma_cq.astype(np.float32)[None, :]
    return r.astype(ml_dtypes.bfloat16)


def main():
    counts = [int(a) for a in sys.argv[1:]] or ([1, 45, 200] if os.environ.get("PTO") == "1" else [45])
    if os.environ.get("PTO") == "1":
        import ml_dtypes, numpy as np
        from pto.interp.golden import check
        rng = np.random.default_rng(2)
        wq_a = (rng.standard_normal((HIDDEN, Q_LORA)) / 64).astype(ml_dtypes.bfloat16)
        g = rng.uniform(0.8, 1.2, Q_LORA).astype(ml_dtypes.bfloat16)
        ok = True
        for t in counts:
            x = rng.standard_normal((t, HIDDEN)).astype(ml_dtypes.bfloat16)
            out = np.zeros((t, Q_LORA), ml_dtypes.bfloat16)
            mla_wqa(x, wq_a, g, out)
            r = check(out, golden(x, wq_a, g))
            print(f"t={t}: ok={r.ok} bad={r.bad}/{r.total}")
            ok = ok and r.ok
        print("PASS" if ok else "FAIL")
    else:
        import torch
        for t in counts:
            x = torch.randn(t, HIDDEN, dtype=torch.bfloat16)
            wq_a = (torch.randn(HIDDEN, Q_LORA) / 64).to(torch.bfloat16)
            g = torch.ones(Q_LORA, dtype=torch.bfloat16)
            out = torch.empty(t, Q_LORA, dtype=torch.bfloat16)
            mla_wqa(x, wq_a, g, out)
        print("PYPTO-ACCEPTED")


if __name__ == "__main__":
    main()
