"""Shared fixtures: the default ruleset and small builders of layers and proposals."""

from __future__ import annotations

import pytest

from gis_sw.ruleset import Ruleset, load_ruleset


@pytest.fixture(scope="session")
def ruleset() -> Ruleset:
    return load_ruleset()
