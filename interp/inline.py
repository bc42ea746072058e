"""Writing a function of the machine model out into a compiled program.

The pipe timing of both engines is one set of Python functions (`Core.begin`,
`Core.commit`, the flags, `npu_ops.gm_copy`, ...): the interp engine calls them, and
the compiled engine's compiler (`pto.interp.codegen`) writes them out into its programs
with this module, specialised to what it knows when compiling. A change to the model is
then made once, in those functions.

Writing a call out evaluates the function's body over a mix of values:

- a value known when compiling (an op, a pipe, a buffer's shape or dependence key): any
  Python object. An expression of known values only is evaluated here, an `if` on one
  keeps one branch, a `for` over a known sequence is unrolled, and a known value that
  must appear in the source does so as a name bound in the program's namespace
  (`Target.const`), so that programs of one structure are one source;
- a value known only at run time (`Rt`): the Python expression that computes it;
- an object with some attributes known (`Obj`): a buffer whose key and shape are known
  and whose array is not;
- a tuple of any of these (the keys an op reads).

What the program keeps differently from the machine's own objects is said by the
target's tables: attribute chains it holds in locals (`aliases`: `core.machine` is `m`),
the core's pipe timing tables (`tables`: each entry is a `Target.state`), the methods
that are written out too (`methods`), calls whose result is the same for every run on a
core (`hoisted`: the target's figures, evaluated once per core), and counters it adds up
when compiling (`counted`: the issue slots). A function written out keeps to what is
handled here; anything else is an `InlineError`, so that a change to the model that the
compiler cannot follow fails when compiling, not silently.
"""

from __future__ import annotations

import ast
import builtins
import functools
import inspect
import operator
import textwrap
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol


class InlineError(Exception):
    """The function uses Python that the compiler does not write out."""


@dataclass(frozen=True)
class Rt:
    """A value known only at run time: the expression that computes it."""

    expr: str


@dataclass(frozen=True)
class Hoisted(Rt):
    """A value the same for every run of the program on one core, named once per core.
    `pure`: a number (a figure of the target), so expressions of it are hoisted too; not
    pure: an object of the core (a flag's list), whose contents change."""

    pure: bool = True


@dataclass(frozen=True)
class Entry(Rt):
    """An entry of a core's pipe timing table: it changes as ops are booked, so a
    function's parameter bound to one is copied, not aliased."""


@dataclass(frozen=True)
class Final(Rt):
    """A local of a function written out that nothing assigns again: its result, bound
    to a name without a copy."""


@dataclass(frozen=True)
class Table(Rt):
    """One of the core's pipe timing tables (`Core.free`, ...), by its local's name."""


@dataclass(eq=False)
class Obj:
    """A run-time object (`expr`, None if it is never needed whole) whose `attrs` are
    known."""

    expr: str | None
    attrs: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class _Method:
    fn: Callable
    self: Any


class Target(Protocol):
    """What writing a function out needs of the program being compiled."""

    indent: int

    def emit(self, line: str) -> None: ...
    def const(self, value: object) -> str: ...
    def hoist(self, expr: str) -> str: ...
    def state(self, table: str, key: object) -> str: ...
    def fresh(self) -> int: ...
    def emitted(self) -> int: ...


@dataclass
class Rules:
    """How the program holds the machine's objects (the module docstring)."""

    aliases: dict[str, str]
    tables: dict[str, str]
    methods: dict[str, Callable]
    hoisted: tuple[str, ...]
    pure: tuple[str, ...]
    counted: dict[str, Callable[[int], None]]
    # Per alias, the class of the object it names, whose instance attributes are figures
    # of the target (a `cost.line`): read once per core, not per op, like its calls.
    figures: dict[str, type] = field(default_factory=dict)
    # Attribute chains that name a method of an object the core keeps for its life (the
    # machine's `hbm_time`): the bound method is taken once per core.
    bound: tuple[str, ...] = ()


_UNSET = object()

