"""Verifying IR op by op, so that an error names the op that is wrong."""

from __future__ import annotations

from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Block, Operation, SSAValue
from xdsl.parser.core import ForwardDeclaredValue
from xdsl.utils.exceptions import DiagnosticException, VerifyException

from pto.diagnostics import DiagnosticError, Note
from pto.dialects.npu import verify_arg_hints
from pto.dialects.pto import verify_hints


def verify_dominance(block: Block, visible: set[SSAValue]) -> None:
    """MLIR's dominance rule, which xDSL 0.74's verifier does not check: an operand is
    defined earlier in its block or in an enclosing one. Blocks of a multi-block region
    see every value of the region (no CFG dominance is needed by any pto-ir level)."""
    region = block.parent
    scope = [block] if region is None or len(region.blocks) == 1 else list(region.blocks)
    added = [v for b in scope for v in b.args if v not in visible]
    if len(scope) > 1:
        added += [r for b in scope for o in b.ops for r in o.results]
    visible.update(added)
    for op in block.ops:
        _check_operands(op, visible)
        for r in op.regions:
            for b in r.blocks:
                verify_dominance(b, visible)
        if len(scope) == 1:
            visible.update(op.results)
            added.extend(op.results)
    visible.difference_update(added)


def _check_operands(op: Operation, visible: set[SSAValue]) -> None:
    for i, v in enumerate(op.operands):
        if isinstance(v, ForwardDeclaredValue):  # xDSL lets some escape its parser
            name = f" '%{v.name_hint}'" if v.name_hint else ""
            raise DiagnosticError(op, f"operand #{i} is an undeclared SSA value{name}")
        if v not in visible:
            owner = v.owner if isinstance(v.owner, Operation) else None
            notes = [Note(owner.location, "operand defined here")] if owner is not None else []
            raise DiagnosticError(op, f"operand #{i} does not dominate this use", notes)


def verify_each(module: ModuleOp) -> None:
    """Verify op by op (and the pinned hints of each); a failure is a DiagnosticError
    at the op."""
    verify_dominance(module.body.block, set())
    for op in module.walk():
        try:
            op.verify(verify_nested_ops=False)
            verify_hints(op)
            verify_arg_hints(op)
        except DiagnosticError:
            raise
        except (VerifyException, DiagnosticException) as e:
            msg = str(e.args[0]) if e.args else str(e)
            raise DiagnosticError(op, msg.removeprefix("Operation does not verify: ")) from None
