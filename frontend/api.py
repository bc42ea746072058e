"""`compile` and `run`: the command-line tools' engine, from Python.

`compile` runs the pass pipeline (default: the SK-03 pipeline, pass by pass) and keeps
the IR at each level; `run` interprets a kernel (lowering it first if needed) with the
same interpreter and machine model as `pto-run`, and returns its outputs and report.

Errors: a bad argument to `compile`, or a pass that rejects the kernel, raises
`CompileError`; asking a `Compiled` for a level it lacks raises `LevelError` (a
`CompileError` and a `KeyError`); a bad argument to `run` raises `RunError`, a ValueError
like `InputError`, which `run` raises for inputs that do not fit the kernel (and
`pto.check` for arrays that do not fit each other); a kernel that fails on the machine
model raises `MachineError`.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from pto.diagnostics import DiagnosticError, DiagnosticLog, collect, render
from pto.driver.config import configuration
from pto.driver.errors import UsageError
from pto.driver.limits import L2_SIZE_CAP, over_budget
from pto.driver.lower import KeepLevels, Verify, lower
from pto.driver.pipelines import expand, parse_pipeline, pipeline_spec
from pto.driver.registry import load_dialects
from pto.driver.verify import verify_each
from pto.frontend.checks import BuildError, _is_int
from pto.interp.golden import Verdict, check, golden_elem
from pto.interp.report import Report
from pto.interp.run import ENGINES, InputError, check_inputs, made_inputs, signature
from pto.interp.run import run as run_module
from pto.targets import UnknownTargetError, load_target, target_of
from pto.tracebacks import api_boundary

LEVELS = ("pto", "tile", "npu")


class CompileError(Exception):
    """A pass rejected the kernel (the message holds the rendered diagnostics), or
    `compile` was given something other than a kernel module, a pipeline and a target."""


class LevelError(CompileError, KeyError):
    """A level that a `Compiled` does not have; also a KeyError, as a lookup by name."""

    __str__ = Exception.__str__  # KeyError's would quote the message


class RunError(BuildError, InputError):
    """A bad argument to `run` (which one, and what it may be). An InputError, so a
    ValueError; also a BuildError, which is what `run` raised for these before."""

    def __init__(self, message: str):
        super().__init__(f"run: {message}", None)


@dataclass
class Compiled:
    """The kernel at each level it went through, as modules; `text(level)` prints one."""

    levels: dict[str, ModuleOp]
    pipeline: str
    warnings: list[str] = field(default_factory=list)

    @property
    def pto(self) -> ModuleOp:
        return self._get("pto")

    @property
    def tile(self) -> ModuleOp:
        return self._get("tile")

    @property
    def npu(self) -> ModuleOp:
        return self._get("npu")

    def _get(self, name: str) -> ModuleOp:
        """The module at level `name`; LevelError if the compilation has no such level."""
        if not isinstance(name, str) or name not in self.levels:
            raise LevelError(f"no {name} level in this compilation (have: {', '.join(self.levels)})")
        return self.levels[name]

    def text(self, level: str = "npu") -> str:
        return str(self._get(level))


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
        return expand(parse_pipeline(spec).passes)
    except UsageError as e:
        raise CompileError(str(e)) from None


def _check_compile_args(module: object, pipeline: object, target: object) -> None:
    """compile's arguments, checked before anything is cloned or parsed."""
    if not isinstance(module, ModuleOp):
        what = "a Kernel: pass kernel.module()" if type(module).__name__ == "Kernel" else type(module).__name__
        raise CompileError(f"compile: module must be an xDSL ModuleOp (a kernel's module()), got {what}")
    try:
        signature(module)  # one kernel function with tensor or buffer arguments
    except InputError as e:
        raise CompileError(f"compile: {e}") from None
    if pipeline is not None and not isinstance(pipeline, str):
        raise CompileError(f"compile: pipeline must be a pass pipeline string, got {type(pipeline).__name__}")
    if target is not None:
        if not isinstance(target, str):
            raise CompileError(f"compile: target must be a target name, got {type(target).__name__}")
        if pipeline is not None:  # it would be ignored: the pipeline says what it runs
            raise CompileError("compile: give target= or pipeline= (with its own target option), not both")
        try:
            load_target(target)
        except UnknownTargetError as e:
            raise CompileError(f"compile: {e}") from None


