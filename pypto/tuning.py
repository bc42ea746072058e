"""What `kernel.tune(...)` found, as the lines of the jit kernel to change, in PyPTO's spelling.

`kernel.tune(...)` returns a `JitTuneResult`: the tuner's `TuneResult` (`.best`,
`.table()`, `.pinned()`, ...) and, for the kernel's own source,

- `suggestions`: a `Suggestion` per hint the winner sets otherwise than the kernel: the
  PyPTO call or argument that sets it (`unroll_list=[...]`, `pypto.set_vec_tile_shapes`,
  `pass_options={...}`, `w.set_cache_policy(...)`, ...), at the file:line where the
  kernel sets it now or, where it does not, before the op it applies to; the lines as
  they are and as they would be;
- `resolved`: what the winner's hints came to when the passes lowered it (the tile
  level): the values the passes chose where the winner leaves a hint unset;
- `suggest()` (and `str(result)`): both as text; `apply(path)`: a copy of the kernel's
  file with the lines changed, refused (TuneError) where a change is not mechanical.

The hints compared are read from two pto-level modules: the kernel as traced and the
same kernel with the winner pinned (`pto.tuner.pin`, the module `pinned()` writes).
Where the two lower to the same tile-level kernel, the kernel's own hints are the
winner and nothing is suggested.
"""

from __future__ import annotations

import ast
import importlib.util
import os
import sys
import warnings
from collections.abc import Callable
from dataclasses import dataclass, fields
from functools import cached_property, partial, reduce

from xdsl.dialects import func
from xdsl.dialects.builtin import DictionaryAttr, FileLineColLoc, IntegerAttr, ModuleOp, StringAttr
from xdsl.ir import Attribute, Operation

from pto.dialects import pto, tile
from pto.dialects.common import CachePolicy, CachePolicyAttr, CubeTileAttr
from pto.frontend import api
from pto.interp.run import signature
from pto.pypto.resolved import Resolved, arg_hint, attr_dict, cube_args, cube_values, ints, resolved_hints
from pto.pypto.rewrite import Edit, Source, Unwritable, dict_text, write_copy
from pto.pypto.tensor import Loop, Site, Trace
from pto.tuner.kernel import VEC_TILED, TuneError, arg_name
from pto.tuner.pin import pin
from pto.tuner.result import TuneResult

STITCH = "stitch_function_max_num"


@dataclass(frozen=True)
class Sites:
    """Where the kernel's source sets its hints, as its trace recorded them."""

    fn: Callable  # the kernel's function: jit's options are in its decorator
    loop: Loop  # its token loop: the call, and a pypto.loop's tile view
    cache: dict[str, Site | None]  # per weight parameter: its set_cache_policy call
    options: dict[str, Site | None]  # per pass option: the set_pass_options call that set it last
    tiles: dict[Operation, tuple[Site | None, Site | None]]  # per op: its vec and cube tile's set call
    args: tuple  # what the kernel was traced for (a copy of its file is traced for them too)
    whole: bool = False  # the kernel has no token loop: one tile of all its rows (pypto/whole.py)

    @classmethod
    def of(cls, fn: Callable, tr: Trace, args: tuple) -> Sites:
        assert tr.loop is not None  # (a kernel without one is traced as one tile)
        cache = {tr.names[i]: s for i, s in tr.cache_at.items()}
        return cls(fn, tr.loop, cache, dict(tr.option_at), dict(tr.tiles_at), args, tr.whole)


@dataclass(frozen=True)
class Suggestion:
    hint: str  # what it sets: "unroll_list", "cube tile of 'linear'", ...
    pypto: str  # the winner's value as PyPTO sets it
    file: str | None  # where the kernel sets it now, or where the new line goes
    line: int | None
    old: list[str]  # the source lines as they are ([]: a new line)
    new: list[str]  # as they would be ([]: not a mechanical change)
    manual: str | None = None  # why `apply` cannot make it: then make it by hand
    edits: tuple[Edit, ...] = ()

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}" if self.file else "(no source line)"
        if self.manual is not None:
            return f"  by hand, {self.hint}: {self.pypto}\n    {self.manual}"
        head = f"  {where}: {self.hint}: {self.pypto}" + ("" if self.old else " (a new line)")
        return "\n".join([head, *(f"    - {x}" for x in self.old), *(f"    + {x}" for x in self.new)])


