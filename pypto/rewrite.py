"""A jit kernel's source file, read where its hints are spelled and edited there.

The trace records the line of each call that sets a hint (`pto.pypto.tensor.Site`);
here that line's call is found in the file's syntax tree, its arguments are read as
literals, and an `Edit` replaces them (or inserts a new call before a statement). A
hint the source computes (a name, `*tiles`, `32 if p >= 32 else 16`) is not rewritten:
`Unwritable` says why, in one line, and the caller suggests the change instead.
"""

from __future__ import annotations

import ast
import io
import os
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass

Pos = tuple[int, int]  # (line from 1, column in characters)


class Unwritable(Exception):
    """A change the source cannot take mechanically; the message is one line."""


@dataclass(frozen=True)
class Edit:
    """Replace the text of `path` from `start` to `end` by `text` (start == end inserts)."""

    path: str
    start: Pos
    end: Pos
    text: str


def _name(node: ast.expr) -> str | None:
    """The called name of `pypto.name(...)`, `x.name(...)` or `name(...)`."""
    if isinstance(node, ast.Attribute):
        return node.attr
    return node.id if isinstance(node, ast.Name) else None


class Source:
    def __init__(self, path: str):
        self.path = path
        try:
            with open(path, encoding="utf-8") as f:
                self.text = f.read()
            self.tree = ast.parse(self.text, path)
        except (OSError, SyntaxError, ValueError) as e:
            raise Unwritable(f"the kernel's source '{path}' cannot be read ({type(e).__name__})") from None
        self.lines = _lines(self.text)

    def where(self, line: int) -> str:
        return f"{self.path}:{line}"

    def segment(self, node: ast.AST) -> str:
        return ast.get_source_segment(self.text, node) or ""

    def span(self, node: ast.AST) -> tuple[Pos, Pos]:
        # (ast's columns count UTF-8 bytes; an Edit's count characters)
        def pos(line: int, col: int) -> Pos:
            return line, len(self.lines[line - 1].encode()[:col].decode(errors="ignore"))

        return pos(node.lineno, node.col_offset), pos(node.end_lineno, node.end_col_offset)  # type: ignore[attr-defined]

    def replace(self, node: ast.AST, text: str) -> Edit:
        start, end = self.span(node)
        return Edit(self.path, start, end, text)

    # -- finding what the trace recorded -------------------------------------------

    def call_at(self, line: int, name: str) -> ast.Call:
        """The one call of `name` whose lines take in `line`."""
        calls = [
            n
            for n in ast.walk(self.tree)
            if isinstance(n, ast.Call) and _name(n.func) == name and n.lineno <= line <= (n.end_lineno or n.lineno)
        ]
        if len(calls) != 1:
            raise Unwritable(f"{self.where(line)}: {len(calls)} calls of {name} on this line, not one")
        return calls[0]

    def literal(self, node: ast.expr, what: str):
        """The value of a literal argument; Unwritable if the source computes it."""
        try:
            return ast.literal_eval(node)
        except (ValueError, TypeError, SyntaxError):
            raise Unwritable(
                f"{self.where(node.lineno)}: {what} is computed (`{self.segment(node)}`), not a literal"
            ) from None

    def statement_at(self, line: int) -> ast.stmt:
        """The innermost statement whose lines take in `line`, alone at the start of its line."""
        stmts = [
            n for n in ast.walk(self.tree) if isinstance(n, ast.stmt) and n.lineno <= line <= (n.end_lineno or n.lineno)
        ]
        if not stmts:
            raise Unwritable(f"{self.where(line)}: no statement on this line")
        st = max(stmts, key=lambda n: (n.lineno, -(n.end_lineno or n.lineno)))
        if self.lines[st.lineno - 1][: self.span(st)[0][1]].strip():
            raise Unwritable(f"{self.where(st.lineno)}: the statement shares its line with another")
        return st

    def insert_before(self, line: int, text: str) -> Edit:
        """`text` as a statement of its own before the statement at `line`, indented as it is."""
        st = self.statement_at(line)
        indent = self.lines[st.lineno - 1][: self.span(st)[0][1]]
        return Edit(self.path, (st.lineno, 0), (st.lineno, 0), f"{indent}{text}\n")

    def insert_after(self, line: int, text: str) -> Edit:
        """`text` as a statement of its own after the statement at `line`, indented as it is."""
        st = self.statement_at(line)
        indent = self.lines[st.lineno - 1][: self.span(st)[0][1]]
        after = (st.end_lineno or st.lineno) + 1
        return Edit(self.path, (after, 0), (after, 0), f"{indent}{text}\n")

    def jit_decorator(self, name: str, first_line: int) -> ast.expr:
        """The `@...jit` decorator of the function `name` whose code starts at `first_line`
        (its first decorator's line)."""
        defs = [
            n
            for n in ast.walk(self.tree)
            if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)
            and n.name == name
            and (n.decorator_list[0].lineno if n.decorator_list else n.lineno) == first_line
        ]
        decs = [d for fd in defs for d in fd.decorator_list if _name(d.func if isinstance(d, ast.Call) else d) == "jit"]
        if len(decs) != 1:
            raise Unwritable(f"{self.where(first_line)}: {name} has no @pypto.frontend.jit decorator to set options in")
        return decs[0]

    def binding(self, name: str, line: int) -> ast.expr:
        """The expression of the one assignment that binds `name` in the file (as an
        element of a tuple assignment too); none other may bind it (a parameter, an import)."""
        binds = sum(
            (isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store) and n.id == name)
            or (isinstance(n, ast.arg) and n.arg == name)
            or (isinstance(n, ast.alias) and (n.asname or n.name) == name)
            for n in ast.walk(self.tree)
        )
        values = [
            v
            for n in ast.walk(self.tree)
            if isinstance(n, ast.Assign)
            for t in n.targets
            for v in _bound(t, n.value, name)
        ]
        if binds != 1 or len(values) != 1 or values[0] is None:
            raise Unwritable(f"{self.where(line)}: {name} is not bound once, by an assignment, in this file")
        return values[0]

    # -- edits ---------------------------------------------------------------------

    def add_argument(self, call: ast.Call, text: str) -> Edit:
        """`text` as the call's last argument."""
        args = [*call.args, *call.keywords]
        if args:
            end = max(self.span(a)[1] for a in args)
            return Edit(self.path, end, end, f", {text}")
        line, col = self.span(call)[1]
        return Edit(self.path, (line, col - 1), (line, col - 1), text)  # before its ')'

    def dict_keyword(self, dec: ast.expr, keyword: str, changes: dict[str, str | None]) -> Edit:
        """The decorator `dec` with its `keyword=` dict literal changed: each key of
        `changes` set to its text (None: removed), the other entries kept as written."""
        if not isinstance(dec, ast.Call):  # a bare @pypto.frontend.jit
            return self.replace(dec, f"{self.segment(dec)}({keyword}={dict_text(changes)})")
        kw = next((k for k in dec.keywords if k.arg == keyword), None)
        if kw is None:
            return self.add_argument(dec, f"{keyword}={dict_text(changes)}")
        d = kw.value
        keys = [k.value for k in getattr(d, "keys", []) if isinstance(k, ast.Constant) and isinstance(k.value, str)]
        if not isinstance(d, ast.Dict) or len(keys) != len(d.keys):  # (a ** entry's key is None)
            raise Unwritable(
                f"{self.where(d.lineno)}: {keyword}= is computed (`{self.segment(d)}`), not a dict literal"
            )
        written: dict[str, str | None] = {k: self.segment(v) for k, v in zip(keys, d.values, strict=True)}
        return self.replace(d, dict_text(written | changes))  # (written keys keep their place)

    def preview(self, edits: list[Edit]) -> tuple[list[str], list[str]]:
        """The lines the edits change, as they are and as they would be (a new line alone: none as it is)."""
        if len(edits) == 1 and edits[0].start == edits[0].end and edits[0].start[1] == 0:
            return [], edits[0].text.splitlines()
        first = min(e.start[0] for e in edits)
        last = min(max(e.end[0] if e.end[1] else e.end[0] - 1 for e in edits), len(self.lines))
        old = self.lines[first - 1 : last]
        new = apply_edits("".join(old), [_shift(e, first - 1) for e in edits])
        return [x.rstrip("\r\n") for x in old], new.splitlines()


