"""The size-agnostic CandidatePolicy: SB3 compatibility, any instance size, `crab-gym train` and run."""

from __future__ import annotations

import json

import gymnasium as gym
import numpy as np
import pytest

pytest.importorskip("sb3_contrib")
import torch  # noqa: E402
from sb3_contrib import MaskablePPO  # noqa: E402

import crab_gym  # noqa: E402,F401 - registers the ids
from crab_gym.baselines.candidate_policy import CandidatePolicy, load_candidate_model  # noqa: E402
from crab_gym.baselines.candidate_views import (  # noqa: E402
    JOBSHOP,
    CandidateModelPolicy,
    CandidateObservations,
    PooledCandidates,
    view_for,
)
from crab_gym.baselines.rl_train import TrainSpec, train_candidates  # noqa: E402
from crab_gym.baselines.sb3_vector import candidate_vec_env  # noqa: E402
from crab_gym.cli import main  # noqa: E402
from crab_gym.datasets.splits import select  # noqa: E402
from crab_gym.envs.realm.jobshop.features import N_FEATURES, job_features, non_delay_mask  # noqa: E402
from crab_gym.wrappers.discrete import DiscreteActions  # noqa: E402


@pytest.fixture(autouse=True)
def _one_thread():
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


def _vec(num_envs: int = 4, size: tuple[int, int] = (6, 6)):
    venv = gym.make_vec("Realm-P11-v0", num_envs=num_envs, vectorization_mode="vector_entry_point",
                        generator=size, reference="bound", reward_mode="makespan")
    return candidate_vec_env(venv, JOBSHOP, reward_scale=0.01)


@pytest.fixture(scope="module")
def model():
    """A model trained for a few iterations on generated 6x6 instances."""
    torch.set_num_threads(1)
    env = _vec()
    env.seed(0)
    trained = MaskablePPO(CandidatePolicy, env, n_steps=64, batch_size=64, n_epochs=1, seed=0, device="cpu",
                          policy_kwargs={"hidden": 16, "view": "jobshop"}).learn(512)
    env.close()
    return trained


def test_no_weight_depends_on_the_number_of_candidates(model, tmp_path) -> None:
    path = tmp_path / "m.zip"
    model.save(path)
    wide = load_candidate_model(str(path), 20)
    assert wide.observation_space.shape == (20, N_FEATURES) and wide.action_space.n == 20
    for name, tensor in model.policy.state_dict().items():
        assert torch.equal(tensor, wide.policy.state_dict()[name]), name
    env = CandidateObservations(DiscreteActions(gym.make("Realm-P11-v0", instance="la21")), JOBSHOP)  # 15x10
    obs, _ = env.reset(seed=0)
    action, _ = load_candidate_model(str(path), 15).predict(obs, action_masks=env.action_masks(), deterministic=True)
    assert env.action_masks()[int(action)]


def test_the_vector_view_masks_within_the_legal_moves_and_returns_terminal_rows() -> None:
    env = _vec(num_envs=3)
    env.seed(0)
    obs = env.reset()
    assert obs.shape == (3, 6, N_FEATURES)
    rng = np.random.default_rng(0)
    finished = 0
    for _ in range(40):
        masks = env.action_masks()
        legal = env.venv.action_masks().astype(bool)
        assert not (masks & ~legal).any() and masks.any(axis=1).all()
        actions = np.array([rng.choice(np.flatnonzero(m)) for m in masks])
        obs, rewards, dones, infos = env.step(actions)
        for i in np.flatnonzero(dones):
            finished += 1
            assert infos[i]["terminal_observation"].shape == (6, N_FEATURES)
            assert infos[i]["episode"]["l"] == 36
    assert finished == 3  # every env finished its 36 dispatches once


def test_a_trained_model_plays_any_size_greedily_and_repeatably(model) -> None:
    for instance in ("ft06", "la01", "ta01"):  # 6x6, 10x5, 15x15
        makespans = []
        for _ in range(2):
            env = gym.make("Realm-P11-v0", instance=instance)
            player = CandidateModelPolicy(model, env)
            obs, info = env.reset(seed=0)
            done = False
            while not done:
                call = player(obs, info)
                assert non_delay_mask(obs)[call["arguments"]["job"]]  # it picks a non-delay job
                obs, _, terminated, truncated, info = env.step(call)
                done = terminated or truncated
            assert info["metrics"]["constraint_satisfaction"] == 1.0
            makespans.append(env.unwrapped.schedule.makespan)
        assert makespans[0] == makespans[1]


