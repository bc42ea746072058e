"""`tune`: the tuner's entry point, shared by `pto-tune` and `pto.tune`."""

from __future__ import annotations

import os
from dataclasses import dataclass

from xdsl.dialects.builtin import ModuleOp
from xdsl.utils.exceptions import ParseError

from pto.diagnostics import DiagnosticError
from pto.driver.limits import over_budget
from pto.driver.verify import verify_each
from pto.interp.run import signature
from pto.tracebacks import api_boundary
from pto.tuner.baselines import baselines
from pto.tuner.kernel import KernelInfo, TuneError, kernel_info
from pto.tuner.pool import executor
from pto.tuner.prune import prune
from pto.tuner.search import Sweep, guided
from pto.tuner.space import AUTO, Config, Space, describe, dimensions, key
from pto.tuner.store import Store

MAX_VALUE = 2**31 - 1  # a dimension's value (a size, a count): far past any that fits a machine
MAX_JOBS = 1024  # local worker processes
BUDGET_SHARE = 0.2  # the default budget: this share of the legal configurations,
MIN_BUDGET = 8  # but at least this many
MAX_DEFAULT_BUDGET = 64  # and at most this many (a large space: give --budget)


@dataclass
class Plan:
    space: Space
    candidates: list[Config]
    reasons: dict[str, int]
    budget: int
    exhaustive: bool


def restrict(dims: dict[str, list], given: dict[str, list] | None) -> dict[str, list]:
    """The kernel's dimensions with the values the user gave in place of the defaults."""
    if given is not None and not isinstance(given, dict):
        raise TuneError(f"dims must be a dict {{dimension: [values]}}, got {type(given).__name__}")
    out = dict(dims)
    for name, vals in (given or {}).items():
        if name not in dims:
            raise TuneError(f"unknown dimension '{name}' (this kernel has: {', '.join(dims)})")
        if not isinstance(vals, list | tuple):
            raise TuneError(f"dimension '{name}' takes a list of values, got {vals!r}")
        if not vals:
            raise TuneError(f"dimension '{name}' has no values")
        if name == "unroll":  # each value is a factor list: a lone factor 16 is the list [16]
            vals = [[v] if isinstance(v, int) and not isinstance(v, bool) else v for v in vals]
        for v in (v for v in vals if v != AUTO):
            if not _fits(v, dims[name]):
                raise TuneError(
                    f"dimension '{name}': value {v!r} does not fit this kernel (its values are like {dims[name][0]!r})"
                )
            if name == "k" and (len(v) != 2 or v[1] % v[0]):
                raise TuneError(f"dimension 'k' takes L0/L1 pairs with L1 a multiple of L0, got {v!r}")
        out[name] = list(vals)
    return out


def _fits(v, defaults: list) -> bool:
    """A value of a dimension is of its defaults' kind; names and booleans are one of them
    (split-K is only offered where the accumulator allows it)."""
    like = defaults[0]
    if isinstance(like, bool):
        return type(v) is bool and v in defaults  # (1 and 0 are not booleans here)
    if isinstance(like, str):
        return isinstance(v, str) and v in defaults
    if isinstance(like, list):
        return isinstance(v, list) and len(v) >= 1 and all(type(x) is int and 1 <= x <= MAX_VALUE for x in v)
    return type(v) is int and 1 <= v <= MAX_VALUE


def _check_budget(budget) -> None:
    if budget is not None and (not isinstance(budget, int) or isinstance(budget, bool) or budget < 1):
        raise TuneError(f"budget must be a positive integer, got {budget!r}")


def _budget(n: int, budget: int | None) -> int:
    if budget is not None:
        return budget
    return min(max(MIN_BUDGET, round(BUDGET_SHARE * n)), MAX_DEFAULT_BUDGET)


def plan(info: KernelInfo, tokens: list[int], dims: dict | None, budget: int | None, exhaustive: bool) -> Plan:
    space = Space(restrict(dimensions(info), dims))
    candidates, reasons = prune(space, info, tokens)
    if not candidates:
        why = ", ".join(f"{r} ({n})" for r, n in reasons.items())
        raise TuneError(f"no legal configuration in the space of {space.size}: {why}")
    b = _budget(len(candidates), budget)
    return Plan(space, candidates, dict(reasons), b, exhaustive or len(candidates) <= b)