@dataclass
class JitTuneResult(TuneResult):
    sites: Sites

    @classmethod
    def of(cls, r: TuneResult, sites: Sites) -> JitTuneResult:
        return cls(**{f.name: getattr(r, f.name) for f in fields(r)}, sites=sites)

    @cached_property
    def winner(self) -> ModuleOp:
        """The kernel with the winner's hints pinned (as `pinned()` writes it)."""
        return pin(self.module, self.best)

    @cached_property
    def _tile_levels(self) -> tuple[ModuleOp | None, ModuleOp]:
        """The kernel's own hints and the winner's, as the passes lowered them."""
        target = self.info.target.name
        try:
            own: ModuleOp | None = api.compile(self.module, target=target).tile
        except api.CompileError:  # (the own hints' failure is in the table)
            own = None
        return own, api.compile(self.winner, target=target).tile

    @cached_property
    def _spelling(self) -> _Spelling:
        return _Spelling(self.sites)

    @cached_property
    def suggestions(self) -> list[Suggestion]:
        """The changes to the kernel's source that make its hints the winner's."""
        own_tile, won_tile = self._tile_levels
        if own_tile is not None and _body(own_tile) == _body(won_tile):
            return []  # the winner lowers as the kernel's own hints do
        sp, own, won = self._spelling, signature(self.module).func, signature(self.winner).func
        found = [
            *_unroll(sp, own, won),
            *_options(sp, own, won),
            *_caches(sp, own, won),
            *_vec_tiles(sp, own, won),
            *_cube_tiles(sp, own, won),
            *_host_transposes(own_tile, won_tile),
        ]
        return sorted(found, key=lambda s: (s.manual is not None, s.file or "", s.line or 0))

    @cached_property
    def resolved(self) -> list[Resolved]:
        """The winner's hints as the passes lowered them (the tile level)."""
        return resolved_hints(
            self._tile_levels[1], signature(self.winner).func, self.info.weights, self._spelling.alias
        )

    def suggest(self) -> str:
        """The suggestions and the resolved values, as text."""
        own, best = self.baseline_cycles()["own hints"], self.cycles(self.best)
        assert best is not None  # (the best configuration is one that ran)
        head = (
            f"@{self.info.name}, tuned at tokens {','.join(map(str, self.tokens))} on {self.info.target.name} "
            f"({self.evaluated} configurations):"
        )
        if not self.suggestions:
            lines = [f"{head} the kernel's own hints are the winner ({best:,.0f} cycles); nothing to change."]
            lines.append("They resolved to (the tile level; * the passes chose it, the kernel leaving it unset):")
        else:
            vs = f"{own / best:.2f}x the speed of the kernel's own hints" if own else "the kernel's own hints failed"
            lines = [f"{head} the winner takes {best:,.0f} cycles, {vs}. Change:"]
            lines += [str(s) for s in self.suggestions]
            lines.append("The winner as the passes lowered it (the tile level; * the passes chose it):")
        return "\n".join(lines + [str(r) for r in self.resolved])

    def __str__(self) -> str:
        return self.suggest()

    def apply(self, path_out: str | os.PathLike) -> str:
        """Write a copy of the kernel's source file with the suggested changes made, at
        `path_out` (never the kernel's own file), once it is checked: imported as a module
        of its own and traced for the tuned shapes, it lowers as the winner does. Returns
        the path. A TuneError (one line), and nothing written, where a change is not
        mechanical or the copy lowers otherwise: `suggest()` says what to change."""
        if not isinstance(path_out, str | os.PathLike):
            raise TuneError(f"apply takes a file path, got {path_out!r}")
        path, kernel_file = os.fspath(path_out), self.sites.fn.__code__.co_filename
        for s in self.suggestions:
            why = s.manual or (None if s.file == kernel_file else f"{s.file}:{s.line} is outside {kernel_file}")
            if why is not None:
                raise TuneError(f"cannot apply {s.hint} mechanically: {why} (suggest() says what to change)")
        edits = [e for s in self.suggestions for e in s.edits]
        try:
            write_copy(self._spelling.source(kernel_file), edits, path, self._check_copy)
        except Unwritable as e:
            raise TuneError(str(e)) from None
        return path

    def _check_copy(self, path: str) -> None:
        """The copy at `path`, traced as the kernel was, lowers as the winner does (else Unwritable)."""
        if "<locals>" in self.sites.fn.__qualname__:  # (the copy's kernel is found by its name)
            raise Unwritable(f"{self.sites.fn.__qualname__} is made in a function: the changed copy cannot be checked")
        name = f"_pto_tuned_copy_{id(self)}"
        spec = importlib.util.spec_from_file_location(name, path)
        assert spec is not None and spec.loader is not None  # (a .py file: a source loader)
        sys.modules[name] = module = importlib.util.module_from_spec(spec)
        try:
            with warnings.catch_warnings():  # (the kernel's own trace gave them)
                warnings.simplefilter("ignore")
                spec.loader.exec_module(module)
                kernel = reduce(getattr, self.sites.fn.__qualname__.split("."), module)
                got = api.compile(kernel.trace(*self.sites.args), target=self.info.target.name).tile
        except Exception as e:  # noqa: BLE001 - whatever the user's module does on import
            raise Unwritable(f"the changed copy does not trace ({type(e).__name__}: {_first(str(e))})") from None
        finally:
            del sys.modules[name]
        want, have = _body(self._tile_levels[1]).splitlines(), _body(got).splitlines()
        if want != have:
            diff = next((w.strip() for w, h in zip(want, have, strict=False) if w != h), "its length")
            raise Unwritable(f"the changed copy does not lower as the winner (at the tile level, `{_first(diff)}`)")


