"""`pypto.Tensor`: a parameter annotation, and a value while a kernel is traced.

Tracing runs the kernel's Python body twice. The first run (the probe) only follows
shapes, to learn which parameters the token loop tiles; the second emits `pto` ops
through the builder (`pto.frontend.builder`). In both the loop body runs once per
unroll factor with `p` a Python int, as PyPTO does; only the first factor's run emits,
the others must trace the same computation.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING

from xdsl.ir import Operation

from pto.frontend import builder as b
from pto.frontend.checks import _is_int, caller
from pto.pypto.errors import refuse
from pto.pypto.sym import Sym, sym_min
from pto.pypto.types import CachePolicy, DataType, StatusType, TileOpFormat
from pto.tracebacks import api_boundary

if TYPE_CHECKING:
    from pto.pypto.tails import Plan

# Where the kernel's source sets a hint: (file, line), what `caller()` gives. A tuned
# kernel's suggestions (pto.pypto.tuning) point there.
Site = tuple[str, int]


@dataclass
class Pinned(b.Pinned):
    """The hints for the ops that follow, and where the tile shapes were set."""

    vec_tile_at: Site | None = None
    cube_tile_at: Site | None = None


@dataclass
class Loop:
    kind: str  # "unroll" (loop_unroll) or "loop" (pypto.loop)
    stop: Sym | int
    factors: list[int] = field(default_factory=list)  # loop_unroll's, normalised
    start: Sym | int = 0
    step: Sym | int = 1
    tile: int | None = None  # pypto.loop: the rows of its views
    index: Sym = field(default_factory=lambda: Sym("idx"))
    p: int = 1  # the factor whose body runs now (rows)
    # loop_unroll over blocks of `unit` rows (`loop_unroll(ceil(T / 16), ...)`, the body
    # taking rows [b * 16, (b + k) * 16)): factors and p are in rows, the index in blocks
    unit: int = 1
    at: Site | None = None  # the loop_unroll / loop call
    tile_at: Site | None = None  # pypto.loop: the view whose rows are the tile
    # A pypto.loop of whole tiles may be followed by a second loop over the rows left
    # (pypto/tails.py): `cover` is what the first covers ("all": a partial last tile
    # too; "whole": whole tiles only; None: not known yet), `part` the loop traced now (0,
    # 1: the second, whose range and index are then start, stop, step and index), `rest`
    # the rows of the second's tiles.
    cover: str | None = None
    part: int = 0
    rest: int | None = None


@dataclass
class Trace:
    """The state of one run of a kernel's body."""

    emit: bool  # the second run: build IR
    params: list[Tensor]
    names: list[str]
    token: set[int]  # parameters with a token axis (from the probe)
    kernel: b.Kernel | None = None
    seen_token: set[int] = field(default_factory=set)
    # each output parameter: the tile assembled into it, or its heads' tiles (`heads_first`)
    outputs: dict[int, Tensor | list[Tensor]] = field(default_factory=dict)
    loop: Loop | None = None
    iteration: int = -1  # which factor's body runs (-1: outside the loop)
    sigs: list[list[tuple]] = field(default_factory=list)  # per factor: the ops traced and their hints
    emitted: list = field(default_factory=list)  # the ops of the first factor's body, in trace order
    # Per factor, every op its body built and each (output parameter, tile) it assembled:
    # the bodies of the other factors are built too, compared with the first's, then erased.
    body_ops: list[list] = field(default_factory=list)
    assembled: list[list[tuple[int, Tensor]]] = field(default_factory=list)
    windows: list[dict] = field(default_factory=list)  # per factor: output -> windows.Windows not yet whole
    cache: dict[int, str] = field(default_factory=dict)  # per weight parameter: its pto.cache policy
    options: dict[str, dict[int | str, int]] = field(default_factory=dict)
    # Where the kernel's source sets each hint (jit's pass_options are its decorator's):
    cache_at: dict[int, Site | None] = field(default_factory=dict)
    option_at: dict[str, Site | None] = field(default_factory=dict)  # set_pass_options calls
    tiles_at: dict[Operation, tuple[Site | None, Site | None]] = field(default_factory=dict)  # vec, cube
    notes: set[str] = field(default_factory=set)
    plan: Plan | None = None  # in a pypto.loop body: the outcomes of its tail tests (pypto/tails.py)
    # rows of a tile taken one at a time (pypto/row_loops.py): while open, a build that repeats
    # one of this body's is that one
    rows_open: bool = False
    row_ops: dict[tuple, object] = field(default_factory=dict)
    same_ops: dict[tuple, tuple] = field(default_factory=dict)  # ops traced again are the first (pypto/ops.py)
    tokens: int | None = None  # the call's token count
    static: bool = False  # no parameter has a DYNAMIC axis
    specialised: bool = False  # its tiling was checked at the call's token count only (tails.samples)
    static_rows: tuple[int, str] | None = None  # in such a kernel: the token rows, and whose they are
    whole: bool = False  # a kernel with no loop, traced as one tile of all its rows (pypto/whole.py)
    looped: str | None = None  # the loops the body called: "numbers" (of known trip counts only), "token"

    def record(self, kind: str) -> None:
        if self.iteration >= 0:
            p = b._pinned[-1] if b._pinned else b.Pinned()
            tiles = p.cube_tile if kind == "matmul" else p.vec_tile
            self.sigs[self.iteration].append((kind, p.label, tiles))


