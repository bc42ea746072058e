"""`pto-run`: reports, outputs, traces and every bad-input case (one line, no traceback)."""

from __future__ import annotations

import json
import subprocess

import ml_dtypes
import numpy as np
import pytest
from kernels import ROOT

from pto.interp.golden import Verdict, check
from pto.tools import pto_run

STD = str(ROOT / "examples" / "sk03_standard.mlir")
HC = str(ROOT / "examples" / "hc_pre.mlir")
NPU = str(ROOT / "examples" / "levels" / "sk03_standard.npu.mlir")


def rng_inputs(tmp_path, t: int = 3, dtype=ml_dtypes.bfloat16):
    rng = np.random.default_rng(0)
    paths = []
    for name, shape in (("x", (t, 4096)), ("gamma", (4096,)), ("w", (1024, 4096))):
        p = tmp_path / f"{name}.npy"
        np.save(p, rng.standard_normal(shape, dtype=np.float32).astype(dtype))
        paths.append(str(p))
    return paths


def cli(capsys, *args: str) -> tuple[int, str, str]:
    code = pto_run.main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def test_report_outputs_and_golden(tmp_path, capsys) -> None:
    ins = rng_inputs(tmp_path)
    code, out, err = cli(
        capsys, STD, *sum((["--input", p] for p in ins), []), "--golden", "--output-dir", str(tmp_path / "o")
    )
    assert code == 0, err
    assert "total:" in out and "cycles" in out and "L2:" in out and "mte2" in out
    assert "golden result 0: ok" in out
    r = np.load(tmp_path / "o" / "result0.npy").view(ml_dtypes.bfloat16)
    assert r.shape == (3, 1024)


def test_pass_pipeline_option(capsys) -> None:
    code, out, err = cli(
        capsys,
        STD,
        "--random-inputs",
        "--tokens",
        "9",
        "--golden",
        "--pass-pipeline",
        "builtin.module(pto-sk03-pipeline{factors=4,3,1})",
    )
    assert code == 0, err
    assert "1 launch(es)" in out and "golden result 0: ok" in out  # one task graph
    # cube tasks of the 4- and 1-token bodies (9 = 4 + 4 + 1: no 3-token body runs)
    assert "linear.4 32" in out and "linear.1 16" in out and "linear.3" not in out


def test_json_and_trace(tmp_path, capsys) -> None:
    trace = tmp_path / "t.json"
    code, out, _ = cli(capsys, HC, "--random-inputs", "--tokens", "5", "--json", "--trace", str(trace))
    assert code == 0
    rep = json.loads(out)
    assert rep["cycles"] > 0 and rep["l2_hits"] + rep["l2_misses"] > 0 and rep["hbm_bytes"] > 0
    assert set(rep["peak"]) >= {"l1", "l0a", "l0b", "l0c", "ub"}
    assert any("host transposed %hc_fn" in n for n in rep["notes"])
    t = json.loads(trace.read_text())
    slices = [e for e in t["traceEvents"] if e["ph"] == "X"]
    names = {e["args"]["name"] for e in t["traceEvents"] if e["ph"] == "M" and e["name"] == "thread_name"}
    assert {"mte2", "cube", "vector", "fixpipe"} <= names
    assert slices and all({"name", "pid", "tid", "ts", "dur"} <= e.keys() for e in slices)
    assert all("bytes" in e["args"] and "cycles" in e["args"] for e in slices)


def test_npu_level_example(tmp_path, capsys) -> None:
    """examples/levels/sk03_standard.npu.mlir computes what the pto-level kernel does."""
    x, g, w = rng_inputs(tmp_path, 6)
    code, out, err = cli(
        capsys,
        NPU,
        "--input",
        x,
        "--input",
        g,
        "--input",
        w,
        "--l2-size",
        str(1 << 20),
        "--output-dir",
        str(tmp_path / "npu"),
    )
    assert code == 0, err
    assert "L2 1048576 bytes" in out
    code, _, err = cli(capsys, STD, "--input", x, "--input", g, "--input", w, "--output-dir", str(tmp_path / "pto"))
    got, want = (np.load(tmp_path / d / "result0.npy").view(ml_dtypes.bfloat16) for d in ("npu", "pto"))
    assert check(got, want).ok


