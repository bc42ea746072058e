"""The Python API: builder ops and hints, the loop form, round trips, build errors,
compile and run, and the Python examples."""

from __future__ import annotations

import importlib.util
import inspect
import json

import numpy as np
import pytest
from kernels import ROOT, parse

import pto
from pto.frontend.builder import BuildError

T = "tensor<?x64xf32>"


def small(**hints):
    k = pto.Kernel("k", **hints)
    return k, k.arg("x", [None, 64], "f32"), k.arg("w", [32, 64], "f32")


@pytest.mark.parametrize(
    ("build", "text"),
    [
        (lambda x, w: pto.rms_norm(x, eps=1e-5), "pto.rms_norm %x eps = 1.000000e-05"),
        (lambda x, w: pto.matmul(x, w, b_trans=True), "pto.matmul %x, %w b_trans"),
        (
            lambda x, w: pto.matmul(w, w, a_trans=True),
            "pto.matmul %w, %w a_trans : tensor<32x64xf32>, tensor<32x64xf32> -> tensor<64x64xf32>",
        ),
        (lambda x, w: pto.cast(x, "bf16"), "pto.cast %x rint"),
        (lambda x, w: pto.cast(pto.cast(x, "bf16", round="trunc"), "f32"), "pto.cast %0 none"),
        (lambda x, w: pto.add(x, x), "pto.add %x, %x"),
        (lambda x, w: x - x, "pto.sub %x, %x"),
        (lambda x, w: x * x, "pto.mul %x, %x"),
        (lambda x, w: x * 2.0, "pto.muls %x, 2.0"),
        (lambda x, w: x / x, "pto.div %x, %x"),
        (lambda x, w: pto.sqrt(x), "pto.sqrt %x"),
        (lambda x, w: pto.rsqrt(x), "pto.rsqrt %x"),
        (lambda x, w: pto.abs(x), "pto.abs %x"),
        (lambda x, w: pto.adds(x, 1.5), "pto.adds %x, 1.5"),
        (lambda x, w: pto.reduce(x, "absmax"), "pto.reduce absmax %x"),
        (lambda x, w: pto.quant(x)[1], "pto.quant %x"),
        (lambda x, w: pto.reshape(x, [None, 8, 8], inplace=True), "pto.reshape %x inplace"),
        (lambda x, w: pto.dequant(pto.matmul(x, w, b_trans=True), pto.reduce(x, "max")), "pto.dequant %0, %1"),
        (lambda x, w: pto.mul(x, pto.reduce(x, "sum")), "pto.mul %x, %0 : tensor<?x64xf32>, tensor<?x1xf32>"),
    ],
)
def test_builder_ops(build, text) -> None:
    k, x, w = small()
    k.ret(build(x, w))
    m = k.module()
    assert text in str(m)
    again = parse(str(m))  # round trip through text
    assert str(again) == str(m)
    assert pto.run(m, [np.ones((3, 64), np.float32), np.ones((32, 64), np.float32)], level="pto").outputs


def test_hints() -> None:
    k, x, w = small(target="ascend950", unroll=[16, 4], options={"vec_nbuffer_setting": {0: 2}})
    k.set_cache(w.value, "none_cacheable")
    n = pto.rms_norm(x, label="norm", vec_tile=[4, 64])
    k.ret(pto.matmul(n, w, b_trans=True, label="mm", cube_tile=pto.cube_tile([16, 16], [64, 64], [32, 32], True)))
    s = str(k.module())
    for want in (
        'pto.target = "ascend950"',
        "pto.unroll = array<i64: 16, 4>",
        'pto.options = {vec_nbuffer_setting = {"0" = 2 : i64}}',
        "pto.cache = #pto.cache<none_cacheable>",
        'pto.label = "norm"',
        "pto.vec_tile = array<i64: 4, 64>",
        'pto.label = "mm"',
        "pto.cube_tile = #pto.cube_tile<m = [16, 16], k = [64, 64], n = [32, 32], split_k>",
    ):
        assert want in s, want


def test_build_error_has_the_verifier_message_and_the_users_line() -> None:
    k, x, _ = small()
    line = inspect.currentframe().f_lineno + 2
    with pytest.raises(BuildError) as e:
        pto.cast(x, "i8")
    assert (
        e.value.message == "'pto.cast' no hardware conversion from f32 to i8 (quantize through f32 -> i32 -> f16 -> i8)"
    )
    assert e.value.where == (__file__, line)
    assert str(e.value).startswith(f"{__file__}:{line}: error: 'pto.cast'")