_traces: list[Trace] = []


def current(what: str) -> Trace:
    if not _traces:
        refuse(f"{what} is called outside a kernel: call it in a function decorated with @pypto.frontend.jit")
    return _traces[-1]


class Tensor:
    """`pypto.Tensor([pypto.DYNAMIC, 4096], pypto.DT_BF16)` annotates a kernel parameter;
    the kernel's body sees Tensors with a shape, a dtype and Python operators."""

    @api_boundary  # (an annotation is made where the kernel is defined, outside its call)
    def __init__(
        self,
        shape=None,
        dtype: DataType | None = None,
        name: str = "",
        format=None,  # noqa: A002
        data_ptr=None,
        device=None,
        ori_shape=None,
    ):
        if shape is not None and not isinstance(shape, list | tuple):
            refuse(f"pypto.Tensor's shape must be a list, got {shape!r}")
        shape = list(shape) if shape is not None else None
        dims = [d for d in shape if d is not Ellipsis] if shape is not None else []
        if any(not isinstance(d, StatusType | Sym) and not (_is_int(d) and d > 0) for d in dims):
            refuse(f"pypto.Tensor's dimensions are positive integers, DYNAMIC or STATIC, got {list(shape)!r}")
        if shape is not None and len(shape) - len(dims) > 1:
            refuse(f"pypto.Tensor's shape has at most one `...`, got {list(shape)!r}")
        if dtype is not None and not isinstance(dtype, DataType):
            refuse(f"pypto.Tensor's dtype must be a pypto.DataType (pypto.DT_BF16, ...), got {dtype!r}")
        if format is not None and not isinstance(format, TileOpFormat):
            refuse(f"pypto.Tensor's format must be a pypto.TileOpFormat (TILEOP_ND, TILEOP_NZ), got {format!r}")
        if data_ptr is not None or device is not None or ori_shape is not None:
            refuse("pypto.Tensor's data_ptr, device and ori_shape are for device tensors, not annotations")
        self._shape: list[Sym | int | StatusType] | None = shape
        self._dtype = dtype
        self._at = caller()  # an annotation's line in the kernel's signature
        self.name = name
        # TILEOP_NZ: a weight stored in fractals; the argument is still the logical matrix
        self.nz = format is TileOpFormat.TILEOP_NZ
        self._val: b.Tensor | None = None  # the builder's value (emitting run only)
        self._tok = False  # has the token axis as dim 0
        self._param: int | None = None  # which kernel parameter it is
        self._view_of: int | None = None  # the parameter an in-place reshape views
        self._lazy: tuple | None = None  # ("const", c) of pypto.full, ("recip", (x, c)) of c / x
        self._body = -1  # which factor's loop body computed it (-1: not the loop body)
        self._kslice: Tensor | None = None  # a made cast K slice, as a split-K matmul reads it

    @classmethod
    def __class_getitem__(cls, params) -> Tensor:
        """`pypto.Tensor[[pypto.DYNAMIC, 4096], pypto.DT_BF16]`, PyPTO's subscript form of
        the annotation: a list or tuple is the shape (`...` stands for STATIC dims up to
        the argument's rank), then a DataType, a TileOpFormat, a name, or a dict of
        the constructor's keywords, in any order."""
        kw: dict = {}
        for p in params if isinstance(params, tuple) else (params,):
            if isinstance(p, dict):
                kw.update(p)
            elif isinstance(p, list | tuple):
                kw["shape"] = p
            elif isinstance(p, DataType):
                kw["dtype"] = p
            elif isinstance(p, TileOpFormat):
                kw["format"] = p
            elif isinstance(p, str):
                kw["name"] = p
            else:
                refuse(f"pypto.Tensor[...] takes a shape, a DataType, a TileOpFormat or a name, got {p!r}")
        unknown = kw.keys() - {"shape", "dtype", "name", "format", "data_ptr", "device", "ori_shape"}
        if unknown:
            refuse(f"pypto.Tensor[...]'s dict has no field {sorted(unknown)[0]!r}")
        return cls(**kw)

    @classmethod
    def traced(cls, shape: list, dtype: DataType, val: b.Tensor | None, tok: bool, lazy: tuple | None = None) -> Tensor:
        t = cls.__new__(cls)
        t._shape, t._dtype, t.name, t._val, t._tok, t._param, t._lazy = list(shape), dtype, "", val, tok, None, lazy
        t._view_of, t._body, t.nz, t._kslice = None, -1, False, None
        return t

    @property
    def shape(self) -> list:
        return list(self._shape or [])

    @property
    def dtype(self) -> DataType | None:
        return self._dtype

    @property
    def known_dtype(self) -> DataType:
        """The dtype of a tensor the kernel computes or takes (only a bare annotation has none)."""
        assert self._dtype is not None
        return self._dtype

    @property
    def built(self) -> b.Tensor:
        """The builder's value (set for every tensor of the emitting run)."""
        assert self._val is not None
        return self._val

    @property
    def dim(self) -> int:
        return len(self.shape)

    def declared(self) -> bool:
        """Made in the kernel's body without a value yet: `pypto.Tensor(shape, dtype)`, or
        `pypto.tensor(shape, dtype)` (a scratch tile) nothing was assembled into yet."""
        unwritten = self._lazy is None or self._lazy[0] == "scratch" and not self._lazy[1]
        return self._param is None and self._val is None and unwritten and (not self._tok or self._lazy is not None)

    def move(self, src: Tensor) -> None:
        """`out.move(value)`: a tensor declared in the kernel (`pypto.Tensor([rows, H],
        dtype)`, no value yet) becomes `value`, as a `@frontend.function` helper hands
        back its result. No data moves: the name now stands for the value. Of a parameter
        of a kernel with no token loop (PyPTO's tests: `d.move(add(a, b))`): all its rows."""
        current("Tensor.move")
        if self._wrote_all_rows(src):
            return None
        if self._param is not None:
            refuse(
                f"{self.name}.move(...) of a kernel parameter: write an output's token rows with "
                f"pypto.assemble(y, [i, 0], {self.name}) or {self.name}[i:i + p, :] = y in the token loop"
            )
        if not self.declared():
            refuse(
                "Tensor.move writes a tensor declared in the kernel (pypto.Tensor(shape, dtype) or "
                "pypto.tensor(shape, dtype)) before anything else writes it, once"
            )
        if not isinstance(src, Tensor) or src._shape is None:
            refuse(f"Tensor.move takes a tensor of the kernel, got {src!r}")
        if self._dtype is not None and src._dtype is not self._dtype:
            refuse(f"Tensor.move of a {src.known_dtype.name} value into a {self._dtype.name} tensor: cast it first")
        if self._shape is not None and [d for d in self._shape if d is not Ellipsis] != src.shape:
            refuse(f"Tensor.move of a {src.shape} value into a {self.shape} tensor")
        self._shape, self._dtype, self._val, self._tok = src.shape, src._dtype, src._val, src._tok
        self._lazy, self._body, self._view_of, self.nz = src._lazy, src._body, src._view_of, src.nz
        self._kslice = src._kslice

    def _wrote_all_rows(self, src: object) -> bool:
        """Of a parameter of a kernel with no token loop (pypto/whole.py), `x[:] = y` and
        `x.move(y)` write all its rows, the one tile's: written, or False if it is not one."""
        if not _whole().is_whole(self):
            return False
        _outputs().assemble(src, [0] * len(self.shape), _whole().target(self))
        return True

    def _move_all(self, src: object) -> None:
        """`x[:] = y`, PyPTO's move: a declared tensor takes its value (`move`); a value the
        kernel computed is the name of `y` from now on, whatever its shape and dtype
        (DeepSeek-V3.2's `q[:] = dequant(q, ...)` of its int32 matmul result)."""
        if self._wrote_all_rows(src):
            return None
        if self._param is not None and current("out[:] = y").loop is None:
            refuse(
                "out[:] = y on a parameter outside the token loop (a kernel with a DYNAMIC axis, or a loop_unroll, "
                "has one): write its rows in the loop, out[i:i + p, :] = y, or pypto.assemble"
            )
        if self._param is not None:
            refuse("out[:] = y on a parameter of the kernel: write its rows, out[i:i + p, :] = y, or pypto.assemble")
        if self.declared():
            return self.move(src)  # type: ignore[arg-type]
        if not isinstance(src, Tensor) or src._shape is None:
            refuse(f"x[:] = y takes a tensor of the kernel, got {src!r}")
        self.__dict__.update(src.__dict__)  # (its shape and dtype too: PyPTO's move replaces x)

    def set_cache_policy(self, policy: CachePolicy, value: bool) -> None:
        tr = current("Tensor.set_cache_policy")
        if not isinstance(policy, CachePolicy) or policy is CachePolicy.MAX_NUM:
            refuse(f"set_cache_policy takes pypto.CachePolicy.NONE_CACHEABLE, got {policy!r}")
        if self._param is None or self._param in tr.token:
            refuse("set_cache_policy applies to a weight parameter of the kernel (a tensor without a token axis)")
        # False is PyPTO's explicit "cacheable": pinned as `normal`, where no call at all
        # leaves the policy to tile-annotate-cache
        tr.cache[self._param] = policy.value if value else "normal"
        tr.cache_at[self._param] = caller()

    def __add__(self, o):
        return _ops().add(self, o)  # noqa: E704

    def __radd__(self, o):
        return _ops().add(self, o)  # noqa: E704

    def __sub__(self, o):
        return _ops().sub(self, o)  # noqa: E704

    def __rsub__(self, o):
        return _ops().rsub(self, o)  # noqa: E704

    def __mul__(self, o):
        return _ops().mul(self, o)  # noqa: E704

    def __rmul__(self, o):
        return _ops().mul(self, o)  # noqa: E704

    def __truediv__(self, o):
        return _ops().div(self, o)  # noqa: E704

    def __rtruediv__(self, o):
        return _ops().rdiv(self, o)  # noqa: E704

    def __neg__(self):
        return _ops().mul(self, -1.0)  # noqa: E704

    def __pos__(self):
        return self  # noqa: E704

    def __abs__(self):
        return _ops().abs(self)  # noqa: E704

    def __getattr__(self, name: str):
        """PyPTO's Tensor methods: those of the supported ops are the ops with the tensor
        first (`x.matmul(w, ...)` is `pypto.matmul(x, w, ...)`, `out.assemble(y, offsets)`
        is `pypto.assemble(y, offsets, out)`); the others are refused by name."""
        if name.startswith("_"):
            raise AttributeError(name)
        if name in METHODS:
            import pto.pypto as pypto

            return partial(getattr(pypto, name), self)
        if name == "assemble":
            from pto.pypto.outputs import assemble

            return lambda input, offsets: assemble(input, offsets, self)  # noqa: A006
        refuse(f"Tensor.{name} is not modelled here: docs/pypto.md lists the methods that are")

    def _operator(self, *args):
        refuse(
            "this Python operator on a tensor is not supported here: SK-03 kernels use + - * / and unary -, "
            "and pypto's functions (pypto.matmul, pypto.amax, ...)"
        )

    def __pow__(self, o):
        return _extras().pow(self, o)  # noqa: E704

    def __matmul__(self, o):
        """`a @ w`, PyPTO's spelling: `pypto.matmul(a, w, out_dtype)` with the weight's
        dtype for a float weight, int32 for an int8 one."""
        if not isinstance(o, Tensor) or o._dtype is None:
            refuse(f"`@`'s right operand must be a tensor of the kernel, got {o!r}")
        floats = (DataType.DT_FP16, DataType.DT_BF16, DataType.DT_FP32)
        if o._dtype not in (*floats, DataType.DT_INT8):
            refuse(f"`@` takes a bf16, fp16, fp32 or int8 weight, got {o._dtype.name}")
        from pto.pypto.cube import matmul

        return matmul(self, o, o._dtype if o._dtype in floats else DataType.DT_INT32)

    __rpow__ = __rmatmul__ = __mod__ = __floordiv__ = _operator

    def __lt__(self, o):
        return _select().compare("lt", self, o)  # noqa: E704

    def __le__(self, o):
        return _select().compare("le", self, o)  # noqa: E704

    def __gt__(self, o):
        return _select().compare("gt", self, o)  # noqa: E704

    def __ge__(self, o):
        return _select().compare("ge", self, o)  # noqa: E704

    def __getitem__(self, key):
        """`x[:, a:b]`: columns of a 2-D tensor, as `pypto.view(x, [rows, b - a], [0, a])`;
        `x[i:i + p, :]` (or `[..., a:b]`): rows of a token tensor, as `pypto.view(x, [p,
        ...], [i, a])`."""
        from pto.pypto import tcols
        from pto.pypto.loops import view

        key = _no_ellipsis(key, len(self.shape))
        if tcols.is_tcol(self):
            return tcols.getitem(self, key, view)
        if (dropped := _int_dims(key, self)) is not None:  # `q3[:, h, :]`: head h's [t, D] (corpus23's k203)
            one = tuple(
                slice(k % self.shape[j], k % self.shape[j] + 1) if j in dropped else k for j, k in enumerate(key)
            )
            box = self[one]
            return _ops().reshape(box, [d for j, d in enumerate(box.shape) if j not in dropped])
        at = self._window(key, "slicing")
        if at is None:
            refuse(
                f"slicing a tensor with {key!r} is not supported: columns of a 2-D tile as x[:, a:b], "
                "rows of a token tensor as x[i:i + p, :] (p a number), or pypto.view"
            )
        shape, offsets = at
        if (self._tok or _symbolic_rows(key[0], self)) and shape[0] != self.shape[0]:
            # Rows past the token count are not there: a slice takes those that are, as
            # numpy's does (PyPTO's own tests slice 128-row tiles of 129 tokens).
            valid = [sym_min(shape[0], self.shape[0] - offsets[0]), *shape[1:]]
            return view(self, shape, offsets, valid_shape=valid)
        return view(self, shape, offsets)

    def __setitem__(self, key, value):
        """`out[i:i + p, :] = y`: PyPTO's `pypto.assemble(y, [i, 0], out)`; with the ends
        left out (`out[i:, c:] = y`), the window is y's shape at those starts, as in PyPTO."""
        from pto.pypto.outputs import assemble

        whole = _whole()

        if key == slice(None) or key is Ellipsis:  # PyPTO's `x[:] = y`: x.move(y)
            return self._move_all(value)
        if (out := whole.target(self)) is not self:  # an output's whole-rows tile in a kernel with no loop
            return out.__setitem__(key, value)
        key = _no_ellipsis(key, len(self.shape))
        if isinstance(key, tuple) and len(key) == 3 and _is_int(key[0]) and isinstance(self.shape[1], Sym):
            from pto.pypto import heads_first  # `out[h, i:i + p, :] = y`: head h of an [H, T, D] output

            return heads_first.put_head(self, key, value)
        at = self._window(key, "writing a slice of") or _open_window(key, self, value)
        if at is None or (key[0] == slice(None) and not whole.is_whole(self)):  # (all rows: the one tile's)
            refuse(
                f"writing a slice of a tensor with {key!r} is not supported: rows of an output as "
                "out[i:i + p, :] = y (p a number), or pypto.assemble"
            )
        if isinstance(value, Tensor) and list(value.shape[1:]) != list(at[0][1:]):
            refuse(f"out[...] = y writes a window of shape {at[0]} from y of shape {value.shape}")
        assemble(value, at[1], self)

    def _window(self, key, what: str) -> tuple[list, list] | None:
        """The shape and offsets of a slice `[r0:r1, ..., c0:c1]` with one slice per dim
        (each bound may be left out, no step), or None: rows are all of them or a window
        of a number of rows (`i:i + p`, i symbolic); the other dims are static."""
        if not (isinstance(key, tuple) and len(key) == len(self.shape) >= 2):
            return None
        if not all(isinstance(k, slice) and k.step in (None, 1) for k in key):
            return None
        if not self._tok and not _symbolic_rows(key[0], self):  # a weight: a static window of each dim
            _no_symbolic_columns(key, self)
            return _static_window(key, self.shape)
        r, *rest = key
        win = _static_window(rest, self.shape[1:])
        if win is None:
            return None
        shape, offs = win
        if r == slice(None):
            return [self.shape[0], *shape], [0, *offs]
        if r.start is None or r.stop is None:
            return None
        rows = _constant(r.stop - r.start)
        return ([rows, *shape], [r.start, *offs]) if rows is not None and rows > 0 else None

    def __repr__(self) -> str:
        dt = self._dtype.name if self._dtype is not None else "?"
        return f"pypto.Tensor({self.shape}, {dt})"


