"""Evaluate one configuration: pin it on the kernel, compile once, run the machine model
at each token count, and keep the deciding figures. Everything the tuner measures goes
through `evaluate`, so a faster engine or a better model changes only this file.

A configuration the passes reject or the model fails on gives records with the
diagnostic as `error`; it never raises (a sweep must not stop on one point)."""

from __future__ import annotations

import functools
import time

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp

from pto.driver.parse import LocatingParser
from pto.driver.registry import load_dialects
from pto.interp.report import Report
from pto.tuner.pin import pin
from pto.tuner.space import Config

SEED = 0  # the same random inputs for every configuration: the cycles depend on shapes, not values


@functools.lru_cache(maxsize=4)
def _parsed(text: str, name: str) -> ModuleOp:
    """The kernel, parsed once per worker process (the sweep sends the same text each time)."""
    ctx = Context()
    load_dialects(ctx)
    return LocatingParser(ctx, text, name).parse_module()


# The figures of a measured record (`figures`'s, and the seconds it took): the store
# believes a record only with all of them.
FIGURES = ("cycles", "cube_util", "hbm_bytes", "l2_hit_rate", "seconds")


def figures(r: Report) -> dict:
    """The figures a configuration is judged by (cycles) and explained by."""
    cube = [c for c in r.cores if c.startswith("aic")]
    busy = sum(r.cores[c]["cube"] for c in cube)
    n = r.l2_hits + r.l2_misses
    return {
        "cycles": r.cycles,
        "cube_util": busy / (r.cycles * len(cube)) if r.cycles and cube else 0.0,
        "hbm_bytes": r.hbm_bytes,
        "l2_hit_rate": r.l2_hits / n if n else 0.0,
    }


def _error(e: BaseException) -> str:
    msg = str(e).strip() or type(e).__name__
    return msg if type(e).__module__.startswith("pto.") else f"{type(e).__name__}: {msg}"


def evaluate(text: str, name: str, c: Config, tokens: list[int], target: str | None) -> list[dict]:
    """One record per token count: the figures, or the error that stopped the configuration."""
    from pto.frontend.api import compile, run  # the API layer: imported where the worker needs it

    t0 = time.perf_counter()
    try:
        compiled = compile(pin(_parsed(text, name), c), target=target)
    except Exception as e:  # noqa: BLE001 - any failure is a result of this configuration
        return [{"tokens": t, "error": _error(e), "seconds": time.perf_counter() - t0} for t in tokens]
    out: list[dict] = []
    for t in tokens:
        t1 = time.perf_counter()
        try:
            # timing only: the report is a full run's (docs/model.md), without computing outputs
            rec = figures(run(compiled, tokens=t, seed=SEED, numerics=False).report)  # type: ignore[arg-type]
        except Exception as e:  # noqa: BLE001
            rec = {"error": _error(e)}
        compile_s = 0.0 if out else t1 - t0  # the first token count carries the compilation
        out.append({"tokens": t, **rec, "seconds": time.perf_counter() - t1 + compile_s})
    return out
