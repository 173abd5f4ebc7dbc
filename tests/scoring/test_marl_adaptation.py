"""The multi-agent vector env (``AgentVecEnv``) treats the deferred adaptation re-solve as the
single-agent runner does (issue 23): while training, no solver runs and the last metrics say
``adaptation_pending``; ``play_copies`` (the evaluation) finishes it as each episode ends, and
gets the metrics of the old way (``adaptation_reference="resolve"``, the solve in the last step)."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("stable_baselines3")
pytest.importorskip("pettingzoo")

from crab_gym.baselines.sb3_multiagent import make_agent_vec_env, play_copies, random_policy  # noqa: E402

INSTANCE = "p7_small_00"


def test_training_steps_leave_the_adaptation_pending():
    venv = make_agent_vec_env("Realm-P7-v0", instances=[INSTANCE], seed=0)
    assert venv.finish_adaptation is False
    policy, obs = random_policy(0), venv.reset()
    for _ in range(500):
        obs, _, dones, infos = venv.step(policy(obs, venv.action_masks()))
        if dones.any():
            break
    metrics = infos[0]["metrics"]
    assert metrics["adaptation_pending"] is True and metrics["adaptation"] is None
    assert metrics["adaptation_reference_cost"] is None


def test_play_copies_finishes_the_adaptation_with_the_old_ways_figures():
    venv = make_agent_vec_env("Realm-P7-v0", instances=[INSTANCE], seed=0)
    new = play_copies(venv, random_policy(0), episodes=2)
    assert venv.finish_adaptation is False  # for the call only
    old = play_copies(make_agent_vec_env("Realm-P7-v0", instances=[INSTANCE], seed=0,
                                         adaptation_reference="resolve"), random_policy(0), episodes=2)
    assert [e.metrics for e in new] == [e.metrics for e in old]
    for episode in new:
        assert episode.metrics["adaptation_pending"] is False
        assert episode.metrics["adaptation"] is not None and np.isfinite(episode.metrics["adaptation_reference_cost"])


def test_an_agent_vec_env_built_to_finish_does_it_on_every_episode():
    venv = make_agent_vec_env("Realm-P7-v0", instances=[INSTANCE], seed=0, finish_adaptation=True)
    policy, obs = random_policy(1), venv.reset()
    for _ in range(500):
        obs, _, dones, infos = venv.step(policy(obs, venv.action_masks()))
        if dones.any():
            break
    rows = [info["metrics"] for info in infos if info.get("metrics")]
    assert rows and all(m == rows[0] for m in rows)  # every agent of the copy
    assert rows[0]["adaptation_pending"] is False and rows[0]["adaptation"] is not None
