"""Misuse of the Python API (issue 10): every bad argument raises the project's own
exception, naming the argument and what it may be, and builds nothing invalid.

BuildError (a ValueError) for the builder and the loop form, CompileError for
`compile` (LevelError, also a KeyError, for a level a `Compiled` lacks), RunError (a
BuildError and an InputError) for `run`, InputError for `check` and for inputs that do
not fit a kernel."""

from __future__ import annotations

import inspect

import ml_dtypes
import numpy as np
import pytest
from xdsl.dialects.builtin import ModuleOp

import pto
from pto.frontend.api import LevelError, RunError
from pto.frontend.builder import BuildError
from pto.interp.run import InputError


def small(**hints):
    k = pto.Kernel("k", **hints)
    return k, k.arg("x", [None, 64], "f32"), k.arg("w", [32, 64], "f32")


def other():
    """A tensor of another kernel."""
    return pto.Kernel("other").arg("z", [None, 64], "f32")


def kernel_with(**hints):
    """A one-op kernel with these Kernel(...) hints, built."""
    k = pto.Kernel("k", **hints)
    k.ret(pto.abs(k.arg("x", [None, 4], "f32")))
    return k.module()


def arg_of(*args, **kw):
    k = pto.Kernel("k")
    return k.arg(*args, **kw)


def op(build):
    """build(k, x, w) on a fresh kernel."""
    return lambda: build(*small())


def traced(stmt):
    """Trace a loop-form kernel whose loop body runs stmt(x, xt, out, idx, p) first."""

    def kern(x, out):
        for idx, p in pto.loop_unroll(0, x.shape[0], 1, unroll_list=[4, 1]):
            xt = pto.view(x, [p, 64], [idx, 0])
            stmt(x, xt, out, idx, p)
            pto.assemble(pto.abs(xt), [idx, 0], out)

    return lambda: pto.trace(kern, x=pto.arg([None, 64], "f32"), out=pto.arg([None, 64], "f32"))


def loop_over(**kw):
    def kern(x, out):
        for idx, p in pto.loop_unroll(0, x.shape[0], 1, **kw):
            pto.assemble(pto.abs(pto.view(x, [p, 64], [idx, 0])), [idx, 0], out)

    return lambda: pto.trace(kern, x=pto.arg([None, 64], "f32"), out=pto.arg([None, 64], "f32"))


def module():
    k, x, w = small(target="ascend910b1")
    k.ret(pto.matmul(pto.rms_norm(x), w, b_trans=True))
    return k.module()


def inputs():
    return [np.ones((3, 64), np.float32), np.ones((32, 64), np.float32)]


_compiled: list[pto.Compiled] = []


def compiled() -> pto.Compiled:
    if not _compiled:
        _compiled.append(pto.compile(module()))
    return _compiled[0]


