"""`model.weight_task` (tile-to-npu, lowering/tile_to_npu/weights.py): the weight-only work
of the vector stages before the cube (RMSNorm's gamma widened to f32) as one task of its
own in front of the graph, as PyPTO 0.2.0 runs it (ascend910b1-pypto020), or done in
every task that reads it (ascend910b1)."""

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
CONFIGS = json.loads((ROOT / "bench" / "fidelity" / "pypto_results.json").read_text())["configs"]
STD = next(c for c in CONFIGS if c["id"] == "std_t40_K1024_N1024_U3_C6")


def lowered(target: str):
    ctx = Context()
    load_dialects(ctx)
    m = LocatingParser(ctx, fidelity.kernel(STD, target), "k").parse_module()
    lower(ctx, m, "pto-sk03-pipeline{factors=" + ",".join(map(str, STD["unroll"])) + "}")
    return m


def groups(m) -> dict[str, npu.TasksOp]:
    return {t.label.data: t for t in m.walk() if isinstance(t, npu.TasksOp)}


def test_the_calibration_gives_gamma_a_task_every_norm_group_waits_for() -> None:
    g = groups(lowered("ascend910b1-pypto020"))
    w = g["g.cast"]
    assert w.per_body.value.data == 1 and not w.deps()
    assert list(g)[0] == "g.cast"  # in front of the graph: the first ready task
    norms = [t for label, t in g.items() if label.startswith("rmsnorm.")]
    assert len(norms) == len(STD["unroll"]) and all(t.deps() == ["g.cast"] for t in norms)
    kinds = [type(o).__name__ for o in w.body.block.ops]
    assert kinds.count("DmaOp") == 2 and "VCastOp" in kinds


def test_the_device_default_widens_gamma_in_each_task() -> None:
    g = groups(lowered("ascend910b1"))
    assert not any(label.endswith(".cast") and label.startswith("g") for label in g)
    assert all(not t.deps() for label, t in g.items() if label.startswith("rmsnorm."))


@pytest.mark.parametrize("engine", ["interp", "compiled"])
def test_the_weight_task_runs_first_and_the_norm_tasks_after_it(engine: str, monkeypatch) -> None:
    monkeypatch.setattr("pto.interp.run.DEFAULT_ENGINE", engine)
    m = lowered("ascend910b1-pypto020")
    rep = run(m, random_inputs(signature(m), 20, 0)).report
    assert rep is not None
    t = rep.task_runs
    w = [r for r in t if r.group == "g.cast"]
    assert len(w) == 1
    assert min(r.start for r in t if r.group.startswith("rmsnorm.")) > w[0].end
