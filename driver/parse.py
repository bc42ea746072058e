"""Reading IR: source text, and a parser that records where each op came from.

MLIR gives every op a `file:line:col` location; xDSL's parser leaves them unknown.
`LocatingParser` fills them in, so that verifier and pass diagnostics point at the
source, and reports two inputs that would otherwise surface as Python exceptions
(a number too large for its attribute, nesting too deep) at the source as well.
"""

from __future__ import annotations

import re

from xdsl.context import Context
from xdsl.dialects.builtin import FileLineColLoc, IntAttr, ModuleOp, StringAttr, UnknownLoc
from xdsl.ir import Operation
from xdsl.parser import Parser
from xdsl.utils.exceptions import ParseError, VerifyException
from xdsl.utils.lexer import Input, Position, Span

from pto.diagnostics import Diagnostic
from pto.driver.errors import UsageError

# A string literal as MLIR's lexer accepts it: no line break, escapes \" \n \t \\ \XX.
_STRING = re.compile(r'"(?:[^"\\\n\v\f]|\\(?:["nt\\]|[0-9A-Fa-f]{2}))*"')
_COMMENT_OR_STRING = re.compile(r'//[^\n]*|"')


def check_strings(text: str, name: str) -> None:
    """A ParseError at the first string literal that is not closed on its line or
    holds a bad escape.

    xDSL 0.74's lexer matches a string literal with a `+` nested in a `*`, which
    backtracks through every split of the line when the literal does not match (~2^N
    steps for N characters: 28 took 15 s). This scan is linear, and it runs first."""
    pos = 0
    while (m := _COMMENT_OR_STRING.search(text, pos)) is not None:
        pos = m.end()
        if m.group(0) != '"':
            continue
        if (s := _STRING.match(text, m.start())) is not None:
            pos = s.end()
            continue
        end = text.find("\n", m.start())
        end = len(text) if end < 0 else end
        closed = '"' in text[m.end() : end]
        why = "bad escape sequence in string literal" if closed else "unterminated string literal"
        raise ParseError(Span(m.start(), end, Input(text, name)), why)


class LocatingParser(Parser):
    """Records each op's source position as a `FileLineColLoc`, as MLIR does."""

    def __init__(self, ctx: Context, input: str | bytes, name: str = "<unknown>") -> None:
        text = input.decode("utf-8") if isinstance(input, bytes) else input
        check_strings(text, name)
        super().__init__(ctx, text, name)
        self._last_number: tuple[Position, Position] | None = None

    def parse_optional_integer(self, allow_boolean: bool = True, allow_negative: bool = True) -> int | None:
        start = self.pos
        value = super().parse_optional_integer(allow_boolean, allow_negative)
        if value is not None:
            self._last_number = (start, self._last_end())
        return value

    def parse_optional_float(self, *, allow_negative: bool = True) -> float | None:
        start = self.pos
        value = super().parse_optional_float(allow_negative=allow_negative)
        if value is not None:
            self._last_number = (start, self._last_end())
        return value

    def _last_end(self) -> Position:
        # The end of the token just consumed: the source up to the next token, less spacing.
        text = self.lexer.input.content
        end = self.pos
        while end > 0 and text[end - 1].isspace():
            end -= 1
        return end

    def parse_module(self, allow_implicit_module: bool = True) -> ModuleOp:
        try:
            return super().parse_module(allow_implicit_module)
        except RecursionError:
            # xDSL's parser recurses per nested bracket; thousands of them exhaust the stack.
            self.raise_error("nesting too deep to parse", self.pos, self.pos + 1)

    def parse_operation(self) -> Operation:
        start = self.pos
        try:
            op = super().parse_operation()
        except ParseError:
            raise
        except (OverflowError, ValueError, VerifyException) as e:
            self._blame_input(e, start)
        if isinstance(op.location, UnknownLoc):
            loc = Span(start, start + 1, self.lexer.input).get_location()
            op.location = FileLineColLoc(StringAttr(loc.file), IntAttr(loc.line), IntAttr(loc.col))
        return op

    def _blame_input(self, e: Exception, start: Position):
        """An attribute constructor refused a value while the op was parsed: the input's
        error, at the number if one too large for its type was just read, else the op."""
        msg = str(e.args[0]) if e.args else str(e)
        if self._last_number is not None and (isinstance(e, OverflowError) or "out of range" in msg):
            if isinstance(e, OverflowError):
                lit = self.lexer.input.content[self._last_number[0] : self._last_number[1]]
                msg = f"floating point value {lit} is too large for its type"
            self.raise_error(msg[0].lower() + msg[1:], *self._last_number)
        self.raise_error(msg[0].lower() + msg[1:], start, self._last_end())

    def _get_op_by_name(self, name: str) -> type[Operation]:
        # Deliberately overrides xDSL's private lookup, which has no public hook: mlir-opt
        # points an unregistered op's error at its name, xDSL at the token after it.
        try:
            return super()._get_op_by_name(name)
        except ParseError:
            end = self.pos
            start = self.lexer.input.content.rfind(name, 0, end)
            self.raise_error(f"operation '{name}' is not registered", start, start + len(name))


def read_source(path: str) -> str:
    """A source file's text; an unreadable or non-UTF-8 file is a UsageError, and so is a
    Python file: a kernel in Python (`pto.pypto`, `pto`) runs with `python`, and read as
    MLIR its first line would be an error about an unregistered operation 'import'."""
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except OSError as e:
        raise UsageError(f"cannot read '{path}': {e.strerror}") from None
    except UnicodeDecodeError:
        raise UsageError(f"cannot read '{path}': not UTF-8 text") from None
    if path.endswith(".py"):
        raise UsageError(f"'{path}' is a Python file, not MLIR: run a Python kernel with `python {path}`")
    return text


def parse_source(ctx: Context, text: str, name: str, implicit_module: bool = True) -> ModuleOp:
    """The module in `text`; like mlir-opt, a text of only comments is an empty module
    (xDSL rejects it). Raises ParseError."""
    if not re.sub(r"//[^\n]*", "", text).strip():
        return ModuleOp([])
    return LocatingParser(ctx, text, name).parse_module(implicit_module)


def parse_error_diag(e: ParseError) -> Diagnostic:
    loc = e.span.get_location()
    return Diagnostic("error", FileLineColLoc(StringAttr(loc.file), IntAttr(loc.line), IntAttr(loc.col)), e.msg)