def _first(text: str, width: int = 100) -> str:
    """The first line of `text`, cut to `width` characters: for a one-line error."""
    line = (text.splitlines() or [""])[0]
    return line if len(line) <= width else line[: width - 3] + "..."


# ----------------------------------------------------------------- spelling at lines


class _Spelling:
    """Suggestions at the kernel's lines: its source files, read once each."""

    def __init__(self, sites: Sites):
        self.sites = sites
        self._sources: dict[str, Source | Unwritable] = {}

    def source(self, path: str) -> Source:
        if path not in self._sources:
            try:
                self._sources[path] = Source(path)
            except Unwritable as e:
                self._sources[path] = e
        s = self._sources[path]
        if isinstance(s, Unwritable):
            raise s
        return s

    @cached_property
    def alias(self) -> str:
        """How the kernel's file names `pto.pypto` (`pypto`), read off its loop call."""
        lp = self.sites.loop
        try:
            src, call = self.call(lp.at, "loop_unroll" if lp.kind == "unroll" else "loop")
        except Unwritable:
            return "pypto"
        return src.segment(call.func.value) if isinstance(call.func, ast.Attribute) else "pypto"

    def suggest(self, hint: str, spelled: str, at: Site | None, edit: Callable[[], Edit | list[Edit]]) -> Suggestion:
        file, line = at if at is not None else (None, None)
        try:
            made = edit()
            edits = made if isinstance(made, list) else [made]
            old, new = self.source(edits[0].path).preview(edits)
        except Unwritable as why:
            return Suggestion(hint, spelled, file, line, [], [], str(why))
        return Suggestion(hint, spelled, edits[0].path, edits[0].start[0], old, new, None, tuple(edits))

    def before(self, op: Operation, text: str) -> Edit:
        """`text` as a new line before the statement that built `op`."""
        loc = op.location
        if not isinstance(loc, FileLineColLoc):
            raise Unwritable(f"{op.name} has no source line to insert {text} before")
        return self.source(loc.filename.data).insert_before(loc.line.data, text)

    def call(self, at: Site | None, name: str) -> tuple[Source, ast.Call]:
        """The call of `name` on the recorded line."""
        file, line = _line(at)
        src = self.source(file)
        return src, src.call_at(line, name)


