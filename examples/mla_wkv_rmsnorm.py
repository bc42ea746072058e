"""DeepSeek-V4 mla_prolog_v4 wkv-linear -> rmsnorm (C -> V, N = 512) in Python, both ways:
x [t, 4096] @ wkv [4096, 512] -> bf16, RMSNorm with gamma_ckv [512] -> bf16; pinned
unroll [128,64,32,16,1], cube m=[32,32] k=[256,256] n=[128,128], vector tile (4, 64).

    python examples/mla_wkv_rmsnorm.py
"""

from __future__ import annotations

import ml_dtypes
import numpy as np

import pto

UNROLL = [128, 64, 32, 16, 1]
CUBE = ([32, 32], [256, 256], [128, 128])


def builder():
    k = pto.Kernel("mla_wkv_rmsnorm", target="ascend910b1", unroll=UNROLL)
    x = k.arg("x", [None, 4096], "bf16")
    wkv = k.arg("wkv", [4096, 512], "bf16")
    gamma = k.arg("gamma_ckv", [512], "bf16")
    q = pto.matmul(x, wkv, out_dtype="bf16", label="wkv-linear", cube_tile=pto.cube_tile(*CUBE))
    qr = pto.rms_norm(q, gamma, eps=1e-6, label="kv-rmsnorm", vec_tile=[4, 64])
    k.ret(pto.cast(qr, "bf16", label="kv-rmsnorm", vec_tile=[4, 64]))
    return k.module()


def mla_wkv_rmsnorm(x, wkv, gamma_ckv, out):
    for idx, p in pto.loop_unroll(0, x.shape[0], 1, unroll_list=UNROLL):
        xt = pto.view(x, [p, 4096], [idx, 0])
        pto.set_semantic_label("wkv-linear")
        pto.set_cube_tile_shapes(*CUBE)
        q = pto.matmul(xt, wkv, out_dtype="bf16")
        pto.set_semantic_label("kv-rmsnorm")
        pto.set_vec_tile_shapes(4, 64)
        qr = pto.rms_norm(q, gamma_ckv, eps=1e-6)
        pto.assemble(pto.cast(qr, "bf16"), [idx, 0], out)


def loop_form():
    return pto.trace(
        mla_wkv_rmsnorm,
        target="ascend910b1",
        x=pto.arg([None, 4096], "bf16"),
        wkv=pto.arg([4096, 512], "bf16"),
        gamma_ckv=pto.arg([512], "bf16"),
        out=pto.arg([None, 512], "bf16"),
    )


def golden(x, wkv, gamma):
    q = (x.astype(np.float32) @ wkv.astype(np.float32)).astype(ml_dtypes.bfloat16).astype(np.float32)
    n = q / np.sqrt(np.mean(q * q, axis=-1, keepdims=True) + np.float32(1e-6)) * gamma.astype(np.float32)
    return n.astype(ml_dtypes.bfloat16)


def main(tokens=(1, 16, 33)) -> None:
    module = builder()
    assert str(module) == str(loop_form()), "the two forms differ"
    compiled = pto.compile(module)
    for t in tokens:
        rng = np.random.default_rng(t)
        x = rng.standard_normal((t, 4096), dtype=np.float32).astype(ml_dtypes.bfloat16)
        wkv = (rng.standard_normal((4096, 512), dtype=np.float32) / 64).astype(ml_dtypes.bfloat16)
        gamma = rng.standard_normal(512, dtype=np.float32).astype(ml_dtypes.bfloat16)
        r = pto.run(compiled, [x, wkv, gamma])
        v = pto.check(r.outputs[0], golden(x, wkv, gamma))
        print(f"t={t}: {r.report.cycles:.0f} cycles, {v.describe('kv')}")
        assert v.ok


if __name__ == "__main__":
    main()
