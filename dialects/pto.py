"""The `pto` dialect: the tensor level, what the algorithm engineer means.

A kernel is a `func.func` over builtin `tensor` values that returns its results (value
semantics). The token axis (dim 0 of activations) is usually dynamic (`?`); there are
no loops here: the token loop appears at the `tile` level. Each op is one whole-tensor
step of SK-03 (RMSNorm, MatMul, casts, INT8 quant/dequant, elementwise work, and the
column slices, concatenations, reshapes and transposes of a post-processing tail such
as RoPE, interleaved or not).

What this level checks: the math. Shapes agree (with trailing broadcasting for the
elementwise ops), matmul element types follow the cube's table, and a cast is one the
hardware has, with a round mode that means something for it.

Hints a user may pin, as discardable attributes the passes honour (checked by
`verify_hints`):
- on the kernel `func.func`: `pto.target = "ascend910b1"`, `pto.form = #pto.form<c_v>`, `pto.unroll = array<i64: ...>`,
  `pto.options = {cube_l1_reuse_setting = {"-1" = 2, "1" = 1}, vec_nbuffer_setting = ...,
  cube_nbuffer_setting = ...}`, `pto.runtime = {stitch_function_max_num = 128}` (PyPTO's
  runtime option: loop bodies sewn into one device task; without it, all of them),
  `pto.tail` (the last unroll factor also takes the remainder, as one partial tile:
  PyPTO's `pypto.loop` over `TILE`-row views with a `valid_shape`);
- on a kernel argument: `pto.cache = #pto.cache<none_cacheable>`; `pto.layout =
  #pto.layout<nz>` (PyPTO's `format=TILEOP_NZ`: a weight stored in fractals, read only
  as a matmul's weight operand, directly or through a `pto.view` of whole fractals, its
  shape whole fractals);
- on an op: `pto.label = "q-rmsnorm"`, `pto.vec_tile = array<i64: 4, 4096>`, and on a
  matmul `pto.cube_tile = #pto.cube_tile<m = [128, 128], k = [256, 1024], n = [256, 256]>`;
  `pto.by_unroll = {"16" = {pto.cube_tile = ...}}` gives the tile shapes for the loop of
  one unroll factor (PyPTO kernels choose them from the factor: `if tile_t <= 32:`).

The attributes of this level (cache policy, round mode, cube tile shape) are carried
down unchanged: they live in `pto.dialects.common`, the vocabulary of every level.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import ClassVar

from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    I64,
    DenseArrayBase,
    DictionaryAttr,
    Float32Type,
    FloatAttr,
    IntegerAttr,
    IntegerType,
    StringAttr,
    TensorType,
    UnitAttr,
    f32,
    i1,
    i64,
)
from xdsl.dialects.func import FuncOp
from xdsl.ir import Attribute, BlockArgument, Dialect, Operation, OpResult, SSAValue
from xdsl.irdl import (
    IRDLOperation,
    irdl_op_definition,
    operand_def,
    opt_operand_def,
    opt_prop_def,
    prop_def,
    result_def,
    traits_def,
    var_operand_def,
)
from xdsl.parser import Parser, UnresolvedOperand
from xdsl.printer import Printer
from xdsl.traits import Pure
from xdsl.utils.exceptions import VerifyException

from pto.dialects.common import (
    FLOAT_ELEMS,
    MATMUL_OUT,
    PREDICATES,
    CachePolicyAttr,
    CubeTileAttr,
    FormAttr,
    Layout,
    LayoutAttr,
    ReduceKind,
    ReduceKindAttr,
    RoundMode,
    RoundModeAttr,
    broadcasts_to,
    check_cast,
    dims_str,
    elem_name,
    nz_error,
    nz_window_error,
    parse_rounding,
    parse_types_tail,
    parse_window,
    print_rounding,
    print_types_tail,
    print_window,
)
from pto.targets import UnknownTargetError, load_target, target_of


def tensor_type(v: SSAValue) -> TensorType[Attribute]:
    assert isinstance(v.type, TensorType)
    return v.type


class ShapedOp(IRDLOperation):
    """Base of the compute ops shared by `pto` (any shape) and `tile` (static shapes)."""

    STATIC_SHAPES: ClassVar[bool] = False

    def check_static(self) -> None:
        if not self.STATIC_SHAPES:
            return
        for v in (*self.operands, *self.results):
            if isinstance(v.type, TensorType) and not v.type.has_static_shape():
                raise VerifyException(f"'{self.name}' works on static tile shapes, got {v.type}")

    def verify_(self) -> None:
        self.check_static()
        self.verify_shapes()

    def verify_shapes(self) -> None:
        pass


def _same_shape(op: Operation, a: TensorType[Attribute], b: TensorType[Attribute], what: str):
    if a.get_shape() != b.get_shape():
        raise VerifyException(
            f"'{op.name}' {what}: shape {dims_str(a.get_shape())} differs from {dims_str(b.get_shape())}"
        )


# ------------------------------------------------------------------ ops (shared bases)


def _has_last_axis(op: Operation, x: TensorType) -> None:
    """Ops over the last axis (norms, reductions, per-token quant) need one."""
    if x.get_num_dims() < 1:
        raise VerifyException(f"'{op.name}' works along the last axis: its input needs rank >= 1, got rank 0")


class RmsNormBase(ShapedOp):
    """`x / sqrt(mean(x^2, last axis) + eps) [* gamma]`, computed in f32.

    Operands: `input` (float tensor, rank >= 1), optional `gamma` (rank 1, length = last
    dim). Result: same shape, element type f32 or the input's."""

    input = operand_def(TensorType)
    gamma = opt_operand_def(TensorType)
    eps = prop_def(FloatAttr[Float32Type])
    result = result_def(TensorType)
    traits = traits_def(Pure())

    assembly_format = (
        "$input (`,` $gamma^)? `eps` `=` $eps attr-dict `:` type($input) (`,` type($gamma)^)? `->` type($result)"
    )

    def __init__(self, input: SSAValue, gamma: SSAValue | None, eps: float, result_type: Attribute):
        super().__init__(
            operands=[input, gamma],
            properties={"eps": FloatAttr(eps, f32)},
            result_types=[result_type],
        )

    def verify_shapes(self) -> None:
        x, r = tensor_type(self.input), tensor_type(self.result)
        _has_last_axis(self, x)
        _same_shape(self, x, r, "result")
        xe, re_ = elem_name(x.element_type), elem_name(r.element_type)
        if xe not in FLOAT_ELEMS:
            raise VerifyException(f"'{self.name}' needs a float input, got {xe}")
        if re_ not in ("f32", xe):
            raise VerifyException(f"'{self.name}' result must be f32 or {xe}, got {re_}")
        if not 0 < self.eps.value.data < math.inf:
            raise VerifyException(f"'{self.name}' eps must be positive and finite")
        if self.gamma is not None:
            g = tensor_type(self.gamma)
            if g.get_num_dims() != 1 or g.get_shape()[0] != x.get_shape()[-1]:
                raise VerifyException(
                    f"'{self.name}' gamma must be a vector of length {x.get_shape()[-1]} "
                    f"(the last dim of the input), got {dims_str(g.get_shape())}"
                )
            if elem_name(g.element_type) not in FLOAT_ELEMS:
                raise VerifyException(f"'{self.name}' gamma must be float")


