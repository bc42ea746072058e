"""`pto.pypto`: PyPTO 0.2.0 kernels run unchanged but for the import line (issue 11)."""

import dataclasses
import importlib.util
import linecache
import pathlib
import re
import sys
import warnings

import ml_dtypes
import numpy as np
import pytest
from kernels import ROOT

import pto
import pto.pypto as pypto
from pto.interp.golden import check

K, N = 64, 32
BF16, FP32 = pypto.DT_BF16, pypto.DT_FP32
I8, I32 = pypto.DT_INT8, pypto.DT_INT32


def example(name: str):
    path = ROOT / "examples" / "pypto" / f"{name}.py"
    spec = importlib.util.spec_from_file_location(f"pypto_example_{name}", path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    return mod


def data(t: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((t, K), dtype=np.float32).astype(ml_dtypes.bfloat16)
    gamma = rng.standard_normal(K, dtype=np.float32).astype(ml_dtypes.bfloat16)
    w = (rng.standard_normal((N, K), dtype=np.float32) / 8).astype(ml_dtypes.bfloat16)
    return x, gamma, w


def golden(x, gamma, w):
    xf = x.astype(np.float32)
    n = xf / np.sqrt(np.mean(xf * xf, axis=-1, keepdims=True) + np.float32(1e-6)) * gamma.astype(np.float32)
    return (n.astype(ml_dtypes.bfloat16).astype(np.float32) @ w.astype(np.float32).T).astype(ml_dtypes.bfloat16)


def make_std(unroll=(4, 2), static_t: int | None = None):
    t_dim = pypto.DYNAMIC if static_t is None else static_t

    @pypto.frontend.jit(pass_options={"vec_nbuffer_setting": {0: 2}})
    def std(
        x: pypto.Tensor([t_dim, K], BF16),
        gamma: pypto.Tensor([K], BF16),
        w: pypto.Tensor([N, K], BF16),
        out: pypto.Tensor([t_dim, N], BF16),
    ):
        w.set_cache_policy(pypto.CachePolicy.NONE_CACHEABLE, True)
        for idx, p in pypto.loop_unroll(0, x.shape[0], 1, unroll_list=list(unroll)):
            xt = pypto.view(x, [p, K], [idx, 0])
            pypto.set_semantic_label("rmsnorm")
            n = pypto.rms_norm(pypto.cast(pypto.clone(xt), FP32), gamma, 1e-6)
            pypto.set_semantic_label("linear")
            y = pypto.matmul(pypto.cast(n, BF16), w, FP32, b_trans=True)
            pypto.assemble(pypto.cast(y, BF16), [idx, 0], out)

    return std


@pytest.mark.parametrize("t", [1, 7, 13])
def test_standard_kernel_runs_in_place(t: int) -> None:
    std = make_std()
    x, gamma, w = data(t, t)
    out = np.zeros((t, N), ml_dtypes.bfloat16)
    std(x, gamma, w, out)
    assert check(out, golden(x, gamma, w)).ok
    assert std.report.cycles > 0 and std.result.level == "npu"
    assert len(std.compiled) == 1  # one trace serves every token count


def test_static_token_annotation_finds_the_token_axis() -> None:
    # PyPTO kernels often annotate the token count itself: the loop's views say which
    # parameters it tiles, even when a weight has as many rows as there are tokens.
    std = make_std(static_t=N)
    x, gamma, w = data(N, 3)
    out = np.zeros((N, N), ml_dtypes.bfloat16)
    std(x, gamma, w, out)
    assert check(out, golden(x, gamma, w)).ok
    text = str(std.trace(x, gamma, w, out))
    assert f"%x: tensor<?x{K}xbf16>" in text and f"%w: tensor<{N}x{K}xbf16>" in text


def test_trace_is_the_builders_ir() -> None:
    x, gamma, w = data(2)
    traced = make_std().trace(x, gamma, w, np.zeros((2, N), ml_dtypes.bfloat16))
    k = pto.Kernel("std", unroll=[4, 2, 1], options={"vec_nbuffer_setting": {0: 2}})
    xa, ga, wa = (
        k.arg("x", [None, K], "bf16"),
        k.arg("gamma", [K], "bf16"),
        k.arg("w", [N, K], "bf16", "none_cacheable"),
    )
    n = pto.rms_norm(pto.cast(xa, "f32", label="rmsnorm"), ga, 1e-6, "f32", label="rmsnorm")
    y = pto.matmul(pto.cast(n, "bf16", label="linear"), wa, b_trans=True, out_dtype="f32", label="linear")
    k.ret(pto.cast(y, "bf16", label="linear"))
    assert str(traced) == str(k.module())


@pytest.mark.parametrize("value, policy", [(True, "none_cacheable"), (False, "normal"), (None, None)])
def test_set_cache_policy_pins_either_policy(value, policy) -> None:
    # NONE_CACHEABLE False is PyPTO's explicit "cacheable": pinned `normal`, as no call
    # (None here) leaves the policy to tile-annotate-cache
    def body(xt, w, out, idx, p):
        if value is not None:
            w.set_cache_policy(pypto.CachePolicy.NONE_CACHEABLE, value)
        pypto.assemble(pypto.matmul(xt, w, FP32, b_trans=True), [idx, 0], out)

    x, w, out = (np.zeros(s, np.float32) for s in [(2, K), (N, K), (2, N)])
    text = str(_xw(body).trace(x, w, out))
    assert (f"pto.cache = #pto.cache<{policy}>" in text) if policy else "pto.cache" not in text


def test_pypto_loop_with_a_valid_shape_tail() -> None:
    tile = 4

    @pypto.frontend.jit
    def tiled(
        x: pypto.Tensor([pypto.DYNAMIC, K], BF16),
        gamma: pypto.Tensor([K], BF16),
        w: pypto.Tensor([N, K], BF16),
        out: pypto.Tensor([pypto.DYNAMIC, N], BF16),
    ):
        T = x.shape[0]
        for i in pypto.loop((T + tile - 1) // tile):
            off = i * tile
            xt = pypto.view(x, [tile, K], [off, 0], valid_shape=[pypto.min(tile, T - off), K])
            n = pypto.cast(pypto.rms_norm(pypto.cast(xt, FP32), gamma), BF16)
            pypto.assemble(pypto.cast(pypto.matmul(n, w, FP32, b_trans=True), BF16), [off, 0], out)

    for t in (3, 9):
        x, gamma, w = data(t, t)
        out = np.zeros((t, N), ml_dtypes.bfloat16)
        tiled(x, gamma, w, out)
        assert check(out, golden(x, gamma, w)).ok
    text = str(tiled.trace(x, gamma, w, out))
    assert "pto.unroll = array<i64: 4>, pto.tail" in text, text
    tiles = pto.compile(tiled.trace(x, gamma, w, out)).text("tile")
    assert "step 4 tail {" in tiles and "step 1 " not in tiles


SEED_EXAMPLES = [
    "standard_template",
    "mla_wqa_qrmsnorm",
    "mla_wkv_rmsnorm",
    "mla_wkv_rope",
    "mla_wkv_rope_interleaved",
    "indexer_query_linear_int8",
    "hc_pre",
    "at11_quant_linear",
]


@pytest.mark.parametrize("name", SEED_EXAMPLES)
def test_seed_examples(name: str) -> None:
    # Each runs against its numpy golden at a token count below and one not a multiple
    # of its tiles and factors (main asserts the acceptance rule).
    mod = example(name)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", pypto.NotModelledWarning)
        warnings.simplefilter("ignore", pypto.LoweringWarning)  # (rope's whole rows: tested below)
        mod.main(tokens=(1, 5))


def test_a_pass_s_warning_reaches_the_user_of_a_jit_kernel(tmp_path) -> None:
    """A vector tile narrower than a row that is not column-tiled runs whole rows; the
    jit path says so as a LoweringWarning at the line that called the kernel."""
    path = ROOT / "examples" / "pypto" / "mla_wkv_rope.py"
    narrow = tmp_path / "rope_narrow.py"
    narrow.write_text(path.read_text().replace("set_vec_tile_shapes(4, kv_lora_rank)", "set_vec_tile_shapes(4, 64)"))
    spec = importlib.util.spec_from_file_location("rope_narrow", narrow)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    with pytest.warns(
        pypto.LoweringWarning, match=r"vector tile \[4, 64\] is narrower than the 576-column row"
    ) as seen:
        mod.main(tokens=(1,))
    w = next(w for w in seen if issubclass(w.category, pypto.LoweringWarning))
    assert w.filename == str(narrow) and "mla_wkv_rope(" in narrow.read_text().splitlines()[w.lineno - 1]


@pytest.mark.parametrize("unroll", [{2, 4}, frozenset({4}), range(2, 5, 2)])
def test_unroll_list_is_any_collection_of_sizes(unroll) -> None:
    """PyPTO sorts `set(unroll_list)`: a model's `powers_of_2(32)` is a set."""
    x, _, w = data(5, 5)
    out = np.zeros((5, N), ml_dtypes.bfloat16)

    @pypto.frontend.jit
    def k(
        x: pypto.Tensor([pypto.DYNAMIC, K], BF16),
        w: pypto.Tensor([N, K], BF16),
        out: pypto.Tensor([pypto.DYNAMIC, N], BF16),
    ):
        for idx, p in pypto.loop_unroll(0, x.shape[0], 1, unroll_list=unroll):
            y = pypto.matmul(pypto.view(x, [p, K], [idx, 0]), w, FP32, b_trans=True)
            pypto.assemble(pypto.cast(y, BF16), [idx, 0], out)

    k(x, w, out)
    want = ", ".join(map(str, [*sorted(set(unroll), reverse=True), 1]))
    assert f"pto.unroll = array<i64: {want}>" in str(k.trace(x, w, out))


def test_a_cut_made_in_several_unrolled_bodies_is_one_warning() -> None:
    @pypto.frontend.jit
    def k(
        x: pypto.Tensor([pypto.DYNAMIC, 8192], FP32),
        w: pypto.Tensor([8192, N], FP32),
        out: pypto.Tensor([pypto.DYNAMIC, N], FP32),
    ):
        for idx, p in pypto.loop_unroll(0, x.shape[0], 1, unroll_list=[8, 4]):
            pypto.set_vec_tile_shapes(4, 8192)
            xt = pypto.view(x, [p, 8192], [idx, 0])
            h = pypto.exp(xt) * xt  # (two rows of buffers: x's is read after the exp)
            pypto.assemble(pypto.matmul(h, w, FP32), [idx, 0], out)

    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        k(np.ones((13, 8192), np.float32), np.ones((8192, N), np.float32), np.zeros((13, N), np.float32))
    cuts = [str(w.message) for w in seen if "pinned whole rows -> column chunks" in str(w.message)]
    assert len(cuts) == 1 and "(in the 4, 8-token bodies)" in cuts[0], cuts
    assert "the vector work before the matmul (vector stage):" in cuts[0], cuts  # (the kernel set no label)


def test_a_width_that_does_not_divide_the_row_is_not_said_when_the_phase_runs_whole_rows() -> None:
    """A [8, 512] tile on a 576-column phase that slices a computed value: whole rows,
    said once (not also "column chunks of 288", which are not made)."""

    @pypto.frontend.jit
    def k(
        x: pypto.Tensor([pypto.DYNAMIC, 64], FP32),
        w: pypto.Tensor([64, 576], FP32),
        o1: pypto.Tensor([pypto.DYNAMIC, 512], FP32),
        o2: pypto.Tensor([pypto.DYNAMIC, 64], FP32),
    ):
        for idx, p in pypto.loop_unroll(0, x.shape[0], 1, unroll_list=[8]):
            pypto.set_vec_tile_shapes(8, 512)
            z = pypto.exp(pypto.matmul(pypto.view(x, [p, 64], [idx, 0]), w, FP32))
            a, b = pypto.view(z, [p, 512], [0, 0]), pypto.view(z, [p, 64], [0, 512])
            pypto.assemble(a * 2.0, [idx, 0], o1)
            pypto.assemble(b + 1.0, [idx, 0], o2)

    x, w = np.full((9, 64), 1 / 64, np.float32), np.ones((64, 576), np.float32)
    o1, o2 = np.zeros((9, 512), np.float32), np.zeros((9, 64), np.float32)
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        k(x, w, o1, o2)
    said = [str(w.message) for w in seen if "vector tile [8, 512]" in str(w.message)]
    assert len(said) == 1 and "each task processes whole rows" in said[0], said
    assert check(o1, np.exp(x @ w)[:, :512] * 2).ok and check(o2, np.exp(x @ w)[:, 512:] + 1).ok


def test_a_stage_the_kernel_labelled_keeps_its_label_in_warnings() -> None:
    from pto.pypto.frontend import _in_kernel_words

    w = "k.py:3:1: warning: vector stage 'post': x; cube stage 'linear': y; vector stage 'gate': z"
    assert _in_kernel_words(w, {"linear"}) == (
        "k.py:3:1: warning: the vector work after the matmul (vector stage): x; cube stage 'linear': y; "
        "vector stage 'gate': z"
    )
    # (a LayerNorm is an RMSNorm of the centred rows to pto-fuse-stages: "the norm", the kernel's word)
    assert _in_kernel_words("vector stage 'rmsnorm': x", set()) == "the norm before the matmul (vector stage): x"


def test_an_op_built_in_a_kernel_is_located_at_its_call_s_column() -> None:
    """The ops' locations carry the column of the call that built them (Python's
    positions): a pass's warning about the matmul points at `pypto.matmul(`."""

    @pypto.frontend.jit
    def k(x: pypto.Tensor([pypto.DYNAMIC, K], I8), w: pypto.Tensor([K, 40], I8),
          out: pypto.Tensor([pypto.DYNAMIC, 40], I32)):  # fmt: skip
        for i, p in pypto.loop_unroll(0, x.shape[0], 1, unroll_list=[4, 1]):
            pypto.set_cube_tile_shapes([16, 16], [K, K], [32, 32], enable_split_k=True)
            y = pypto.matmul(pypto.view(x, [p, K], [i, 0]), w, I32)
            pypto.assemble(y, [i, 0], out)

    with pytest.warns(pypto.LoweringWarning) as seen:
        k(np.ones((5, K), np.int8), np.ones((K, 40), np.int8), np.zeros((5, 40), np.int32))
    said = next(str(w.message) for w in seen if "split-K off" in str(w.message))
    where = re.search(r"(\S+\.py):(\d+):(\d+): warning: the matmul", said)
    assert where is not None, said
    text = linecache.getline(where[1], int(where[2]))
    assert text.index("pypto.matmul(") + 1 == int(where[3]), (text, said)


def test_a_warning_shows_once_under_the_default_filter() -> None:
    """A kernel made and called again (the models' kernel factories compile at each call)
    warns once, as `warnings.warn` at one line does under the default filter."""

    def make():
        @pypto.frontend.jit
        def k(
            x: pypto.Tensor([pypto.DYNAMIC, K], I8),
            w: pypto.Tensor([K, 96], I8),
            out: pypto.Tensor([pypto.DYNAMIC, 96], I32),
        ):
            for i, p in pypto.loop_unroll(0, x.shape[0], 1, unroll_list=[4, 1]):
                pypto.set_cube_tile_shapes([16, 16], [K, K], [64, 64], enable_split_k=True)
                pypto.assemble(pypto.matmul(pypto.view(x, [p, K], [i, 0]), w, I32), [i, 0], out)

        return k

    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("default")
        for t in (1, 5):
            make()(np.ones((t, K), np.int8), np.ones((K, 96), np.int8), np.zeros((t, 96), np.int32))
    cut = [str(w.message) for w in seen if "split-K off (partial sums of an i32" in str(w.message)]
    assert len(cut) == 1 and "the matmul (cube stage): pinned tiles changed" in cut[0], cut


def _ops(module) -> list[tuple]:
    """The computation of a module: each op's name, operand and result types."""
    return [
        (o.name, [str(v.type) for v in o.operands], [str(r.type) for r in o.results])
        for o in module.walk()
        if o.name.startswith(("pto.", "func.return"))
    ]


@pytest.mark.parametrize(
    "name, args",
    [
        ("mla_wqa_qrmsnorm", lambda m: (*m.inputs(2), np.zeros((2, 1024), ml_dtypes.bfloat16))),
        ("mla_wkv_rmsnorm", lambda m: (*m.inputs(2), np.zeros((2, 512), ml_dtypes.bfloat16))),
    ],
)
def test_seed_kernels_are_the_mlir_examples(name, args) -> None:
    # The PyPTO source (a hand-written RMSNorm in mla_wqa), once its stages are fused,
    # computes what the .mlir example says, op for op.
    from kernels import parse

    mod = example(name)
    kernel = next(v for v in vars(mod).values() if isinstance(v, pypto.frontend.JitKernel))
    fused = pto.compile(kernel.trace(*args(mod)), pipeline="pto-fuse-stages").levels["pto"]
    ref = parse((ROOT / "examples" / f"{name}.mlir").read_text())
    assert _ops(fused) == _ops(ref)


def _xw(body, unroll=(2,)):
    """A kernel of x [T, K], w [N, K] and out [T, N] (unroll [2, 1] unless given), whose
    loop body is `body(x tile, w, out, idx, p)`."""

    @pypto.frontend.jit
    def k(
        x: pypto.Tensor([pypto.DYNAMIC, K], FP32),
        w: pypto.Tensor([N, K], FP32),
        out: pypto.Tensor([pypto.DYNAMIC, N], FP32),
    ):
        for idx, p in pypto.loop_unroll(0, x.shape[0], 1, unroll_list=list(unroll)):
            body(pypto.view(x, [p, K], [idx, 0]), w, out, idx, p)

    return k


def _linear_of(body):
    """out = body(x tile, p) @ w.T"""
    return _xw(lambda xt, w, out, i, p: pypto.assemble(pypto.matmul(body(xt, p), w, FP32, b_trans=True), [i, 0], out))


def test_a_split_k_written_by_hand_is_one_split_k_matmul() -> None:
    kc = K // 4

    def body(xt, w, out, idx, p):
        pypto.set_cube_tile_shapes([16, 16], [16, 16], [32, 32])
        acc = None
        for j in range(4):
            part = pypto.matmul(
                pypto.view(xt, [p, kc], [0, j * kc]), pypto.view(w, [N, kc], [0, j * kc]), FP32, b_trans=True
            )
            acc = part if acc is None else pypto.add(acc, part)
        pypto.assemble(acc, [idx, 0], out)

    sk = _xw(body, unroll=[4])
    rng = np.random.default_rng(1)
    x, w = rng.standard_normal((6, K), dtype=np.float32), rng.standard_normal((N, K), dtype=np.float32)
    out = np.zeros((6, N), np.float32)
    sk(x, w, out)
    assert check(out, x @ w.T).ok
    text = str(sk.trace(x, w, out))
    assert text.count("pto.matmul") == 1 and "split_k" in text, text


@pytest.mark.parametrize(
    "body, message",
    [
        (
            lambda xt, w, kc: pypto.matmul(
                pypto.view(xt, [xt.shape[0], kc], [0, 0]), pypto.view(w, [N, kc], [0, 0]), FP32, b_trans=True
            ),
            f"the partial matmuls cover K [0, {K // 4}) of {K}",
        ),
        (
            lambda xt, w, kc: pypto.add(
                pypto.matmul(
                    pypto.view(xt, [xt.shape[0], kc], [0, 0]), pypto.view(w, [N, kc], [0, 0]), FP32, b_trans=True
                ),
                pypto.matmul(
                    pypto.view(xt, [xt.shape[0], kc], [0, 2 * kc]),
                    pypto.view(w, [N, kc], [0, 2 * kc]),
                    FP32,
                    b_trans=True,
                ),
            ),
            "are not adjacent",
        ),
        (
            lambda xt, w, kc: pypto.matmul(
                pypto.view(xt, [xt.shape[0], kc], [0, 0]), pypto.view(w, [N, kc], [0, kc]), FP32, b_trans=True
            ),
            "must take the same K range",
        ),
    ],
)
def test_a_split_k_by_hand_that_does_not_cover_k_is_refused(body, message) -> None:
    sk = _xw(lambda xt, w, out, idx, p: pypto.assemble(body(xt, w, K // 4), [idx, 0], out), unroll=[4])
    with pytest.raises(pto.BuildError, match="pto.pypto") as e:
        sk(np.ones((3, K), np.float32), np.ones((N, K), np.float32), np.zeros((3, N), np.float32))
    assert message in str(e.value), str(e.value)


@pytest.mark.parametrize(
    "matmul, message",
    [
        (
            lambda xt, w: pypto.matmul(xt, w, FP32),
            f"the input [2, {K}] has {K} (a_trans=False), mat2 [{N}, {K}] has {N}",
        ),
        (
            lambda xt, w: pypto.matmul(xt, w, FP32, a_trans=True, b_trans=True),
            f"the input [2, {K}] has 2 (a_trans=True), mat2 [{N}, {K}] has {K} (b_trans=True)",
        ),
        (  # a transposed weight flips b_trans
            lambda xt, w: pypto.matmul(xt, pypto.transpose(w, 0, 1), FP32, b_trans=True),
            f"mat2 [{N}, {K}] has {N} (b_trans=False)",
        ),
    ],
)
def test_a_matmuls_k_is_checked_at_its_line(matmul, message) -> None:
    k = _xw(lambda xt, w, out, idx, p: pypto.assemble(matmul(xt, w), [idx, 0], out))
    with pytest.raises(pto.BuildError, match="pypto.matmul's operands disagree on K") as e:
        k(np.ones((3, K), np.float32), np.ones((N, K), np.float32), np.zeros((3, N), np.float32))
    assert message in str(e.value), str(e.value)
    assert str(e.value).startswith(f"{__file__}:{matmul.__code__.co_firstlineno}: error:"), str(e.value)


# ------------------------------------------------------------------ column views, concat


def test_column_views_concat_and_negation_are_slices_and_concats() -> None:
    # RoPE's rotate_half on a token tile: columns by view and by x[:, a:b], -x, concat
    # along the last axis (-1 or rank - 1); a column view read twice is one slice.
    half = K // 2

    @pypto.frontend.jit
    def k(
        x: pypto.Tensor([pypto.DYNAMIC, K], FP32),
        w: pypto.Tensor([K, K], FP32),
        out: pypto.Tensor([pypto.DYNAMIC, K], FP32),
    ):
        for idx, p in pypto.loop_unroll(0, x.shape[0], 1, unroll_list=[4, 2]):
            xt = pypto.matmul(pypto.view(x, [p, K], [idx, 0]), w, FP32)
            x1 = pypto.view(xt, [p, half], [0, 0])
            x2 = xt[:, half:K]
            rot = pypto.concat([-x2, x1], dim=1)
            pypto.assemble(pypto.concat([pypto.add(x1, x1), rot[:, 0:half]], -1) * 2.0, [idx, 0], out)

    rng = np.random.default_rng(3)
    x, w = rng.standard_normal((7, K), dtype=np.float32), rng.standard_normal((K, K), dtype=np.float32)
    out = np.zeros_like(x)
    k(x, w, out)
    r = x @ w
    want = np.concatenate([2 * r[:, :half], -r[:, half:]], axis=-1) * 2
    assert check(out, want).ok
    text = str(k.trace(x, w, out))
    assert text.count("pto.slice") == 3 and text.count("pto.concat") == 2, text
    assert "-1.000000e+00" in text


def test_a_view_at_a_row_and_a_column_offset_is_a_tile_and_its_columns() -> None:
    @pypto.frontend.jit
    def k(
        x: pypto.Tensor([pypto.DYNAMIC, K], FP32),
        w: pypto.Tensor([K // 2, N], FP32),
        out: pypto.Tensor([pypto.DYNAMIC, N], FP32),
    ):
        for idx, p in pypto.loop_unroll(0, x.shape[0], 1, unroll_list=[4, 1]):
            right = pypto.view(x, [p, K // 2], [idx, K // 2], valid_shape=[p, K // 2])
            pypto.assemble(pypto.matmul(right * 2.0, w, FP32), [idx, 0], out)

    rng = np.random.default_rng(5)
    x, w = rng.standard_normal((6, K), dtype=np.float32), rng.standard_normal((K // 2, N), dtype=np.float32)
    out = np.zeros((6, N), np.float32)
    k(x, w, out)
    assert check(out, (x[:, K // 2 :] * 2) @ w).ok
    assert f"pto.slice %x at {K // 2}" in str(k.trace(x, w, out))


# ------------------------------------------------------------------ refusals


def _kernel(body):
    @pypto.frontend.jit
    def k(x: pypto.Tensor([pypto.DYNAMIC, K], FP32), out: pypto.Tensor([pypto.DYNAMIC, K], FP32)):
        for idx, p in pypto.loop_unroll(0, x.shape[0], 1, unroll_list=[2]):
            xt = pypto.view(x, [p, K], [idx, 0])
            pypto.assemble(body(xt, idx, p), [idx, 0], out)

    return k


@pytest.mark.parametrize(
    "body, message",
    [
        (lambda xt, i, p: pypto.transpose(xt, 0, 1), "a pypto.transpose is supported only as an operand of a matmul"),
        (lambda xt, i, p: pypto.sin(xt), "pypto.sin (a PyPTO 0.2.0 name) is not modelled here"),
        (lambda xt, i, p: xt[0:1], "pypto.assemble of a row of a tile"),  # (row 0: x[0:1] is x[0:1, ...])
        (lambda xt, i, p: pypto.concat([xt, xt], 0), "pypto.concat along dim 0 of rank-2 tensors: only the last axis"),
        (lambda xt, i, p: pypto.concat([xt, pypto.cast(xt, BF16)], -1), "pypto.concat of DT_FP32 and DT_BF16"),
        (lambda xt, i, p: pypto.concat([xt], -1), "pypto.concat takes a list of at least 2 tensors"),
        (lambda xt, i, p: xt[:, 0:K:2], "slicing a tensor"),
        (lambda xt, i, p: pypto.sum(xt, 0, keepdim=True), "only the last axis"),
        (lambda xt, i, p: pypto.view(xt, [p, 32], [i, 32]), "a token-tile view of a computed value is not supported"),
        (lambda xt, i, p: pypto.view(xt, [p, 32], [0, 40]), "views here take whole tensors"),
        (lambda xt, i, p: pypto.view(xt, [1, K], [0, 0]), "pypto.assemble of a row of a tile"),
        (lambda xt, i, p: xt if p == 2 else pypto.sqrt(xt), "computes other ops than for p=2"),
        # the same ops, but not the same body: each factor would run the first's
        (lambda xt, i, p: xt * (2.0 if p == 2 else 3.0), "differs from the one for p=2 in its op #1 (pto.muls"),
        (
            lambda xt, i, p: pypto.sub(xt, pypto.exp(xt)) if p == 2 else pypto.sub(pypto.exp(xt), xt),
            "differs from the one for p=2 in its op #2 (pto.sub",
        ),
        (lambda xt, i, p: pypto.sqrt(xt) if i == 0 else xt, "the symbolic integer idx has no value"),
        (lambda xt, i, p: pypto.sqrt(xt) if i != 0 else xt, "the symbolic integer idx has no value"),
        (lambda xt, i, p: pypto.sqrt(xt) if i in {0} else xt, "the symbolic integer idx has no value"),
        (lambda xt, i, p: pypto.view(xt, [p, K], [abs(i), 0]), "only + - * // % and unary - combine it"),
        (lambda xt, i, p: pypto.view(xt, [p, K], [i / 1, 0]), "only + - * // % and unary - combine it"),
        (lambda xt, i, p: pypto.cast(xt, pypto.DT_INT64), "DT_INT64 is not modelled"),
        (lambda xt, i, p: pypto.add(xt, pypto.cast(xt, BF16)), "cast one first"),
    ],
)
def test_unsupported_pypto_is_refused_at_the_users_line(body, message) -> None:
    k = _kernel(body)
    x = np.ones((3, K), np.float32)
    with pytest.raises(pto.BuildError, match="pto.pypto") as e:
        k(x, np.zeros_like(x))
    assert message in str(e.value) and f"{__file__}:" in str(e.value), str(e.value)


def test_tensor_methods_are_the_ops_with_the_tensor_first() -> None:
    def body(xt, w, out, idx, p):
        y = abs(xt.exp().sqrt()).matmul(w, FP32, b_trans=True)
        out.assemble(y.mul(2.0), [idx, 0])

    k = _xw(body)

    rng = np.random.default_rng(3)
    x, w = rng.standard_normal((3, K), dtype=np.float32), rng.standard_normal((N, K), dtype=np.float32)
    out = np.zeros((3, N), np.float32)
    k(x, w, out)
    assert check(out, (np.sqrt(np.exp(x)) @ w.T) * 2).ok


@pytest.mark.parametrize(
    "use, message",
    [
        (lambda xt: xt.cumsum(-1), "Tensor.cumsum is not modelled here"),
        (lambda xt: xt.valid_shape, "Tensor.valid_shape is not modelled here"),
        (lambda xt: xt % 2, "this Python operator on a tensor is not supported"),
        (lambda xt: xt**0, "pypto.pow's exponent 0 is not modelled"),
        (lambda xt: xt > 0, "a comparison is read only as pypto.where's condition"),
        (lambda xt: xt // 2, "this Python operator on a tensor is not supported"),
        (lambda xt: pypto.get_pass_options(), "pypto.get_pass_options (a PyPTO 0.2.0 name) is not modelled"),
        (lambda xt: pypto.ReduceMode.SUM, "pypto.ReduceMode (a PyPTO 0.2.0 name) is not modelled"),
        (
            lambda xt: pypto.frontend.SymbolicScalar(xt),
            "pypto.frontend.SymbolicScalar (a PyPTO 0.2.0 name) is not modelled",
        ),
        (lambda xt: pypto.experimental.nop(), "pypto.experimental.nop (a PyPTO 0.2.0 name) is not modelled"),
    ],
)
def test_other_pypto_names_and_operators_are_refused_by_name(use, message) -> None:
    k = _kernel(lambda xt, i, p: use(xt))
    x = np.ones((3, K), np.float32)
    with pytest.raises(pto.BuildError, match="pto.pypto") as e:
        k(x, np.zeros_like(x))
    assert message in str(e.value) and f"{__file__}:" in str(e.value), str(e.value)
    with pytest.raises(AttributeError):
        pypto.no_such_name  # noqa: B018 (not a PyPTO name: Python's own error)


@pytest.mark.parametrize(
    "body, want",
    [
        (lambda xt, p: pypto.add(pypto.full([p, K], 2.0, FP32), xt, alpha=3), lambda x: 2 + 3 * x),
        (lambda xt, p: +pypto.reshape(xt, [p, K]), lambda x: x),  # to its own shape: xt itself
        (lambda xt, p: pypto.sub(pypto.full([p, K], 2.0, FP32), xt), lambda x: 2 - x),
        (lambda xt, p: pypto.sub(pypto.full([1, K], 2.0, FP32), xt, alpha=3), lambda x: 2 - 3 * x),
        (lambda xt, p: pypto.add(xt, pypto.full([p, 1], 0.5, FP32)), lambda x: x + 0.5),
    ],
)
def test_a_full_folds_into_either_operand(body, want) -> None:
    k = _linear_of(body)
    x, w = np.random.default_rng(4).standard_normal((3, K), dtype=np.float32), np.eye(N, K, dtype=np.float32)
    out = np.zeros((3, N), np.float32)
    k(x, w, out)
    assert check(out, want(x)[:, :N]).ok


@pytest.mark.parametrize(
    "body, message",
    [
        (lambda xt, p: pypto.add(xt, pypto.full([p + 3, K + 1], 2.0, FP32)), "does not broadcast"),
        (lambda xt, p: pypto.mul(pypto.full([p, K], 2.0, BF16), xt), "cast one first"),
    ],
)
def test_a_full_that_does_not_fit_its_operand_is_refused(body, message) -> None:
    x = np.ones((3, K), np.float32)
    with pytest.raises(pto.BuildError, match=message):
        _linear_of(body)(x, np.ones((N, K), np.float32), np.zeros((3, N), np.float32))


def test_every_parameters_token_count_is_the_token_count() -> None:
    hc, d, mix = 4, 16, 32

    @pypto.frontend.jit
    def k(
        x: pypto.Tensor([pypto.DYNAMIC, hc, d], FP32),
        fn: pypto.Tensor([mix, hc * d], FP32),
        y: pypto.Tensor([pypto.DYNAMIC, mix], FP32),
    ):
        x2 = pypto.reshape(x, [y.shape[0], hc * d], inplace=True)  # y's T: x's too
        for i, p in pypto.loop_unroll(0, x.shape[0], 1, unroll_list=[4]):
            tile = pypto.view(x2, [p, hc * d], [i + (-i) + i, 0])  # (-i: a symbolic integer negated)
            pypto.assemble(pypto.matmul(tile, fn, FP32, b_trans=True), [i, 0], y)

    rng = np.random.default_rng(1)
    x, fn = rng.standard_normal((7, hc, d), dtype=np.float32), rng.standard_normal((mix, hc * d), dtype=np.float32)
    out = np.zeros((7, mix), np.float32)
    k(x, fn, out)
    assert check(out, x.reshape(7, -1) @ fn.T).ok


def test_an_input_that_is_also_assembled_into_is_refused() -> None:
    @pypto.frontend.jit
    def k(x: pypto.Tensor([pypto.DYNAMIC, K], FP32), w: pypto.Tensor([K, K], FP32)):
        for idx, p in pypto.loop_unroll(0, x.shape[0], 1, unroll_list=[2]):
            pypto.assemble(pypto.matmul(pypto.view(x, [p, K], [idx, 0]), w, FP32), [idx, 0], x)

    with pytest.raises(pto.BuildError, match="parameter 'x' is both read and assembled into"):
        k(np.ones((3, K), np.float32), np.ones((K, K), np.float32))


def test_a_kernel_that_is_a_method_and_kernels_that_are_not_supported() -> None:
    class Model:
        scale = 2.0

        @pypto.frontend.jit
        def k(
            self,
            x: pypto.Tensor([pypto.DYNAMIC, K], FP32),
            w: pypto.Tensor([N, K], FP32),
            out: pypto.Tensor([pypto.DYNAMIC, N], FP32),
        ):
            for idx, p in pypto.loop_unroll(0, x.shape[0], 1, unroll_list=[2]):
                y = pypto.matmul(pypto.view(x, [p, K], [idx, 0]), w, FP32, b_trans=True)
                pypto.assemble(y * self.scale, [idx, 0], out)

    x, w, out = np.ones((3, K), np.float32), np.ones((N, K), np.float32), np.zeros((3, N), np.float32)
    m = Model()
    m.k(x, w, out)
    assert np.array_equal(out, np.full((3, N), 2.0 * K, np.float32))
    assert m.k.report is Model.k.report is not None and "pto.matmul" in str(m.k.trace(x, w, out))
    with pytest.raises(pto.BuildError, match="jit decorates a function"):
        pypto.frontend.jit(Model.k)
    inner = _linear()
    with pytest.raises(pto.BuildError, match="a jit kernel is not called inside another"):
        _linear_of(lambda xt, p: inner(xt, xt, xt))(x, w, out)


def test_annotations_are_checked_and_printed_as_written() -> None:
    with pytest.raises(
        pto.BuildError, match=r"dimensions are positive integers, DYNAMIC or STATIC, got \[pypto.DYNAMIC, 0\]"
    ):
        pypto.Tensor([pypto.DYNAMIC, 0], FP32)
    k = _kernel(lambda xt, i, p: pypto.sqrt(xt))
    with pytest.raises(pto.BuildError, match=r"its annotation \[pypto.DYNAMIC, 64\]"):
        k(np.ones((3, K + 1), np.float32), np.zeros((3, K), np.float32))


def test_arguments_are_checked_against_the_annotations() -> None:
    k = _kernel(lambda xt, i, p: pypto.sqrt(xt))
    with pytest.raises(pto.BuildError, match="argument 'x' is float64, its annotation DT_FP32"):
        k(np.ones((3, K)), np.zeros((3, K), np.float32))
    with pytest.raises(
        pto.BuildError,
        match=r"argument .out. has 4 rows on its DYNAMIC axis \(dim 0\), another argument 3: every DYNAMIC axis here is the token axis",
    ):
        k(np.ones((3, K), np.float32), np.zeros((4, K), np.float32))
    with pytest.raises(pto.BuildError, match="must be a numpy array or a torch CPU tensor"):
        k([1, 2], np.zeros((3, K), np.float32))


def test_a_value_of_one_factors_body_is_not_used_by_another() -> None:
    kept = []

    def body(xt, i, p):
        kept.append(pypto.exp(xt))
        return pypto.sqrt(kept[0])

    with pytest.raises(pto.BuildError, match="computed in the loop body for another unroll factor"):
        _kernel(body)(np.ones((3, K), np.float32), np.zeros((3, K), np.float32))


def test_bodies_that_assemble_into_other_outputs_per_factor_are_refused() -> None:
    @pypto.frontend.jit
    def k(
        x: pypto.Tensor([pypto.DYNAMIC, K], FP32),
        a: pypto.Tensor([pypto.DYNAMIC, K], FP32),
        b: pypto.Tensor([pypto.DYNAMIC, K], FP32),
    ):
        for idx, p in pypto.loop_unroll(0, x.shape[0], 1, unroll_list=[2]):
            xt = pypto.view(x, [p, K], [idx, 0])
            pypto.assemble(pypto.exp(xt), [idx, 0], a if p == 2 else b)
            pypto.assemble(pypto.sqrt(xt), [idx, 0], b if p == 2 else a)

    x = np.ones((3, K), np.float32)
    with pytest.raises(pto.BuildError, match="differs from the one for p=2 in the outputs it assembles into"):
        k(x, np.zeros_like(x), np.zeros_like(x))


def _linear(scale_of=lambda scale: scale):
    """y = x @ w.T * scale_of(scale), `scale` (default 1.0) a non-tensor argument; unroll [2, 1]."""

    @pypto.frontend.jit
    def k(
        x: pypto.Tensor([pypto.DYNAMIC, K], FP32),
        w: pypto.Tensor([N, K], FP32),
        out: pypto.Tensor([pypto.DYNAMIC, N], FP32),
        scale=1.0,
    ):
        for idx, p in pypto.loop_unroll(0, x.shape[0], 1, unroll_list=[2]):
            y = pypto.matmul(pypto.view(x, [p, K], [idx, 0]), w, FP32, b_trans=True)
            pypto.assemble(y * scale_of(scale), [idx, 0], out)

    return k


def test_scalar_arguments_are_part_of_the_trace() -> None:
    # PyPTO keys its compiled kernels on non-tensor arguments too: each value its own trace
    k = _linear()
    rng = np.random.default_rng(0)
    x, w = rng.standard_normal((3, K), dtype=np.float32), rng.standard_normal((N, K), dtype=np.float32)
    out = np.zeros((3, N), np.float32)
    k(x, w, out)
    base = out.copy()
    for scale in (3.0, 5.0, 3.0, -0.0, np.float32(2.0)):
        k(x, w, out, scale)
        want = base * np.float32(scale)
        assert np.array_equal(out, want) and np.array_equal(np.signbit(out), np.signbit(want)), scale
    assert len(k.compiled) == 5  # 1.0, 3.0, 5.0, -0.0 and np.float32(2.0)


def test_an_argument_whose_value_may_change_is_traced_at_each_call() -> None:
    class Config:  # hashed by identity: its field may change between calls
        scale = 2.0

    k = _linear(lambda cfg: cfg.scale)
    cfg, rng = Config(), np.random.default_rng(0)
    x, w = rng.standard_normal((3, K), dtype=np.float32), rng.standard_normal((N, K), dtype=np.float32)
    out = np.zeros((3, N), np.float32)
    k(x, w, out, cfg)
    base = out / np.float32(2.0)
    cfg.scale = 5.0
    k(x, w, out, cfg)
    assert np.array_equal(out, base * np.float32(5.0))
    assert not k.compiled  # (nothing kept for such an argument)


def test_a_dataclass_config_is_keyed_on_its_fields_at_each_call() -> None:
    """corpus20's k182 (DeepSeek-V3.2's indexer with its `IndexerPrologQuantConfigs`
    dataclass) traced the kernel again at every token count; its fields' values are the
    key, so a field changed between calls is traced again and equal values are not."""

    @dataclasses.dataclass
    class Config:
        scale: float
        tiles: list

    k = _linear(lambda cfg: cfg.scale)
    cfg, rng = Config(2.0, [8, 1]), np.random.default_rng(0)
    x, w = rng.standard_normal((3, K), dtype=np.float32), rng.standard_normal((N, K), dtype=np.float32)
    out = np.zeros((3, N), np.float32)
    k(x, w, out, cfg)
    base = out / np.float32(2.0)
    k(x[:2], w, out[:2], Config(2.0, [8, 1]))  # equal fields: the same kernel
    assert len(k.compiled) == 1
    cfg.scale = 5.0
    k(x, w, out, cfg)
    assert np.array_equal(out, base * np.float32(5.0)) and len(k.compiled) == 2


def test_outputs_are_checked_before_the_run() -> None:
    k = _linear()
    x, w = np.ones((3, K), np.float32), np.ones((N, K), np.float32)
    read_only = np.zeros((3, N), np.float32)
    read_only.setflags(write=False)
    with pytest.raises(pto.BuildError, match="output 'out' is read-only"):
        k(x, w, read_only)
    rows = np.lib.stride_tricks.as_strided(np.zeros(N, np.float32), (3, N), (0, 4), writeable=True)
    with pytest.raises(pto.BuildError, match="output 'out' has elements that share memory"):
        k(x, w, rows)
    assert k.report is None  # nothing ran
    out = np.zeros((N, 3), np.float32).T  # strided, but no two elements share memory: written
    k(x, w, out)
    assert np.array_equal(out, np.full((3, N), K, np.float32))


def test_a_torch_tensor_numpy_cannot_read_is_refused() -> None:
    class Tensor:  # as torch's, for a tensor that requires grad
        __module__ = "torch"
        device, dtype = "cpu", "torch.float32"

        def numpy(self):
            raise RuntimeError("Can't call numpy() on Tensor that requires grad")

    k = _kernel(lambda xt, i, p: pypto.sqrt(xt))
    with pytest.raises(pto.BuildError, match="argument 'x' cannot be read as a dense CPU array"):
        k(Tensor(), np.zeros((3, K), np.float32))


@pytest.mark.parametrize(
    "options, message",
    [
        ({"pass_options": {"vec_nbuffer_setting": {0: 2.5}}}, "the count for axis 0 must be a positive integer"),
        ({"pass_options": {"vec_nbuffer_setting": {0: None}}}, "the count for axis 0 must be a positive integer"),
        ({"pass_options": {"vec_nbuffer_setting": {1.5: 2}}}, "key 1.5 is not an integer group id"),
        ({"pass_options": {"cube_l1_reuse_setting": {"Query-Linear": 4}}}, "key 'Query-Linear' is not an integer"),
        ({"runtime_options": {"stitch_function_max_num": 1.5}}, "stitch_function_max_num must be a positive integer"),
    ],
)
def test_option_values_are_checked(options, message) -> None:
    with pytest.raises(pto.BuildError, match=message):

        @pypto.frontend.jit(**options)
        def k(x: pypto.Tensor([pypto.DYNAMIC, K], FP32), out: pypto.Tensor([pypto.DYNAMIC, K], FP32)):
            for idx, p in pypto.loop_unroll(0, x.shape[0], 1):
                pypto.assemble(pypto.view(x, [p, K], [idx, 0]), [idx, 0], out)

        k(np.ones((2, K), np.float32), np.zeros((2, K), np.float32))


def test_a_jit_pass_option_is_checked_at_the_decorator() -> None:
    with pytest.raises(pto.BuildError, match="key 'linear' is not an integer group id") as e:

        @pypto.frontend.jit(pass_options={"cube_l1_reuse_setting": {"linear": 4}})  # the decorator
        def k(x: pypto.Tensor([pypto.DYNAMIC, K], FP32), out: pypto.Tensor([pypto.DYNAMIC, K], FP32)):
            pass

    lines = pathlib.Path(__file__).read_text().splitlines()
    (n,) = [i + 1 for i, t in enumerate(lines) if t.endswith("# the decorator")]
    assert str(e.value).startswith(f"{__file__}:{n}:"), str(e.value)


def test_options_not_modelled_are_reported_once() -> None:
    @pypto.frontend.jit(runtime_options={"device_sched_mode": 1}, pass_options={"sg_set_scope": 1})
    def k(
        x: pypto.Tensor([pypto.DYNAMIC, K], FP32),
        w: pypto.Tensor([K, K], FP32),
        out: pypto.Tensor([pypto.DYNAMIC, K], FP32),
    ):
        for idx, p in pypto.loop_unroll(0, x.shape[0], 1, unroll_list=[2]):
            pypto.experimental.set_operation_options(combine_axis=True)
            y = pypto.matmul(pypto.sqrt(pypto.view(x, [p, K], [idx, 0])), w, FP32)
            pypto.assemble(y, [idx, 0], out)

    x, w = np.ones((3, K), np.float32), np.eye(K, dtype=np.float32)
    out = np.zeros_like(x)
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        k(x, w, out)
        k(x, w, out)
    msgs = sorted(str(w.message) for w in seen if issubclass(w.category, pypto.NotModelledWarning))
    assert msgs == [
        "pto.pypto: operation option combine_axis is accepted but not modelled",
        "pto.pypto: pass option sg_set_scope is accepted but not modelled",
        "pto.pypto: runtime option device_sched_mode is accepted but not modelled",
    ], msgs
    assert np.allclose(out, 1.0)


@pytest.mark.parametrize(
    "options, message",
    [
        ({"pass_options": {"vec_nbuffer": {0: 2}}}, "pass option 'vec_nbuffer' (did you mean 'vec_nbuffer_setting'?)"),
        (
            {"runtime_options": {"stitch_function_max_nums": 128}},
            "runtime option 'stitch_function_max_nums' (did you mean 'stitch_function_max_num'?)",
        ),
        ({"runtime_options": {"speed": 1}}, "runtime option 'speed' (PyPTO 0.2.0's: device_sched_mode, "),
        ({"debug_options": {"runtime_debug": 1}}, "debug option 'runtime_debug' (did you mean 'runtime_debug_mode'?)"),
    ],
)
def test_an_option_name_pypto_does_not_have_is_an_error(options, message) -> None:
    with pytest.raises(pto.BuildError) as e:
        pypto.frontend.jit(**options)  # at the decorator's line, before the kernel is defined
    assert f"error: pto.pypto: unknown {message}" in str(e.value), str(e.value)
    assert e.value.where[0] == __file__
    k = _kernel(lambda xt, i, p: pypto.set_pass_options(sg_set_scop=1) or xt)
    with pytest.raises(pto.BuildError, match=r"unknown pass option 'sg_set_scop' \(did you mean 'sg_set_scope'\?\)"):
        k(np.ones((2, K), np.float32), np.zeros((2, K), np.float32))


def test_pypto_settings_of_its_own_build_are_accepted_and_said_not_modelled() -> None:
    # (PyPTO's tests set host and debug options before their kernels, codegen ones in them)
    with pytest.warns(pypto.NotModelledWarning, match="host option compile_timeout is accepted but not modelled"):
        pypto.set_host_options(compile_timeout=100, compile_stage=None)
    with pytest.warns(pypto.NotModelledWarning, match="debug option runtime_debug_mode is accepted"):
        pypto.set_debug_options(runtime_debug_mode=1)
    seen = []

    def body(xt, p):
        seen.append(pypto.get_cube_tile_shapes())
        pypto.set_cube_tile_shapes([16, 16], [32, 64], [32, 32])
        seen.append(pypto.get_cube_tile_shapes())
        pypto.set_codegen_options(support_dynamic_aligned=True)
        pypto.set_verify_options(enable_pass_verify=False)
        return xt

    rng = np.random.default_rng(0)
    x, w = rng.standard_normal((6, K), dtype=np.float32), rng.standard_normal((N, K), dtype=np.float32)
    out = np.zeros((6, N), np.float32)
    with pytest.warns(pypto.NotModelledWarning) as got:
        _linear_of(body)(x, w, out)
    assert {"codegen option support_dynamic_aligned", "verify option enable_pass_verify"} <= {
        str(w.message).split(": ")[1].removesuffix(" is accepted but not modelled") for w in got
    }
    assert seen[:2] == [([0, 0], [0, 0, 0], [0, 0], False), ([16, 16], [32, 64, 64], [32, 32], False)]
    assert check(out, x @ w.T).ok
    with pytest.raises(pto.BuildError, match=r"unknown codegen option 'support_dynamic' \(did you mean"):
        pypto.set_codegen_options(support_dynamic=True)


def test_every_option_pypto_has_is_accepted() -> None:
    from pto.pypto.frontend import RUNTIME_MODELLED
    from pto.pypto.hints import MODELLED_OPTIONS
    from pto.pypto.option_names import NAMES

    assert set(MODELLED_OPTIONS) <= set(NAMES["pass_options"])
    assert set(RUNTIME_MODELLED) <= set(NAMES["runtime_options"])
    for group, names in NAMES.items():
        pypto.frontend.jit(**{group: dict.fromkeys(names, 1)})  # (the values are checked when a kernel is made)


def test_tile_shapes_chosen_per_factor_reach_each_loop() -> None:
    # hc_pre picks its cube tiles from the unroll factor (`if tile_t <= 32:`): each
    # factor's loop gets its own (pto.by_unroll), not the first factor's.
    mod = example("hc_pre")
    x, hc_fn = mod.inputs(3)
    with pytest.warns(pypto.NotModelledWarning, match="sg_set_scope"):  # (the example sets it)
        traced = mod.hc_pre.trace(x, hc_fn, np.zeros((3, 24), np.float32))
    tiles = pto.compile(traced).text("tile")
    loops = tiles.split("tile.token_loop")[1:]
    assert len(loops) == 5
    assert "k = [512, 2048], n = [128, 128], split_k" in loops[0]  # 256
    assert "k = [512, 1024], n = [128, 128], split_k" in loops[1]  # 64
    for lp in loops[2:]:  # 16, 4, 1: tile_t <= 32, no split-K
        cube = next(line for line in lp.splitlines() if "tile.cube_stage" in line)
        assert "k = [512, 1024], n = [128, 128]" in cube and "split_k" not in cube, cube


def _vec_tiled(*tile: int):
    """A kernel whose vector op (a sqrt, on the line after the tile's) has `tile` pinned."""

    def body(xt, w, out, idx, p):
        pypto.set_vec_tile_shapes(*tile)
        y = pypto.sqrt(xt)
        pypto.assemble(pypto.matmul(y, w, FP32, b_trans=True), [idx, 0], out)

    return _xw(body), body.__code__.co_firstlineno + 2


def test_a_vector_tile_is_read_as_pypto_reads_it() -> None:
    # PyPTO 0.2.0 tiles a vector op with one size per dimension of its result: of a longer
    # tile the leading sizes (its simulator runs [2, 64, 8] as [2, 64]); a shorter one fails
    # its compilation ("Tile shape size 1 is not matched the output shape size 2").
    x, w, out = np.ones((3, K), np.float32), np.ones((N, K), np.float32), np.zeros((3, N), np.float32)
    longer, _ = _vec_tiled(2, K, 8)
    assert f"pto.sqrt %x {{pto.vec_tile = array<i64: 2, {K}>}}" in str(longer.trace(x, w, out))
    shorter, line = _vec_tiled(K)
    with pytest.raises(pto.BuildError) as e:
        shorter(x, w, out)
    assert str(e.value) == (
        f"{__file__}:{line}: error: pto.pypto: pypto.sqrt's result [2, {K}] has 2 dimensions, but the vector "
        f"tile of set_vec_tile_shapes({K}) has 1: give one size per dimension"
    )


def test_torch_cpu_tensors_are_written_in_place() -> None:
    # torch is not a dependency: this runs where it is installed (checked by hand with
    # PyPTO's venv, whose torch 2.x tensors share their storage with the numpy view).
    torch = pytest.importorskip("torch")
    std = make_std()
    x, gamma, w = (torch.from_numpy(a.view(np.int16)).view(torch.bfloat16) for a in data(5, 2))
    out = torch.zeros(5, N, dtype=torch.bfloat16)
    std(x, gamma, w, out)
    got = out.view(torch.int16).numpy().view(ml_dtypes.bfloat16)
    assert check(got, golden(*data(5, 2))).ok


def test_token_tiles_of_a_reshaped_parameter() -> None:
    # hc_pre style: the whole x reshaped in place before the loop (the token count as
    # its dim 0), token tiles viewed from the reshape, read by two stages.
    @pypto.frontend.jit
    def k(
        x: pypto.Tensor([pypto.DYNAMIC, 4, 16], BF16),
        w: pypto.Tensor([N, K], FP32),
        out: pypto.Tensor([pypto.DYNAMIC, N], FP32),
    ):
        t = x.shape[0]
        flat = pypto.reshape(x, [t, K], inplace=True)
        for idx, p in pypto.loop_unroll(0, t, 1, unroll_list=[4]):
            xt = pypto.view(flat, [p, K], [idx, 0])
            pypto.set_semantic_label("norm")
            r = pypto.sqrt(pypto.sum(pypto.cast(xt, FP32) * pypto.cast(xt, FP32), -1, keepdim=True) * (1.0 / K) + 1e-6)
            pypto.set_semantic_label("linear")
            y = pypto.matmul(pypto.cast(xt, FP32), w, FP32, b_trans=True)
            pypto.assemble(y / r, [idx, 0], out)

    rng = np.random.default_rng(2)
    x = rng.standard_normal((7, 4, 16), dtype=np.float32).astype(ml_dtypes.bfloat16)
    w = rng.standard_normal((N, K), dtype=np.float32)
    out = np.zeros((7, N), np.float32)
    k(x, w, out)
    xf = x.reshape(7, K).astype(np.float32)
    assert check(out, (xf @ w.T) / np.sqrt(np.mean(xf * xf, -1, keepdims=True) + np.float32(1e-6))).ok


@pytest.mark.parametrize("scale_first", [False, True])
def test_scaled_reciprocals_fold_into_the_multiply(scale_first: bool) -> None:
    # AT-11 kernels write `127.0 / amax` or `reciprocal(amax) * 127.0`.
    @pypto.frontend.jit
    def k(
        x: pypto.Tensor([pypto.DYNAMIC, K], FP32),
        w: pypto.Tensor([N, K], FP32),
        out: pypto.Tensor([pypto.DYNAMIC, N], FP32),
    ):
        for idx, p in pypto.loop_unroll(0, x.shape[0], 1, unroll_list=[2]):
            xt = pypto.view(x, [p, K], [idx, 0])
            amax = pypto.amax(pypto.abs(xt), -1, keepdim=True)
            inv = 127.0 / amax if scale_first else pypto.mul(pypto.reciprocal(amax), 127.0)
            y = pypto.mul(xt, inv)
            pypto.assemble(pypto.matmul(y, w, FP32, b_trans=True), [idx, 0], out)

    rng = np.random.default_rng(3)
    x, w = rng.standard_normal((5, K), dtype=np.float32), np.eye(N, K, dtype=np.float32)
    out = np.zeros((5, N), np.float32)
    k(x, w, out)
    want = (x * np.float32(127) / np.abs(x).max(-1, keepdims=True)) @ w.T
    assert check(out, want).ok


HELDOUT = ROOT / "test" / "python" / "Inputs" / "pypto_heldout"


@pytest.mark.parametrize("path", sorted(HELDOUT.glob("k*.py")), ids=lambda p: p.stem)
def test_held_out_pypto_kernels(path) -> None:
    """Kernels written against PyPTO 0.2.0's API by someone who had not read pto.pypto
    (each accepted by PyPTO's own simulator; `PTO=1` swaps the import): each passes the
    golden at three token counts."""
    import os
    import subprocess

    env = {**os.environ, "PTO": "1", "PYTHONWARNINGS": "ignore"}
    r = subprocess.run([sys.executable, str(path)], env=env, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0 and r.stdout.rstrip().endswith("PASS"), r.stdout + r.stderr


def test_a_loop_over_part_of_the_tokens_is_refused() -> None:
    # PyPTO would leave the other rows alone; the loop here always covers every token.
    @pypto.frontend.jit
    def k(
        x: pypto.Tensor([pypto.DYNAMIC, K], FP32),
        w: pypto.Tensor([N, K], FP32),
        out: pypto.Tensor([pypto.DYNAMIC, N], FP32),
    ):
        for idx, p in pypto.loop_unroll(0, x.shape[0] // 2, 1, unroll_list=[2]):
            pypto.assemble(pypto.matmul(pypto.view(x, [p, K], [idx, 0]), w, FP32, b_trans=True), [idx, 0], out)

    with pytest.raises(pto.BuildError, match="loop_unroll must run over all the tokens"):
        k(np.ones((4, K), np.float32), np.ones((N, K), np.float32), np.zeros((4, N), np.float32))


def test_exp_runs_on_the_vector_unit() -> None:
    @pypto.frontend.jit
    def k(
        x: pypto.Tensor([pypto.DYNAMIC, K], FP32),
        w: pypto.Tensor([N, K], FP32),
        out: pypto.Tensor([pypto.DYNAMIC, N], FP32),
    ):
        for idx, p in pypto.loop_unroll(0, x.shape[0], 1, unroll_list=[4]):
            y = pypto.matmul(pypto.view(x, [p, K], [idx, 0]), w, FP32, b_trans=True)
            pypto.assemble(pypto.exp(y * 0.1), [idx, 0], out)

    rng = np.random.default_rng(4)
    x, w = rng.standard_normal((6, K), dtype=np.float32), rng.standard_normal((N, K), dtype=np.float32)
    out = np.zeros((6, N), np.float32)
    k(x, w, out)
    assert check(out, np.exp((x @ w.T) * np.float32(0.1))).ok
    assert "npu.vexp" in next(iter(k.compiled.values())).text("npu")


def test_sigmoid_and_a_reciprocal_of_its_own() -> None:
    @pypto.frontend.jit
    def k(
        x: pypto.Tensor([pypto.DYNAMIC, K], FP32),
        w: pypto.Tensor([N, K], FP32),
        out: pypto.Tensor([pypto.DYNAMIC, N], FP32),
        inv: pypto.Tensor([pypto.DYNAMIC, N], FP32),
    ):
        for idx, p in pypto.loop_unroll(0, x.shape[0], 1, unroll_list=[4]):
            y = pypto.matmul(pypto.view(x, [p, K], [idx, 0]), w, FP32, b_trans=True)
            pypto.assemble(pypto.sigmoid(y), [idx, 0], out)
            pypto.assemble(pypto.reciprocal(y), [idx, 0], inv)

    rng = np.random.default_rng(5)
    x, w = rng.standard_normal((6, K), dtype=np.float32), rng.standard_normal((N, K), dtype=np.float32)
    x[0] *= 1000  # exp(-y) overflows to inf for y < -88: sigmoid is 0 there, not NaN
    out, inv = np.zeros((6, N), np.float32), np.zeros((6, N), np.float32)
    k(x, w, out, inv)
    y = x @ w.T
    with np.errstate(over="ignore"):
        assert check(out, 1 / (1 + np.exp(-y))).ok
    assert check(inv, 1 / y).ok
    npu = next(iter(k.compiled.values())).text("npu")
    assert "npu.vexp" in npu and "npu.vdup 1.000000e+00" in npu and "npu.vdiv" in npu


@pytest.mark.parametrize(
    "body, message",
    [
        (lambda h, w: pypto.matmul(h, w, FP32), "pypto.matmul of a per-head view"),
        (lambda h, w: h, "pypto.assemble of a per-head view"),
        (lambda h, w: pypto.reshape(h, [4, 16]), "reshapes back to [2, 64] or [2, 4, 16], got [4, 16]"),
    ],
)
def test_per_head_views_outside_row_wise_work_are_refused(body, message) -> None:
    # A [rows, H * D] tile reshaped to [rows * H, D] runs row-wise ops per head; other
    # uses would need the rows to be tokens.
    @pypto.frontend.jit
    def k(
        x: pypto.Tensor([pypto.DYNAMIC, K], FP32),
        w: pypto.Tensor([16, K], FP32),
        out: pypto.Tensor([pypto.DYNAMIC, K], FP32),
    ):
        for idx, p in pypto.loop_unroll(0, x.shape[0], 1, unroll_list=[2]):
            h = pypto.reshape(pypto.view(x, [p, K], [idx, 0]), [p * 4, 16])
            pypto.assemble(body(pypto.rms_norm(h), w), [idx, 0], out)

    with pytest.raises(pto.BuildError, match="pto.pypto") as e:
        k(np.ones((2, K), np.float32), np.ones((16, K), np.float32), np.zeros((2, K), np.float32))
    assert message in str(e.value), str(e.value)


def test_a_scratch_tile_assembled_from_column_blocks() -> None:
    @pypto.frontend.jit
    def k(
        x: pypto.Tensor([pypto.DYNAMIC, K], FP32),
        w: pypto.Tensor([N, K], FP32),
        out: pypto.Tensor([pypto.DYNAMIC, N + K], FP32),
    ):
        for idx, p in pypto.loop_unroll(0, x.shape[0], 1, unroll_list=[4]):
            xt = pypto.view(x, [p, K], [idx, 0])
            buf = pypto.tensor([p, N + K], FP32)
            pypto.assemble(pypto.matmul(xt, w, FP32, b_trans=True), [0, 0], buf)
            pypto.assemble(pypto.abs(xt), [0, N], buf)
            pypto.assemble(pypto.mul(buf, 2.0), [idx, 0], out)

    rng = np.random.default_rng(6)
    x, w = rng.standard_normal((5, K), dtype=np.float32), rng.standard_normal((N, K), dtype=np.float32)
    out = np.zeros((5, N + K), np.float32)
    k(x, w, out)
    assert check(out, 2 * np.concatenate([x @ w.T, np.abs(x)], axis=-1)).ok


def test_a_rank3_scratch_tile_assembled_from_blocks_of_its_last_dim() -> None:
    """lightning_indexer_prolog_quant_v4's `q_assemble = pypto.tensor([t, H, D], ...)`: each
    head's first columns as they are, its last r roped (here scaled), each block assembled
    at [0, 0, c], then the whole scratch tile into a [T, H, D] output (corpus27's k246)."""
    heads, d, r = 4, N // 4, 4

    @pypto.frontend.jit
    def k(
        x: pypto.Tensor([pypto.DYNAMIC, K], FP32),
        w: pypto.Tensor([N, K], FP32),
        out: pypto.Tensor([pypto.DYNAMIC, heads, d], FP32),
    ):
        for idx, p in pypto.loop_unroll(0, x.shape[0], 1, unroll_list=[4]):
            q = pypto.reshape(pypto.matmul(pypto.view(x, [p, K], [idx, 0]), w, FP32, b_trans=True), [p, heads, d])
            nope = pypto.view(q, [p, heads, d - r], [0, 0, 0])
            rope = pypto.view(q, [p, heads, r], [0, 0, d - r])
            buf = pypto.tensor([p, heads, d], FP32, "q_assemble")
            pypto.assemble(pypto.clone(nope), [0, 0, 0], buf)
            pypto.assemble(pypto.mul(rope, 3.0), [0, 0, d - r], buf)
            pypto.assemble(buf, [idx, 0, 0], out)

    rng = np.random.default_rng(16)
    x, w = rng.standard_normal((5, K), dtype=np.float32), rng.standard_normal((N, K), dtype=np.float32)
    out = np.zeros((5, heads, d), np.float32)
    k(x, w, out)
    want = (x @ w.T).reshape(5, heads, d)
    want[..., d - r :] *= 3.0
    assert check(out, want).ok


@pytest.mark.parametrize(
    "fill, message",
    [
        (lambda buf, a: pypto.assemble(a, [0, 0], buf), f"columns [{K}, {K + N}) not assembled"),
        (lambda buf, a: pypto.assemble(a, [1, 0], buf), "whole rows at [0, column] only"),
        (lambda buf, a: pypto.assemble(a, [0, N + 1], buf), "it does not fit"),
        (lambda buf, a: pypto.assemble(pypto.reshape(a, [2, 1, K]), [0, 0, 0], buf), "it does not fit"),
    ],
)
def test_a_scratch_tile_read_before_it_is_whole_is_refused(fill, message) -> None:
    @pypto.frontend.jit
    def k(x: pypto.Tensor([pypto.DYNAMIC, K], FP32), out: pypto.Tensor([pypto.DYNAMIC, K + N], FP32)):
        for idx, p in pypto.loop_unroll(0, x.shape[0], 1, unroll_list=[2]):
            buf = pypto.tensor([p, K + N], FP32)
            fill(buf, pypto.abs(pypto.view(x, [p, K], [idx, 0])))
            pypto.assemble(pypto.sqrt(buf), [idx, 0], out)

    with pytest.raises(pto.BuildError, match="pto.pypto") as e:
        k(np.ones((2, K), np.float32), np.zeros((2, K + N), np.float32))
    assert message in str(e.value), str(e.value)


def test_a_transposed_weight_is_the_matmuls_b_trans() -> None:
    @pypto.frontend.jit
    def k(
        x: pypto.Tensor([pypto.DYNAMIC, K], FP32),
        w: pypto.Tensor([N, K], FP32),
        out: pypto.Tensor([pypto.DYNAMIC, N], FP32),
    ):
        for idx, p in pypto.loop_unroll(0, x.shape[0], 1, unroll_list=[2]):
            y = pypto.matmul(pypto.view(x, [p, K], [idx, 0]), pypto.transpose(w, 0, 1), FP32)
            pypto.assemble(y, [idx, 0], out)

    rng = np.random.default_rng(7)
    x, w = rng.standard_normal((3, K), dtype=np.float32), rng.standard_normal((N, K), dtype=np.float32)
    out = np.zeros((3, N), np.float32)
    k(x, w, out)
    assert check(out, x @ w.T).ok
    assert "b_trans" in str(k.trace(x, w, out))
