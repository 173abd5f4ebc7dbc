"""MultiLLMRunner end to end: one LLMAgent per vehicle of Realm-P3-v0 (p3_small_01), the real
openai client over real HTTP, against the scripted loopback server of the LLM tests."""

from __future__ import annotations

import json
from typing import Any

import gymnasium as gym
import pytest

pytest.importorskip("openai")
pytest.importorskip("pettingzoo")

import crab_gym  # noqa: E402,F401
from crab_gym.baselines.llm_agent import LLMAgent  # noqa: E402
from crab_gym.baselines.multi_llm import PASS_TOOL, MultiLLMRunner  # noqa: E402
from tests.baselines.scripted_chat_server import (  # noqa: E402
    ScriptedChatServer,
    calls_message,
    text_message,
    tool_call,
)

ENV_ID = "Realm-P3-v0"
INSTANCE = "p3_small_01"
SEED = 0


pytestmark = pytest.mark.usefixtures("loopback_only")


def runner_for(server: ScriptedChatServer, **kwargs: Any) -> MultiLLMRunner:
    return MultiLLMRunner(
        ENV_ID,
        lambda _vehicle: LLMAgent(model="scripted-model", base_url=server.url, max_retries=0),
        env_kwargs={"instance": INSTANCE},
        **kwargs,
    )


def reference_plan() -> dict[str, list[str]]:
    env = gym.make(ENV_ID, instance=INSTANCE)
    env.reset(seed=SEED)
    return env.unwrapped.reference.plan["assignments"]


def single_env_outcome(plan: dict[str, list[str]]) -> tuple[float, dict[str, Any], dict[str, Any]]:
    """(return, metrics, solution) the single-agent env gives ``plan`` submitted whole."""
    env = gym.make(ENV_ID, instance=INSTANCE)
    env.reset(seed=SEED)
    _, reward, terminated, _, info = env.step({"name": "submit_plan", "arguments": {"assignments": plan}})
    assert terminated and info["valid"]
    return float(reward), info["metrics"], info["solution"]


def agent_of(request: dict[str, Any]) -> str:
    """Who sent a request: the only vehicle its dispatch tool accepts."""
    dispatch = next(t for t in request["tools"] if t["function"]["name"] == "dispatch")
    (vehicle,) = dispatch["function"]["parameters"]["properties"]["vehicle"]["enum"]
    return vehicle


def last_text(request: dict[str, Any]) -> str:
    return request["messages"][-1]["content"]


class PlanFollower:
    """A scripted model: each vehicle sends its next planned stop when the prompt lists it as
    legal now (leaving out its own vehicle id, which its tool fills in), else passes."""

    def __init__(self, plan: dict[str, list[str]]) -> None:
        self.queues = {vehicle: list(stops) for vehicle, stops in plan.items()}

    def __call__(self, request: dict[str, Any]) -> dict[str, Any]:
        vehicle = agent_of(request)
        legal = last_text(request).split("# Legal calls now\n")[-1]
        queue = self.queues[vehicle]
        if queue and "- dispatch: " + json.dumps({"vehicle": vehicle, "stop": queue[0]}) in legal:
            stop = queue.pop(0)
            return calls_message(tool_call("dispatch", {"stop": stop}), content=f"{vehicle} heads to {stop}.")
        return calls_message(tool_call(PASS_TOOL, {}), content=f"{vehicle} waits.")


# ====================================================================== a known plan
def test_the_agents_play_the_reference_plan_and_score_what_the_single_env_gives():
    plan = reference_plan()
    expected_return, expected_metrics, expected_solution = single_env_outcome(plan)
    follower = PlanFollower(plan)
    with ScriptedChatServer([follower] * 40) as server:
        episode = runner_for(server).run(seed=SEED)

    assert episode.stop_reason == "terminated" and episode.terminated and not episode.truncated
    assert episode.completed and follower.queues == {"v1": [], "v2": []}
    assert episode.metrics == expected_metrics and expected_metrics["optimality"] == pytest.approx(1.0)
    assert episode.solution == expected_solution == {"assignments": plan}
    assert episode.episode_return == pytest.approx(expected_return)
    assert episode.invalid == {"v1": 0, "v2": 0} and episode.conflicts == {"v1": 0, "v2": 0}
    # one request per move: an agent with no legal move but noop passes without being asked
    assert episode.requests == {"v1": 4, "v2": 4} and len(server.requests) == 8 and episode.rounds == 7
    for vehicle in ("v1", "v2"):
        usage = episode.usage[vehicle]
        assert usage["prompt_tokens"] == 4 * server.usage["prompt_tokens"]
        assert usage["total_tokens"] == 4 * server.usage["total_tokens"]

    requests = [r["json"] for r in server.requests]
    for request in requests:  # each agent's request carries its own tools only
        vehicle = agent_of(request)
        tools = {t["function"]["name"]: t["function"]["parameters"] for t in request["tools"]}
        assert list(tools) == ["dispatch", "park", PASS_TOOL]  # no submit_plan: a whole plan is nobody's move
        assert tools["park"]["properties"]["vehicle"]["enum"] == [vehicle]
        assert "required" in tools["dispatch"] and tools["dispatch"]["required"] == ["stop"]
        assert f"You are vehicle {vehicle}, one of 2 agents (v1, v2)" in request["messages"][1]["content"]
        assert f"You are {vehicle}." in last_text(request)

    # the first round: v1 then v2, both free at 07:00; v2 sees v1's message of this round
    assert [agent_of(r) for r in requests[:2]] == ["v1", "v2"]
    assert ('- v1 (this round, runs before yours): said "v1 heads to pickup:p1."; move '
            '{"name": "dispatch", "arguments": {"vehicle": "v1", "stop": "pickup:p1"}}') in last_text(requests[1])
    # in the next round v1 sees what v2 said and did in round 1, with the outcome
    assert agent_of(requests[2]) == "v1"
    assert ('- v2 (round 1): said "v2 heads to pickup:p2."; move '
            '{"name": "dispatch", "arguments": {"vehicle": "v2", "stop": "pickup:p2"}} -> done') in last_text(requests[2])
    assert last_text(requests[2]).startswith('# Result\nOK: {"name": "dispatch", "arguments": {"stop": "pickup:p1"}}')
    # the prompt lists only the agent's own legal moves
    assert '- dispatch: {"vehicle": "v2"' not in last_text(requests[2])


