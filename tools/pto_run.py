"""`pto-run`: lower a kernel to the `npu` level if needed, run it in the interpreter on
`.npy` or random inputs, and report cycles, pipe utilisation, L2 and HBM traffic.

Exit codes as pto-opt: 0 success, 1 a user error (bad IR, bad inputs, a kernel that
fails at run time, a --golden mismatch), 2 bad command line, 3 an internal error.

Resource limits, checked before anything is allocated: `--l2-size` is at most
`L2_SIZE_CAP` (1 GiB; the model keeps 25 bytes of state per 512-byte line, so 50 MB),
and the kernel's arrays (inputs, their copies in the model's global memory, outputs and
their per-element write counts) must fit a memory budget, by default half of the
machine's physical memory (`--max-memory BYTES` or `PTO_RUN_MAX_MEMORY` overrides it).
No output file (`--trace`, `--output-dir`'s results) may be an input file or the kernel.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tokenize
from collections.abc import Sequence
from typing import NoReturn

import ml_dtypes
import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.utils.exceptions import ParseError

from pto.diagnostics import Diagnostic, DiagnosticError, DiagnosticLog, collect, render_all
from pto.driver.config import configuration
from pto.driver.errors import (
    EXIT_INTERNAL,
    EXIT_USAGE,
    EXIT_USER,
    InternalError,
    UsageError,
    exit_flushed,
    flushed,
    stdout_closed,
)
from pto.driver.limits import L2_SIZE_CAP, over_budget
from pto.driver.lower import KeepLevels, Verify, lower
from pto.driver.parse import LocatingParser, parse_error_diag, read_source
from pto.driver.pipelines import TO_NPU, expand, parse_pipeline, pipeline_spec, to_npu
from pto.driver.registry import load_dialects
from pto.driver.verify import verify_each
from pto.interp.golden import check, golden_elem
from pto.interp.machine import MachineError
from pto.interp.run import (
    DEFAULT_ENGINE,
    ENGINES,
    InputError,
    RunResult,
    check_inputs,
    made_inputs,
    run,
    signature,
)
from pto.targets import UnknownTargetError, load_target


def _same_file(a: str, b: str) -> bool:
    if os.path.realpath(a) == os.path.realpath(b):
        return True
    try:
        return os.path.samefile(a, b)
    except (OSError, ValueError):
        return False


class UserError(Exception):
    """Reported as one line (or rendered diagnostics) with exit code 1."""


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="pto-run", description=__doc__.split("\n\n")[0].replace("\n", " "))
    p.add_argument("kernel", help="a .mlir kernel at the pto, tile or npu level")
    p.add_argument("--pass-pipeline", help="lowering to the npu level (default: the SK-03 pipeline)")
    p.add_argument("--target", help="machine description (default: the kernel's pto.target or ascend910b1)")
    p.add_argument("--tokens", type=int, help="token count for --random-inputs")
    p.add_argument(
        "--input",
        action="append",
        default=[],
        metavar="FILE.npy",
        help="an input array, in the kernel's argument order (repeat)",
    )
    p.add_argument("--random-inputs", action="store_true", help="random inputs of the right dtypes")
    p.add_argument("--seed", type=int, default=0, help="seed for --random-inputs")
    p.add_argument("--golden", action="store_true", help="check outputs against the pto-level numpy golden")
    p.add_argument("--output-dir", help="write result0.npy, result1.npy, ... here")
    p.add_argument("--trace", metavar="FILE.json", help="write a Chrome/Perfetto trace")
    p.add_argument("--html", metavar="FILE.html", help="write the report as a self-contained HTML page")
    p.add_argument(
        "--l2-size", type=int, metavar="BYTES", help=f"model L2 with this size (at most {L2_SIZE_CAP} bytes)"
    )
    p.add_argument(
        "--max-memory",
        type=int,
        metavar="BYTES",
        help="refuse a run whose arrays need more (default: $PTO_RUN_MAX_MEMORY or half the RAM)",
    )
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.add_argument(
        "--engine",
        choices=ENGINES,
        default=None,
        help=f"how the npu level runs: xDSL's interpreter or compiled Python, with the same outputs "
        f"and figures (default: {DEFAULT_ENGINE})",
    )
    p.add_argument(
        "--no-numerics",
        dest="numerics",
        action="store_false",
        help="time the kernel without computing its outputs (the same report, faster)",
    )

    def error(message: str) -> NoReturn:
        print(f"pto-run: error: {message}", file=sys.stderr)
        sys.exit(EXIT_USAGE)

    p.error = error  # type: ignore[method-assign]
    return p


def load_npy(path: str, elem: str) -> np.ndarray:
    try:
        x = np.load(path, allow_pickle=False)
    except FileNotFoundError:
        raise UserError(f"cannot read '{path}': no such file") from None
    except IsADirectoryError:
        raise UserError(f"cannot read '{path}': is a directory") from None
    except (
        OSError,
        ValueError,
        EOFError,
        SyntaxError,
        tokenize.TokenError,
        TypeError,
        KeyError,
        RecursionError,
        MemoryError,
        UnicodeError,
    ) as e:
        # numpy's header reader parses the header as a Python literal: a corrupt one
        # raises whatever the tokenizer or ast.literal_eval raises.
        why = str(e.args[0]) if isinstance(e, tokenize.TokenError) and e.args else str(e)
        why = (why.splitlines() or [type(e).__name__])[0]
        raise UserError(f"cannot read '{path}': not a .npy array file ({why})") from None
    if not isinstance(x, np.ndarray):
        raise UserError(f"cannot read '{path}': not a single .npy array")
    if elem == "bf16" and x.dtype == np.dtype("V2"):  # numpy saves bfloat16 as raw 2-byte records
        x = x.view(ml_dtypes.bfloat16)
    return x


class Runner:
    def __init__(self, args: argparse.Namespace):
        self.args = args
        self.ctx = Context()
        load_dialects(self.ctx)
        self.sources: dict[str, str] = {}
        self.sink = DiagnosticLog(lambda d: print(render_all(d, self.sources), file=sys.stderr))

    def parse(self) -> ModuleOp:
        path = self.args.kernel
        try:
            text = read_source(path)
        except UsageError as e:  # for pto-run, a kernel file is input, not a flag
            raise UserError(str(e)) from None
        self.sources[path] = text
        try:
            module = LocatingParser(self.ctx, text, path).parse_module()
        except ParseError as e:
            self.sink(parse_error_diag(e))
            raise UserError("") from None
        verify_each(module)
        return module

    def lower(self, module: ModuleOp, level: str) -> dict[str, str]:
        """Lower in place; returns the configuration the passes left at the tile level."""
        spec = pipeline_spec(self.args.pass_pipeline or to_npu(level, self.args.target))
        keep = KeepLevels()  # (each pass of a named pipeline on its own: the tile level is seen)
        lower(self.ctx, module, expand(parse_pipeline(spec).passes), [keep, Verify()])
        tiled = keep.levels.get("tile")
        return configuration(tiled) if tiled is not None else {}

    def inputs(self, module: ModuleOp) -> list[np.ndarray]:
        sig = signature(module)
        if self.args.random_inputs:
            if self.args.input:
                raise UsageError("give either --input files or --random-inputs, not both")
            if self.args.tokens is None:
                raise UsageError("--random-inputs needs --tokens N")
            if self.args.tokens < 0:
                raise UsageError(f"--tokens must be non-negative, got {self.args.tokens}")
            self.check_memory(sig, self.args.tokens, f"--tokens {self.args.tokens}", UsageError)
            return made_inputs(sig, self.args.tokens, self.args.seed, self.args.numerics)
        if not self.args.input:
            raise UsageError("give the kernel's inputs with --input FILE.npy ... or use --random-inputs")
        names = sig.inputs
        if len(self.args.input) != len(names):
            raise UserError(
                f"the kernel takes {len(names)} inputs ({', '.join(a.name for a in names)}), "
                f"got {len(self.args.input)} --input files"
            )
        xs = [load_npy(p, a.elem) for p, a in zip(self.args.input, names, strict=True)]
        return xs

    def check_memory(self, sig, tokens: int, what: str, error: type[Exception] = UserError) -> None:
        if why := over_budget(sig, tokens, self.args.max_memory):
            raise error(f"{what} {why} (--max-memory or PTO_RUN_MAX_MEMORY raises it)")

    def check_flags(self) -> None:
        a = self.args
        if a.seed < 0:
            raise UsageError(f"--seed must be non-negative, got {a.seed}")
        if a.max_memory is not None and a.max_memory <= 0:
            raise UsageError(f"--max-memory must be a positive number of bytes, got {a.max_memory}")
        for flag, v in (
            ("--trace", a.trace),
            ("--html", a.html),
            ("--output-dir", a.output_dir),
            ("--target", a.target),
        ):
            if v is not None and not v.strip():
                raise UsageError(f"{flag} needs a non-empty value")
        if not a.numerics and (a.golden or a.output_dir):
            flag = "--golden" if a.golden else "--output-dir"
            raise UsageError(f"--no-numerics computes no outputs: it cannot be combined with {flag}")
        if a.l2_size is not None and a.l2_size > L2_SIZE_CAP:
            raise UsageError(f"--l2-size {a.l2_size} is over the model's cap of {L2_SIZE_CAP} bytes (1 GiB)")
        self.check_paths(0)

    def check_paths(self, n_outputs: int) -> None:
        """No output file may be an input file or the kernel (by path, symlink or hard link)."""
        a = self.args
        ins = [a.kernel, *a.input]
        outs: list[tuple[str, str]] = []
        if a.trace:
            outs.append(("--trace", a.trace))
        if a.html:
            outs.append(("--html", a.html))
        if a.output_dir:
            outs.append(("--output-dir", a.output_dir))
            outs += [("--output-dir", os.path.join(a.output_dir, f"result{i}.npy")) for i in range(n_outputs)]
        for flag, path in outs:
            for src in ins:
                if _same_file(path, src):
                    raise UsageError(f"{flag} would overwrite the input '{src}' (writing '{path}')")

    def main(self) -> int:
        a = self.args
        self.check_flags()
        if a.target:
            load_target(a.target)
        if a.l2_size is not None:
            l2 = load_target(a.target or "ascend910b1").l2
            unit = l2.line_bytes * l2.ways
            if a.l2_size <= 0 or a.l2_size % unit:
                raise UsageError(
                    f"--l2-size must be a positive multiple of {unit} bytes "
                    f"({l2.ways} ways of {l2.line_bytes}-byte lines), got {a.l2_size}"
                )
        with collect(self.sink):
            module = self.parse()
            sig = signature(module)
            self.check_paths(len(sig.outputs))
            inputs = self.inputs(module)
            tokens = check_inputs(sig, inputs)
            if a.input:
                self.check_memory(sig, tokens or 0, "the inputs")
            if a.tokens is not None and tokens is not None and a.tokens != tokens:
                raise UserError(f"--tokens {a.tokens} contradicts the inputs, which have {tokens} tokens")
            golden: RunResult | None = None
            if a.golden:
                if sig.level == "npu":
                    raise UserError("--golden needs a kernel above the npu level (the golden is its pto level)")
                golden_module = module.clone()
                golden = run(golden_module, inputs)
            config: dict[str, str] = {}
            if sig.level != "npu":
                config = self.lower(module, sig.level)
                if (now := signature(module).level) != "npu":
                    used = f"--pass-pipeline '{a.pass_pipeline}'" if a.pass_pipeline else "the default pipeline"
                    raise UsageError(
                        f"{used} leaves the {sig.level}-level kernel at "
                        f"the {now} level; pto-run needs a pipeline that lowers it to the npu level "
                        f"(the default is '{TO_NPU[sig.level]}')"
                    )
            result = run(
                module, inputs, a.target, a.l2_size, trace=a.trace is not None, engine=a.engine, numerics=a.numerics
            )
        rep = result.report
        assert rep is not None
        rep.notes += result.host_transposes
        rep.config = config
        if a.output_dir:
            try:
                os.makedirs(a.output_dir, exist_ok=True)
                for i, o in enumerate(result.outputs):
                    np.save(os.path.join(a.output_dir, f"result{i}.npy"), o)
            except OSError as e:
                raise UserError(f"cannot write to '{a.output_dir}': {e.strerror}") from None
        if a.trace:
            try:
                rep.write_trace(a.trace)
            except OSError as e:
                raise UserError(f"cannot write '{a.trace}': {e.strerror}") from None
        if a.html:
            try:
                rep.save_html(a.html, os.path.basename(a.kernel))
            except OSError as e:
                raise UserError(f"cannot write '{a.html}': {e.strerror}") from None
        verdicts = []
        if golden is not None:
            verdicts = [
                (o.name, check(g, w, golden_elem(o.elem, golden_module)))
                for o, g, w in zip(sig.outputs, result.outputs, golden.outputs, strict=True)
            ]
        code = EXIT_USER if any(not v.ok for _, v in verdicts) else 0
        try:
            self.print_report(rep, verdicts)
        except BrokenPipeError:
            return stdout_closed(code)
        return flushed(code)

    def print_report(self, rep, verdicts: list) -> None:
        if self.args.json:
            d = rep.to_json()
            d["golden"] = {
                n: {"ok": v.ok, "bad": v.bad, "total": v.total, "nonfinite": v.nonfinite} for n, v in verdicts
            }
            print(json.dumps(d, indent=1))
        else:
            print(rep.table())
            for n, v in verdicts:
                print(v.describe(f"golden {n}"))


def main(argv: Sequence[str] | None = None) -> int:
    try:
        args = _parser().parse_args(argv)
    except SystemExit as e:
        exit_flushed(e)
    runner = Runner(args)
    try:
        return runner.main()
    except UsageError as e:
        print(f"pto-run: error: {e}", file=sys.stderr)
        return EXIT_USAGE
    except UnknownTargetError as e:
        print(f"pto-run: error: {e}", file=sys.stderr)
        return EXIT_USAGE
    except (UserError, InputError) as e:
        if str(e):
            print(f"pto-run: error: {e}", file=sys.stderr)
        return EXIT_USER
    except DiagnosticError as e:
        runner.sink(Diagnostic("error", e.location, e.message, e.notes))
        return EXIT_USER
    except MachineError as e:
        runner.sink(Diagnostic("error", e.op.location if e.op is not None else None, str(e)))
        return EXIT_USER
    except InternalError as e:
        print(f"pto-run: internal error: {e} (a bug in pto-ir)", file=sys.stderr)
        return EXIT_INTERNAL
    except MemoryError as e:  # past a --max-memory raised above what the machine has
        print(f"pto-run: error: out of memory ({e}); lower --tokens or --max-memory", file=sys.stderr)
        return EXIT_USER
    except BrokenPipeError:
        return stdout_closed()
    except Exception as e:  # a bug in pto-ir, not in the user's input
        print(f"pto-run: internal error: {type(e).__name__}: {e}", file=sys.stderr)
        return EXIT_INTERNAL


if __name__ == "__main__":
    sys.exit(main())
