"""TrajectoryLogger: JSON Lines records, crash-tolerant reading, replay, Minari export."""

from __future__ import annotations

import json
import warnings

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import crab_gym  # noqa: F401  (registers the ids)
from crab_gym.envs.realm.jobshop.heuristics import SPT
from crab_gym.wrappers.discrete import DiscreteActions
from crab_gym.wrappers.trajectory import (
    FORMAT,
    TornRecordWarning,
    TrajectoryLogger,
    iter_records,
    read_trajectories,
    repair_torn_tail,
    replay,
)
from tests.core.toy_env import LampsEnv

LAMPS_ID = "crab_gym_test/Lamps-v0"
if LAMPS_ID not in gym.registry:
    gym.register(LAMPS_ID, entry_point="tests.core.toy_env:LampsEnv")


def _play_lamps(env: gym.Env, seeds: list[int | None], rng_seed: int = 0) -> list[float]:
    """Random legal moves (plus one malformed and one masked move per episode)."""
    rng = np.random.default_rng(rng_seed)
    returns = []
    for seed in seeds:
        obs, info = env.reset(seed=seed)
        total, done = 0.0, False
        _, r, *_ = env.step({"name": "switch_on", "arguments": {"lamp": 99}})  # malformed
        total += r
        lit = int(np.flatnonzero(obs["lit"])[0])
        _, r, *_ = env.step({"name": "switch_on", "arguments": {"lamp": lit}})  # masked
        total += r
        while not done:
            legal = np.flatnonzero(env.unwrapped.action_masks())
            call = env.unwrapped.codec.flat_to_call(int(rng.choice(legal)))
            obs, r, te, tr, info = env.step(call)
            total += r
            done = te or tr
        returns.append(total)
    return returns


@pytest.fixture
def lamps_log(tmp_path):
    path = tmp_path / "lamps.jsonl"
    env = TrajectoryLogger(gym.make(LAMPS_ID, invalid_action_penalty=0.25), path, policy="random")
    returns = _play_lamps(env, [3, None, 11])
    env.close()
    return path, returns


def test_records_header_steps_and_end(lamps_log):
    path, returns = lamps_log
    episodes = read_trajectories(path)
    assert len(episodes) == 3
    first = episodes[0]
    h = first.header
    assert h["format"] == FORMAT
    assert h["env_id"] == LAMPS_ID and h["env_kwargs"] == {"invalid_action_penalty": 0.25}
    assert h["seed"] == 3 and episodes[1].seed is None and episodes[2].seed == 11
    assert h["policy"] == "random"
    assert {"python", "crab_gym", "gymnasium", "numpy", "pydantic"} <= set(h["versions"])
    assert h["versions"]["gymnasium"] == gym.__version__
    # the reset observation: the lit lamp is visible in the summary
    assert sum(h["observation"]["lit"]["values"]) == 1
    for ep, ret in zip(episodes, returns):
        assert ep.complete and ep.end["terminated"]
        assert ep.episode_return == pytest.approx(ret)
        assert ep.end["return"] == pytest.approx(ret)
        assert ep.end["metrics"]["moves"] == sum(1 for s in ep.steps if s["info"]["valid"])
        # malformed first move: no tool call, the raw action kept, the penalty recorded
        bad = ep.steps[0]
        assert bad["action"] is None and bad["raw_action"]["arguments"]["lamp"] == 99
        assert bad["reward"] == -0.25 and bad["info"]["valid"] is False
        assert "lamp" in bad["info"]["error"]
        masked = ep.steps[1]
        assert masked["action"]["name"] == "switch_on" and masked["info"]["valid"] is False
        assert [s["step"] for s in ep.steps] == list(range(1, len(ep) + 1))
        assert ep.steps[-1]["terminated"] is True
        assert all(isinstance(s["obs_digest"], str) for s in ep.steps)


def test_every_line_is_valid_json_with_a_type(lamps_log):
    path, _ = lamps_log
    lines = path.read_text().splitlines()
    kinds = [json.loads(line)["type"] for line in lines]
    assert kinds.count("episode") == 3 and kinds.count("end") == 3
    assert kinds[0] == "episode"


def test_each_step_is_on_disk_before_the_next(tmp_path):
    path = tmp_path / "live.jsonl"
    env = TrajectoryLogger(LampsEnv(), path)
    env.reset(seed=0)
    assert [r["type"] for r in iter_records(path)] == ["episode"]
    env.step({"name": "switch_all_off", "arguments": {}})
    assert [r["type"] for r in iter_records(path)] == ["episode", "step"]  # flushed, not closed
    env.close()


