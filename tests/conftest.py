"""Fixtures every test gets: an oracle cache of its own, never the user's."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def _isolated_cache(tmp_path_factory, monkeypatch):
    """On-demand references (generated instances, injected disruptions) go to a temporary
    folder shared by the session, not to the user's cache. A test may set its own."""
    monkeypatch.setenv("CRAB_GYM_CACHE_DIR", str(tmp_path_factory.getbasetemp() / "crab_cache"))
