"""A bounded, seeded run of bench/fuzz.py (issue 10's fuzz harness): a few hundred
hostile cases of every kind must give no traceback, no internal error, no hang and no
wrong result, and leave the repository's files byte-identical. The full run (>= 10,000
cases) is the bench: `python bench/fuzz.py --cases 10000 --jobs 2 --out DIR`."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
spec = importlib.util.spec_from_file_location("fuzz", ROOT / "bench" / "fuzz.py")
fuzz = importlib.util.module_from_spec(spec)
sys.modules["fuzz"] = fuzz  # results cross from the workers by pickle, which finds classes by module
spec.loader.exec_module(fuzz)

CASES_PER_KIND = 60  # 300 cases: about 30 s on two cores


@pytest.fixture(scope="module")
def campaign(tmp_path_factory):
    out = tmp_path_factory.mktemp("fuzz")
    args = fuzz.parse_args(
        [
            "--cases",
            str(CASES_PER_KIND * len(fuzz.KINDS)),
            "--seed",
            "0",
            "--jobs",
            "2",
            "--out",
            str(out),
            "--no-reduce",
            "--quiet",
        ]
    )
    return Campaign(fuzz.fuzz(args))


class Campaign(dict):
    def __repr__(self) -> str:  # pytest prints a failing test's arguments: not 300 results
        return f"<fuzz campaign: {len(self['results'])} cases>"


@pytest.mark.parametrize("kind", fuzz.KINDS)
def test_no_bad_outcome(campaign, kind: str) -> None:
    results = [r for r in campaign["results"] if r.kind == kind]
    assert len(results) == CASES_PER_KIND
    first: dict[str, object] = {}
    for r in results:
        if r.outcome in fuzz.BAD:
            first.setdefault(r.sig, r)
    bad = [f"{sig}  (e.g. case {r.id}: {r.label})" for sig, r in sorted(first.items())]
    assert not bad, f"{len(bad)} distinct bad outcomes of {kind} cases:\n" + "\n".join(bad)


def test_inputs_byte_identical(campaign) -> None:
    assert campaign["inputs_ok"]


def test_cases_exercise_both_sides(campaign) -> None:
    """A generator that only makes rejected (or only accepted) cases tests little."""
    by_kind = {k: {r.outcome for r in campaign["results"] if r.kind == k} for k in fuzz.KINDS}
    for kind in ("text", "semantic", "flags", "api"):
        assert "accepted" in by_kind[kind], kind
    for kind in ("text", "npy", "flags", "api"):
        assert "clean" in by_kind[kind], kind


def test_cases_are_deterministic() -> None:
    corpus = fuzz.load_corpus()
    assert corpus, "no valid .mlir in the repository"
    for i, kind in enumerate(fuzz.KINDS):
        a = fuzz.make_case(7, i, kind, corpus, 10.0)
        b = fuzz.make_case(7, i, kind, corpus, 10.0)
        assert (a.label, repr(a.payload)) == (b.label, repr(b.payload))


def test_harness_sees_an_internal_error_and_a_hang(tmp_path) -> None:
    """The classification itself: the tools' crash pass is an internal error at its frame,
    and a case that does not return is a hang that does not stall the run."""
    crash = fuzz.Case(
        0,
        "flags",
        "crash pass",
        {
            "tool": "opt",
            "argv": ["{d}/k.mlir", "-p", "test-pass-crash"],
            "primary": "k.mlir",
            "files": {"k.mlir": {"text": "func.func @f() {\n  func.return\n}\n"}},
        },
        10.0,
    )
    sleep = fuzz.Case(1, "api", "sleep", {"api": "import time\ntime.sleep(60)\n", "primary": "api"}, 1.0)
    pool = fuzz.Pool(2, str(tmp_path), 0, grace=2.0)
    try:
        got = {r.id: r for r in pool.run([crash, sleep])}
    finally:
        pool.close()
    assert got[0].outcome == "internal" and got[0].frame.startswith("passes/"), got[0]
    assert got[1].outcome == "hang" and got[1].secs < 10, got[1]


def test_reference_declines_order_dependent_overflow() -> None:
    """A matmul whose partial sums may pass f32's range has no reference: whether the f32
    accumulator overflows depends on its summation order (a 50,000-case run called the
    model's inf there wrong)."""
    k = {
        "args": [("x", [None, 4], "f32", None), ("w", [4, 2], "f32", None)],
        "ops": [{"op": "matmul", "args": ["x", "w"], "res": ["y"], "types": [([None, 2], "f32")]}],
        "rets": ["y"],
    }
    big = float(fuzz.F32_MAX) / 2
    x = np.array([[big, big, -big, -big], [1, 2, 3, 4]], dtype=np.float32)
    w = np.ones((4, 2), dtype=np.float32)
    (y,) = fuzz.eval_numpy(k, [x, w])
    assert np.isnan(y[0]).all() and np.array_equal(y[1], [10, 10])


def test_reference_dequantises_in_f32() -> None:
    """The dequant's products are f32, as the hardware's and SK03.md's: an activation
    scale near f32's range overflows before the weight scale brings it back (a 50,000-
    case run called the model's inf there wrong)."""
    k = {
        "args": [("acc", [None, 1], "i32", None), ("s", [None, 1], "f32", None), ("ws", [1, 1], "f32", None)],
        "ops": [{"op": "dequant", "args": ["acc", "s", "ws"], "res": ["y"], "types": [([None, 1], "f32")]}],
        "rets": ["y"],
    }
    acc = np.array([[16129]], dtype=np.int32)
    (y,) = fuzz.eval_numpy(k, [acc, np.array([[2.4e36]], np.float32), np.array([[1e-3]], np.float32)])
    assert np.isinf(y).all()
