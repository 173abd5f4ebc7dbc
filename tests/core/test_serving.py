"""The servers' shared decisions: loopback addresses and the bearer token."""

from __future__ import annotations

import pytest

from crab_gym.core.serving import TOKEN_ENV_VAR, is_loopback, resolve_token


@pytest.mark.parametrize(("host", "loopback"), [("127.0.0.1", True), ("::1", True), ("localhost", True),
                                                ("0.0.0.0", False), ("192.168.1.4", False), ("example.org", False)])
def test_loopback_addresses(host: str, loopback: bool) -> None:
    assert is_loopback(host) is loopback


def test_the_token_given_wins_then_the_environment_then_a_new_one(monkeypatch: pytest.MonkeyPatch) -> None:
    said: list[str] = []
    monkeypatch.setenv(TOKEN_ENV_VAR, "from-the-environment-0123")
    assert resolve_token("given-token-0123456789", said.append) == "given-token-0123456789"
    assert resolve_token(None, said.append) == "from-the-environment-0123"
    monkeypatch.delenv(TOKEN_ENV_VAR)
    made = resolve_token(None, said.append)
    assert said == [made] and len(made) >= 32 and made != resolve_token(None, said.append)
    with pytest.warns(UserWarning, match="shorter than 16"):
        assert resolve_token("short", said.append) == "short"