# (id, call, what the message says); each raises BuildError
BUILD = [
    # Kernel(...)
    ("kernel name None", lambda: pto.Kernel(None), "a kernel's name must be a non-empty string, got None"),
    ("kernel name int", lambda: pto.Kernel(3), "a kernel's name must be a non-empty string"),
    ("kernel name empty", lambda: pto.Kernel(""), "a kernel's name must be a non-empty string"),
    ("target int", lambda: pto.Kernel("k", target=5), "target must be a non-empty string, got 5"),
    ("unroll str item", lambda: pto.Kernel("k", unroll=["a"]), "unroll[0] must be an integer in [1, 2^63)"),
    ("unroll str", lambda: pto.Kernel("k", unroll="a"), "unroll must be a non-empty list of positive integers"),
    ("unroll int", lambda: pto.Kernel("k", unroll=5), "unroll must be a non-empty list"),
    ("unroll empty", lambda: pto.Kernel("k", unroll=[]), "unroll must be a non-empty list"),
    ("unroll float", lambda: pto.Kernel("k", unroll=[1.5]), "unroll[0] must be an integer"),
    ("unroll bool", lambda: pto.Kernel("k", unroll=[True]), "unroll[0] must be an integer"),
    ("unroll over i64", lambda: pto.Kernel("k", unroll=[2**70]), "unroll[0] must be an integer in [1, 2^63)"),
    ("options int", lambda: pto.Kernel("k", options=5), "options must be a dict"),
    ("options list", lambda: pto.Kernel("k", options=[("vec_nbuffer_setting", {0: 2})]), "options must be a dict"),
    (
        "option not dict",
        lambda: pto.Kernel("k", options={"vec_nbuffer_setting": 1}),
        "option 'vec_nbuffer_setting' must be a dict {group: count}",
    ),
    (
        "option value str",
        lambda: pto.Kernel("k", options={"vec_nbuffer_setting": {0: "a"}}),
        "option 'vec_nbuffer_setting' group 0 must be an integer",
    ),
    ("option value None", lambda: pto.Kernel("k", options={"vec_nbuffer_setting": {0: None}}), "group 0 must be"),
    ("option value over i64", lambda: pto.Kernel("k", options={"vec_nbuffer_setting": {0: 2**70}}), "in [1, 2^63)"),
    (
        "option group float",
        lambda: pto.Kernel("k", options={"vec_nbuffer_setting": {0.5: 2}}),
        "group 0.5 must be an integer",
    ),
    ("option name int", lambda: pto.Kernel("k", options={5: {0: 1}}), "an option's name must be a non-empty string"),
    # k.arg(...)
    ("shape str", lambda: arg_of("x", "abc", "f32"), "the shape of 'x' must be a list of sizes"),
    ("shape None", lambda: arg_of("x", None, "f32"), "the shape of 'x' must be a list of sizes"),
    ("shape float", lambda: arg_of("x", 4.0, "f32"), "the shape of 'x' must be a list of sizes"),
    ("shape set", lambda: arg_of("x", {None, 4}, "f32"), "must be a list of sizes"),
    ("dim float", lambda: arg_of("x", [None, 4.0], "f32"), "the shape of 'x'[1] must be an integer in [0, 2^63)"),
    ("dim str", lambda: arg_of("x", [None, "4"], "f32"), "the shape of 'x'[1] must be an integer"),
    ("dim negative", lambda: arg_of("y", [None, -4], "bf16"), "the shape of 'y'[1] must be an integer in [0, 2^63)"),
    ("dim bool", lambda: arg_of("y", [None, True], "bf16"), "got True"),
    ("dim over i64", lambda: arg_of("y", [None, 2**70], "bf16"), "must be an integer in [0, 2^63)"),
    ("name int", lambda: arg_of(3, [None, 4], "f32"), "an argument's name must be a non-empty string, got 3"),
    ("name None", lambda: arg_of(None, [None, 4], "f32"), "an argument's name must be a non-empty string"),
    ("name empty", lambda: arg_of("", [None, 4], "f32"), "an argument's name must be a non-empty string"),
    ("name not SSA", lambda: arg_of("a b", [None, 4], "f32"), "'a b' is not a valid SSA name"),
    ("name with %", lambda: arg_of("%x", [None, 4], "f32"), "'%x' is not a valid SSA name"),
    ("dtype list", lambda: arg_of("x", [None, 4], ["f32"]), "a dtype must be a string"),
    ("dtype numpy", lambda: arg_of("x", [None, 4], np.float32), "a dtype must be a string"),
    ("dtype unknown", lambda: arg_of("x", [None, 4], "f64"), "unknown element type 'f64'"),
    ("cache unknown", lambda: arg_of("x", [None, 4], "f32", cache="bogus"), "unknown cache policy 'bogus'"),
    ("duplicate name", op(lambda k, x, w: k.arg("x", [4], "f32")), "kernel 'k' already has an argument 'x'"),
    ("set_cache int", op(lambda k, x, w: k.set_cache(5, "normal")), "a cache policy belongs on a kernel argument"),
    ("set_cache other kernel", op(lambda k, x, w: k.set_cache(other(), "normal")), "belongs on a kernel argument"),
    # ret / module
    ("ret int", op(lambda k, x, w: k.ret(3)), "a result must be a Tensor of a kernel, got int"),
    ("ret None", op(lambda k, x, w: k.ret(None)), "a result must be a Tensor of a kernel, got NoneType"),
    ("ret list", op(lambda k, x, w: k.ret([x])), "a result must be a Tensor of a kernel, got list"),
    ("ret other kernel", op(lambda k, x, w: k.ret(other())), "a result must be a value of this kernel"),
    # ops
    ("eps str", op(lambda k, x, w: pto.rms_norm(x, eps="a")), "rms_norm eps must be a number, got str 'a'"),
    ("eps None", op(lambda k, x, w: pto.rms_norm(x, eps=None)), "rms_norm eps must be a number"),
    ("eps bool", op(lambda k, x, w: pto.rms_norm(x, eps=True)), "rms_norm eps must be a number"),
    ("eps over f32", op(lambda k, x, w: pto.rms_norm(x, eps=1e39)), "rms_norm eps must be a finite f32 number"),
    ("gamma str", op(lambda k, x, w: pto.rms_norm(x, "g")), "rms_norm gamma must be a Tensor of a kernel, got str"),
    ("gamma other kernel", op(lambda k, x, w: pto.rms_norm(x, other())), "operands belong to different kernels"),
    ("out_dtype int", op(lambda k, x, w: pto.rms_norm(x, out_dtype=5)), "a dtype must be a string"),
    ("label int", op(lambda k, x, w: pto.rms_norm(x, label=123)), "label must be a string, got 123"),
    ("label int on mul", op(lambda k, x, w: pto.mul(x, x, label=5)), "label must be a string, got 5"),
    ("vec_tile str", op(lambda k, x, w: pto.rms_norm(x, vec_tile="ab")), "vec_tile must be a non-empty list"),
    ("vec_tile str item", op(lambda k, x, w: pto.sqrt(x, vec_tile=["a", 1])), "vec_tile[0] must be an integer"),
    ("vec_tile int", op(lambda k, x, w: pto.rms_norm(x, vec_tile=5)), "vec_tile must be a non-empty list"),
    ("vec_tile float", op(lambda k, x, w: pto.rms_norm(x, vec_tile=[4.0, 64])), "vec_tile[0] must be an integer"),
    ("vec_tile zero", op(lambda k, x, w: pto.rms_norm(x, vec_tile=[0, 64])), "vec_tile[0] must be an integer in [1"),
    ("vec_tile empty", op(lambda k, x, w: pto.rms_norm(x, vec_tile=[])), "vec_tile must be a non-empty list"),
    ("vec_tile rank", op(lambda k, x, w: pto.rms_norm(x, vec_tile=[4])), "'pto.vec_tile' has rank 1"),
    ("matmul rank 1 rhs", op(lambda k, x, w: pto.matmul(x, pto.reshape(w, [2048]))), "matmul rhs must be rank 2"),
    ("matmul b_trans str", op(lambda k, x, w: pto.matmul(x, w, b_trans="yes")), "b_trans must be True or False"),
    ("matmul a_trans int", op(lambda k, x, w: pto.matmul(x, w, a_trans=1)), "a_trans must be True or False, got 1"),
    (
        "matmul cube_tile list",
        op(lambda k, x, w: pto.matmul(x, w, b_trans=True, cube_tile=[16, 16])),
        "'pto.cube_tile' must be a #pto.cube_tile<...>",
    ),
    ("cast dtype list", op(lambda k, x, w: pto.cast(x, ["bf16"])), "a dtype must be a string"),
    ("cast sat str", op(lambda k, x, w: pto.cast(x, "bf16", sat="no")), "sat must be True or False"),
    ("mul by bool", op(lambda k, x, w: x * True), "muls scalar must be a number, got bool"),
    ("mul by str", op(lambda k, x, w: x * "a"), "muls scalar must be a number, got str"),
    ("muls str", op(lambda k, x, w: pto.muls(x, "a")), "muls scalar must be a number, got str 'a'"),
    ("muls None", op(lambda k, x, w: pto.muls(x, None)), "muls scalar must be a number"),
    ("muls list", op(lambda k, x, w: pto.muls(x, [1.0])), "muls scalar must be a number"),
    ("muls tensor", op(lambda k, x, w: pto.muls(x, x)), "muls scalar must be a number, got Tensor"),
    ("muls nan", op(lambda k, x, w: pto.muls(x, float("nan"))), "muls scalar must be a finite f32 number"),
    ("muls inf", op(lambda k, x, w: pto.muls(x, float("inf"))), "muls scalar must be a finite f32 number"),
    ("adds str", op(lambda k, x, w: pto.adds(x, "a")), "adds scalar must be a number"),
    ("adds complex", op(lambda k, x, w: pto.adds(x, 1j)), "adds scalar must be a number, got complex"),
    ("adds huge int", op(lambda k, x, w: pto.adds(x, 2**2000)), "adds scalar must be a finite f32 number"),
    (
        "dequant scale None",
        op(lambda k, x, w: pto.dequant(pto.matmul(x, w, b_trans=True), None)),
        "dequant act_scale must be a Tensor of a kernel, got NoneType",
    ),
    (
        "dequant w_scale str",
        op(lambda k, x, w: pto.dequant(pto.matmul(x, w, b_trans=True), pto.reduce(x), "s")),
        "dequant w_scale must be a Tensor of a kernel, got str",
    ),
    (
        "dequant w_scale_first without w_scale",
        op(lambda k, x, w: pto.dequant(pto.matmul(x, w, b_trans=True), pto.reduce(x), w_scale_first=True)),
        "dequant's w_scale_first needs a w_scale",
    ),
    ("reshape str", op(lambda k, x, w: pto.reshape(x, "ab")), "reshape shape must be a list of sizes"),
    ("reshape None", op(lambda k, x, w: pto.reshape(x, None)), "reshape shape must be a list of sizes"),
    ("reshape negative", op(lambda k, x, w: pto.reshape(x, [None, -8, -8])), "reshape shape[1] must be an integer"),
    ("reshape inplace str", op(lambda k, x, w: pto.reshape(x, [None, 8, 8], inplace="y")), "inplace must be True"),
    # cube_tile(...)
    ("cube_tile m of 1", lambda: pto.cube_tile([16], [64, 64], [32, 32]), "cube_tile m needs 2 sizes, got 1"),
    ("cube_tile m of 3", lambda: pto.cube_tile([16, 16, 16], [64, 64], [32, 32]), "cube_tile m needs 2 sizes"),
    ("cube_tile k of 4", lambda: pto.cube_tile([16, 16], [64] * 4, [32, 32]), "cube_tile k needs 2 or 3 sizes"),
    ("cube_tile empty", lambda: pto.cube_tile([], [64, 64], [32, 32]), "cube_tile m must be a non-empty list"),
    ("cube_tile str", lambda: pto.cube_tile(["a", 16], [64, 64], [32, 32]), "cube_tile m[0] must be an integer"),
    ("cube_tile int", lambda: pto.cube_tile(16, [64, 64], [32, 32]), "cube_tile m must be a non-empty list"),
    ("cube_tile zero", lambda: pto.cube_tile([0, 16], [64, 64], [32, 32]), "cube_tile m[0] must be an integer in [1"),
    ("cube_tile L0 > L1", lambda: pto.cube_tile([32, 16], [64, 64], [32, 32]), "L0 size 32 exceeds L1 size 16"),
    ("cube_tile split_k str", lambda: pto.cube_tile([16, 16], [64, 64], [32, 32], "yes"), "split_k must be True"),
    # the loop form
    ("pto.arg shape None", lambda: pto.arg(None, "f32"), "pto.arg shape must be a list of sizes"),
    ("pto.arg dim negative", lambda: pto.arg([None, -64], "f32"), "pto.arg shape[1] must be an integer in [0"),
    ("pto.arg dtype int", lambda: pto.arg([None, 64], 5), "a dtype must be a string"),
    ("pto.arg cache int", lambda: pto.arg([None, 64], "f32", cache=5), "cache must be a non-empty string"),
    ("trace not callable", lambda: pto.trace(5, x=pto.arg([None, 64], "f32")), "trace: the kernel must be a function"),
    (
        "trace untyped param",
        lambda: pto.trace(lambda x: None, x=[None, 64]),
        "parameter 'x' must be typed with pto.arg",
    ),
    (
        "trace name int",
        lambda: pto.trace(lambda x, out: None, name=5, x=pto.arg([None, 64], "f32"), out=pto.arg([None, 64], "f32")),
        "a kernel's name must be a non-empty string",
    ),
    (
        "trace options int",
        lambda: pto.trace(lambda x, out: None, options=5, x=pto.arg([None, 64], "f32"), out=pto.arg([None, 64], "f32")),
        "options must be a dict",
    ),
    ("unroll_list str item", loop_over(unroll_list=["a"]), "unroll_list[0] must be an integer in [1, 2^63)"),
    ("unroll_list str", loop_over(unroll_list="a"), "unroll_list must be a non-empty list"),
    ("unroll_list int", loop_over(unroll_list=5), "unroll_list must be a non-empty list"),
    ("unroll_list bool", loop_over(unroll_list=[True]), "unroll_list[0] must be an integer"),
    ("unroll_list None item", loop_over(unroll_list=[None]), "unroll_list[0] must be an integer"),
    ("unroll_list float", loop_over(unroll_list=[1.5]), "unroll_list[0] must be an integer"),
    ("loop_unroll name int", loop_over(unroll_list=[4, 1], name=5), "loop_unroll name must be a non-empty string"),
    ("view None", traced(lambda x, xt, out, idx, p: pto.view(None, [p, 64], [idx, 0])), "view input must be a Tensor"),
    (
        "view shape None",
        traced(lambda x, xt, out, idx, p: pto.view(x, None, [idx, 0])),
        "view shape must be a list of integers and loop indices",
    ),
    ("view offsets None", traced(lambda x, xt, out, idx, p: pto.view(x, [p, 64], None)), "view offsets must be a list"),
    (
        "view offsets empty",
        traced(lambda x, xt, out, idx, p: pto.view(x, [p, 64], [])),
        "view of [p, 64] at [] is not supported",
    ),
    (
        "view offsets array",
        traced(lambda x, xt, out, idx, p: pto.view(x, [p, 64], [idx, np.zeros(2)])),
        "view offsets must be a list of integers",
    ),
    (
        "assemble None",
        traced(lambda x, xt, out, idx, p: pto.assemble(None, [idx, 0], out)),
        "assemble value must be a Tensor",
    ),
    (
        "assemble offsets empty",
        traced(lambda x, xt, out, idx, p: pto.assemble(xt, [], out)),
        "assemble of [p, 64] at [] is not supported",
    ),
    (
        "assemble other kernel",
        traced(lambda x, xt, out, idx, p: pto.assemble(other(), [idx, 0], out)),
        "assemble: the value belongs to another kernel",
    ),
    (
        "label int (loop)",
        traced(lambda x, xt, out, idx, p: pto.set_semantic_label(123)),
        "set_semantic_label's label must be a string, got 123",
    ),
    (
        "vec tile str (loop)",
        traced(lambda x, xt, out, idx, p: pto.set_vec_tile_shapes("a", 64)),
        "set_vec_tile_shapes' sizes[0] must be an integer",
    ),
    (
        "vec tile list (loop)",
        traced(lambda x, xt, out, idx, p: pto.set_vec_tile_shapes([4, 64])),
        "set_vec_tile_shapes' sizes[0] must be an integer",
    ),
    (
        "vec tile none (loop)",
        traced(lambda x, xt, out, idx, p: pto.set_vec_tile_shapes()),
        "set_vec_tile_shapes' sizes must be a non-empty list",
    ),
    (
        "cube tile length (loop)",
        traced(lambda x, xt, out, idx, p: pto.set_cube_tile_shapes([16], [64, 64], [32, 32])),
        "cube_tile m needs 2 sizes",
    ),
    (
        "split_k str (loop)",
        traced(lambda x, xt, out, idx, p: pto.set_cube_tile_shapes([16, 16], [64, 64], [32, 32], "y")),
        "enable_split_k must be True or False",
    ),
    (
        "cache policy None (loop)",
        traced(lambda x, xt, out, idx, p: pto.set_cache_policy(None, "normal")),
        "set_cache_policy's tensor must be a Tensor",
    ),
    ("kernel target unknown", lambda: pto.Kernel("k", target="gpu"), "unknown target 'gpu'"),
    ("divide by a scalar", lambda: small()[1] / 2.0, "a tensor divides by a tensor here"),
    ("divide a scalar", lambda: 2.0 / small()[1], "a number divided by a tensor is"),
    (
        "pass options int (loop)",
        traced(lambda x, xt, out, idx, p: pto.set_pass_options(vec_nbuffer_setting=5)),
        "option 'vec_nbuffer_setting' must be a dict",
    ),
    (
        "pass options str (loop)",
        traced(lambda x, xt, out, idx, p: pto.set_pass_options(vec_nbuffer_setting={0: "a"})),
        "group 0 must be an integer",
    ),
]


