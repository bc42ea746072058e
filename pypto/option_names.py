"""PyPTO 0.2.0's option names (option_names.toml, one list per `pypto.frontend.jit`
argument): a name PyPTO does not have is refused at the user's line, as PyPTO fails on
it, naming the closest real one. (A real name that is not modelled is accepted, with one
NotModelledWarning: pypto/hints.py, pypto/frontend.py.)"""

from __future__ import annotations

import difflib
import tomllib
from pathlib import Path

from pto.pypto.errors import refuse

with open(Path(__file__).with_name("option_names.toml"), "rb") as _f:
    NAMES: dict[str, list[str]] = tomllib.load(_f)


def check_names(group: str, options: object) -> None:
    """`options`, given as jit's `group` ("runtime_options", say), is a dict of PyPTO's names."""
    if not isinstance(options, dict):
        refuse(f"jit's {group} must be a dict, got {options!r}")
    known = NAMES[group]
    for name in options:
        if name not in known:
            close = difflib.get_close_matches(str(name), known, n=1)
            hint = f"did you mean '{close[0]}'?" if close else f"PyPTO 0.2.0's: {', '.join(known)}"
            refuse(f"unknown {group.removesuffix('_options')} option {name!r} ({hint})")