# The operators folded here or written into the source: Python's own, by node type.
_BINARY = {
    ast.Add: ("+", operator.add),
    ast.Sub: ("-", operator.sub),
    ast.Mult: ("*", operator.mul),
    ast.Div: ("/", operator.truediv),
    ast.FloorDiv: ("//", operator.floordiv),
    ast.Mod: ("%", operator.mod),
}
_UNARY = {ast.Not: ("not ", operator.not_), ast.USub: ("-", operator.neg)}
_COMPARE = {
    ast.Eq: ("==", operator.eq),
    ast.NotEq: ("!=", operator.ne),
    ast.Lt: ("<", operator.lt),
    ast.LtE: ("<=", operator.le),
    ast.Gt: (">", operator.gt),
    ast.GtE: (">=", operator.ge),
    ast.Is: ("is", operator.is_),
    ast.IsNot: ("is not", operator.is_not),
}
# Functions called here when every argument is known: they have no effects.
_FOLDED = (tuple, len, max, min, reversed, isinstance, int, float, bool)


def _unknown(v) -> bool:
    """Whether `v` is not wholly known here (a run-time value, or an object of one)."""
    if isinstance(v, tuple):
        return any(_unknown(x) for x in v)
    return isinstance(v, Obj | Rt)


def _runtime(v) -> bool:
    """Whether `v` holds a run-time value (an `Obj` does not: its known part is used)."""
    return isinstance(v, Rt) or (isinstance(v, tuple) and any(_runtime(x) for x in v))


def _plain(v) -> bool:
    """Known, or a run-time value that is a name: evaluating it has no effect."""
    return not _unknown(v) or (isinstance(v, Rt) and v.expr.isidentifier())


def _per_core(v) -> bool:
    """Known, or a pure per-core value: an expression of such values is hoisted."""
    if isinstance(v, tuple):
        return all(_per_core(x) for x in v)
    return (isinstance(v, Hoisted) and v.pure) or not isinstance(v, Rt | Obj)


@functools.cache
def _tree(fn: Callable) -> ast.FunctionDef:
    tree = ast.parse(textwrap.dedent(inspect.getsource(fn))).body[0]
    assert isinstance(tree, ast.FunctionDef)
    return tree


_LOADS: dict[ast.expr, ast.expr] = {}


def _as_load(node: ast.expr) -> ast.expr:
    """An assignment's target as an expression that reads it (the same place)."""
    if node not in _LOADS:
        copy = ast.parse(ast.unparse(node), mode="eval").body
        _LOADS[node] = copy
    return _LOADS[node]


@functools.cache
def _params(fn: Callable) -> tuple[list[str], dict[str, Any]]:
    """The names of `fn`'s parameters and their defaults (positional or keyword only)."""
    params = inspect.signature(fn).parameters.values()
    defaults = {p.name: p.default for p in params if p.default is not inspect.Parameter.empty}
    return [p.name for p in params], defaults


def source(out: Target, v) -> str:
    """A value in the program's source: a known one by a name bound to it."""
    if isinstance(v, Rt):
        return v.expr
    if isinstance(v, Obj):
        if v.expr is None:
            raise InlineError("an object without a run-time name is used whole")
        return v.expr
    if isinstance(v, tuple) and _unknown(v):
        return f"({''.join(f'{source(out, x)}, ' for x in v)})"
    if v is None or isinstance(v, bool):
        return repr(v)
    return out.const(v)


def call_out(out: Target, fn: Callable, *args) -> str:
    """The source of a call of `fn(*args)`, not written out."""
    return f"{out.const(fn)}({', '.join(source(out, a) for a in args)})"


def write_out(out: Target, rules: Rules, fn: Callable, *args, **kwargs):
    """Write `fn(*args, **kwargs)` out into `out`; returns the value of its result."""
    return _Frame(out, rules, fn).call(args, kwargs)