@pytest.mark.parametrize(("call", "msg"), [c[1:] for c in BUILD], ids=[c[0] for c in BUILD])
def test_build_misuse(call, msg) -> None:
    with pytest.raises(BuildError) as e:
        call()
    assert msg in e.value.message
    assert e.value.where is not None and e.value.where[0] == __file__  # the user's line, not ours


COMPILE = [
    ("module str", lambda: pto.compile("x"), "module must be an xDSL ModuleOp"),
    ("module None", lambda: pto.compile(None), "module must be an xDSL ModuleOp"),
    ("module Kernel", lambda: pto.compile(small()[0]), "got a Kernel: pass kernel.module()"),
    ("module Compiled", lambda: pto.compile(compiled()), "module must be an xDSL ModuleOp"),
    ("module empty", lambda: pto.compile(ModuleOp([])), "expected one kernel function in the module, found 0"),
    ("pipeline int", lambda: pto.compile(module(), pipeline=5), "pipeline must be a pass pipeline string"),
    ("pipeline anchor", lambda: pto.compile(module(), pipeline="func.func(cse)"), "is not supported"),
    ("pipeline brackets", lambda: pto.compile(module(), pipeline="builtin.module((("), "has unbalanced brackets"),
    (
        "pipeline unclosed",
        lambda: pto.compile(module(), pipeline="builtin.module(pto-sk03-pipeline{factors=4,1"),
        "has unbalanced brackets",
    ),
    ("target int", lambda: pto.compile(module(), target=5), "target must be a target name, got int"),
    ("target unknown", lambda: pto.compile(module(), target="bogus"), "unknown target 'bogus'"),
    ("target with brace", lambda: pto.compile(module(), target="a}"), "unknown target 'a}'"),
    (
        "target as a path",  # (a path to a target's own file is not its name)
        lambda: pto.compile(module(), target="../targets/ascend910b1"),
        "unknown target '../targets/ascend910b1'",
    ),
    (
        "target and pipeline",
        lambda: pto.compile(module(), pipeline="builtin.module(cse)", target="ascend950"),
        "give target= or pipeline=",
    ),
]


