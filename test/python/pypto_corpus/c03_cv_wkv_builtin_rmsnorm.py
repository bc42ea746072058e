import os, sys
if os.environ.get("PTO") == "1":
    import pto.pypto as pypto
else:
    import pypto

# mla_prolog_v4 "wkv-linear -> kv rmsnorm": C -> V with the library pypto.rms_norm and a rank-1
# bf16 gamma handed straight to it. Subscript-style annotations with pypto.DYN.
D_MODEL = 4096
KV_LORA = 512
EPS = 1e-6


@pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.SIM})
def wkv_linear(x: pypto.Tensor[[pypto.DYN, D_MODEL], pypto.DT_BF16],
               wkv: pypto.Tensor[[D_MODEL, KV_LORA], pypto.DT_BF16],
               gamma_ckv: pypto.Tensor[[KV_LORA], pypto.DT_BF16],
               kv: pypto.Tensor[[pypto.DYN, KV_LORA], pypto.DT_BF16]):
    n_tok = x.shape[0]
    for t0, tt in pypto.loop_unroll(0, n_tok, 1, name="KV_LOOP", idx_name="t0", unroll_list=[128, 64, 32, 16, 1]):
        xt = pypto.view(x, [tt, D_MODEL], [t0, 0], valid_shape=[tt, D_MODEL])
        pypto.set_semantic_label("wkv-linear")
        pypto.set_cube_tile_shapes([32, 32], [256, 256], [128, 128])
        c = pypto.matmul(xt, wkv, pypto.DT_BF16)
        pypto.set_semantic_label("kv-rmsnorm")
        pypto.set_vec_tile_shapes(4, 64)
        ckv = pypto.rms_norm(c, gamma_ckv, EPS)
        pypto.assemble(ckv, [t0, 0], kv)


def golden(x, wkv, g):
    import numpy as np, ml_dtypes
    bf = ml_dtypes.bfloat16
    c = (x.astype(np.float32) @ wkv.astype(np.float32)).astype(bf).astype(np.float32)
    rms = np.sqrt(np.mean(np.square(c), axis=1, keepdims=True) + EPS)
    return (c / rms * g.astype(np.float32)).astype(bf)


def main():
    counts = [int(a) for a in sys.argv[1:]] or ([1, 45, 200] if os.environ.get("PTO") == "1" else [45])
    if os.environ.get("PTO") == "1":
        import ml_dtypes, numpy as np
        from pto.interp.golden import check
        bf = ml_dtypes.bfloat16
        rng = np.random.default_rng(3)
        wkv = (rng.standard_normal((D_MODEL, KV_LORA)) * 0.02).astype(bf)
        g = rng.uniform(0.5, 2.0, KV_LORA).astype(bf)
        good = True
        for n in counts:
            x = rng.uniform(-2, 2, (n, D_MODEL)).astype(bf)
            kv = np.zeros((n, KV_LORA), bf)
            wkv_linear(x, wkv, g, kv)
            r = check(kv, golden(x, wkv, g))
            print(n, "ok" if r.ok else "MISMATCH", r.bad, "/", r.total)
            good &= r.ok
        print("PASS" if good else "FAIL")
    else:
        import torch
        for n in counts:
            x = torch.rand(n, D_MODEL).mul(4).sub(2).bfloat16()
            wkv = torch.randn(D_MODEL, KV_LORA).mul(0.02).bfloat16()
            g = torch.rand(KV_LORA).add(0.5).bfloat16()
            kv = torch.zeros(n, KV_LORA).bfloat16()
            wkv_linear(x, wkv, g, kv)
        print("PYPTO-ACCEPTED")


if __name__ == "__main__":
    main()
