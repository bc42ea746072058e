import pytest

from pto.targets import UnknownTargetError, available_targets, load_target


def test_both_targets_load_with_machine_md_figures():
    assert available_targets() == ["ascend910b1", "ascend950"]
    a2 = load_target("ascend910b1")
    assert (a2.cube_cores, a2.vector_cores, a2.clock_mhz) == (24, 48, 1850)
    assert a2.capacity("ub") == 192 * 1024 and a2.capacity("l0c") == 128 * 1024
    assert a2.l2["line_bytes"] == 512 and a2.macs_per_cycle("bf16") == 4096
    # A2/A3 has no L0C->UB and no UB<->L1 path; the 950 has them.
    assert not a2.has_path("l0c", "ub") and not a2.has_path("ub", "l1")
    b = load_target("ascend950")
    assert b.has_path("l0c", "ub") and b.has_path("ub", "l1") and b.capacity("l0c") == 256 * 1024


def test_unknown_target_names_known_ones():
    with pytest.raises(UnknownTargetError, match="known: ascend910b1, ascend950"):
        load_target("h100")
