"""The server's parts without a transport: episode indices, the directory lock, an episode
that a session abandons, and the command line's mistakes."""

from __future__ import annotations

import json
import sys

import pytest

from crab_gym.cli import main
from crab_gym.evaluation.episode import EpisodeResult
from crab_gym.evaluation.episode_store import EpisodeStore, EpisodeStoreConflict
from crab_gym.mcp import tools
from crab_gym.mcp.recording import EpisodeRecorder
from crab_gym.mcp.sessions import SessionRegistry


def _result(env_id: str, policy: str, index: int, kwargs: dict | None = None) -> EpisodeResult:
    return EpisodeResult(env_id=env_id, env_kwargs=kwargs or {}, policy=policy, seed=0, index=index, max_steps=10)


def test_indices_continue_after_the_episodes_the_directory_holds(tmp_path):
    with EpisodeStore(tmp_path) as store:
        store.extend([_result("Realm-P11-v0", "mcp", 0), _result("Realm-P11-v0", "mcp", 4),
                      _result("Realm-P11-v0", "mcp", 0, {"instance": "ft06"})])
    with EpisodeRecorder(tmp_path) as recorder:
        assert recorder.next_index("Realm-P11-v0", {}, "mcp") == 5
        assert recorder.next_index("Realm-P11-v0", {}, "mcp") == 6
        assert recorder.next_index("Realm-P11-v0", {"instance": "ft06"}, "mcp") == 1
        assert recorder.next_index("Realm-P11-v0", {}, "gpt") == 0
        assert recorder.next_index("Realm-P1-v0", {}, "mcp") == 0


def test_a_second_writer_of_the_directory_is_refused(tmp_path):
    with EpisodeRecorder(tmp_path), pytest.raises(EpisodeStoreConflict, match="another run is writing"):
        EpisodeRecorder(tmp_path).open()


def test_a_session_that_ends_mid_episode_records_it_truncated(tmp_path):
    with EpisodeRecorder(tmp_path) as recorder:
        registry = SessionRegistry(recorder)
        session = registry.open()
        started = tools.call(session, "start_episode", {"env_id": "Realm-P11-v0", "instance": "ft06"})
        assert not started.error and started.tools_changed
        assert not tools.call(session, "dispatch", {"job": 0}).error
        registry.close_all()
        assert registry.live == 0 and session.episode is None
    (line,) = (tmp_path / "episodes.jsonl").read_text().splitlines()
    record = json.loads(line)
    assert (record["steps"], record["terminated"], record["truncated"], record["success"]) == (1, False, True, False)
    plan_metrics = ("planning_quality", "optimality", "constraint_satisfaction")
    assert [record["metrics"][k] for k in plan_metrics] == [0.0, 0.0, 0.0]  # no plan: 0, as crab-gym run


def test_starting_an_episode_ends_the_running_one_and_says_so():
    registry = SessionRegistry(EpisodeRecorder())
    session = registry.open()
    tools.call(session, "start_episode", {"env_id": "Realm-P1-v0"})
    second = tools.call(session, "start_episode", {"env_id": "Realm-P1-v0", "seed": 1})
    assert "ended as truncated and was recorded" in second.text
    assert second.data["previous"]["truncated"] is True and second.data["index"] == 1
    assert [r.index for r in session.results] == [0]


def test_a_step_limit_ends_the_episode_as_truncated():
    session = SessionRegistry(EpisodeRecorder()).open()
    tools.call(session, "start_episode", {"env_id": "Realm-P11-v0", "instance": "ft06", "max_steps": 2})
    tools.call(session, "dispatch", {"job": 0})
    last = tools.call(session, "dispatch", {"job": 1})
    assert last.data["done"] and last.data["truncated"] and last.then is not None
    final = last.then()
    assert final.data["result"]["truncated"] is True and final.data["result"]["steps"] == 2
    assert final.data["result"]["metrics"]["optimality"] == 0.0
    assert tools.call(session, "dispatch", {"job": 2}).error  # the episode is over


@pytest.mark.parametrize("argv, message", [
    (["mcp", "--token", "t" * 20], "go with --http"),
    (["mcp", "--port", "9999"], "go with --http"),
])
def test_command_line_mistakes_are_one_line_and_exit_2(argv, message, capsys):
    pytest.importorskip("mcp")  # without the SDK the command first says which extra to install
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1


def test_an_out_that_another_server_holds_is_refused(tmp_path, capsys):
    pytest.importorskip("mcp")
    with EpisodeRecorder(tmp_path):
        assert main(["mcp", "--out", str(tmp_path)]) == 2
    assert "another run is writing" in capsys.readouterr().err


