"""A pass is found from its CLI name: file `<name with _>.py` in passes/ or lowering/."""

from pto.driver.registry import PASSES, XDSL_PASSES, all_passes


def test_pass_names_match_files_and_classes():
    for name, (module, _) in PASSES.items():
        if name in XDSL_PASSES:
            continue
        assert module.split(".")[1] in ("passes", "lowering")
        assert module.rsplit(".", 1)[1] == name.replace("-", "_")
        assert all_passes()[name]().name == name
