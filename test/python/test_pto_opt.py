"""Exit codes and the no-traceback rule of pto-opt, in-process."""

from pathlib import Path

from pto.driver.errors import EXIT_INTERNAL, EXIT_USAGE, EXIT_USER
from pto.tools.pto_opt import main

INPUTS = Path(__file__).parent.parent / "tools" / "pto-opt" / "Inputs"


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    return code, out, err


def test_success(capsys):
    code, out, _ = run(capsys, str(INPUTS / "simple.mlir"), "-p", "cse")
    assert code == 0 and out.count("pto.abs") == 1


def test_user_error_is_1(capsys):
    code, _, err = run(capsys, str(INPUTS / "bad-verify.mlir"))
    assert code == EXIT_USER and "bad-verify.mlir:3:3: error:" in err


def test_usage_errors_are_2_and_one_line(capsys):
    for argv in (["--nope"], ["-p", "nope", str(INPUTS / "simple.mlir")], [str(INPUTS / "missing.mlir")]):
        code, _, err = run(capsys, *argv)
        assert code == EXIT_USAGE
        assert len(err.strip().splitlines()) == 1 and err.startswith("pto-opt: error:")


def test_a_bad_pass_option_value_is_a_usage_error(capsys):
    """Checked when the pass is made, as an unknown option is: one line, exit 2."""
    kernel = str(Path(__file__).parent.parent.parent / "examples" / "sk03_standard.mlir")
    for spec, message in (
        ("tile-to-npu{l1-buffers=3}", "tile-to-npu: l1-buffers must be 1 or 2, got 3"),
        ('tile-apply-settings{vec_nbuffer_setting="0:x"}', "vec_nbuffer_setting: '0:x' is not 'group:count'"),
        ("tile-assign-shapes{target=zzz}", "unknown target 'zzz'"),
        ("pto-sk03-pipeline{target=zzz}", "unknown target 'zzz'"),
        ("tile-unroll{factors=0}", "unroll factors must be positive"),
    ):
        code, _, err = run(capsys, kernel, "-p", spec)
        assert code == EXIT_USAGE and len(err.strip().splitlines()) == 1, err
        assert err.startswith(f"pto-opt: error: bad pass pipeline '{spec}': ") and message in err, err


def test_internal_error_is_3_and_mentions_reproducer(capsys):
    code, _, err = run(capsys, str(INPUTS / "simple.mlir"), "-p", "test-pass-crash")
    assert code == EXIT_INTERNAL
    assert len(err.strip().splitlines()) == 1 and "--mlir-pass-pipeline-crash-reproducer" in err


def test_xdsl_opt_flags_it_does_not_implement_are_refused_and_not_offered(capsys):
    for argv in (["-t", "llvm"], ["--frontend", "mlir"], ["--shrink"], ["--parsing-diagnostics"]):
        code, _, err = run(capsys, *argv, str(INPUTS / "simple.mlir"))
        assert code == EXIT_USAGE and "is not supported by pto-opt" in err, (argv, err)
    try:
        main(["--help"])
    except SystemExit:
        pass
    out = capsys.readouterr().out
    assert "--pass-pipeline" in out
    assert not any(flag in out for flag in ("--shrink", "--frontend", "--parsing-diagnostics", "--target", "riscv"))
