"""`pto.pypto`: PyPTO 0.2.0's Python API for SK-03 kernels, run through this project.

    import pto.pypto as pypto

    @pypto.frontend.jit(pass_options={"vec_nbuffer_setting": {0: 2}})
    def kernel(x: pypto.Tensor([pypto.DYNAMIC, 4096], pypto.DT_BF16), ...,
               out: pypto.Tensor([pypto.DYNAMIC, 1024], pypto.DT_BF16)):
        for idx, p in pypto.loop_unroll(0, x.shape[0], 1, unroll_list=[128, 64, 1]):
            ...
            pypto.assemble(y, [idx, 0], out)

    kernel(x, gamma, w, out)    # numpy (or torch CPU) arrays; out is written in place
    kernel.report               # the model's report of that run

The body is traced into `pto`-level IR (`kernel.trace(...)` returns it), lowered with
the default pipeline and run on the npu-level model. docs/pypto.md lists every PyPTO
name SK-03 kernels use and whether it is supported, accepted but not modelled, or
refused; a PyPTO name outside that set raises a BuildError at the user's line.
"""

from __future__ import annotations

from types import FunctionType

from pto.frontend.builder import BuildError
from pto.pypto import experimental, frontend
from pto.pypto.cube import matmul
from pto.pypto.errors import LoweringWarning, NotModelledWarning, unsupported_name
from pto.pypto.extras import (
    ceil,
    clip,
    clone,
    expand_clone,
    floor,
    lrelu,
    maximum,
    minimum,
    neg,
    ones,
    pow,  # noqa: A004
    relu,
    round,
    softmax,
    tensor,
    transpose,
    trunc,
    unsqueeze,
    var,
)
from pto.pypto.hints import (
    get_cube_tile_shapes,
    get_vec_tile_shapes,
    set_codegen_options,
    set_cube_tile_shapes,
    set_debug_options,
    set_host_options,
    set_pass_options,
    set_semantic_label,
    set_vec_tile_shapes,
    set_verify_options,
)
from pto.pypto.loops import loop, loop_unroll, view
from pto.pypto.ops import (
    abs,
    add,
    amax,
    amin,
    cast,
    concat,
    div,
    exp,
    full,
    log,
    log1p,
    mul,
    reciprocal,
    reshape,
    rms_norm,
    rsqrt,
    sigmoid,
    sqrt,
    sub,
    sum,
    zeros,
)
from pto.pypto.outputs import assemble
from pto.pypto.scopes import options
from pto.pypto.select import eq, ge, greater, gt, le, logical_and, logical_not, lt, ne, where
from pto.pypto.sym import (
    ceil_div,  # noqa: A004
    symbolic_scalar,
)
from pto.pypto.sym import sym_max as max
from pto.pypto.sym import sym_min as min
from pto.pypto.tensor import Tensor
from pto.pypto.types import (
    CachePolicy,
    CastMode,
    DataType,
    Element,
    ReLuType,
    RunMode,
    SaturationMode,
    StatusType,
    TileOpFormat,
    TransMode,
)
from pto.tracebacks import api_boundary

ceildiv = ceil_div
SymbolicScalar = symbolic_scalar  # (PyPTO's class; its one use in kernels is building one)
DYNAMIC, STATIC, DYN = StatusType.DYNAMIC, StatusType.STATIC, StatusType.DYN
globals().update({d.name: d for d in DataType})  # DT_BF16, DT_FP32, ...

# PyPTO 0.2.0's other public names: each is refused, when used, at the user's line.
OTHER_PYPTO_NAMES = (
    "arange argsort bitwise_and bitwise_left_shift bitwise_not bitwise_or bitwise_right_shift bitwise_xor "
    "cbrt comparison cond conv copysign cos cumsum exp2 expand_exp_dif expm1 "
    "fillpad fmod gather gathermask gcd hypot index_add index_add_ index_put_ "
    "index_select isfinite log10 log2 mrgsort "
    "one_hot pad prelu prod remainder scaled_mm scatter scatter_ scatter_update "
    "sign signbit sin sort32 topk tril triu set_matrix_size "
    "set_conv_tile_shapes from_torch "
    # its configuration, symbols and types beyond the ones SK-03 kernels use
    "bytes_of convert_to_element function get_codegen_options get_conv_tile_shapes "
    "get_current_function get_current_scope get_debug_options get_global_config get_host_options "
    "get_last_function get_options_tree get_pass_config get_pass_configs get_pass_default_config "
    "get_pass_options get_scatter_mode get_verify_options is_loop_begin is_loop_end "
    "pass_verify_print pass_verify_save reset_options "
    "set_global_config set_options set_pass_config set_pass_default_config "
    "set_verify_golden_data to_sym to_syms verify "
    "AtomicType CompStage ConfigScope ConvParams ConvTile CubeTile Function OpType OutType "
    "PassConfigKey PassConfigs ReduceMode ScatterMode SymInt"
).split()


__all__ = [
    "BuildError",
    "LoweringWarning",
    "NotModelledWarning",
    "experimental",
    "frontend",
    "Tensor",
    "DataType",
    "Element",
    "CastMode",
    "SaturationMode",
    "ReLuType",
    "TransMode",
    "CachePolicy",
    "StatusType",
    "RunMode",
    "TileOpFormat",
    "DYNAMIC",
    "STATIC",
    "DYN",
    "loop",
    "options",
    "loop_unroll",
    "view",
    "assemble",
    "set_semantic_label",
    "set_vec_tile_shapes",
    "get_vec_tile_shapes",
    "get_cube_tile_shapes",
    "set_cube_tile_shapes",
    "set_codegen_options",
    "set_host_options",
    "set_debug_options",
    "set_verify_options",
    "symbolic_scalar",
    "SymbolicScalar",
    "set_pass_options",
    "abs",
    "add",
    "pow",
    "amax",
    "amin",
    "cast",
    "clip",
    "clone",
    "concat",
    "div",
    "exp",
    "expand_clone",
    "log",
    "log1p",
    "full",
    "matmul",
    "maximum",
    "neg",
    "ones",
    "relu",
    "lrelu",
    "var",
    "softmax",
    "round",
    "floor",
    "ceil",
    "trunc",
    "minimum",
    "mul",
    "reciprocal",
    "reshape",
    "rms_norm",
    "rsqrt",
    "sigmoid",
    "sqrt",
    "sub",
    "sum",
    "tensor",
    "transpose",
    "unsqueeze",
    "zeros",
    "min",
    "max",
    "ceil_div",
    "ceildiv",
    "eq",
    "ne",
    "gt",
    "greater",
    "ge",
    "lt",
    "le",
    "logical_not",
    "logical_and",
    "where",
    *(d.name for d in DataType),
]


# Each public function is an entry point of its own when called outside a kernel (a test's
# setup, a misplaced op): its refusal ends at the user's line there too.
for _name in __all__:
    if isinstance(globals()[_name], FunctionType):
        globals()[_name] = api_boundary(globals()[_name])


def __getattr__(name: str):
    return unsupported_name(__name__, name, tuple(OTHER_PYPTO_NAMES))
