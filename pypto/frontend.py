"""`@pypto.frontend.jit`: a PyPTO kernel that traces, compiles and runs on this model.

Calling the kernel with arrays (numpy; torch CPU tensors when torch is installed)
traces it for their shapes (a DYNAMIC dimension is the token axis, so one trace serves
every token count), compiles it with the default pipeline and runs it at the npu
level, writing the outputs into the output arrays in place, as PyPTO's device run
does. `kernel.report` is the last run's report, `kernel.result` its `pto.Result`;
`kernel.trace(*args)` returns the `pto`-level module without running it.
"""

from __future__ import annotations

import inspect
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from types import FrameType
from typing import Any

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import (
    DictionaryAttr,
    FileLineColLoc,
    IntAttr,
    IntegerAttr,
    ModuleOp,
    StringAttr,
    UnitAttr,
    i64,
)

from pto.frontend import api
from pto.frontend import builder as b
from pto.frontend.checks import BuildError, in_api
from pto.interp.report import Report
from pto.pypto import arguments, heads_first, scopes, tails, whole
from pto.pypto.errors import lowering_warning, not_modelled, refuse, unsupported_name
from pto.pypto.hints import check_pass_options, pass_options, status_dim
from pto.pypto.option_names import NAMES, check_names
from pto.pypto.sym import DynamicDim, Sym
from pto.pypto.tensor import Pinned, Tensor, Trace, _traces
from pto.pypto.types import DataType, RunMode, StatusType, elem
from pto.tracebacks import api_boundary

RUNTIME_MODELLED = ("stitch_function_max_num",)


def _every_dim_dynamic(shape: list | None) -> bool:
    """`pypto.Tensor([DYNAMIC, DYNAMIC])`: a rank-2-or-more annotation of DYNAMIC dims only."""
    return shape is not None and len(shape) >= 2 and all(status_dim(d) for d in shape)


def _has_dynamic(shape: list | None) -> bool:
    return shape is not None and any(status_dim(d) for d in shape)


def _heads(value: object) -> list[tuple[int | None, Any]]:
    """An output's results: the tile assembled into it, or each head's (`heads_first`)."""
    return list(enumerate(value)) if isinstance(value, list) else [(None, value)]


def _expanded(shape: list | None, rank: int) -> list | None:
    """An annotation's dims for an argument of `rank`: no shape, an empty one (PyPTO
    0.2.0 checks no rank for `[]`) or a `...` in it stands for STATIC dims; None if the
    ranks cannot match."""
    if shape is None or shape == []:
        return [StatusType.STATIC] * rank
    if Ellipsis in shape:
        at, fill = shape.index(Ellipsis), rank - len(shape) + 1
        return None if fill < 0 else [*shape[:at], *[StatusType.STATIC] * fill, *shape[at + 1 :]]
    return shape if len(shape) == rank else None


@dataclass
class _Param:
    name: str
    index: int
    ann: Tensor


# What pto-to-tile names a stage the kernel did not label (set_semantic_label), in the
# kernel's words.
_ROLES = {
    "linear": "the matmul",
    "pre": "the vector work before the matmul",
    "post": "the vector work after the matmul",
    "rmsnorm": "the norm before the matmul",
    "post-rmsnorm": "the norm after the matmul",
    "quant": "the quant",
    "dequant": "the dequant",
}


def _in_kernel_words(warning: str, labels: set[str]) -> str:
    """A pass's warning with each stage the kernel did not label named by what it does."""

    def named(m: re.Match) -> str:
        label = m.group(2)
        return m.group(0) if label in labels or label not in _ROLES else f"{_ROLES[label]} ({m.group(1)} stage)"

    return re.sub(r"(vector|cube) stage '([^']*)'", named, warning)


def _layout(p: _Param, token: bool) -> str | None:
    """The `pto.layout` of a parameter: `nz` for a TILEOP_NZ weight (the pto verifier
    checks its shape and that only the matmul reads it, at the line that reads it)."""
    if not p.ann.nz:
        return None
    if token:
        refuse(f"parameter '{p.name}' has the token axis: only a weight the matmul reads may be TILEOP_NZ")
    return "nz"


