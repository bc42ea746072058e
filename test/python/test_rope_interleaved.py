"""The interleaved RoPE of DeepSeek-V4's mla_prolog_v4 (issue 31, item 4): k_pe's pairs
are de-interleaved by `reshape` to [t, D/2, 2], `transpose` of dims 1, 2 and `reshape`
back, then rotated with per-token cos/sin. The reshapes are views of UB buffers, the
transpose an `npu.vtranspose` on the vector pipe, priced in the report. Each form runs
at 1 token, a remainder of the [16, 1] cascade and more than 128 tokens, on both npu
engines (bit for bit and figure for figure alike), against an independent numpy golden."""

from __future__ import annotations

import json

import ml_dtypes
import numpy as np
import pytest

import pto
import pto.pypto as pypto
from pto.interp.cost import CostModel
from pto.interp.golden import check
from pto.targets import load_target

H, C, D, EPS = 256, 512, 64, 1e-6  # hidden, kv_lora_rank, rope_dim
BF16, FP32 = pypto.DT_BF16, pypto.DT_FP32
COUNTS = (1, 37, 300)
# interleave: pypto.reshape / transpose / reshape of k_pe; inplace: with inplace=True and
# dims -1, -2; methods: as Tensor methods; inverse: rotated as it is, then the inverse
# permutation; tables: cos and sin (loaded bf16 token tiles) de-interleaved as well.
FORMS = ["interleave", "inplace", "methods", "inverse", "tables"]


