"""Time per configuration: pto-ir's timing-only and full runs against PyPTO 0.2.0's
simulator, on the fidelity bench's SK-03 configurations
(`bench/fidelity/pypto_results.json`), all measured in this one run.

    python bench/vs_pypto.py [--pypto PYTHON] [--every N] [--only SUBSTRING] [--repeat R]

PyPTO is never imported here: each of its runs is `bench/fidelity/regen_pypto.py`'s
kernel for the configuration, run by PyPTO's own venv (`--pypto`, default
/work/pypto-venv/bin/python) in a fresh process and working directory, timed inside
that process around the kernel call (its compile and simulation; not the interpreter's
start or the torch/pypto imports). pto-ir's side is what a tuner pays per
configuration, in this process: parse the kernel, lower it with the SK-03 pipeline, run
it with `numerics=False` on the zero inputs `pto.run` gives such a run (columns `ours`;
`run` is the run alone); `full` is what `pto-run` pays for the numbers too: the same
parse and lowering, then a run with numerics on random inputs (a fresh module, so its
programs are compiled as in a first run). Before each, the garbage of the configurations before (their
IR, cyclic) is collected untimed: PyPTO starts from a fresh process each time, and a
full collection landing in one configuration's parse had cost it up to 0.4 s. Each
side's wall time and CPU time (its process's, all threads, and for PyPTO any child processes it waited
for; steadier on a shared machine) is the median
of `--repeat` runs, the two interleaved. The cycle counts of both are printed
too (PyPTO's from its report) as a check that the same kernel ran. Goals (issues 14 and
34): ours >= 20x faster per configuration; full faster than PyPTO on every one (PyPTO's
simulator computes no numbers: it times the kernel).
"""

from __future__ import annotations

import argparse
import gc
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from xdsl.context import Context

# mypy takes the data folder bench/fidelity/ for this module; Python imports bench/fidelity.py.
from pto.bench.fidelity import RESULTS, kernel  # type: ignore[attr-defined]
from pto.driver.lower import lower
from pto.driver.parse import LocatingParser
from pto.driver.registry import load_dialects
from pto.interp.run import random_inputs, run, signature, unread_inputs

HERE = Path(__file__).resolve().parent

GOAL = 20
PYPTO_PYTHON = "/work/pypto-venv/bin/python"
# Run by PyPTO's interpreter: the configuration's kernel, timed around the call only.
DRIVER = r"""
import json, resource, sys, time
sys.path.insert(0, sys.argv[1])
import regen_pypto
c = json.load(open(sys.argv[2]))
children = lambda: (lambda r: r.ru_utime + r.ru_stime)(resource.getrusage(resource.RUSAGE_CHILDREN))
start, cpu = time.perf_counter(), time.process_time() + children()
regen_pypto.run_one(c)
secs, cpu = time.perf_counter() - start, time.process_time() + children() - cpu
print(json.dumps({"secs": secs, "cpu": cpu, "cycles": regen_pypto.parse_output(".")["cycles"]}))
"""


def pypto_time(python: str, c: dict, timeout: float) -> dict:
    with tempfile.TemporaryDirectory(prefix="vs_pypto_") as cwd:
        spec = Path(cwd) / "cfg.json"
        spec.write_text(json.dumps(c))
        out = subprocess.run(
            [python, "-c", DRIVER, str(HERE / "fidelity"), str(spec)],
            cwd=cwd,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=True,
        )
    return json.loads(out.stdout.strip().splitlines()[-1])


def ours_time(c: dict, numerics: bool = False) -> dict:
    """Parse, lower and run the configuration's kernel; `numerics`: on random inputs (a
    full run), else on `unread_inputs` (what pto.run gives a timing-only run)."""
    start, cpu = time.perf_counter(), time.process_time()
    ctx = Context()
    load_dialects(ctx)
    m = LocatingParser(ctx, kernel(c), c["id"]).parse_module()
    make = random_inputs if numerics else unread_inputs
    inputs = make(signature(m), c["t"])
    lower(ctx, m, "pto-sk03-pipeline{factors=" + ",".join(map(str, c["unroll"])) + "}")
    ran = time.perf_counter()
    rep = run(m, inputs, numerics=numerics).report
    end, cpu = time.perf_counter(), time.process_time() - cpu
    assert rep is not None
    return {"secs": end - start, "run": end - ran, "cpu": cpu, "cycles": rep.cycles}