# PyPTO's Tensor methods that are its functions with the tensor first (PyPTO 0.2.0).
METHODS = (
    "add amax amin ceil clone div exp expand_clone floor greater log log1p logical_not lrelu matmul maximum mul "
    "reciprocal relu reshape "
    "round rsqrt sigmoid softmax sqrt sub sum transpose trunc "
    "unsqueeze var view"
).split()


def _no_ellipsis(key, rank: int):
    """`x[i:j, ...]`: the `...` as the whole of each dim it stands for; `x[i:j]` of a
    tensor of rank 2 or more is `x[i:j, ...]` (GLM-4.5's `out[i * TILE:] = y`)."""
    if isinstance(key, slice) and key != slice(None) and rank >= 2:
        key = (key, Ellipsis)
    if not isinstance(key, tuple) or sum(k is Ellipsis for k in key) != 1:
        return key
    at = key.index(Ellipsis)
    return key[:at] + (slice(None),) * max(rank - len(key) + 1, 0) + key[at + 1 :]


def _open_window(key, out: Tensor, value: object) -> tuple[list, list] | None:
    """`out[i:, c:] = y`: y's shape at the starts, where each slice's end is left out or
    is its start plus y's size; None for another key."""
    if not (isinstance(value, Tensor) and isinstance(key, tuple) and len(key) == len(out.shape) == len(value.shape)):
        return None
    if not all(isinstance(k, slice) and k.step in (None, 1) for k in key):
        return None
    starts = [0 if k.start is None else k.start for k in key]
    for k, a, n in zip(key, starts, value.shape, strict=True):
        if k.stop is not None and _constant(k.stop - a) != n:
            return None
    return list(value.shape), starts


