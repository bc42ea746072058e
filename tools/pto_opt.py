"""`pto-opt`: the mlir-opt of pto-ir, built on xDSL's opt driver.

Adds what an MLIR user expects and xDSL's driver lacks: `--pass-pipeline=
'builtin.module(...)'`, file:line:col diagnostics with the source line for parse and
verifier errors alike, `--split-input-file` that goes on after a failing chunk,
`--verify-diagnostics` with `// expected-error@+1 {{...}}` matching, IR dumps after
every pass, a crash reproducer, and no Python traceback for any user error.

Exit codes: 0 success, 1 a user error (bad IR, failing pass, mismatched diagnostics),
2 bad command line, 3 an internal error (a bug in pto-ir).
"""

from __future__ import annotations

import argparse
import gc
import os
import re
import sys
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from io import StringIO
from typing import NoReturn

from xdsl.dialects.builtin import FileLineColLoc, IntAttr, ModuleOp, StringAttr, UnknownLoc
from xdsl.ir import Block, Operation, SSAValue
from xdsl.parser import Parser
from xdsl.parser.core import ForwardDeclaredValue
from xdsl.parser.generic_parser import ParserState
from xdsl.utils.lexer import Input, Position, Span
from xdsl.utils.mlir_lexer import MLIRLexer, MLIRToken
from xdsl.passes import ModulePass, PassPipeline
from xdsl.printer import Printer
from xdsl.utils.exceptions import DiagnosticException, ParseError, VerifyException
from xdsl.xdsl_opt_main import xDSLOptMain

from pto import __version__
from pto.diagnostics import Diagnostic, DiagnosticError, Note, collect, line_col
from pto.tools.registry import all_passes, load_dialects, pass_summary

EXIT_USER, EXIT_USAGE, EXIT_INTERNAL = 1, 2, 3


class UsageError(Exception):
    pass


class InternalError(Exception):
    pass


# ----------------------------------------------------------------------- parsing


class SafeLexer(MLIRLexer):
    r"""xDSL 0.74's lexer with a string-literal regex that runs in linear time.

    xDSL matches a string literal with `"(?:[^"\\\n\v\f]+|\\(...))*"`: a `+` nested
    in a `*`, so a `"` that is never closed on its line backtracks through every way of
    splitting the rest of the line, ~2^N steps for N characters (28 took 15 s). The
    same language without the inner `+` has one way to match each prefix."""

    _unescaped_characters_regex = re.compile(r'"(?:[^"\\\n\v\f]|\\(?:["nt\\]|[0-9A-Fa-f]{2}))*"')

    def _lex_string_literal(self, start_pos: Position) -> MLIRToken:
        if self._unescaped_characters_regex.match(self.input.content, start_pos) is None:
            end = self.input.content.find("\n", start_pos)
            end = len(self.input.content) if end < 0 else end
            raise ParseError(Span(start_pos, end, self.input), "unterminated string literal")
        return super()._lex_string_literal(start_pos)


