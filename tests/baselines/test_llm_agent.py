"""LLMAgent end to end: the real openai client, over real HTTP, against a scripted server on
127.0.0.1 (tests/baselines/scripted_chat_server.py). Loopback only."""

from __future__ import annotations

import json
import socket

import gymnasium as gym
import numpy as np
import pytest

pytest.importorskip("openai")

from crab_gym.baselines.llm_agent import DEFAULT_SYSTEM_PROMPT, LLMAgent, LLMAgentError  # noqa: E402
from crab_gym.wrappers.llm_adapter import LLMAdapter  # noqa: E402
from tests.baselines.scripted_chat_server import (  # noqa: E402
    HTTPFailure,
    ScriptedChatServer,
    calls_message,
    text_message,
    tool_call,
)
from tests.core.toy_env import LampsEnv  # noqa: E402

SEED = 3
FAST_RETRY = {"retry-after-ms": "10"}  # keep the client's backoff short in tests


pytestmark = pytest.mark.usefixtures("loopback_only")


def unlit(seed: int = SEED) -> list[int]:
    env = LampsEnv()
    env.reset(seed=seed)
    return [int(i) for i in np.flatnonzero(~env.lit)]


def lamps_text(seed: int = SEED) -> str:
    """The state line of the prompt at reset: the toy env's ansi text (one '*' per lit lamp)."""
    return "".join("." if i in unlit(seed) else "*" for i in range(4))


def switch_on(lamp, call_id=None):
    return calls_message(tool_call("switch_on", {"lamp": lamp}, call_id))


def agent_for(server: ScriptedChatServer, **kwargs) -> LLMAgent:
    kwargs.setdefault("max_retries", 0)
    return LLMAgent(model="scripted-model", base_url=server.url, **kwargs)


def last_message(request: dict) -> dict:
    return request["json"]["messages"][-1]


# ====================================================================== a valid plan
def test_valid_plan_completes_the_toy_env():
    lamps = unlit()
    script = [switch_on(lamp, f"call_{i}") for i, lamp in enumerate(lamps)]
    with ScriptedChatServer(script) as server:
        episode = agent_for(server).run(LampsEnv(), seed=SEED)
    assert episode.stop_reason == "terminated" and episode.completed
    assert (episode.steps, episode.invalid_actions) == (3, 0)
    assert episode.episode_return == pytest.approx(1.0)
    assert episode.info["metrics"] == {"moves": 3}
    latency = episode.usage.pop("latency_s")  # wall clock spent waiting on the server
    assert 0.0 < latency < 30.0
    assert episode.usage == {"prompt_tokens": 30, "completion_tokens": 15, "total_tokens": 45, "requests": 3}

    requests = server.requests
    assert len(requests) == 3 and server.remaining == 0
    assert all(r["path"] == "/v1/chat/completions" for r in requests)
    assert requests[0]["headers"]["authorization"] == "Bearer sk-test-from-env"  # key from the environment
    body = requests[0]["json"]
    assert body["model"] == "scripted-model" and body["temperature"] == 0.0
    assert [t["function"]["name"] for t in body["tools"]] == ["switch_on", "switch_all_off"]
    assert body["tools"][0]["function"]["parameters"]["properties"]["lamp"]["maximum"] == 3
    system, user = body["messages"]
    assert system == {"role": "system", "content": DEFAULT_SYSTEM_PROMPT}
    assert user["role"] == "user" and user["content"].startswith("# Task\nLight lamps 0..3")
    assert "# Current state\n" + lamps_text() in user["content"]

    # the conversation is kept: each request repeats the history, tool results answer call ids
    second = requests[1]["json"]["messages"]
    assert second[:2] == body["messages"] and second[2]["tool_calls"][0]["id"] == "call_0"
    assert second[3]["role"] == "tool" and second[3]["tool_call_id"] == "call_0"
    assert second[3]["content"].startswith(f'# Result\nOK: {{"name": "switch_on", "arguments": {{"lamp": {lamps[0]}}}}}')
    assert len(requests[2]["json"]["messages"]) == 6
    # the final result is logged without another request
    assert episode.messages[-1]["role"] == "tool" and "The episode is over." in episode.messages[-1]["content"]