def _int_dims(key, x: Tensor) -> set[int] | None:
    """The dims after the first that `key` indexes by a number (a view of that index, the
    dim then dropped), or None: of a token tensor of rank 3 or more only."""
    if not (isinstance(key, tuple) and x._tok and len(x.shape) >= 3 and len(key) == len(x.shape)):
        return None
    dims = {j for j, k in enumerate(key) if j > 0 and _is_int(k)}
    if not dims:
        return None
    for j in dims:
        if not (isinstance(x.shape[j], int) and -x.shape[j] <= key[j] < x.shape[j]):
            refuse(f"index {key[j]} of dim {j} of a {x.shape} tensor is out of range")
    return dims


def _symbolic_rows(k: object, x: Tensor) -> bool:
    """`a[i * M:i * M + M, :]` of a parameter in a kernel of static shapes (PyPTO's
    operator tests): rows at the loop's index, its token tiles. Every parameter so
    sliced has the token rows: as many as the first (in a kernel with a DYNAMIC axis, a
    static table sliced so is not tokens: the index has no value to slice it with)."""
    if x._param is None or not isinstance(k, slice) or not isinstance(k.start, Sym):
        return False
    tr = current("slicing a tensor")
    if not tr.static:
        return False
    rows, name = tr.static_rows = tr.static_rows or (x.shape[0], x.name)
    if x.shape[0] != rows:
        refuse(
            f"parameter '{x.name}' has {x.shape[0]} rows, '{name}' {rows}: the rows sliced at the loop's "
            "index are the tokens, one count"
        )
    return True


