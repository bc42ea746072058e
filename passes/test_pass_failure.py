from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from pto.diagnostics import DiagnosticError, warn


@dataclass(frozen=True)
class TestPassFailurePass(ModulePass):
    """Test pass: fails with an error at the first op named `op` (default: any func).

    Exercises the driver's pass-failure path (diagnostic location, reproducer), as
    MLIR's `test-pass-failure`. With `warn_only=true` it emits a warning instead.
    """

    name = "test-pass-failure"

    op: str = "func.func"
    warn_only: bool = False

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for inner in op.walk():
            if inner.name == self.op:
                if self.warn_only:
                    warn(inner, f"test-pass-failure saw '{self.op}'")
                    continue
                raise DiagnosticError(inner, f"test-pass-failure rejects '{self.op}'")