def test_valid_optimal_plan_on_realm_p11_ft06():
    import crab_gym  # noqa: F401

    try:
        env = gym.make("Realm-P11-v0")
    except (ImportError, gym.error.Error) as exc:  # pragma: no cover - built in parallel
        pytest.skip(f"Realm-P11-v0 not available: {exc}")
    from crab_gym.envs.realm.jobshop.oracle import solve_jssp

    instance = env.unwrapped.instance
    assert instance.name == "ft06"
    oracle = solve_jssp(instance, time_limit=10.0, num_workers=2)
    assert oracle.status == "OPTIMAL" and oracle.cost == 55  # ft06's known optimum
    # dispatching operations in order of their optimal start rebuilds an optimal schedule
    order = sorted((s, j, k) for j, row in enumerate(oracle.detail["starts"]) for k, s in enumerate(row))
    script = [calls_message(tool_call("dispatch", {"job": j})) for _, j, _ in order]
    with ScriptedChatServer(script) as server:
        episode = agent_for(server, max_steps=100).run(env, seed=0)
    assert episode.stop_reason == "terminated" and episode.steps == 36 and episode.invalid_actions == 0
    assert episode.info["metrics"]["makespan"] == 55
    assert episode.info["metrics"]["optimality"] == pytest.approx(1.0)
    assert episode.episode_return == pytest.approx(1.0)
    assert len(server.requests) == 36
    first_user = server.requests[0]["json"]["messages"][1]["content"]
    assert "- dispatch: job in {0-5}" in first_user


# ====================================================================== malformed replies
def test_malformed_replies_are_fed_back_and_the_agent_recovers():
    lamps = unlit()
    script = [
        calls_message(tool_call("switch_on", '{"lamp": ', "bad_json")),  # truncated JSON arguments
        calls_message(tool_call("switch_on", {"lamp": 7}, "out_of_range")),  # schema violation
        text_message("I am not sure which lamp to pick."),  # no tool call at all
        text_message('Lamp {0} first:\n```json\n{{"name": "switch_on", "arguments": {{"lamp": {0}}}}}\n```'.format(lamps[0])),
        switch_on(lamps[1], "ok_1"),
        switch_on(lamps[2], "ok_2"),
    ]
    with ScriptedChatServer(script) as server:
        episode = agent_for(server).run(LampsEnv(), seed=SEED)
    assert episode.stop_reason == "terminated" and episode.completed
    assert (episode.steps, episode.invalid_actions) == (6, 3)
    assert episode.episode_return == pytest.approx(1.0)  # the env state never moved on errors

    requests = server.requests
    fed_back = last_message(requests[1])
    assert fed_back["role"] == "tool" and fed_back["tool_call_id"] == "bad_json"
    assert "REJECTED (the state is unchanged)" in fed_back["content"]
    assert "arguments are not valid JSON" in fed_back["content"]
    fed_back = last_message(requests[2])
    assert fed_back["tool_call_id"] == "out_of_range" and "less than or equal to 3 (got 7)" in fed_back["content"]
    assert "That is 2 rejected calls in a row." in fed_back["content"]
    fed_back = last_message(requests[3])  # a text reply is answered by a user turn
    assert fed_back["role"] == "user" and "no tool call found" in fed_back["content"]
    fed_back = last_message(requests[4])  # the JSON code block in prose was executed
    assert fed_back["role"] == "user" and fed_back["content"].startswith("# Result\nOK: ")


def test_parallel_tool_calls_run_one_at_a_time():
    lamps = unlit()
    script = [
        calls_message(tool_call("switch_on", {"lamp": lamps[0]}, "a"), tool_call("switch_on", {"lamp": lamps[1]}, "b")),
        switch_on(lamps[1], "c"),
        switch_on(lamps[2], "d"),
    ]
    with ScriptedChatServer(script) as server:
        episode = agent_for(server).run(LampsEnv(), seed=SEED)
    assert episode.completed and episode.steps == 3
    msgs = server.requests[1]["json"]["messages"]
    assert [m.get("tool_call_id") for m in msgs[-2:]] == ["a", "b"]
    assert msgs[-2]["content"].startswith("# Result\nOK")
    assert "Not executed" in msgs[-1]["content"]


