"""Interpreter speed: the SK-03 standard kernel (RMSNorm -> MatMul -> bf16, t=1024,
K=4096, N=1024, examples/sk03_standard.mlir) run at the npu level by both engines
against the numpy golden of the same math (the kernel at the pto level), all in one run.

    python bench/interp_speed.py [--repeat N] [--tokens T]

Prints the median of each over N runs and its ratio to the golden. Rows: `golden` = the
pto level with numpy; `npu <engine>` = running the already-lowered kernel only, with
`timing` = `numerics=False`; `pto-run` = the whole command in-process with the default
engine (parse, lower, run, report; inputs from .npy files). The engines' reports are
checked to be equal. Goals (issue 14): compiled <= 2x golden, compiled timing-only
<= 0.5x golden.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import statistics
import tempfile
import time
from functools import partial
from pathlib import Path

import numpy as np
from xdsl.context import Context

from pto.driver.lower import lower
from pto.driver.parse import LocatingParser
from pto.driver.registry import load_dialects
from pto.interp.run import ENGINES, random_inputs, run, signature
from pto.tools import pto_run

KERNEL = Path(__file__).resolve().parent.parent / "examples" / "sk03_standard.mlir"


def timed(fn) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--tokens", type=int, default=1024)
    args = ap.parse_args()
    ctx = Context()
    load_dialects(ctx)
    pto_m = LocatingParser(ctx, KERNEL.read_text(), str(KERNEL)).parse_module()
    npu_m = pto_m.clone()
    lower(ctx, npu_m, "pto-sk03-pipeline")
    inputs = random_inputs(signature(pto_m), args.tokens, 0)
    with tempfile.TemporaryDirectory() as d:
        files = []
        for i, x in enumerate(inputs):
            files += ["--input", str(Path(d) / f"in{i}.npy")]
            np.save(files[-1], x)
        argv = [str(KERNEL), *files]

        def cli() -> None:
            with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
                assert pto_run.main(argv) == 0

        rows = {"golden": lambda: run(pto_m, inputs), **{f"npu {e}": partial(run, npu_m, inputs, engine=e)
                                                         for e in ENGINES}}
        rows.update({f"npu {e} timing": partial(run, npu_m, inputs, engine=e, numerics=False) for e in ENGINES})
        rows["pto-run"] = cli
        reports = {name: fn().report for name, fn in rows.items() if name.startswith("npu")}  # and warm up
        rows["golden"]()
        cli()
        assert len({json.dumps(r.to_json()) for r in reports.values()}) == 1, "the engines' reports differ"
        times = {name: [] for name in rows}
        for _ in range(args.repeat):  # interleaved, so that machine noise hits all rows alike
            for name, fn in rows.items():
                times[name].append(timed(fn))
    med = {name: statistics.median(ts) for name, ts in times.items()}
    print(f"SK-03 standard, t={args.tokens}, K=4096, N=1024; median of {args.repeat}")
    print(f"{'what':<22} {'median s':>10} {'x golden':>9}")
    for name, m in med.items():
        print(f"{name:<22} {m:>10.3f} {m / med['golden']:>9.2f}")
    for row, goal in (("npu compiled", 2), ("npu compiled timing", 0.5)):
        print(f"goal: {row} <= {goal}x golden: {'met' if med[row] <= goal * med['golden'] else 'NOT met'}")


if __name__ == "__main__":
    main()