class LocatingParser(Parser):
    """Records each op's source position as a `FileLineColLoc`, as MLIR does, so that
    verifier and pass diagnostics can point at the source. Lexes with `SafeLexer`, and
    reports a number too large for its attribute (an f32 `eps = 1.0e+39`, an i64
    overflow) at the number, not as a Python exception."""

    def __init__(self, ctx, input: str | bytes, name: str = "<unknown>") -> None:
        super().__init__(ctx, "", name)
        text = input.decode("utf-8") if isinstance(input, bytes) else input
        self._parser_state = ParserState(SafeLexer(Input(text, name)))
        self._last_number: tuple[Position, Position] | None = None

    def parse_optional_integer(self, allow_boolean: bool = True, allow_negative: bool = True) -> int | None:
        start = self._current_token.span.start
        value = super().parse_optional_integer(allow_boolean, allow_negative)
        if value is not None:
            self._last_number = (start, self._last_end())
        return value

    def parse_optional_float(self, *, allow_negative: bool = True) -> float | None:
        start = self._current_token.span.start
        value = super().parse_optional_float(allow_negative=allow_negative)
        if value is not None:
            self._last_number = (start, self._last_end())
        return value

    def _last_end(self) -> Position:
        # The end of the token just consumed: the source up to the next token, less spacing.
        text = self.lexer.input.content
        end = self._current_token.span.start
        while end > 0 and text[end - 1].isspace():
            end -= 1
        return end

    def parse_module(self, allow_implicit_module: bool = True) -> ModuleOp:
        try:
            return super().parse_module(allow_implicit_module)
        except RecursionError:
            # xDSL's parser recurses per nested bracket; thousands of them exhaust the stack.
            span = self._current_token.span
            self.raise_error("nesting too deep to parse", span.start, span.end)

    def parse_operation(self) -> Operation:
        start = self._current_token.span
        try:
            op = super().parse_operation()
        except ParseError:
            raise
        except (OverflowError, ValueError, VerifyException) as e:
            msg = str(e.args[0]) if e.args else str(e)
            if self._last_number is not None and (isinstance(e, OverflowError) or "out of range" in msg):
                # A literal that its attribute's type cannot hold, found while building it.
                if isinstance(e, OverflowError):
                    lit = self.lexer.input.content[self._last_number[0]:self._last_number[1]]
                    msg = f"floating point value {lit} is too large for its type"
                self.raise_error(msg[0].lower() + msg[1:], *self._last_number)
            # xDSL's custom op parsers build attributes as they go (`arith.minui ... :
            # tensor<...xf32>`): a constructor that refuses one is the input's error here.
            self.raise_error(msg[0].lower() + msg[1:], start.start, self._last_end())
        if isinstance(op.location, UnknownLoc):
            loc = start.get_location()
            op.location = FileLineColLoc(StringAttr(loc.file), IntAttr(loc.line), IntAttr(loc.col))
        return op

    def _get_op_by_name(self, name: str) -> type[Operation]:
        if (op := self.ctx.get_optional_op(name, dialect_stack=self._parser_state.dialect_stack)) is not None:
            return op
        # Point at the op name (just consumed), as mlir-opt does, not at what follows it.
        end = self._current_token.span.start
        start = self.lexer.input.content.rfind(name, 0, end)
        self.raise_error(f"operation '{name}' is not registered", start, start + len(name))


def read_source(path: str) -> str:
    """A source file's text; an unreadable or non-UTF-8 file is a UsageError."""
    try:
        with open(path, encoding="utf-8") as f:
            return f.read()
    except OSError as e:
        raise UsageError(f"cannot read '{path}': {e.strerror}") from None
    except UnicodeDecodeError:
        raise UsageError(f"cannot read '{path}': not UTF-8 text") from None


def pipeline_spec(text: str) -> str:
    """`builtin.module(a,b{k=v})` -> `a,b{k=v}` (xDSL's spelling); plain lists pass."""
    text = text.strip()
    if text.startswith("builtin.module(") and text.endswith(")"):
        return text[len("builtin.module("):-1]
    if re.match(r"^[\w.]+\(", text):
        raise UsageError(f"pass pipeline anchor '{text.split('(')[0]}' is not supported; use 'builtin.module(...)'")
    return text


def as_mlir_pipeline(passes: Sequence[ModulePass]) -> str:
    return "builtin.module(" + ",".join(str(p.pipeline_pass_spec()) for p in passes) + ")"


# -------------------------------------------------------------------- diagnostics


def render(d: Diagnostic | Note, sources: dict[str, str], severity: str | None = None) -> str:
    sev = severity or getattr(d, "severity", "note")
    where = line_col(d.location)
    if where is None:
        return f"{sev}: {d.message}"
    name, line, col = where
    out = f"{name}:{line}:{col}: {sev}: {d.message}"
    lines = sources.get(name, "").splitlines()
    if 0 < line <= len(lines):
        src = lines[line - 1]
        out += f"\n{src}\n{' ' * (col - 1)}^"
    return out


def parse_error_diag(e: ParseError) -> Diagnostic:
    loc = e.span.get_location()
    return Diagnostic("error", FileLineColLoc(StringAttr(loc.file), IntAttr(loc.line), IntAttr(loc.col)), e.msg)


