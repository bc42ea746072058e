"""What the tuner needs to know about a kernel: its form, its matmul's shape and types,
its weights, the ops a vector tile is pinned on, and the target it is tuned for.

Read from the `pto` level after `pto-fuse-stages` and `pto-classify-skeleton` (on a
copy), so a kernel written from primitives is seen as the pipeline sees it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import DYNAMIC_INDEX, DenseArrayBase, ModuleOp, TensorType
from xdsl.ir import BlockArgument

from pto.dialects import pto
from pto.dialects.common import MATMUL_OUT, FormAttr, elem_name
from pto.dialects.pto import tensor_type
from pto.interp.run import InputError, signature
from pto.passes.pto_classify_skeleton import PtoClassifySkeletonPass
from pto.passes.pto_fuse_stages import PtoFuseStagesPass
from pto.targets import Target, UnknownTargetError, load_target, target_of

if TYPE_CHECKING:
    from pto.tuner.phases import Phases

# The fused vector ops that carry a stage's vector tile (see `pin_vec_tiles`).
VEC_TILED = (pto.RmsNormOp, pto.QuantOp, pto.DequantOp)


class TuneError(Exception):
    """A kernel, space or option the tuner cannot work with; the message is one line."""


@dataclass(frozen=True)
class KernelInfo:
    name: str
    form: str
    k: int
    n: int
    a_elem: str  # the matmul's input element type
    acc_elem: str  # its accumulator's
    b_trans: bool
    weights: tuple[str, ...]  # the static arguments the matmul reads, by name
    host_transposable: bool  # B is a whole [N, K] weight argument read with b_trans
    vec_cols: tuple[int, ...]  # the row width of each op a vector tile is pinned on
    target: Target
    # The vector phases, planned per configuration (None: checked when compiled).
    phases: Phases | None = field(default=None, compare=False, repr=False)


def _matmul(f: func.FuncOp) -> pto.MatmulOp:
    mms = [o for o in f.walk() if isinstance(o, pto.MatmulOp)]
    if len(mms) != 1:
        raise TuneError(f"@{f.sym_name.data}: the tuner needs one matmul (an SK-03 kernel), found {len(mms)}")
    return mms[0]


def _source_args(v) -> set[BlockArgument]:
    """The kernel arguments `v` is computed from (through reshapes and casts)."""
    if isinstance(v, BlockArgument):
        return {v}
    return set().union(*(_source_args(o) for o in v.owner.operands))


def _weights(f: func.FuncOp, mm: pto.MatmulOp) -> tuple[str, ...]:
    # What tile-annotate-cache gives a policy: the static tensors the matmul's B reads.
    static = [
        a for a in _source_args(mm.rhs) if isinstance(a.type, TensorType) and DYNAMIC_INDEX not in a.type.get_shape()
    ]
    return tuple(sorted(arg_name(f, a) for a in static))


def arg_name(f: func.FuncOp, a: BlockArgument) -> str:
    return (a.name_hint or f"arg{a.index}").lstrip("%")


def _classified(module: ModuleOp) -> ModuleOp:
    m = module.clone()
    PtoFuseStagesPass().apply(Context(), m)
    PtoClassifySkeletonPass().apply(Context(), m)
    return m


def kernel_info(module: ModuleOp, target: str | None = None) -> KernelInfo:
    """The facts of `module`'s kernel; a DiagnosticError if it is not an SK-03 kernel."""
    try:
        sig = signature(module)
        tgt = load_target(target) if target else target_of(sig.func)
    except (InputError, UnknownTargetError) as e:
        raise TuneError(str(e)) from None
    if sig.level != "pto":
        raise TuneError(f"the tuner takes a kernel at the pto level, this one is at the {sig.level} level")
    f = signature(_classified(module)).func
    mm = _matmul(f)
    lhs, res = tensor_type(mm.lhs), tensor_type(mm.results[0])
    a_elem = elem_name(lhs.element_type)
    # Pinned on the kernel as written (not the fused copy): the hints are written back to it.
    tiled = [o for o in sig.func.walk() if isinstance(o, VEC_TILED)]
    cols = tuple(tensor_type(o.operands[0]).get_shape()[-1] for o in tiled)
    own = [a for o in tiled if isinstance(a := o.attributes.get("pto.vec_tile"), DenseArrayBase)]
    own_rows = int(own[0].get_values()[0]) if own else None
    form_attr = f.attributes["pto.form"]
    assert isinstance(form_attr, FormAttr)  # pto-classify-skeleton ran
    form = form_attr.data.value
    return KernelInfo(
        f.sym_name.data,
        form,
        lhs.get_shape()[-1],
        res.get_shape()[-1],
        a_elem,
        MATMUL_OUT[a_elem][0],
        mm.b_trans is not None,
        _weights(f, mm),
        mm.b_trans is not None and isinstance(mm.rhs, BlockArgument),
        cols,
        tgt,
        phases(module, tgt, own_rows),
    )


def phases(module: ModuleOp, target: Target, own_rows: int | None) -> Phases | None:
    from pto.tuner.phases import phases as planned  # (it imports the space, which imports this)

    return planned(module, target, own_rows)
