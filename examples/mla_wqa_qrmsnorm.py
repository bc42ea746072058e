"""DeepSeek-V4 mla_prolog_v4 wqa-linear -> q-rmsnorm (C -> V) in Python, both ways:
x [t, 4096] @ wq_a [4096, 1024] -> bf16, RMSNorm with gamma_cq [1024] -> bf16; pinned
unroll [128,64,32,16,1], cube m=[32,32] k=[512,512] n=[64,64], vector tile (8, 1024).

    python examples/mla_wqa_qrmsnorm.py
"""

from __future__ import annotations

import ml_dtypes
import numpy as np

import pto

UNROLL = [128, 64, 32, 16, 1]
CUBE = ([32, 32], [512, 512], [64, 64])


def builder():
    k = pto.Kernel("mla_wqa_qrmsnorm", target="ascend910b1", unroll=UNROLL)
    x = k.arg("x", [None, 4096], "bf16")
    wq_a = k.arg("wq_a", [4096, 1024], "bf16")
    gamma = k.arg("gamma_cq", [1024], "bf16")
    q = pto.matmul(x, wq_a, out_dtype="bf16", label="wqa-linear", cube_tile=pto.cube_tile(*CUBE))
    qr = pto.rms_norm(q, gamma, eps=1e-6, label="q-rmsnorm", vec_tile=[8, 1024])
    k.ret(pto.cast(qr, "bf16", label="q-rmsnorm", vec_tile=[8, 1024]))
    return k.module()


def mla_wqa_qrmsnorm(x, wq_a, gamma_cq, out):
    for idx, p in pto.loop_unroll(0, x.shape[0], 1, unroll_list=UNROLL):
        xt = pto.view(x, [p, 4096], [idx, 0])
        pto.set_semantic_label("wqa-linear")
        pto.set_cube_tile_shapes(*CUBE)
        q = pto.matmul(xt, wq_a, out_dtype="bf16")
        pto.set_semantic_label("q-rmsnorm")
        pto.set_vec_tile_shapes(8, 1024)
        qr = pto.rms_norm(q, gamma_cq, eps=1e-6)
        pto.assemble(pto.cast(qr, "bf16"), [idx, 0], out)


def loop_form():
    return pto.trace(
        mla_wqa_qrmsnorm,
        target="ascend910b1",
        x=pto.arg([None, 4096], "bf16"),
        wq_a=pto.arg([4096, 1024], "bf16"),
        gamma_cq=pto.arg([1024], "bf16"),
        out=pto.arg([None, 1024], "bf16"),
    )


def golden(x, wq_a, gamma):
    q = (x.astype(np.float32) @ wq_a.astype(np.float32)).astype(ml_dtypes.bfloat16).astype(np.float32)
    n = q / np.sqrt(np.mean(q * q, axis=-1, keepdims=True) + np.float32(1e-6)) * gamma.astype(np.float32)
    return n.astype(ml_dtypes.bfloat16)


def main(tokens=(1, 16, 33)) -> None:
    module = builder()
    assert str(module) == str(loop_form()), "the two forms differ"
    compiled = pto.compile(module)
    for t in tokens:
        rng = np.random.default_rng(t)
        x = rng.standard_normal((t, 4096), dtype=np.float32).astype(ml_dtypes.bfloat16)
        wq_a = (rng.standard_normal((4096, 1024), dtype=np.float32) / 64).astype(ml_dtypes.bfloat16)
        gamma = rng.standard_normal(1024, dtype=np.float32).astype(ml_dtypes.bfloat16)
        r = pto.run(compiled, [x, wq_a, gamma])
        v = pto.check(r.outputs[0], golden(x, wq_a, gamma))
        print(f"t={t}: {r.report.cycles:.0f} cycles, {v.describe('qr')}")
        assert v.ok


if __name__ == "__main__":
    main()