def test_consecutive_errors_truncate_the_episode():
    script = [text_message("hmm")] * 3
    with ScriptedChatServer(script) as server:
        episode = agent_for(server, max_consecutive_errors=3).run(LampsEnv(), seed=SEED)
    assert episode.stop_reason == "truncated" and episode.truncated and not episode.terminated
    assert episode.invalid_actions == 3 and len(server.requests) == 3


def test_step_limit_stops_the_episode():
    lamps = unlit()
    with ScriptedChatServer([switch_on(lamp) for lamp in lamps]) as server:
        episode = agent_for(server, max_steps=2).run(LampsEnv(), seed=SEED)
    assert episode.stop_reason == "step_limit" and episode.truncated and not episode.completed
    assert episode.steps == 2 and len(server.requests) == 2


# ====================================================================== HTTP errors
def test_server_errors_are_retried_by_the_client():
    lamps = unlit()
    script = [HTTPFailure(500, "overloaded", FAST_RETRY), HTTPFailure(429, "slow down", FAST_RETRY)]
    script += [switch_on(lamp) for lamp in lamps]
    with ScriptedChatServer(script) as server:
        episode = agent_for(server, max_retries=2).run(LampsEnv(), seed=SEED)
    assert episode.completed and episode.steps == 3
    assert len(server.requests) == 5  # 2 failed attempts, then 3 answered
    assert server.requests[0]["json"] == server.requests[2]["json"]  # the same request, retried


@pytest.mark.parametrize(
    "status, message, hint",
    [
        (500, "internal failure", "server error"),
        (429, "rate limit reached", "rate limited"),
        (401, "invalid api key", "check the API key"),
        (400, "tools are not supported", "use_tools=False"),
    ],
)
def test_http_errors_raise_a_clear_error(status, message, hint):
    script = [HTTPFailure(status, message, FAST_RETRY)] * 3
    with ScriptedChatServer(script) as server:
        agent = agent_for(server, max_retries=1)
        with pytest.raises(LLMAgentError) as info:
            agent.run(LampsEnv(), seed=SEED)
    err = info.value
    assert err.status_code == status
    text = str(err)
    assert f"HTTP {status}" in text and message in text and hint in text and server.url in text
    retried = status in (429, 500)
    assert ("after 1 retries" in text) == retried
    assert len(server.requests) == (2 if retried else 1)


def test_unreachable_server_raises_a_clear_error():
    with socket.socket() as sock:  # a free loopback port with nobody listening
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    agent = LLMAgent(model="m", base_url=f"http://127.0.0.1:{port}/v1", max_retries=0, timeout=5)
    with pytest.raises(LLMAgentError, match="cannot reach"):
        agent.run(LampsEnv(), seed=SEED)


# ====================================================================== options
def test_without_native_tools_the_reply_text_is_parsed():
    lamps = unlit()
    script = [text_message(json.dumps({"name": "switch_on", "arguments": {"lamp": lamp}})) for lamp in lamps]
    with ScriptedChatServer(script) as server:
        episode = agent_for(server, use_tools=False, temperature=None).run(LampsEnv(), seed=SEED)
    assert episode.completed
    body = server.requests[0]["json"]
    assert "tools" not in body and "temperature" not in body
    assert "- switch_on(lamp: integer 0..3)" in body["messages"][0]["content"]
    assert all(last_message(r)["role"] == "user" for r in server.requests)


def test_history_window_and_request_kwargs():
    lamps = unlit()
    with ScriptedChatServer([switch_on(lamp) for lamp in lamps]) as server:
        agent = agent_for(server, max_history_turns=1, tool_choice="required",
                          request_kwargs={"seed": 42, "max_tokens": 64})
        assert agent.run(LampsEnv(), seed=SEED).completed
    sizes = [len(r["json"]["messages"]) for r in server.requests]
    assert sizes == [2, 4, 4]  # system + task, then only the last assistant/tool turn
    body = server.requests[2]["json"]
    assert body["tool_choice"] == "required" and body["seed"] == 42 and body["max_tokens"] == 64
    assert body["messages"][1]["content"].startswith("# Task")


