"""A user error's traceback ends at the user's line (issue 31): the entry points of
`pto.pypto` and of `pto` hide the library's frames (pto/tracebacks.py), unless
PTO_TRACEBACK_FILTERING=off; an exception that is not a user error keeps them."""

import traceback

import numpy as np
import pytest

import pto
import pto.frontend.builder
import pto.pypto as pypto
import pto.pypto.errors
from pto.tracebacks import api_boundary

K = 64
FP32 = pypto.DT_FP32


def line_of(marker: str) -> int:
    """The line of this file that ends with `marker`."""
    with open(__file__) as f:
        return next(n for n, text in enumerate(f, 1) if text.rstrip().endswith(marker))


@pypto.frontend.jit
def transposed(x: pypto.Tensor([pypto.DYNAMIC, K], FP32), out: pypto.Tensor([pypto.DYNAMIC, K], FP32)):
    for idx, p in pypto.loop_unroll(0, x.shape[0], 1, unroll_list=[2]):
        xt = pypto.view(x, [p, K], [idx, 0])
        pypto.assemble(pypto.sqrt(pypto.transpose(xt, 0, 1)), [idx, 0], out)  # refused: transpose


@pypto.frontend.jit
def square_root(x: pypto.Tensor([pypto.DYNAMIC, K], FP32), out: pypto.Tensor([pypto.DYNAMIC, K], FP32)):
    for idx, p in pypto.loop_unroll(0, x.shape[0], 1, unroll_list=[2]):
        pypto.assemble(pypto.sqrt(pypto.view(x, [p, K], [idx, 0])), [idx, 0], out)  # sqrt


def frames(e: pytest.ExceptionInfo) -> list[tuple[str, int]]:
    return [(f.filename, f.lineno) for f in traceback.extract_tb(e.value.__traceback__)]


def in_library(filename: str) -> bool:
    """A file of the pto package's code (not of its tests)."""
    inside = filename.startswith(pto.__path__[0]) and "site-packages" not in filename  # (a venv in the checkout)
    return inside and "/test/" not in filename


X = np.ones((3, K), np.float32)


def test_a_refusal_in_a_kernel_ends_at_the_kernels_line() -> None:
    with pytest.raises(pto.BuildError, match="pypto.transpose is supported only as an operand") as e:
        transposed(X, np.zeros_like(X))  # the call
    assert frames(e) == [(__file__, line_of("# the call")), (__file__, line_of("# refused: transpose"))]
    with pytest.raises(pto.BuildError) as e:
        transposed.trace(X, np.zeros_like(X))
    assert frames(e)[-1] == (__file__, line_of("# refused: transpose"))
    assert len(traceback.format_exception_only(e.value)) == 1  # the message, one line


def test_a_refusal_of_the_call_itself_ends_at_the_call() -> None:
    with pytest.raises(pto.BuildError, match="argument 'out' has shape") as e:
        square_root(X, np.zeros((3, K + 1), np.float32))  # a misshapen output
    assert frames(e) == [(__file__, line_of("# a misshapen output"))]
    with pytest.raises(pto.BuildError, match="square_root: missing a required argument") as e:
        square_root(X)  # one argument short
    assert frames(e) == [(__file__, line_of("# one argument short"))]
    # the TypeError of binding the arguments, which the message states, is not printed too
    assert "During handling" not in "".join(traceback.format_exception(e.value))


def test_a_refused_annotation_ends_at_the_kernels_definition() -> None:
    with pytest.raises(pto.BuildError, match="pypto.Tensor's dimensions are positive integers") as e:

        @pypto.frontend.jit
        def k(x: pypto.Tensor([pypto.DYNAMIC, -4], FP32)):  # a negative size
            pass

    assert frames(e) == [(__file__, line_of("# a negative size"))]


def test_refusals_of_the_pto_api_end_at_the_users_line() -> None:
    with pytest.raises(pto.CompileError) as c:
        pto.compile("not a module")  # compile
    with pytest.raises(pto.RunError) as r:
        pto.run("not a kernel")  # run
    with pytest.raises(pto.InputError) as i:
        pto.check(np.zeros(3), np.zeros(4))  # check
    with pytest.raises(pto.BuildError) as t:
        pto.trace(lambda x: pto.sqrt(x), x=pto.arg([None, K], "f32"))  # trace
    for e, marker in ((c, "# compile"), (r, "# run"), (i, "# check"), (t, "# trace")):
        # every frame is this file's (numpy's errstate wrapper around `check` was one that
        # was not), and the last is the line
        assert {f for f, _ in frames(e)} == {__file__}, frames(e)
        assert frames(e)[-1] == (__file__, line_of(marker))


