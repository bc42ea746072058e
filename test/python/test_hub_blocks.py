"""tile-to-npu's HUB blocks (`npu.tasks ... hub [...]`): the tasks after the cube read the
output tiles of their rows and columns, so PyPTO puts a HUB in front of each block of
them that needs the same cube tasks (measured: std t = 64, N = 8192, 128 cube tasks
of 64 columns, [4, 1024] cast tiles: 8 HUBs of 16 x 16, one per 1024 columns)."""

from __future__ import annotations

import json
from pathlib import Path

from kernels import bench
from xdsl.context import Context

from pto.dialects import npu
from pto.driver.lower import lower
from pto.driver.parse import LocatingParser
from pto.driver.registry import load_dialects
from pto.lowering.tile_to_npu import successors

ROOT = Path(__file__).resolve().parents[2]
fidelity = bench("fidelity", "fidelity")
CONFIGS = {c["id"]: c for c in json.loads((ROOT / "bench" / "fidelity" / "pypto_results.json").read_text())["configs"]}


def groups(cid: str) -> dict[str, npu.TasksOp]:
    c = CONFIGS[cid]
    ctx = Context()
    load_dialects(ctx)
    m = LocatingParser(ctx, fidelity.kernel(c), "k").parse_module()
    lower(ctx, m, "pto-sk03-pipeline{factors=" + ",".join(map(str, c["unroll"])) + "}")
    return {t.label.data: t for t in m.walk() if isinstance(t, npu.TasksOp)}


def test_hub_places_count_within_blocks_of_equal_producers() -> None:
    rows = range(0, 8)
    producers = [[(rows, range(0, 4))], [(rows, range(4, 8))]]
    consumers = [[(range(0, 4), range(0, 4))], [(range(0, 4), range(4, 8))], [(range(4, 8), range(0, 4))]]
    assert successors.hub_places(producers, consumers) == [0, 0, 1]


def test_the_cast_after_the_cube_has_a_hub_per_column_block() -> None:
    post = groups("std_t64_K1024_N8192_U6_C1")["post.64"]
    assert post.hub is not None and post.hub_order is not None
    places = [a.value.data for a in post.hub_order.data]
    assert len(places) == 128 and max(places) == 15  # 8 blocks of 16 tasks
    assert sorted(places) == sorted(list(range(16)) * 8)


def test_an_all_to_all_hub_keeps_the_task_order() -> None:
    """The cube tasks after the norm tasks all need every norm task of the body: one HUB."""
    g = groups("std_t64_K1024_N8192_U6_C1")
    assert g["linear.64"].hub is not None and g["linear.64"].hub_order is None
