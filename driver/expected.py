"""`// expected-error@+1 {{...}}` annotations, as mlir-opt's `--verify-diagnostics`
reads them, and the check of the diagnostics a run produced against them."""

from __future__ import annotations

import re
from dataclasses import dataclass

from pto.diagnostics import Diagnostic, Note, line_col
from pto.driver.errors import UsageError

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
            out.append(Expected(sev, _target_line(lines, i, where, last_code_line, sev), msg, i))
        if line.split("//")[0].strip():
            last_code_line = i
    return out


def _target_line(lines: list[str], i: int, where: str | None, last_code_line: int, sev: str) -> int:
    """The line an annotation on line `i` names: its own, `@above`, `@below`, `@+N`, `@-N`."""
    if where is None:
        return i
    if where == "@above":
        return last_code_line
    if where == "@below":
        code = (j for j in range(i + 1, len(lines) + 1) if lines[j - 1].strip() and not _EXPECT.search(lines[j - 1]))
        return next(code, i + 1)
    if re.fullmatch(r"@[+-]\d+", where):
        return i + int(where[1:])
    raise UsageError(f"line {i}: unsupported expected-{sev} location '{where}'")


def check_expected(expected: list[Expected], got: list[Diagnostic], name: str) -> list[str]:
    problems: list[str] = []
    flat: list[tuple[str, int, str, Diagnostic | Note]] = []
    for d in got:
        flat.append((d.severity, (line_col(d.location) or ("", 0, 0))[1], d.message, d))
        for n in d.notes:
            flat.append(("note", (line_col(n.location) or ("", 0, 0))[1], n.message, n))
    for sev, line, msg, diag in flat:
        match = next(
            (e for e in expected if not e.seen and e.severity == sev and e.line == line and e.text in msg), None
        )
        if match is None:
            where = line_col(diag.location)
            prefix = f"{where[0]}:{where[1]}:{where[2]}" if where else name
            problems.append(f"{prefix}: error: unexpected {sev}: {msg}")
        else:
            match.seen = True
    for e in expected:
        if not e.seen:
            problems.append(f'{name}:{e.at}: error: expected {e.severity} "{e.text}" was not produced')
    return problems