@pytest.mark.parametrize(("call", "msg"), [c[1:] for c in COMPILE], ids=[c[0] for c in COMPILE])
def test_compile_misuse(call, msg) -> None:
    with pytest.raises(pto.CompileError) as e:
        call()
    assert msg in str(e.value)


def test_fields_changed_after_the_kernel_are_checked_when_it_is_built() -> None:
    for change, msg in (
        (lambda k: setattr(k, "unroll", "abc"), "unroll must be a non-empty list"),
        (lambda k: setattr(k, "options", {"vec_nbuffer_setting": {0: "x"}}), "group 0 must be an integer"),
        (lambda k: k.results.append(object()), "a result must be a Tensor of a kernel"),
    ):
        k, x, w = small()
        k.ret(pto.matmul(x, w, b_trans=True))
        change(k)
        with pytest.raises(BuildError, match=msg):
            k.module()


def test_a_compiled_whose_levels_were_changed_is_refused() -> None:
    for change in (lambda c: c.levels.clear(), lambda c: c.levels.__setitem__("npu", None)):
        c = pto.compile(module())  # (not the shared `compiled()`)
        change(c)
        with pytest.raises(RunError, match="a Compiled whose levels are not modules"):
            pto.run(c, tokens=3)


def test_a_lowered_module_compiles_to_its_own_levels_only() -> None:
    c = compiled()
    again = pto.compile(c.npu)
    assert list(again.levels) == ["npu"]
    with pytest.raises(RunError, match="golden=True needs the pto level"):
        pto.run(again, tokens=3, golden=True)  # (not the npu output checked against itself)
    assert list(pto.compile(c.tile).levels) == ["tile", "npu"]


