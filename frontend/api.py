"""`compile` and `run`: the command-line tools' engine, from Python.

`compile` runs the pass pipeline (default: the SK-03 pipeline, pass by pass) and keeps
the IR at each level; `run` interprets a kernel (lowering it first if needed) with the
same interpreter and machine model as `pto-run`, and returns its outputs and report.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from pto.diagnostics import Diagnostic, DiagnosticError, collect
from pto.frontend.builder import BuildError
from pto.interp.golden import Verdict, check
from pto.interp.report import Report
from pto.interp.run import random_inputs, signature
from pto.interp.run import run as run_module
from pto.lowering.pto_sk03_pipeline import PtoSk03PipelinePass
from pto.tools.pto_opt import UsageError, no_gc, pipeline_spec, render, verify_each
from pto.tools.pto_run import parse_pipeline
from pto.tools.registry import load_dialects

LEVELS = ("pto", "tile", "npu")


class CompileError(Exception):
    """A pass rejected the kernel; the message holds the rendered diagnostics."""


@dataclass
class Compiled:
    """The kernel at each level it went through, as modules; `text(level)` prints one."""

    levels: dict[str, ModuleOp]
    pipeline: str
    warnings: list[str] = field(default_factory=list)

    @property
    def pto(self) -> ModuleOp:
        return self.levels["pto"]

    @property
    def tile(self) -> ModuleOp:
        return self.levels["tile"]

    @property
    def npu(self) -> ModuleOp:
        return self.levels["npu"]

    def text(self, level: str = "npu") -> str:
        if level not in self.levels:
            raise KeyError(f"no {level} level in this compilation (have: {', '.join(self.levels)})")
        return str(self.levels[level])


@dataclass
class Result:
    outputs: list[np.ndarray]
    report: Report | None
    level: str
    golden: list[Verdict] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return all(v.ok for v in self.golden)


def _level(module: ModuleOp) -> str:
    return signature(module).level


def _passes(spec: str) -> list[ModulePass]:
    try:
        pipeline = parse_pipeline(spec)
    except UsageError as e:
        raise CompileError(str(e)) from None
    out: list[ModulePass] = []
    for p in pipeline.passes:  # the named pipeline runs pass by pass, so that each level is seen
        out += p.passes() if isinstance(p, PtoSk03PipelinePass) else [p]
    return out


def compile(module: ModuleOp, pipeline: str | None = None, target: str | None = None) -> Compiled:  # noqa: A001
    """Lower a copy of `module` (default pipeline: `pto-sk03-pipeline{target=...}`),
    keeping the last IR of each level it passes through."""
    if pipeline is None:
        spec = "pto-sk03-pipeline" + (f"{{target={target}}}" if target else "")
    else:
        spec = pipeline_spec(pipeline)
    m = module.clone()
    levels: dict[str, ModuleOp] = {}
    ctx = Context()
    load_dialects(ctx)
    diags: list[Diagnostic] = []
    with collect(diags.append), no_gc():
        for p in _passes(spec):
            if type(p).__module__.startswith("pto.lowering."):  # it leaves the level: keep this one
                levels[_level(m)] = m.clone()
            try:
                p.apply(ctx, m)
                verify_each(m)
            except DiagnosticError as e:
                diags.append(Diagnostic("error", e.location, e.message, e.notes))
                raise CompileError("\n".join(render(d, {}) for d in diags)) from None
    levels[_level(m)] = m
    warnings: list[str] = []
    for d in diags:  # a pass warns once per unrolled copy of an op: keep one
        if (w := render(d, {})) not in warnings:
            warnings.append(w)
    return Compiled(levels, spec, warnings)


def run(kernel: ModuleOp | Compiled, inputs: Sequence[np.ndarray] | Mapping[str, np.ndarray] | None = None, *,
        tokens: int | None = None, seed: int = 0, level: str = "npu", target: str | None = None,
        l2_size: int | None = None, trace: str | None = None, golden: bool = False) -> Result:
    """Run `kernel` at `level` (lowering a pto-level module with the default pipeline).

    `inputs`: arrays in argument order, or by argument name; None with `tokens` gives
    random inputs. `golden=True` checks each output against the pto level. `trace`
    writes a Perfetto trace of an npu-level run to that path."""
    compiled = kernel if isinstance(kernel, Compiled) else None
    source = compiled.levels[next(iter(compiled.levels))] if compiled else kernel
    assert isinstance(source, ModuleOp)
    sig = signature(source)
    if inputs is None:
        if tokens is None:
            raise BuildError("run: give inputs, or tokens= for random inputs", None)
        xs = random_inputs(sig, tokens, seed)
    elif isinstance(inputs, Mapping):
        names = [a.name.lstrip("%") for a in sig.inputs]
        if sorted(inputs) != sorted(names):
            raise BuildError(f"run: inputs by name need exactly {', '.join(names)}, got {', '.join(inputs)}", None)
        xs = [np.asarray(inputs[n]) for n in names]
    else:
        xs = [np.asarray(x) for x in inputs]
    if level not in LEVELS:
        raise BuildError(f"run: unknown level '{level}' (known: {', '.join(LEVELS)})", None)
    have = compiled.levels if compiled else {sig.level: source}
    if level not in have:
        if compiled is not None or sig.level != "pto":
            raise BuildError(f"run: no {level} level to run (have: {', '.join(have)})", None)
        compiled = compile(source, target=target)
        have = compiled.levels
    r = run_module(have[level], xs, target, l2_size, trace=trace is not None)
    if r.report is not None:
        r.report.notes += r.host_transposes
        if trace is not None:
            r.report.write_trace(trace)
    verdicts = []
    if golden:
        top = have.get("pto")
        if top is None:
            raise BuildError("run: golden=True needs the pto level", None)
        want = run_module(top, xs).outputs
        verdicts = [check(g, w) for g, w in zip(r.outputs, want)]
    return Result(r.outputs, r.report, level, verdicts)
