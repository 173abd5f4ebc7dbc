"""``crab-gym mcp`` over stdio, driven by the SDK's own client (a real server process, no mock
transport): oracle episodes end with the metrics ``crab-gym run`` reports and are recorded where
``crab-gym report`` reads them; a bad call is a tool error; every REALM id plays to the end."""

from __future__ import annotations

import json
import subprocess
import sys

import anyio
import pytest

from crab_gym.envs.realm.index import problem_specs
from crab_gym.evaluation.episode_store import EpisodeStore
from tests.mcp_server.client import call, play_oracle, play_random, replay, run_reference, start, stdio_session

#: (id, seed): instances on which the env scores its reference plan at 1.
ORACLE_CASES = [("Realm-P1-v0", 0), ("Realm-P7-v0", 1), ("Realm-P11-v0", 0)]
WALL_CLOCK = ("wall_time_s",)


def _without_clock(record: dict) -> dict:
    return {k: v for k, v in record.items() if k not in WALL_CLOCK and k != "traceback"}


def test_oracle_episodes_end_with_the_runs_metrics_and_are_recorded(tmp_path):
    async def main():
        async with stdio_session(tmp_path) as session:
            return [await play_oracle(session, env_id, seed) for env_id, seed in ORACLE_CASES]

    played = anyio.run(main)
    records = EpisodeStore(tmp_path).load()
    assert [(r.env_id, r.seed, r.policy, r.index) for r in records] == [(e, s, "mcp", 0) for e, s in ORACLE_CASES]
    for (env_id, seed), episode, record in zip(ORACLE_CASES, played, records):
        reference = run_reference(env_id, seed)
        assert episode.result["metrics"] == reference["metrics"], env_id
        assert episode.result["metrics"]["optimality"] == 1.0
        assert episode.result["success"] is True and episode.result["terminated"] is True
        for key in ("steps", "episode_return", "completeness", "success", "terminated", "truncated"):
            assert episode.result[key] == reference[key], (env_id, key)
        assert _without_clock(record.to_dict()) == _without_clock(episode.result)
        assert "The episode is over." in episode.replies[-1].content[0].text
    report = subprocess.run([sys.executable, "-m", "crab_gym.cli", "report", str(tmp_path)],
                            capture_output=True, text=True, timeout=120)
    assert report.returncode == 0, report.stderr
    for env_id, _ in ORACLE_CASES:
        assert env_id in report.stdout
    assert (tmp_path / "report.json").is_file()


def test_a_bad_call_is_a_tool_error_with_the_envs_reason_and_changes_nothing():
    async def main():
        async with stdio_session() as session:
            before_start = await call(session, "observe")
            await start(session, "Realm-P11-v0", instance="ft06")
            state = (await call(session, "observe")).structuredContent["state"]
            bad = await call(session, "dispatch", {"job": 99})
            missing = await call(session, "submit_plan", {})
            wrong_type = await call(session, "start_episode", {"env_id": "Realm-P11-v0", "seed": "soon"})
            after = await call(session, "observe")
            good = await call(session, "dispatch", {"job": 0})
            return before_start, state, bad, missing, wrong_type, after, good

    before_start, state, bad, missing, wrong_type, after, good = anyio.run(main)
    assert before_start.isError and "start_episode first" in before_start.content[0].text
    assert bad.isError and "less than or equal to 5" in bad.content[0].text
    assert bad.structuredContent["valid"] is False
    assert missing.isError and "'sequence' is required" in missing.content[0].text
    assert wrong_type.isError and "seed" in wrong_type.content[0].text
    assert after.structuredContent["state"] == state  # the rejected calls changed nothing
    assert after.structuredContent["env_kwargs"] == {"instance": "ft06"}  # nor ended the episode
    assert not good.isError and good.structuredContent["steps"] == 3


def test_an_mcp_session_plays_every_realm_id_to_the_end():
    """A seeded random player, reading the legal calls from the replies, on every id of the
    problem index; the env's own metrics come back, equal to the same calls played locally."""
    env_ids = [spec.env_id for spec in problem_specs()]

    async def main():
        async with stdio_session() as session:
            return [await play_random(session, env_id, seed=0) for env_id in env_ids]

    played = anyio.run(main)
    for env_id, episode in zip(env_ids, played):
        assert episode.result["terminated"] is True, env_id
        assert episode.result["env_id"] == env_id and episode.result["steps"] == len(episode.calls)
        assert episode.result["metrics"] == replay(env_id, 0, episode.calls), env_id
        assert 0.0 <= episode.result["metrics"]["optimality"] <= 1.0


@pytest.mark.parametrize("stdin", ["pipe", "file"])
def test_the_stdio_server_exits_cleanly_when_its_input_ends(stdin, tmp_path):
    """Over a pipe (read on the event loop) and from a regular file (the SDK's own reader)."""
    hello = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
             "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                        "clientInfo": {"name": "test", "version": "0"}}}
    command = [sys.executable, "-m", "crab_gym.cli", "mcp", "--out", str(tmp_path / "out")]
    if stdin == "pipe":
        done = subprocess.run(command, input=json.dumps(hello) + "\n", capture_output=True, text=True, timeout=120)
    else:
        (tmp_path / "in.jsonl").write_text(json.dumps(hello) + "\n")
        with open(tmp_path / "in.jsonl") as source:
            done = subprocess.run(command, stdin=source, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    answer = json.loads(done.stdout.splitlines()[0])
    assert answer["id"] == 1 and answer["result"]["serverInfo"]["name"] == "crab-gym"
    assert "0 episode(s) appended" in done.stderr
