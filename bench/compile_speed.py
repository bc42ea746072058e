"""Compile time of the full SK-03 pipeline (pto -> tile -> npu), in-process, per
example, and for one module holding 64 copies of a kernel.

    python bench/compile_speed.py [--repeat N]

Prints the median over N runs (parse excluded; passes and verification included) and
the ratio of the 64-kernel module to 64x one kernel. Goal (issue: the lowering
pipeline): under 0.3 s per kernel, ratio <= 1.1.
"""

from __future__ import annotations

import argparse
import re
import statistics
import time
from pathlib import Path

from xdsl.context import Context
from xdsl.parser import Parser
from xdsl.passes import PassPipeline

from pto.driver.lower import no_gc
from pto.driver.registry import all_passes, load_dialects
from pto.driver.verify import verify_each

PIPELINE = "pto-sk03-pipeline"
EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def compile_once(ctx: Context, text: str) -> float:
    module = Parser(ctx, text).parse_module()
    pipeline = PassPipeline.parse_spec(all_passes(), PIPELINE)
    start = time.perf_counter()
    with no_gc():  # as pto-opt runs passes
        for p in pipeline.passes:
            p.apply(ctx, module)
            verify_each(module)
    return time.perf_counter() - start


def median(ctx: Context, text: str, repeat: int) -> float:
    compile_once(ctx, text)  # warm up imports and caches
    return statistics.median(compile_once(ctx, text) for _ in range(repeat))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=7)
    args = ap.parse_args()
    ctx = Context()
    load_dialects(ctx)
    print(f"pipeline: {PIPELINE} (warnings of the passes are not shown)")
    print(f"{'kernel':40} {'median s':>10}")
    rows = {}
    for path in sorted(EXAMPLES.glob("*.mlir")):
        rows[path.name] = median(ctx, path.read_text(), args.repeat)
        print(f"{path.name:40} {rows[path.name]:10.4f}")
    one = (EXAMPLES / "sk03_standard.mlir").read_text()
    copies = "\n".join(re.sub(r"@linear_projection", f"@k{i}", one) for i in range(64))
    t64 = median(ctx, copies, max(3, args.repeat // 2))
    t1 = rows["sk03_standard.mlir"]
    print(f"{'64 x sk03_standard in one module':40} {t64:10.4f}")
    print(f"ratio 64-kernel module / (64 x one kernel): {t64 / (64 * t1):.3f}")


if __name__ == "__main__":
    main()
