"""The PyPTO-style loop form, traced into the same `pto`-level IR as the builder.

    def kernel(x, gamma, w, out):
        for idx, p in loop_unroll(0, x.shape[0], 1, unroll_list=[128, 64, 1]):
            xt = view(x, [p, 4096], [idx, 0])
            set_semantic_label("rmsnorm")
            n = rms_norm(xt, gamma)
            ...
            assemble(o, [idx, 0], out)

    module = trace(kernel, x=arg([None, 4096], "bf16"), ..., out=arg([None, 1024], "bf16"))

The body runs once, symbolically: `idx` and `p` are `Symbol`s, a token-tile `view` is
the whole tensor (the pto level works on the whole token axis), `assemble` into an
argument makes that argument a result. The unroll list and the `set_*` calls become
the pinned hints: `pto.unroll`, `pto.label`, `pto.vec_tile` (on the ops of matching
rank that follow), `pto.cube_tile` (on the matmuls that follow), `pto.cache`,
`pto.options`. The loop itself becomes the token loop at the tile level.

Bad arguments raise `BuildError` at the user's line, as the builder's do.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field

from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import BlockArgument

from pto.frontend.builder import Kernel, Pinned, Tensor, _pinned, _tensor, cube_tile
from pto.frontend.checks import (
    BuildError,
    Symbol,
    _check_bool,
    _check_label,
    _check_opt_str,
    _check_options,
    _check_shape,
    _check_sizes,
    _fail,
    _is_int,
    caller,
    element_type,
)
from pto.frontend.views import window
from pto.tracebacks import api_boundary


@dataclass(frozen=True)
class ArgSpec:
    shape: tuple[int | Symbol | None, ...]
    dtype: str
    cache: str | None = None


def arg(shape: Sequence[int | None], dtype: str, cache: str | None = None) -> ArgSpec:
    """The type of one parameter of a traced kernel (None = the token axis)."""
    element_type(dtype)  # checked here, where the user wrote it, not at trace time
    return ArgSpec(tuple(_check_shape("pto.arg shape", shape)), dtype, _check_opt_str("cache", cache))


@dataclass
class _Trace:
    kernel: Kernel
    params: list[Tensor]
    outputs: dict[int, Tensor] = field(default_factory=dict)  # param index -> value assembled into it
    loop: tuple[Symbol, Symbol] | None = None


_traces: list[_Trace] = []


def _current(what: str) -> _Trace:
    if not _traces:
        raise BuildError(f"{what} is part of the loop form: call it inside a kernel traced by pto.trace", caller())
    return _traces[-1]


@api_boundary
def trace(
    fn: Callable[..., None],
    *,
    name: str | None = None,
    target: str | None = None,
    options: dict[str, dict[int | str, int]] | None = None,
    **params: ArgSpec,
) -> ModuleOp:
    """Trace a loop-form kernel `fn` whose parameters are typed by `params`."""
    if not callable(fn):
        _fail(f"trace: the kernel must be a function, got {type(fn).__name__}")
    for n, spec in params.items():
        if not isinstance(spec, ArgSpec):
            _fail(f"trace: parameter '{n}' must be typed with pto.arg(shape, dtype), got {spec!r}")
    names = list(inspect.signature(fn).parameters)
    if sorted(names) != sorted(params):
        raise BuildError(
            f"trace: give a type for each parameter of {fn.__name__} ({', '.join(names)}), "
            f"got {', '.join(params) or 'none'}",
            caller(),
        )
    k = Kernel(name or fn.__name__, target=target, options=options)
    tensors = [k.arg(n, params[n].shape, params[n].dtype, params[n].cache) for n in names]
    tr = _Trace(k, tensors)
    _traces.append(tr)
    _pinned.append(Pinned())
    try:
        fn(*tensors)
    finally:
        _traces.pop()
        _pinned.pop()
    if tr.loop is None:
        raise BuildError(f"{fn.__name__} has no loop_unroll over the token axis", caller())
    if not tr.outputs:
        raise BuildError(f"{fn.__name__} assembles no result into an output argument", caller())
    for i in sorted(tr.outputs, reverse=True):  # outputs are results at the pto level
        v = tensors[i].value
        assert isinstance(v, BlockArgument)  # outputs are the kernel's arguments
        if v.uses:
            raise BuildError(f"output argument '{names[i]}' is also read: outputs are written only", caller())
        k.block.erase_arg(v)
        del k.arg_attrs[i]
    k.ret(*(tr.outputs[i] for i in sorted(tr.outputs)))
    return k.module()


def loop_unroll(
    start: int,
    stop: int | None,
    step: int = 1,
    *,
    unroll_list: Sequence[int],
    name: str | None = None,
    idx_name: str | None = None,
) -> Iterator[tuple[Symbol, Symbol]]:
    """`for idx, p in loop_unroll(0, t, 1, unroll_list=[...])`: the token loop, traced once;
    `idx` is the tile's first row, `p` its height (one of the unroll factors)."""
    tr = _current("loop_unroll")
    if tr.loop is not None:
        raise BuildError("an SK-03 kernel has one token loop: loop_unroll may appear once", caller())
    _check_opt_str("loop_unroll name", name)
    _check_opt_str("loop_unroll idx_name", idx_name)
    # `is`/`_is_int` first: `!=` on a numpy array gives an array, whose truth is an error
    if not (_is_int(start) and start == 0) or stop is not None or not (_is_int(step) and step == 1):
        raise BuildError(
            f"loop_unroll must run over the whole token axis (0, x.shape[0], 1), got ({start}, {stop}, {step})",
            caller(),
        )
    tr.kernel.unroll = _check_sizes("unroll_list", unroll_list)
    tr.loop = (Symbol(idx_name or "idx"), Symbol("p"))
    yield tr.loop