@api_boundary
def compile(module: ModuleOp, pipeline: str | None = None, target: str | None = None) -> Compiled:  # noqa: A001
    """Lower a copy of `module` (default pipeline: `pto-sk03-pipeline{target=...}`),
    keeping the last IR of each level it passes through. Raises CompileError for bad
    arguments and for a pass that rejects the kernel."""
    _check_compile_args(module, pipeline, target)
    if pipeline is None:
        spec = "pto-sk03-pipeline" + (f"{{target={target}}}" if target else "")
    else:
        try:
            spec = pipeline_spec(pipeline)
        except UsageError as e:
            raise CompileError(str(e)) from None
    m = module.clone()
    ctx = Context()
    load_dialects(ctx)
    log = DiagnosticLog()  # a pass warns once per unrolled copy of an op: keep one
    keep = KeepLevels()
    try:
        with collect(log):
            lower(ctx, m, _passes(spec), [keep, Verify(levels_only=True)])
            verify_each(m)
    except DiagnosticError as e:
        log.add_error(e)
        raise CompileError("\n".join(render(d, {}) for d in log.items)) from None
    # (a module given at a lower level passes through the lowerings unchanged: only the
    # levels it was really at are kept, so that golden= cannot compare it with itself)
    levels = {**{name: k for name, k in keep.levels.items() if _level(k) == name}, _level(m): m}
    warnings = [render(d, {}) for d in log.items]
    return Compiled(levels, spec, warnings)


# ------------------------------------------------------------------------ run


def _check_int(what: str, v: object, low: int, optional: bool = False) -> None:
    if v is None and optional:
        return
    if not _is_int(v) or v < low:  # type: ignore[operator]
        raise RunError(f"{what} must be an integer >= {low}, got {v!r}")


def _check_run_args(
    kernel: object, inputs: object, tokens: object, seed: object, level: object, golden: object
) -> None:
    """run's arguments, each checked for its type and range before anything runs."""
    if not isinstance(kernel, ModuleOp | Compiled):
        raise RunError(f"kernel must be a ModuleOp (a kernel's module()) or a Compiled, got {type(kernel).__name__}")
    if inputs is not None and not isinstance(inputs, list | tuple | Mapping):
        raise RunError(f"inputs must be a list of arrays or a dict by argument name, got {type(inputs).__name__}")
    _check_int("tokens", tokens, 0, optional=True)
    _check_int("seed", seed, 0)  # numpy's generators take no negative seed
    if not isinstance(level, str) or level not in LEVELS:
        raise RunError(f"unknown level {level!r} (known: {', '.join(LEVELS)})")
    if not isinstance(golden, bool | np.bool_):
        raise RunError(f"golden must be True or False, got {golden!r}")


def _check_machine_args(level: str, target: object, l2_size: object, trace: object) -> None:
    """The machine model's arguments: a known target; l2_size and trace only at the npu level."""
    if target is not None:
        if not isinstance(target, str):
            raise RunError(f"target must be a target name, got {type(target).__name__}")
        try:
            load_target(target)
        except UnknownTargetError as e:
            raise RunError(str(e)) from None
    if l2_size is not None:  # the target's line size is checked once the npu module is known
        _check_int("l2_size", l2_size, 1)
        if l2_size > L2_SIZE_CAP:  # type: ignore[operator]
            raise RunError(f"l2_size {l2_size} is over the model's cap of {L2_SIZE_CAP} bytes (1 GiB)")
        if level != "npu":
            raise RunError(f"l2_size= needs the npu level (the machine model), not {level}")
    if trace is not None:
        if not isinstance(trace, str | os.PathLike) or not str(trace):
            raise RunError(f"trace must be a file path, got {trace!r}")
        if level != "npu":
            raise RunError(f"trace= needs the npu level (the machine model), not {level}")
        if os.path.isdir(trace) or not os.path.isdir(os.path.dirname(os.path.abspath(trace))):
            raise RunError(f"cannot write the trace to '{trace}': it is a directory, or its directory does not exist")


def _check_engine_args(level: str, engine: object, numerics: object, golden: bool) -> None:
    """engine= and numerics= choose how the npu level runs; timing only computes no outputs."""
    if engine is not None and (not isinstance(engine, str) or engine not in ENGINES):
        raise RunError(f"unknown engine {engine!r} (known: {', '.join(ENGINES)})")
    if not isinstance(numerics, bool | np.bool_):
        raise RunError(f"numerics must be True or False, got {numerics!r}")
    if not numerics and level != "npu":
        raise RunError(f"numerics=False needs the npu level (the machine model), not {level}")
    if not numerics and golden:
        raise RunError("numerics=False computes no outputs to check: it cannot be combined with golden=True")


def _check_l2(l2_size: int | None, module: ModuleOp, target: str | None) -> None:
    """`l2_size` is whole sets of the target's L2 (the model's cache is set-associative)."""
    if l2_size is None:
        return
    l2 = (load_target(target) if target else target_of(signature(module).func)).l2
    unit = l2.line_bytes * l2.ways
    if l2_size % unit:
        raise RunError(
            f"l2_size must be a multiple of {unit} bytes ({l2.ways} ways of {l2.line_bytes}-byte lines), got {l2_size}"
        )


