"""Rank-3 token tensors (`pto/pypto/perm.py`): `reshape(q, [t, H, D])` and what PyPTO
authors do with it (a per-head norm, views of the last dim, RoPE with cos broadcast over
the heads, the interleaved RoPE's reshape/transpose chains across the heads, sums over
dim -2, windows of a rank-3 output, `expand_clone` of small weights). Each runs and
matches an independent numpy golden; what is not supported is refused at its line."""

from __future__ import annotations

import re
import warnings

import numpy as np
import pytest

import pto
import pto.pypto as pypto
from pto.interp.golden import check

K, H, D, R = 64, 4, 64, 32  # hidden, heads, head dim, rope dim
FP32 = pypto.DT_FP32
EPS = 1e-6
COUNTS = (1, 11)  # one token, a remainder of the [8, 1] cascade


def _rng(t: int):
    rng = np.random.default_rng(t)
    x = rng.standard_normal((t, K)).astype(np.float32)
    w = (rng.standard_normal((K, H * D)) * 0.1).astype(np.float32)
    cos = rng.uniform(-1, 1, (t, R)).astype(np.float32)
    sin = rng.uniform(-1, 1, (t, R)).astype(np.float32)
    return x, w, cos, sin


def _head_norm(q: np.ndarray) -> np.ndarray:
    return q / np.sqrt((q * q).sum(-1, keepdims=True) / D + EPS)


def _rotate_half(x):
    n = x.shape[-1] // 2
    x1 = pypto.view(x, [*x.shape[:-1], n], [0] * x.dim)
    x2 = pypto.view(x, [*x.shape[:-1], n], [0] * (x.dim - 1) + [n])
    return pypto.concat([x2 * -1.0, x1 + 0.0], -1)


