"""Running a pass pipeline, as mlir-opt's pass manager does: verify after each pass,
instrument it (print, time, reproducer), and turn what a pass raises into a diagnostic
or an internal error.

The passes run through xDSL's `PassPipeline`; its callback between passes calls the
instruments in order. An instrument is MLIR's `PassInstrumentation`: `before` and
`after` each pass, `failed` when one raises.
"""

from __future__ import annotations

import gc
import os
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from io import StringIO

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass, PassPipeline
from xdsl.printer import Printer
from xdsl.utils.exceptions import DiagnosticException, VerifyException

from pto.diagnostics import DiagnosticError
from pto.driver.errors import InternalError, UsageError
from pto.driver.pipelines import LOWERINGS, as_mlir_pipeline, parse_pipeline, pipeline_spec
from pto.driver.verify import verify_each


class Instrument:
    """Does nothing; subclasses override what they observe."""

    def before(self, p: ModulePass, module: ModuleOp) -> None: ...

    def after(self, p: ModulePass, module: ModuleOp) -> None: ...

    def failed(self, p: ModulePass) -> None: ...


@dataclass
class Verify(Instrument):
    """Verify the module after each pass (mlir-opt's default, pto-opt's); with
    `levels_only`, after each lowering between levels only (pto.compile, pto-run: a
    64-head kernel spent half its compile verifying the same ops after every pass; the
    caller verifies the final module once more)."""

    levels_only: bool = False

    def after(self, p: ModulePass, module: ModuleOp) -> None:
        if not self.levels_only or p.name in LOWERINGS:
            verify_each(module)


@dataclass
class Time(Instrument):
    """`prog: pass NAME: S s` on stderr, the pass alone (before verifying)."""

    prog: str
    _start: float = 0.0

    def before(self, p: ModulePass, module: ModuleOp) -> None:
        self._start = time.perf_counter()

    def after(self, p: ModulePass, module: ModuleOp) -> None:
        print(f"{self.prog}: pass {p.name}: {time.perf_counter() - self._start:.4f} s", file=sys.stderr)


@dataclass
class PrintIR(Instrument):
    """`--mlir-print-ir-before-all` / `--mlir-print-ir-after-all`, to stderr."""

    show: Callable[[ModuleOp], str]
    before_all: bool = False
    after_all: bool = False

    def before(self, p: ModulePass, module: ModuleOp) -> None:
        if self.before_all:
            print(f"// -----// IR Dump Before {p.name} //----- //\n{self.show(module)}", file=sys.stderr)

    def after(self, p: ModulePass, module: ModuleOp) -> None:
        if self.after_all:
            print(f"// -----// IR Dump After {p.name} //----- //\n{self.show(module)}", file=sys.stderr)


@dataclass
class IRTree(Instrument):
    """`--mlir-print-ir-tree-dir`: the IR after pass n as DIR/<prefix><n>_<pass>.mlir."""

    show: Callable[[ModuleOp], str]
    directory: str
    prefix: str = ""
    _n: int = 0

    def after(self, p: ModulePass, module: ModuleOp) -> None:
        path = os.path.join(self.directory, f"{self.prefix}{self._n}_{p.name}.mlir")
        self._n += 1
        try:
            os.makedirs(self.directory, exist_ok=True)
            with open(path, "w") as f:
                f.write(self.show(module))
        except OSError as e:
            raise UsageError(f"cannot write '{path}': {e.strerror}") from None


@dataclass
class Reproducer(Instrument):
    """On a pass failure, the failing pass's input IR and pipeline, written to `path`."""

    show: Callable[[ModuleOp], str]
    path: str
    prog: str
    _before: str = ""

    def before(self, p: ModulePass, module: ModuleOp) -> None:
        self._before = self.show(module)

    def failed(self, p: ModulePass) -> None:
        try:
            with open(self.path, "w") as f:
                f.write(f"// configuration: --pass-pipeline='{as_mlir_pipeline([p])}'\n")
                f.write(f"// reproduce with: {self.prog} --run-reproducer {self.path}\n")
                f.write(self._before)
        except OSError as e:
            print(f"{self.prog}: error: cannot write the reproducer '{self.path}': {e.strerror}", file=sys.stderr)
            return
        print(f"{self.prog}: wrote a reproducer of the failing pass '{p.name}' to {self.path}", file=sys.stderr)


@dataclass
class KeepLevels(Instrument):
    """A copy of the module as each level ends (before the lowering that leaves it)."""

    levels: dict[str, ModuleOp] = field(default_factory=dict)

    def before(self, p: ModulePass, module: ModuleOp) -> None:
        if p.name in LOWERINGS:
            self.levels[LOWERINGS[p.name]] = module.clone()


def show(module: ModuleOp, generic: bool = False, debuginfo: bool = False) -> str:
    s = StringIO()
    Printer(stream=s, print_generic_format=generic, print_debuginfo=debuginfo).print_op(module)
    s.write("\n")
    return s.getvalue()


@contextmanager
def no_gc() -> Iterator[None]:
    """Run passes without Python's cyclic GC: its full collections rescan the whole IR
    (every op links to its parent), which made a 64-kernel module compile 1.2-1.3x
    slower per kernel than one kernel; without it the ratio is 1.01."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def lower(
    ctx: Context, module: ModuleOp, passes: str | Sequence[ModulePass], instruments: Sequence[Instrument] = (Verify(),)
) -> None:
    """Apply `passes` (or a pipeline, spelt as mlir-opt or xDSL does) in place, calling
    `instruments` in order around each. A pass's (or verifier's) DiagnosticError
    propagates; another verify failure becomes one naming the pass; any other
    exception is an InternalError."""
    if isinstance(passes, str):
        passes = parse_pipeline(pipeline_spec(passes)).passes
    current: list[ModulePass] = []

    def between(prev: ModulePass | None, m: ModuleOp, nxt: ModulePass | None) -> None:
        if prev is not None:
            for i in instruments:
                i.after(prev, m)
        current[:] = [nxt] if nxt is not None else []
        if nxt is not None:
            for i in instruments:
                i.before(nxt, m)

    try:
        with no_gc():
            PassPipeline(tuple(passes), between).apply(ctx, module)
    except UsageError:  # an instrument's (an unwritable --mlir-print-ir-tree-dir)
        raise
    except DiagnosticError:
        _failed(current, instruments)
        raise
    except (VerifyException, DiagnosticException) as e:
        _failed(current, instruments)
        raise DiagnosticError(None, f"pass '{_name(current)}' failed: {e}") from None
    except Exception as e:
        _failed(current, instruments)
        raise InternalError(f"pass '{_name(current)}' crashed: {type(e).__name__}: {e}") from e


def _name(current: list[ModulePass]) -> str:
    return current[0].name if current else "?"


def _failed(current: list[ModulePass], instruments: Sequence[Instrument]) -> None:
    for i in instruments if current else ():
        i.failed(current[0])