class MatmulBase(ShapedOp):
    """`lhs[M,K] x rhs[K,N] -> [M,N]` on the cube (`a_trans`: lhs is [K,M]; `b_trans`: rhs
    is [N,K]). Element types follow the cube's table: bf16/f16 -> f32 or the same type,
    i8 -> i32, f32 -> f32; both inputs have the same element type."""

    lhs = operand_def(TensorType)
    rhs = operand_def(TensorType)
    a_trans = opt_prop_def(UnitAttr)
    b_trans = opt_prop_def(UnitAttr)
    result = result_def(TensorType)
    traits = traits_def(Pure())

    assembly_format = (
        "$lhs `,` $rhs (`a_trans` $a_trans^)? (`b_trans` $b_trans^)? attr-dict "
        "`:` type($lhs) `,` type($rhs) `->` type($result)"
    )

    def __init__(
        self, lhs: SSAValue, rhs: SSAValue, result_type: Attribute, a_trans: bool = False, b_trans: bool = False
    ):
        props: dict[str, Attribute] = {}
        if a_trans:
            props["a_trans"] = UnitAttr()
        if b_trans:
            props["b_trans"] = UnitAttr()
        super().__init__(operands=[lhs, rhs], properties=props, result_types=[result_type])

    def mkn(self) -> tuple[int, int, int, int]:
        """(M, K of lhs, K of rhs, N) after transposition."""
        a, b = tensor_type(self.lhs).get_shape(), tensor_type(self.rhs).get_shape()
        m, ka = (a[1], a[0]) if self.a_trans else (a[0], a[1])
        kb, n = (b[1], b[0]) if self.b_trans else (b[0], b[1])
        return m, ka, kb, n

    def verify_shapes(self) -> None:
        a, b, c = tensor_type(self.lhs), tensor_type(self.rhs), tensor_type(self.result)
        for t, what in ((a, "lhs"), (b, "rhs"), (c, "result")):
            if t.get_num_dims() != 2:
                raise VerifyException(f"'{self.name}' {what} must be rank 2, got rank {t.get_num_dims()}")
        m, ka, kb, n = self.mkn()
        if ka != kb:
            raise VerifyException(
                f"'{self.name}' reduction dims differ: lhs K = {dims_str([ka])}, rhs K = {dims_str([kb])}"
            )
        if c.get_shape() != (m, n):
            raise VerifyException(f"'{self.name}' result must be {dims_str((m, n))}, got {dims_str(c.get_shape())}")
        ae, be, ce = (elem_name(t.element_type) for t in (a, b, c))
        if ae != be:
            raise VerifyException(f"'{self.name}' operand element types differ: {ae} vs {be}")
        if ae not in MATMUL_OUT:
            raise VerifyException(f"'{self.name}' the cube takes bf16, f16, i8 or f32 inputs, got {ae}")
        if ce not in MATMUL_OUT[ae]:
            raise VerifyException(f"'{self.name}' {ae} inputs give {' or '.join(MATMUL_OUT[ae])} results, got {ce}")


class CastBase(ShapedOp):
    """Element-type conversion with a round mode (`none` for exact conversions) and
    optional saturation. Only conversions the hardware has verify (see `CASTS`)."""

    input = operand_def(TensorType)
    round = prop_def(RoundModeAttr)
    sat = opt_prop_def(UnitAttr)
    result = result_def(TensorType)
    traits = traits_def(Pure())

    # `%y = pto.cast %x trunc sat : tensor<..xf16> -> tensor<..xi8>`
    @classmethod
    def parse(cls, parser: Parser):
        x = parser.parse_unresolved_operand()
        mode, sat = parse_rounding(parser)
        attrs, src, dst = parse_types_tail(parser)
        op = cls(parser.resolve_operand(x, src), dst, mode, sat)
        op.attributes.update(attrs)
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_operand(self.input)
        print_rounding(printer, self.round, self.sat)
        print_types_tail(printer, self.attributes, self.input.type, self.result.type)

    def __init__(self, input: SSAValue, result_type: Attribute, round: RoundMode, sat: bool = False):
        props: dict[str, Attribute] = {"round": RoundModeAttr(round)}
        if sat:
            props["sat"] = UnitAttr()
        super().__init__(operands=[input], properties=props, result_types=[result_type])

    def verify_shapes(self) -> None:
        x, r = tensor_type(self.input), tensor_type(self.result)
        _same_shape(self, x, r, "result")
        msg = check_cast(elem_name(x.element_type), elem_name(r.element_type), self.round.data, self.sat is not None)
        if msg:
            raise VerifyException(f"'{self.name}' {msg}")


class BinaryBase(ShapedOp):
    """Elementwise `lhs op rhs` with trailing broadcasting of either operand to the
    result shape; all three have the same element type."""

    lhs = operand_def(TensorType)
    rhs = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure())

    assembly_format = "$lhs `,` $rhs attr-dict `:` type($lhs) `,` type($rhs) `->` type($result)"

    def __init__(self, lhs: SSAValue, rhs: SSAValue, result_type: Attribute):
        super().__init__(operands=[lhs, rhs], result_types=[result_type])

    def verify_shapes(self) -> None:
        a, b, r = tensor_type(self.lhs), tensor_type(self.rhs), tensor_type(self.result)
        for t, what in ((a, "lhs"), (b, "rhs")):
            if not broadcasts_to(t.get_shape(), r.get_shape()):
                raise VerifyException(
                    f"'{self.name}' {what} shape {dims_str(t.get_shape())} does not broadcast to result shape "
                    f"{dims_str(r.get_shape())}"
                )
        if not (a.element_type == b.element_type == r.element_type):
            raise VerifyException(f"'{self.name}' operands and result must share one element type")
        if elem_name(r.element_type) not in (*FLOAT_ELEMS, "i32"):
            raise VerifyException(f"'{self.name}' works on bf16, f16, f32 or i32")


