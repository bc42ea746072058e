"""The Python API: build SK-03 kernels (builder or PyPTO-style loop form), compile them
to each level, run them on the machine model. Re-exported from `pto`.

Misuse raises the project's own exceptions, each naming the argument and what it may
be: `BuildError` (building; a ValueError), `CompileError` (compile; `LevelError` for a
level a compilation lacks, also a KeyError), `RunError` (run's arguments; a BuildError
and an InputError), `InputError` (inputs that do not fit a kernel, arrays that do not
fit `check`; a ValueError); `MachineError` is a kernel that fails on the machine model."""

from pto.frontend.api import Compiled, CompileError, LevelError, Result, RunError, compile, run
from pto.frontend.builder import (
    DYN,
    BuildError,
    Kernel,
    Symbol,
    Tensor,
    abs,
    add,
    adds,
    cast,
    cube_tile,
    dequant,
    div,
    exp,
    log,
    matmul,
    maximum,
    maxs,
    minimum,
    mins,
    mul,
    muls,
    quant,
    reciprocal,
    reduce,
    rms_norm,
    rsqrt,
    sqrt,
    sub,
)
from pto.frontend.loop import (
    arg,
    assemble,
    loop_unroll,
    set_cache_policy,
    set_cube_tile_shapes,
    set_pass_options,
    set_semantic_label,
    set_vec_tile_shapes,
    trace,
    view,
)
from pto.frontend.views import concat, reshape, slice, transpose
from pto.interp.golden import check
from pto.interp.machine import MachineError
from pto.interp.run import InputError
from pto.tuner.tune import TuneError, tune

__all__ = [
    "DYN",
    "BuildError",
    "CompileError",
    "Compiled",
    "InputError",
    "Kernel",
    "LevelError",
    "MachineError",
    "Result",
    "RunError",
    "Symbol",
    "Tensor",
    "abs",
    "add",
    "adds",
    "exp",
    "log",
    "reciprocal",
    "arg",
    "assemble",
    "cast",
    "check",
    "compile",
    "concat",
    "cube_tile",
    "dequant",
    "div",
    "maximum",
    "maxs",
    "minimum",
    "mins",
    "loop_unroll",
    "matmul",
    "mul",
    "muls",
    "quant",
    "reduce",
    "reshape",
    "rms_norm",
    "rsqrt",
    "run",
    "set_cache_policy",
    "set_cube_tile_shapes",
    "set_pass_options",
    "set_semantic_label",
    "set_vec_tile_shapes",
    "slice",
    "sqrt",
    "sub",
    "transpose",
    "trace",
    "view",
    "TuneError",
    "tune",
]