def choose(configs: list[dict], every: int, only: str) -> list[dict]:
    """Every `every`-th configuration PyPTO ran (in the file's order, which walks each
    group's unroll lists and tiles) whose id has `only`."""
    return [c for c in configs if c.get("cycles") and only in c["id"]][::every]


def measure(c: dict, python: str, repeat: int, timeout: float) -> dict:
    ours, full, theirs = [], [], []
    for _ in range(repeat):  # interleaved: machine noise hits both sides alike
        theirs.append(pypto_time(python, c, timeout))
        gc.collect()  # untimed, as PyPTO starts each in a fresh process (see the docstring)
        ours.append(ours_time(c))
        gc.collect()
        full.append(ours_time(c, numerics=True))

    def med(rs, k):
        return statistics.median(r[k] for r in rs)

    return {
        "id": c["id"],
        "pypto": med(theirs, "secs"),
        "ours": med(ours, "secs"),
        "run": med(ours, "run"),
        "pypto_cpu": med(theirs, "cpu"),
        "ours_cpu": med(ours, "cpu"),
        "full": med(full, "secs"),
        "full_cpu": med(full, "cpu"),
        "pypto_cycles": theirs[0]["cycles"],
        "our_cycles": ours[0]["cycles"],
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pypto", default=PYPTO_PYTHON, help="the python of a venv with pypto 0.2.0")
    ap.add_argument("--every", type=int, default=4, help="every N-th configuration (1: all)")
    ap.add_argument("--only", default="", help="configurations whose id contains this")
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--timeout", type=float, default=300)
    a = ap.parse_args(argv)
    configs = choose(json.loads(RESULTS.read_text())["configs"], a.every, a.only)
    print(f"{len(configs)} configuration(s), median of {a.repeat}; seconds per configuration")
    print(
        f"{'configuration':44} {'PyPTO s':>8} {'ours s':>7} {'x faster':>8} {'run s':>6} {'x faster':>8} "
        f"{'PyPTO cpu':>9} {'ours cpu':>8} {'x faster':>8} {'full s':>7} {'x faster':>8} {'full cpu':>8} "
        f"{'x faster':>8} {'PyPTO cyc':>10} {'our cyc':>10}"
    )
    rows = []
    for c in configs:
        r = measure(c, a.pypto, a.repeat, a.timeout)
        rows.append(r)
        print(
            f"{r['id']:44} {r['pypto']:>8.2f} {r['ours']:>7.2f} {r['pypto'] / r['ours']:>8.1f} {r['run']:>6.2f} "
            f"{r['pypto'] / r['run']:>8.1f} {r['pypto_cpu']:>9.2f} {r['ours_cpu']:>8.2f} "
            f"{r['pypto_cpu'] / r['ours_cpu']:>8.1f} {r['full']:>7.2f} {r['pypto'] / r['full']:>8.1f} "
            f"{r['full_cpu']:>8.2f} {r['pypto_cpu'] / r['full_cpu']:>8.1f} "
            f"{r['pypto_cycles']:>10} {r['our_cycles']:>10.0f}",
            flush=True,
        )
    summarise(rows)
    return 0


def summarise(rows: list[dict]) -> None:
    whole = [r["pypto"] / r["ours"] for r in rows]
    alone = [r["pypto"] / r["run"] for r in rows]
    cpu = [r["pypto_cpu"] / r["ours_cpu"] for r in rows]
    print(
        f"\nx faster, lower+run: median {statistics.median(whole):.1f} (min {min(whole):.1f}, max {max(whole):.1f}); "
        f"run alone: median {statistics.median(alone):.1f} (min {min(alone):.1f}); "
        f"CPU time: median {statistics.median(cpu):.1f} (min {min(cpu):.1f})"
    )
    print(f"goal: >= {GOAL}x per configuration (lower+run): {_met(whole, cpu, GOAL)}")
    full = [r["pypto"] / r["full"] for r in rows]
    full_cpu = [r["pypto_cpu"] / r["full_cpu"] for r in rows]
    print(
        f"full run (numerics too) x faster: median {statistics.median(full):.1f} (min {min(full):.1f}); "
        f"goal: faster than PyPTO per configuration: {_met(full, full_cpu, 1)}"
    )


def _met(wall: list[float], cpu: list[float], goal: float) -> str:
    """How many of the ratios reach `goal`, on each clock."""
    n = len(wall)
    return f"met in {sum(x >= goal for x in wall)} of {n} (wall), {sum(x >= goal for x in cpu)} of {n} (CPU)"


if __name__ == "__main__":
    sys.exit(main())
