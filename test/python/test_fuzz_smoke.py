"""A bounded, seeded run of bench/fuzz.py (issue 10's fuzz harness): a few hundred
hostile cases of every kind must give no traceback, no internal error, no hang and no
wrong result, and leave the repository's files byte-identical. The full run (>= 10,000
cases) is the bench: `python bench/fuzz.py --cases 10000 --jobs 2 --out DIR`."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from kernels import bench

ROOT = Path(__file__).resolve().parents[2]
fuzz = bench("fuzz", "fuzz")  # (results cross from the workers by pickle, which finds classes by module)

CASES_PER_KIND = 60  # 300 cases: about 30 s on two cores


@pytest.fixture(scope="module")
def campaign(tmp_path_factory):
    out = tmp_path_factory.mktemp("fuzz")
    args = fuzz.parse_args(
        [
            "--cases",
            str(CASES_PER_KIND * len(fuzz.DEFAULT_KINDS)),
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


@pytest.mark.parametrize("kind", fuzz.DEFAULT_KINDS)
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
    by_kind = {k: {r.outcome for r in campaign["results"] if r.kind == k} for k in fuzz.DEFAULT_KINDS}
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


# ------------------------------------------------------------------------- engines

ENGINE_CASES = 12  # about 10 s on one busy core


def test_engines_kind_finds_the_engines_agreeing(tmp_path) -> None:
    """A few engines cases (five runs each, both engines, full and timing-only): no
    disagreement, and some kernels that run through."""
    args = ["--kinds", "engines", "--cases", str(ENGINE_CASES), "--seed", "0", "--jobs", "1"]
    got = fuzz.fuzz(fuzz.parse_args([*args, "--out", str(tmp_path), "--no-reduce", "--quiet"]))
    bad = [f"{r.sig}  (case {r.id}: {r.label})" for r in got["results"] if r.outcome in fuzz.BAD]
    assert not bad, "\n".join(bad)
    assert sum(r.outcome == "accepted" for r in got["results"]) >= ENGINE_CASES // 2


# A plain matmul: one cube stage, a vector cast, a few tokens (well under a second a run).
PLAIN = {
    "args": [["x", [None, 16], "bf16", False], ["w", [16, 16], "bf16", False]],
    "ops": [{"op": "matmul", "res": ["v1"], "args": ["x", "w"], "types": [[[None, 16], "f32"]], "b_trans": True}],
    "rets": ["v1"],
    "hints": {},
    "form": "plain",
}


@pytest.fixture(scope="module")
def five_runs():
    from pto.bench.fuzzing import engines

    p = engines.engines_payload(PLAIN, 5, 0)
    module = engines.lowered(p["files"]["kernel.mlir"]["text"])
    return engines.five_runs(module, engines.make_inputs(PLAIN, 5, 0))


def verdict(outs: list) -> fuzz.Result:
    res = fuzz.Result(0, "engines", "unit", "accepted")
    fuzz.judge(outs, res)
    return res


def perturbed(outs: list, n: int, change) -> list:
    """outs with run n deep-copied and changed."""
    import copy

    outs = list(outs)
    outs[n] = copy.deepcopy(outs[n])
    change(outs[n])
    return outs


def _nan_payload(r) -> None:  # the same NaN value, another bit pattern
    r.outputs[0].view(np.uint32)[0, 0] = 0x7FC00001
    r.outputs[0].view(np.uint32)[0, 1] = 0x7FC00000


@pytest.mark.parametrize(
    ("n", "change", "key"),
    [
        (
            1,
            lambda r: r.outputs[0].view(np.uint32).__setitem__((2, 3), r.outputs[0].view(np.uint32)[2, 3] ^ 1),
            "outputs",
        ),
        (2, _nan_payload, "outputs"),
        (1, lambda r: setattr(r.report, "cycles", r.report.cycles + 1e-9), "report.cycles"),
        (1, lambda r: r.report.cores[next(iter(r.report.cores))].__setitem__("mte2", 1.5), "report.cores"),
        (
            1,
            lambda r: r.report.tensors["w"].__setitem__("hits", r.report.tensors["w"]["hits"] + 1),
            "report.tensors.w.hits",
        ),
        (
            1,
            lambda r: r.report.tensors["w"].__setitem__("hbm_read", r.report.tensors["w"]["hbm_read"] + 32),
            "hbm_read",
        ),
        (1, lambda r: r.report.tasks.__setitem__("cube", r.report.tasks["cube"] + 1), "report.tasks.cube"),
        (1, lambda r: r.write_counts[0].__setitem__((0, 0), 2), "write_counts"),
        (1, lambda r: setattr(r.report.events[3], "start", r.report.events[3].start + 1), "trace events (start)"),
        (1, lambda r: r.report.events.pop(), "trace events (count)"),
        (
            3,
            lambda r: setattr(r.report, "cycles", r.report.cycles * 2),
            "interp timing-only vs compiled timing-only: report.cycles",
        ),
        (4, lambda r: r.report.events.reverse(), "compiled timing-only"),
    ],
)
def test_engines_comparison_sees_a_perturbed_run(five_runs, n: int, change, key: str) -> None:
    assert verdict(five_runs).outcome == "accepted"
    res = verdict(perturbed(five_runs, n, change))
    assert res.outcome == "wrong" and key in res.sig, res


def test_engines_comparison_of_errors(five_runs) -> None:
    """The same error at the same op is clean; another op, a missing error or a raw
    exception is a traceback."""
    from pto.interp.machine import MachineError

    op_a, op_b = object(), object()
    same = [MachineError(op_a, "out of bounds") for _ in range(5)]
    assert verdict(same).outcome == "clean"
    other_op = [*same[:4], MachineError(op_b, "out of bounds")]
    assert verdict(other_op).outcome == "traceback" and "different op" in verdict(other_op).sig
    other_msg = [*same[:1], MachineError(op_a, "deadlock"), *same[2:]]
    assert "different message" in verdict(other_msg).sig
    half = [*same[:2], *five_runs[2:]]
    assert verdict(half).outcome == "traceback" and "did not" in verdict(half).sig
    raw = [ValueError("x")] * 5
    assert verdict(raw).outcome == "traceback" and "ValueError" in verdict(raw).sig


def test_engines_comparison_sees_timing_only_reports_off_the_full_ones(five_runs) -> None:
    """Both timing-only runs agreeing with each other but not with their full runs."""
    outs = perturbed(perturbed(five_runs, 3, lambda r: r.report.tasks.clear()), 4, lambda r: r.report.tasks.clear())
    assert verdict(outs).sig == "wrong: engines: interp vs interp timing-only: report.tasks (keys)"