def test_per_head_norm_views_and_half_rope_into_a_rank3_output() -> None:
    @pypto.frontend.jit
    def k(
        x: pypto.Tensor([pypto.DYNAMIC, K], FP32),
        w: pypto.Tensor([K, H * D], FP32),
        cos: pypto.Tensor([pypto.DYNAMIC, R], FP32),
        sin: pypto.Tensor([pypto.DYNAMIC, R], FP32),
        out: pypto.Tensor([pypto.DYNAMIC, H, D], FP32),
    ):
        for i, t in pypto.loop_unroll(0, x.shape[0], 1, unroll_list=[8, 1]):
            q = pypto.matmul(pypto.view(x, [t, K], [i, 0]), w, FP32)
            pypto.set_vec_tile_shapes(4, H, D)
            q3 = pypto.reshape(q, [t, H, D])
            q3 = q3 / pypto.sqrt(pypto.sum(q3 * q3, -1, keepdim=True) * (1.0 / D) + EPS)
            nope = pypto.view(q3, [t, H, D - R], [0, 0, 0])
            pe = pypto.view(q3, [t, H, R], [0, 0, D - R])
            c = pypto.reshape(pypto.view(cos, [t, R], [i, 0]), [t, 1, R])
            s = pypto.reshape(pypto.view(sin, [t, R], [i, 0]), [t, 1, R])
            pe = pe * c + _rotate_half(pe) * s
            pypto.assemble(pypto.concat([nope, pe], -1), [i, 0, 0], out)

    for t in COUNTS:
        x, w, cos, sin = _rng(t)
        out = np.zeros((t, H, D), np.float32)
        k(x, w, cos, sin, out)
        q = _head_norm((x.astype(np.float64) @ w).reshape(t, H, D))
        pe = q[..., D - R :]
        rot = np.concatenate([-pe[..., R // 2 :], pe[..., : R // 2]], -1)
        want = np.concatenate([q[..., : D - R], pe * cos[:, None] + rot * sin[:, None]], -1)
        assert check(out, want).ok, t
    text = str(k.trace(x, w, cos, sin, out))
    # each head's tile is stored into its columns of the output: no copy of the whole row
    assert text.count("pto.assemble") == 1 and f"-> tensor<?x{H}x{D}xf32>" in text


def test_the_interleaved_rope_across_heads_is_one_permutation_per_head() -> None:
    """mla_prolog_v4's rope_3d: de-interleave each head by `[t, H, R/2, 2]` and
    transpose(2, 3); re-interleave by transposes that pass through the heads dim."""

    @pypto.frontend.jit
    def k(
        x: pypto.Tensor([pypto.DYNAMIC, K], FP32),
        w: pypto.Tensor([K, H * R], FP32),
        cos: pypto.Tensor([pypto.DYNAMIC, R], FP32),
        sin: pypto.Tensor([pypto.DYNAMIC, R], FP32),
        out: pypto.Tensor([pypto.DYNAMIC, H, R], FP32),
    ):
        for i, t in pypto.loop_unroll(0, x.shape[0], 1, unroll_list=[8, 1]):
            pypto.set_vec_tile_shapes(1, H, R, R)
            x3 = pypto.reshape(pypto.matmul(pypto.view(x, [t, K], [i, 0]), w, FP32), [t, H, R])
            y = pypto.reshape(pypto.transpose(pypto.reshape(x3, [t, H, R // 2, 2]), 2, 3), [t, H, R])
            rot = _rotate_half(y)
            a = pypto.reshape(pypto.transpose(rot, 1, 2), [t, 2, R // 2, H])
            a = pypto.transpose(pypto.reshape(pypto.transpose(a, 1, 2), [t, R, H]), 1, 2)
            c = pypto.reshape(pypto.view(cos, [t, R], [i, 0]), [t, 1, R])
            s = pypto.reshape(pypto.view(sin, [t, R], [i, 0]), [t, 1, R])
            pypto.assemble(x3 * c + a * s, [i, 0, 0], out)

    for t in COUNTS:
        x, w, cos, sin = _rng(t)
        w = w[:, : H * R].copy()
        out = np.zeros((t, H, R), np.float32)
        k(x, w, cos, sin, out)
        x3 = (x.astype(np.float64) @ w).reshape(t, H, R)
        rot = np.empty_like(x3)
        rot[..., 0::2], rot[..., 1::2] = -x3[..., 1::2], x3[..., 0::2]
        assert check(out, x3 * cos[:, None] + rot * sin[:, None]).ok, t
    text = str(k.trace(x, w, cos, sin, out))
    assert text.count("= pto.transpose") == 2 * H, "one de-interleave and one re-interleave per head"
    widths = [int(w) for w in re.findall(r"= pto\.slice .*-> tensor<\?x(\d+)xf32>", text)]
    assert widths and min(widths) >= R // 2, "runs of columns, not one-column slices"


def test_reductions_over_the_heads_dim_and_rank3_windows() -> None:
    """A sinkhorn-like step on `[t, 4, 4]` (amax and sum over -1, amin and sum over -2), a
    weighted sum over the heads (`sum(dim=-2)`), and a rank-3 output written in two
    windows of its last dim."""

    @pypto.frontend.jit
    def k(
        x: pypto.Tensor([pypto.DYNAMIC, 4, 32], FP32),
        a: pypto.Tensor([pypto.DYNAMIC, K], FP32),
        wm: pypto.Tensor([K, 16], FP32),
        comb: pypto.Tensor([pypto.DYNAMIC, 4, 4], FP32),
        y: pypto.Tensor([pypto.DYNAMIC, 32], FP32),
        z: pypto.Tensor([pypto.DYNAMIC, 4, 32], FP32),
    ):
        for i, t in pypto.loop_unroll(0, x.shape[0], 1, unroll_list=[8, 1]):
            pypto.set_vec_tile_shapes(8, 4, 32)
            c = pypto.reshape(pypto.matmul(pypto.view(a, [t, K], [i, 0]), wm, FP32), [t, 4, 4])
            c = pypto.exp(c - pypto.amax(c, -1, True)) + pypto.amin(c, -2, True)
            c = c / pypto.sum(c, -1, True)
            c = c / (pypto.sum(c, -2, True) + EPS)
            pypto.assemble(c, [i, 0, 0], comb)
            x3 = pypto.view(x, [t, 4, 32], [i, 0, 0])
            w = pypto.sum(c, -1, True)  # [t, 4, 1]
            pypto.assemble(pypto.sum(x3 * w, -2), [i, 0], y)
            pypto.assemble(pypto.view(x3, [t, 4, 8], [0, 0, 0]) * 2.0, [i, 0, 0], z)
            pypto.assemble(pypto.view(x3, [t, 4, 24], [0, 0, 8]) + 1.0, [i, 0, 8], z)

    for t in COUNTS:
        rng = np.random.default_rng(t)
        x = rng.standard_normal((t, 4, 32)).astype(np.float32)
        a, wm = rng.standard_normal((t, K)).astype(np.float32), (rng.standard_normal((K, 16)) * 0.2).astype(np.float32)
        comb, y, z = np.zeros((t, 4, 4), np.float32), np.zeros((t, 32), np.float32), np.zeros((t, 4, 32), np.float32)
        k(x, a, wm, comb, y, z)
        mm = a.astype(np.float64) @ wm
        c = mm.reshape(t, 4, 4).astype(np.float64)
        c = np.exp(c - c.max(-1, keepdims=True)) + c.min(-2, keepdims=True)
        c = c / c.sum(-1, keepdims=True)
        c = c / (c.sum(-2, keepdims=True) + EPS)
        assert check(comb, c).ok, t
        assert check(y, (x * c.sum(-1, keepdims=True)).sum(-2)).ok, t
        assert check(z, np.concatenate([x[..., :8] * 2, x[..., 8:] + 1], -1)).ok, t


def test_expand_clone_of_small_weights() -> None:
    """hc_pre's `reshape(scale, [3, 1]).expand_clone([3, 4])[1:2, :]` and a gamma
    expanded over the heads: each use broadcasts the weight itself."""

    @pypto.frontend.jit
    def k(
        x: pypto.Tensor([pypto.DYNAMIC, K], FP32),
        w4: pypto.Tensor([K, 4], FP32),
        q: pypto.Tensor([pypto.DYNAMIC, H * D], FP32),
        scale: pypto.Tensor([3], FP32),
        gamma: pypto.Tensor([D], FP32),
        out: pypto.Tensor([pypto.DYNAMIC, 4], FP32),
        qo: pypto.Tensor([pypto.DYNAMIC, H, D], FP32),
    ):
        s2 = pypto.reshape(scale, [3, 1], inplace=True)
        g3 = pypto.reshape(pypto.expand_clone(pypto.reshape(gamma, [1, D]), [H, D]), [1, H, D])
        for i, t in pypto.loop_unroll(0, x.shape[0], 1, unroll_list=[8, 1]):
            pypto.set_vec_tile_shapes(8, H, D)
            s = s2.expand_clone([3, 4])
            pypto.set_vec_tile_shapes(8, 8)
            pypto.assemble(pypto.matmul(pypto.view(x, [t, K], [i, 0]), w4, FP32) * s[1:2, :], [i, 0], out)
            pypto.set_vec_tile_shapes(8, H, D)
            pypto.assemble(pypto.reshape(pypto.view(q, [t, H * D], [i, 0]), [t, H, D]) * g3, [i, 0, 0], qo)

    for t in COUNTS:
        rng = np.random.default_rng(t)
        x, q = rng.standard_normal((t, K)).astype(np.float32), rng.standard_normal((t, H * D)).astype(np.float32)
        w4 = rng.standard_normal((K, 4)).astype(np.float32)
        scale, gamma = rng.standard_normal(3).astype(np.float32), rng.standard_normal(D).astype(np.float32)
        out, qo = np.zeros((t, 4), np.float32), np.zeros((t, H, D), np.float32)
        k(x, w4, q, scale, gamma, out, qo)
        assert check(out, (x.astype(np.float64) @ w4) * scale[1]).ok, t
        assert check(qo, q.reshape(t, H, D) * gamma).ok, t


def _refused(body, message: str) -> None:
    @pypto.frontend.jit
    def k(
        x: pypto.Tensor([pypto.DYNAMIC, K], FP32),
        w: pypto.Tensor([K, H * D], FP32),
        g: pypto.Tensor([2, 1], FP32),
        out: pypto.Tensor([pypto.DYNAMIC, H, D], FP32),
    ):
        for i, t in pypto.loop_unroll(0, x.shape[0], 1, unroll_list=[8]):
            pypto.set_vec_tile_shapes(8, H, D)
            xt = pypto.matmul(pypto.view(x, [t, K], [i, 0]), w, FP32)
            pypto.assemble(body(xt, pypto.reshape(xt, [t, H, D]), g, t), [i, 0, 0], out)

    with pytest.raises(pypto.BuildError, match=r"test_pypto_grids.py:\d+: .*" + message):
        k(np.zeros((4, K), np.float32), np.zeros((K, H * D), np.float32), np.zeros((2, 1), np.float32),
          np.zeros((4, H, D), np.float32))  # fmt: skip


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (lambda x, q, g, t: pypto.transpose(q, 0, 1), r"the output's DYNAMIC axis must be dim 1 too \(\[H, T, D\]\)"),
        (lambda x, q, g, t: pypto.transpose(q, 2, 0), "dim 0 is the tokens, which stay the rows"),
        (lambda x, q, g, t: q * x, r"shapes \[8, 4, 64\] and \[8, 256\] do not broadcast"),
        (
            lambda x, q, g, t: (pypto.cast(g.expand_clone([2, 4]), pypto.DT_BF16), q)[1],
            "pypto.cast of pypto.expand_clone's",
        ),
        (lambda x, q, g, t: pypto.view(q, [t, H, 8], [1, 0, 0]), r"takes all its rows at offset 0"),
        (lambda x, q, g, t: pypto.sum(q, 0, True), "dim 0 is the tokens, reduced by nothing here"),
        (lambda x, q, g, t: pypto.reshape(q, [t, D, 3]), "changes the element count"),
    ],
)
def test_what_grids_do_not_support_is_refused_at_the_users_line(body, message) -> None:
    _refused(body, message)


def test_a_grid_kernel_runs_alike_on_both_engines() -> None:
    @pypto.frontend.jit
    def k(
        x: pypto.Tensor([pypto.DYNAMIC, K], FP32),
        w: pypto.Tensor([K, H * D], FP32),
        out: pypto.Tensor([pypto.DYNAMIC, H, D], FP32),
    ):
        for i, t in pypto.loop_unroll(0, x.shape[0], 1, unroll_list=[8, 1]):
            pypto.set_vec_tile_shapes(4, H, D)
            q = pypto.reshape(pypto.matmul(pypto.view(x, [t, K], [i, 0]), w, FP32), [t, H, D])
            pypto.assemble(q / pypto.sum(q * q, -1, True), [i, 0, 0], out)

    x, w, _, _ = _rng(11)
    compiled = pto.compile(k.trace(x, w, np.zeros((11, H, D), np.float32)))
    runs = [pto.run(compiled, [x, w], engine=e) for e in ("interp", "compiled")]
    assert np.array_equal(runs[0].outputs[0], runs[1].outputs[0])
    assert runs[0].report.cycles == runs[1].report.cycles
    q = (x.astype(np.float64) @ w).reshape(11, H, D)
    assert check(runs[0].outputs[0], q / (q * q).sum(-1, keepdims=True)).ok


HEADS, HD = 4, 8192  # a [t, 4, 8192] f32 result: 128 KiB a row


def _head_norm_kernel(scale: float | None):
    """A per-head norm of the matmul's `[t, 4, 8192]` result, scaled first (in UB) when
    `scale` is given; with its golden for `x`, `w`."""

    @pypto.frontend.jit
    def k(
        x: pypto.Tensor([pypto.DYNAMIC, K], FP32),
        w: pypto.Tensor([K, HEADS * HD], FP32),
        out: pypto.Tensor([pypto.DYNAMIC, HEADS, HD], FP32),
    ):
        for i, t in pypto.loop_unroll(0, x.shape[0], 1, unroll_list=[4, 1]):
            m = pypto.matmul(pypto.view(x, [t, K], [i, 0]), w, FP32)
            if scale is not None:
                pypto.set_vec_tile_shapes(1, HEADS * HD)
                m = m * scale
            pypto.set_vec_tile_shapes(1, HEADS, HD)
            q = pypto.reshape(m, [t, HEADS, HD])
            pypto.assemble(q * (q / pypto.sum(q * q, -1, True)), [i, 0, 0], out)

    def golden(x, w):
        q = (x.astype(np.float64) @ w).reshape(len(x), HEADS, HD) * (1 if scale is None else scale)
        return q * (q / (q * q).sum(-1, keepdims=True))

    return k, golden


def _head_inputs():
    rng = np.random.default_rng(0)
    x, w = rng.standard_normal((5, K)).astype(np.float32), rng.standard_normal((K, HEADS * HD)).astype(np.float32)
    return x, w, np.zeros((5, HEADS, HD), np.float32)


def test_a_post_phase_too_big_for_one_row_is_cut_into_phases() -> None:
    """A per-head norm of the matmul's result scaled (in UB: its heads are slices of it
    there, not views of the matmul's result in GM): one row of the whole phase (the 128 KiB
    row and the heads' work) does not fit UB, as in mla_prolog_quant_v4's dequant of
    `[t, 32768]`; tile-assign-shapes cuts the phase (a warning) and the kernel still
    matches its golden on both engines."""
    k, golden = _head_norm_kernel(2.0)
    x, w, out = _head_inputs()
    with pytest.warns(pypto.LoweringWarning, match=r"cut into \d+ phases, their values through GM"):
        k(x, w, out)
    assert check(out, golden(x, w)).ok
    compiled = pto.compile(k.trace(x, w, out))
    assert compiled.text("npu").count('npu.tasks "post') > 4, "the vector phase after the cube is cut in parts"
    runs = [pto.run(compiled, [x, w], engine=e) for e in ("interp", "compiled")]
    assert np.array_equal(runs[0].outputs[0], runs[1].outputs[0]) and np.array_equal(runs[0].outputs[0], out)


def test_heads_of_the_matmuls_result_are_views_of_it_in_gm() -> None:
    """The same per-head norm of the matmul's result itself: each head is a view of its
    columns in GM (`npu.view`), loaded on its own, so the phase is column-tiled over a
    head's 8192 columns instead of cut into phases, and still matches its golden."""
    k, golden = _head_norm_kernel(None)
    x, w, out = _head_inputs()
    with pytest.warns(pypto.LoweringWarning, match=r"pinned whole rows -> column chunks of 4096"):
        k(x, w, out)
    assert check(out, golden(x, w)).ok
    npu = pto.compile(k.trace(x, w, out)).text("npu")
    assert npu.count("npu.view %ws") == 2 * HEADS and "cut into" not in npu  # a view per head, per body


@pytest.mark.parametrize(("tile", "want"), [((8, D), (2, H * D)), ((2, D), (1, 2 * D)), ((8, 16), (2, 16))])
def test_a_vector_tile_on_a_per_head_view_is_read_in_its_tokens(tile, want) -> None:
    """`set_vec_tile_shapes(8, D)` on the view `[t * H, D]` is 8 of its rows: 2 whole
    tokens of the `[t, H * D]` tile (PyPTO's rows are contiguous runs of D elements), not
    8 token rows; `(2, D)` is half a token."""

    @pypto.frontend.jit
    def k(
        x: pypto.Tensor([pypto.DYNAMIC, K], FP32),
        w: pypto.Tensor([K, H * D], FP32),
        out: pypto.Tensor([pypto.DYNAMIC, H * D], FP32),
    ):
        for i, t in pypto.loop_unroll(0, x.shape[0], 1, unroll_list=[8, 1]):
            q = pypto.matmul(pypto.view(x, [t, K], [i, 0]), w, FP32)
            pypto.set_vec_tile_shapes(*tile)
            qh = pypto.reshape(q, [t * H, D])
            qh = qh * pypto.rsqrt(pypto.sum(qh * qh, -1, keepdim=True) * (1.0 / D) + EPS)
            pypto.set_vec_tile_shapes(8, H * D)
            pypto.assemble(pypto.reshape(qh, [t, H * D]), [i, 0], out)

    x, w, _, _ = _rng(11)
    out = np.zeros((11, H * D), np.float32)
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always", pypto.LoweringWarning)
        k(x, w, out)
    # Each head is a view of the matmul's result in GM, loaded on its own: a tile of whole
    # heads runs as asked; one narrower than a head is a whole-row phase, said so.
    assert any("each task processes whole rows" in str(m.message) for m in seen) == (want[1] < D)
    assert check(out, _head_norm((x.astype(np.float64) @ w).reshape(11, H, D)).reshape(11, H * D)).ok
    text = str(k.trace(x, w, out))
    assert re.search(rf"pto.mul %\d+, %\d+ {{pto.vec_tile = array<i64: {want[0]}, {want[1]}>}}", text), text
