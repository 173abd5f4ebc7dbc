"""An isolated oracle cache for the P10 tests."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def _isolated_cache(tmp_path_factory, monkeypatch):
    """On-demand references go to a temporary folder, not the user's cache."""
    monkeypatch.setenv("CRAB_GYM_CACHE_DIR", str(tmp_path_factory.getbasetemp() / "crab_cache"))
