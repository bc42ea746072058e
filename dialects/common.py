"""The vocabulary every level shares: element types and the hardware's casts, the
enums (cache policy, round mode, reduction kind, SK-03 form) and the cube tile
attribute, and the syntax pieces several dialects print.

The attributes are spelt `#pto.<name>`: they are introduced at the tensor level and
carried down unchanged; the `pto` dialect registers them. No level's ops live here.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from enum import auto

from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    BFloat16Type,
    DenseArrayBase,
    Float16Type,
    Float32Type,
    IntAttr,
    IntegerType,
    i64,
)
from xdsl.dialects.utils import EnumAttribute
from xdsl.ir import Attribute, ParametrizedAttribute, SSAValue
from xdsl.irdl import IRDLOperation, irdl_attr_definition
from xdsl.parser import AttrParser, Parser
from xdsl.printer import Printer
from xdsl.utils.exceptions import VerifyException
from xdsl.utils.str_enum import StrEnum

# --------------------------------------------------------------------------- attributes


class AngleEnum:
    """Prints an enum attribute as `#dialect.name<value>` (xDSL's default is spaced)."""

    def print_parameter(self, printer: Printer) -> None:
        printer.print_string("<" + self.data.value + ">")  # type: ignore[attr-defined]

    @classmethod
    def parse_parameter(cls, parser: AttrParser):
        with parser.in_angle_brackets():
            return parser.parse_str_enum(cls.enum_type)  # type: ignore[attr-defined]


class CachePolicy(StrEnum):
    NORMAL = auto()
    NONE_CACHEABLE = auto()


@irdl_attr_definition
class CachePolicyAttr(AngleEnum, EnumAttribute[CachePolicy]):
    """L2 policy of a global tensor: `none_cacheable` reads/writes bypass L2 allocation."""

    name = "pto.cache"


class Layout(StrEnum):
    """How a global 2-D tensor's elements are laid out in memory (PyPTO's TileOpFormat)."""

    ND = auto()  # row-major
    NZ = auto()  # fractal: column blocks of C0 = 32 B columns, each block's rows in order


@irdl_attr_definition
class LayoutAttr(AngleEnum, EnumAttribute[Layout]):
    """`#pto.layout<nz>`: the memory layout of a kernel argument (a weight the cube reads).
    The values the kernel sees are the logical [rows, cols] matrix either way; the layout
    changes only the addresses a tile read touches (`nz_error`, `docs/model.md`)."""

    name = "pto.layout"


# PyPTO 0.2.0's matmul refuses NZ inputs of f32 (and fp8); int8, bf16 and f16 take it.
NZ_ELEMS = ("bf16", "f16", "i8")


def nz_error(shape: Sequence[int], elem: str, fractal_rows: int, block_bytes: int) -> str | None:
    """Why a tensor cannot be laid out NZ, or None. A fractal is `fractal_rows` rows of
    one `block_bytes` block (C0 = block_bytes / element bytes columns); the whole matrix
    must be made of them, so that each column block is one contiguous run."""
    if elem not in NZ_ELEMS:
        return f"an NZ tensor holds {', '.join(NZ_ELEMS)} (PyPTO's matmul refuses NZ {elem}), got {elem}"
    if len(shape) != 2 or DYNAMIC_INDEX in shape:
        return f"an NZ tensor is a static 2-D matrix (a weight), got {dims_str(shape)}"
    c0 = block_bytes // ELEM_BYTES[elem]
    rows, cols = shape
    if rows % fractal_rows or cols % c0:
        return f"an NZ {elem} tensor is whole {fractal_rows}x{c0} fractals: {dims_str(shape)} is not a multiple of them"
    return None


def nz_window_error(
    offsets: Sequence[int], shape: Sequence[int], elem: str, fractal_rows: int, block_bytes: int
) -> str | None:
    """Why a window `shape` at `offsets` of an NZ matrix is not whole fractals, or None:
    its rows must start and end at multiples of `fractal_rows`, its columns at multiples
    of C0, so that it cuts no fractal (each column block of it stays one run)."""
    c0 = block_bytes // ELEM_BYTES[elem]
    (r, c), (n, w) = offsets, shape
    if r % fractal_rows or n % fractal_rows or c % c0 or w % c0:
        return (
            f"a window {dims_str(shape)} at [{r}, {c}] of an NZ {elem} tensor cuts its {fractal_rows}x{c0} "
            f"fractals: its rows must start and end at multiples of {fractal_rows}, its columns of {c0}"
        )
    return None


class RoundMode(StrEnum):
    NONE = auto()  # exact conversions only
    RINT = auto()  # to nearest, ties to even
    ROUND = auto()  # to nearest, ties away from zero
    TRUNC = auto()  # toward zero
    FLOOR = auto()
    CEIL = auto()


@irdl_attr_definition
class RoundModeAttr(AngleEnum, EnumAttribute[RoundMode]):
    name = "pto.round"


class ReduceKind(StrEnum):
    SUM = auto()
    MAX = auto()
    MIN = auto()
    MEAN = auto()
    ABSMAX = auto()


@irdl_attr_definition
class ReduceKindAttr(AngleEnum, EnumAttribute[ReduceKind]):
    name = "pto.reduce_kind"


class Form(StrEnum):
    """The SK-03 forms `pto-classify-skeleton` recognises."""

    STANDARD = auto()  # [RMSNorm] -> MatMul -> [post-processing V stage]: V -> C [-> V]
    C_V = auto()  # MatMul -> RMSNorm (mla_prolog's wqa-linear -> q-rmsnorm)
    QUANT = auto()  # AT-11: [RMSNorm] -> Quant -> int8 MatMul -> Dequant
    MHC_PRE = auto()  # one matmul, N <= 64, K >= 2^14, f32: the loop_unroll variant


@irdl_attr_definition
class FormAttr(AngleEnum, EnumAttribute[Form]):
    """`#pto.form<quant>`: the SK-03 form of a kernel (on its func as `pto.form`)."""

    name = "pto.form"


@irdl_attr_definition
class CubeTileAttr(ParametrizedAttribute):
    """Per-axis cube tiles `m = [mL0, mL1], k = [kL0, kL1] (or [kL0, kAL1, kBL1]),
    n = [nL0, nL1]`, optionally `split_k` (K split across cores, partial sums in GM).

    Rules checked here (shape-only; capacities need the element types and the target and
    are checked where both are known): 0 < L0 <= L1 and L1 % L0 == 0 on every axis."""

    name = "pto.cube_tile"

    m: DenseArrayBase[IntegerType]
    k: DenseArrayBase[IntegerType]
    n: DenseArrayBase[IntegerType]
    split_k: IntAttr

    def __init__(self, m: Sequence[int], k: Sequence[int], n: Sequence[int], split_k: bool = False):
        super().__init__(
            DenseArrayBase.from_list(i64, m),
            DenseArrayBase.from_list(i64, k),
            DenseArrayBase.from_list(i64, n),
            IntAttr(int(split_k)),
        )

    @property
    def axes(self) -> dict[str, tuple[int, ...]]:
        return {"m": self.m.get_values(), "k": self.k.get_values(), "n": self.n.get_values()}

    @property
    def is_split_k(self) -> bool:
        return bool(self.split_k.data)

    @staticmethod
    def check(axes: Mapping[str, Sequence[int]]) -> str | None:
        for ax, vals in axes.items():
            want = (2, 3) if ax == "k" else (2,)
            if len(vals) not in want:
                return f"cube tile axis '{ax}' needs {' or '.join(map(str, want))} sizes [L0, L1], got {len(vals)}"
            l0, l1s = vals[0], vals[1:]
            if l0 <= 0:
                return f"cube tile axis '{ax}': L0 size must be positive, got {l0}"
            for l1 in l1s:
                if l1 < l0:
                    return f"cube tile axis '{ax}': L0 size {l0} exceeds L1 size {l1}"
                if l1 % l0:
                    return f"cube tile axis '{ax}': L1 size {l1} is not a multiple of L0 size {l0}"
        return None

    def verify(self) -> None:
        if (msg := CubeTileAttr.check(self.axes)) is not None:
            raise VerifyException(msg)

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        start = parser.pos
        parser.parse_punctuation("<")
        axes: dict[str, list[int]] = {}
        for ax in ("m", "k", "n"):
            if ax != "m":
                parser.parse_punctuation(",")
            parser.parse_keyword(ax)
            parser.parse_punctuation("=")
            axes[ax] = parser.parse_comma_separated_list(parser.Delimiter.SQUARE, lambda: parse_i64(parser))
        split = False
        if parser.parse_optional_punctuation(","):
            parser.parse_keyword("split_k")
            split = True
        parser.parse_punctuation(">")
        if (msg := cls.check(axes)) is not None:
            parser.raise_error(msg, start, parser.pos)
        return (
            DenseArrayBase.from_list(i64, axes["m"]),
            DenseArrayBase.from_list(i64, axes["k"]),
            DenseArrayBase.from_list(i64, axes["n"]),
            IntAttr(int(split)),
        )

    def print_parameters(self, printer: Printer) -> None:
        printer.print_string("<" + self.body_str() + ">")

    def body_str(self) -> str:
        parts = [f"{ax} = [{', '.join(map(str, v))}]" for ax, v in self.axes.items()]
        if self.is_split_k:
            parts.append("split_k")
        return ", ".join(parts)


# ------------------------------------------------------------------ parse helpers

I64_MIN, I64_MAX = -(1 << 63), (1 << 63) - 1


def parse_i64(parser: AttrParser) -> int:
    """An integer literal stored as i64: one that does not fit is a parse error at the
    literal (xDSL would raise, or wrap 2^63 to a negative size)."""
    start = parser.pos
    value = parser.parse_integer()
    if not I64_MIN <= value <= I64_MAX:
        parser.raise_error(f"integer {value} does not fit in i64", start, parser.pos)
    return value


# ------------------------------------------------------------------ type helpers


def elem_name(t: Attribute) -> str:
    """Short element-type name used in tables and messages: bf16, f16, f32, i8, i32."""
    if isinstance(t, BFloat16Type):
        return "bf16"
    if isinstance(t, Float16Type):
        return "f16"
    if isinstance(t, Float32Type):
        return "f32"
    if isinstance(t, IntegerType):
        return f"i{t.width.data}"
    return str(t)


ELEM_BYTES = {"bf16": 2, "f16": 2, "f32": 4, "i8": 1, "i32": 4}
FLOAT_ELEMS = ("bf16", "f16", "f32")

# The cube's table: input element type -> legal accumulator / output element types.
MATMUL_OUT = {"bf16": ("f32", "bf16"), "f16": ("f32", "f16"), "i8": ("i32",), "f32": ("f32",)}

# The hardware's conversions: (src, dst) -> exact? An exact conversion takes round mode
# `none` and no saturation; every other one needs an explicit round mode.
CASTS: dict[tuple[str, str], bool] = {
    ("bf16", "f32"): True,
    ("f16", "f32"): True,
    ("i8", "f16"): True,
    ("f32", "bf16"): False,
    ("f32", "f16"): False,
    ("f32", "i32"): False,
    ("i32", "f32"): False,
    ("i32", "f16"): False,
    ("f16", "i8"): False,
    ("f16", "i32"): False,
    ("bf16", "i32"): False,
    # f32 -> f32 rounds to an integral value in the mode (`pypto.round`, floor, ceil, trunc).
    ("f32", "f32"): False,
}


def check_cast(src: str, dst: str, mode: RoundMode, sat: bool) -> str | None:
    if (src, dst) not in CASTS:
        hint = ""
        if (src, dst) == ("f32", "i8"):
            hint = " (quantize through f32 -> i32 -> f16 -> i8)"
        return f"no hardware conversion from {src} to {dst}{hint}"
    exact = CASTS[(src, dst)]
    if exact and mode != RoundMode.NONE:
        return f"conversion {src} -> {dst} is exact: round mode must be 'none', got '{mode.value}'"
    if exact and sat:
        return f"conversion {src} -> {dst} is exact: saturation does not apply"
    if sat and not dst.startswith("i"):  # (a float overflow goes to inf: clamping it is not modelled)
        return f"saturation applies to integer destinations only, not {dst}"
    if not exact and mode == RoundMode.NONE:
        return f"conversion {src} -> {dst} rounds: give a round mode (rint, round, trunc, floor, ceil)"
    return None


def dims_str(shape: Sequence[int]) -> str:
    return "x".join("?" if d == DYNAMIC_INDEX else str(d) for d in shape)


# The comparisons of `pto.select` and `npu.vsel`: PyPTO's `eq ne lt le gt ge`.
PREDICATES = ("eq", "ne", "lt", "le", "gt", "ge")


def broadcasts_to(operand: Sequence[int], result: Sequence[int]) -> bool:
    """Trailing-aligned broadcasting: each operand dim is 1 or equals the result dim."""
    if len(operand) > len(result):
        return False
    for o, r in zip(reversed(operand), reversed(result), strict=False):
        if o != 1 and o != r:
            return False
    return True


# -------------------------------------------------------------- shared syntax
# Most custom op syntaxes here end the same way, `{attrs} : T -> T'`, and several
# spell a round mode as `rint sat`: one parser and one printer for each.


def parse_types_tail(parser: Parser) -> tuple[dict[str, Attribute], Attribute, Attribute]:
    """` {attrs} : T -> T'`: the op's attributes, then its source and result types."""
    attrs = parser.parse_optional_attr_dict()
    parser.parse_punctuation(":")
    src = parser.parse_type()
    parser.parse_punctuation("->")
    return attrs, src, parser.parse_type()


def print_types_tail(printer: Printer, attributes: dict[str, Attribute], src: Attribute, dst: Attribute) -> None:
    printer.print_op_attributes(attributes)
    printer.print_string(f" : {src} -> {dst}")


def parse_rounding(parser: Parser) -> tuple[RoundMode, bool]:
    """`rint sat`: a round mode, then whether the conversion saturates."""
    mode = parser.parse_str_enum(RoundMode)
    return mode, parser.parse_optional_keyword("sat") is not None


def print_rounding(printer: Printer, mode: RoundModeAttr, sat: object) -> None:
    printer.print_string(" " + mode.data.value + (" sat" if sat else ""))


def parse_window(cls: type[IRDLOperation], parser: Parser) -> IRDLOperation:
    """`%v = OP %src at [o0, o1, ...] attrs : T -> T'` (the views of every level)."""
    x = parser.parse_unresolved_operand()
    parser.parse_keyword("at")
    offs = parser.parse_comma_separated_list(parser.Delimiter.SQUARE, lambda: parse_i64(parser))
    attrs, src, dst = parse_types_tail(parser)
    op = cls.create(
        operands=[parser.resolve_operand(x, src)],
        result_types=[dst],
        properties={"offsets": DenseArrayBase.from_list(i64, offs)},
    )
    op.attributes.update(attrs)
    return op


def print_window(
    printer: Printer, src: SSAValue, starts: Sequence[int], result: SSAValue, attributes: dict[str, Attribute]
) -> None:
    printer.print_string(" ")
    printer.print_operand(src)
    printer.print_string(f" at [{', '.join(map(str, starts))}]")
    print_types_tail(printer, attributes, src.type, result.type)