def _no_symbolic_columns(key: tuple, x: Tensor) -> None:
    """A slice of a static tensor's other dims at the loop's index: tokens on the columns
    (PyPTO's operator tests pass A as [K, M] for a_trans=True), which SK-03 does not take."""
    at = next((v for k in key[1:] for v in (k.start, k.stop) if isinstance(v, Sym)), None)
    if at is not None:
        refuse(
            f"a slice of '{x.name}' along dim 1 or later at {at}, the loop's index: the loop takes tokens as "
            "rows (dim 0); tokens on another axis (an activation stored [K, tokens] for a_trans=True) are not "
            "supported: pass the activation as [tokens, K] (weight windows: in a pypto.loop of numbers)"
        )


def _static_window(keys, dims: list) -> tuple[list, list] | None:
    """The shape and offsets of slices of static dims, or None (an empty or symbolic one)."""
    shape, offs = [], []
    for k, d in zip(keys, dims, strict=True):
        if not isinstance(d, int):
            return None
        a, z, _ = k.indices(d)
        if z <= a:
            return None
        shape.append(z - a)
        offs.append(a)
    return shape, offs


def _constant(v: object) -> int | None:
    """The value of `stop - start` where it is one number (`(i + 8) - i`), else None."""
    if _is_int(v):
        return int(v)  # type: ignore[call-overload]
    if not isinstance(v, Sym):
        return None
    names = sorted(v.names)  # each symbol its own value at each sample: i - T is not constant
    seen = {v.eval({n: (k * 7919 + j * 104729) % 65521 for j, n in enumerate(names)}) for k in range(4)}
    return seen.pop() if len(seen) == 1 else None


def _ops():
    from pto.pypto import ops  # the operators call the op functions, which build Tensors

    return ops


def _select():
    from pto.pypto import select

    return select


def _whole():
    from pto.pypto import whole

    return whole


def _outputs():
    from pto.pypto import outputs

    return outputs


def _extras():
    from pto.pypto import extras  # (as `_ops`)

    return extras
