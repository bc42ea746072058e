"""SK-03 standard form (V -> C) in Python, both ways: RMSNorm -> bf16 -> MatMul (b_trans)
-> bf16, x [t, 4096], gamma [4096], weight [1024, 4096] NONE_CACHEABLE.

    python examples/sk03_standard.py

builds the kernel with the builder and with the PyPTO-style loop form (the same IR),
compiles it, runs it at a few token counts and checks it against a numpy golden.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np

import pto

UNROLL = [128, 64, 32, 16, 8, 1]


def builder():
    k = pto.Kernel("linear_projection", target="ascend910b1", unroll=UNROLL)
    x = k.arg("x", [None, 4096], "bf16")
    gamma = k.arg("gamma", [4096], "bf16")
    w = k.arg("w", [1024, 4096], "bf16", cache="none_cacheable")
    n = pto.rms_norm(x, gamma, eps=1e-6, label="rmsnorm")
    nb = pto.cast(n, "bf16", label="rmsnorm")
    tiles = pto.cube_tile(m=[128, 128], k=[128, 512], n=[128, 128])
    y = pto.matmul(nb, w, b_trans=True, label="linear", cube_tile=tiles)
    o = pto.cast(y, "bf16", label="linear")
    k.ret(o)
    return k.module()


def linear_projection(x, gamma, w, out):
    pto.set_cache_policy(w, "none_cacheable")
    for idx, p in pto.loop_unroll(0, x.shape[0], 1, unroll_list=UNROLL):
        xt = pto.view(x, [p, 4096], [idx, 0])
        pto.set_semantic_label("rmsnorm")
        n = pto.rms_norm(xt, gamma, eps=1e-6)
        nb = pto.cast(n, "bf16")
        pto.set_semantic_label("linear")
        pto.set_cube_tile_shapes([128, 128], [128, 512], [128, 128])
        y = pto.matmul(nb, pto.view(w, [1024, 4096], [0, 0]), b_trans=True)
        o = pto.cast(y, "bf16")
        pto.assemble(o, [idx, 0], out)


def loop_form():
    return pto.trace(
        linear_projection,
        target="ascend910b1",
        x=pto.arg([None, 4096], "bf16"),
        gamma=pto.arg([4096], "bf16"),
        w=pto.arg([1024, 4096], "bf16"),
        out=pto.arg([None, 1024], "bf16"),
    )


def golden(x, gamma, w):
    xf = x.astype(np.float32)
    n = xf / np.sqrt(np.mean(xf * xf, axis=-1, keepdims=True) + np.float32(1e-6)) * gamma.astype(np.float32)
    nb = n.astype(ml_dtypes.bfloat16).astype(np.float32)
    return (nb @ w.astype(np.float32).T).astype(ml_dtypes.bfloat16)


def main(tokens=(1, 17, 130)) -> None:
    module = builder()
    assert str(module) == str(loop_form()), "the two forms differ"
    compiled = pto.compile(module)
    for t in tokens:
        rng = np.random.default_rng(t)
        x = rng.standard_normal((t, 4096), dtype=np.float32).astype(ml_dtypes.bfloat16)
        gamma = rng.standard_normal(4096, dtype=np.float32).astype(ml_dtypes.bfloat16)
        w = (rng.standard_normal((1024, 4096), dtype=np.float32) / 64).astype(ml_dtypes.bfloat16)
        r = pto.run(compiled, [x, gamma, w])
        v = pto.check(r.outputs[0], golden(x, gamma, w))
        print(f"t={t}: {r.report.cycles:.0f} cycles, {v.describe('out')}")
        assert v.ok


if __name__ == "__main__":
    main()
