"""The hints a PyPTO kernel sets for the ops that follow (`set_semantic_label`,
`set_vec_tile_shapes`, `set_cube_tile_shapes`) and its pass options, checked where
they are written."""

from __future__ import annotations

from collections.abc import Sequence

from pto.frontend import builder as b
from pto.frontend.checks import _is_int, caller
from pto.pypto.errors import not_modelled, refuse
from pto.pypto.option_names import check_names
from pto.pypto.sym import DynamicDim
from pto.pypto.tensor import Pinned, Trace, _traces, current
from pto.pypto.types import StatusType


def _pinned(what: str) -> Pinned:
    current(what)
    p = b._pinned[-1]
    assert isinstance(p, Pinned)  # (a jit kernel's trace pushes pto.pypto's)
    return p


def set_semantic_label(label: str) -> None:
    if not isinstance(label, str) or not label:
        refuse(f"set_semantic_label takes a non-empty string, got {label!r}")
    _pinned("pypto.set_semantic_label").label = label


def set_vec_tile_shapes(*shapes: int) -> None:
    if not shapes or not all(_is_int(s) and s > 0 for s in shapes):
        refuse(f"set_vec_tile_shapes takes positive integers, got {shapes!r}")
    p = _pinned("pypto.set_vec_tile_shapes")
    p.vec_tile, p.vec_tile_at = tuple(int(s) for s in shapes), caller()


def get_vec_tile_shapes() -> list[int]:
    """The vector tile in force (PyPTO's model helpers assert one is set), or []."""
    tile = _pinned("pypto.get_vec_tile_shapes").vec_tile
    return list(tile) if tile is not None else []


def set_cube_tile_shapes(m: Sequence[int], k: Sequence[int], n: Sequence[int], enable_split_k: bool = False) -> None:
    p = _pinned("pypto.set_cube_tile_shapes")
    p.cube_tile, p.cube_tile_at = b.cube_tile(m, k, n, bool(enable_split_k)), caller()


def get_cube_tile_shapes() -> tuple[list[int], list[int], list[int], bool]:
    """The cube tiles in force as PyPTO returns them: (m, k, n, enable_split_k), K with its
    three sizes [kL0, kAL1, kBL1]; zeros when none is set."""
    tile = _pinned("pypto.get_cube_tile_shapes").cube_tile
    if tile is None:
        return [0, 0], [0, 0, 0], [0, 0], False
    axes = tile.axes
    k = list(axes["k"]) if len(axes["k"]) == 3 else [axes["k"][0], axes["k"][1], axes["k"][1]]
    return list(axes["m"]), k, list(axes["n"]), tile.is_split_k


# PyPTO's settings of its host compiler, code generator, debugging and pass verification:
# they change how PyPTO builds and checks a kernel, not what the device computes or how
# long it takes.
UNMODELLED_SETTERS = ("set_codegen_options", "set_host_options", "set_debug_options", "set_verify_options")


_SEEN_OUTSIDE: set[str] = set()  # (called before any kernel, as a test's setup does)


def _unmodelled_setter(name: str):
    group = name.removeprefix("set_")

    def setter(**options) -> None:
        check_names(group, options)
        seen = _traces[-1].notes if _traces else _SEEN_OUTSIDE
        for key, val in options.items():
            if val is not None:
                not_modelled(f"{group.replace('_', ' ').removesuffix('s')} {key}", seen)

    setter.__name__ = setter.__qualname__ = name
    return setter


set_codegen_options, set_host_options, set_debug_options, set_verify_options = map(
    _unmodelled_setter, UNMODELLED_SETTERS
)


MODELLED_OPTIONS = ("cube_l1_reuse_setting", "vec_nbuffer_setting", "cube_nbuffer_setting")


def check_pass_options(options: dict) -> None:
    """PyPTO's pass option names, and the `*_setting` maps' {group id: count} (checked
    where they are written: jit's decorator, set_pass_options)."""
    check_names("pass_options", options)
    for key, val in options.items():
        if key in MODELLED_OPTIONS:
            if not isinstance(val, dict):
                refuse(f"pass option '{key}' must be a dict {{axis: count}}, got {val!r}")
            for axis, count in val.items():
                if not _is_int(axis):  # (a semantic label is no key: PyPTO 0.2.0 refuses it too)
                    refuse(f"pass option '{key}': key {axis!r} is not an integer group id")
                if not _is_int(count) or not 1 <= count < 2**63:
                    refuse(f"pass option '{key}': the count for axis {axis} must be a positive integer, got {count!r}")


def pass_options(tr: Trace, options: dict) -> None:
    """Record PyPTO pass options: the `*_setting` maps are modelled, the rest reported."""
    check_pass_options(options)
    for key, val in options.items():
        if key in MODELLED_OPTIONS:
            tr.options[key] = {**tr.options.get(key, {}), **val}
        elif val is not None:
            not_modelled(f"pass option {key}", tr.notes)


def set_pass_options(**options) -> None:
    tr = current("pypto.set_pass_options")
    pass_options(tr, options)
    tr.option_at |= {key: caller() for key in options if key in MODELLED_OPTIONS}


def status_dim(d: object) -> bool:
    """Is this annotation dimension the token axis?"""
    return isinstance(d, DynamicDim) or (isinstance(d, StatusType) and d is not StatusType.STATIC)
