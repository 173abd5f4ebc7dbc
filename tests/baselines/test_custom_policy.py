"""Your agent in the table: ``crab-gym run --policy module:factory`` and ``--policy sb3:model.zip``
end to end through the CLI, :func:`evaluate_masked` over a selection, and the one-line mistakes."""

from __future__ import annotations

import json
import pickle
import sys
from pathlib import Path

import pytest

from crab_gym.cli import main
from crab_gym.datasets.splits import select
from crab_gym.evaluation.report import WALL_CLOCK_FIELDS

FACTORY = "tests.baselines.custom_agents:make_legal_at_random"
PPO_TINY = {"n_steps": 64, "batch_size": 64, "n_epochs": 2, "policy_kwargs": {"net_arch": [32]}}


def run_cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["run", "--quiet", *argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def episodes(out: Path) -> list[dict]:
    """The run's episodes, without wall-clock values, in a fixed order."""
    records = [json.loads(line) for line in (out / "episodes.jsonl").read_text().splitlines()]
    for record in records:
        for name in WALL_CLOCK_FIELDS:
            record.pop(name, None)
    return sorted(records, key=lambda r: (r["policy"], r["instance"], r["seed"]))


# ------------------------------------------------------------------------------ module:factory
def test_module_factory_in_two_workers_equals_a_serial_run(capsys, tmp_path):
    argv = ["--env", "Realm-P11-v0", "--instances", "ft06", "la01", "--policy", FACTORY, "--episodes", "2"]
    code, _, err = run_cli(capsys, *argv, "--workers", "2", "--out", str(tmp_path / "workers"))
    assert code == 0, err
    code, out, err = run_cli(capsys, *argv, "--out", str(tmp_path / "serial"))
    assert code == 0, err
    spread, serial = episodes(tmp_path / "workers"), episodes(tmp_path / "serial")
    assert len(spread) == 4 and {r["policy"] for r in spread} == {FACTORY}
    assert [(r["instance"], r["split"], r["seed"]) for r in spread] == [
        ("ft06", "custom", 0), ("ft06", "custom", 1), ("la01", "custom", 0), ("la01", "custom", 1)]
    assert spread == serial  # each worker imported the factory by name and seeded each episode
    assert len({r["episode_return"] for r in serial}) > 1  # the seeds made a difference
    assert all(r["invalid_actions"] == 0 and r["success"] for r in serial)
    assert f"| Realm-P11-v0 | {FACTORY} |" in out


def test_declared_env_ids_are_checked_like_a_named_policy(capsys):
    code, out, err = run_cli(capsys, "--env", "Realm-P1-v0", "--policy", "tests.baselines.custom_agents:job_shop_only")
    assert code == 2 and out == ""
    assert "does not fit Realm-P1-v0 (it fits Realm-P11-v0)" in err


# ------------------------------------------------------------------------------ sb3:model.zip
@pytest.fixture(scope="module")
def sb3_model(tmp_path_factory) -> tuple[object, Path]:
    """A MaskablePPO trained for 256 steps on ft06, and the file it was saved to."""
    pytest.importorskip("sb3_contrib")
    import torch

    from crab_gym.baselines.sb3 import train_maskable_ppo

    torch.set_num_threads(1)
    model = train_maskable_ppo("Realm-P11-v0", 256, env_kwargs={"instance": "ft06"}, seed=0, ppo_kwargs=PPO_TINY)
    path = tmp_path_factory.mktemp("model") / "model.zip"
    model.save(path)
    return model, path


def test_a_saved_model_plays_as_evaluate_masked_does(capsys, tmp_path, sb3_model):
    from crab_gym.baselines.sb3 import evaluate_masked

    model, path = sb3_model
    name, sampled = f"sb3:{path}", f"sb3:{path}?stochastic"
    code, out, err = run_cli(capsys, "--env", "Realm-P11-v0", "--instances", "ft06", "--policy", name, sampled,
                             "--episodes", "2", "--out", str(tmp_path))
    assert code == 0, err
    records = episodes(tmp_path)
    assert {r["policy"] for r in records} == {name, sampled}
    assert all(r["invalid_actions"] == 0 and r["terminated"] and r["error"] is None for r in records)
    played = {r["seed"]: r["episode_return"] for r in records if r["policy"] == name}
    expected = evaluate_masked(model, "Realm-P11-v0", instances=["ft06"], episodes=2)
    assert played == {e["seed"]: pytest.approx(e["return"]) for e in expected.episodes}
    assert "LLM runs" not in out  # a trained model is no LLM: no row in the LLM table
    code, _, err = run_cli(capsys, "--env", "Realm-P11-v0", "--instances", "ft06", "--policy", sampled,
                           "--episodes", "2", "--out", str(tmp_path / "again"))
    assert code == 0, err
    assert episodes(tmp_path / "again") == [r for r in records if r["policy"] == sampled]  # seeded per episode


def test_evaluate_masked_over_a_selection_labels_each_episode(sb3_model):
    from crab_gym.baselines.sb3 import evaluate_masked

    model, _ = sb3_model
    result = evaluate_masked(model, select(["Realm-P11-v0"], split="all", sizes=["6x6"]), episodes=2)
    assert [(e["instance"], e["split"], e["size"], e["seed"]) for e in result.episodes] == [
        ("ft06", "all[6x6]", "6x6", 0), ("ft06", "all[6x6]", "6x6", 1)]
    assert list(result.group("instance")) == ["ft06"]
    one = evaluate_masked(model, "Realm-P11-v0", episodes=1)  # the old call: the id's default instance
    assert one.episodes[0]["instance"] is None and one.episodes[0]["return"] == result.episodes[0]["return"]


def test_evaluate_masked_refuses_an_instance_of_another_shape(sb3_model):
    from crab_gym.baselines.sb3 import ModelMismatchError, evaluate_masked

    model, _ = sb3_model
    with pytest.raises(ModelMismatchError, match=r"Realm-P11-v0 instance la01: part 'action_mask' is MultiBinary\(6\)"):
        evaluate_masked(model, "Realm-P11-v0", instances=["la01"], episodes=1)


def test_the_model_factory_survives_pickling_into_a_worker(sb3_model):
    import gymnasium as gym

    from crab_gym.baselines.custom_policy import custom_spec

    _, path = sb3_model
    factory = custom_spec(f"sb3:{path}").factory
    copy = pickle.loads(pickle.dumps(factory))  # what a worker process receives
    assert copy == factory and "data" not in repr(copy)
    env = gym.make("Realm-P11-v0", instance="ft06")
    obs, info = env.reset(seed=0)
    assert copy(env)(obs, info) == factory(env)(obs, info)
    env.close()


def test_a_plain_ppo_model_plays_with_the_masks_applied(capsys, tmp_path):
    pytest.importorskip("stable_baselines3")
    import torch
    from stable_baselines3 import PPO

    from crab_gym.baselines.sb3 import make_masked_vec_env, quiet_logger

    torch.set_num_threads(1)
    vec = make_masked_vec_env("Realm-P11-v0", 1, env_kwargs={"instance": "ft06"})
    model = PPO("MultiInputPolicy", vec, n_steps=64, batch_size=64, n_epochs=1, device="cpu", seed=0)
    model.set_logger(quiet_logger())
    model.learn(64)
    vec.close()
    model.save(tmp_path / "ppo.zip")
    code, out, err = run_cli(capsys, "--env", "Realm-P11-v0", "--instances", "ft06", "--policy",
                             f"sb3:{tmp_path / 'ppo'}", "--episodes", "1", "--out", str(tmp_path / "run"))
    assert code == 0, err
    (record,) = episodes(tmp_path / "run")
    assert record["invalid_actions"] == 0 and record["steps"] == 36 and record["success"]


# ------------------------------------------------------------------------------ mistakes
MODULE = "tests.baselines.custom_agents"
MISTAKES = {
    "no such module": ("nosuchmodule_xyz:make", ["no module named 'nosuchmodule_xyz'", "PYTHONPATH"]),
    "no such attribute": (f"{MODULE}:make_legal_at_randon",
                          [f"{MODULE!r} has no attribute 'make_legal_at_randon'", "did you mean 'make_legal_at_random'"]),
    "not callable": (f"{MODULE}:NOT_A_FACTORY", ["is not callable (its type is int)", "factory(env) -> policy"]),
    "a policy, not a factory": (f"{MODULE}:a_policy_not_a_factory",
                                ["takes (observation, info, extra)", "a factory takes the env"]),
    "no attribute given": (f"{MODULE}:", ["expected module:factory"]),
    "a named policy with a colon": ("llm:gpt-4o", ["'llm' is a named policy, not a module", "--model"]),
    "missing model file": ("sb3:/nonexistent/model.zip", ["the model file /nonexistent/model.zip does not exist"]),
    "unknown model option": ("sb3:model.zip?greedy", ["unknown option '?greedy'", "?stochastic"]),
}


@pytest.mark.parametrize("policy, fragments", MISTAKES.values(), ids=MISTAKES.keys())
def test_mistakes_are_one_line_with_exit_code_2(capsys, policy, fragments):
    code, out, err = run_cli(capsys, "--env", "Realm-P11-v0", "--instances", "ft06", "--policy", policy)
    assert (code, out) == (2, "")
    assert len(err.strip().splitlines()) == 1 and err.startswith("crab-gym run: error: "), err
    for fragment in fragments:
        assert fragment in err, (fragment, err)


def test_a_file_that_is_no_model_is_one_line(capsys, tmp_path):
    (tmp_path / "notes.zip").write_text("not a zip")
    code, _, err = run_cli(capsys, "--env", "Realm-P11-v0", "--policy", f"sb3:{tmp_path / 'notes.zip'}")
    assert code == 2 and "is no Stable-Baselines3 model" in err and len(err.strip().splitlines()) == 1


def test_a_model_of_another_shape_names_the_instances_it_fits(capsys, sb3_model):
    _, path = sb3_model
    code, out, err = run_cli(capsys, "--env", "Realm-P11-v0", "--policy", f"sb3:{path}")  # the quick split
    assert (code, out) == (2, "")
    assert "does not fit 2 of 3 instances (Realm-P11-v0 la01 (10x5), Realm-P11-v0 la16 (10x10))" in err
    assert "part 'action_mask' is MultiBinary(6) in the model, MultiBinary(10) here" in err
    assert "it fits Realm-P11-v0 ft06 (6x6): choose those, e.g. --sizes 6x6" in err


def test_a_missing_rl_extra_is_one_line(capsys, monkeypatch, sb3_model):
    _, path = sb3_model
    monkeypatch.setitem(sys.modules, "sb3_contrib", None)  # import sb3_contrib now fails
    code, out, err = run_cli(capsys, "--env", "Realm-P11-v0", "--instances", "ft06", "--policy", f"sb3:{path}")
    assert (code, out) == (2, "")
    assert 'pip install "crab_gym[rl]"' in err and len(err.strip().splitlines()) == 1


def test_the_hint_names_instances_when_a_size_class_holds_both_shapes():
    from crab_gym.baselines.custom_policy import _misfit_message
    from crab_gym.evaluation.episode import EnvCase

    def case(name: str, size: str) -> EnvCase:
        return EnvCase("Realm-P4-v0", {"instance": name}, split="quick", instance=name, size=size)

    fits = [(case("p4_small_01", "small"), None)]
    misfits = [(case("p4_medium_01", "medium"), "why"), (case("p4_small_04", "small"), "why")]
    assert _misfit_message("sb3:m.zip", fits, misfits).endswith("e.g. --instances p4_small_01")  # --sizes small misfits
    assert _misfit_message("sb3:m.zip", fits, misfits[:1]).endswith("e.g. --sizes small")
