"""Run a kernel at any level: the `pto` level (whole-tensor numpy semantics, the
golden), the `tile` level (token loops and stages, numerics only) or the `npu` level
(numerics and the machine model). Inputs are given in the `pto`-level argument order
and layout at every level; outputs come back in result order.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property, partial

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import DYNAMIC_INDEX, DictionaryAttr, ModuleOp, TensorType
from xdsl.interpreter import Interpreter, InterpreterFunctions
from xdsl.interpreters.arith import ArithFunctions
from xdsl.interpreters.func import FuncFunctions
from xdsl.interpreters.scf import ScfFunctions
from xdsl.utils.exceptions import InterpretationError

from pto.dialects import npu, tile
from pto.dialects.common import Layout, LayoutAttr, elem_name
from pto.dialects.npu import BufferType
from pto.interp import blas
from pto.interp import numerics as nx
from pto.interp.arith import CheckedArithFunctions, FastIndexArithFunctions, IndexArithFunctions
from pto.interp.compiled import Slower
from pto.interp.machine import Machine, MachineError
from pto.interp.npu import NpuFunctions
from pto.interp.pto import PtoFunctions
from pto.interp.report import Report, make_report
from pto.interp.scf import CheckedScfFunctions
from pto.interp.stacked import Unstackable
from pto.interp.tile import TileFunctions
from pto.targets import Target, load_target, target_of

# How the npu level runs: "interp" is xDSL's interpreter, a CoreInterpreter per core on
# an OS thread (the reference); "compiled" is each core program compiled to Python once
# per region (kept for later runs), the cores interleaved in one thread
# (`pto.interp.compiled`). Both give the same outputs and figures.
ENGINES = ("interp", "compiled")
DEFAULT_ENGINE = "compiled"


class InputError(ValueError):
    """Inputs that do not fit the kernel's signature (count, shape, dtype, tokens)."""


@dataclass
class Arg:
    name: str
    elem: str
    shape: tuple[int, ...]  # DYNAMIC_INDEX for the token dim
    host_transpose: bool = False
    nz: bool = False  # stored in fractals (`npu.layout`): the model reads its NZ addresses

    def concrete(self, tokens: int) -> tuple[int, ...]:
        """The shape with `tokens` for the token dim."""
        return tuple(tokens if d == DYNAMIC_INDEX else d for d in self.shape)

    def show(self) -> str:
        return f"{'x'.join('?' if d == DYNAMIC_INDEX else str(d) for d in self.shape)}x{self.elem}"


@dataclass
class Signature:
    func: func.FuncOp
    level: str
    inputs: list[Arg]
    outputs: list[Arg]


@dataclass
class RunResult:
    outputs: list[np.ndarray]
    level: str
    report: Report | None = None
    host_transposes: list[str] = field(default_factory=list)
    # What counts `write_counts` (`pto.interp.writes`), called when they are first read.
    counting: Callable[[], list[np.ndarray]] = field(default=list, repr=False, compare=False)

    @cached_property
    def write_counts(self) -> list[np.ndarray]:
        """How many times each element of each output was written (npu level; empty at
        the others), counted when first read: a tuner or a timing run never reads them,
        and an output's count array was up to a third of a timing-only run."""
        return self.counting()


def kernel(module: ModuleOp) -> func.FuncOp:
    fs = [o for o in module.ops if isinstance(o, func.FuncOp) and not o.is_declaration]
    if len(fs) != 1:
        raise InputError(f"expected one kernel function in the module, found {len(fs)}")
    return fs[0]


def _shape_elem(t) -> tuple[tuple[int, ...], str]:
    if isinstance(t, BufferType):
        return t.get_shape(), t.elem
    if isinstance(t, TensorType):
        return t.get_shape(), elem_name(t.element_type)
    raise InputError(f"kernel arguments must be tensors or !npu.buf, got {t}")


