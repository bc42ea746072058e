"""Outputs assembled in column windows, as mla_prolog_quant_v4 writes kv_out: the nope
part of each token's row at `[t_idx, 0]`, the rotated rope part at `[t_idx, A]`, each
tile narrower than the output. Each window is stored into its own columns (no copy
into one tile first); the output matches an independent numpy golden on both npu
engines, bit for bit alike, with every element written exactly once."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

import pto
import pto.pypto as pypto
from pto.interp.golden import check
from pto.interp.run import run as run_module

H, A, R = 128, 96, 32  # hidden size; the output's first window and the rotated one: N = A + R
N = A + R
BF16, FP32 = pypto.DT_BF16, pypto.DT_FP32
BF = ml_dtypes.bfloat16
COUNTS = (1, 13, 40)  # one token, a remainder of the [8, 1] cascade, several bodies


def _inputs(t: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    x = rng.uniform(-1, 1, (t, H)).astype(BF)
    w = rng.uniform(-0.1, 0.1, (H, N)).astype(BF)
    cos, sin = (rng.uniform(-1, 1, (t, R)).astype(BF) for _ in range(2))
    return x, w, cos, sin


def _golden(x, w, cos, sin, eps=1e-6):
    y = x.astype(np.float32) @ w.astype(np.float32)
    n = (y / np.sqrt((y * y).mean(-1, keepdims=True) + eps)).astype(BF).astype(np.float32)
    pe = n[:, A:]
    rot = np.concatenate([-pe[:, R // 2 :], pe[:, : R // 2]], 1)
    return np.concatenate([n[:, :A], pe * cos.astype(np.float32) + rot * sin.astype(np.float32)], 1)


def _kernel(rope_first: bool):
    """x @ w -> RMSNorm -> bf16; columns [0, A) assembled as they are, [A, N) rotated
    (half-split RoPE, per-token cos/sin) and assembled at column A."""

    @pypto.frontend.jit
    def k(
        x: pypto.Tensor([pypto.DYNAMIC, H], BF16),
        w: pypto.Tensor([H, N], BF16),
        cos: pypto.Tensor([pypto.DYNAMIC, R], BF16),
        sin: pypto.Tensor([pypto.DYNAMIC, R], BF16),
        out: pypto.Tensor([pypto.DYNAMIC, N], BF16),
    ):
        for idx, p in pypto.loop_unroll(0, x.shape[0], 1, unroll_list=[8]):
            y = pypto.matmul(pypto.view(x, [p, H], [idx, 0]), w, FP32)
            n = pypto.cast(pypto.rms_norm(y, None, 1e-6), BF16)
            c = pypto.cast(pypto.view(cos, [p, R], [idx, 0]), FP32)
            s = pypto.cast(pypto.view(sin, [p, R], [idx, 0]), FP32)
            pe = pypto.cast(pypto.view(n, [p, R], [0, A]), FP32)
            x1, x2 = pypto.view(pe, [p, R // 2], [0, 0]), pypto.view(pe, [p, R // 2], [0, R // 2])
            rope = pypto.cast(pe * c + pypto.concat([x2 * -1.0, x1], -1) * s, BF16)
            if rope_first:
                pypto.assemble(rope, [idx, A], out)
            pypto.assemble(pypto.clone(pypto.view(n, [p, A], [0, 0])), [idx, 0], out)
            if not rope_first:
                pypto.assemble(rope, [idx, A], out)

    return k


def _both_engines(compiled, inputs: list, t: int) -> None:
    """Both npu engines write the same bits, once per output element."""
    runs = [run_module(compiled.npu, inputs, engine=e) for e in ("interp", "compiled")]
    assert np.array_equal(runs[0].outputs[0].view(np.uint16), runs[1].outputs[0].view(np.uint16))
    assert runs[0].report.cycles == runs[1].report.cycles
    for r in runs:
        assert r.write_counts[0].shape == (t, N) and (r.write_counts[0] == 1).all()


@pytest.mark.parametrize("rope_first", [False, True])
def test_windows_of_one_output_match_the_golden(rope_first: bool) -> None:
    k = _kernel(rope_first)
    for t in COUNTS:
        x, w, cos, sin = _inputs(t)
        out = np.zeros((t, N), BF)
        k(x, w, cos, sin, out)
        assert check(out, _golden(x, w, cos, sin)).ok, (rope_first, t)
    _both_engines(pto.compile(k.trace(x, w, cos, sin, out)), [x, w, cos, sin], COUNTS[-1])


def test_each_window_is_a_store_into_the_outputs_columns() -> None:
    """The tile level stores each window at its column; the npu level writes it through
    a view of those columns (its addresses the output's), with no copy of the windows
    into a [rows, N] tile."""
    x, w, cos, sin = _inputs(16)
    compiled = pto.compile(_kernel(False).trace(x, w, cos, sin, np.zeros((16, N), BF)))
    stores = [o for o in compiled.levels["tile"].walk() if o.name == "tile.store"]
    assert {(o.col, o.value.type.get_shape()[1]) for o in stores} == {(0, A), (A, R)}
    views = {str(o.result.type): o.starts for o in compiled.npu.walk() if o.name == "npu.view"}
    assert views == {f"!npu.buf<?x{A}xbf16, gm>": [0, 0], f"!npu.buf<?x{R}xbf16, gm>": [0, A]}
    copies = [o for o in compiled.npu.walk() if o.name == "npu.vcopy"]  # the slices' (the view + clone)
    assert copies and not [o for o in copies if o.operands[1].type.get_shape()[-1] == N]


def test_windows_from_the_cube_and_from_a_vector_stage_before_it() -> None:
    """Three windows of one output: the matmul's own (written by the fixpipe), a scaled
    copy of the input's first columns (a vector stage the cube does not wait for), and
    the norm of the matmul (after the cube), in no particular order."""

    @pypto.frontend.jit
    def k(
        x: pypto.Tensor([pypto.DYNAMIC, H], BF16),
        w: pypto.Tensor([H, N], BF16),
        out: pypto.Tensor([pypto.DYNAMIC, 2 * N + 16], BF16),
    ):
        for idx, p in pypto.loop_unroll(0, x.shape[0], 1, unroll_list=[8]):
            xt = pypto.view(x, [p, H], [idx, 0])
            y = pypto.matmul(xt, w, FP32)
            pypto.assemble(pypto.cast(pypto.rms_norm(y, None, 1e-6), BF16), [idx, N + 16], out)
            pypto.assemble(pypto.cast(y, BF16), [idx, 0], out)
            head = pypto.view(x, [p, 16], [idx, 0])
            pypto.assemble(pypto.cast(pypto.cast(head, FP32) * 2.0, BF16), [idx, N], out)

    for t in COUNTS:
        x, w, _, _ = _inputs(t)
        out = np.zeros((t, 2 * N + 16), BF)
        k(x, w, out)
        y = x.astype(np.float32) @ w.astype(np.float32)
        n = y / np.sqrt((y * y).mean(-1, keepdims=True) + 1e-6)
        want = np.concatenate([y, x[:, :16].astype(np.float32) * 2, n], 1)
        assert check(out, want).ok, t


def _refused(body, match: str, width: int = N) -> None:
    @pypto.frontend.jit
    def k(x: pypto.Tensor([pypto.DYNAMIC, H], FP32), out: pypto.Tensor([pypto.DYNAMIC, width], FP32)):
        for idx, p in pypto.loop_unroll(0, x.shape[0], 1, unroll_list=[8]):
            body(pypto.view(x, [p, H], [idx, 0]), idx, out)

    with pytest.raises(pypto.BuildError, match=rf"test_pypto_windows.py:\d+: error: .*{match}"):
        k(np.zeros((4, H), np.float32), np.zeros((4, width), np.float32))


def test_overlapping_windows_are_refused() -> None:
    def body(xt, idx, out):
        pypto.assemble(pypto.view(xt, [xt.shape[0], 64], [0, 0]) * 2.0, [idx, 0], out)
        pypto.assemble(pypto.view(xt, [xt.shape[0], 64], [0, 0]) * 3.0, [idx, 32], out)

    _refused(body, r"columns \[32, 96\) overlap \[0, 64\) assembled before")


def test_columns_never_assembled_are_refused_at_the_first_window() -> None:
    def body(xt, idx, out):
        pypto.assemble(pypto.view(xt, [xt.shape[0], 32], [0, 0]) * 2.0, [idx, 16], out)
        pypto.assemble(pypto.view(xt, [xt.shape[0], 32], [0, 32]) * 2.0, [idx, 64], out)

    _refused(body, rf"leaves columns \[0, 16\), \[48, 64\), \[96, {N}\) unassembled")


def test_a_window_after_whole_rows_and_one_outside_are_refused() -> None:
    def twice(xt, idx, out):
        pypto.assemble(xt * 2.0, [idx, 0], out)
        pypto.assemble(pypto.view(xt, [xt.shape[0], 32], [0, 0]) * 2.0, [idx, 32], out)

    def outside(xt, idx, out):
        pypto.assemble(pypto.view(xt, [xt.shape[0], 64], [0, 0]) * 2.0, [idx, 96], out)

    def whole_after(xt, idx, out):
        pypto.assemble(pypto.view(xt, [xt.shape[0], 32], [0, 0]) * 2.0, [idx, 32], out)
        pypto.assemble(xt * 2.0, [idx, 0], out)

    _refused(twice, "its columns are all assembled already", width=H)
    _refused(outside, r"columns \[96, 160\) are outside it", width=H)
    _refused(whole_after, "each output parameter is assembled once per loop body", width=H)


def test_the_l2_model_sees_each_window_at_the_outputs_addresses() -> None:
    """[16, 256] bf16: one 512-byte line per row. Each row's first window (192 columns)
    misses its line, the second (64 columns at 192) hits the same line: 16 misses, 16
    hits, a burst per row and window, the output written back once (16 lines). A view at
    the output's base address, or a whole-row store, would not give these figures."""

    @pypto.frontend.jit
    def k(
        x: pypto.Tensor([pypto.DYNAMIC, H], BF16),
        w: pypto.Tensor([H, 256], BF16),
        out: pypto.Tensor([pypto.DYNAMIC, 256], BF16),
    ):
        for idx, p in pypto.loop_unroll(0, x.shape[0], 1, unroll_list=[8]):
            y = pypto.matmul(pypto.view(x, [p, H], [idx, 0]), w, FP32)
            pypto.assemble(pypto.cast(pypto.view(y, [p, 192], [0, 0]), BF16), [idx, 0], out)
            pypto.assemble(pypto.cast(pypto.view(y, [p, 64], [0, 192]) * 2.0, BF16), [idx, 192], out)

    x, w = np.ones((16, H), BF), np.ones((H, 256), BF)
    r = pto.run(pto.compile(k.trace(x, w, np.zeros((16, 256), BF))), [x, w])
    stats = r.report.tensors["out"]
    assert (stats["misses"], stats["hits"], stats["bursts"], stats["hbm_written"]) == (16, 16, 32, 16 * 512)