class UnaryBase(ShapedOp):
    """Elementwise float function; the result has the input's type."""

    input = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure())

    assembly_format = "$input attr-dict `:` type($input) `->` type($result)"

    def __init__(self, input: SSAValue, result_type: Attribute | None = None):
        super().__init__(operands=[input], result_types=[result_type or input.type])

    def verify_shapes(self) -> None:
        x, r = tensor_type(self.input), tensor_type(self.result)
        if x != r:
            raise VerifyException(f"'{self.name}' result type must equal the input type {x}")
        if elem_name(x.element_type) not in FLOAT_ELEMS:
            raise VerifyException(f"'{self.name}' needs a float input")


class ScalarBase(ShapedOp):
    """Elementwise op with an f32 immediate; the result has the input's type."""

    input = operand_def(TensorType)
    scalar = prop_def(FloatAttr[Float32Type])
    result = result_def(TensorType)
    traits = traits_def(Pure())

    assembly_format = "$input `,` $scalar attr-dict `:` type($input) `->` type($result)"

    def __init__(self, input: SSAValue, scalar: float):
        super().__init__(operands=[input], properties={"scalar": FloatAttr(scalar, f32)}, result_types=[input.type])

    def verify_shapes(self) -> None:
        if self.input.type != self.result.type:
            raise VerifyException(f"'{self.name}' result type must equal the input type {self.input.type}")
        if elem_name(tensor_type(self.input).element_type) not in FLOAT_ELEMS:
            raise VerifyException(f"'{self.name}' needs a float input")


SelectItem = SSAValue | float


class SelectBase(ShapedOp):
    """`where(lhs PRED rhs, on_true, on_false)` elementwise (PyPTO's `where(eq(a, b), x, y)`:
    a comparison is only ever the condition of a select here). `rhs`, `on_true` and
    `on_false` are each a tensor or an f32 immediate; the tensors broadcast (trailing)
    to the result. The compared operands share one float type; the result has the
    selected operands' type.

    `%r = pto.select gt %x, 0.0, %x, %y : tensor<?x64xf32>, tensor<?x64xf32> -> tensor<?x64xf32>`
    (the types are the tensor operands' in order). `form` says which of the four are
    tensors (`t`) and which immediates (`s`); `scalars` holds the immediates in order."""

    inputs = var_operand_def(TensorType)
    predicate = prop_def(StringAttr)
    form = prop_def(StringAttr)
    scalars = prop_def(DenseArrayBase)
    result = result_def(TensorType)
    traits = traits_def(Pure())

    def __init__(self, predicate: str, items: Sequence[SelectItem], result_type: Attribute):
        tensors = [x for x in items if isinstance(x, SSAValue)]
        consts = [float(x) for x in items if not isinstance(x, SSAValue)]
        super().__init__(
            operands=[tensors],
            properties={
                "predicate": StringAttr(predicate),
                "form": StringAttr("".join("t" if isinstance(x, SSAValue) else "s" for x in items)),
                "scalars": DenseArrayBase.from_list(f32, consts),
            },
            result_types=[result_type],
        )

    def items(self) -> list[SelectItem]:
        """lhs, rhs, on_true, on_false: each an operand or an immediate."""
        tensors, consts = iter(self.inputs), iter(self.scalars.get_values())
        return [next(tensors) if c == "t" else float(next(consts)) for c in self.form.data]

    @classmethod
    def parse(cls, parser: Parser):
        pred = parser.parse_identifier()

        def item() -> UnresolvedOperand | float:
            v = parser.parse_optional_unresolved_operand()
            return v if v is not None else float(parser.parse_number(context_msg=" (a tensor or an f32 number)"))

        raw = parser.parse_comma_separated_list(parser.Delimiter.NONE, item)
        if len(raw) != 4:
            parser.raise_error(f"'{cls.name}' takes lhs, rhs, on_true, on_false: 4 items, got {len(raw)}")
        attrs = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        types = parser.parse_comma_separated_list(parser.Delimiter.NONE, parser.parse_type)
        parser.parse_punctuation("->")
        result = parser.parse_type()
        tensors = [x for x in raw if isinstance(x, UnresolvedOperand)]
        if len(types) != len(tensors):
            parser.raise_error(f"expected {len(tensors)} operand types, got {len(types)}")
        resolved = iter(parser.resolve_operand(x, t) for x, t in zip(tensors, types, strict=True))
        items = [x if isinstance(x, float) else next(resolved) for x in raw]
        op = cls(pred, items, result)
        op.attributes.update(attrs)
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(f" {self.predicate.data} ")
        for i, x in enumerate(self.items()):
            printer.print_string(", " if i else "")
            if isinstance(x, SSAValue):
                printer.print_operand(x)
            else:
                printer.print_float(x, f32)
        printer.print_op_attributes(self.attributes)
        printer.print_string(" : " + ", ".join(str(v.type) for v in self.inputs) + f" -> {self.result.type}")

    def verify_shapes(self) -> None:
        form, r = self.form.data, tensor_type(self.result)
        if self.predicate.data not in PREDICATES:
            raise VerifyException(f"'{self.name}' predicate must be one of {', '.join(PREDICATES)}")
        if len(form) != 4 or set(form) - {"t", "s"} or form[0] != "t":
            raise VerifyException(f"'{self.name}' form must be 4 of t (a tensor) or s (an immediate), lhs a tensor")
        if form.count("t") != len(self.inputs) or form.count("s") != len(self.scalars.get_values()):
            raise VerifyException(f"'{self.name}' has {len(self.inputs)} operands and form {form}")
        if self.scalars.elt_type != f32:
            raise VerifyException(f"'{self.name}' immediates are f32")
        items = self.items()
        for x, what in zip(items, ("lhs", "rhs", "on_true", "on_false"), strict=True):
            if isinstance(x, SSAValue) and not broadcasts_to(tensor_type(x).get_shape(), r.get_shape()):
                raise VerifyException(
                    f"'{self.name}' {what} shape {dims_str(tensor_type(x).get_shape())} does not broadcast to "
                    f"result shape {dims_str(r.get_shape())}"
                )
        compared = {tensor_type(x).element_type for x in items[:2] if isinstance(x, SSAValue)}
        selected = {tensor_type(x).element_type for x in items[2:] if isinstance(x, SSAValue)} | {r.element_type}
        if len(compared) != 1 or elem_name(next(iter(compared))) not in FLOAT_ELEMS:
            raise VerifyException(f"'{self.name}' compares two values of one float type")
        if len(selected) != 1 or elem_name(r.element_type) not in FLOAT_ELEMS:
            raise VerifyException(f"'{self.name}' selects values of the result's float type")


