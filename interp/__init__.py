"""Interpreters of the three levels and the machine model behind the npu level.

One interpreter-functions class per dialect (`pto.py`, `tile.py`, `npu.py`, `arith.py`);
`numerics.py` holds the element arithmetic all levels share, `golden.py` the acceptance
rule. The npu level runs on `machine.py` (buffers, pipes, cores), `cost.py` (what each
op costs on the target), `graph.py` (task graphs and dispatch), `l2.py` and
`scheduler.py`, with each op's effect on it in `npu_ops.py`; `compiled.py` and
`codegen*.py` are the second engine of the npu level (core programs compiled to Python,
the model's timing functions written out in them by `inline.py`).
`run.py` runs a kernel at any level and `report.py` says what it cost.
"""
