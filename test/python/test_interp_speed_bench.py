"""bench/interp_speed.py's `--every` and `--floors` on one small example: a row each;
`--floors` splits the stacked numerics pass (and its mmads) from the timing-only run and
leaves the engine as it found it."""

from __future__ import annotations

import shutil
from pathlib import Path

from kernels import bench

from pto.interp import compiled, stacked

ROOT = Path(__file__).resolve().parents[2]
speed = bench("interp_speed")


def test_floors_splits_the_numerics_and_counts_the_timed_ops(monkeypatch, tmp_path, capsys) -> None:
    shutil.copy(ROOT / "examples" / "sk03_standard.mlir", tmp_path)
    monkeypatch.setattr(speed, "EXAMPLES", tmp_path)
    monkeypatch.setattr(speed, "EVERY", (("default, t=40", "pto-sk03-pipeline", 40),))
    monkeypatch.setattr(compiled, "_way", lambda costs: "stacked")  # (measured, either way may win at t=40)
    real = (stacked.run_numerics, stacked.Stack.mmad)
    speed.floors(1)
    assert (stacked.run_numerics, stacked.Stack.mmad) == real
    row = next(line for line in capsys.readouterr().out.splitlines() if line.startswith("sk03_standard"))
    numerics, mmads, _, ops, _, unit = row.split()[-6:]  # (from the right: the label has spaces)
    assert 0 < float(mmads.rstrip("x")) < float(numerics.rstrip("x"))  # the mmads are part of the stacked pass
    assert int(ops) > 100 and unit == "us"  # the timed ops of a traced run


def test_every_prints_the_full_and_timing_only_rows(monkeypatch, tmp_path, capsys) -> None:
    shutil.copy(ROOT / "examples" / "sk03_standard.mlir", tmp_path)
    monkeypatch.setattr(speed, "EXAMPLES", tmp_path)
    monkeypatch.setattr(speed, "EVERY", (("default, t=40", "pto-sk03-pipeline", 40),))
    speed.every(1)
    row = next(line for line in capsys.readouterr().out.splitlines() if line.startswith("sk03_standard"))
    full, timing, numbers = (float(c.rstrip("x")) for c in row.split()[-3:])
    assert full > timing > 0 and abs(full - timing - numbers) < 0.02  # (each rounded to 0.01)
