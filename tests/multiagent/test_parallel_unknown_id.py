"""``parallel_env`` on an id that does not exist says so (issue 38: it said "has no
multi-agent view" for a typo), and on a single-agent id says which ids have one."""

from __future__ import annotations

import pytest

import crab_gym


def test_an_unknown_id_is_called_unknown_with_the_nearest():
    with pytest.raises(ValueError, match=r"unknown env id 'Realm-P33-v0' \(did you mean 'Realm-P3-v0'\?\)"):
        crab_gym.parallel_env("Realm-P33-v0")


def test_a_single_agent_id_has_no_multi_agent_view():
    with pytest.raises(ValueError, match="'Realm-P1-v0' has no multi-agent view; multi-agent ids: Realm-P2-v0"):
        crab_gym.parallel_env("Realm-P1-v0")
