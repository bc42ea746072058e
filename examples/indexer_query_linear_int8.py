"""DeepSeek-V4 lightning_indexer_prolog_quant_v4 Query-Linear (AT-11: V -> Quant -> C ->
Dequant) in Python, both ways: qr [t, 1024] bf16 normalised and quantised per token to
int8, times idx_wq_b [8192, 1024] int8 (b_trans, NONE_CACHEABLE) -> int32, dequantised
by the per-token scale and the weight scale [8192, 1] -> bf16; the reference kernel's
pass options and cube tiles.

    python examples/indexer_query_linear_int8.py
"""

from __future__ import annotations

import ml_dtypes
import numpy as np

import pto

UNROLL = [128, 64, 32, 16, 8, 1]
OPTIONS = {"cube_l1_reuse_setting": {-1: 2, 1: 1}, "vec_nbuffer_setting": {0: 2}}
CUBE = ([128, 128], [256, 1024], [256, 256])


def builder():
    k = pto.Kernel("query_linear_int8", target="ascend910b1", unroll=UNROLL, options=OPTIONS)
    qr = k.arg("qr", [None, 1024], "bf16")
    gamma = k.arg("gamma", [1024], "bf16")
    w = k.arg("w", [8192, 1024], "i8", cache="none_cacheable")
    w_scale = k.arg("w_scale", [8192, 1], "f32")
    n = pto.rms_norm(qr, gamma, eps=1e-6, label="q-rmsnorm")
    q, s = pto.quant(n, label="Query-Quant")
    acc = pto.matmul(q, w, b_trans=True, label="Query-Linear", cube_tile=pto.cube_tile(*CUBE))
    d = pto.dequant(acc, s, w_scale, label="Query-Dequant")
    k.ret(pto.cast(d, "bf16", label="Query-Dequant"))
    return k.module()


def query_linear_int8(qr, gamma, w, w_scale, out):
    pto.set_pass_options(**OPTIONS)
    pto.set_cache_policy(w, "none_cacheable")
    for idx, p in pto.loop_unroll(0, qr.shape[0], 1, unroll_list=UNROLL):
        qt = pto.view(qr, [p, 1024], [idx, 0])
        pto.set_semantic_label("q-rmsnorm")
        n = pto.rms_norm(qt, gamma, eps=1e-6)
        pto.set_semantic_label("Query-Quant")
        q, s = pto.quant(n)
        pto.set_semantic_label("Query-Linear")
        pto.set_cube_tile_shapes(*CUBE)
        acc = pto.matmul(q, w, b_trans=True)
        pto.set_semantic_label("Query-Dequant")
        d = pto.dequant(acc, s, w_scale)
        pto.assemble(pto.cast(d, "bf16"), [idx, 0], out)


def loop_form():
    return pto.trace(
        query_linear_int8,
        target="ascend910b1",
        qr=pto.arg([None, 1024], "bf16"),
        gamma=pto.arg([1024], "bf16"),
        w=pto.arg([8192, 1024], "i8"),
        w_scale=pto.arg([8192, 1], "f32"),
        out=pto.arg([None, 8192], "bf16"),
    )


def golden(qr, gamma, w, w_scale):
    # SK03.md's golden, in f32: x / sqrt(mean(x^2) + eps) * gamma.
    x = qr.astype(np.float32)
    n = x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + np.float32(1e-6)) * gamma.astype(np.float32)
    amax = np.max(np.abs(n), axis=-1, keepdims=True)
    q = np.clip(np.trunc(np.rint(n * np.float32(127) / amax)), -128, 127)  # SK03.md's quant golden
    acc = q.astype(np.int64) @ w.astype(np.int64).T
    return (acc.astype(np.float32) * (amax / np.float32(127)) * w_scale.reshape(1, -1)).astype(ml_dtypes.bfloat16)


def main(tokens=(1, 9, 40)) -> None:
    module = builder()
    assert str(module) == str(loop_form()), "the two forms differ"
    compiled = pto.compile(module)
    for t in tokens:
        rng = np.random.default_rng(t)
        qr = rng.standard_normal((t, 1024), dtype=np.float32).astype(ml_dtypes.bfloat16)
        gamma = rng.standard_normal(1024, dtype=np.float32).astype(ml_dtypes.bfloat16)
        w = rng.integers(-128, 128, (8192, 1024)).astype(np.int8)
        w_scale = (rng.random((8192, 1), dtype=np.float32) / 1000).astype(np.float32)
        r = pto.run(compiled, [qr, gamma, w, w_scale])
        v = pto.check(r.outputs[0], golden(qr, gamma, w, w_scale))
        print(f"t={t}: {r.report.cycles:.0f} cycles, {v.describe('out')}")
        assert v.ok


if __name__ == "__main__":
    main()