class ReduceBase(ShapedOp):
    """Row reduction over the last axis, keeping it as size 1: `[.., K] -> [.., 1]`.
    Kinds: sum, max, min, mean, absmax (max of |x|)."""

    input = operand_def(TensorType)
    kind = prop_def(ReduceKindAttr)
    result = result_def(TensorType)
    traits = traits_def(Pure())

    # `%s = pto.reduce sum %x : tensor<?x64xf32> -> tensor<?x1xf32>`
    @classmethod
    def parse(cls, parser: Parser):
        kind = parser.parse_str_enum(ReduceKind)
        x = parser.parse_unresolved_operand()
        attrs, src, dst = parse_types_tail(parser)
        op = cls.create(
            operands=[parser.resolve_operand(x, src)],
            properties={"kind": ReduceKindAttr(kind)},
            result_types=[dst],
            attributes=attrs,
        )
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(" " + self.kind.data.value + " ")
        printer.print_operand(self.input)
        print_types_tail(printer, self.attributes, self.input.type, self.result.type)

    def __init__(self, input: SSAValue, kind: ReduceKind):
        t = tensor_type(input)
        rt = TensorType(t.element_type, [*t.get_shape()[:-1], 1])
        super().__init__(operands=[input], properties={"kind": ReduceKindAttr(kind)}, result_types=[rt])

    def verify_shapes(self) -> None:
        x, r = tensor_type(self.input), tensor_type(self.result)
        _has_last_axis(self, x)
        want = (*x.get_shape()[:-1], 1)
        if r.get_shape() != want:
            raise VerifyException(f"'{self.name}' result must be {dims_str(want)}, got {dims_str(r.get_shape())}")
        if x.element_type != r.element_type:
            raise VerifyException(f"'{self.name}' result element type must equal the input's")
        if elem_name(x.element_type) not in FLOAT_ELEMS:
            raise VerifyException(f"'{self.name}' needs a float input")


class QuantBase(ShapedOp):
    """Symmetric per-token INT8 quantisation of a float `[.., K]` tensor:
    `scale = amax(|x|) / 127` per row (`[.., 1]` f32) and
    `q = saturate_int8(trunc(round(x * 127 / amax)))` (`[.., K]` i8). `wrap`: the last
    conversion does not saturate (DeepSeek's own quant writes it so); x * 127 / amax is
    within [-127, 127], so it differs only on a row whose amax is 0 or not finite (NaN
    quotients), where it wraps as the hardware's conversion does. `order`: the kernel
    wrote the quotient otherwise, each f32 step rounding, which moves values across
    the int8 rounding steps: `"scale_first"` is `x * (127 / amax)` (GLM-4.5's
    `full(127) / amax` first), `"divide_first"` `x / amax * 127`,
    `"reciprocal_first"` `x * (1 / amax) * 127`, `"reciprocal_scale_first"`
    `x * ((1 / amax) * 127)`."""

    ORDERS: ClassVar[tuple[str, ...]] = ("scale_first", "divide_first", "reciprocal_first", "reciprocal_scale_first")

    input = operand_def(TensorType)
    wrap = opt_prop_def(UnitAttr)
    order = opt_prop_def(StringAttr)
    quantized = result_def(TensorType)
    scale = result_def(TensorType)
    traits = traits_def(Pure())

    assembly_format = (
        "$input (`wrap` $wrap^)? (`order` $order^)? attr-dict `:` type($input) `->` type($quantized) `,` type($scale)"
    )

    def __init__(self, input: SSAValue, wrap: bool = False, order: str | None = None):
        t = tensor_type(input)
        q = TensorType(IntegerType(8), t.get_shape())
        s = TensorType(f32, [*t.get_shape()[:-1], 1])
        props: dict[str, Attribute] = {"wrap": UnitAttr()} if wrap else {}
        if order is not None:
            props["order"] = StringAttr(order)
        super().__init__(operands=[input], properties=props, result_types=[q, s])

    @property
    def order_name(self) -> str | None:
        return None if self.order is None else self.order.data

    @property
    def scale_row(self) -> bool:
        """Whether the quotient computes `c / amax` per row first (a `[rows, 1]` f32
        buffer for it, which the UB planners and the emitters both count)."""
        return self.order_name in ("scale_first", "reciprocal_first", "reciprocal_scale_first")

    def verify_shapes(self) -> None:
        if self.order is not None and self.order.data not in self.ORDERS:
            names = ", ".join(self.ORDERS)
            raise VerifyException(f"'{self.name}' order must be one of {names}, got {self.order.data!r}")
        x, q, s = tensor_type(self.input), tensor_type(self.quantized), tensor_type(self.scale)
        _has_last_axis(self, x)
        if elem_name(x.element_type) not in FLOAT_ELEMS:
            raise VerifyException(f"'{self.name}' needs a float input")
        _same_shape(self, x, q, "quantized result")
        if elem_name(q.element_type) != "i8":
            raise VerifyException(f"'{self.name}' quantized result must be i8")
        want = (*x.get_shape()[:-1], 1)
        if s.get_shape() != want or elem_name(s.element_type) != "f32":
            raise VerifyException(f"'{self.name}' scale must be {dims_str(want)}xf32")


class DequantBase(ShapedOp):
    """`f32(acc) * act_scale[row] [* w_scale[col]]`: undo per-token activation and
    per-channel weight scales after an int8 matmul. `acc` is `[M, N]` i32 (or f32);
    `act_scale` is `[M, 1]` f32; `w_scale` is `[N, 1]`, `[1, N]` or `[N]` f32.
    `w_scale_first`: `f32(acc) * w_scale[col] * act_scale[row]`, the weight scale
    multiplied in first (f32 products round differently in the other order, and a
    dequant keeps the order its kernel wrote). `scales_product`: `f32(acc) *
    (act_scale[row] * w_scale[col])`, the scales' product first."""

    input = operand_def(TensorType)
    act_scale = operand_def(TensorType)
    w_scale = opt_operand_def(TensorType)
    w_scale_first = opt_prop_def(UnitAttr)
    scales_product = opt_prop_def(UnitAttr)
    result = result_def(TensorType)
    traits = traits_def(Pure())

    assembly_format = (
        "$input `,` $act_scale (`,` $w_scale^)? (`w_scale_first` $w_scale_first^)? "
        "(`scales_product` $scales_product^)? attr-dict "
        "`:` type($input) `,` type($act_scale) (`,` type($w_scale)^)? `->` type($result)"
    )

    def __init__(
        self,
        input: SSAValue,
        act_scale: SSAValue,
        w_scale: SSAValue | None = None,
        w_scale_first: bool = False,
        scales_product: bool = False,
    ):
        t = tensor_type(input)
        props: dict[str, Attribute] = {"w_scale_first": UnitAttr()} if w_scale_first else {}
        if scales_product:
            props["scales_product"] = UnitAttr()
        super().__init__(
            operands=[input, act_scale, w_scale], properties=props, result_types=[TensorType(f32, t.get_shape())]
        )

    def verify_shapes(self) -> None:
        x, a, r = tensor_type(self.input), tensor_type(self.act_scale), tensor_type(self.result)
        if x.get_num_dims() != 2:
            raise VerifyException(f"'{self.name}' input must be rank 2")
        m, n = x.get_shape()
        if elem_name(x.element_type) not in ("i32", "f32"):
            raise VerifyException(f"'{self.name}' input must be i32 or f32")
        _same_shape(self, x, r, "result")
        if elem_name(r.element_type) != "f32":
            raise VerifyException(f"'{self.name}' result must be f32")
        if a.get_shape() != (m, 1) or elem_name(a.element_type) != "f32":
            raise VerifyException(f"'{self.name}' act_scale must be {dims_str((m, 1))}xf32, got {a}")
        if self.w_scale is not None:
            w = tensor_type(self.w_scale)
            if w.get_shape() not in ((n, 1), (1, n), (n,)) or elem_name(w.element_type) != "f32":
                raise VerifyException(f"'{self.name}' w_scale must be {n}x1, 1x{n} or {n} f32, got {w}")
        elif self.w_scale_first is not None or self.scales_product is not None:
            raise VerifyException(f"'{self.name}' w_scale_first and scales_product need a w_scale")
        if self.w_scale_first is not None and self.scales_product is not None:
            raise VerifyException(f"'{self.name}' is w_scale_first or scales_product, not both")


