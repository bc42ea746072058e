"""The buffering settings pass takes exactly the settings the dialect lets `pto.options` carry."""

import dataclasses

from pto.dialects.pto import SETTINGS
from pto.passes.tile_apply_settings import TileApplySettingsPass


def test_pass_options_are_the_dialect_settings() -> None:
    assert {f.name for f in dataclasses.fields(TileApplySettingsPass)} == set(SETTINGS)