def _check_tokens(tokens) -> list[int]:
    if isinstance(tokens, int):
        tokens = [tokens]
    ts = list(tokens) if isinstance(tokens, list | tuple) else []
    if not ts or not all(isinstance(t, int) and not isinstance(t, bool) and t >= 1 for t in ts):
        raise TuneError(f"tokens must be one or more positive integers, got {tokens!r}")
    return sorted(set(ts))


def _check_jobs(jobs) -> int:
    jobs = os.cpu_count() or 1 if jobs is None else jobs
    if not isinstance(jobs, int) or isinstance(jobs, bool) or not 1 <= jobs <= MAX_JOBS:
        raise TuneError(f"jobs must be an integer in [1, {MAX_JOBS}], got {jobs!r}")
    return jobs


def _module(kernel, name: str) -> tuple[ModuleOp, str]:
    """The kernel, parsed and verified: one that does not verify fails every
    configuration, so it is refused before any is measured."""
    from pto.tuner.evaluate import _parsed

    if isinstance(kernel, ModuleOp):
        module, text = kernel, str(kernel)
    elif isinstance(kernel, str):
        try:
            module, text = _parsed(kernel, name), kernel
        except ParseError as e:
            raise TuneError(f"the kernel does not parse: {str(e).strip().splitlines()[-1]}") from None
    else:
        raise TuneError(f"kernel must be a pto-level ModuleOp or its text, got {type(kernel).__name__}")
    try:
        verify_each(module)
    except DiagnosticError as e:
        raise TuneError(f"the kernel does not verify: {e.message}") from None
    return module, text


def _store(out, resume) -> Store:
    if out is not None and not isinstance(out, str | os.PathLike):
        raise TuneError(f"out must be a file path, got {out!r}")
    if not isinstance(resume, bool):
        raise TuneError(f"resume must be True or False, got {resume!r}")
    if out and os.path.exists(out) and not resume:
        raise TuneError(f"'{out}' exists: give resume=True (--resume) to continue it, or another file")
    return Store(os.fspath(out) if out else None, resume)


def _check_memory(module: ModuleOp, tokens: list[int]) -> None:
    """The largest token count's arrays fit the run's memory budget (as `pto-run` checks),
    else every configuration would fail on it."""
    if why := over_budget(signature(module), tokens[-1]):
        raise TuneError(f"tokens={tokens[-1]} {why} (PTO_RUN_MAX_MEMORY raises it)")


@api_boundary
def tune(
    kernel,
    tokens,
    *,
    target: str | None = None,
    budget: int | None = None,
    jobs: int | None = None,
    dask=None,
    out: str | None = None,
    resume: bool = False,
    exhaustive: bool = False,
    dims: dict[str, list] | None = None,
    progress: bool = False,
    name: str = "kernel",
):
    """Search the kernel's configurations for the fewest modelled cycles summed over
    `tokens`; returns a `TuneResult`. See docs/tune.md. Raises TuneError for bad input."""
    from pto.tuner.result import TuneResult

    ts = _check_tokens(tokens)
    workers = _check_jobs(jobs)  # the cheap checks before the space is built
    _check_budget(budget)
    if not isinstance(exhaustive, bool):
        raise TuneError(f"exhaustive must be True or False, got {exhaustive!r}")
    if exhaustive and budget is not None:
        raise TuneError("give exhaustive=True or a budget, not both")
    if target is not None and not isinstance(target, str):
        raise TuneError(f"target must be a target's name, got {target!r}")
    module, text = _module(kernel, name)
    info: KernelInfo = kernel_info(module, target)
    _check_memory(module, ts)
    p = plan(info, ts, dims, budget, exhaustive)
    store = _store(out, resume)
    ex = executor(workers, dask)
    sweep = Sweep(text, name, info, ts, store, ex, progress, key_text=str(module))
    base = list(baselines(info).values())
    sweep.expect(len(base) + (len(p.candidates) if p.exhaustive else p.budget))
    try:
        sweep.measure(base)
        if p.exhaustive:
            sweep.measure(p.candidates)
        else:
            guided(sweep, p.space, p.candidates, p.budget, workers)
    finally:
        sweep.close()
        ex.close()
    result = TuneResult(module, info, ts, p, sweep)
    if not any(sweep.cost(k) is not None for k in sweep.results):
        c, error = result.failed[0]
        raise TuneError(f"every configuration failed ({len(sweep.results)}); the first, {describe(c)}: {error}")
    return result


__all__ = ["TuneError", "key", "tune"]