class ReshapeBase(ShapedOp):
    """Reshape with the same element count; a dynamic token dim must stay dim 0 and the
    static dims must then multiply to the same count. `inplace`: no data movement (the
    result aliases the input)."""

    input = operand_def(TensorType)
    inplace = opt_prop_def(UnitAttr)
    result = result_def(TensorType)
    traits = traits_def(Pure())

    assembly_format = "$input (`inplace` $inplace^)? attr-dict `:` type($input) `->` type($result)"

    def __init__(self, input: SSAValue, result_type: Attribute, inplace: bool = False):
        props: dict[str, Attribute] = {"inplace": UnitAttr()} if inplace else {}
        super().__init__(operands=[input], properties=props, result_types=[result_type])

    def verify_shapes(self) -> None:
        x, r = tensor_type(self.input), tensor_type(self.result)
        if x.element_type != r.element_type:
            raise VerifyException(f"'{self.name}' cannot change the element type")
        xs, rs = list(x.get_shape()), list(r.get_shape())
        xdyn, rdyn = xs.count(DYNAMIC_INDEX), rs.count(DYNAMIC_INDEX)
        if xdyn or rdyn:
            if not (xdyn == rdyn == 1 and xs[0] == rs[0] == DYNAMIC_INDEX):
                raise VerifyException(f"'{self.name}' a dynamic dim must be dim 0 of both input and result")
            xs, rs = xs[1:], rs[1:]
        px, pr = 1, 1
        for d in xs:
            px *= d
        for d in rs:
            pr *= d
        if px != pr:
            raise VerifyException(
                f"'{self.name}' element count differs: {dims_str(x.get_shape())} vs {dims_str(r.get_shape())}"
            )


class TransposeBase(ShapedOp):
    """The last two dims swapped, every leading dim kept:
    `%y = pto.transpose %x : tensor<?x32x2xf32> -> tensor<?x2x32xf32>`. On a token tile
    (dim 0 the tokens) it permutes each token's columns: the interleaved RoPE's
    `[t, D/2, 2] -> [t, 2, D/2]` (evens, then odds). Rank 3 or more, so that the token
    dim is never one of the two; the swapped dims are static."""

    input = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure())

    assembly_format = "$input attr-dict `:` type($input) `->` type($result)"

    def __init__(self, input: SSAValue):
        t = tensor_type(input)
        *lead, a, b = t.get_shape()
        super().__init__(operands=[input], result_types=[TensorType(t.element_type, [*lead, b, a])])

    def verify_shapes(self) -> None:
        x, r = tensor_type(self.input), tensor_type(self.result)
        xs, rs = list(x.get_shape()), list(r.get_shape())
        if len(xs) < TRANSPOSE_MIN_RANK:
            raise VerifyException(
                f"'{self.name}' swaps the last two dims of a tensor of rank >= {TRANSPOSE_MIN_RANK} "
                f"(dim 0 the tokens), got rank {len(xs)}"
            )
        if DYNAMIC_INDEX in xs[-2:]:
            raise VerifyException(f"'{self.name}' needs static last two dims, got {dims_str(xs)}")
        if rs != [*xs[:-2], xs[-1], xs[-2]]:
            raise VerifyException(
                f"'{self.name}' result {dims_str(rs)} is not the input {dims_str(xs)} with its last two dims swapped"
            )
        if x.element_type != r.element_type:
            raise VerifyException(f"'{self.name}' cannot change the element type")


TRANSPOSE_MIN_RANK = 3


def _leading_and_elem(op: Operation, x: TensorType, r: TensorType, what: str) -> None:
    """Column ops (slice, concat) keep every dim but the last and the element type."""
    if x.get_num_dims() < 1:
        raise VerifyException(f"'{op.name}' works along the last axis: {what} needs rank >= 1, got rank 0")
    if x.get_num_dims() != r.get_num_dims() or x.get_shape()[:-1] != r.get_shape()[:-1]:
        raise VerifyException(
            f"'{op.name}' {what} {dims_str(x.get_shape())} and result {dims_str(r.get_shape())} "
            "must have the same leading dims (only the last axis differs)"
        )
    if x.element_type != r.element_type:
        raise VerifyException(
            f"'{op.name}' {what} element type {elem_name(x.element_type)} differs from the result's "
            f"{elem_name(r.element_type)}"
        )


