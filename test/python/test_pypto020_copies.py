"""The calibration's copies into L1 (`ascend910b1-pypto020`, `dma.l1_rows_unit`): PyPTO
0.2.0's simulator charges a GM -> L1 copy for its rows rounded up to whole 16-row
fractals (measured: mhc_pre's [24, 2048] f32 weight slice as [32, 2048], 4,145 cycles;
an [8, K] activation as 16 rows); the device-anchored default charges the rows it moves."""

from __future__ import annotations

import numpy as np
import pytest
from kernels import parse

from pto.interp.run import run


@pytest.fixture(autouse=True, params=["interp", "compiled"])
def engine(request, monkeypatch):
    monkeypatch.setattr("pto.interp.run.DEFAULT_ENGINE", request.param)
    return request.param


def copy_in(rows: int, cols: int, valid: int | None = None) -> str:
    t = f"{rows}x{cols}xf32"
    part = " rows %r" if valid is not None else ""
    return f"""func.func @k(%w: !npu.buf<{t}, gm>, %o: !npu.buf<1x8xf32, gm> {{pto.output}}) {{
    npu.launch cube 1 (%c) {{
      %r = arith.constant {valid or 0} : index
      %w1 = npu.alloc l1 [0] : !npu.buf<{t}, l1>
      npu.dma mte2 %w[0, 0] -> %w1[0, 0]{part} : !npu.buf<{t}, gm> -> !npu.buf<{t}, l1>
    }}
    func.return
}}"""


def mte2(rows: int, target: str, valid: int | None = None) -> float:
    w = np.ones((rows, 2048), np.float32)
    r = run(parse(copy_in(rows, 2048, valid)), [w], target=target)
    assert r.report is not None
    return r.report.cores["aic0"]["mte2"]


def test_weight_slice_charged_as_whole_fractals() -> None:
    assert mte2(24, "ascend910b1-pypto020") == pytest.approx(mte2(32, "ascend910b1-pypto020"))
    assert mte2(24, "ascend910b1") < mte2(32, "ascend910b1")
    assert mte2(32, "ascend910b1-pypto020") == pytest.approx(mte2(32, "ascend910b1"))


def test_partial_tile_charged_for_its_rows_rounded_up() -> None:
    """8 valid rows of a 32-row tile: as 16 rows in the calibration, 8 on the device."""
    assert mte2(32, "ascend910b1-pypto020", 8) == pytest.approx(mte2(16, "ascend910b1-pypto020"))
    assert mte2(32, "ascend910b1", 8) == pytest.approx(mte2(8, "ascend910b1"))