def verify_dominance(block: Block, visible: set[SSAValue]) -> None:
    """MLIR's dominance rule, which xDSL 0.74's verifier does not check: an operand is
    defined earlier in its block or in an enclosing one. Blocks of a multi-block region
    see every value of the region (no CFG dominance is needed by any pto-ir level)."""
    region = block.parent
    scope = [block] if region is None or len(region.blocks) == 1 else list(region.blocks)
    added = [v for b in scope for v in b.args if v not in visible]
    if len(scope) > 1:
        added += [r for b in scope for o in b.ops for r in o.results]
    visible.update(added)
    for op in block.ops:
        for i, v in enumerate(op.operands):
            if isinstance(v, ForwardDeclaredValue):  # xDSL lets some escape its parser
                name = f" '%{v.name_hint}'" if v.name_hint else ""
                raise DiagnosticError(op, f"operand #{i} is an undeclared SSA value{name}")
            if v not in visible:
                owner = v.owner if isinstance(v.owner, Operation) else None
                notes = [Note(owner.location, "operand defined here")] if owner is not None else []
                raise DiagnosticError(op, f"operand #{i} does not dominate this use", notes)
        for r in op.regions:
            for b in r.blocks:
                verify_dominance(b, visible)
        if len(scope) == 1:
            visible.update(op.results)
            added.extend(op.results)
    visible.difference_update(added)


def verify_each(module: ModuleOp) -> None:
    """Verify op by op so that an error names the op that is wrong."""
    from pto.dialects.pto import verify_hints

    verify_dominance(module.body.block, set())
    for op in module.walk():
        try:
            op.verify(verify_nested_ops=False)
            verify_hints(op)
        except DiagnosticError:
            raise
        except (VerifyException, DiagnosticException) as e:
            msg = str(e.args[0]) if e.args else str(e)
            raise DiagnosticError(op, msg.removeprefix("Operation does not verify: ")) from None


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


# ------------------------------------------------------------ expected diagnostics

_EXPECT = re.compile(r"//\s*expected-(error|warning|note|remark)\s*(@[^\s{]*)?\s*\{\{(.*?)\}\}")


@dataclass
class Expected:
    severity: str
    line: int
    text: str
    at: int  # the annotation's own line, for reporting
    seen: bool = False


def expected_diagnostics(text: str) -> list[Expected]:
    lines = text.splitlines()
    out: list[Expected] = []
    last_code_line = 0
    for i, line in enumerate(lines, start=1):
        for m in _EXPECT.finditer(line):
            sev, where, msg = m.group(1), m.group(2), m.group(3)
            if where is None:
                target = i
            elif where == "@above":
                target = last_code_line
            elif where == "@below":
                target = next(
                    (j for j in range(i + 1, len(lines) + 1) if lines[j - 1].strip() and not _EXPECT.search(lines[j - 1])),
                    i + 1,
                )
            elif re.fullmatch(r"@[+-]\d+", where):
                target = i + int(where[1:])
            else:
                raise UsageError(f"line {i}: unsupported expected-{sev} location '{where}'")
            out.append(Expected(sev, target, msg, i))
        code = line.split("//")[0].strip()
        if code:
            last_code_line = i
    return out


def check_expected(expected: list[Expected], got: list[Diagnostic], name: str) -> list[str]:
    problems: list[str] = []
    flat: list[tuple[str, int, str, Diagnostic | Note]] = []
    for d in got:
        flat.append((d.severity, (line_col(d.location) or ("", 0, 0))[1], d.message, d))
        for n in d.notes:
            flat.append(("note", (line_col(n.location) or ("", 0, 0))[1], n.message, n))
    for sev, line, msg, d in flat:
        match = next((e for e in expected if not e.seen and e.severity == sev and e.line == line and e.text in msg), None)
        if match is None:
            where = line_col(d.location)
            prefix = f"{where[0]}:{where[1]}:{where[2]}" if where else name
            problems.append(f"{prefix}: error: unexpected {sev}: {msg}")
        else:
            match.seen = True
    for e in expected:
        if not e.seen:
            problems.append(f'{name}:{e.at}: error: expected {e.severity} "{e.text}" was not produced')
    return problems


# -------------------------------------------------------------------------- driver