class _Frame:
    """One function being written out: its names' values, its locals named apart."""

    def __init__(self, out: Target, rules: Rules, fn: Callable):
        self.out, self.rules, self.fn = out, rules, fn
        self.suffix = out.fresh()
        self.env: dict[str, Any] = {}
        self.branch = 0  # how deep in `if`s decided at run time
        self.result: Any = None

    def call(self, args: tuple, kwargs: dict):
        names, defaults = _params(self.fn)
        given = {**defaults, **dict(zip(names, args, strict=False)), **kwargs}
        if len(args) > len(names) or set(given) != set(names):
            raise InlineError(f"{self.fn.__qualname__}: called with {len(args)} arguments and {sorted(kwargs)}")
        for name in names:
            v = given[name]
            if isinstance(v, Entry) or (isinstance(v, Rt) and not isinstance(v, Hoisted) and not v.expr.isidentifier()):
                self.out.emit(f"{self.local(name)} = {self.src(v)}")  # evaluated once
                v = Rt(self.local(name))
            self.env[name] = v
        body = _tree(self.fn).body
        for i, stmt in enumerate(body):
            if isinstance(stmt, ast.Return) and i != len(body) - 1:
                raise InlineError(f"{self.fn.__qualname__}: a return before the end")
            self.stmt(stmt)
        r = self.result
        return Final(r.expr) if type(r) is Rt and r.expr.isidentifier() else r

    def local(self, name: str) -> str:
        return f"{name}_{self.suffix}"

    def fail(self, node: ast.AST) -> InlineError:
        return InlineError(f"{self.fn.__qualname__}: cannot write out `{ast.unparse(node)}`")

    # -- values -----------------------------------------------------------------------

    def lookup(self, name: str):
        if name in self.env:
            return self.env[name]
        if name in self.fn.__globals__:
            return self.fn.__globals__[name]
        if hasattr(builtins, name):
            return getattr(builtins, name)
        raise InlineError(f"{self.fn.__qualname__}: unknown name {name}")

    def src(self, v) -> str:
        """`v` in the program's source."""
        return source(self.out, v)

    def value(self, node: ast.expr):
        """The value of an expression: folded where its operands are known."""
        if type(node) is ast.Name:  # (half the nodes: no dispatch)
            return self.env[node.id] if node.id in self.env else self.lookup(node.id)
        method = _HANDLERS.get(type(node))
        if method is None:
            raise self.fail(node)
        return method(self, node)

    def sequence(self, node: ast.Starred) -> tuple:
        """`*seq`: a sequence of known length."""
        seq = self.value(node.value)
        if not isinstance(seq, tuple | list):
            raise self.fail(node)
        return tuple(seq)

    def v_Name(self, node: ast.Name):
        return self.lookup(node.id)

    def v_Constant(self, node: ast.Constant):
        return node.value

    def v_Attribute(self, node: ast.Attribute):
        base = self.value(node.value)
        if isinstance(base, Obj) and node.attr in base.attrs:
            return base.attrs[node.attr]
        if not isinstance(base, Rt | Obj):
            return getattr(base, node.attr)
        path = f"{self.src(base)}.{node.attr}"
        if path in self.rules.aliases:  # a name of the program's head, set once per run
            return Hoisted(self.rules.aliases[path], pure=False)
        if path in self.rules.tables:
            return Table(self.rules.tables[path])
        if path in self.rules.methods:
            return _Method(self.rules.methods[path], base)
        if path in self.rules.bound:
            return Hoisted(self.out.hoist(path), pure=False)
        cls = self.rules.figures.get(self.src(base))
        if cls is not None and not hasattr(cls, node.attr):  # (an instance attribute, not a method)
            return Hoisted(self.out.hoist(path))
        return Rt(path)

    def v_Subscript(self, node: ast.Subscript):
        base, key = self.value(node.value), self.value(node.slice)
        if not _unknown(base) and not _unknown(key):
            return base[key]
        if isinstance(base, tuple) and not _unknown(key) and all(map(_plain, base)):
            return base[key]  # (the items it drops are names or known: nothing is left unevaluated)
        if isinstance(base, Table):
            return Entry(self.out.state(base.expr, key) if not _runtime(key) else f"{base.expr}[{self.src(key)}]")
        return Rt(f"{self.src(base)}[{self.src(key)}]")

    def v_Call(self, node: ast.Call):
        fn = self.value(node.func)
        args: list = []
        for a in node.args:
            if isinstance(a, ast.Starred):
                args.extend(self.sequence(a))
            else:
                args.append(self.value(a))
        kwargs = {k.arg: self.value(k.value) for k in node.keywords if k.arg is not None}
        if len(kwargs) != len(node.keywords):
            raise self.fail(node)
        if isinstance(fn, _Method):
            return _Frame(self.out, self.rules, fn.fn).call((fn.self, *args), kwargs)
        if fn in _FOLDED and not any(map(_unknown, [*args, *kwargs.values()])):
            return fn(*args, **kwargs)
        named = [f"{k}={self.src(v)}" for k, v in kwargs.items()]
        text = f"{self.src(fn)}({', '.join([*map(self.src, args), *named])})"
        if isinstance(fn, Rt) and all(_per_core(a) for a in [*args, *kwargs.values()]):
            for prefix, pure in [(p, True) for p in self.rules.pure] + [(p, False) for p in self.rules.hoisted]:
                if fn.expr.startswith(prefix):
                    return Hoisted(self.out.hoist(text), pure)
        return Rt(text)

    def operation(self, operands: list, text: str):
        """A run-time operation: hoisted if its operands are per-core values."""
        if all(_per_core(v) for v in operands):
            return Hoisted(self.out.hoist(text))
        return Rt(f"({text})")

    def v_BinOp(self, node: ast.BinOp):
        left, right = self.value(node.left), self.value(node.right)
        symbol, fn = _BINARY[type(node.op)]
        if not _unknown(left) and not _unknown(right):
            return fn(left, right)
        if isinstance(node.op, ast.Add) and isinstance(left, tuple) and isinstance(right, tuple):
            return left + right  # (sequences of known length)
        return self.operation([left, right], f"{self.src(left)} {symbol} {self.src(right)}")

    def v_UnaryOp(self, node: ast.UnaryOp):
        v = self.value(node.operand)
        symbol, fn = _UNARY[type(node.op)]
        if not _unknown(v):
            return fn(v)
        return self.operation([v], f"{symbol}{self.src(v)}")

    def v_Compare(self, node: ast.Compare):
        values = [self.value(node.left), *map(self.value, node.comparators)]
        ops = [_COMPARE[type(op)] for op in node.ops]
        if not any(map(_unknown, values)):
            return all(fn(a, b) for (_, fn), a, b in zip(ops, values, values[1:], strict=False))
        text = self.src(values[0])
        for (symbol, _), v in zip(ops, values[1:], strict=True):
            text += f" {symbol} {self.src(v)}"
        return self.operation(values, text)

    def v_BoolOp(self, node: ast.BoolOp):
        """`a and b`: a known operand decides the rest or drops out (it is only tested:
        its value as such is not kept)."""
        word = " and " if isinstance(node.op, ast.And) else " or "
        parts = []
        for expr in node.values:
            v = self.value(expr)
            if _runtime(v) or isinstance(v, Obj):
                parts.append(self.src(v))
            elif bool(v) != (word == " and "):  # false in an `and`, true in an `or`: decided
                return Rt(f"({word.join([*parts, self.src(v)])})") if parts else v
        return Rt(f"({word.join(parts)})") if parts else word == " and "

    def v_IfExp(self, node: ast.IfExp):
        test = self.value(node.test)
        if not _runtime(test):
            return self.value(node.body if test else node.orelse)
        body, orelse = self.value(node.body), self.value(node.orelse)
        return Rt(f"({self.src(body)} if {self.src(test)} else {self.src(orelse)})")

    def v_Tuple(self, node: ast.Tuple | ast.List):
        out: list = []
        for e in node.elts:
            if isinstance(e, ast.Starred):
                out.extend(self.sequence(e))
            else:
                out.append(self.value(e))
        return tuple(out)

    v_List = v_Tuple

    def v_Set(self, node: ast.Set):
        raise self.fail(node)

    def v_ListComp(self, node: ast.ListComp | ast.GeneratorExp):
        """`[e for x in seq]` (or a generator of it) over a known sequence: one value per
        item."""
        (gen,) = node.generators
        seq = self.value(gen.iter)
        if gen.ifs or gen.is_async or not isinstance(gen.target, ast.Name) or not isinstance(seq, tuple | list):
            raise self.fail(node)
        outer = self.env.get(gen.target.id, _UNSET)
        out = []
        for item in seq:
            self.env[gen.target.id] = item
            out.append(self.value(node.elt))
        if outer is _UNSET:
            self.env.pop(gen.target.id, None)
        else:
            self.env[gen.target.id] = outer
        return tuple(out)

    v_GeneratorExp = v_ListComp

    def v_NamedExpr(self, node: ast.NamedExpr):
        v = self.value(node.value)
        name = self.local(node.target.id)
        self.env[node.target.id] = Rt(name)
        return Rt(f"({name} := {self.src(v)})")

    def v_JoinedStr(self, node: ast.JoinedStr):
        text = ""
        for p in node.values:
            if isinstance(p, ast.FormattedValue):
                if p.format_spec is not None or p.conversion != -1:
                    raise self.fail(node)
                text += f"{{{self.src(self.value(p.value))}}}"
            else:
                assert isinstance(p, ast.Constant)
                text += str(p.value).replace("{", "{{").replace("}", "}}")
        return Rt(f"f{text!r}")

    # -- statements ---------------------------------------------------------------------

    def block(self, body: list[ast.stmt]) -> None:
        """Statements under an `if` decided at run time, indented."""
        self.out.indent += 1
        self.branch += 1
        lines = self.out.emitted()
        for s in body:
            self.stmt(s)
        if self.out.emitted() == lines:
            self.out.emit("pass")
        self.branch -= 1
        self.out.indent -= 1

    def stmt(self, node: ast.stmt) -> None:
        method = _HANDLERS.get(type(node))
        if method is None:
            raise self.fail(node)
        method(self, node)

    def target(self, node: ast.expr, v) -> str | None:
        """The source to assign `v` to, or None if `v` is bound here (a known value)."""
        if isinstance(node, ast.Name):
            if (isinstance(v, Final | Hoisted) or not _runtime(v)) and not self.branch:
                self.env[node.id] = v
                return None
            name = self.local(node.id)
            if self.branch and self.env.get(node.id) != Rt(name):
                raise InlineError(f"{self.fn.__qualname__}: {node.id} is first given a value in a branch")
            self.env[node.id] = Rt(name)
            return name
        if isinstance(node, ast.Tuple):
            if not _runtime(v) and not self.branch:
                for t, x in zip(node.elts, v, strict=True):
                    self.target(t, x)
                return None
            names = [self.target(t, Rt("?")) for t in node.elts]
            return ", ".join(n or "_" for n in names)
        if isinstance(node, ast.Subscript | ast.Attribute):
            where = self.value(_as_load(node))
            if not isinstance(where, Rt):
                raise self.fail(node)
            return where.expr
        raise self.fail(node)

    def s_Assign(self, node: ast.Assign) -> None:
        v = self.value(node.value)
        targets = [t for t in (self.target(n, v) for n in node.targets) if t is not None]
        if targets:
            self.out.emit(f"{' = '.join(targets)} = {self.src(v)}")

    def s_AugAssign(self, node: ast.AugAssign) -> None:
        t = node.target
        if isinstance(t, ast.Name) and self.env.get(t.id) != Rt(self.local(t.id)):
            # `x op= v` with x a known value or an expression, not a local yet: `x = x op v`
            return self.s_Assign(ast.Assign([t], ast.BinOp(ast.Name(t.id, ast.Load()), node.op, node.value)))
        v = self.value(node.value)
        where = (
            self.target(node.target, Rt("?"))
            if isinstance(node.target, ast.Name)
            else self.value(_as_load(node.target)).expr
        )
        if where in self.rules.counted and isinstance(node.op, ast.Add) and isinstance(v, int):
            self.rules.counted[where](v)
            return
        self.out.emit(f"{where} {_BINARY[type(node.op)][0]}= {self.src(v)}")

    def s_Expr(self, node: ast.Expr) -> None:
        v = self.value(node.value)
        if isinstance(v, Rt) and not isinstance(v, Hoisted | Final):  # a call for its effect
            self.out.emit(v.expr)

    def s_If(self, node: ast.If) -> None:
        test = self.value(node.test)
        if not _unknown(test):
            for s in node.body if test else node.orelse:
                self.stmt(s)
            return
        self.out.emit(f"if {self.src(test)}:")
        self.block(node.body)
        if node.orelse:
            self.out.emit("else:")
            self.block(node.orelse)

    def s_For(self, node: ast.For) -> None:
        seq = self.value(node.iter)
        if not isinstance(seq, tuple | list) or node.orelse or not isinstance(node.target, ast.Name):
            raise self.fail(node)
        for item in seq:
            self.env[node.target.id] = item
            for s in node.body:
                self.stmt(s)

    def s_Return(self, node: ast.Return) -> None:
        if self.branch:
            raise self.fail(node)
        self.result = self.value(node.value) if node.value is not None else None

    def s_Raise(self, node: ast.Raise) -> None:
        if node.exc is None or node.cause is not None:
            raise self.fail(node)
        self.out.emit(f"raise {self.src(self.value(node.exc))}")

    def s_Pass(self, node: ast.Pass) -> None:
        pass


# The method of `_Frame` for each kind of node (`v_Name` for `ast.Name`, `s_If` for `ast.If`).
_HANDLERS: dict[type, Callable] = {
    getattr(ast, name[2:]): method for name, method in vars(_Frame).items() if name[:2] in ("v_", "s_")
}