@pytest.mark.parametrize(
    ("args", "msg"),
    [
        (["--random-inputs"], "--random-inputs needs --tokens N"),
        ([], "give the kernel's inputs with --input"),
        (["--random-inputs", "--tokens", "2", "--target", "nosuch"], "unknown target 'nosuch'"),
        (["--random-inputs", "--tokens", "2", "--l2-size", "1000"], "--l2-size must be a positive multiple of 8192"),
        (["--random-inputs", "--tokens", "2", "--pass-pipeline", "builtin.module(nosuch)"], "unknown pass"),
        (["--bogus"], "unrecognized arguments: --bogus"),
    ],
)
def test_bad_flags_exit_2(capsys, args, msg) -> None:
    with pytest.raises(SystemExit) if "--bogus" in args else _nothing():
        code, _, err = cli(capsys, STD, *args)
        assert code == 2
        assert msg in err and "Traceback" not in err and len(err.strip().splitlines()) == 1
    if "--bogus" in args:
        assert msg in capsys.readouterr().err


class _nothing:
    def __enter__(self):
        return self

    def __exit__(self, *a):
        return False


def test_bad_inputs_exit_1(tmp_path, capsys) -> None:
    x, g, w = rng_inputs(tmp_path)
    bad_shape = tmp_path / "g.npy"
    np.save(bad_shape, np.zeros((4095,), ml_dtypes.bfloat16))
    f32 = tmp_path / "f.npy"
    np.save(f32, np.zeros((4096,), np.float32))
    text = tmp_path / "t.npy"
    text.write_text("not an array")
    cases = [
        ([x, g], "takes 3 inputs (%x, %gamma, %w), got 2 --input files"),
        ([x, g, w, w], "takes 3 inputs"),
        ([x, str(bad_shape), w], "input %gamma must be 4096xbf16, got shape 4095"),
        ([x, str(f32), w], "input %gamma must be 4096xbf16, got dtype float32"),
        ([x, str(tmp_path / "missing.npy"), w], "no such file"),
        ([x, str(text), w], "not a .npy array file"),
    ]
    for files, msg in cases:
        code, _, err = cli(capsys, STD, *sum((["--input", p] for p in files), []))
        assert code == 1 and msg in err and "Traceback" not in err, err
    code, _, err = cli(capsys, STD, "--input", x, "--input", g, "--input", w, "--tokens", "7")
    assert code == 1 and "--tokens 7 contradicts the inputs, which have 3 tokens" in err
    code, _, err = cli(capsys, NPU, "--random-inputs", "--tokens", "2", "--golden")
    assert code == 1 and "--golden needs a kernel above the npu level" in err


def test_bad_kernel_file(tmp_path, capsys) -> None:
    bad = tmp_path / "bad.mlir"
    bad.write_text("func.func @k() {\n  %x = pto.nosuch\n}\n")
    code, _, err = cli(capsys, str(bad), "--random-inputs", "--tokens", "1")
    assert code == 1 and f"{bad}:2:" in err and "Traceback" not in err
    code, _, err = cli(capsys, str(tmp_path / "none.mlir"), "--random-inputs", "--tokens", "1")
    assert code == 1 and "cannot read" in err


def test_run_time_capacity_error_names_buffer(tmp_path, capsys) -> None:
    # Verified for ascend950 (248 KiB of UB), run on ascend910b1 (192 KiB).
    k = tmp_path / "k.mlir"
    k.write_text("""func.func @k(%x: !npu.buf<8x64xf32, gm>, %out: !npu.buf<8x64xf32, gm> {pto.output})
    attributes {pto.target = "ascend950"} {
  npu.launch vector 1 (%v) {
    %a = npu.alloc ub [200704] : !npu.buf<8x64xf32, ub>
  }
  func.return
}
""")
    np.save(tmp_path / "x.npy", np.zeros((8, 64), np.float32))
    code, _, err = cli(capsys, str(k), "--input", str(tmp_path / "x.npy"), "--target", "ascend910b1")
    assert code == 1
    assert (
        f"{k}:4:5: error: aiv0: buffer !npu.buf<8x64xf32, ub> at offset 200704 needs 202752 bytes of ub, "
        "which has 196608" in err
    )


def test_golden_mismatch_exits_1(monkeypatch, capsys) -> None:
    monkeypatch.setattr(pto_run, "check", lambda g, w, elem=None: Verdict(False, g.size, 9, 0, [((0, 1), 1.0, 2.0)]))
    code, out, _ = cli(capsys, STD, "--random-inputs", "--tokens", "1", "--golden")
    assert code == 1 and "MISMATCH: 9 of 1024" in out and "at [0, 1]: got 1, want 2" in out


def test_console_script() -> None:
    p = subprocess.run(
        ["pto-run", STD, "--random-inputs", "--tokens", "1", "--json"], capture_output=True, text=True, check=False
    )
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout)["target"] == "ascend910b1"