def test_reader_tolerates_a_truncated_last_line(lamps_log):
    path, _ = lamps_log
    text = path.read_text()
    full = read_trajectories(path)
    cut = text[: len(text) - len(text.splitlines()[-1]) // 2 - 1]  # the end record, half-written
    path.write_text(cut)
    episodes = read_trajectories(path)
    assert len(episodes) == 3
    assert episodes[2].end is None and not episodes[2].complete
    assert len(episodes[2]) == len(full[2])  # every step is still there
    # a crash mid-step: the half line is dropped, earlier steps survive
    lines = text.splitlines()
    path.write_text("\n".join(lines[:5]) + "\n" + lines[5][:17])
    assert len(read_trajectories(path)[0].steps) == 4


def test_reader_rejects_a_damaged_middle_line(lamps_log):
    path, _ = lamps_log
    lines = path.read_text().splitlines()
    lines[3] = lines[3][:10]
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(ValueError, match="line 4"):
        read_trajectories(path)


def test_replay_reproduces_seeded_and_unseeded_episodes(lamps_log):
    path, _ = lamps_log
    report = replay(path)
    assert report.ok, str(report)
    assert report.episodes == 3 and report.steps == sum(len(e) for e in read_trajectories(path))
    assert "identical" in str(report)


def test_first_unseeded_reset_gets_a_recorded_seed(tmp_path):
    path = tmp_path / "unseeded.jsonl"
    env = TrajectoryLogger(gym.make(LAMPS_ID), path)
    _play_lamps(env, [None, None])
    env.close()
    episodes = read_trajectories(path)
    assert isinstance(episodes[0].seed, int) and episodes[1].seed is None
    assert replay(path).ok


def test_replay_reports_a_changed_reward_and_observation(lamps_log):
    path, _ = lamps_log
    records = [json.loads(line) for line in path.read_text().splitlines()]
    steps = [r for r in records if r["type"] == "step" and r["episode"] == 1]
    steps[2]["reward"] += 1.0
    steps[3]["obs_digest"] = "0" * 20
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    report = replay(path)
    assert not report.ok
    found = {(d.episode, d.step, d.field) for d in report.differences}
    assert found == {(1, 3, "reward"), (1, 4, "observation")}
    diff = next(d for d in report.differences if d.field == "reward")
    assert diff.recorded == pytest.approx(diff.replayed + 1.0)


def test_replay_notices_a_different_seed(lamps_log):
    path, _ = lamps_log
    records = [json.loads(line) for line in path.read_text().splitlines()]
    # seed 3 lights one lamp at reset; find a seed that lights another one
    lit3 = int(np.flatnonzero(LampsEnv().reset(seed=3)[0]["lit"])[0])
    other = next(s for s in range(100) if int(np.flatnonzero(LampsEnv().reset(seed=s)[0]["lit"])[0]) != lit3)
    records[0]["seed"] = other
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    report = replay(path, episodes=[0])
    assert any(d.field == "observation" and d.step == 0 for d in report.differences)


def test_logger_over_discrete_actions_replays_from_the_spec(tmp_path):
    path = tmp_path / "ft06.jsonl"
    env = TrajectoryLogger(DiscreteActions(gym.make("Realm-P11-v0")), path, policy="SPT")
    obs, info = env.reset(seed=0)
    done = False
    while not done:
        flat = env.get_wrapper_attr("call_to_flat")(SPT(obs, info))
        obs, _, te, tr, info = env.step(np.int64(flat))
        done = te or tr
    env.close()
    (episode,) = read_trajectories(path)
    assert episode.header["wrappers"] == ["DiscreteActions"]
    assert all(type(a) is np.int64 for a in episode.raw_actions)  # exactly what the policy gave
    assert [int(a) for a in episode.raw_actions] == [c["arguments"]["job"] for c in episode.actions]
    assert episode.actions[0]["name"] == "dispatch"
    assert episode.end["metrics"]["makespan"] == info["metrics"]["makespan"]
    assert replay(path).ok  # rebuilt from the spec: DiscreteActions(gym.make(...)), raw ints
    assert replay(path, actions="call").ok
    assert replay(path, env=DiscreteActions(gym.make("Realm-P11-v0"))).ok


def test_full_observation_mode_round_trips(tmp_path):
    from crab_gym.wrappers._jsonable import decode_value

    path = tmp_path / "full.jsonl"
    env = TrajectoryLogger(LampsEnv(), path, observations="full")
    obs0, _ = env.reset(seed=1)
    obs1, *_ = env.step({"name": "switch_all_off", "arguments": {}})
    env.close()
    (episode,) = read_trajectories(path)
    for recorded, actual in ((episode.header["observation"], obs0), (episode.steps[0]["observation"], obs1)):
        back = decode_value(recorded)
        assert set(back) == set(actual)
        for k in actual:
            assert back[k].dtype == actual[k].dtype and np.array_equal(back[k], actual[k])


@pytest.mark.parametrize("env_id", [None, "Realm-P1-v0", "Realm-P2-v0", "Realm-P3-v0", "Realm-P4-v0", "Realm-P11-v0"])
def test_logger_passes_check_env(tmp_path, env_id):
    base = LampsEnv() if env_id is None else gym.make(env_id).unwrapped
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check_env(TrajectoryLogger(base, tmp_path / "a.jsonl"), skip_render_check=True)
    assert read_trajectories(tmp_path / "a.jsonl")  # check_env's episodes were recorded


def test_info_is_untouched(tmp_path):
    plain, logged = LampsEnv(), TrajectoryLogger(LampsEnv(), tmp_path / "c.jsonl")
    assert plain.reset(seed=5)[1] == logged.reset(seed=5)[1]
    call = {"name": "switch_all_off", "arguments": {}}
    assert plain.step(call)[4] == logged.step(call)[4]


def test_llm_exchange_is_recorded(tmp_path):
    from crab_gym.wrappers.llm_adapter import LLMAdapter

    path = tmp_path / "llm.jsonl"
    env = TrajectoryLogger(LLMAdapter(LampsEnv()), path, policy="scripted-llm")
    prompt, _ = env.reset(seed=2)
    env.attach_llm(messages=[{"role": "user", "content": "hi"}], model="scripted")
    reply = 'I will switch it on: {"name": "switch_on", "arguments": {"lamp": 0}}'
    env.step(reply)
    env.step("no tool call here")
    env.close()
    (episode,) = read_trajectories(path)
    first, second = episode.steps
    assert first["llm"]["prompt"] == prompt and first["llm"]["response"] == reply
    assert first["llm"]["messages"] == [{"role": "user", "content": "hi"}] and first["llm"]["model"] == "scripted"
    assert first["llm"]["tool_call"] in (None, {"name": "switch_on", "arguments": {"lamp": 0}})
    assert second["llm"]["response"] == "no tool call here" and second["llm"]["error"]
    assert "messages" not in second["llm"]  # attached data goes to one step only
    assert replay(path, env=LLMAdapter(LampsEnv())).ok


def test_minari_export(tmp_path, monkeypatch):
    minari = pytest.importorskip("minari")
    pytest.importorskip("pyarrow")
    from crab_gym.wrappers.minari_export import UnflattenableStepError, export_minari

    path = tmp_path / "spt.jsonl"
    env = TrajectoryLogger(gym.make("Realm-P11-v0"), path, policy="SPT")
    makespans = []
    for seed in (0, 1):
        obs, info = env.reset(seed=seed)
        done = False
        while not done:
            obs, _, te, tr, info = env.step(SPT(obs, info))
            done = te or tr
        makespans.append(info["metrics"]["makespan"])
    env.close()
    monkeypatch.chdir(tmp_path)
    ds = export_minari(path, "crab_gym/realm-p11/spt-v0", data_path="minari")  # relative is fine
    assert ds.total_episodes == 2 and ds.total_steps == 72
    assert ds.spec.action_space == gym.spaces.Discrete(6)
    episode = next(ds.iterate_episodes())
    recorded = read_trajectories(path)[0]
    assert episode.actions.tolist() == [c["arguments"]["job"] for c in recorded.actions]
    assert episode.observations["done"].shape == (37, 6, 6)
    assert episode.observations["done"][-1].all()
    assert float(episode.rewards.sum()) == pytest.approx(recorded.episode_return)
    # the dataset's env is the flat one, and replaying its actions gives SPT's makespan
    flat_env = ds.recover_environment()
    assert isinstance(flat_env.action_space, gym.spaces.Discrete)
    flat_env.reset(seed=0)
    for a in episode.actions:
        *_, info = flat_env.step(int(a))
    assert info["metrics"]["makespan"] == makespans[0]
    # exported again (issue 38: the docs' example failed when pasted twice): refused, or replaced
    with pytest.raises(FileExistsError, match="overwrite=True"):
        export_minari(path, "crab_gym/realm-p11/spt-v0", data_path="minari")
    again = export_minari(path, "crab_gym/realm-p11/spt-v0", data_path="minari", overwrite=True)
    assert again.total_episodes == 2 and again.total_steps == 72
    # a plan submitted whole has no flat index
    path2 = tmp_path / "plan.jsonl"
    env = TrajectoryLogger(gym.make("Realm-P11-v0"), path2)
    env.reset(seed=0)
    env.step({"name": "submit_plan", "arguments": {"sequence": info["solution"]["sequence"]}})
    env.close()
    with pytest.raises(UnflattenableStepError, match="submit_plan"):
        export_minari(path2, "crab_gym/realm-p11/plan-v0", data_path=tmp_path / "minari")
    del minari


# ---------------------------------------------------------------------- torn records, resume
def _record_resumed_run(path) -> None:
    """What a resumed run writes: one seeded episode (deterministic, so comparable)."""
    env = TrajectoryLogger(gym.make(LAMPS_ID, invalid_action_penalty=0.25), path, policy="random", append=True)
    _play_lamps(env, [5], rng_seed=1)
    env.close()


@pytest.fixture
def resumed_records(tmp_path):
    """The records a resumed run adds, written to a file of their own."""
    path = tmp_path / "resumed-alone.jsonl"
    _record_resumed_run(path)
    records = list(iter_records(path))
    assert [r["type"] for r in records][0] == "episode" and records[-1]["type"] == "end"
    return path.read_bytes(), records


def test_resume_after_a_crash_mid_record_keeps_every_whole_record(lamps_log, resumed_records):
    path, _ = lamps_log
    original = path.read_bytes()
    before = list(iter_records(path))
    last_start = original.rstrip(b"\n").rfind(b"\n") + 1
    last_len = len(original) - 1 - last_start  # the last record, without its newline
    assert last_len > 40
    _, new = resumed_records
    for cut in (1, 2, 17, last_len // 2, last_len - 1):  # the crash tore the last record here
        path.write_bytes(original[: last_start + cut])
        with pytest.warns(TornRecordWarning, match=rf"dropped its {cut} byte"):
            _record_resumed_run(path)
        assert path.read_bytes().startswith(original[:last_start])  # nothing whole was touched
        records = list(iter_records(path))
        assert records == before[:-1] + new, f"torn at byte {cut} of the last record"
        episodes = read_trajectories(path)
        assert len(episodes) == 4
        assert not episodes[2].complete and episodes[3].complete  # the torn end record is gone
        assert [e.seed for e in episodes] == [3, None, 11, 5]


def test_resume_after_a_crash_before_the_newline_keeps_the_whole_record(lamps_log, resumed_records):
    path, _ = lamps_log
    original = path.read_bytes()
    before = list(iter_records(path))
    path.write_bytes(original[:-1])  # the record is whole; only its newline is missing
    with warnings.catch_warnings():
        warnings.simplefilter("error", TornRecordWarning)  # nothing is dropped: no warning
        _record_resumed_run(path)
    assert list(iter_records(path)) == before + resumed_records[1]


def test_repair_torn_tail(tmp_path):
    assert repair_torn_tail(tmp_path / "missing.jsonl") == 0
    whole = tmp_path / "whole.jsonl"
    whole.write_bytes(b'{"type":"episode"}\n')
    assert repair_torn_tail(whole) == 0 and whole.read_bytes() == b'{"type":"episode"}\n'
    only_torn = tmp_path / "torn.jsonl"
    only_torn.write_bytes(b'{"type":"epi')
    with pytest.warns(TornRecordWarning, match="dropped its 12 byte"):
        assert repair_torn_tail(only_torn) == 12
    assert only_torn.read_bytes() == b""


@pytest.mark.parametrize("glued", [True, False], ids=["header-glued-on", "header-on-next-line"])
def test_reader_skips_a_torn_record_that_a_resumed_run_followed(lamps_log, resumed_records, glued):
    """Files resumed before the repair existed (glued) or by another writer (next line)."""
    path, _ = lamps_log
    original = path.read_bytes()
    before = list(iter_records(path))
    new_bytes, new = resumed_records
    torn = original[: len(original) - 30]  # mid-way through the last (end) record
    path.write_bytes(torn + (b"" if glued else b"\n") + new_bytes)
    with pytest.warns(TornRecordWarning, match="cut off mid-write"):
        records = list(iter_records(path))
    assert records == before[:-1] + new
    # a damaged line that no resumed run explains is still an error
    path.write_bytes(torn + b"\n" + new_bytes.split(b"\n", 1)[1])
    with pytest.raises(ValueError, match="not a JSON record"):
        list(iter_records(path))
