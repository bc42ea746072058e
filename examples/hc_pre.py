"""DeepSeek-V4 hc_pre, the mhc_pre variant, in Python, both ways: x [t, 4, 4096] bf16
reshaped in place to [t, 16384] and cast to f32, times hc_fn [24, 16384] f32 (b_trans),
divided per row by sqrt(mean(x^2) + 1e-6). The pipeline applies the variant's settings
(tiles, split-K, a host pre-transposed hc_fn kept cacheable).

    python examples/hc_pre.py
"""

from __future__ import annotations

import ml_dtypes
import numpy as np

import pto

UNROLL = [256, 64, 16, 4, 1]


def builder():
    k = pto.Kernel("hc_pre", target="ascend910b1", unroll=UNROLL)
    x = k.arg("x", [None, 4, 4096], "bf16")
    hc_fn = k.arg("hc_fn", [24, 16384], "f32")
    xf = pto.cast(pto.reshape(x, [None, 16384], inplace=True), "f32")
    y = pto.matmul(xf, hc_fn, b_trans=True, label="hc-linear")
    ms = pto.reduce(pto.mul(xf, xf, label="hc-norm"), "mean", label="hc-norm")
    r = pto.sqrt(pto.adds(ms, 1e-6, label="hc-norm"), label="hc-norm")
    k.ret(pto.div(y, r, label="hc-norm"))
    return k.module()


def hc_pre(x, hc_fn, out):
    for idx, p in pto.loop_unroll(0, x.shape[0], 1, unroll_list=UNROLL):
        xt = pto.view(x, [p, 4, 4096], [idx, 0, 0])
        xf = pto.cast(pto.reshape(xt, [p, 16384], inplace=True), "f32")
        pto.set_semantic_label("hc-linear")
        y = pto.matmul(xf, hc_fn, b_trans=True)
        pto.set_semantic_label("hc-norm")
        ms = pto.reduce(xf * xf, "mean")
        r = pto.sqrt(pto.adds(ms, 1e-6))
        pto.assemble(y / r, [idx, 0], out)


def loop_form():
    return pto.trace(
        hc_pre,
        target="ascend910b1",
        x=pto.arg([None, 4, 4096], "bf16"),
        hc_fn=pto.arg([24, 16384], "f32"),
        out=pto.arg([None, 24], "f32"),
    )


def golden(x, hc_fn):
    xf = x.reshape(x.shape[0], 16384).astype(np.float32)
    return (xf @ hc_fn.T) / np.sqrt(np.mean(xf * xf, axis=-1, keepdims=True) + np.float32(1e-6))


def main(tokens=(1, 5, 70)) -> None:
    module = builder()
    assert str(module) == str(loop_form()), "the two forms differ"
    compiled = pto.compile(module)
    for t in tokens:
        rng = np.random.default_rng(t)
        x = rng.standard_normal((t, 4, 4096), dtype=np.float32).astype(ml_dtypes.bfloat16)
        hc_fn = rng.standard_normal((24, 16384), dtype=np.float32)
        r = pto.run(compiled, [x, hc_fn])
        v = pto.check(r.outputs[0], golden(x, hc_fn))
        print(f"t={t}: {r.report.cycles:.0f} cycles, {v.describe('out')}")
        assert v.ok


if __name__ == "__main__":
    main()