@pytest.mark.parametrize(
    ("build", "msg"),
    [
        (lambda k, x, w: pto.matmul(x, x), "'pto.matmul' reduction dims differ: lhs K = 64, rhs K = ?"),
        (lambda k, x, w: pto.rms_norm(x, w), "gamma must be a vector of length 64"),
        (lambda k, x, w: pto.cast(x, "f64"), "unknown element type 'f64'"),
        (lambda k, x, w: pto.cast(x, "bf16", round="up"), "unknown round mode 'up'"),
        (lambda k, x, w: pto.reduce(x, "median"), "unknown reduction 'median'"),
        (lambda k, x, w: k.set_cache(x.value, "sometimes"), "unknown cache policy 'sometimes'"),
        (lambda k, x, w: pto.rms_norm(x, label=""), "'pto.label' must be a non-empty string"),
        (lambda k, x, w: pto.rms_norm(x, vec_tile=[4]), "'pto.vec_tile' has rank 1 but the op's data has rank 2"),
        (lambda k, x, w: pto.add(x, small()[1]), "operands belong to different kernels"),
        (lambda k, x, w: pto.rms_norm(3), "rms_norm input must be a Tensor of a kernel, got int"),
        (lambda k, x, w: k.module(), "has no results"),
    ],
)
def test_illegal_builds(build, msg) -> None:
    k, x, w = small()
    with pytest.raises(BuildError) as e:
        build(k, x, w)
    assert msg in e.value.message


def test_unknown_target_and_bad_options() -> None:
    with pytest.raises(BuildError, match="unknown target 'nosuch'"):
        small(target="nosuch")  # (at the Kernel, the user's line)
    k, x, _ = small()
    k.target = "nosuch"  # (set afterwards: found when the module is built)
    k.ret(pto.abs(x))
    with pytest.raises(BuildError, match="unknown target 'nosuch'"):
        k.module()
    k, x, _ = small(options={"no_such_setting": {0: 1}})
    k.ret(pto.abs(x))
    with pytest.raises(BuildError, match="unknown pass option 'no_such_setting'"):
        k.module()


# ------------------------------------------------------------------- loop form


def test_loop_form_hints() -> None:
    def kern(x, w, out):
        pto.set_pass_options(vec_nbuffer_setting={0: 2})
        pto.set_cache_policy(w, "none_cacheable")
        for idx, p in pto.loop_unroll(0, x.shape[0], 1, unroll_list=[8, 1]):
            xt = pto.view(x, [p, 64], [idx, 0])
            pto.set_semantic_label("v")
            pto.set_vec_tile_shapes(2, 64)
            n = pto.rms_norm(xt)
            pto.set_semantic_label("c")
            pto.set_cube_tile_shapes([16, 16], [64, 64], [32, 32], enable_split_k=False)
            y = pto.matmul(n, pto.view(w, [32, 64], [0, 0]), b_trans=True)
            pto.assemble(y, [idx, 0], out)

    m = pto.trace(kern, x=pto.arg([None, 64], "f32"), w=pto.arg([32, 64], "f32"), out=pto.arg([None, 32], "f32"))
    s = str(m)
    assert "pto.unroll = array<i64: 8, 1>" in s and "vec_nbuffer_setting" in s and "none_cacheable" in s
    assert 'pto.rms_norm %x eps = 1.000000e-06 {pto.label = "v", pto.vec_tile = array<i64: 2, 64>}' in s
    assert 'pto.matmul %0, %w b_trans {pto.label = "c", pto.cube_tile = #pto.cube_tile<' in s
    assert "-> tensor<?x32xf32>" in s and "%out" not in s  # the output became the result
    c = pto.compile(m)
    assert "tile.token_loop" in c.text("tile") and "step 8" in c.text("tile")