def test_a_model_refuses_ids_outside_its_view(model) -> None:
    with pytest.raises(ValueError, match="Realm-P1-v0"):
        CandidateModelPolicy(model, gym.make("Realm-P1-v0"))
    with pytest.raises(KeyError, match="no candidate view"):
        view_for("Realm-Nope-v0")


def test_a_pool_pads_rows_and_masks_the_padding() -> None:
    pool = PooledCandidates([gym.make("Realm-P11-v0", instance=n) for n in ("ft06", "la01")], JOBSHOP)
    assert pool.observation_space.shape == (10, N_FEATURES)
    sizes = set()
    for seed in range(6):
        obs, _ = pool.reset(seed=seed)
        n = pool.current.action_space.n
        sizes.add(n)
        assert not pool.action_masks()[n:].any() and not obs[n:].any()
        np.testing.assert_array_equal(obs[:n], job_features(pool.current.unwrapped._get_obs()))
    assert sizes == {6, 10}


def test_crab_gym_train_writes_a_model_that_crab_gym_run_plays(tmp_path, capsys) -> None:
    out = tmp_path / "p11"
    code = main(["train", "--env", "Realm-P11-v0", "--steps", "512", "--out", str(out), "--size", "6x6",
                 "--n-envs", "8", "--eval-every", "0", "--no-progress"])
    assert code == 0
    record = json.loads((out / "training.json").read_text())
    assert record["steps"] >= 512 and record["command"].startswith("crab-gym train --env Realm-P11-v0")
    assert record["curve"] and 0 < record["best"]["dev_optimality"] <= 1
    assert (out / "model.zip").is_file() and (out / "best_dev.zip").is_file()
    capsys.readouterr()
    code = main(["run", "--env", "Realm-P11-v0", "--instances", "ft06", "la01", "--policy", f"sb3:{out}/model.zip",
                 "--episodes", "1", "--out", str(tmp_path / "run")])
    assert code == 0
    rows = [json.loads(line) for line in (tmp_path / "run" / "episodes.jsonl").read_text().splitlines()]
    assert [r["instance"] for r in rows] == ["ft06", "la01"]
    assert all(r["success"] and r["error"] is None for r in rows)


def test_crab_gym_train_refuses_an_id_without_a_view_in_one_line(tmp_path, capsys) -> None:
    assert main(["train", "--env", "Realm-Nope-v0", "--steps", "10", "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "Realm-Nope-v0 has no candidate view" in err[0]


def test_training_is_repeatable_under_a_seed(tmp_path) -> None:
    weights = []
    for run in ("a", "b"):
        train_candidates(TrainSpec(steps=256, out=str(tmp_path / run), size=(6, 6), n_envs=8, eval_every=0,
                                   eval_instances=1), select(["Realm-P11-v0"], split="dev"), progress=False)
        weights.append(MaskablePPO.load(tmp_path / run / "model.zip", device="cpu").policy.state_dict())
    for name, tensor in weights[0].items():
        assert torch.equal(tensor, weights[1][name]), name


def test_an_installed_model_is_the_policy_named_trained(tmp_path, monkeypatch) -> None:
    from crab_gym.baselines import trained
    from crab_gym.baselines.registry import policy_specs

    monkeypatch.setattr(trained, "TRAINED_DIR", tmp_path / "shipped")
    monkeypatch.setattr(trained, "MANIFEST", tmp_path / "shipped" / "manifest.json")
    monkeypatch.setattr(trained, "_MODELS", {})
    assert trained.trained_ids() == () and not policy_specs()["trained"].fits("Realm-P11-v0")
    run = tmp_path / "run"
    train_candidates(TrainSpec(steps=256, out=str(run), size=(6, 6), n_envs=8, eval_every=0, eval_instances=1),
                     select(["Realm-P11-v0"], split="dev"), progress=False)
    entry = trained.install(run)
    assert entry["file"] == "p11.zip" and entry["command"].startswith("crab-gym train --env Realm-P11-v0")
    assert set(trained.trained_ids()) == {"Realm-P11-v0", "Realm-J2-v0", "Realm-J3-v0", "Realm-J4-v0"}
    spec = policy_specs()["trained"]
    assert spec.fits("Realm-J3-v0") and not spec.fits("Realm-P1-v0")
    env = gym.make("Realm-J3-v0", instance="j3_small_00")
    policy = spec.build(env)
    obs, info = env.reset(seed=0)
    done = False
    while not done:
        obs, _, terminated, truncated, info = env.step(policy(obs, info))
        done = terminated or truncated
    assert info["metrics"]["constraint_satisfaction"] == 1.0
