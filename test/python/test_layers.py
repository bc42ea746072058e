"""Imports follow the data flow pto -> tile -> npu -> interpreter: dialects import no
pass, lowering, planning, interpreter or tool; planning (the decisions the passes, the
lowering and the tuner share) imports no pass or lowering; passes, planning and
lowering never import the interpreter."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
FORBIDDEN = {
    "dialects": ("passes", "lowering", "planning", "interp", "tools", "tuner", "driver"),
    "planning": ("passes", "lowering", "interp", "tools", "tuner", "driver"),
    "passes": ("interp", "tools", "tuner", "driver"),
    "lowering": ("interp", "tools", "tuner", "driver"),
}


def _imports(path: Path) -> set[str]:
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
        elif isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
    return found


@pytest.mark.parametrize("layer", sorted(FORBIDDEN))
def test_a_layer_imports_only_what_comes_before_it(layer: str) -> None:
    bad = [
        f"{path.relative_to(ROOT)} imports {mod}"
        for path in sorted((ROOT / layer).rglob("*.py"))
        for mod in _imports(path)
        if any(mod == f"pto.{f}" or mod.startswith(f"pto.{f}.") for f in FORBIDDEN[layer])
    ]
    assert not bad, bad