@pytest.mark.parametrize("level", ["bogus", 5, None, []])
def test_missing_level_is_a_level_error(level) -> None:
    with pytest.raises(LevelError, match="level in this compilation") as e:
        compiled().text(level)
    assert isinstance(e.value, KeyError) and isinstance(e.value, pto.CompileError)
    assert not str(e.value).startswith("'")  # not KeyError's quoting
    only_pto = pto.compile(module(), pipeline="builtin.module(cse)")
    with pytest.raises(LevelError, match=r"no tile level in this compilation \(have: pto\)"):
        only_pto.tile  # noqa: B018


RUN = [
    ("kernel None", lambda: pto.run(None), "kernel must be a ModuleOp"),
    ("kernel str", lambda: pto.run("x", tokens=3), "kernel must be a ModuleOp"),
    ("kernel Kernel", lambda: pto.run(small()[0], tokens=3), "or a Compiled, got Kernel"),
    ("no inputs, no tokens", lambda: pto.run(module(), level="pto"), "give inputs, or tokens="),
    ("tokens -1", lambda: pto.run(module(), tokens=-1), "tokens must be an integer >= 0, got -1"),
    ("tokens str", lambda: pto.run(module(), tokens="3"), "tokens must be an integer >= 0, got '3'"),
    ("tokens float", lambda: pto.run(module(), tokens=3.0), "tokens must be an integer"),
    ("tokens bool", lambda: pto.run(module(), tokens=True), "tokens must be an integer"),
    ("tokens over memory", lambda: pto.run(module(), tokens=2**40, level="pto"), "over the memory budget"),
    ("seed -1", lambda: pto.run(module(), tokens=3, seed=-1, level="pto"), "seed must be an integer >= 0, got -1"),
    ("seed str", lambda: pto.run(module(), tokens=3, seed="a", level="pto"), "seed must be an integer"),
    ("seed None", lambda: pto.run(module(), tokens=3, seed=None, level="pto"), "seed must be an integer"),
    ("level unknown", lambda: pto.run(module(), tokens=3, level="cube"), "unknown level 'cube'"),
    ("level list", lambda: pto.run(module(), tokens=3, level=["pto"]), "unknown level ['pto']"),
    ("inputs str", lambda: pto.run(module(), "abc", level="pto"), "inputs must be a list of arrays or a dict"),
    ("inputs int", lambda: pto.run(module(), 5, level="pto"), "inputs must be a list of arrays or a dict"),
    ("inputs generator", lambda: pto.run(module(), (a for a in inputs()), level="pto"), "inputs must be a list"),
    (
        "inputs by name missing",
        lambda: pto.run(module(), {"x": inputs()[0]}, level="pto"),
        "inputs by name need exactly x, w, got x",
    ),
    (
        "inputs by int keys",
        lambda: pto.run(module(), dict(enumerate(inputs())), level="pto"),
        "inputs by name need exactly x, w, got 0, 1",
    ),
    (
        "tokens contradict inputs",
        lambda: pto.run(module(), inputs(), tokens=5, level="pto"),
        "tokens=5 contradicts the inputs, which have 3 tokens",
    ),
    ("target int", lambda: pto.run(module(), inputs(), target=5), "target must be a target name"),
    ("target unknown", lambda: pto.run(module(), inputs(), target="bogus"), "unknown target 'bogus'"),
    ("l2_size -1", lambda: pto.run(compiled(), inputs(), l2_size=-1), "l2_size must be an integer >= 1"),
    ("l2_size str", lambda: pto.run(compiled(), inputs(), l2_size="a"), "l2_size must be an integer"),
    ("l2_size bool", lambda: pto.run(compiled(), inputs(), l2_size=True), "l2_size must be an integer"),
    ("l2_size over cap", lambda: pto.run(compiled(), inputs(), l2_size=2**50), "over the model's cap"),
    ("l2_size not whole sets", lambda: pto.run(compiled(), inputs(), l2_size=100), "l2_size must be a multiple of"),
    (
        "l2_size at pto level",
        lambda: pto.run(compiled(), inputs(), l2_size=1 << 20, level="pto"),
        "l2_size= needs the npu level",
    ),
    ("trace int", lambda: pto.run(compiled(), inputs(), trace=5), "trace must be a file path, got 5"),
    ("trace empty", lambda: pto.run(compiled(), inputs(), trace=""), "trace must be a file path"),
    (
        "trace in no directory",
        lambda: pto.run(compiled(), inputs(), trace="/nonexistent/dir/t.json"),
        "cannot write the trace to '/nonexistent/dir/t.json'",
    ),
    ("trace a directory", lambda: pto.run(compiled(), inputs(), trace="/"), "cannot write the trace to '/'"),
    (
        "trace at pto level",
        lambda: pto.run(compiled(), inputs(), trace="t.json", level="pto"),
        "trace= needs the npu level",
    ),
    ("golden str", lambda: pto.run(compiled(), inputs(), golden="yes"), "golden must be True or False"),
    ("golden without pto", lambda: pto.run(compiled().npu, inputs(), golden=True), "golden=True needs the pto level"),
    ("level it lacks", lambda: pto.run(compiled().npu, inputs(), level="tile"), "no tile level to run (have: npu)"),
]


