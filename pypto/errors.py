"""How `pto.pypto` says no: a BuildError at the line of the user's kernel."""

from __future__ import annotations

import warnings
from typing import NoReturn

from pto.frontend.checks import BuildError, caller


class NotModelledWarning(UserWarning):
    """A PyPTO setting that is accepted but has no effect on this project's model."""


def refuse(message: str) -> NoReturn:
    raise BuildError(f"pto.pypto: {message}", caller())


def not_modelled(what: str, seen: set[str]) -> None:
    """Say once per kernel that `what` is accepted and ignored."""
    if what not in seen:
        seen.add(what)
        where = caller()
        warnings.warn_explicit(
            f"pto.pypto: {what} is accepted but not modelled",
            NotModelledWarning,
            where[0] if where else "<pypto>",
            where[1] if where else 0,
        )