def test_the_switch_keeps_the_librarys_frames(monkeypatch) -> None:
    monkeypatch.setenv("PTO_TRACEBACK_FILTERING", "off")
    with pytest.raises(pto.BuildError) as e:
        transposed(X, np.zeros_like(X))
    assert frames(e)[-1][0] == pto.pypto.errors.__file__  # where `refuse` raises it
    assert (__file__, line_of("# refused: transpose")) in frames(e)


def test_a_bug_keeps_the_librarys_frames(monkeypatch) -> None:
    def broken(*args, **kwargs):
        raise ZeroDivisionError("a bug")  # the bug

    monkeypatch.setattr(pto.frontend.builder, "sqrt", broken)
    with pytest.raises(ZeroDivisionError) as e:
        square_root(X, np.zeros_like(X))
    assert any(in_library(f) for f, _ in frames(e)), frames(e)
    assert frames(e)[-1] == (__file__, line_of("# the bug"))


def test_an_explicit_cause_is_kept_without_the_librarys_frames() -> None:
    # `raise ... from e` in the library: the cause is still printed, its frames filtered too
    library = {"__name__": "pto.somewhere", "BuildError": pto.BuildError}
    code = "def f():\n    try:\n        {}['k']\n    except KeyError as e:\n        raise BuildError('no k', None) from e\n"
    exec(code, library)
    with pytest.raises(pto.BuildError) as e:
        api_boundary(library["f"])()  # an entry point
    assert frames(e) == [(__file__, line_of("# an entry point"))] and isinstance(e.value.__cause__, KeyError)
    assert traceback.extract_tb(e.value.__cause__.__traceback__) == []
    assert "direct cause" in "".join(traceback.format_exception(e.value))


def test_a_pypto_call_outside_a_kernel_ends_at_the_users_line() -> None:
    # (a test's setup calls PyPTO's settings before any kernel; an op may be misplaced)
    with pytest.raises(pto.BuildError, match="unknown host option 'compile_timeout_s'") as e:
        pypto.set_host_options(compile_timeout_s=10)  # a misspelt setting
    assert frames(e) == [(__file__, line_of("# a misspelt setting"))]
    with pytest.raises(pto.BuildError, match="pypto.sqrt is called outside a kernel") as e:
        pypto.sqrt(X)  # an op outside a kernel
    assert frames(e) == [(__file__, line_of("# an op outside a kernel"))]
    with pytest.raises(pto.BuildError, match=r"pypto.topk \(a PyPTO 0.2.0 name\) is not modelled") as e:
        pypto.topk(X, 1)  # a name not modelled
    assert frames(e) == [(__file__, line_of("# a name not modelled"))]


def test_an_unmodelled_parameter_dtype_is_said_at_its_annotation() -> None:
    """corpus20's k178: a DT_INT64 index parameter; the message names the signature's line
    (where the dtype is written), the traceback still ends at the call."""

    @pypto.frontend.jit
    def k(
        x: pypto.Tensor([pypto.DYNAMIC, K], FP32),
        index: pypto.Tensor([pypto.DYNAMIC], pypto.DT_INT64),  # the index's annotation
        out: pypto.Tensor([pypto.DYNAMIC, K], FP32),
    ):
        for idx, p in pypto.loop_unroll(0, x.shape[0], 1, unroll_list=[2]):
            pypto.assemble(pypto.view(x, [p, K], [idx, 0]), [idx, 0], out)

    x = np.ones((3, K), np.float32)
    with pytest.raises(pypto.BuildError) as e:
        k(x, np.zeros(3, np.int64), np.zeros_like(x))  # the call with an int64 index
    assert str(e.value).startswith(f"{__file__}:{line_of('# the index' + chr(39) + 's annotation')}: error: ")
    assert "parameter 'index''s dtype DT_INT64 is not modelled" in str(e.value)
    assert frames(e)[-1] == (__file__, line_of("# the call with an int64 index"))


def test_two_dynamic_axes_of_one_annotation_are_said_at_it() -> None:
    """corpus20's k181 (Kimi's block attention): `[DYNAMIC, DYNAMIC, STATIC]` with two
    sizes; the message names the annotation's line."""

    @pypto.frontend.jit
    def k(
        x: pypto.Tensor([pypto.DYNAMIC, pypto.DYNAMIC, K], FP32),  # two token axes
        out: pypto.Tensor([pypto.DYNAMIC, K], FP32),
    ):
        for idx, p in pypto.loop_unroll(0, x.shape[0], 1, unroll_list=[2]):
            pypto.assemble(pypto.view(x, [p, 1, K], [idx, 0, 0]), [idx, 0], out)

    with pytest.raises(pypto.BuildError) as e:
        k(np.ones((3, 5, K), np.float32), np.zeros((3, K), np.float32))
    assert str(e.value).startswith(f"{__file__}:{line_of('# two token axes')}: error: ")
    assert "has 5 rows on its DYNAMIC axis (dim 1), another axis of it 3" in str(e.value)
