import tomllib

import pytest

from pto.targets import DEFAULT_TARGET, UnknownTargetError, available_targets, load_target


def test_both_targets_load_with_machine_md_figures():
    assert available_targets() == ["ascend910b1", "ascend910b1-pypto020", "ascend950"]
    a2 = load_target("ascend910b1")
    assert (a2.cube_cores, a2.vector_cores, a2.clock_mhz) == (24, 48, 1850)
    assert a2.capacity("ub") == 192 * 1024 and a2.capacity("l0c") == 128 * 1024
    assert a2.l2.line_bytes == 512 and a2.macs_per_cycle("bf16") == 4096
    # A2/A3 has no L0C->UB and no UB<->L1 path; the 950 has them.
    assert not a2.has_path("l0c", "ub") and not a2.has_path("ub", "l1")
    b = load_target("ascend950")
    assert b.has_path("l0c", "ub") and b.has_path("ub", "l1") and b.capacity("l0c") == 256 * 1024


def test_unknown_target_names_known_ones():
    with pytest.raises(UnknownTargetError, match="known: ascend910b1, ascend910b1-pypto020, ascend950"):
        load_target("h100")


def _write_target(tmp_path, text: str):
    p = tmp_path / "t.toml"
    p.write_text(text)
    return p


def _good_text() -> str:
    from pathlib import Path

    import pto.targets

    return (Path(pto.targets.__file__).parent / "ascend910b1.toml").read_text()


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda s: s.replace("ways = 16", "ways = 16\nassociativity = 16"), "t.toml.l2: unknown key 'associativity'"),
        (lambda s: s.replace("fractal = 16\n", ""), "t.toml.cube: missing key 'fractal'"),
        (lambda s: s.replace('form = "fractal"', 'form = "macs"'), "t.toml.cube.form: expected one of fractal, opsim"),
        (lambda s: s.replace('form = "fractal"', 'form = "opsim"'), "t.toml.cube.opsim: the opsim form needs mul_r0"),
        (lambda s: s.replace("opsim = {}", "opsim = { r0 = 1 }"), "t.toml.cube.opsim: unknown key 'r0'"),
        (lambda s: s.replace("hub_pairs = 16", 'hub_pairs = "16"'), "t.toml.model.hub_pairs: expected int, got '16'"),
        (
            lambda s: s.replace("dma_fixed_costs = true", "dma_fixed_costs = 1"),
            "t.toml.model.dma_fixed_costs: expected bool, got 1",
        ),
        (lambda s: s.replace('"gm->ub" = 32', '"gm->ub" = "fast"'), "t.toml.paths.gm->ub: expected float"),
        (lambda s: s + "\n[extra]\nx = 1\n", "t.toml: unknown key 'extra'"),
    ],
)
def test_a_target_file_is_checked_against_the_schema(tmp_path, edit, message):
    from pto.targets import Target
    from pto.targets.schema import TargetFileError, build

    path = _write_target(tmp_path, edit(_good_text()))
    with pytest.raises(TargetFileError) as e:
        build(Target, tomllib.loads(path.read_text()), str(path))
    assert message in str(e.value)


def test_the_shipped_targets_load_typed():
    for name in available_targets():
        t = load_target(name)
        assert isinstance(t.l2.line_bytes, int) and isinstance(t.model.dma_fixed_costs, bool)


def test_changed_replaces_one_figure_and_refuses_an_unknown_one():
    from pto.targets.schema import TargetFileError

    t = load_target()
    u = t.changed(latency__task_ready=0, l2__ways=8)
    assert (u.latency.task_ready, u.l2.ways, u.l2.line_bytes) == (0, 8, t.l2.line_bytes)
    assert t.latency.task_ready != 0  # the original is unchanged
    with pytest.raises(TargetFileError, match="no target figure 'latency.bogus'"):
        t.changed(latency__bogus=1)


def _lowered_on(monkeypatch, **figures) -> str:
    """A small standard kernel lowered with one 8-token body (unroll [8]) on the default
    target with some figures changed."""
    from kernels import SMALL, lowered, parse

    import pto.lowering.pto_sk03_pipeline  # noqa: F401  (imported before the patch: each binds load_target)
    import pto.targets

    original = pto.targets.load_target
    changed = original().changed(**figures)
    monkeypatch.setattr(
        pto.targets, "load_target", lambda name="": changed if name in ("", DEFAULT_TARGET) else original(name)
    )
    return str(lowered(parse(SMALL), "pto-sk03-pipeline{factors=8}"))


def test_the_cube_fractal_pads_the_m_tile(monkeypatch):
    """An 8-row body's M tile is one fractal: 16 rows on the shipped targets, 32 with a
    32-element fractal (the L0A activation tile is [m, kL0])."""
    assert "!npu.buf<16x" in _lowered_on(monkeypatch) and "!npu.buf<32x" not in _lowered_on(monkeypatch)
    ir = _lowered_on(monkeypatch, cube__fractal=32)
    l0a = {line.split(":")[-1].strip() for line in ir.splitlines() if "npu.alloc l0a" in line}
    assert l0a and all(t.startswith("!npu.buf<32x") for t in l0a), l0a


