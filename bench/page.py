"""The report page's size and build time per example (issue 35's goals: under 2 MB and
0.5 s at t = 300), and at a large token count, where the page draws time slots instead
of one bar per task so that it stays bounded.

    python bench/page.py [--tokens 300,10000]

Each example is compiled and run timing-only; the build time is `Report.html` alone.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from xdsl.context import Context

from pto.driver.parse import LocatingParser
from pto.driver.registry import load_dialects
from pto.frontend.api import compile, run
from pto.interp.page import page_data

EXAMPLES = sorted((Path(__file__).resolve().parent.parent / "examples").glob("*.mlir"))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tokens", default="300,10000", help="token counts, comma-separated")
    tokens = [int(t) for t in ap.parse_args().tokens.split(",")]
    ctx = Context()
    load_dialects(ctx)
    print(f"{'example':<32} {'tokens':>7} {'tasks':>7} {'bars':>6} {'page bytes':>11} {'build s':>8}")
    for path in EXAMPLES:
        compiled = compile(LocatingParser(ctx, path.read_text(), str(path)).parse_module())
        for t in tokens:
            report = run(compiled, tokens=t, numerics=False).report
            assert report is not None
            start = time.perf_counter()
            text = report.html(path.name)
            took = time.perf_counter() - start
            bars = len(page_data(report)["timeline"]["bars"])
            print(f"{path.name:<32} {t:>7} {len(report.task_runs):>7} {bars:>6} {len(text.encode()):>11} {took:>8.3f}")


if __name__ == "__main__":
    main()