class SliceBase(ShapedOp):
    """Columns `[offset, offset + W)` of the last axis, W the result's last dim:
    `%k = pto.slice %kv at 512 : tensor<?x576xbf16> -> tensor<?x64xbf16>`. The leading
    dims and the element type are the input's; the columns lie inside the input."""

    input = operand_def(TensorType)
    offset = prop_def(IntegerAttr[I64])
    result = result_def(TensorType)
    traits = traits_def(Pure())

    assembly_format = "$input `at` $offset attr-dict `:` type($input) `->` type($result)"

    def __init__(self, input: SSAValue, offset: int, width: int):
        t = tensor_type(input)
        rt = TensorType(t.element_type, [*t.get_shape()[:-1], width])
        super().__init__(operands=[input], properties={"offset": IntegerAttr(offset, i64)}, result_types=[rt])

    @property
    def start(self) -> int:
        return self.offset.value.data

    @property
    def width(self) -> int:
        return tensor_type(self.result).get_shape()[-1]

    def verify_shapes(self) -> None:
        x, r = tensor_type(self.input), tensor_type(self.result)
        _leading_and_elem(self, x, r, "input")
        k, w, off = x.get_shape()[-1], r.get_shape()[-1], self.start
        if k == DYNAMIC_INDEX or w == DYNAMIC_INDEX:
            raise VerifyException(f"'{self.name}' needs a static last dim in input and result")
        if off < 0:
            raise VerifyException(f"'{self.name}' offset must be >= 0, got {off}")
        if off + w > k:
            raise VerifyException(f"'{self.name}' columns [{off}, {off + w}) are outside the input's {k} columns")


class ViewBase(ShapedOp):
    """A static window of a weight (a tensor without a token axis), in place: the
    result's shape at `offsets`, e.g. rows of a stacked weight
    `%w1 = pto.view %w at [512, 0] : tensor<1024x4096xbf16> -> tensor<512x4096xbf16>`
    or columns of a `[K, N]` one (PyPTO's `view` of a weight). No data moves: the
    window is read where it lies in the weight."""

    input = operand_def(TensorType)
    offsets = prop_def(DenseArrayBase)
    result = result_def(TensorType)
    traits = traits_def(Pure())

    def __init__(self, input: SSAValue, offsets: Sequence[int], shape: Sequence[int]):
        t = tensor_type(input)
        super().__init__(
            operands=[input],
            properties={"offsets": DenseArrayBase.from_list(i64, list(offsets))},
            result_types=[TensorType(t.element_type, list(shape))],
        )

    @property
    def starts(self) -> list[int]:
        return [int(o) for o in self.offsets.get_values()]

    @classmethod
    def parse(cls, parser: Parser):
        return parse_window(cls, parser)

    def print(self, printer: Printer) -> None:
        print_window(printer, self.input, self.starts, self.result, self.attributes)

    def verify_shapes(self) -> None:
        x, r = tensor_type(self.input), tensor_type(self.result)
        if not x.has_static_shape() or not r.has_static_shape():
            raise VerifyException(
                f"'{self.name}' views a weight: input and result need static shapes, "
                f"got {x} -> {r} (token tiles are views of the token loop)"
            )
        if x.element_type != r.element_type:
            raise VerifyException(f"'{self.name}' cannot change the element type")
        xs, rs, offs = x.get_shape(), r.get_shape(), self.starts
        if not xs or len(rs) != len(xs) or len(offs) != len(xs):
            raise VerifyException(
                f"'{self.name}' needs one offset per dim and the input's rank: "
                f"{len(offs)} offsets, {dims_str(xs)} -> {dims_str(rs)}"
            )
        for ax, (o, n, d) in enumerate(zip(offs, rs, xs, strict=True)):
            if o < 0 or n < 1 or o + n > d:
                raise VerifyException(f"'{self.name}' [{o}, {o + n}) of dim {ax} is outside the input's {d}")


class ConcatBase(ShapedOp):
    """Inputs side by side along the last axis:
    `%o = pto.concat %a, %b : tensor<?x512xbf16>, tensor<?x64xbf16> -> tensor<?x576xbf16>`.
    Every input has the result's leading dims and element type; their last dims add up
    to the result's."""

    inputs = var_operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure())

    assembly_format = "$inputs attr-dict `:` type($inputs) `->` type($result)"

    def __init__(self, inputs: Sequence[SSAValue]):
        ts = [tensor_type(v) for v in inputs]
        rt = TensorType(ts[0].element_type, [*ts[0].get_shape()[:-1], sum(t.get_shape()[-1] for t in ts)])
        super().__init__(operands=[list(inputs)], result_types=[rt])

    def verify_shapes(self) -> None:
        if len(self.inputs) < CONCAT_MIN_INPUTS:
            raise VerifyException(f"'{self.name}' needs at least {CONCAT_MIN_INPUTS} inputs, got {len(self.inputs)}")
        r = tensor_type(self.result)
        total = 0
        for i, v in enumerate(self.inputs):
            t = tensor_type(v)
            _leading_and_elem(self, t, r, f"input {i}")
            if t.get_shape()[-1] == DYNAMIC_INDEX:
                raise VerifyException(f"'{self.name}' input {i} needs a static last dim")
            total += t.get_shape()[-1]
        if r.get_shape()[-1] != total:
            raise VerifyException(
                f"'{self.name}' result has {dims_str(r.get_shape()[-1:])} columns, "
                f"but the inputs' widths sum to {total}"
            )


CONCAT_MIN_INPUTS = 2

# A discardable attribute of a pto.concat that only the kernel's return reads: its inputs
# were assembled into the output's column windows (PyPTO's `assemble(t, [row, c], out)`
# of tiles narrower than the output), each stored into its own columns by pto-to-tile
# rather than copied together first. The values are the concat's either way.
ASSEMBLE = "pto.assemble"


# --------------------------------------------------------------------- the pto ops


@irdl_op_definition
class RmsNormOp(RmsNormBase):
    """RMSNorm over the last axis (see RmsNormBase)."""

    name = "pto.rms_norm"


@irdl_op_definition
class MatmulOp(MatmulBase):
    """The one cube matmul of an SK-03 kernel (see MatmulBase)."""

    name = "pto.matmul"


@irdl_op_definition
class CastOp(CastBase):
    """Element-type conversion (see CastBase)."""

    name = "pto.cast"


@irdl_op_definition
class AddOp(BinaryBase):
    """Elementwise `lhs + rhs` with broadcasting."""

    name = "pto.add"


@irdl_op_definition
class SubOp(BinaryBase):
    """Elementwise `lhs - rhs` with broadcasting."""

    name = "pto.sub"


@irdl_op_definition
class MulOp(BinaryBase):
    """Elementwise `lhs * rhs` with broadcasting (e.g. the RMSNorm gamma)."""

    name = "pto.mul"


@irdl_op_definition
class DivOp(BinaryBase):
    """Elementwise `lhs / rhs` with broadcasting (e.g. a per-row norm)."""

    name = "pto.div"


@irdl_op_definition
class MaxOp(BinaryBase):
    """Elementwise `max(lhs, rhs)` with broadcasting (PyPTO's `maximum`: a ReLU, a max
    over the heads of a rank-3 tensor)."""

    name = "pto.max"


@irdl_op_definition
class MinOp(BinaryBase):
    """Elementwise `min(lhs, rhs)` with broadcasting (PyPTO's `minimum`)."""

    name = "pto.min"


