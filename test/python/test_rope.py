"""The RoPE post-processing tail of SK-03 (mla_prolog_v4's wkv-linear -> kv-rmsnorm ->
RoPE on k_pe): the matmul's [t, 576] tile split by columns (`pto.slice`), the halves of
k_pe rotated (`concat(-x2, x1)`), the result put back together (`pto.concat`). Built with
the Python API, lowered pto -> tile -> npu and run at several token counts and unroll
lists against the pto level and against an independent numpy golden."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

import pto
from pto.interp.golden import check

H, KV, ROPE, EPS = 256, 512, 64, 1e-6
HALF = ROPE // 2


def rope_kernel(unroll=None, vec_tile=None) -> object:
    k = pto.Kernel("mla_wkv_rope", unroll=unroll)
    x = k.arg("x", [None, H], "bf16")
    w = k.arg("wkv", [KV + ROPE, H], "bf16")
    gamma = k.arg("gamma_ckv", [KV], "bf16")
    cos = k.arg("cos", [None, ROPE], "bf16")
    sin = k.arg("sin", [None, ROPE], "bf16")
    kv = pto.cast(pto.matmul(x, w, b_trans=True, label="wkv-linear"), "bf16")
    kv_c = pto.slice(kv, 0, KV, label="kv-rmsnorm", vec_tile=vec_tile)
    kv_n = pto.cast(pto.rms_norm(kv_c, gamma, EPS), "bf16")
    k_pe = pto.cast(pto.slice(kv, KV, ROPE, label="rope"), "f32")
    x1, x2 = pto.slice(k_pe, 0, HALF), pto.slice(k_pe, HALF, HALF)
    rot = pto.concat([-x2, x1])
    k_rope = pto.cast(k_pe * pto.cast(cos, "f32") + rot * pto.cast(sin, "f32"), "bf16")
    k.ret(pto.concat([kv_n, k_rope]))
    return k.module()


def numpy_golden(x, w, gamma, cos, sin) -> np.ndarray:
    f32 = np.float32
    kv = (x.astype(f32) @ w.astype(f32).T).astype(ml_dtypes.bfloat16).astype(f32)
    c, pe = kv[:, :KV], kv[:, KV:]
    n = c / np.sqrt(np.mean(c * c, axis=-1, keepdims=True) + f32(EPS)) * gamma.astype(f32)
    rot = np.concatenate([-pe[:, HALF:], pe[:, :HALF]], axis=-1)
    r = pe * cos.astype(f32) + rot * sin.astype(f32)
    return np.concatenate([n.astype(ml_dtypes.bfloat16), r.astype(ml_dtypes.bfloat16)], axis=-1)


def inputs(t: int, seed: int = 0) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    bf = ml_dtypes.bfloat16
    x = rng.standard_normal((t, H), dtype=np.float32).astype(bf)
    w = (rng.standard_normal((KV + ROPE, H), dtype=np.float32) / 16).astype(bf)
    gamma = rng.standard_normal(KV, dtype=np.float32).astype(bf)
    angle = rng.uniform(0, 2 * np.pi, (t, HALF)).astype(np.float32)
    angle = np.concatenate([angle, angle], axis=-1)
    return [x, w, gamma, np.cos(angle).astype(bf), np.sin(angle).astype(bf)]


_compiled: dict = {}


def compiled(unroll, vec_tile=None):
    key = (tuple(unroll) if unroll else None, tuple(vec_tile) if vec_tile else None)
    if key not in _compiled:
        _compiled[key] = pto.compile(rope_kernel(unroll, vec_tile))
    return _compiled[key]


@pytest.mark.parametrize("unroll", [None, [4, 3, 1], [16]])
@pytest.mark.parametrize("tokens", [1, 5, 17, 40])
def test_rope_tail_runs_against_the_pto_level_and_numpy(unroll, tokens) -> None:
    c = compiled(unroll)
    assert c.warnings == [] if hasattr(c, "warnings") else True
    xs = inputs(tokens, tokens)
    r = pto.run(c, xs, golden=True)
    assert r.ok, [v.describe("out") for v in r.golden]
    v = check(r.outputs[0], numpy_golden(*xs))
    assert v.ok, v.describe("out")
    # The pto level itself is the numpy golden, bit for bit.
    pto_out = pto.run(c, xs, level="pto").outputs[0]
    assert np.array_equal(pto_out.view(np.uint16), numpy_golden(*xs).view(np.uint16))


@pytest.mark.parametrize("tokens", [3, 33])
def test_rope_tail_random_inputs_at_every_level(tokens) -> None:
    c = compiled(None)
    for level in ("tile", "npu"):
        assert pto.run(c, tokens=tokens, seed=tokens, level=level, golden=True).ok


def test_rope_tail_lowers_to_views_and_vcopy() -> None:
    c = compiled([8])
    tile_text, npu_text = c.text("tile"), c.text("npu")
    assert "tile.slice" in tile_text and "tile.concat" in tile_text
    # kv_c and k_pe, slices of the matmul's result, are views of its columns in GM, each
    # loaded on its own; per tile copy, vcopies for the slices x1, x2 of k_pe and two for
    # each concat (rot and the result).
    assert "npu.view %ws at [0, 0] : !npu.buf<?x576xbf16, gm> -> !npu.buf<?x512xbf16, gm>" in npu_text
    assert "npu.view %ws at [0, 512] : !npu.buf<?x576xbf16, gm> -> !npu.buf<?x64xbf16, gm>" in npu_text
    start = npu_text.index('npu.tasks "kv-rmsnorm.8"')
    group = npu_text[start : npu_text.index("npu.tasks", start + 1)]
    assert group.count("npu.vcopy") % 6 == 0 and group.count("npu.vcopy") > 0, group


def test_a_narrow_vector_tile_falls_back_to_whole_rows() -> None:
    # Column tiling does not handle slices: the phase runs whole rows, with a warning.
    c = compiled(None, [4, 64])
    assert any("a column slice of a value computed in the phase is not cut" in w for w in c.warnings), c.warnings
    assert pto.run(c, tokens=9, golden=True).ok


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda t: pto.slice(t, 500, 64), "slice columns [500, 564) are outside the input's 512 columns"),
        (lambda t: pto.slice(t, -1, 64), "slice offset must be an integer in [0, 2^63)"),
        (lambda t: pto.slice(t, 0, 0), "slice width must be an integer in [1, 2^63)"),
        (lambda t: pto.slice("t", 0, 1), "slice input must be a Tensor"),
        (lambda t: pto.concat([t]), "concat takes a list of at least 2 tensors"),
        (lambda t: pto.concat(t), "concat takes a list of at least 2 tensors"),
        (lambda t: pto.concat([t, pto.cast(t, "f32")]), "concat input 1 is f32, input 0 is bf16"),
        (lambda t: pto.concat([t, 3]), "concat input 1 must be a Tensor"),
    ],
)
def test_builder_checks_slice_and_concat_arguments(call, message) -> None:
    k = pto.Kernel("k")
    t = k.arg("x", [None, KV], "bf16")
    with pytest.raises(pto.BuildError) as e:
        call(t)
    assert message in str(e.value), str(e.value)


def test_concat_of_other_leading_dims_is_refused() -> None:
    k = pto.Kernel("k")
    a, b = k.arg("a", [None, 8], "f32"), k.arg("b", [4, 8], "f32")
    with pytest.raises(pto.BuildError, match="only the last dims may differ"):
        pto.concat([a, b])