def _inputs(sig, inputs, tokens: int | None, seed: int, numerics: bool) -> list[np.ndarray]:
    """The input arrays in argument order: given (a list, or a dict by name), or random
    (zeros for a timing-only run, which never reads them)."""
    if inputs is None:
        if tokens is None:
            raise RunError("give inputs, or tokens= for random inputs")
        if why := over_budget(sig, tokens):
            raise RunError(f"tokens={tokens} {why} (PTO_RUN_MAX_MEMORY raises it)")
        return made_inputs(sig, tokens, seed, numerics)
    if isinstance(inputs, Mapping):
        names = [a.name.lstrip("%") for a in sig.inputs]
        if sorted(map(str, inputs)) != sorted(names) or not all(isinstance(n, str) for n in inputs):
            raise RunError(f"inputs by name need exactly {', '.join(names)}, got {', '.join(map(str, inputs))}")
        xs = [np.asarray(inputs[n]) for n in names]
    else:
        xs = [np.asarray(x) for x in inputs]
    have = check_inputs(sig, xs)  # InputError for inputs that do not fit
    if tokens is not None and have is not None and tokens != have:
        raise RunError(f"tokens={tokens} contradicts the inputs, which have {have} tokens")
    return xs


@api_boundary
def run(
    kernel: ModuleOp | Compiled,
    inputs: Sequence[np.ndarray] | Mapping[str, np.ndarray] | None = None,
    *,
    tokens: int | None = None,
    seed: int = 0,
    level: str = "npu",
    target: str | None = None,
    l2_size: int | None = None,
    trace: str | None = None,
    golden: bool = False,
    engine: str | None = None,
    numerics: bool = True,
) -> Result:
    """Run `kernel` at `level` (lowering a pto-level module with the default pipeline).

    `inputs`: arrays in argument order, or by argument name; None with `tokens` (>= 0)
    gives random inputs from `seed` (>= 0). `golden=True` checks each output against the
    pto level. `trace` writes a Perfetto trace of an npu-level run to that path.
    `engine` runs the npu level: "interp" (xDSL's interpreter, the reference) or
    "compiled" (the same figures and outputs, faster); default `DEFAULT_ENGINE`.
    `numerics=False` times an npu-level run without computing its outputs (they stay
    NaN): the report is the full run's.

    Raises RunError for a bad argument, InputError for inputs that do not fit the
    kernel, CompileError if lowering fails, MachineError if the kernel fails on the model."""
    _check_run_args(kernel, inputs, tokens, seed, level, golden)
    _check_machine_args(level, target, l2_size, trace)
    _check_engine_args(level, engine, numerics, golden)
    compiled = kernel if isinstance(kernel, Compiled) else None
    if compiled and (
        not isinstance(compiled.levels, dict)
        or not compiled.levels
        or not all(isinstance(m, ModuleOp) for m in compiled.levels.values())
    ):  # (a Compiled whose levels were changed since compile)
        raise RunError("kernel is a Compiled whose levels are not modules: compile it again")
    source = compiled.levels[next(iter(compiled.levels))] if compiled else kernel
    assert isinstance(source, ModuleOp)
    try:
        sig = signature(source)
    except InputError as e:
        raise RunError(str(e)) from None
    xs = _inputs(sig, inputs, tokens, seed, numerics)
    have = compiled.levels if compiled else {sig.level: source}
    if golden and "pto" not in have:
        raise RunError("golden=True needs the pto level")
    if level not in have:
        if compiled is not None or sig.level != "pto":
            raise RunError(f"no {level} level to run (have: {', '.join(have)})")
        compiled = compile(source, target=target)
        have = compiled.levels
    if level == "npu":
        _check_l2(l2_size, have["npu"], target)
    r = run_module(have[level], xs, target, l2_size, trace=trace is not None, engine=engine, numerics=numerics)
    if r.report is not None:
        r.report.notes += r.host_transposes
        if "tile" in have:
            r.report.config = configuration(have["tile"])
        if trace is not None:
            try:
                r.report.write_trace(trace)
            except OSError as e:
                raise RunError(f"cannot write the trace to '{trace}': {e.strerror}") from None
    verdicts = []
    if golden:
        want = run_module(have["pto"], xs).outputs
        verdicts = [
            check(g, w, golden_elem(o.elem, have["pto"])) for o, g, w in zip(sig.outputs, r.outputs, want, strict=True)
        ]
    return Result(r.outputs, r.report, level, verdicts)
