"""Interpreter speed: the SK-03 standard kernel (RMSNorm -> MatMul -> bf16, t=1024,
K=4096, N=1024, examples/sk03_standard.mlir) run at the npu level by both engines
against the numpy golden of the same math (the kernel at the pto level), all in one run.

    python bench/interp_speed.py [--repeat N] [--tokens T] [--clock wall|cpu]
    python bench/interp_speed.py --every [--repeat N]


Prints the median of each over N runs and its ratio to the golden, the two engines side
by side: `golden` = the pto level with numpy; per engine, `full` = running the
already-lowered kernel only, `timing-only` = the same with `numerics=False`, and the
interp engine's time over the compiled one's; `pto-run` = the whole command in-process
with the default engine (parse, lower, run, report; inputs from .npy files). The engines' reports are
checked to be equal. Goals (issue 14): compiled <= 2x golden, compiled timing-only
<= 0.5x golden.

`--every` runs every example of examples/ with the compiled engine, on the CPU clock
against the one-thread golden (issue 34's goals): with default hints at t=512 and with
unroll [1] at t=128, each row the median of N interleaved runs: full, timing-only and
full minus timing-only (what the numerics cost), each as a multiple of the golden.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import io
import json
import statistics
import tempfile
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
from xdsl.context import Context

from pto.driver.lower import lower
from pto.driver.parse import LocatingParser
from pto.driver.registry import load_dialects
from pto.interp import blas
from pto.interp.run import ENGINES, random_inputs, run, signature
from pto.tools import pto_run

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
KERNEL = EXAMPLES / "sk03_standard.mlir"
# `--every`'s configurations: (name, pipeline, tokens).
EVERY = (("default, t=512", "pto-sk03-pipeline", 512), ("unroll [1], t=128", "pto-sk03-pipeline{factors=1}", 128))


# What a row's time is: "wall", or "cpu", the process's CPU time (all its threads), steadier
# on a shared machine whose other load takes CPUs away; against it the golden to beat is the
# one-thread golden (threads spinning in BLAS count in CPU time).
CLOCKS = {"wall": (time.perf_counter, "golden"), "cpu": (time.process_time, "golden 1 thread")}


def timed(fn, clock=time.perf_counter) -> float:
    # Each run starts with no garbage of the runs before it: a full collection the last
    # run's garbage triggers costs with the process's heap (every lowered module), up to
    # 70 ms here, and landed in whichever row came next (a golden 0.04 s or 0.077 s).
    gc.collect()
    start = clock()
    fn()
    return clock() - start


def golden_one_thread(pto_m, inputs) -> None:
    """The golden with one BLAS thread, as the npu run has (`pto.interp.blas`): on a
    busy machine the threaded golden can be the slower one."""
    with blas.one_thread():
        run(pto_m, inputs)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--tokens", type=int, default=1024)
    ap.add_argument("--clock", choices=CLOCKS, default="wall")
    ap.add_argument("--every", action="store_true", help="every example, compiled engine, CPU clock")
    args = ap.parse_args()
    if args.every:
        every(args.repeat)
        return
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

        rows: dict[str, Callable[[], Any]] = {
            "golden": lambda: run(pto_m, inputs),
            "golden 1 thread": partial(golden_one_thread, pto_m, inputs),
            **{f"npu {e}": partial(run, npu_m, inputs, engine=e) for e in ENGINES},
        }
        rows.update({f"npu {e} timing": partial(run, npu_m, inputs, engine=e, numerics=False) for e in ENGINES})
        rows["pto-run"] = cli
        reports = {name: fn().report for name, fn in rows.items() if name.startswith("npu")}  # and warm up
        rows["golden"]()
        cli()
        assert len({json.dumps(r.to_json()) for r in reports.values()}) == 1, "the engines' reports differ"
        times: dict[str, list[float]] = {name: [] for name in rows}
        for _ in range(args.repeat):  # interleaved, so that machine noise hits all rows alike
            for name, fn in rows.items():
                times[name].append(timed(fn, CLOCKS[args.clock][0]))
    table(args, {name: statistics.median(ts) for name, ts in times.items()})


def table(args, med: dict[str, float]) -> None:
    """The engines side by side, each as seconds and as a multiple of the golden."""
    ref = CLOCKS[args.clock][1]
    gold = med[ref]
    print(
        f"SK-03 standard, t={args.tokens}, K=4096, N=1024; median of {args.repeat}, {args.clock} clock; "
        f"x golden = over '{ref}', {gold:.3f} s"
    )
    head = "".join(f" {e + ' s':>12} {'x golden':>9}" for e in ENGINES)
    print(f"{'npu run':<14}{head} {'interp/compiled':>16}")
    for mode, suffix in (("full", ""), ("timing-only", " timing")):
        cells = "".join(f" {med[f'npu {e}{suffix}']:>12.3f} {med[f'npu {e}{suffix}'] / gold:>9.2f}" for e in ENGINES)
        print(f"{mode:<14}{cells} {med[f'npu interp{suffix}'] / med[f'npu compiled{suffix}']:>16.1f}")
    print(f"golden {med['golden']:.3f} s, golden with one BLAS thread {med['golden 1 thread']:.3f} s")
    print(f"pto-run (whole command, default engine): {med['pto-run']:.3f} s, {med['pto-run'] / gold:.2f}x golden")
    for row, goal in (("npu compiled", 2), ("npu compiled timing", 0.5)):
        print(f"goal: {row} <= {goal}x golden: {'met' if med[row] <= goal * gold else 'NOT met'}")


def every(repeat: int) -> None:
    """Each example in each of `EVERY`'s configurations: golden (one thread), compiled
    full and timing-only, CPU clock, medians of `repeat` interleaved runs."""
    ctx = Context()
    load_dialects(ctx)
    clock = time.process_time
    print(f"compiled engine against the one-thread golden; CPU clock, median of {repeat}")
    head = f"{'golden s':>9}{'full s':>8}{'timing s':>9}{'full':>8}{'timing':>8}{'full-timing':>12}"
    print(f"{'example':<28}{'configuration':<20}{head}")
    for path in sorted(EXAMPLES.glob("*.mlir")):
        pto_m = LocatingParser(ctx, path.read_text(), str(path)).parse_module()
        for config, pipeline, tokens in EVERY:
            npu_m = pto_m.clone()
            lower(ctx, npu_m, pipeline)
            inputs = random_inputs(signature(pto_m), tokens, 0)
            rows: dict[str, Callable[[], Any]] = {
                "golden": partial(golden_one_thread, pto_m, inputs),
                "full": partial(run, npu_m, inputs, engine="compiled"),
                "timing": partial(run, npu_m, inputs, engine="compiled", numerics=False),
            }
            for fn in rows.values():  # warm up: compiled programs, imports
                fn()
            times: dict[str, list[float]] = {name: [] for name in rows}
            for _ in range(repeat):
                for name, fn in rows.items():
                    times[name].append(timed(fn, clock))
            med = {name: statistics.median(ts) for name, ts in times.items()}
            gold = med["golden"]
            full, timing = med["full"] / gold, med["timing"] / gold
            seconds = f"{gold:>9.3f}{med['full']:>8.3f}{med['timing']:>9.3f}"
            print(f"{path.stem:<28}{config:<20}{seconds}{full:>7.2f}x{timing:>7.2f}x{full - timing:>11.2f}x")


if __name__ == "__main__":
    main()
