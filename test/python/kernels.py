"""Helpers for the interpreter tests: parse a kernel, lower it, run it."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp

from pto.driver.lower import lower
from pto.driver.parse import LocatingParser
from pto.driver.registry import load_dialects
from pto.driver.verify import verify_each

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = sorted((ROOT / "examples").glob("*.mlir"))
# The SK-03 examples the end-to-end and engine tests run.
SK03_NAMES = [
    "sk03_standard.mlir",
    "mla_wqa_qrmsnorm.mlir",
    "mla_wkv_rmsnorm.mlir",
    "indexer_query_linear_int8.mlir",
    "hc_pre.mlir",
]


def bench(name: str, module: str | None = None) -> ModuleType:
    """`bench/<name>.py` loaded as module `module` (`bench_<name>` unless given), put in
    `sys.modules`: its dataclasses, and results pickled across workers, find their
    module by name."""
    module = module or f"bench_{name}"
    spec = importlib.util.spec_from_file_location(module, ROOT / "bench" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    loaded = importlib.util.module_from_spec(spec)
    sys.modules[module] = loaded
    spec.loader.exec_module(loaded)
    return loaded


# A small standard kernel: RMSNorm -> cast -> matmul (b_trans) -> cast, K = 256, N = 128.
SMALL = """func.func @small(%x: tensor<?x256xbf16>, %w: tensor<128x256xbf16>) -> tensor<?x128xbf16> {
  %n = pto.rms_norm %x eps = 1.0e-06 : tensor<?x256xbf16> -> tensor<?x256xf32>
  %b = pto.cast %n rint : tensor<?x256xf32> -> tensor<?x256xbf16>
  %y = pto.matmul %b, %w b_trans : tensor<?x256xbf16>, tensor<128x256xbf16> -> tensor<?x128xf32>
  %o = pto.cast %y rint : tensor<?x128xf32> -> tensor<?x128xbf16>
  func.return %o : tensor<?x128xbf16>
}"""


def context() -> Context:
    ctx = Context()
    load_dialects(ctx)
    return ctx


def parse(text: str, name: str = "<test>") -> ModuleOp:
    m = LocatingParser(context(), text, name).parse_module()
    verify_each(m)
    return m


def example(name: str) -> ModuleOp:
    path = ROOT / "examples" / name
    return parse(path.read_text(), str(path))


def lowered(module: ModuleOp, spec: str = "pto-sk03-pipeline") -> ModuleOp:
    m = module.clone()
    lower(context(), m, spec)
    return m


_lowered: dict[tuple[str, str], tuple[ModuleOp, ModuleOp]] = {}


def lowered_example(name: str, spec: str = "pto-sk03-pipeline") -> tuple[ModuleOp, ModuleOp]:
    """The example at the pto level and lowered by `spec`, made once per test session
    (tests only run them)."""
    if (name, spec) not in _lowered:
        m = example(name)
        _lowered[(name, spec)] = (m, lowered(m, spec))
    return _lowered[(name, spec)]
