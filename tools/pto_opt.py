"""`pto-opt`: the mlir-opt of pto-ir, built on xDSL's opt driver.

Adds what an MLIR user expects and xDSL's driver lacks: `--pass-pipeline=
'builtin.module(...)'`, file:line:col diagnostics with the source line for parse and
verifier errors alike, `--split-input-file` that goes on after a failing chunk,
`--verify-diagnostics` with `// expected-error@+1 {{...}}` matching, IR dumps after
every pass, a crash reproducer, and no Python traceback for any user error. The work
is done by `pto.driver`; this module reads the flags and prints.

Exit codes: 0 success, 1 a user error (bad IR, failing pass, mismatched diagnostics),
2 bad command line, 3 an internal error (a bug in pto-ir).
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from collections.abc import Callable, Sequence
from typing import NoReturn

from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import PassPipeline
from xdsl.utils.exceptions import ParseError
from xdsl.xdsl_opt_main import xDSLOptMain

from pto import __version__
from pto.diagnostics import DiagnosticError, DiagnosticLog, collect, render_all
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
from pto.driver.expected import check_expected, expected_diagnostics
from pto.driver.lower import Instrument, IRTree, PrintIR, Reproducer, Time, Verify, lower, show
from pto.driver.parse import parse_error_diag, parse_source, read_source
from pto.driver.pipelines import parse_pipeline, pipeline_spec
from pto.driver.registry import all_passes, load_dialects, pass_summary
from pto.driver.verify import verify_each

# Flags of xdsl-opt this driver does not implement, and whether a command line used one.
UNSUPPORTED: dict[str, Callable[[argparse.Namespace], bool]] = {
    "parsing_diagnostics": lambda a: a.parsing_diagnostics,
    "shrink": lambda a: a.shrink,
    "target": lambda a: a.target != "mlir",
    "frontend": lambda a: a.frontend is not None,
}


class PtoOptMain(xDSLOptMain):
    _input_text: str | None = None  # read once: --run-reproducer reads its configuration line first
    version_format = "pto-opt " + __version__ + " (xDSL {xdsl_version})"

    def register_all_dialects(self) -> None:
        load_dialects(self.ctx)

    def register_all_passes(self) -> None:
        for name, factory in all_passes().items():
            self.register_pass(name, factory)

    def register_all_arguments(self, arg_parser: argparse.ArgumentParser) -> None:
        super().register_all_arguments(arg_parser)
        for action in arg_parser._actions:  # (refused in setup_pipeline: not offered in --help either)
            if action.dest in UNSUPPORTED:
                action.help = argparse.SUPPRESS

        def error(message: str) -> NoReturn:
            raise UsageError(message)

        arg_parser.error = error  # type: ignore[method-assign]
        arg_parser.prog = "pto-opt"
        add = arg_parser.add_argument
        add(
            "--pass-pipeline",
            default=None,
            help="MLIR-style pipeline, e.g. 'builtin.module(cse,tile-unroll{factors=4,1})'",
        )
        add(
            "--mlir-print-op-generic",
            action="store_true",
            help="print ops in generic form (same as --print-op-generic)",
        )
        add("--mlir-print-ir-after-all", action="store_true", help="print the IR to stderr after every pass")
        add("--mlir-print-ir-before-all", action="store_true", help="print the IR to stderr before every pass")
        add(
            "--mlir-print-ir-tree-dir",
            default=None,
            metavar="DIR",
            help="write the IR after every pass to DIR/<n>_<pass>.mlir",
        )
        add(
            "--mlir-pass-pipeline-crash-reproducer",
            default=None,
            metavar="FILE",
            help="on a pass failure, write the failing pass's input IR and pipeline to FILE",
        )
        add("--run-reproducer", action="store_true", help="take the pipeline from the input's '// configuration:' line")
        add("--list-passes", action="store_true", help="list the registered passes with a one-line summary")

    def setup_pipeline(self) -> None:
        a = self.args
        # Flags inherited from xdsl-opt that this driver does not implement are refused,
        # not silently ignored.
        for dest, used in UNSUPPORTED.items():
            if used(a):
                raise UsageError(f"--{dest.replace('_', '-')} is not supported by pto-opt")
        a.mlir_print_ir_after_all |= a.print_between_passes
        repro, src = a.mlir_pass_pipeline_crash_reproducer, a.input_file
        if repro and src and os.path.exists(repro) and os.path.exists(src) and os.path.samefile(repro, src):
            raise UsageError(f"the crash reproducer '{repro}' would overwrite the input")
        if a.list_passes:
            self.pipeline = PassPipeline(())
            return
        spec = a.passes
        if a.pass_pipeline is not None:
            if spec:
                raise UsageError("give either -p or --pass-pipeline, not both")
            spec = pipeline_spec(a.pass_pipeline)
        if a.run_reproducer:
            spec = self._reproducer_spec()
        self.pipeline = parse_pipeline(spec)

    def _reproducer_spec(self) -> str:
        text = self._read_input()
        m = re.search(r"^// configuration: --pass-pipeline='(.*)'$", text, re.M)
        if m is None:
            raise UsageError("--run-reproducer: the input has no '// configuration: --pass-pipeline=...' line")
        return pipeline_spec(m.group(1))

    # ---------------------------------------------------------------- running

    def _read_input(self) -> str:
        if self._input_text is not None:
            return self._input_text
        path = self.args.input_file
        text = sys.stdin.read() if path is None or path == "-" else read_source(path)
        self._input_text = text
        return text

    def input_name(self) -> str:
        path = self.args.input_file
        return "<stdin>" if path in (None, "-") else path

    def chunks(self, text: str) -> list[str]:
        if not self.args.split_input_file:
            return [text]
        # Keep each chunk at its place in the file so line numbers stay the file's.
        out: list[str] = []
        pending: list[str] = []
        offset = 0
        for line in text.splitlines(keepends=True):
            if line.strip() == "// -----":
                out.append("\n" * offset + "".join(pending))
                offset += len(pending) + 1
                pending = []
            else:
                pending.append(line)
        out.append("\n" * offset + "".join(pending))
        return out

    def run(self) -> int:
        if self.args.list_passes:
            self.list_passes()
            return 0
        text = self._read_input()
        name = self.input_name()
        sources = {name: text}
        results: list[str] = []
        status = 0
        for i, chunk in enumerate(self.chunks(text)):
            out, code = self.process_chunk(i, chunk, name, sources)
            if out is not None:
                results.append(out)
            status = max(status, code)
        self.write_output("// -----\n".join(results))
        return status

    def process_chunk(self, index: int, chunk: str, name: str, sources: dict[str, str]) -> tuple[str | None, int]:
        log = DiagnosticLog()
        module = None
        try:
            with collect(log):
                module = self.parse_and_lower(index, chunk, name, log)
        except DiagnosticError as e:
            log.add_error(e)
            module = None
        if self.args.verify_diagnostics:
            problems = check_expected(expected_diagnostics(chunk), log.items, name)
            for p in problems:
                print(p, file=sys.stderr)
            return None if module is None or log.failed else self.print_module(module), EXIT_USER if problems else 0
        for d in log.items:
            print(render_all(d, sources), file=sys.stderr)
        if module is None or log.failed:
            return None, EXIT_USER if log.failed else 0
        return self.print_module(module), 0

    def parse_and_lower(self, index: int, chunk: str, name: str, log: DiagnosticLog) -> ModuleOp | None:
        try:
            module = parse_source(self.ctx, chunk, name, not self.args.no_implicit_module)
        except ParseError as e:
            log(parse_error_diag(e))
            return None
        if not self.args.disable_verify:
            verify_each(module)
        lower(self.ctx, module, self.pipeline.passes, self.instruments(index))
        return module

    def instruments(self, chunk_index: int) -> list[Instrument]:
        a = self.args
        out: list[Instrument] = [Time("pto-opt")] if a.time_passes else []
        out.append(Verify())
        if a.mlir_print_ir_before_all or a.mlir_print_ir_after_all:
            out.append(PrintIR(self.print_module, a.mlir_print_ir_before_all, a.mlir_print_ir_after_all))
        if a.mlir_print_ir_tree_dir:
            prefix = f"{chunk_index}_" if a.split_input_file else ""
            out.append(IRTree(self.print_module, a.mlir_print_ir_tree_dir, prefix))
        if a.mlir_pass_pipeline_crash_reproducer:
            out.append(Reproducer(self.print_module, a.mlir_pass_pipeline_crash_reproducer, "pto-opt"))
        return out

    def print_module(self, module: ModuleOp) -> str:
        generic = self.args.print_op_generic or self.args.mlir_print_op_generic
        return show(module, generic, self.args.print_debuginfo)

    def write_output(self, text: str) -> None:
        if self.args.output_file is None:
            sys.stdout.write(text)
            return
        try:
            with open(self.args.output_file, "w") as f:
                f.write(text)
        except OSError as e:
            raise UsageError(f"cannot write '{self.args.output_file}': {e.strerror}") from None

    def list_passes(self) -> None:
        print("Available passes:")
        for name in sorted(self.available_passes):
            print(f"  {name:28} {pass_summary(self.available_passes[name]())}")


def main(argv: Sequence[str] | None = None) -> int:
    try:
        tool = PtoOptMain(args=argv)
        return flushed(tool.run())
    except UsageError as e:
        print(f"pto-opt: error: {e}", file=sys.stderr)
        return EXIT_USAGE
    except InternalError as e:
        print(
            f"pto-opt: internal error: {e} (a bug in pto-ir; rerun with "
            "--mlir-pass-pipeline-crash-reproducer=FILE to capture the failing input)",
            file=sys.stderr,
        )
        return EXIT_INTERNAL
    except KeyboardInterrupt:
        return 130
    except SystemExit as e:  # argparse's, after --help or a bad flag
        exit_flushed(e)
    except BrokenPipeError:
        return stdout_closed()
    except Exception as e:
        print(f"pto-opt: internal error: {type(e).__name__}: {e} (a bug in pto-ir)", file=sys.stderr)
        return EXIT_INTERNAL


if __name__ == "__main__":
    sys.exit(main())