@irdl_op_definition
class SqrtOp(UnaryBase):
    """Elementwise square root."""

    name = "pto.sqrt"


@irdl_op_definition
class RsqrtOp(UnaryBase):
    """Elementwise `1 / sqrt(x)`."""

    name = "pto.rsqrt"


@irdl_op_definition
class AbsOp(UnaryBase):
    """Elementwise absolute value."""

    name = "pto.abs"


@irdl_op_definition
class ExpOp(UnaryBase):
    """Elementwise `e ** x`."""

    name = "pto.exp"


@irdl_op_definition
class LogOp(UnaryBase):
    """Elementwise natural logarithm."""

    name = "pto.log"


@irdl_op_definition
class ReciprocalOp(UnaryBase):
    """Elementwise `1 / x` (a sigmoid's last step)."""

    name = "pto.reciprocal"


@irdl_op_definition
class MulsOp(ScalarBase):
    """Multiply by an f32 immediate."""

    name = "pto.muls"


@irdl_op_definition
class MaxsOp(ScalarBase):
    """The larger of each element and an f32 immediate (`maximum(x, 0.0)`: a ReLU)."""

    name = "pto.maxs"


@irdl_op_definition
class MinsOp(ScalarBase):
    """The smaller of each element and an f32 immediate."""

    name = "pto.mins"


@irdl_op_definition
class RdivsOp(ScalarBase):
    """An f32 immediate divided by each element, `c / x` (PyPTO's `full(c) / x`: the
    quant scale `127 / amax` written first)."""

    name = "pto.rdivs"


@irdl_op_definition
class AddsOp(ScalarBase):
    """Add an f32 immediate."""

    name = "pto.adds"


@irdl_op_definition
class SelectOp(SelectBase):
    """One of two values by a comparison, elementwise (see SelectBase)."""

    name = "pto.select"


@irdl_op_definition
class ReduceOp(ReduceBase):
    """Row reduction over the last axis (see ReduceBase)."""

    name = "pto.reduce"


@irdl_op_definition
class QuantOp(QuantBase):
    """Symmetric per-token INT8 quantisation (see QuantBase)."""

    name = "pto.quant"


@irdl_op_definition
class DequantOp(DequantBase):
    """Undo activation and weight scales after an int8 matmul (see DequantBase)."""

    name = "pto.dequant"


@irdl_op_definition
class ReshapeOp(ReshapeBase):
    """Reshape, optionally in place (see ReshapeBase)."""

    name = "pto.reshape"


@irdl_op_definition
class TransposeOp(TransposeBase):
    """The last two dims swapped (see TransposeBase)."""

    name = "pto.transpose"


@irdl_op_definition
class SliceOp(SliceBase):
    """Columns of the last axis (see SliceBase)."""

    name = "pto.slice"


@irdl_op_definition
class ConcatOp(ConcatBase):
    """Concatenation along the last axis (see ConcatBase)."""

    name = "pto.concat"


@irdl_op_definition
class ViewOp(ViewBase):
    """A window of a weight, read in place (see ViewBase)."""

    name = "pto.view"


# ------------------------------------------------------------------------- hints

SETTINGS = ("cube_l1_reuse_setting", "vec_nbuffer_setting", "cube_nbuffer_setting")
RUNTIME_OPTIONS = ("stitch_function_max_num",)


def _check_setting(name: str, attr: Attribute) -> str | None:
    if not isinstance(attr, DictionaryAttr):
        return f"pass option '{name}' must be a dictionary {{\"group\" = count}}"
    for key, val in attr.data.items():
        try:
            int(key)
        except ValueError:
            return f"pass option '{name}': key '{key}' is not an integer group id"
        if not isinstance(val, IntegerAttr) or val.value.data < 1:
            return f"pass option '{name}': value for '{key}' must be a positive integer"
    return None


def _int_array(attr: Attribute) -> tuple[int, ...] | None:
    if isinstance(attr, DenseArrayBase) and isinstance(attr.elt_type, IntegerType):
        return tuple(attr.get_values())
    return None


def _check_by_unroll(op: Operation, attr: Attribute) -> str | None:
    if not isinstance(attr, DictionaryAttr):
        return "'pto.by_unroll' must be a dictionary {\"factor\" = {hints}}"
    for factor, hints in attr.data.items():
        if not factor.isdigit() or int(factor) < 1:
            return f"'pto.by_unroll' key '{factor}' is not a positive unroll factor"
        if not isinstance(hints, DictionaryAttr) or not hints.data:
            return f"'pto.by_unroll' entry '{factor}' must be a non-empty dictionary of tile hints"
        for name, h in hints.data.items():
            if name not in ("pto.vec_tile", "pto.cube_tile"):
                return f"'pto.by_unroll' entry '{factor}' holds '{name}': only pto.vec_tile and pto.cube_tile"
            if not op.name.startswith("pto."):  # a tile stage carries them on for tile-unroll
                ok = isinstance(h, CubeTileAttr) if name == "pto.cube_tile" else _int_array(h) is not None
                if not ok:
                    return f"'pto.by_unroll' entry '{factor}': {name} of the wrong kind"
            elif (msg := check_hint(op, name, h)) is not None:
                return msg
    return None