@pytest.mark.parametrize(("call", "msg"), [c[1:] for c in RUN], ids=[c[0] for c in RUN])
def test_run_misuse(call, msg) -> None:
    with pytest.raises(RunError) as e:
        call()
    assert str(e.value).startswith("run: ") and msg in str(e.value)
    assert isinstance(e.value, ValueError) and isinstance(e.value, InputError) and isinstance(e.value, BuildError)


@pytest.mark.parametrize(
    ("xs", "msg"),
    [
        ([None, None], "input %x must be ?x64xf32, got dtype object"),
        ([np.ones((3, 64)), np.ones((32, 64))], "got dtype float64"),
        ([[[1.0] * 64] * 3, [[1.0] * 64] * 32], "got dtype float64"),
        ([np.ones((3, 63), np.float32), np.ones((32, 64), np.float32)], "got shape 3x63"),
        ([np.ones((3, 64), np.float32)], "the kernel takes 2 inputs (%x, %w), got 1"),
    ],
    ids=["None", "float64", "lists", "shape", "count"],
)
def test_inputs_that_do_not_fit(xs, msg) -> None:
    with pytest.raises(InputError) as e:
        pto.run(module(), xs, level="pto")
    assert msg in str(e.value)


G = np.ones((4, 8), np.float32)

