from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass


@dataclass(frozen=True)
class TestPassCrashPass(ModulePass):
    """Test pass: raises a Python exception, to exercise the internal-error path."""

    name = "test-pass-crash"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        raise RuntimeError("deliberate crash in test-pass-crash")