def _where(op: Operation) -> Site | None:
    loc = op.location
    return (loc.filename.data, loc.line.data) if isinstance(loc, FileLineColLoc) else None


def _what(op: Operation) -> str:
    label = op.attributes.get("pto.label")
    return f"{op.name} '{label.data}'" if isinstance(label, StringAttr) else op.name


def _value(a: Attribute | None) -> str | None:
    """An option's value as PyPTO writes it: `128`, `{-1: 2, 1: 1}` (a `*_setting`'s axes)."""
    if isinstance(a, IntegerAttr):
        return str(a.value.data)
    if not isinstance(a, DictionaryAttr):
        return None
    key = lambda k: k if k.lstrip("-").isdigit() else repr(k)  # noqa: E731
    return "{" + ", ".join(f"{key(k)}: {_value(v)}" for k, v in a.data.items()) + "}"


def _line(at: Site | None) -> Site:
    if at is None:  # (every call the trace records has a frame outside pto: the user's)
        raise Unwritable("the trace recorded no source line for this hint")
    return at


# ----------------------------------------------------------------- the hints, one kind each


def _unroll(sp: _Spelling, own: func.FuncOp, won: func.FuncOp) -> list[Suggestion]:
    old, new = own.attributes.get("pto.unroll"), won.attributes.get("pto.unroll")
    if old == new:
        return []
    lp = sp.sites.loop
    if new is None:
        return [sp.suggest("unroll_list", "(none: the passes choose)", lp.at, _no_removal("the unroll list"))]
    factors = ints(new)
    if sp.sites.whole:
        why = (
            f"the kernel has no token loop (it runs as one tile of all its rows): write one, "
            f"pypto.loop_unroll(0, T, 1, unroll_list={factors}) with views of p rows at idx"
        )
        return [sp.suggest("unroll_list", f"unroll_list={factors}", lp.at, _unwritable(why))]
    if lp.kind == "loop":
        spelled = f"{factors[0]} rows" if len(factors) == 1 else f"unroll_list={factors}"
        return [sp.suggest("the pypto.loop tile", spelled, lp.tile_at, partial(_loop_tile, sp, lp, factors))]
    if lp.unit > 1:  # a loop_unroll over blocks of `unit` rows: its list counts blocks
        if any(f % lp.unit for f in factors):
            why = (
                f"the winner's factors {factors} are not whole {lp.unit}-row blocks: loop over the tokens, "
                f"pypto.loop_unroll(0, T, 1, unroll_list={factors})"
            )
            return [sp.suggest("unroll_list", f"{factors} rows", lp.at, _unwritable(why))]
        factors = [f // lp.unit for f in factors]
    return [sp.suggest("unroll_list", f"unroll_list={factors}", lp.at, partial(_unroll_list, sp, lp.at, factors))]


def _unwritable(why: str) -> Callable[[], Edit]:
    def refuse() -> Edit:
        raise Unwritable(why)

    return refuse


def _unroll_list(sp: _Spelling, at: Site | None, factors: list[int]) -> Edit:
    src, call = sp.call(at, "loop_unroll")
    kw = next((k for k in call.keywords if k.arg == "unroll_list"), None)
    if kw is None:
        return src.add_argument(call, f"unroll_list={factors}")
    src.literal(kw.value, "unroll_list")
    return src.replace(kw.value, str(factors))


def _loop_tile(sp: _Spelling, lp: Loop, factors: list[int]) -> Edit:
    """A pypto.loop's tile is the rows of its views: the name they are written with."""
    if len(factors) != 1:
        raise Unwritable(
            f"pypto.loop takes one tile, the winner unrolls {factors}: write pypto.loop_unroll(0, T, 1, "
            f"unroll_list={factors}) with views of p rows at idx"
        )
    src, view = sp.call(lp.tile_at, "view")
    shape = view.args[1] if len(view.args) > 1 else next((k.value for k in view.keywords if k.arg == "shape"), None)
    rows = shape.elts[0] if isinstance(shape, ast.List | ast.Tuple) and shape.elts else None
    if not isinstance(rows, ast.Name):
        raise Unwritable(f"{src.where(view.lineno)}: the view's rows are not a name (change every use of them)")
    value = src.binding(rows.id, view.lineno)
    src.literal(value, rows.id)
    return src.replace(value, str(factors[0]))


def _no_removal(what: str) -> Callable[[], Edit]:
    return _unwritable(f"the winner leaves {what} to the passes: delete the kernel's hint by hand")


def _options(sp: _Spelling, own: func.FuncOp, won: func.FuncOp) -> list[Suggestion]:
    """The `*_setting` pass options, in jit's pass_options or the set_pass_options call
    that set one last, and the modelled runtime option, in jit's runtime_options."""
    out = []
    settings = _changed(own, won, "pto.options")
    for key, value in settings.items():
        if (at := sp.sites.options.get(key)) is not None:
            spelled = f"{sp.alias}.set_pass_options({key}={value})"
            out.append(sp.suggest(key, spelled, at, partial(_set_option, sp, at, key, value)))
    if jit := {k: v for k, v in settings.items() if k not in sp.sites.options}:
        out.append(_jit_option(sp, "pass_options", jit))
    if runtime := _changed(own, won, "pto.runtime"):
        out.append(_jit_option(sp, "runtime_options", runtime))
    return out


def _changed(own: func.FuncOp, won: func.FuncOp, attr: str) -> dict[str, str | None]:
    """The entries of a dictionary hint that the winner sets otherwise, in PyPTO's
    spelling (None: unset)."""
    old, new = attr_dict(own.attributes.get(attr)), attr_dict(won.attributes.get(attr))
    return {k: _value(new.get(k)) for k in sorted(old.keys() | new.keys()) if old.get(k) != new.get(k)}


def _set_option(sp: _Spelling, at: Site, key: str, value: str | None) -> Edit:
    if value is None:
        raise Unwritable(f"the winner leaves {key} unset: delete it from this set_pass_options by hand")
    src, call = sp.call(at, "set_pass_options")
    kw = next((k for k in call.keywords if k.arg == key), None)
    if kw is None:
        raise Unwritable(f"{src.where(at[1])}: set_pass_options sets {key} otherwise than as a keyword")
    return src.replace(kw.value, value)


def _jit_option(sp: _Spelling, keyword: str, changes: dict[str, str | None]) -> Suggestion:
    """The entries of jit's `keyword` dict (its decorator's) that change."""
    code = sp.sites.fn.__code__
    spelled = f"{keyword}={dict_text(changes)}"
    if dropped := [k for k, v in changes.items() if v is None]:
        spelled += f" without {', '.join(dropped)}"

    def edit() -> Edit:
        src = sp.source(code.co_filename)
        return src.dict_keyword(src.jit_decorator(code.co_name, code.co_firstlineno), keyword, changes)

    return sp.suggest(keyword, spelled, (code.co_filename, code.co_firstlineno), edit)


def _caches(sp: _Spelling, own: func.FuncOp, won: func.FuncOp) -> list[Suggestion]:
    out = []
    for a in own.body.block.args:
        old, new = arg_hint(own, a.index, "pto.cache"), arg_hint(won, a.index, "pto.cache")
        if old == new:
            continue
        name = arg_name(own, a)
        at = sp.sites.cache.get(name)
        if not isinstance(new, CachePolicyAttr):
            out.append(sp.suggest(f"cache of {name}", "(none: the passes choose)", at, _no_removal(f"{name}'s policy")))
            continue
        value = new.data == CachePolicy.NONE_CACHEABLE  # (False: PyPTO's cacheable, pinned `normal`)
        spelled = f"{name}.set_cache_policy({sp.alias}.CachePolicy.NONE_CACHEABLE, {value})"
        out.append(sp.suggest(f"cache of {name}", spelled, at, partial(_cache, sp, at, value, spelled)))
    return out


def _cache(sp: _Spelling, at: Site | None, value: bool, spelled: str) -> Edit:
    if at is None:  # a new call, before the loop: the weight is a parameter, in scope there
        loop = sp.sites.loop.at
        return sp.source(_line(loop)[0]).insert_before(_line(loop)[1], spelled)
    src, call = sp.call(at, "set_cache_policy")
    node = call.args[1] if len(call.args) > 1 else next((k.value for k in call.keywords if k.arg == "value"), None)
    if node is None:
        raise Unwritable(f"{src.where(at[1])}: set_cache_policy without its value")
    src.literal(node, "set_cache_policy's value")
    return src.replace(node, str(value))


def _vec_tiles(sp: _Spelling, own: func.FuncOp, won: func.FuncOp) -> list[Suggestion]:
    """A set_vec_tile_shapes per op the tuner tiles: the call that sets its tile now,
    rewritten, or a new call before the op. Where that call also sets the tile of other
    ops, which the winner keeps, the op gets a call of its own and the old one follows it."""
    out, written = [], dict[Site, str]()
    winner = {o: w.attributes.get("pto.vec_tile") for o, w in _pairs(own, won, (Operation,))}
    for o in (x for x in winner if isinstance(x, VEC_TILED)):
        old, new = o.attributes.get("pto.vec_tile"), winner[o]
        if old == new:
            continue
        what = f"vector tile of {_what(o)}"
        if new is None:
            out.append(sp.suggest(what, "(none: the passes choose)", _where(o), _no_removal("the vector tile")))
            continue
        spelled = f"{sp.alias}.set_vec_tile_shapes({', '.join(map(str, ints(new)))})"
        at = sp.sites.tiles.get(o, (None, None))[0]
        if at is not None and written.get(at) == spelled:
            continue  # the call an earlier op's change rewrote to this already
        edit: Callable[[], Edit | list[Edit]]
        if at is not None and _sets_others(sp, winner, o, at, new):
            edit = partial(_own_call, sp, o, at, spelled)
        else:
            edit = partial(_tile_call, sp, o, at, "vec", [ints(old)] if old else None, [ints(new)], spelled, written)
        out.append(sp.suggest(what, spelled, at or _where(o), edit))
    return out


def _sets_others(sp: _Spelling, winner: dict[Operation, Attribute | None], op: Operation, at: Site, new) -> bool:
    """Whether the call at `at` sets the vector tile of another op, which the winner keeps."""

    def kept(x: Operation) -> bool:
        tile = x.attributes.get("pto.vec_tile")
        return tile is not None and tile == winner[x] != new

    return any(x is not op and sp.sites.tiles.get(x, (None, None))[0] == at and kept(x) for x in winner)


def _cube_tiles(sp: _Spelling, own: func.FuncOp, won: func.FuncOp) -> list[Suggestion]:
    out = []
    for o, w in _pairs(own, won, (pto.MatmulOp,)):
        old, new = o.attributes.get("pto.cube_tile"), w.attributes.get("pto.cube_tile")
        if old == new:
            continue
        what = f"cube tile of {_what(o)}"
        if not isinstance(new, CubeTileAttr):
            out.append(sp.suggest(what, "(none: the passes choose)", _where(o), _no_removal("the cube tile")))
            continue
        spelled = f"{sp.alias}.set_cube_tile_shapes({cube_args(new)})"
        at = sp.sites.tiles.get(o, (None, None))[1]
        olds = cube_values(old) if isinstance(old, CubeTileAttr) else None
        edit = partial(_tile_call, sp, o, at, "cube", olds, cube_values(new), spelled, {})
        out.append(sp.suggest(what, spelled, at or _where(o), edit))
    return out


def _pairs(own: func.FuncOp, won: func.FuncOp, kinds: tuple) -> list[tuple[Operation, Operation]]:
    """The ops of `kinds` in the kernel and in its pinned copy, side by side."""
    return [(o, w) for o, w in zip(own.walk(), won.walk(), strict=True) if isinstance(o, kinds)]


def _tile_call(
    sp: _Spelling, op: Operation, at: Site | None, kind: str, old: list | None, new: list, spelled: str, written: dict
) -> Edit:
    """The `set_{kind}_tile_shapes` call at `at` with the arguments that change rewritten
    (each a literal; those that stay are kept as written), or a new call before `op`
    (the kernel has none for it, or an earlier op's change rewrote it)."""
    if any(f"pto.{kind}_tile" in attr_dict(per) for per in attr_dict(op.attributes.get("pto.by_unroll")).values()):
        raise Unwritable(f"{_what(op)}'s {kind} tile differs by unroll factor: one call cannot set it")
    if at is None or at in written:
        return sp.before(op, spelled)
    src, call = sp.call(at, f"set_{kind}_tile_shapes")
    values = new[0] if kind == "vec" else new  # (the vec tile's shapes are its arguments)
    was = (old[0] if kind == "vec" else old) if old is not None else [None] * len(values)
    params = ("m", "k", "n", "enable_split_k") if kind == "cube" else tuple(map(str, range(len(values))))
    nodes = _arguments(src, call, params)
    texts = []
    for node, v, w in zip(nodes, values, was, strict=True):
        if node is not None and v == w:
            texts.append(src.segment(node))  # as written: `K` stays `K`
            continue
        if node is not None:
            src.literal(node, f"set_{kind}_tile_shapes' argument")
        texts.append(str(v) if kind == "vec" or not isinstance(v, bool) else f"enable_split_k={v}")
    if kind == "cube" and not values[-1] and nodes[-1] is None:
        texts.pop()  # (no split-K: the default, unwritten)
    written[at] = spelled
    return src.replace(call, f"{src.segment(call.func)}({', '.join(texts)})")


def _arguments(src: Source, call: ast.Call, params: tuple[str, ...]) -> list[ast.expr | None]:
    """The argument node of each parameter, by position or keyword (None: not given)."""
    if any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
        raise Unwritable(f"{src.where(call.lineno)}: `{src.segment(call)}` spreads its arguments (*, **)")
    given = {k.arg: k.value for k in call.keywords}
    if len(call.args) > len(params):
        raise Unwritable(f"{src.where(call.lineno)}: `{src.segment(call)}` takes other arguments than the tile's")
    return [call.args[i] if i < len(call.args) else given.get(p) for i, p in enumerate(params)]


def _own_call(sp: _Spelling, op: Operation, at: Site, spelled: str) -> list[Edit]:
    """A call of its own for `op`, and the call that set its tile again after it, for the ops that follow."""
    loc = _where(op)
    src, call = sp.call(at, "set_vec_tile_shapes")
    if loc is None or loc[0] != src.path:
        raise Unwritable(f"{_what(op)} is built outside the file of its set_vec_tile_shapes ({src.where(at[1])})")
    return [src.insert_before(loc[1], spelled), src.insert_after(loc[1], src.segment(call))]


def _host_transposes(own_tile: ModuleOp | None, won_tile: ModuleOp) -> list[Suggestion]:
    """A weight passed transposed (`pto.host_transpose`): PyPTO has no hint for it, and
    the tile level says whether it happens (the passes choose where the hint is unset)."""
    was = _host_transposed(own_tile) if own_tile is not None else set()
    out = []
    for name in sorted(was ^ _host_transposed(won_tile)):
        if name in was:
            spelled, how = f"{name} as it is ([N, K])", "the model transposes it where the passes choose the tiles"
        else:
            spelled, how = f"{name} transposed ([K, N])", f"annotate {name} [K, N], pass {name}.T, drop b_trans"
        out.append(Suggestion(f"layout of {name}", spelled, None, None, [], [], f"PyPTO has no hint for it: {how}"))
    return out


def _body(m: ModuleOp) -> str:
    """The kernel's ops at the tile level: what runs (its arguments' hints are in them:
    a hint that changes nothing there, such as `pto.host_transpose = false`, does not count)."""
    return "\n".join(map(str, signature(m).func.body.block.ops))


def _host_transposed(m: ModuleOp) -> set[str]:
    f = signature(m).func
    return {
        arg_name(f, op.source)  # type: ignore[arg-type]
        for op in f.walk()
        if isinstance(op, tile.LoadOp) and op.host_transpose is not None
    }