CHECK = [
    ("shapes", lambda: pto.check(G, np.ones((4, 9), np.float32)), "got has shape (4, 8) but want has shape (4, 9)"),
    ("broadcastable shapes", lambda: pto.check(G, np.ones(8, np.float32)), "but want has shape (8,)"),
    (
        "float64",
        lambda: pto.check(G.astype(np.float64), G.astype(np.float64)),
        "no tolerance for dtype float64: give elem= (one of bf16, f16, f32, i8, i32)",
    ),
    ("int64", lambda: pto.check(np.ones(3, np.int64), np.ones(3, np.int64)), "no tolerance for dtype int64"),
    ("lists", lambda: pto.check([1.0, 2.0], [1.0, 2.0]), "got must be a numpy array, got list"),
    ("got None", lambda: pto.check(None, G), "got must be a numpy array, got NoneType"),
    ("want None", lambda: pto.check(G, None), "want must be a numpy array, got NoneType"),
    ("numpy scalar", lambda: pto.check(np.float32(1), np.float32(1)), "got must be a numpy array"),
    ("strings", lambda: pto.check(np.array(["a"]), np.array(["a"])), "got must hold numbers, got dtype <U1"),
    ("elem unknown", lambda: pto.check(G, G, elem="f64"), "elem must be one of bf16, f16, f32, i8, i32, got 'f64'"),
    ("elem int", lambda: pto.check(G, G, elem=5), "elem must be one of"),
    ("worst -1", lambda: pto.check(G, G, worst=-1), "worst must be an integer >= 0, got -1"),
    ("worst str", lambda: pto.check(G, G, worst="a"), "worst must be an integer >= 0"),
]