def test_the_solves_an_env_deferred_run_when_the_episode_ends():
    """A generated P11 instance has no shipped reference: the env's last step leaves optimality
    pending, and the episode's reply and record carry it solved (as ``crab-gym run`` does)."""
    session = SessionRegistry(EpisodeRecorder()).open()
    reply = tools.call(session, "start_episode", {"env_id": "Realm-P11-v0", "seed": 5,
                                                  "keywords": {"generator": {"n_jobs": 4, "n_machines": 3}}})
    while not reply.data["done"]:
        move = reply.data["legal_calls"][0]
        reply = tools.call(session, move["name"], move["arguments"])
    env_said = session.episode._info["metrics"]
    assert env_said["optimality_pending"] is True and env_said["optimality"] is None
    metrics = reply.then().data["result"]["metrics"]
    assert metrics["optimality_pending"] is False
    assert metrics["optimality"] == metrics["reference_makespan"] / metrics["makespan"]


def test_without_the_sdk_the_command_names_the_extra_to_install(monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "mcp", None)  # as if the mcp extra were not installed
    assert main(["mcp"]) == 2
    assert 'pip install "crab_gym[mcp]"' in capsys.readouterr().err


def test_an_env_that_raises_ends_the_episode_recorded_with_its_error(tmp_path):
    with EpisodeRecorder(tmp_path) as recorder:
        session = SessionRegistry(recorder).open()
        tools.call(session, "start_episode", {"env_id": "Realm-P11-v0", "instance": "ft06"})

        def broken_step(action):
            raise RuntimeError("the simulator fell over")

        session.episode.env.step = broken_step
        reply = tools.call(session, "dispatch", {"job": 0})
        assert reply.error and "the env raised RuntimeError: the simulator fell over" in reply.text
        final = reply.then()
        assert final.error and final.data["result"]["error"] == "RuntimeError: the simulator fell over"
        assert tools.call(session, "dispatch", {"job": 0}).error  # over: no second record
    (line,) = (tmp_path / "episodes.jsonl").read_text().splitlines()
    record = json.loads(line)
    assert record["error"] == "RuntimeError: the simulator fell over" and "Traceback" in record["traceback"]


def test_a_client_plays_a_split_and_each_record_names_its_instance_and_split(tmp_path):
    with EpisodeRecorder(tmp_path) as recorder:
        registry = SessionRegistry(recorder)
        session = registry.open()
        listed = tools.call(session, "list_instances", {"env_id": "Realm-P11-v0", "split": "test"})
        assert listed.data["instances"][:2] == ["ta01", "ta02"] and len(listed.data["instances"]) == 80
        assert "ta" in listed.data["splits"] and "quick" in listed.data["splits"]
        refused = tools.call(session, "start_episode", {"env_id": "Realm-P11-v0", "instance": "ft06", "split": "test"})
        assert refused.error and "'ft06' is not in split 'test'" in refused.text
        unnamed = tools.call(session, "start_episode", {"env_id": "Realm-P11-v0", "split": "test"})
        assert unnamed.error and "needs an instance of it" in unnamed.text
        assert not tools.call(session, "start_episode", {"env_id": "Realm-P11-v0", "instance": "ta01",
                                                         "split": "test", "max_steps": 1}).error
        tools.call(session, "dispatch", {"job": 0})
        registry.close_all()
    (line,) = (tmp_path / "episodes.jsonl").read_text().splitlines()
    record = json.loads(line)
    assert (record["split"], record["instance"], record["size"]) == ("test", "ta01", "15x15")


def test_oversized_calls_and_names_are_refused_with_a_tool_error_and_nothing_is_stored(tmp_path):
    """Issue 38 item 8: a 3.5 MB agent name went into every record and report; a rejected 3.6 MB
    plan came back whole in the error."""
    with EpisodeRecorder(tmp_path) as recorder:
        _oversized_calls(SessionRegistry(recorder).open())
    records = [json.loads(line) for line in (tmp_path / "episodes.jsonl").read_text().splitlines()]
    assert [r["policy"] for r in records] == ["me"]


def _oversized_calls(session) -> None:
    named = tools.call(session, "start_episode", {"env_id": "Realm-P11-v0", "instance": "ft06", "agent": "x" * 3_500_000})
    assert named.error and len(named.text) < 400 and "3,500,059 characters" in named.text
    assert session.episode is None
    big_name = tools.call(session, "start_episode", {"env_id": "Realm-P11-v0", "instance": "ft06", "agent": "y" * 201})
    assert big_name.error and "200" in big_name.text
    tools.call(session, "start_episode", {"env_id": "Realm-P11-v0", "instance": "ft06", "agent": "me"})
    plan = tools.call(session, "submit_plan", {"sequence": [[0] * 600_000] * 6})
    assert plan.error and "this server reads at most 1,000,000" in plan.text and len(plan.text) < 400
    assert session.episode is not None and not session.episode.done  # the episode goes on, unchanged
    wrong = tools.call(session, "submit_plan", {"sequence": [[0, 1, 2, 3, 4, 5] * 8_000] * 6})  # 864k characters
    assert wrong.error and len(wrong.text) <= 2_100 and "more characters not shown" in wrong.text
    assert not tools.call(session, "end_episode", {}).error