class PtoOptMain(xDSLOptMain):
    version_format = "pto-opt " + __version__ + " (xDSL {xdsl_version})"

    def register_all_dialects(self) -> None:
        load_dialects(self.ctx)

    def register_all_passes(self) -> None:
        for name, factory in all_passes().items():
            self.register_pass(name, factory)

    def register_all_arguments(self, arg_parser: argparse.ArgumentParser) -> None:
        super().register_all_arguments(arg_parser)

        def error(message: str) -> NoReturn:
            raise UsageError(message)

        arg_parser.error = error  # type: ignore[method-assign]
        arg_parser.prog = "pto-opt"
        add = arg_parser.add_argument
        add("--pass-pipeline", default=None, help="MLIR-style pipeline, e.g. 'builtin.module(cse,tile-unroll{factors=4,1})'")
        add("--mlir-print-op-generic", action="store_true", help="print ops in generic form (same as --print-op-generic)")
        add("--mlir-print-ir-after-all", action="store_true", help="print the IR to stderr after every pass")
        add("--mlir-print-ir-before-all", action="store_true", help="print the IR to stderr before every pass")
        add("--mlir-print-ir-tree-dir", default=None, metavar="DIR", help="write the IR after every pass to DIR/<n>_<pass>.mlir")
        add("--mlir-pass-pipeline-crash-reproducer", default=None, metavar="FILE",
            help="on a pass failure, write the failing pass's input IR and pipeline to FILE")
        add("--run-reproducer", action="store_true", help="take the pipeline from the input's '// configuration:' line")
        add("--list-passes", action="store_true", help="list the registered passes with a one-line summary")

    def setup_pipeline(self) -> None:
        a = self.args
        # Flags inherited from xdsl-opt that this driver does not implement are refused,
        # not silently ignored.
        for flag, on in (("--parsing-diagnostics", a.parsing_diagnostics), ("--shrink", a.shrink),
                         ("--target", a.target != "mlir"), ("--frontend", a.frontend is not None)):
            if on:
                raise UsageError(f"{flag} is not supported by pto-opt")
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
        self.pipeline = self.build_pipeline(spec)

    @staticmethod
    def _one_line(e: BaseException) -> str:
        text = str(e).strip()
        if "\n" not in text:
            return text
        lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
        col = re.search(r"pass-pipeline:\d+:(\d+)", text)
        return lines[-1] + (f" (at column {col.group(1)})" if col else "")

    def build_pipeline(self, spec: str) -> PassPipeline:
        try:
            return PassPipeline.parse_spec(self.available_passes, spec)
        except ValueError as e:
            msg = str(e)
            if m := re.match(r"Unrecognized passes: \[(.*)\]", msg):
                raise UsageError(f"unknown pass {m.group(1)} (see --list-passes)") from None
            raise UsageError(f"bad pass pipeline '{spec}': {self._one_line(e)}") from None
        except Exception as e:  # option parsing raises assorted errors
            raise UsageError(f"bad pass pipeline '{spec}': {self._one_line(e)}") from None
        except BaseException as e:  # ArgSpecParseError is a BaseException
            if isinstance(e, (KeyboardInterrupt, SystemExit)):
                raise
            raise UsageError(f"bad pass pipeline '{spec}': {self._one_line(e)}") from None

    def _reproducer_spec(self) -> str:
        text = self._read_input()
        m = re.search(r"^// configuration: --pass-pipeline='(.*)'$", text, re.M)
        if m is None:
            raise UsageError("--run-reproducer: the input has no '// configuration: --pass-pipeline=...' line")
        return pipeline_spec(m.group(1))

    # ---------------------------------------------------------------- running

    def _read_input(self) -> str:
        if getattr(self, "_input_text", None) is not None:
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

    def run(self) -> int:  # type: ignore[override]
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
        got: list[Diagnostic] = []
        seen: set[tuple[str, str, str]] = set()

        def sink(d: Diagnostic) -> None:
            # A pass warns once per op it visits; the unrolled copies of one source op
            # would repeat the same line.
            key = (d.severity, str(d.location), d.message)
            if key not in seen:
                seen.add(key)
                got.append(d)

        module = None
        try:
            with collect(sink):
                try:
                    if re.sub(r"//[^\n]*", "", chunk).strip():
                        module = LocatingParser(self.ctx, chunk, name).parse_module(not self.args.no_implicit_module)
                    else:  # like mlir-opt, an empty input is an empty module (xDSL rejects it)
                        module = ModuleOp([])
                except ParseError as e:
                    got.append(parse_error_diag(e))
                    module = None
                if module is not None and not self.args.disable_verify:
                    verify_each(module)
                if module is not None:
                    with no_gc():
                        self.run_passes(index, module)
        except DiagnosticError as e:
            got.append(Diagnostic("error", e.location, e.message, e.notes))
            module = None

        failed = any(d.severity == "error" for d in got)
        if self.args.verify_diagnostics:
            problems = check_expected(expected_diagnostics(chunk), got, name)
            for p in problems:
                print(p, file=sys.stderr)
            code = EXIT_USER if problems else 0
        else:
            for d in got:
                print(render(d, sources), file=sys.stderr)
                for n in d.notes:
                    print(render(n, sources, "note"), file=sys.stderr)
            code = EXIT_USER if failed else 0
        if module is None or failed:
            return None, code
        return self.print_module(module), code

    def run_passes(self, chunk_index: int, module: ModuleOp) -> None:
        a = self.args
        for n, p in enumerate(self.pipeline.passes):
            before = self.print_module(module) if a.mlir_pass_pipeline_crash_reproducer else None
            if a.mlir_print_ir_before_all:
                print(f"// -----// IR Dump Before {p.name} //----- //\n{self.print_module(module)}", file=sys.stderr)
            try:
                start = time.perf_counter()
                p.apply(self.ctx, module)
                if a.time_passes:
                    print(f"pto-opt: pass {p.name}: {time.perf_counter() - start:.4f} s", file=sys.stderr)
                verify_each(module)
            except DiagnosticError:
                self.write_reproducer(before, p)
                raise
            except (VerifyException, DiagnosticException) as e:
                self.write_reproducer(before, p)
                raise DiagnosticError(None, f"pass '{p.name}' failed: {e}") from None
            except Exception as e:
                self.write_reproducer(before, p)
                raise InternalError(f"pass '{p.name}' crashed: {type(e).__name__}: {e}") from e
            if a.mlir_print_ir_after_all:
                print(f"// -----// IR Dump After {p.name} //----- //\n{self.print_module(module)}", file=sys.stderr)
            if a.mlir_print_ir_tree_dir:
                prefix = f"{chunk_index}_" if a.split_input_file else ""
                path = os.path.join(a.mlir_print_ir_tree_dir, f"{prefix}{n}_{p.name}.mlir")
                try:
                    os.makedirs(a.mlir_print_ir_tree_dir, exist_ok=True)
                    with open(path, "w") as f:
                        f.write(self.print_module(module))
                except OSError as e:
                    raise UsageError(f"cannot write '{path}': {e.strerror}") from None

    def write_reproducer(self, before: str | None, failing: ModulePass) -> None:
        path = self.args.mlir_pass_pipeline_crash_reproducer
        if path is None or before is None:
            return
        try:
            with open(path, "w") as f:
                f.write(f"// configuration: --pass-pipeline='{as_mlir_pipeline([failing])}'\n")
                f.write(f"// reproduce with: pto-opt --run-reproducer {path}\n")
                f.write(before)
        except OSError as e:
            print(f"pto-opt: error: cannot write the reproducer '{path}': {e.strerror}", file=sys.stderr)
            return
        print(f"pto-opt: wrote a reproducer of the failing pass '{failing.name}' to {path}", file=sys.stderr)

    def print_module(self, module: ModuleOp) -> str:
        s = StringIO()
        generic = self.args.print_op_generic or self.args.mlir_print_op_generic
        Printer(stream=s, print_generic_format=generic, print_debuginfo=self.args.print_debuginfo).print_op(module)
        s.write("\n")
        return s.getvalue()

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
        return tool.run()
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
    except BrokenPipeError:
        return 0
    except Exception as e:
        print(f"pto-opt: internal error: {type(e).__name__}: {e} (a bug in pto-ir)", file=sys.stderr)
        return EXIT_INTERNAL


if __name__ == "__main__":
    sys.exit(main())