def check_hint(op: Operation, name: str, attr: Attribute) -> str | None:
    """Check one `pto.*` discardable attribute; return an error message or None."""
    if name == "pto.target":
        if not isinstance(attr, StringAttr):
            return "'pto.target' must be a string"
        try:
            load_target(attr.data)
        except UnknownTargetError as e:
            return str(e)
    elif name == "pto.unroll":
        vals = _int_array(attr)
        if vals is None or not vals or min(vals) < 1:
            return "'pto.unroll' must be a non-empty array<i64: ...> of positive factors"
    elif name == "pto.options":
        if not isinstance(attr, DictionaryAttr):
            return "'pto.options' must be a dictionary"
        for key, val in attr.data.items():
            if key not in SETTINGS:
                return f"unknown pass option '{key}' (known: {', '.join(SETTINGS)})"
            if (msg := _check_setting(key, val)) is not None:
                return msg
    elif name == "pto.by_unroll":
        return _check_by_unroll(op, attr)
    elif name == "pto.tail":
        if not isinstance(attr, UnitAttr) or not isinstance(op, FuncOp):
            return "'pto.tail' is a unit attribute of a func.func"
    elif name == "pto.runtime":
        if not isinstance(attr, DictionaryAttr):
            return "'pto.runtime' must be a dictionary"
        for key, val in attr.data.items():
            if key not in RUNTIME_OPTIONS:
                return f"unknown runtime option '{key}' (known: {', '.join(RUNTIME_OPTIONS)})"
            if not isinstance(val, IntegerAttr) or val.value.data < 1:
                return f"runtime option '{key}' must be a positive integer"
    elif name == "pto.label":
        if not isinstance(attr, StringAttr) or not attr.data:
            return "'pto.label' must be a non-empty string"
    elif name == "pto.vec_tile":
        vals = _int_array(attr)
        if vals is None or not vals or min(vals) < 1:
            return "'pto.vec_tile' must be an array<i64: ...> of positive sizes"
        rank = next((t.get_num_dims() for t in (o.type for o in op.operands) if isinstance(t, TensorType)), None)
        if rank is not None and rank != len(vals):
            return f"'pto.vec_tile' has rank {len(vals)} but the op's data has rank {rank}"
    elif name == "pto.cube_tile":
        if not isinstance(attr, CubeTileAttr):
            return "'pto.cube_tile' must be a #pto.cube_tile<...>"
        if not isinstance(op, MatmulOp):
            return "'pto.cube_tile' belongs on a pto.matmul"
    elif name == "pto.form":
        if not isinstance(attr, FormAttr) or not isinstance(op, FuncOp):
            return "'pto.form' must be a #pto.form<...> on a func.func"
    elif name == "pto.cache":
        if not isinstance(attr, CachePolicyAttr):
            return "'pto.cache' must be a #pto.cache<...>"
    elif name == ASSEMBLE:
        if not isinstance(attr, UnitAttr) or not isinstance(op, ConcatOp):
            return f"'{ASSEMBLE}' is a unit attribute of a pto.concat"
    elif name.startswith("pto."):
        return f"unknown pto hint '{name}'"
    return None


def arg_layout(v: SSAValue) -> Layout | None:
    """The `pto.layout` of `v` if it is an argument of a func.func that gives one."""
    if not isinstance(v, BlockArgument) or not isinstance(f := v.owner.parent_op(), FuncOp) or f.arg_attrs is None:
        return None
    attr = f.arg_attrs.data[v.index].data.get("pto.layout")
    return attr.data if isinstance(attr, LayoutAttr) else None


def nz_use_error(op: Operation, layout_of: Callable[[SSAValue], Layout | None] = arg_layout) -> str | None:
    """Why `op` may not read an NZ argument (or a window of one), or None: only the
    matmul's weight operand is modelled NZ (the cube's copy-in reads its fractals; a
    vector op would need the ND addresses of a matrix stored NZ). A `pto.view` of it is
    a window of whole fractals (a weight's K slice in a hand-written split-K, one of
    stacked weights), which only a matmul's weight operand reads in turn."""
    for i, v in enumerate(op.operands):
        arg = v
        while isinstance(arg, OpResult) and isinstance(arg.owner, ViewOp):
            arg = arg.owner.input
        if layout_of(arg) != Layout.NZ or isinstance(op, MatmulOp) and i == 1:
            continue
        if isinstance(op, ViewOp):
            t, target = tensor_type(op.result), target_of(op)
            elem = elem_name(t.element_type)
            msg = nz_window_error(op.starts, t.get_shape(), elem, target.cube.fractal, target.block_bytes)
            if msg is None:
                continue
            return f"'{op.name}' {msg}"
        what = "its weight operand (the second)" if isinstance(op, MatmulOp) else "a pto.matmul's weight operand"
        return f"'{op.name}' reads the NZ argument #{arg.index}: an NZ tensor is only {what}"  # type: ignore[attr-defined]
    return None


def _check_arg_layout(f: FuncOp, i: int, attr: Attribute) -> None:
    if not isinstance(attr, LayoutAttr):
        raise VerifyException(f"argument {i}: 'pto.layout' must be a #pto.layout<...>")
    if attr.data != Layout.NZ:
        return
    t = f.function_type.inputs.data[i]
    if not isinstance(t, TensorType):  # lowered to npu: `npu.layout` says it there
        return
    target = target_of(f)
    msg = nz_error(t.get_shape(), elem_name(t.element_type), target.cube.fractal, target.block_bytes)
    if msg is not None:
        raise VerifyException(f"argument {i}: {msg}")


def verify_hints(op: Operation) -> None:
    """Verify the `pto.*` discardable attributes of one op (and of a func's arguments),
    and that an op reads an NZ argument only where NZ is modelled."""
    for name, attr in op.attributes.items():
        if name.startswith("pto.") and (msg := check_hint(op, name, attr)) is not None:
            raise VerifyException(msg)
    if op.name.startswith("pto.") and (msg := nz_use_error(op)) is not None:
        raise VerifyException(msg)
    if isinstance(op, FuncOp) and op.arg_attrs is not None:
        for i, d in enumerate(op.arg_attrs.data):
            assert isinstance(d, DictionaryAttr)
            for name, attr in d.data.items():
                if name == "pto.cache":
                    if not isinstance(attr, CachePolicyAttr):
                        raise VerifyException(f"argument {i}: 'pto.cache' must be a #pto.cache<...>")
                elif name == "pto.layout":
                    _check_arg_layout(op, i, attr)
                elif name == "pto.output":
                    if not isinstance(attr, UnitAttr):
                        raise VerifyException(f"argument {i}: 'pto.output' is a unit attribute")
                elif name == "pto.host_transpose":
                    if not (isinstance(attr, IntegerAttr) and attr.type == i1):
                        raise VerifyException(f"argument {i}: 'pto.host_transpose' is true or false")
                elif name.startswith("pto."):
                    raise VerifyException(f"argument {i}: unknown pto argument hint '{name}'")
            ht, layout = d.data.get("pto.host_transpose"), d.data.get("pto.layout")
            if isinstance(ht, IntegerAttr) and ht.value.data and isinstance(layout, LayoutAttr):
                if layout.data == Layout.NZ:
                    raise VerifyException(f"argument {i}: an NZ weight is not host-transposed (its fractals are fixed)")


PTO = Dialect(
    "pto",
    [
        RmsNormOp,
        MatmulOp,
        CastOp,
        AddOp,
        SubOp,
        MulOp,
        DivOp,
        MaxOp,
        MinOp,
        SqrtOp,
        RsqrtOp,
        AbsOp,
        ExpOp,
        LogOp,
        ReciprocalOp,
        MulsOp,
        AddsOp,
        MaxsOp,
        MinsOp,
        RdivsOp,
        SelectOp,
        ReduceOp,
        QuantOp,
        DequantOp,
        ReshapeOp,
        TransposeOp,
        SliceOp,
        ConcatOp,
        ViewOp,
    ],
    [CachePolicyAttr, RoundModeAttr, ReduceKindAttr, FormAttr, CubeTileAttr, LayoutAttr],
)