def signature(module: ModuleOp) -> Signature:
    f = kernel(module)
    level = "pto"
    if any(isinstance(a.type, BufferType) for a in f.args):
        level = "npu"
    elif any(isinstance(op, tile.TokenLoopOp) for op in f.walk()):
        level = "tile"
    attrs = f.arg_attrs.data if f.arg_attrs is not None else [DictionaryAttr({})] * len(f.args)
    ins: list[Arg] = []
    outs: list[Arg] = []
    for n, (a, d) in enumerate(zip(f.args, attrs, strict=True)):
        shape, elem = _shape_elem(a.type)
        assert isinstance(d, DictionaryAttr)
        ht = "npu.host_transpose" in d.data
        if ht:
            shape = tuple(reversed(shape))
        nz = isinstance(lay := d.data.get("npu.layout"), LayoutAttr) and lay.data == Layout.NZ
        arg = Arg(f"%{a.name_hint}" if a.name_hint else f"argument {n}", elem, shape, ht, nz)
        (outs if "pto.output" in d.data else ins).append(arg)
    if level == "pto":
        for n, t in enumerate(f.function_type.outputs.data):
            shape, elem = _shape_elem(t)
            outs.append(Arg(f"result {n}", elem, shape))
    elif not outs:
        raise InputError(f"a {level}-level kernel marks its output arguments with {{pto.output}}; this one has none")
    return Signature(f, level, ins, outs)


def check_inputs(sig: Signature, inputs: list[np.ndarray]) -> int | None:
    """Validate inputs against the signature; returns the token count (None if static)."""
    if len(inputs) != len(sig.inputs):
        names = ", ".join(a.name for a in sig.inputs)
        raise InputError(f"the kernel takes {len(sig.inputs)} inputs ({names}), got {len(inputs)}")
    tokens: int | None = None
    for a, x in zip(sig.inputs, inputs, strict=True):
        want = nx.DTYPES[a.elem]
        if x.dtype != want:
            raise InputError(f"input {a.name} must be {a.show()}, got dtype {x.dtype}")
        if x.ndim != len(a.shape) or any(d != DYNAMIC_INDEX and d != s for d, s in zip(a.shape, x.shape, strict=True)):
            raise InputError(f"input {a.name} must be {a.show()}, got shape {'x'.join(map(str, x.shape))}")
        for d, s in zip(a.shape, x.shape, strict=True):
            if d == DYNAMIC_INDEX:
                if tokens is not None and s != tokens:
                    raise InputError(f"input {a.name} has {s} tokens but an earlier input has {tokens}")
                tokens = s
    return tokens


def random_inputs(sig: Signature, tokens: int, seed: int = 0) -> list[np.ndarray]:
    """Inputs of the right dtypes: floats ~ N(0, 1), int8 uniform, int32 small."""
    rng = np.random.default_rng(seed)
    out = []
    for a in sig.inputs:
        shape = a.concrete(tokens)
        if a.elem == "i8":
            x = rng.integers(-128, 128, shape).astype(np.int8)
        elif a.elem == "i32":
            x = rng.integers(-1000, 1000, shape).astype(np.int32)
        else:
            x = rng.standard_normal(shape, dtype=np.float32).astype(nx.DTYPES[a.elem])
        out.append(x)
    return out


def unread_inputs(sig: Signature, tokens: int) -> list[np.ndarray]:
    """Inputs of the right shapes and dtypes for a timing-only run, which never reads
    them: zeros, whose pages the system only maps (random data of a large weight took
    longer to make than the run)."""
    return [np.zeros(a.concrete(tokens), nx.DTYPES[a.elem]) for a in sig.inputs]


def made_inputs(sig: Signature, tokens: int, seed: int, numerics: bool) -> list[np.ndarray]:
    """The inputs of a run given only a token count: random from `seed`, or unread
    zeros for a timing-only run."""
    return random_inputs(sig, tokens, seed) if numerics else unread_inputs(sig, tokens)


def _interpreter(module: ModuleOp, machine: Machine | None, engine: str = "interp") -> Interpreter:
    it = Interpreter(module)
    functions: list[tuple[InterpreterFunctions, bool]] = [
        (fns, False)
        for fns in (
            FuncFunctions(),
            ArithFunctions(),
            ScfFunctions(),
            IndexArithFunctions(),
            PtoFunctions(),
            TileFunctions(),
        )
    ]
    functions += [(FastIndexArithFunctions(), True), (CheckedArithFunctions(), True), (CheckedScfFunctions(), True)]
    if machine is not None:
        functions.append((NpuFunctions(machine, engine, functions), False))
    for fns, override in functions:
        it.register_implementations(fns, override=override)
    return it