@pytest.mark.parametrize(("call", "msg"), [c[1:] for c in CHECK], ids=[c[0] for c in CHECK])
def test_check_misuse(call, msg) -> None:
    with pytest.raises(InputError) as e:
        call()
    assert str(e.value).startswith("check: ") and msg in str(e.value)
    assert isinstance(e.value, ValueError)


# --------------------------------------------------------- nothing invalid is built


def test_bad_argument_builds_nothing() -> None:
    k, x, w = small()
    with pytest.raises(BuildError):
        k.arg("y", [None, -4], "bf16")  # once built `tensor<?x-4xbf16>`
    with pytest.raises(BuildError):
        pto.rms_norm(x, eps="a")
    k.ret(pto.abs(x))
    assert len(k.block.args) == 2 and "-4" not in str(k.module()) and "rms_norm" not in str(k.module())


def test_a_built_kernel_is_not_changed() -> None:
    k, x, w = small()
    k.ret(pto.abs(x))
    text = str(k.module())
    for change in (
        lambda: k.arg("y", [4], "f32"),
        lambda: k.ret(x),
        lambda: k.set_cache(w, "normal"),
        lambda: pto.abs(x),
    ):
        with pytest.raises(BuildError, match="kernel 'k' is already built"):
            change()
    assert str(k.module()) == text


def test_kernel_error_points_at_the_users_line() -> None:
    line = inspect.currentframe().f_lineno + 2
    with pytest.raises(BuildError) as e:
        pto.Kernel("k", unroll=["a"])  # checked in the dataclass's generated __init__
    assert e.value.where == (__file__, line)


# ------------------------------------------------------------- valid stays valid


def test_valid_unusual_arguments_are_accepted() -> None:
    k = pto.Kernel("k", unroll=(np.int64(4), 1), options={"vec_nbuffer_setting": {"0": 2}})
    x = k.arg("x", (None, np.int32(64)), "f32")
    s = k.arg("s", [], "f32")  # rank 0 and a zero-sized dimension are legal tensors
    z = k.arg("z", [None, 0], "f32")
    y = pto.rms_norm(x, eps=np.float32(1e-5), vec_tile=(np.int64(4), 64))
    y = pto.adds(pto.muls(y * 2, np.float32(0.5)), 1)
    k.ret(pto.reshape(y, (None, 8, 8), inplace=np.bool_(True)), pto.abs(s), pto.abs(z))
    assert "tensor<?x8x8xf32>" in str(k.module())
    assert pto.cube_tile((16, 16), (64, 64, 64), (32, 32), split_k=np.bool_(False)) is not None
    r = pto.run(module(), {"x": inputs()[0], "w": inputs()[1]}, tokens=3, seed=np.int64(1), level="pto")
    assert r.outputs[0].shape == (3, 32) and pto.run(module(), tokens=0, level="pto").outputs[0].shape == (0, 32)
    assert pto.check(G.astype(np.float64), G.astype(np.float64), elem="f32").ok
    assert pto.check(G.astype(ml_dtypes.bfloat16), G.astype(ml_dtypes.bfloat16), worst=0).ok


def test_the_exceptions_are_exported() -> None:
    assert (pto.RunError, pto.LevelError, pto.InputError) == (RunError, LevelError, InputError)
    assert issubclass(pto.BuildError, ValueError) and issubclass(pto.RunError, pto.BuildError)
