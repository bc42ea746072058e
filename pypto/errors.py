"""How `pto.pypto` says no: a BuildError at the line of the user's kernel."""

from __future__ import annotations

import warnings
from typing import NoReturn

from pto.frontend.checks import BuildError, caller
from pto.tracebacks import api_boundary


class NotModelledWarning(UserWarning):
    """A PyPTO setting that is accepted but has no effect on this project's model."""


class LoweringWarning(UserWarning):
    """What a pass warned of when it lowered the kernel (a hint it could not follow as
    given, say): the text of `pto.compile(...).warnings`."""


def refuse(message: str, at: tuple[str, int] | None = None) -> NoReturn:
    """Stop the kernel with `message` at `at`, or else at the user's line that got here."""
    raise BuildError(f"pto.pypto: {message}", at or caller())


def not_modelled(what: str, seen: set[str]) -> None:
    """Say once per kernel that `what` is accepted and ignored."""
    if what not in seen:
        seen.add(what)
        _warn(f"pto.pypto: {what} is accepted but not modelled", NotModelledWarning)


# Python's registries of warnings shown, one per file as Python keeps one per module:
# under the default filter a warning is shown once per text and line, as `warnings.warn`'s
# are (a kernel called at several token counts, each compiled, warns once).
_SHOWN: dict[str, dict] = {}


def _warn(message: str, category: type[Warning], where: tuple[str, int] | None = None) -> None:
    where = where or caller()
    file, line = where if where else ("<pypto>", 0)
    warnings.warn_explicit(message, category, file, line, registry=_SHOWN.setdefault(file, {}))


def lowering_warning(message: str, where: tuple[str, int] | None = None) -> None:
    """A pass's (or the trace's) warning, at `where` or else the user's line that made it."""
    _warn(f"pto.pypto: {message}", LoweringWarning, where)


def unsupported_name(module: str, name: str, others: tuple[str, ...]):
    """A module's `__getattr__`: PyPTO 0.2.0's other public names of `module` are refused
    where they are used (called, or an attribute of them read), at the user's line."""
    if name not in others:
        raise AttributeError(f"module '{module}' has no attribute '{name}'")
    return _Unsupported(f"{module.replace('pto.pypto', 'pypto')}.{name}")


class _Unsupported:
    def __init__(self, name: str):
        self._name = name

    def _refuse(self):
        refuse(f"{self._name} (a PyPTO 0.2.0 name) is not modelled here: docs/pypto.md lists what is")

    @api_boundary
    def __call__(self, *args, **kwargs):
        self._refuse()

    @api_boundary
    def __getattr__(self, attr: str):
        if attr.startswith("__"):
            raise AttributeError(attr)
        self._refuse()