@np.errstate(all="ignore")  # inf/NaN from overflowing inputs are results, not warnings
def run(
    module: ModuleOp,
    inputs: list[np.ndarray],
    target: str | Target | None = None,
    l2_size: int | None = None,
    trace: bool = False,
    engine: str | None = None,
    numerics: bool = True,
) -> RunResult:
    """Run the module's kernel on `inputs` (never modified) with `engine` (one of
    `ENGINES`; default `DEFAULT_ENGINE`). `numerics=False` runs the npu level for its
    report only: the outputs are left as they start (NaN). Raises InputError for inputs
    that do not fit, MachineError for a kernel that fails at run time."""
    engine = engine or DEFAULT_ENGINE
    if engine not in ENGINES:
        raise ValueError(f"unknown engine {engine!r} (known: {', '.join(ENGINES)})")
    sig = signature(module)
    tokens = check_inputs(sig, inputs) or 0
    if sig.level == "pto":
        res = _call(_interpreter(module, None), sig, [x.copy() for x in inputs])
        return RunResult([np.asarray(r) for r in res], "pto")
    if sig.level == "tile":
        outs = [nx.poison(a.concrete(tokens), nx.DTYPES[a.elem]) for a in sig.outputs]
        _call(_interpreter(module, None), sig, [*(x.copy() for x in inputs), *outs])
        return RunResult(outs, "tile")
    tgt = target if isinstance(target, Target) else load_target(target) if target else target_of(sig.func)
    if target:
        check_paths(module, tgt)
    while engine == "compiled" and numerics:
        try:  # numbers by task group (`pto.interp.stacked`), where they are the per-task ones
            return _run_npu(module, sig, inputs, tgt, l2_size, trace, engine, numerics, stacking=True)
        except Unstackable:
            break
        except Slower:  # (a graph's per-task trial, now known slower: it runs stacked this time)
            continue
    return _run_npu(module, sig, inputs, tgt, l2_size, trace, engine, numerics)


def _run_npu(
    module: ModuleOp,
    sig: Signature,
    inputs: list[np.ndarray],
    tgt: Target,
    l2_size: int | None,
    trace: bool,
    engine: str,
    numerics: bool,
    stacking: bool = False,
) -> RunResult:
    """`run` at the npu level, on a new machine and new outputs."""
    tokens = check_inputs(sig, inputs) or 0
    outs = [nx.poison(a.concrete(tokens), nx.DTYPES[a.elem]) for a in sig.outputs]
    m = Machine(tgt, l2_size, trace, numerics)
    m.stacking = stacking
    args, notes = [], []
    for a, x in zip(sig.inputs, inputs, strict=True):
        if a.host_transpose:
            x = x.T
            notes.append(
                f"host transposed {a.name} once before the kernel: {'x'.join(map(str, x.shape[::-1]))} "
                f"-> {'x'.join(map(str, x.shape))} ({x.nbytes} bytes, not timed)"
            )
        args.append(m.gm(a.name.lstrip("%"), _gm_input(x, numerics), nz=a.nz))
    m.inputs = list(args)
    gm_outs = [m.gm(a.name.lstrip("%"), o) for a, o in zip(sig.outputs, outs, strict=True)]
    m.counted.update((g.name, g.array.shape) for g in gm_outs)
    with blas.one_thread():  # tile-sized products: threads only cost (`pto.interp.blas`)
        _call(_interpreter(module, m, engine), sig, [*args, *gm_outs])
    m.l2.flush()
    return RunResult(
        outs, "npu", make_report(m), notes, partial(_in_order, m.write_counts(), [g.name for g in gm_outs])
    )


def check_paths(module: ModuleOp, tgt: Target) -> None:
    """A kernel run on a target given to `run`: the verifier checked its copies' data
    paths against the kernel's own target, so check them against this one."""
    for op in module.walk():
        if isinstance(op, npu.DmaOp | npu.FixpipeOp):
            src, dst = (npu.buf(v).mem.value for v in (op.src, op.dst))
            if not tgt.has_path(src, dst):
                raise MachineError(op, f"target {tgt.name} has no data path {src} -> {dst}")


def _gm_input(x: np.ndarray, numerics: bool) -> np.ndarray:
    """An input as the kernel's GM holds it: a copy (the caller's array is never
    modified), or in a timing-only run, which writes no GM data, a read-only view."""
    if numerics:
        return np.ascontiguousarray(x).copy()
    view = np.ascontiguousarray(x).view()
    view.setflags(write=False)
    return view


def _in_order(count: Callable[[], dict[str, np.ndarray]], names: list[str]) -> list[np.ndarray]:
    """The write counts `count` makes, of the outputs `names`, in that order."""
    counts = count()
    return [counts[n] for n in names]


def _call(it: Interpreter, sig: Signature, args: list):
    try:
        return it.call_op(sig.func, tuple(args))
    except InterpretationError as e:
        raise MachineError(None, f"cannot interpret the kernel: {e}") from None