@pytest.mark.parametrize(
    ("body", "msg"),
    [
        ("pto.view(x, [4, 64], [0, 0])", "view of \\[4, 64\\] at \\[0, 0\\] is not supported"),
        (
            "pto.view(w, [p, 64], [idx, 0])",
            "SK-03 takes the whole tensor \\[32, 64\\] at \\[0, 0\\] or a static window",
        ),
        ("pto.view(w, [16, 64], [24, 0])", "view \\[24, 40\\) of dim 0 is outside the input's 32"),
        ("pto.loop_unroll(0, x.shape[0], 1, unroll_list=[1]).__next__()", "loop_unroll may appear once"),
        ("pto.assemble(pto.matmul(x, w, b_trans=True), [idx, 0], out)", "assembled once"),
        ("pto.assemble(x, [idx, 0], out)", "the value is tensor<\\?x64xf32> but the output is tensor<\\?x32xf32>"),
    ],
)
def test_loop_form_errors(body: str, msg: str) -> None:
    src = (
        "def kern(x, w, out):\n    for idx, p in pto.loop_unroll(0, x.shape[0], 1, unroll_list=[1]):\n"
        f"        {body}\n        pto.assemble(pto.matmul(x, w, b_trans=True), [idx, 0], out)\n"
    )
    ns: dict = {"pto": pto}
    exec(compile(src, "<kern>", "exec"), ns)  # noqa: S102
    with pytest.raises(BuildError, match=msg):
        pto.trace(ns["kern"], x=pto.arg([None, 64], "f32"), w=pto.arg([32, 64], "f32"), out=pto.arg([None, 32], "f32"))


def test_loop_form_structural_errors() -> None:
    with pytest.raises(BuildError, match="only inside|part of the loop form"):
        pto.set_semantic_label("x")

    def no_loop(x, out):
        pass

    with pytest.raises(BuildError, match="has no loop_unroll"):
        pto.trace(no_loop, x=pto.arg([None, 64], "f32"), out=pto.arg([None, 64], "f32"))

    def wrong_range(x, out):
        for _ in pto.loop_unroll(0, 16, 1, unroll_list=[1]):
            pass

    with pytest.raises(BuildError, match=r"whole token axis \(0, x.shape\[0\], 1\), got \(0, 16, 1\)"):
        pto.trace(wrong_range, x=pto.arg([None, 64], "f32"), out=pto.arg([None, 64], "f32"))
    with pytest.raises(BuildError, match="give a type for each parameter"):
        pto.trace(no_loop, x=pto.arg([None, 64], "f32"))


# ---------------------------------------------------------------- compile / run


def test_compile_levels_and_errors() -> None:
    k, x, w = small(target="ascend910b1")
    k.ret(pto.matmul(pto.rms_norm(x), w, b_trans=True))
    c = pto.compile(k.module())
    assert list(c.levels) == ["pto", "tile", "npu"]
    assert "pto.matmul" in c.text("pto") and "tile.cube_stage" in c.text("tile") and "npu.graph" in c.text("npu")
    assert "pto.form" in str(c.tile)
    with pytest.raises(KeyError, match="no cube level"):
        c.text("cube")
    k2, x2, _ = small()
    k2.ret(pto.abs(x2))
    with pytest.raises(pto.CompileError, match="not SK-03"):
        pto.compile(k2.module())
    with pytest.raises(pto.CompileError, match="unknown pass 'nosuch'"):
        pto.compile(k.module(), pipeline="builtin.module(nosuch)")


def test_run_every_level_by_name_with_trace(tmp_path) -> None:
    k, x, w = small(target="ascend910b1")
    k.ret(pto.matmul(pto.rms_norm(x), w, b_trans=True))
    c = pto.compile(k.module())
    rng = np.random.default_rng(0)
    ins = {"x": rng.standard_normal((19, 64), dtype=np.float32), "w": rng.standard_normal((32, 64), dtype=np.float32)}
    outs = {lvl: pto.run(c, ins, level=lvl).outputs[0] for lvl in ("pto", "tile", "npu")}
    assert pto.check(outs["tile"], outs["pto"]).ok and pto.check(outs["npu"], outs["pto"]).ok
    r = pto.run(c, ins, golden=True, trace=str(tmp_path / "t.json"), l2_size=1 << 20)
    assert r.ok and r.report.cycles > 0 and r.report.l2_size == 1 << 20
    assert json.loads((tmp_path / "t.json").read_text())["traceEvents"]
    assert "total:" in r.report.table()
    r2 = pto.run(k.module(), tokens=5)  # a pto-level module is compiled first
    assert r2.level == "npu" and r2.outputs[0].shape == (5, 32)
    with pytest.raises(BuildError, match="inputs by name need exactly x, w"):
        pto.run(c, {"x": ins["x"]})


# -------------------------------------------------------------------- examples

EXAMPLES = ["sk03_standard", "mla_wqa_qrmsnorm", "mla_wkv_rmsnorm", "indexer_query_linear_int8", "hc_pre"]