def _signature(fn: Callable, where: dict[str, object]) -> inspect.Signature:
    """The signature with evaluated annotations (strings under `from __future__ import
    annotations`), which see the module's names, the names of the scope that decorated
    the function (`where`) and the closure's."""
    code, cells = getattr(fn, "__code__", None), getattr(fn, "__closure__", None) or ()
    scope = dict(where)
    scope.update({n: c.cell_contents for n, c in zip(code.co_freevars if code else (), cells, strict=True)})
    try:
        return inspect.signature(fn, eval_str=True, locals=scope)
    except Exception as e:  # noqa: BLE001 - any error of the user's annotation expressions
        refuse(f"{getattr(fn, '__name__', fn)}'s annotations do not evaluate ({type(e).__name__}: {e})")


def _user_locals() -> dict[str, object]:
    """The local names of the user's scope that applies the decorator (a test function
    defining its kernel, say): string annotations may name them."""
    f: FrameType | None = sys._getframe(1)
    while f is not None and in_api(f):
        f = f.f_back
    return dict(f.f_locals) if f is not None and f.f_locals is not f.f_globals else {}


class JitKernel:
    def __init__(self, fn: Callable, pass_opts: dict | None, runtime_opts: dict | None, ignored: dict, where: dict):
        self.fn = fn
        self.pass_options = dict(pass_opts or {})
        check_pass_options(self.pass_options)  # (at the decorator's line)
        self.runtime_options = dict(runtime_opts or {})
        for key in RUNTIME_MODELLED:  # (checked here: a trace writes them into the IR)
            if key in self.runtime_options and not arguments.positive(self.runtime_options[key]):
                refuse(f"runtime option {key} must be a positive integer, got {self.runtime_options[key]!r}")
        self.ignored = {k: v for k, v in ignored.items() if v is not None}
        self.sig = _signature(fn, where)
        self.params = [
            _Param(n, i, p.annotation)
            for i, (n, p) in enumerate(self.sig.parameters.items())
            if isinstance(p.annotation, Tensor)
        ]
        self.compiled: dict[tuple, api.Compiled] = {}
        self._coinciding: dict[int, int] = {}  # (see _shapes)
        self._looped: str | None = None  # the loops the last trace's body called (Trace.looped; see _traced)
        self._tokens: int | None = None  # the token count of the arguments last seen (see _shapes)
        self._specialised = False  # the last trace holds at its token count only (Trace.specialised)
        self._per_count: set[tuple] = set()  # the keys of `compiled` whose kernels are kept per token count
        self.notes: set[str] = set()
        self.report: Report | None = None
        self.result: api.Result | None = None
        # the last kernel's results: (output parameter, its head for an [H, T, D] one written by heads)
        self.outputs: list[tuple[int, int | None]] = []
        self._outputs_of: dict[tuple, list[tuple[int, int | None]]] = {}  # those of each kernel in `compiled`

    def __get__(self, obj, objtype=None):
        """A kernel defined in a class is a method: the instance is its first argument
        (not a tensor, and not an immutable value: each call traces anew, `_scalars`)."""
        return self if obj is None else _Bound(self, obj)

    # -- arguments ----------------------------------------------------------------

    def _bind(self, args, kwargs) -> tuple[dict, dict[int, np.ndarray]]:
        try:
            bound = self.sig.bind(*args, **kwargs)
        except TypeError as e:
            refuse(f"{self.fn.__name__}: {e}")
        bound.apply_defaults()
        arrays = {p.index: arguments.to_numpy(bound.arguments[p.name], f"argument '{p.name}'") for p in self.params}
        return dict(bound.arguments), arrays

    def _shapes(self, arrays: dict[int, np.ndarray]) -> tuple[list[list], int | None, list[DataType]]:
        """Each tensor parameter's shape as the body sees it (Sym T on the token axis), the
        token count, and each one's dtype (the argument's where the annotation has none,
        as `pypto.Tensor()` in GLM-4.5's signatures)."""
        shapes, t, dtypes = [], None, []
        t_of = ""  # the parameter the token count was read from
        every = {p.index for p in self.params if _every_dim_dynamic(p.ann._shape)}
        if every:  # the token count: another DYNAMIC axis's, or else the first such argument's rows
            rest = [p for p in self.params if p.index not in every and _has_dynamic(p.ann._shape)]
            src = rest[0] if rest else next(p for p in self.params if p.index in every)
            src_dims = _expanded(src.ann._shape, arrays[src.index].ndim) or []
            t = next(n for d, n in zip(src_dims, arrays[src.index].shape, strict=False) if status_dim(d))
            t_of = src.name
        # all-DYNAMIC arguments but the one the token count is read from whose rows are as
        # many: their row counts, for a second trace where they are not the tokens (_traced)
        self._coinciding = {}
        for p in self.params:
            a, ann = arrays[p.index], p.ann
            dims = _expanded(ann._shape, a.ndim)
            if p.index in every and p.name != t_of and a.ndim and a.shape[0] == t:
                self._coinciding[self.params.index(p)] = a.shape[0]
            if dims is None:
                refuse(f"argument '{p.name}' has rank {a.ndim}, its annotation rank {len(ann._shape or [])}")
            dtypes.append(ann._dtype if ann._dtype is not None else arguments.dtype_of(a, p.name))
            at = ann._at if ann._dtype is not None else None  # (an argument's dtype: at the call)
            want = arguments.NUMPY[elem(dtypes[-1], f"parameter '{p.name}''s dtype", at)]
            if a.dtype != want:
                refuse(f"argument '{p.name}' is {a.dtype}, its annotation {ann.known_dtype.name} ({np.dtype(want)})")
            shape: list = []
            for j, (d, n) in enumerate(zip(dims, a.shape, strict=True)):
                if p.index in every and (j > 0 or n != t):
                    # PyPTO's tests annotate every dim DYNAMIC (the shape from the call): the
                    # rows are the tokens where they are the token count; the other dims are
                    # their sizes (corpus22's k200)
                    shape.append(n)
                elif status_dim(d):
                    if t is not None and n != t:
                        # (two DYNAMIC axes of one annotation: said at it; of two arguments: at the call)
                        other, here = ("another axis of it", ann._at) if t_of == p.name else ("another argument", None)
                        refuse(
                            f"argument '{p.name}' has {n} rows on its DYNAMIC axis (dim {j}), {other} {t}: every "
                            "DYNAMIC axis here is the token axis, one count (write the others' sizes, or STATIC)",
                            here,
                        )
                    t, t_of = n, p.name
                    shape.append(Sym("T"))
                elif d is StatusType.STATIC or d == n:
                    shape.append(n)
                else:
                    refuse(f"argument '{p.name}' has shape {list(a.shape)}, its annotation {ann._shape}")
            shapes.append(shape)
        self._tokens = t
        return shapes, t, dtypes

    # -- tracing ------------------------------------------------------------------

    def _run_body(self, tr: Trace, values: dict) -> None:
        _traces.append(tr)
        b._pinned.append(Pinned())
        args = {**values, **{p.name: tr.params[i] for i, p in enumerate(self.params)}}
        try:
            pass_options(tr, self._pass_options())
            if tr.whole:
                code = self.fn.__code__
                whole.run(tr, lambda tiles: self.fn(**{**args, **tiles}), (code.co_filename, code.co_firstlineno))
            else:
                self.fn(**args)
        finally:
            _traces.pop()
            b._pinned.pop()
            self._looped = tr.looped
        if tr.loop is None:
            refuse(f"{self.fn.__name__} has no token loop (pypto.loop_unroll or pypto.loop)")
        tails.check_done(tr)
        heads_first.check_done(tr, (self.fn.__code__.co_filename, self.fn.__code__.co_firstlineno))
        if not tr.outputs:
            refuse(f"{self.fn.__name__} assembles no result into an output parameter")

    def _params(
        self, shapes: list[list], dtypes: list[DataType], token: set[int], kernel: b.Kernel | None, outputs: set[int]
    ):
        out = []
        for i, (p, shape, dt) in enumerate(zip(self.params, shapes, dtypes, strict=True)):
            t = Tensor.traced(shape, dt, None, i in token)
            t._param, t.name, t.nz = i, p.name, p.ann.nz
            if kernel is not None and i in outputs:
                t._lazy = ("output", i)
                if p.ann.nz:
                    refuse(f"parameter '{p.name}' is an output: only a weight the matmul reads may be TILEOP_NZ")
            if kernel is not None and i not in outputs:
                dims = [None if (j == 0 and i in token) else d for j, d in enumerate(shape)]
                if any(isinstance(d, Sym) for d in dims):
                    refuse(f"parameter '{p.name}' has a DYNAMIC axis that the token loop does not tile")
                t._val = kernel.arg(p.name, dims, elem(dt, p.name), layout=_layout(p, i in token))
            out.append(t)
        return out

    @api_boundary
    def trace(self, *args, **kwargs) -> ModuleOp:
        """The kernel at the pto level for these arguments' shapes (nothing runs)."""
        values, arrays = self._bind(args, kwargs)
        shapes, _, dtypes = self._shapes(arrays)
        return self._trace(values, shapes, dtypes)

    @api_boundary
    def tune(self, *args, tokens, **options):
        """`pto.tune` on the kernel traced for these arguments' shapes (nothing of theirs
        is read but shapes and dtypes): `kernel.tune(x, w, out, tokens=[16, 128])`. The
        result also says which lines of this kernel to change to apply the winner
        (`.suggest()`, `.apply(path)`: pto.pypto.tuning)."""
        from pto.pypto.tuning import JitTuneResult, Sites
        from pto.tuner.tune import tune

        values, arrays = self._bind(args, {})
        shapes, _, dtypes = self._shapes(arrays)
        module, tr = self._traced(values, shapes, dtypes)
        if tr.specialised and set(tokens) != {self._tokens}:
            refuse(
                f"{self.fn.__name__}'s loop count is a number, whose tiles were checked at {self._tokens} tokens "
                f"only: tune it at tokens=[{self._tokens}]"
            )
        return JitTuneResult.of(tune(module, tokens, name=self.fn.__name__, **options), Sites.of(self.fn, tr, args))

    def _trace(self, values: dict, shapes: list[list], dtypes: list[DataType]) -> ModuleOp:
        return self._traced(values, shapes, dtypes)[0]

    def _traced(self, values: dict, shapes: list[list], dtypes: list[DataType]) -> tuple[ModuleOp, Trace]:
        """The pto-level module, and the trace that built it (where the hints were set).
        An argument annotated all DYNAMIC whose rows are as many as the tokens may be a
        weight all the same: if the kernel does not trace with its rows the tokens, it is
        traced again with each such argument's rows its size in turn, then all of them."""
        try:
            return self._traced_as(values, shapes, dtypes)
        except BuildError as e:
            if self._looped != "token" and (tokens := whole.token_params(shapes)):
                attempt = lambda token: self._traced_as(values, shapes, dtypes, token)  # noqa: E731
                return whole.first_trace(attempt, tokens, lambda: self._looped == "token", e, self._looped is not None)
            if not self._coinciding:
                raise
        # (if the last fails too, its error is said: a weight read as tokens fails at its
        # first use, which hides the kernel's own error behind it)
        rows = self._coinciding

        def sized(which) -> list[list]:  # the shapes with those arguments' rows their size
            return [[rows[i] if i in which and j == 0 else d for j, d in enumerate(s)] for i, s in enumerate(shapes)]

        for i in rows if len(rows) > 1 else ():
            try:
                return self._traced_as(values, sized({i}), dtypes)
            except BuildError:
                pass
        return self._traced_as(values, sized(set(rows)), dtypes)

    def _traced_as(
        self, values: dict, shapes: list[list], dtypes: list[DataType], whole_rows: set[int] | None = None
    ) -> tuple[ModuleOp, Trace]:
        """One trace of the body; with `whole_rows` (the token parameters), as one tile of all their rows."""
        names = [p.name for p in self.params]
        dynamic = {i for i, s in enumerate(shapes) if s and isinstance(s[0], Sym)} | (whole_rows or set())
        one_tile, static = whole_rows is not None, not any(isinstance(d, Sym) for s in shapes for d in s)
        trace = partial(Trace, notes=self.notes, whole=one_tile, tokens=self._tokens, static=static)
        probe = trace(False, [], names, dynamic)
        probe.params = self._params(shapes, dtypes, dynamic, None, set())
        self._run_body(probe, values)
        token = probe.seen_token if one_tile else dynamic | probe.seen_token
        k = b.Kernel(self.fn.__name__)
        tr = trace(True, [], names, token, kernel=k)
        tr.params = self._params(shapes, dtypes, token, k, set(probe.outputs))
        self._run_body(tr, values)
        return self._module(tr, k), tr

    def _module(self, tr: Trace, k: b.Kernel) -> ModuleOp:
        lp = tr.loop
        assert lp is not None
        # (a loop_unroll over blocks: its last block's rows are partial, as pypto.loop's tiles)
        factors, ragged = tails.loop_factors(lp) if lp.kind == "loop" else (lp.factors, lp.unit > 1)
        k.unroll = factors
        k.options = tr.options or None
        for i, policy in tr.cache.items():
            k.set_cache(tr.params[i].built, policy)
        # (an [H, T, D] output assembled from a transpose of the tokens is H results, its heads: heads_first)
        outputs = [(i, h, v) for i in sorted(tr.outputs) for h, v in _heads(tr.outputs[i])]
        k.ret(*(v.built for _, _, v in outputs))
        module = k.module()
        f = module.body.block.first_op
        assert isinstance(f, func.FuncOp)
        code = self.fn.__code__  # diagnostics about the whole kernel point at its def line
        f.location = FileLineColLoc(StringAttr(code.co_filename), IntAttr(code.co_firstlineno), IntAttr(1))
        runtime = {key: v for key, v in self._runtime_options().items() if key in RUNTIME_MODELLED}
        if ragged:
            f.attributes["pto.tail"] = UnitAttr()  # its last tile is partial, as PyPTO runs it
        if runtime:
            f.attributes["pto.runtime"] = DictionaryAttr({key: IntegerAttr(v, i64) for key, v in runtime.items()})
        self.outputs = [(i, h) for i, h, _ in outputs]
        self._specialised = tr.specialised
        return module

    # -- running ------------------------------------------------------------------

    def _pass_options(self) -> dict:
        """The decorator's pass options over those of the `pypto.options` scopes open."""
        return {**scopes.defaults("pass_options"), **self.pass_options}

    def _runtime_options(self) -> dict:
        runtime = {**scopes.defaults("runtime_options"), **self.runtime_options}
        for key in RUNTIME_MODELLED:  # (a scope's are checked here: a trace writes them into the IR)
            if key in runtime and not arguments.positive(runtime[key]):
                refuse(f"runtime option {key} must be a positive integer, got {runtime[key]!r}")
        return runtime

    def _options_notes(self) -> None:
        for key, v in self._runtime_options().items():
            if key == "run_mode":
                if not isinstance(v, RunMode):
                    refuse(f"runtime option run_mode must be a pypto.RunMode, got {v!r}")
            elif key not in RUNTIME_MODELLED:
                not_modelled(f"runtime option {key}", self.notes)
        for key in self.ignored:
            not_modelled(f"jit's {key}", self.notes)

    @api_boundary
    def __call__(self, *args, **kwargs) -> None:
        values, arrays = self._bind(args, kwargs)
        shapes, t, dtypes = self._shapes(arrays)
        self._options_notes()
        scalars = self._scalars(values)
        types = tuple((tuple(map(str, s)), dt.name) for s, dt in zip(shapes, dtypes, strict=True))
        base = (types, scalars, repr(self._pass_options()), repr(self._runtime_options()))
        key: tuple = (*base, t) if base in self._per_count else base
        compiled = self.compiled.get(key) if scalars is not None else None
        if compiled is None:
            compiled = self._compile(values, shapes, dtypes)
            if self._specialised:  # (a loop count that is a number: checked at this count only)
                self._per_count.add(base)
                key = (*base, t)
            if scalars is not None:
                self.compiled[key], self._outputs_of[key] = compiled, self.outputs
        outs = self._outputs_of[key] if scalars is not None else self.outputs
        written = sorted({i for i, _ in outs})
        self._check_outputs([arrays[self.params[i].index] for i in written], [self.params[i].name for i in written])
        ins = [arrays[p.index] for i, p in enumerate(self.params) if i not in written]
        self.result = api.run(compiled, ins)
        self.report = self.result.report
        for (i, head), got in zip(outs, self.result.outputs, strict=True):
            a = arrays[self.params[i].index]
            (a if head is None else a[head])[...] = got

    def _scalars(self, values: dict) -> tuple | None:
        """The arguments that are not tensors, which the trace takes as constants (PyPTO
        keys its cache on them too); None if one is not an immutable value (a list, an
        object whose fields may change since): then each call traces anew."""
        tensors = {p.name for p in self.params}
        try:
            return tuple((n, arguments.frozen(v)) for n, v in values.items() if n not in tensors)
        except TypeError:
            return None

    def _compile(self, values: dict, shapes: list[list], dtypes: list[DataType]) -> api.Compiled:
        module = self._trace(values, shapes, dtypes)
        failed: str | None
        try:
            compiled = api.compile(module)
        except api.CompileError as e:
            failed = str(e)
        else:
            failed = None
        if failed is not None:
            refuse(f"{self.fn.__name__} does not lower:\n{failed}")
        labels = {a.data for op in module.walk() if isinstance(a := op.attributes.get("pto.label"), StringAttr)}
        for w in compiled.warnings:  # once per compilation: the jit path has no other way to show them
            lowering_warning(f"{self.fn.__name__}: {_in_kernel_words(w, labels)}")
        return compiled

    @staticmethod
    def _check_outputs(arrays: list[np.ndarray], names: list[str]) -> None:
        """An output is written in place after the run: it must be writable, and no two of
        its elements may share memory (each would get whichever result came last)."""
        for a, name in zip(arrays, names, strict=True):
            if not a.flags.writeable:
                refuse(f"output '{name}' is read-only")
            if arguments.self_overlapping(a):
                refuse(f"output '{name}' has elements that share memory (strides {a.strides}): pass a plain array")