def test_the_weight_s_l1_flags_start_half_way_through_the_event_ids(monkeypatch):
    def ids(ir: str) -> set[int]:
        return {int(line.rsplit(",", 1)[1]) for line in ir.splitlines() if "npu.set_flag mte1 -> mte2" in line}

    assert ids(_lowered_on(monkeypatch)) == {0, 1, 4, 5}  # activation copies 0, 1; weight copies 4, 5
    assert ids(_lowered_on(monkeypatch, sync__event_ids=16)) == {0, 1, 8, 9}


def test_the_pypto020_calibration_is_the_default_with_pypto_0_2_0_s_cube_path():
    """It inherits ascend910b1 and changes only the cube path (docs/model.md), turns
    the AICPU scheduler threads on, gives weight-only work a task of its own and lets
    every AIC copy in at its full rate at once (PyPTO shares no HBM bandwidth), its
    cube tasks keep more than 512 KiB of L1 live (PyPTO does not back-pressure), a
    copy into L1 is charged for whole 16-row fractals and an mmad is priced by PyPTO's
    op-sim formula (MACHINE.md's matmul and matmul-accumulate coefficients)."""
    import dataclasses

    dev, sim = load_target("ascend910b1"), load_target("ascend910b1-pypto020")
    paths = {**dev.paths, "l1->l0a": 512, "l1->l0b": 256}
    want = dev.changed(
        cube__opsim={"mul_r0": 3.91153, "mul_r1": 0.0107, "mulacc_r0": 3.90376, "mulacc_r1": 0.0103},
        cube__form="opsim",
        fixpipe__form="copy",
        paths=paths,
        aicpu__enabled=True,
        model__weight_task=True,
        model__hbm_total=dev.model.gm_read_rate * dev.cube_cores,
        memory__l1=2 * dev.memory.l1,
        dma__l1_rows_unit=16,
    )
    assert sim == dataclasses.replace(want, name="ascend910b1-pypto020")
    assert (dev.path_rate("l1", "l0a"), dev.path_rate("l1", "l0b"), dev.cube.mad_head_cycles) == (129.7, 85.4, 21)


@pytest.fixture
def target_dir(tmp_path, monkeypatch):
    """A folder of target files in place of the shipped one (ascend910b1 copied in)."""
    import pto.targets

    (tmp_path / "ascend910b1.toml").write_text(_good_text())
    monkeypatch.setattr(pto.targets, "_DIR", tmp_path)
    load_target.cache_clear()
    yield tmp_path
    load_target.cache_clear()


def test_an_inheriting_target_merges_tables_key_by_key(target_dir):
    (target_dir / "mid.toml").write_text('inherits = "ascend910b1"\nname = "mid"\n[paths]\n"l1->l0b" = 100\n')
    (target_dir / "leaf.toml").write_text('inherits = "mid"\nname = "leaf"\n[latency]\nstitch = 1\n')
    base, leaf = load_target("ascend910b1"), load_target("leaf")
    assert leaf.path_rate("l1", "l0b") == 100 and leaf.path_rate("l1", "l0a") == base.path_rate("l1", "l0a")
    assert leaf.latency.stitch == 1 and leaf.latency.copy_in == base.latency.copy_in and leaf.name == "leaf"


@pytest.mark.parametrize(
    ("files", "message"),
    [
        ({"a": 'inherits = "nope"\nname = "a"\n'}, "a.toml: inherits unknown target 'nope' (known: a, ascend910b1)"),
        ({"a": 'inherits = "b"\nname = "a"\n', "b": 'inherits = "a"\nname = "b"\n'}, "which inherits it (a cycle)"),
        ({"a": 'inherits = "a"\nname = "a"\n'}, "a.toml: inherits 'a', which inherits it (a cycle)"),
        ({"a": 'inherits = 3\nname = "a"\n'}, "a.toml: inherits: expected a target name, got 3"),
        ({"a": 'inherits = "ascend910b1"\n'}, "a.toml: name is 'ascend910b1', the file says 'a'"),
        ({"a": 'inherits = "ascend910b1"\nname = "a"\n[cube]\nbogus = 1\n'}, "a.toml.cube: unknown key 'bogus'"),
        ({"a": 'inherits = "ascend910b1"\nname = "a"\n[fixpipe]\nform = "fast"\n'}, "a.toml.fixpipe.form: expected"),
    ],
)
def test_a_bad_inheritance_is_one_line_naming_the_file(target_dir, files, message):
    from pto.targets.schema import TargetFileError

    for name, text in files.items():
        (target_dir / f"{name}.toml").write_text(text)
    with pytest.raises(TargetFileError) as e:
        load_target("a")
    assert message in str(e.value) and "\n" not in str(e.value)