def _rotate_half(x, t):
    x1, x2 = pypto.view(x, [t, D // 2], [0, 0]), pypto.view(x, [t, D // 2], [0, D // 2])
    return pypto.concat([-x2, x1], dim=-1)


def _deinterleave(x, t, form: str):
    """[t, D] pairs -> evens, then odds (`plain`: as it is)."""
    if form == "plain":
        return x
    if form == "methods":
        return x.reshape([t, D // 2, 2]).transpose(1, 2).reshape([t, D])
    inplace = form == "inplace"
    y = pypto.reshape(x, [t, D // 2, 2], inplace=inplace)
    y = pypto.transpose(y, 1, 2) if form != "inplace" else pypto.transpose(y, -1, -2)
    return pypto.reshape(y, [t, D], inplace=inplace)


def _kernel(form: str):
    """wkv-linear [t, 576] -> kv-rmsnorm on [0, 512) and the RoPE on [512, 576)."""

    @pypto.frontend.jit
    def k(
        x: pypto.Tensor([pypto.DYNAMIC, H], BF16),
        wkv: pypto.Tensor([H, C + D], BF16),
        gamma: pypto.Tensor([C], BF16),
        cos: pypto.Tensor([pypto.DYNAMIC, D], BF16),
        sin: pypto.Tensor([pypto.DYNAMIC, D], BF16),
        kv_out: pypto.Tensor([pypto.DYNAMIC, C], BF16),
        kr_out: pypto.Tensor([pypto.DYNAMIC, D], BF16),
    ):
        for i, t in pypto.loop_unroll(0, x.shape[0], 1, unroll_list=[128, 16, 1]):
            pypto.set_semantic_label("wkv-linear")
            kv = pypto.matmul(pypto.view(x, [t, H], [i, 0]), wkv, BF16)
            pypto.set_semantic_label("kv-rmsnorm")
            pypto.set_vec_tile_shapes(4, C)
            kv_n = pypto.rms_norm(pypto.cast(pypto.view(kv, [t, C], [0, 0]), FP32), gamma, EPS)
            pypto.assemble(pypto.cast(kv_n, BF16), [i, 0], kv_out)
            pypto.set_semantic_label("rope")
            pypto.set_vec_tile_shapes(4, D, D)  # 3 sizes: the transposes are rank 3 (a 2-D op takes the leading two)
            k_pe = pypto.cast(pypto.view(kv, [t, D], [0, C]), FP32)
            c, s = pypto.view(cos, [t, D], [i, 0]), pypto.view(sin, [t, D], [i, 0])
            if form == "tables":  # a loaded tile's reshape to rank 3 is a view in UB too
                c, s = _deinterleave(c, t, "interleave"), _deinterleave(s, t, "interleave")
            c, s = pypto.cast(c, FP32), pypto.cast(s, FP32)
            xr = k_pe if form == "inverse" else _deinterleave(k_pe, t, form)
            k_rope = xr * c + _rotate_half(xr, t) * s
            if form == "inverse":  # rotated as it is, then de-interleaved by the inverse permutation
                k_rope = pypto.transpose(pypto.reshape(k_rope, [t, 2, D // 2]), 1, 2)
                k_rope = pypto.reshape(k_rope, [t, D])
            pypto.assemble(pypto.cast(k_rope, BF16), [i, 0], kr_out)

    return k


def _inputs(t: int):
    rng = np.random.default_rng(t)
    bf = ml_dtypes.bfloat16
    x = rng.standard_normal((t, H), dtype=np.float32).astype(bf)
    wkv = (rng.standard_normal((H, C + D), dtype=np.float32) / 16).astype(bf)
    gamma = rng.standard_normal(C, dtype=np.float32).astype(bf)
    angle = rng.uniform(0, 2 * np.pi, (t, D)).astype(np.float32)
    return x, wkv, gamma, np.cos(angle).astype(bf), np.sin(angle).astype(bf)


def _golden(form: str, x, wkv, gamma, cos, sin):
    f32 = np.float32
    kv = (x.astype(f32) @ wkv.astype(f32)).astype(ml_dtypes.bfloat16).astype(f32)
    c, pe = kv[:, :C], kv[:, C:]
    n = c / np.sqrt(np.mean(c * c, axis=-1, keepdims=True) + f32(EPS)) * gamma.astype(f32)
    if form not in ("plain", "inverse"):
        pe = np.concatenate([pe[:, 0::2], pe[:, 1::2]], axis=-1)
    if form == "tables":
        cos, sin = (np.concatenate([a[:, 0::2], a[:, 1::2]], axis=-1) for a in (cos, sin))
    r = pe * cos.astype(f32) + np.concatenate([-pe[:, D // 2 :], pe[:, : D // 2]], axis=-1) * sin.astype(f32)
    if form == "inverse":  # element 2j + h of the result is element h * D/2 + j of r
        r = r.reshape(-1, 2, D // 2).transpose(0, 2, 1).reshape(-1, D)
    return n.astype(ml_dtypes.bfloat16), r.astype(ml_dtypes.bfloat16)


def _outputs(t: int):
    return np.zeros((t, C), ml_dtypes.bfloat16), np.zeros((t, D), ml_dtypes.bfloat16)


@pytest.mark.filterwarnings("ignore::pto.pypto.LoweringWarning")  # (kv-rmsnorm's [4, 512] tile: whole rows)
@pytest.mark.parametrize("form", FORMS)
def test_interleaved_rope_matches_the_golden_on_both_engines(form: str) -> None:
    k = _kernel(form)
    for t in COUNTS:
        ins = _inputs(t)
        outs = _outputs(t)
        compiled = pto.compile(k.trace(*ins, *outs))
        runs = [pto.run(compiled, list(ins), engine=e) for e in ("interp", "compiled")]
        tiled = pto.run(compiled, list(ins), level="tile")  # the tile level's interpretation
        for run in (runs[0], tiled):
            for got, want, name in zip(run.outputs, _golden(form, *ins), ("kv", "k_rope"), strict=True):
                v = check(got, want)
                assert v.ok, (form, t, v.describe(name))
        for a, b in zip(runs[0].outputs, runs[1].outputs, strict=True):
            assert np.array_equal(a.view(np.uint16), b.view(np.uint16)), (form, t)
        assert runs[0].report.to_json() == runs[1].report.to_json(), (form, t)


@pytest.mark.filterwarnings("ignore::pto.pypto.LoweringWarning")
def test_the_transpose_moves_data_and_is_charged_on_the_vector_pipe(tmp_path) -> None:
    """The reshapes are npu.reshape views of UB buffers (no op of their own runs), the
    transpose an npu.vtranspose at `vector.cycles_per_repeat.vtranspose` over its bytes;
    the vector pipe's busy cycles are the plain RoPE's plus exactly those."""
    t = 37
    ins, outs = _inputs(t), _outputs(t)
    busy, traced = {}, {}
    for form in ("plain", "interleave"):
        compiled = pto.compile(_kernel(form).trace(*ins, *outs))
        path = tmp_path / f"{form}.json"
        res = pto.run(compiled, list(ins), trace=str(path))
        busy[form] = sum(p.get("vector", 0.0) for core, p in res.report.cores.items() if core.startswith("aiv"))
        traced[form] = json.loads(path.read_text())
        if form == "interleave":
            npu_text = compiled.text("npu")
            assert "npu.reshape" in npu_text and "-> !npu.buf<4x32x2xf32, ub>" in npu_text, npu_text
            assert "npu.vtranspose" in npu_text
    events = traced["interleave"]["traceEvents"] if isinstance(traced["interleave"], dict) else traced["interleave"]
    vt = [e for e in events if e.get("name") == "npu.vtranspose"]
    assert vt, "no npu.vtranspose ran"
    cost = CostModel(load_target("ascend910b1"))
    for e in vt:
        rows = e["args"]["bytes"] // (D * 4)
        assert e["args"]["cycles"] == pytest.approx(cost.vector("vtranspose", rows * D * 4)), e
    assert busy["interleave"] - busy["plain"] == pytest.approx(sum(e["args"]["cycles"] for e in vt))
    assert cost.vector("vtranspose", 1024) > cost.vector("vcopy", 1024)  # a gather, not a plain copy


@pytest.mark.parametrize(
    ("dims", "shape", "match"),
    [
        (
            (0, 1),
            [16, 32, 2],
            r"a transpose of the tokens to dim 1 is written only by pypto.assemble into an \[H, T, D\]",
        ),
        ((0, 2), [16, 32, 2], r"pypto.transpose of dims 0, 2: dim 0 is the tokens, which stay the rows"),
        ((1, 2), [16, 2, 16, 2], r"pypto.reshape back to 2-D takes each token's columns in an order of 32 pieces"),
        ((1, 3), [16, 32, 2], r"pypto.transpose's dims must be integers in \[-3, 3\)"),
    ],
)
def test_other_transposes_are_refused_at_the_users_line(dims, shape, match) -> None:
    @pypto.frontend.jit
    def k(x: pypto.Tensor([pypto.DYNAMIC, D], FP32), out: pypto.Tensor([pypto.DYNAMIC, D], FP32)):
        for i, t in pypto.loop_unroll(0, x.shape[0], 1, unroll_list=[16]):
            y = pypto.transpose(pypto.reshape(pypto.view(x, [t, D], [i, 0]), [t, *shape[1:]]), *dims)
            pypto.assemble(pypto.reshape(y, [t, D]), [i, 0], out)

    with pytest.raises(pypto.BuildError, match=rf"test_rope_interleaved.py:\d+: .*{match}"):
        k(np.zeros((4, D), np.float32), np.zeros((4, D), np.float32))


def test_a_view_of_part_of_each_heads_columns_takes_one_wide_piece_per_head() -> None:
    """mla_prolog_quant_v4's q_out: the first 48 of each of 12 heads' 64 columns of a
    rank-3 value (12 pieces, each wide: more than the 8 narrow pieces allowed)."""
    heads, d, keep = 12, 64, 48

    @pypto.frontend.jit
    def k(
        x: pypto.Tensor([pypto.DYNAMIC, D], FP32),
        w: pypto.Tensor([D, heads * d], FP32),
        out: pypto.Tensor([pypto.DYNAMIC, heads, keep], FP32),
    ):
        for i, t in pypto.loop_unroll(0, x.shape[0], 1, unroll_list=[4]):
            y3 = pypto.reshape(pypto.matmul(pypto.view(x, [t, D], [i, 0]), w, FP32), [t, heads, d])
            pypto.assemble(pypto.clone(pypto.view(y3, [t, heads, keep], [0, 0, 0])), [i, 0, 0], out)

    rng = np.random.default_rng(3)
    x, w = rng.standard_normal((5, D)).astype(np.float32), rng.standard_normal((D, heads * d)).astype(np.float32)
    out = np.zeros((5, heads, keep), np.float32)
    k(x, w, out)
    assert check(out, (x @ w).reshape(5, heads, d)[:, :, :keep]).ok