def _check_indices(what: str, v: object) -> None:
    """A list of integers and loop Symbols (so that the comparisons below are plain ones)."""
    if not isinstance(v, list | tuple) or not all(_is_int(d) or isinstance(d, Symbol) for d in v):
        _fail(f"{what} must be a list of integers and loop indices (idx, p), got {v!r}")


def _check_tile(tr: _Trace, x: Tensor, shape: Sequence, offsets: Sequence, what: str) -> None:
    idx, p = tr.loop if tr.loop is not None else (None, None)
    if tr.loop is None:
        raise BuildError(f"{what} belongs inside loop_unroll", caller())
    _check_indices(f"{what} shape", shape)
    _check_indices(f"{what} offsets", offsets)
    if x.shape and x.shape[0] is None:
        ok = (
            len(shape) == len(offsets) == len(x.shape)
            and shape[0] is p
            and tuple(shape[1:]) == x.shape[1:]
            and offsets[0] is idx
            and all(o == 0 for o in offsets[1:])
        )
        want = f"[p, {', '.join(map(str, x.shape[1:]))}] at [idx{', 0' * (len(x.shape) - 1)}]"
    else:
        ok = len(offsets) == len(x.shape) and tuple(shape) == x.shape and all(o == 0 for o in offsets)
        want = (
            f"the whole tensor [{', '.join(map(str, x.shape))}] at [{', '.join('0' * len(x.shape))}] "
            "or a static window of it"
        )
    if not ok:
        raise BuildError(f"{what} of {list(shape)} at {list(offsets)} is not supported: SK-03 takes {want}", caller())


def view(x: Tensor, shape: Sequence[int | Symbol], offsets: Sequence[int | Symbol]) -> Tensor:
    """A window of a weight (`pto.view`; with the builder too), or in the loop form a
    token tile `[p, ...]` at `[idx, 0, ...]` of a token-axis tensor or a whole tensor."""
    _tensor(x, "view input")
    if _weight_window(x, shape, offsets):
        return window(x, shape, offsets)
    tr = _current("view")
    _check_tile(tr, x, shape, offsets, "view")
    return x


def _weight_window(x: Tensor, shape: Sequence, offsets: Sequence) -> bool:
    """A window of a static tensor that is not the whole of it (those are `pto.view`s)."""
    if not x.shape or not all(_is_int(d) for d in x.shape):
        return False
    if not isinstance(shape, list | tuple) or not isinstance(offsets, list | tuple):
        return True  # `window` says what it takes
    symbolic = any(isinstance(v, Symbol) for v in [*shape, *offsets])  # a token tile: the loop form's rules
    return not symbolic and not (tuple(shape) == x.shape and all(o == 0 for o in offsets))


def assemble(value: Tensor, offsets: Sequence[int | Symbol], out: Tensor) -> None:
    """Write a token tile of results into the output argument `out` at `[idx, 0, ...]`."""
    tr = _current("assemble")
    _tensor(value, "assemble value")
    if value.kernel is not tr.kernel:
        _fail("assemble: the value belongs to another kernel")
    if out not in tr.params:
        raise BuildError("assemble writes into an argument of the traced kernel", caller())
    _check_tile(tr, out, [tr.loop[1] if tr.loop else None, *out.shape[1:]], offsets, "assemble")
    if value.shape != out.shape or value.dtype != out.dtype:
        raise BuildError(f"assemble: the value is {value.value.type} but the output is {out.value.type}", caller())
    i = tr.params.index(out)
    if i in tr.outputs:
        raise BuildError("each output argument is assembled once", caller())
    tr.outputs[i] = value


def set_semantic_label(label: str) -> None:
    _current("set_semantic_label")
    _check_label("set_semantic_label's label", label)
    _pinned[-1].label = label


def set_vec_tile_shapes(*shape: int) -> None:
    _current("set_vec_tile_shapes")
    _pinned[-1].vec_tile = tuple(_check_sizes("set_vec_tile_shapes' sizes", list(shape)))


def set_cube_tile_shapes(m: Sequence[int], k: Sequence[int], n: Sequence[int], enable_split_k: bool = False) -> None:
    _current("set_cube_tile_shapes")
    _pinned[-1].cube_tile = cube_tile(m, k, n, _check_bool("enable_split_k", enable_split_k))


def set_cache_policy(x: Tensor, policy: str) -> None:
    tr = _current("set_cache_policy")
    tr.kernel.set_cache(_tensor(x, "set_cache_policy's tensor").value, policy)


def set_pass_options(**options: dict[int | str, int]) -> None:
    tr = _current("set_pass_options")
    _check_options(options)
    tr.kernel.options = {**(tr.kernel.options or {}), **options}
