"""What the stage patterns share: a `Miss` (a chain that is not the form, with what was
expected and found), the walks from a value to the op defining it, and `_fuse`, which
replaces a matched chain by the fused op."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeVar

import numpy as np
from xdsl.dialects.builtin import TensorType
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.pattern_rewriter import PatternRewriter
from xdsl.rewriter import InsertPoint

from pto.dialects import pto
from pto.dialects.common import elem_name
from pto.dialects.pto import check_hint

_Op = TypeVar("_Op", bound=Operation)


class Miss(Exception):
    """A chain that is not the stage's form: `op` is the op found where the form needs
    `expected`; `found` says what it is (by default its name). A pattern leaves such a
    chain alone; for a chain that looks like the stage, the pass remarks on it."""

    def __init__(self, op: Operation, expected: str, found: str | None = None):
        super().__init__(expected)
        self.op, self.expected, self.found = op, expected, found or f"'{op.name}'"


def _need(ok: bool, op: Operation, expected: str, found: str | None = None) -> None:
    if not ok:
        raise Miss(op, expected, found)


def _elem(v: SSAValue) -> str:
    return elem_name(v.type.element_type) if isinstance(v.type, TensorType) else ""


def _shape(v: SSAValue) -> tuple[int, ...]:
    return tuple(v.type.get_shape()) if isinstance(v.type, TensorType) else ()


def _found(v: SSAValue) -> str:
    """What defines `v`, as a Miss reports it."""
    if isinstance(v.owner, Operation):
        return f"'{v.owner.name}'"
    return f"the argument %{v.name_hint}" if v.name_hint else "an argument"


def _def(v: SSAValue, cls: type[_Op], expected: str, reader: Operation) -> _Op:
    """The op of type `cls` defining `v`, when only `reader` reads `v` (so the op can go
    with the chain); else a Miss at the op found (the definition, or another reader)."""
    op = v.owner
    if not isinstance(op, cls):
        raise Miss(op if isinstance(op, Operation) else reader, expected, _found(v))
    if (other := next((u.operation for u in v.uses if u.operation is not reader), None)) is not None:
        if other.name == "func.return":  # (a result of the kernel: said at the op, which has a line)
            raise Miss(op, f"{expected} read by the stage only", "it returned as a result of the kernel too")
        raise Miss(other, f"{expected} read by the stage only", f"'{other.name}' reading it too")
    return op


def _same(a: SSAValue, b: SSAValue) -> bool:
    """`a` and `b` hold the same values: one value, or two casts of one value alike (a
    helper that casts the tile it is given casts it again at each call: a cast is exact
    to repeat, the same bits each time)."""
    if a is b:
        return True
    ca, cb = a.owner, b.owner
    if not (isinstance(ca, pto.CastOp) and isinstance(cb, pto.CastOp)):
        return False
    return ca.input is cb.input and a.type == b.type and ca.round == cb.round and ca.sat == cb.sat


def _scalar(op: pto.ScalarBase) -> float:
    return op.scalar.value.data


def _imm(op: pto.ScalarBase) -> str:
    """The op and its immediate, as the IR spells it (f32), as a Miss reports it."""
    with np.errstate(over="ignore"):
        return f"'{op.name}' {np.float32(_scalar(op))!s}"


def _is_f32(value: float, want: float) -> bool:
    """Immediates are f32: 1/K and 1/127 are equal when they round to the same f32."""
    with np.errstate(over="ignore"):  # a huge immediate is inf in f32: not equal, no warning
        return bool(np.float32(value) == np.float32(want))


def _other(op: pto.BinaryBase, v: SSAValue) -> SSAValue:
    return op.rhs if op.lhs is v else op.lhs


def _in_order(ops: Sequence[Operation]) -> list[Operation]:
    block = ops[0].parent_block()
    assert block is not None
    return sorted(ops, key=block.get_operation_index)


def _same_block(ops: Sequence[Operation]) -> bool:
    """The chains are within one block, so program order is dominance order."""
    return len({op.parent_block() for op in ops}) == 1


def _one_block(ops: list[Operation]) -> list[Operation]:
    _need(_same_block(ops), ops[-1], "the stage's ops in one block", "ops in several")
    return ops


def _hints(ops: Sequence[Operation], new: Operation) -> dict[str, Attribute]:
    """Per attribute: the last op's, else the first op's that has one (and fits `new`:
    a vec_tile of another rank would not verify there)."""
    out: dict[str, Attribute] = {}
    for name in dict.fromkeys(n for op in ops for n in op.attributes):  # in a fixed order
        for op in (ops[-1], *ops):
            attr = op.attributes.get(name)
            if attr is not None and check_hint(new, name, attr) is None:
                out[name] = attr
                break
    return out


def _feeders(v: SSAValue, src: SSAValue, ops: Sequence[Operation]) -> list[Operation]:
    """The casts and reshapes from `src` (which the fused op reads) to `v` (which the
    chain read) that nothing else reads: they go with the chain."""
    out: list[Operation] = []
    dead = set(ops)
    while v is not src and all(u.operation in dead for u in v.uses):
        op = v.owner  # one of the casts and reshapes `src` was found through
        assert isinstance(op, pto.CastOp | pto.ReshapeOp)
        out.append(op)
        dead.add(op)
        v = op.operands[0]
    return out


def _fuse(rewriter: PatternRewriter, ops: Sequence[Operation], new: Operation, old: Sequence[SSAValue]) -> None:
    """Replace the values `old` of the chain `ops` (in one block) by the results of `new`
    and erase the chain. `new` goes before the first op defining an `old` value: every
    use of those comes later, and every operand of `new` is read by an op of the chain
    before it."""
    ops = _in_order(ops)
    at = next(op for op in ops if any(r is o for r in op.results for o in old))
    new.attributes.update(_hints(ops, new))
    new.location = ops[-1].location
    rewriter.insert(new, InsertPoint.before(at))
    for o, n in zip(old, new.results, strict=True):
        n.name_hint = o.name_hint
        rewriter.replace_all_uses_with(o, n)
    for op in reversed(ops):
        rewriter.erase(op)
