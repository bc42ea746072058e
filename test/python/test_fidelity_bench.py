"""bench/fidelity.py: its rank statistics, and that every form of its configurations
builds a kernel that lowers and runs (on a few tokens, so the test stays fast)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from kernels import bench

ROOT = Path(__file__).resolve().parents[2]
fidelity = bench("fidelity", "fidelity")
CONFIGS = json.loads((ROOT / "bench" / "fidelity" / "pypto_results.json").read_text())["configs"]


def test_spearman_and_ties() -> None:
    assert fidelity.spearman([1, 2, 3, 4], [10, 20, 30, 40]) == pytest.approx(1.0)
    assert fidelity.spearman([1, 2, 3, 4], [4, 3, 2, 1]) == pytest.approx(-1.0)
    assert fidelity.ranks([5, 1, 5, 2]) == [2.5, 0.0, 2.5, 1.0]
    assert math.isnan(fidelity.spearman([1, 1], [1, 2]))


@pytest.mark.parametrize("form", ["std", "quant", "mhc"])
def test_each_form_lowers_and_runs(form: str) -> None:
    c = dict(next(c for c in CONFIGS if c["form"] == form and c.get("cycles")))
    c["t"] = 3  # a body of the factor-1 loop or a tail: enough to run every group
    assert fidelity.measure(c) > 0


def test_it_runs_the_pypto020_calibration() -> None:
    """PyPTO 0.2.0's simulator is compared with the target that reproduces it."""
    c = next(c for c in CONFIGS if c.get("cycles"))
    assert fidelity.TARGET == "ascend910b1-pypto020" and 'pto.target = "ascend910b1-pypto020"' in fidelity.kernel(c)


def test_group_figures_price_the_models_pick_under_pypto() -> None:
    """The pick's cost is PyPTO's cycles of the model's best over PyPTO's best."""
    rs = [
        {"id": "a", "pypto": 100.0, "pto_ir": 90.0},
        {"id": "b", "pypto": 110.0, "pto_ir": 80.0},  # the model's pick
        {"id": "c", "pypto": 200.0, "pto_ir": 220.0},
    ]
    f = fidelity.group_figures(rs)
    assert not f["same_best"] and f["pick_cost"] == pytest.approx(1.1)
    assert f["median_ratio"] == pytest.approx(0.9) and f["spearman"] == pytest.approx(0.5)