class _Bound:
    """A kernel read from an instance: the instance is its first argument; its report,
    result and the rest are the kernel's."""

    def __init__(self, kernel: JitKernel, obj: object):
        self._kernel, self._obj = kernel, obj

    @api_boundary
    def __call__(self, *args, **kwargs) -> None:
        self._kernel(self._obj, *args, **kwargs)

    @api_boundary
    def trace(self, *args, **kwargs) -> ModuleOp:
        return self._kernel.trace(self._obj, *args, **kwargs)

    @api_boundary
    def tune(self, *args, **kwargs):
        return self._kernel.tune(self._obj, *args, **kwargs)

    def __getattr__(self, name: str):
        return getattr(self._kernel, name)


@api_boundary
def jit(
    func: Callable | None = None,
    *,
    host_options: dict | None = None,
    codegen_options: dict | None = None,
    pass_options: dict | None = None,
    runtime_options: dict | None = None,
    verify_options: dict | None = None,
    debug_options: dict | None = None,
    infer_controlflow_shape=None,
    use_cache: bool = True,
):
    """PyPTO's `@pypto.frontend.jit(...)`; pass options and `stitch_function_max_num` are
    modelled, the other options accepted and reported once as not modelled; a name that
    PyPTO 0.2.0 does not have is refused (pypto/option_names.toml)."""
    ignored = {
        "host_options": host_options,
        "codegen_options": codegen_options,
        "verify_options": verify_options,
        "debug_options": debug_options,
        "infer_controlflow_shape": infer_controlflow_shape,
    }
    given = {**ignored, "pass_options": pass_options, "runtime_options": runtime_options}
    for group in NAMES:  # checked here, at the decorator's line, where a misspelt name is
        if given[group] is not None:
            check_names(group, given[group])

    @api_boundary
    def wrap(fn: Callable) -> JitKernel:
        if not callable(fn) or isinstance(fn, JitKernel):
            refuse(f"jit decorates a function, got {fn!r}")
        return JitKernel(fn, pass_options, runtime_options, ignored, _user_locals())

    return wrap(func) if func is not None else wrap


def dynamic(name: str) -> DynamicDim:
    """PyPTO's `pypto.frontend.dynamic("T")`, a named dynamic dimension: the token axis."""
    if not isinstance(name, str) or not name.isidentifier():
        refuse(f"pypto.frontend.dynamic takes a name, got {name!r}")
    return DynamicDim(name)


def function(fn: Callable | None = None, **options) -> Callable:
    """`@pypto.frontend.function`: a helper PyPTO's parser inlines into the kernel that
    calls it. Here the kernel's Python runs as written, so the helper is itself; its
    results come back by `return` or through `Tensor.move` into a declared tensor."""
    if options:
        refuse(f"pypto.frontend.function's options {sorted(options)} are not modelled")
    if fn is None:
        return lambda f: function(f)
    if not callable(fn):
        refuse(f"pypto.frontend.function decorates a function, got {fn!r}")
    return fn


__all__ = ["jit", "JitKernel", "DataType", "dynamic", "function"]


def __getattr__(name: str):  # PyPTO 0.2.0's other frontend names: refused where used
    return unsupported_name(__name__, name, ("SymbolicScalar",))