def test_as_a_policy_on_the_raw_env():
    """The Benchmark protocol: policy(obs, info) on a plain env; the agent writes the prompts."""
    lamps = unlit()
    script = [text_message("no idea"), *(switch_on(lamp) for lamp in lamps)]
    env = LampsEnv()
    with ScriptedChatServer(script) as server:
        agent = agent_for(server)
        obs, info = env.reset(seed=SEED)
        agent.reset(env)
        total, steps, terminated = 0.0, 0, False
        while not terminated and steps < 10:
            obs, reward, terminated, _, info = env.step(agent(obs, info))
            total += reward
            steps += 1
    assert terminated and steps == 4 and total == pytest.approx(1.0)
    fed_back = last_message(server.requests[1])
    assert fed_back["role"] == "user" and "no tool call found" in fed_back["content"]
    assert "# Current state\n" + lamps_text() in fed_back["content"]
    ok = last_message(server.requests[2])
    assert ok["role"] == "tool" and ok["content"].startswith("# Result\nOK:")


def test_as_a_policy_on_an_adapter():
    lamps = unlit()
    adapter = LLMAdapter(LampsEnv())
    with ScriptedChatServer([switch_on(lamp) for lamp in lamps]) as server:
        agent = agent_for(server, env=adapter)
        obs, info = adapter.reset(seed=SEED)
        done = False
        while not done:
            obs, _, done, _, info = adapter.step(agent(obs, info))
    assert info["completeness"] == 1.0 and len(server.requests) == 3


def test_settings_are_checked(monkeypatch):
    with pytest.raises(ValueError, match="model"):
        LLMAgent(base_url="http://127.0.0.1:9/v1")
    monkeypatch.setenv("CRAB_GYM_LLM_MODEL", "from-env")
    assert LLMAgent(base_url="http://127.0.0.1:9/v1").model == "from-env"
    monkeypatch.delenv("OPENAI_API_KEY")
    with pytest.raises(ValueError, match="API key"):
        LLMAgent(model="m")  # hosted API without a key
    local = LLMAgent(model="m", base_url="http://127.0.0.1:9/v1")  # local servers need none
    assert local.client.api_key == "EMPTY"
    assert LLMAgent(model="m", base_url="http://127.0.0.1:9/v1", api_key="explicit").client.api_key == "explicit"
    with pytest.raises(RuntimeError, match="does not know its env"):
        local({}, {})


class _LLMRecorder(gym.Wrapper):
    """Stands in for a trajectory logger: collects what the agent attaches before each step."""

    def __init__(self, env):
        super().__init__(env)
        self.attached, self.actions = [], []

    def attach_llm(self, **data):
        self.attached.append(data)

    def step(self, action):
        self.actions.append(action)
        return self.env.step(action)


def test_each_step_attaches_its_messages_and_the_adapter_gets_text():
    lamps = unlit()
    script = [calls_message(tool_call("switch_on", '{"lamp": ', "bad")), *(switch_on(lamp) for lamp in lamps)]
    recorder = _LLMRecorder(LLMAdapter(LampsEnv()))
    with ScriptedChatServer(script) as server:
        episode = agent_for(server).run(recorder, seed=SEED)
    assert episode.completed and len(recorder.attached) == 4
    first, second = recorder.attached[:2]
    assert [m["role"] for m in first["messages"]] == ["system", "user", "assistant"]
    assert first["tool_call"] is None  # the arguments were not JSON
    assert [m["role"] for m in second["messages"]] == ["tool", "assistant"]
    assert second["tool_call"] == {"name": "switch_on", "arguments": {"lamp": lamps[0]}}
    assert second["usage"]["total_tokens"] == 30
    # the adapter is driven with text, members of its action space
    assert recorder.actions[0] == json.dumps({"name": "switch_on", "arguments": '{"lamp": '})
    assert all(recorder.action_space.contains(a) for a in recorder.actions)
