import pytest


@pytest.fixture(autouse=True)
def _private_cache(tmp_path, monkeypatch):
    """Solved references of non-shipped instances go to a per-test cache directory."""
    monkeypatch.setenv("CRAB_GYM_CACHE_DIR", str(tmp_path / "cache"))