# ====================================================================== invalid replies
def test_illegal_replies_get_their_reason_fed_back_and_count_as_invalid():
    script = [
        # round 1, v1: another vehicle's move -> answered at once, asked again
        calls_message(tool_call("dispatch", {"vehicle": "v2", "stop": "pickup:p2"}), content="I'll move v2."),
        calls_message(tool_call("dispatch", {"vehicle": "v1", "stop": "pickup:p1"})),
        # round 1, v2: claims p1 too, after v1 in agent order -> loses the conflict
        calls_message(tool_call("dispatch", {"vehicle": "v2", "stop": "pickup:p1"})),
        # round 2 (v1 is on its way, only v2 is free): a dropoff of a passenger not on board
        calls_message(tool_call("dispatch", {"stop": "dropoff:p2"})),
        # round 3, v2: pass
        calls_message(tool_call(PASS_TOOL, {})),
    ]
    with ScriptedChatServer(script) as server:
        episode = runner_for(server, max_rounds=3).run(seed=SEED)
    assert episode.stop_reason == "truncated" and episode.truncated and not episode.terminated
    assert episode.rounds == 3 and episode.metrics == {} and episode.solution == {}
    assert episode.invalid == {"v1": 1, "v2": 2} and episode.conflicts == {"v1": 0, "v2": 1}
    assert episode.requests == {"v1": 2, "v2": 3} and server.remaining == 0

    requests = [r["json"] for r in server.requests]
    assert [agent_of(r) for r in requests] == ["v1", "v1", "v2", "v2", "v2"]
    retry = requests[1]["messages"][-1]
    assert retry["role"] == "tool" and retry["content"].startswith("# Result\nREJECTED (the state is unchanged)")
    assert "Input should be 'v1'" in retry["content"] and "you are v1" in retry["content"]
    lost = last_text(requests[3])
    assert lost.startswith("# Result\nREJECTED (the state is unchanged)")
    assert "Error: conflict lost to v1 (earlier in agent order)" in lost
    illegal = last_text(requests[4])
    assert "Error: action 'dispatch': passenger p2 is not on board vehicle v2" in illegal
    # v2 sees v1's move of round 1 (not the reply that was no move of its own), its outcome,
    # and that v1 has had nothing to do since (it was not asked: its only legal move was noop)
    assert ('- v1 (round 1): move {"name": "dispatch", "arguments": {"vehicle": "v1", "stop": "pickup:p1"}} '
            f"-> done; since then no legal move ({PASS_TOOL})") in lost
    assert "I'll move v2." not in lost


def test_an_agent_without_a_valid_call_passes_after_its_retries():
    script = [
        text_message("Let me think about the map first."),  # v1: no tool call
        calls_message(tool_call("submit_plan", {"assignments": {}})),  # v1: not one of its tools
        calls_message(tool_call(PASS_TOOL, {}), content="v2 waits."),
        calls_message(tool_call(PASS_TOOL, {})),
        calls_message(tool_call(PASS_TOOL, {})),
    ]
    with ScriptedChatServer(script) as server:
        episode = runner_for(server, max_rounds=2, max_retries=1).run(seed=SEED)
    assert episode.stop_reason == "truncated" and episode.rounds == 2
    assert episode.invalid == {"v1": 2, "v2": 0} and episode.requests == {"v1": 3, "v2": 2}
    requests = [r["json"] for r in server.requests]
    assert [agent_of(r) for r in requests] == ["v1", "v1", "v2", "v1", "v2"]
    assert "no tool call found" in last_text(requests[1])
    assert "- v1 (this round, runs before yours): move noop (no valid tool call)" in last_text(requests[2])
    passed = last_text(requests[3])
    assert "unknown action" in passed and "After 2 replies without a move of yours, you passed the round." in passed
    assert '- v2 (round 1): said "v2 waits."; move noop -> done' in passed


def test_the_runner_checks_its_agents():
    with pytest.raises(ValueError, match=r"has agents \['v1', 'v2'\]"):
        MultiLLMRunner(ENV_ID, {"v1": LLMAgent(model="m", base_url="http://127.0.0.1:9/v1")},
                       env_kwargs={"instance": INSTANCE})


def test_the_multi_llm_policy_caps_each_agents_history_by_default():
    """Issue 38: a model repeating an illegal move sent 300 requests with a 600-message history."""
    from crab_gym.baselines.multi_llm_policy import DEFAULT_HISTORY_TURNS, MultiLLMPolicy

    env = gym.make(ENV_ID)
    capped = MultiLLMPolicy(env, model="m", base_url="http://127.0.0.1:9/v1")
    assert capped.agent_kwargs["max_history_turns"] == DEFAULT_HISTORY_TURNS == 20
    assert capped.agent_factory("any").max_history_turns == 20
    whole = MultiLLMPolicy(env, model="m", base_url="http://127.0.0.1:9/v1", max_history_turns=None)
    assert whole.agent_factory("any").max_history_turns is None
