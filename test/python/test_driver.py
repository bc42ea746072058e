"""pto.driver: the library behind pto-opt, pto-run, pto-tune and the Python API."""

import pytest
from xdsl.context import Context
from xdsl.utils.exceptions import ParseError

from pto.diagnostics import DiagnosticError
from pto.driver.errors import InternalError, UsageError
from pto.driver.lower import Instrument, KeepLevels, Verify, lower
from pto.driver.parse import check_strings, parse_source
from pto.driver.pipelines import expand, parse_pipeline, pipeline_spec, to_npu
from pto.driver.registry import load_dialects


def _ctx() -> Context:
    ctx = Context()
    load_dialects(ctx)
    return ctx


def _example(name: str) -> str:
    from kernels import ROOT

    return (ROOT / "examples" / name).read_text()


def test_an_unterminated_string_is_found_in_linear_time_at_its_quote():
    text = 'func.func @f() attributes {a = "' + "x" * 100_000 + "\n}"
    with pytest.raises(ParseError) as e:
        check_strings(text, "k.mlir")
    assert e.value.msg == "unterminated string literal" and e.value.span.start == text.index('"')


def test_strings_and_comments_are_told_apart():
    check_strings('// a comment with one " quote\n%x = "a // not a comment" "b\\"c" "\\0A"\n', "k")
    with pytest.raises(ParseError, match="bad escape"):
        check_strings('%x = "a\\qb"\n', "k")


def test_an_input_of_only_comments_is_an_empty_module():
    module = parse_source(_ctx(), "// nothing here\n", "k")
    assert list(module.body.block.ops) == []


def test_pipeline_spelling_and_errors():
    assert pipeline_spec("builtin.module(cse,tile-unroll{factors=4,1})") == "cse,tile-unroll{factors=4,1}"
    assert (
        to_npu("pto", "ascend950") == "pto-sk03-pipeline{target=ascend950}"
        and to_npu("tile") == "tile-assign-shapes,tile-to-npu"
    )
    with pytest.raises(UsageError, match="anchor 'func.func' is not supported"):
        pipeline_spec("func.func(cse)")
    with pytest.raises(UsageError, match="unknown pass 'nope'"):
        parse_pipeline("nope")
    with pytest.raises(UsageError, match="bad pass pipeline 'tile-unroll{bogus=1}'"):
        parse_pipeline("tile-unroll{bogus=1}")


def test_expand_runs_a_named_pipeline_pass_by_pass():
    names = [p.name for p in expand(parse_pipeline("cse,pto-sk03-pipeline").passes)]
    assert names[0] == "cse" and names[1:] == [p.name for p in parse_pipeline("pto-sk03-pipeline").passes[0].passes()]
    assert "pto-to-tile" in names and names[-1] == "tile-to-npu"


def test_lower_keeps_each_level_and_calls_instruments_in_order():
    seen: list[str] = []

    class Log(Instrument):
        def before(self, p, module):
            seen.append("+" + p.name)

        def after(self, p, module):
            seen.append("-" + p.name)

    ctx = _ctx()
    module = parse_source(ctx, _example("sk03_standard.mlir"), "k")
    keep = KeepLevels()
    lower(ctx, module, expand(parse_pipeline("pto-sk03-pipeline").passes), [keep, Verify(), Log()])
    assert list(keep.levels) == ["pto", "tile"]
    assert "pto.rms_norm" in str(keep.levels["pto"]) and "tile.cube_stage" in str(keep.levels["tile"])
    assert "npu.graph" in str(module)
    assert seen[:4] == ["+pto-join-n-windows", "-pto-join-n-windows", "+pto-fuse-stages", "-pto-fuse-stages"]
    assert seen[-1] == "-tile-to-npu"


def test_a_failing_pass_is_a_diagnostic_and_a_crash_an_internal_error():
    failed: list[str] = []

    class OnFail(Instrument):
        def failed(self, p):
            failed.append(p.name)

    ctx = _ctx()
    module = parse_source(ctx, _example("sk03_standard.mlir"), "k")
    with pytest.raises(DiagnosticError):
        lower(ctx, module, "builtin.module(cse,test-pass-failure)", [OnFail()])
    with pytest.raises(InternalError, match="pass 'test-pass-crash' crashed"):
        lower(ctx, module, "test-pass-crash", [OnFail()])
    assert failed == ["test-pass-failure", "test-pass-crash"]


def test_a_pass_that_cannot_be_imported_is_an_internal_error_not_a_bad_pipeline(monkeypatch):
    from pto.driver import registry

    monkeypatch.setitem(registry.PASSES, "cse", ("pto.no_such_module", "Nothing"))
    with pytest.raises(InternalError, match="cannot load pass 'cse': ModuleNotFoundError"):
        parse_pipeline("cse")
