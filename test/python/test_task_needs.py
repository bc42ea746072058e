"""Per-task dependences (`npu.tasks ... needs`): a split-K run waits only for the vector
tiles of its K range, not for its whole body (PyPTO 0.2.0, mhc_pre t = 256 `[16, 1]` M2
split-K: the first cube task starts at 19,627; measured, bench/fidelity/PYPTO_NOTES.md (j))."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest
from xdsl.context import Context

from pto.dialects import npu
from pto.driver.lower import lower
from pto.driver.parse import LocatingParser
from pto.driver.registry import load_dialects
from pto.interp.run import random_inputs, run, signature

ROOT = Path(__file__).resolve().parents[2]
spec = importlib.util.spec_from_file_location("fidelity", ROOT / "bench" / "fidelity.py")
fidelity = importlib.util.module_from_spec(spec)
spec.loader.exec_module(fidelity)
CONFIGS = {c["id"]: c for c in json.loads((ROOT / "bench" / "fidelity" / "pypto_results.json").read_text())["configs"]}


def first_run(target: str, strip: bool = False) -> float:
    """When the first split-K cube task starts (`strip`: with every `needs` removed, i.e.
    each task waiting for its whole body)."""
    c = CONFIGS["mhc_t256_K16384_N24_U2_M2_sk1"]
    ctx = Context()
    load_dialects(ctx)
    m = LocatingParser(ctx, fidelity.kernel(c, target), "k").parse_module()
    inputs = random_inputs(signature(m), 256, 0)
    lower(ctx, m, "pto-sk03-pipeline{factors=16,1}")
    groups = [g for g in m.walk() if isinstance(g, npu.TasksOp)]
    assert any(g.needs is not None for g in groups)
    for g in groups if strip else ():
        g.needs = None
    rep = run(m, inputs).report
    assert rep is not None
    return min(r.start for r in rep.task_runs if r.group == "linear.16")


@pytest.mark.parametrize("target", ["ascend910b1-pypto020", "ascend910b1"])
def test_a_run_waits_only_for_its_k_range(target: str) -> None:
    assert first_run(target) < first_run(target, strip=True)


def test_first_run_starts_when_pypto_starts_it() -> None:
    assert first_run("ascend910b1-pypto020") == pytest.approx(19_627, rel=0.01)
