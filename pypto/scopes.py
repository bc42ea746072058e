"""`pypto.options(...)`: PyPTO's option scope, a decorator or a `with` block. PyPTO's own
tests decorate the function that calls a kernel with it (`@pypto.options(pass_options=
{...})`); a kernel body may open one around some of its ops.

Outside a kernel, the scope's pass and runtime options are the defaults of every jit
kernel called in it (the kernel's decorator wins, name by name; an inner scope wins over
an outer one). Inside a kernel body, its `vec_tile_shapes` and `cube_tile_shapes` set the
hints of the ops in the block, restored at its end, and its pass options are the
kernel's (the merge counts are per kernel here). Its other groups are accepted and said
not to be modelled once."""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable
from typing import Any

from pto.frontend import builder as b
from pto.pypto import hints
from pto.pypto.errors import not_modelled, refuse
from pto.pypto.hints import MODELLED_OPTIONS as MODELLED
from pto.pypto.option_names import NAMES
from pto.pypto.tensor import _traces

_SCOPES: list[Options] = []
_IGNORED = ("codegen_options", "host_options", "verify_options", "operation_options", "debug_options")


class Options:
    """One scope's options, checked where they are written."""

    def __init__(self, **groups: Any):
        self.groups = {k: v for k, v in groups.items() if v is not None and k != "name"}
        notes: set[str] = set()  # (said once per scope written; Python's registry keeps one per line)
        for group in ("pass_options", "runtime_options"):
            opts = self.groups.get(group, {})
            if not isinstance(opts, dict):
                refuse(f"pypto.options' {group} must be a dict, got {opts!r}")
            # (PyPTO 0.2.0's scope takes any name, unlike jit's: one it does not know has no effect)
            for name in opts:
                if name not in NAMES[group]:
                    not_modelled(f"pypto.options' {group.removesuffix('_options')} option {name!r}", notes)
        hints.check_pass_options({k: v for k, v in self.groups.get("pass_options", {}).items() if k in MODELLED})
        for group in ("conv_tile_shapes", "matrix_size", *_IGNORED):
            if group in self.groups:
                not_modelled(f"pypto.options' {group}", notes)
        self.saved: list[b.Pinned] = []

    def __enter__(self) -> Options:
        _SCOPES.append(self)
        if _traces:  # in a kernel body: the hints of the block's ops
            self.saved.append(dataclasses.replace(b._pinned[-1]))
            if (vec := self.groups.get("vec_tile_shapes")) is not None:
                hints.set_vec_tile_shapes(*vec)
            if (cube := self.groups.get("cube_tile_shapes")) is not None:
                if not isinstance(cube, list | tuple) or len(cube) not in (3, 4):
                    refuse(f"pypto.options' cube_tile_shapes is [m, k, n] or [m, k, n, enable_split_k], got {cube!r}")
                hints.set_cube_tile_shapes(*cube)
            if (opts := self.groups.get("pass_options")) is not None:
                hints.set_pass_options(**opts)
        return self

    def __exit__(self, *exc: object) -> None:
        _SCOPES.pop()
        if self.saved:
            b._pinned[-1] = self.saved.pop()

    def __call__(self, fn: Callable) -> Callable:
        if not callable(fn):
            refuse(f"pypto.options decorates a function, got {fn!r}")

        @functools.wraps(fn)
        def scoped(*args: Any, **kwargs: Any) -> Any:
            with self:
                return fn(*args, **kwargs)

        return scoped


def options(
    name: str = "",
    codegen_options: dict | None = None,
    host_options: dict | None = None,
    pass_options: dict | None = None,
    runtime_options: dict | None = None,
    verify_options: dict | None = None,
    operation_options: dict | None = None,
    debug_options: dict | None = None,
    vec_tile_shapes: list | None = None,
    cube_tile_shapes: list | None = None,
    conv_tile_shapes: list | None = None,
    matrix_size: list | None = None,
) -> Options:
    """PyPTO's `pypto.options(...)` (module docstring)."""
    return Options(**{k: v for k, v in locals().items()})


def defaults(group: str) -> dict:
    """The `group` options ("pass_options" or "runtime_options") of the scopes open
    outside any kernel, the innermost winning."""
    merged: dict = {}
    for scope in _SCOPES:
        merged.update({k: v for k, v in scope.groups.get(group, {}).items() if k in NAMES[group]})
    return merged