def load_example(name: str):
    spec = importlib.util.spec_from_file_location(f"example_{name}", ROOT / "examples" / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.mark.parametrize("name", EXAMPLES)
def test_python_examples(name: str, capsys) -> None:
    ex = load_example(name)
    built = ex.builder()
    assert str(built) == str(ex.loop_form())
    ref = parse((ROOT / "examples" / f"{name}.mlir").read_text())
    # Same ops, types and operands as the hand-written .mlir reference (hints may differ).
    strip = lambda m: [(o.name, [str(t) for t in o.result_types]) for o in m.walk()]  # noqa: E731
    assert strip(built) == strip(ref)
    ex.main(tokens=(3,))
    assert "ok" in capsys.readouterr().out


@pytest.mark.parametrize("dtype", ["bf16", "f16"])
def test_quant_of_a_narrow_float_is_widened_first(dtype: str) -> None:
    k = pto.Kernel("k")
    x, w = k.arg("x", [None, 64], dtype), k.arg("w", [32, 64], "i8")
    q, s = pto.quant(x)
    k.ret(pto.dequant(pto.matmul(q, w, b_trans=True), s))
    c = pto.compile(k.module())
    assert "npu.vcast" in c.text("npu")
    want = pto.run(c, tokens=5, seed=1, level="pto").outputs[0]
    for engine in ("interp", "compiled"):
        assert np.array_equal(pto.run(c, tokens=5, seed=1, engine=engine).outputs[0], want)


@pytest.mark.parametrize("op", [pto.sub, pto.add, pto.mul, pto.div])
def test_a_broadcast_operand_may_come_first(op) -> None:
    k = pto.Kernel("k")
    x, w, b = k.arg("x", [None, 64], "f32"), k.arg("w", [32, 64], "f32"), k.arg("b", [64], "f32")
    k.ret(pto.matmul(op(b, x), w, b_trans=True))
    c = pto.compile(k.module())  # (the vector tile's rank is the widest operand's)
    got = [pto.run(c, tokens=5, seed=2, engine=e, golden=True) for e in ("interp", "compiled")]
    assert all(r.ok for r in got) and np.array_equal(got[0].outputs[0], got[1].outputs[0])


def test_numbers_on_either_side_of_a_tensor() -> None:
    k = pto.Kernel("k")
    x, w = k.arg("x", [None, 64], "f32"), k.arg("w", [32, 64], "f32")
    k.ret(pto.matmul(3.0 - (2.0 * x + 1.0 - 0.5), w, b_trans=True))
    c = pto.compile(k.module())
    assert [
        line.split("=")[1].split()[0] for line in c.text("pto").splitlines() if "pto.muls" in line or "pto.adds" in line
    ] == [
        "pto.muls",
        "pto.adds",
        "pto.adds",
        "pto.muls",
        "pto.adds",
    ]
    xs = np.random.default_rng(5).standard_normal((4, 64), dtype=np.float32)
    ws = np.random.default_rng(6).standard_normal((32, 64), dtype=np.float32)
    y = (np.float32(3.0) - ((np.float32(2.0) * xs + np.float32(1.0)) - np.float32(0.5))).astype(np.float32)
    assert np.array_equal(pto.run(c, [xs, ws], level="pto").outputs[0], y @ ws.T)


def test_a_site_keeps_its_column_through_copy_and_pickle() -> None:
    """`caller()`'s sites are (file, line) tuples with the call's column: copied, deep
    copied and pickled whole (the kernel's loop records and tuning results hold them)."""
    import copy
    import pickle

    from pto.frontend.checks import Where

    w = Where("k.py", 7, 13)
    for got in (copy.copy(w), copy.deepcopy(w), pickle.loads(pickle.dumps(w))):
        assert got == ("k.py", 7) and got.col == 13
    assert Where(("k.py", 7)) == w  # (rebuilt from its items, as dataclasses.asdict does)


def test_a_column_counts_characters_not_bytes(tmp_path) -> None:
    """A name in Chinese before the call on its line: the column is the call's character."""
    import importlib.util

    src = tmp_path / "cjk_kernel.py"
    src.write_text(
        "from pto.frontend.checks import caller\n标签 = 1; w = caller()\n",
        encoding="utf-8",
    )
    spec = importlib.util.spec_from_file_location("cjk_kernel", src)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    line = src.read_text(encoding="utf-8").splitlines()[1]
    assert mod.w.col == line.index("caller()") + 1, mod.w.col
