"""``crab-gym mcp --http``: the SDK's own client over streamable HTTP on loopback, against a real
server process with a bearer token: oracle episodes end with ``crab-gym run``'s metrics, sessions
do not see each other, a session that leaves mid-episode is recorded, and no token gets nothing."""

from __future__ import annotations

import time

import anyio
import gymnasium as gym
import httpx
import pytest

from crab_gym.wrappers import LLMAdapter
from tests.mcp_server.client import (
    TOKEN,
    call,
    http_server,
    http_session,
    play_oracle,
    run_reference,
    start,
)

ORACLE_CASES = [("Realm-P1-v0", 0), ("Realm-P7-v0", 1), ("Realm-P11-v0", 0)]


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    with http_server(tmp_path_factory.mktemp("mcp_http")) as running:
        yield running


def _records(server, agent: str, *, wait_s: float = 0.0) -> list[dict]:
    """The server's records of ``agent`` (waiting up to ``wait_s`` for the first to appear)."""
    deadline = time.monotonic() + wait_s
    while True:
        found = [r for r in server.records if r["policy"] == agent]
        if found or time.monotonic() >= deadline:
            return found
        time.sleep(0.1)


def test_oracle_episodes_over_http_end_with_the_runs_metrics(server):
    async def main():
        async with http_session(server.url) as session:
            return [await play_oracle(session, env_id, seed) for env_id, seed in ORACLE_CASES]

    played = anyio.run(main)
    for (env_id, seed), episode in zip(ORACLE_CASES, played):
        reference = run_reference(env_id, seed)
        assert episode.result["metrics"] == reference["metrics"], env_id
        assert episode.result["metrics"]["optimality"] == 1.0 and episode.result["success"] is True
    recorded = [(r["env_id"], r["seed"], r["metrics"]) for r in _records(server, "mcp")]
    assert recorded == [(e, s, p.result["metrics"]) for (e, s), p in zip(ORACLE_CASES, played)]


def test_requests_without_the_token_or_from_another_host_reach_nothing(server):
    hello = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}}
    for headers in ({}, {"Authorization": "Bearer wrong-token-0123456789"}, {"Authorization": TOKEN}):
        answer = httpx.post(server.url, json=hello, headers=headers, timeout=10)
        assert answer.status_code == 401 and "bearer token" in answer.json()["error"]

    rebinding = {"Authorization": f"Bearer {TOKEN}", "Host": "attacker.example"}  # the token, another site's page
    assert httpx.post(server.url, json=hello, headers=rebinding, timeout=10).status_code == 421

    async def wrong_token():
        async with http_session(server.url, token="not-the-token-0123456789"):
            pass

    with pytest.raises(BaseException) as raised:  # noqa: B017 - the SDK's task group carries the transport's error
        anyio.run(wrong_token)
    assert "401 Unauthorized" in repr(getattr(raised.value, "exceptions", raised.value))


def test_two_sessions_do_not_see_each_others_state(server):
    async def main():
        async with http_session(server.url) as one, http_session(server.url) as two:
            await start(one, "Realm-P11-v0", instance="ft06", agent="iso-one")
            await start(two, "Realm-P1-v0", seed=3, agent="iso-two")
            tools_one = {t.name: t for t in (await one.list_tools()).tools}
            tools_two = {t.name: t for t in (await two.list_tools()).tools}
            moved = await call(one, "dispatch", {"job": 2})
            seen_by_two = await call(two, "observe")
            foreign = await call(two, "dispatch", {"job": 2})
            await play_oracle(two, "Realm-P1-v0", 3, started=True)
            seen_by_one = await call(one, "observe")
            ended = await call(one, "end_episode")
            return tools_one, tools_two, moved, seen_by_two, foreign, seen_by_one, ended

    tools_one, tools_two, moved, seen_by_two, foreign, seen_by_one, ended = anyio.run(main)
    assert {"dispatch", "submit_plan"} <= set(tools_one) and "visit" not in tools_one
    assert {"visit", "submit_plan"} <= set(tools_two) and "dispatch" not in tools_two
    # the tools carry the schemas the LLM adapter sends for each env
    for env_id, kwargs, tools in (("Realm-P11-v0", {"instance": "ft06"}, tools_one), ("Realm-P1-v0", {}, tools_two)):
        env = gym.make(env_id, **kwargs)
        env.reset(seed=3)
        for tool in LLMAdapter(env).tools("openai"):
            assert tools[tool["function"]["name"]].inputSchema == tool["function"]["parameters"]
    assert moved.structuredContent["steps"] == 1
    assert seen_by_two.structuredContent["env_id"] == "Realm-P1-v0" and seen_by_two.structuredContent["steps"] == 0
    assert foreign.isError and "not an action of Realm-P1-v0" in foreign.content[0].text
    assert seen_by_one.structuredContent["env_id"] == "Realm-P11-v0"
    assert seen_by_one.structuredContent["steps"] == 1 and seen_by_one.structuredContent["done"] is False
    assert ended.structuredContent["result"]["truncated"] is True
    one, two = _records(server, "iso-one"), _records(server, "iso-two")
    assert [(r["env_id"], r["steps"], r["truncated"]) for r in one] == [("Realm-P11-v0", 1, True)]
    assert [(r["env_id"], r["seed"], r["terminated"]) for r in two] == [("Realm-P1-v0", 3, True)]


def test_malformed_calls_over_http_are_tool_errors_and_the_session_goes_on(server):
    async def main():
        async with http_session(server.url) as session:
            replies = [await call(session, "visit", {"target": 1}),
                       await call(session, "start_episode", {}),
                       await call(session, "start_episode", {"env_id": "Realm-P11-v0", "keywords": {"instanse": "ft06"}}),
                       await call(session, "list_instances", {"env_id": "CrabDesktop-v0"})]
            await start(session, "Realm-P11-v0", instance="ft06", agent="malformed")
            replies += [await call(session, "dispatch", {"job": "first"}),
                        await call(session, "submit_plan", {"sequence": [[0]]}),
                        await call(session, "act", {"name": "visit", "arguments": {}})]
            replies.append(await call(session, "dispatch", {"job": 0}))
            return replies

    *errors, good = anyio.run(main)
    texts = [r.content[0].text for r in errors]
    assert all(r.isError for r in errors)
    assert "unknown tool 'visit'" in texts[0]
    assert "'env_id' is required" in texts[1]
    assert "did you mean 'instance'" in texts[2]
    assert "not a REALM env id" in texts[3]
    assert "parameter 'job'" in texts[4]
    assert "sequence must hold 6 lists" in texts[5]
    assert "not an action of Realm-P11-v0" in texts[6]
    assert not good.isError and good.structuredContent["steps"] == 3  # two rejected env calls, then this one


def test_a_session_that_leaves_mid_episode_is_recorded_as_truncated(server):
    async def main():
        async with http_session(server.url) as session:
            await start(session, "Realm-P11-v0", instance="ft06", agent="leaver")
            await call(session, "dispatch", {"job": 1})

    anyio.run(main)
    records = _records(server, "leaver", wait_s=10.0)
    assert [(r["steps"], r["terminated"], r["truncated"], r["success"]) for r in records] == [(1, False, True, False)]