def _lines(text: str) -> list[str]:
    """The lines as Python (and ast's line numbers) count them: a form feed ends none."""
    return io.StringIO(text, newline="").readlines()


def dict_text(entries: dict[str, str | None]) -> str:
    """A dict literal of the entries that are not None (their values as written)."""
    return "{" + ", ".join(f'"{k}": {v}' for k, v in entries.items() if v is not None) + "}"


def _bound(target: ast.expr, value: ast.expr | None, name: str) -> list[ast.expr | None]:
    """What `target = value` binds to `name` (None: a part the source does not spell)."""
    if isinstance(target, ast.Name):
        return [value] if target.id == name else []
    if isinstance(target, ast.Tuple | ast.List):
        values = value.elts if isinstance(value, ast.Tuple | ast.List) else [None] * len(target.elts)
        if len(values) != len(target.elts):
            values = [None] * len(target.elts)
        return [b for t, v in zip(target.elts, values, strict=True) for b in _bound(t, v, name)]
    return []


def _shift(e: Edit, lines: int) -> Edit:
    return Edit(e.path, (e.start[0] - lines, e.start[1]), (e.end[0] - lines, e.end[1]), e.text)


def apply_edits(text: str, edits: list[Edit]) -> str:
    """`text` with `edits` made (the same edit twice counts once; overlapping ones are refused)."""
    starts = [0]
    for line in _lines(text):
        starts.append(starts[-1] + len(line))
    offset = lambda p: starts[p[0] - 1] + p[1]  # noqa: E731
    spans = sorted({(offset(e.start), offset(e.end), e.text) for e in edits}, reverse=True)
    for (a, _, _), (_, earlier_end, _) in zip(spans, spans[1:], strict=False):
        if earlier_end > a:
            raise Unwritable("two changes overlap in the source")
    for a, b, t in spans:  # last first: the offsets of the others stay right
        text = text[:a] + t + text[b:]
    return text


def write_copy(src: Source, edits: list[Edit], path_out: str, check: Callable[[str], None]) -> None:
    """A copy of `src`'s file with `edits` made, at `path_out` (never the file itself),
    once `check` passes on it (written next to `path_out` first; `check` raises Unwritable)."""
    if os.path.exists(path_out) and os.path.samefile(path_out, src.path):
        raise Unwritable(f"'{path_out}' is the kernel's own file: give the path of a copy")
    text = apply_edits(src.text, edits)
    try:
        fd, tmp = tempfile.mkstemp(suffix=".py", dir=os.path.dirname(os.path.abspath(path_out)))
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        shutil.copymode(src.path, tmp)  # (mkstemp's file is private)
    except OSError as e:
        raise Unwritable(f"cannot write '{path_out}': {e.strerror or e}") from None
    try:
        check(tmp)
        os.replace(tmp, path_out)
    except OSError as e:
        raise Unwritable(f"cannot write '{path_out}': {e.strerror or e}") from None
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)
