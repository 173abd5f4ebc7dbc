"""LLMAdapter and tool-call parsing: every accepted shape, every error path, the spaces, check_env."""

from __future__ import annotations

import copy
import importlib
import json
import pickle
import types
import warnings
from typing import Annotated, Literal

import gymnasium as gym
import networkx as nx
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from pydantic import Field

from crab_gym.core import action, evaluator
from crab_gym.envs.base import CrabEnv
from crab_gym.envs.registration import realm_ids
from crab_gym.wrappers.llm_adapter import LLMAdapter, ToolCallTextSpace, summarize_observation
from crab_gym.wrappers.tool_call_parsing import ToolCallParseError, parse_tool_call
from tests.core.toy_env import LampsEnv

CALL = {"name": "switch_on", "arguments": {"lamp": 2}}
REALM_IDS = realm_ids()


def lit_lamp(seed: int) -> int:
    """The lamp the toy env lights at reset(seed) (found independently of the adapter)."""
    env = LampsEnv()
    env.reset(seed=seed)
    return int(np.flatnonzero(env.lit)[0])


def make_realm(env_id: str) -> gym.Env:
    """gym.make, or skip when that REALM env is not in the tree yet."""
    import crab_gym  # noqa: F401  (registers the ids)

    try:
        return gym.make(env_id)
    except (ImportError, ModuleNotFoundError, AttributeError, gym.error.Error) as exc:
        pytest.skip(f"{env_id} is not available: {exc}")


# ====================================================================== parsing
@pytest.mark.parametrize(
    "raw",
    [
        CALL,
        json.dumps(CALL),
        '{"name": "switch_on", "arguments": "{\\"lamp\\": 2}"}',  # arguments as a JSON string
        '{"name": "switch_on", "parameters": {"lamp": 2}}',  # Llama 3 style
        'Sure! Lighting lamp 2 now.\n```json\n{"name": "switch_on", "arguments": {"lamp": 2}}\n```\nDone.',
        'I will call {"name": "switch_on", "arguments": {"lamp": 2}} next.',  # bare object in prose
        "<tool_call>\n" + json.dumps(CALL) + "\n</tool_call>",  # Hermes / Qwen tags
        {"id": "call_1", "type": "function", "function": {"name": "switch_on", "arguments": '{"lamp": 2}'}},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "c", "type": "function", "function": {"name": "switch_on", "arguments": '{"lamp": 2}'}}]},
        {"role": "assistant", "function_call": {"name": "switch_on", "arguments": '{"lamp": 2}'}},
        {"role": "assistant", "content": "```\n" + json.dumps(CALL) + "\n```"},  # text-only message
        {"type": "tool_use", "id": "toolu_1", "name": "switch_on", "input": {"lamp": 2}},
        {"role": "assistant", "content": [
            {"type": "text", "text": "Let me light lamp 2."},
            {"type": "tool_use", "id": "toolu_1", "name": "switch_on", "input": {"lamp": 2}}]},
        [{"type": "tool_use", "id": "toolu_1", "name": "switch_on", "input": {"lamp": 2}}],
        types.SimpleNamespace(type="tool_use", id="toolu_1", name="switch_on", input={"lamp": 2}),
    ],
    ids=lambda raw: type(raw).__name__,
)
def test_every_supported_shape_gives_the_same_call(raw):
    assert parse_tool_call(raw) == CALL


def test_openai_sdk_objects_are_read():
    chat = pytest.importorskip("openai.types.chat")
    message = chat.ChatCompletionMessage.model_validate({
        "role": "assistant",
        "content": None,
        "tool_calls": [{"id": "c1", "type": "function",
                        "function": {"name": "switch_on", "arguments": '{"lamp": 2}'}}],
    })
    assert parse_tool_call(message) == CALL
    assert parse_tool_call(message.tool_calls[0]) == CALL


def test_no_arguments_means_empty_arguments():
    assert parse_tool_call('{"name": "switch_all_off"}') == {"name": "switch_all_off", "arguments": {}}
    assert parse_tool_call({"name": "switch_all_off", "arguments": ""}) == {"name": "switch_all_off", "arguments": {}}


@pytest.mark.parametrize(
    "raw, expected",
    [
        ("hello there", "no tool call found"),
        ("", "no tool call found"),
        ('{"job": 3}', "no tool call found"),
        ({"id": "c", "type": "function", "function": {"name": "switch_on", "arguments": '{"lamp": 2'}},
         "arguments are not valid JSON"),
        ('{"name": "switch_on", "arguments": [2]}', "must be a JSON object"),
        ('{"name": 7, "arguments": {}}', 'no "name" string'),
        ("```json\n{name: switch_on}\n```", "does not hold valid JSON"),
        (json.dumps(CALL) + " and then " + json.dumps(CALL), "found 2 tool calls"),
        ({"role": "assistant", "tool_calls": [
            {"id": "a", "type": "function", "function": {"name": "switch_on", "arguments": "{}"}},
            {"id": "b", "type": "function", "function": {"name": "switch_all_off", "arguments": "{}"}}]},
         "exactly one per step"),
        (12, "no tool call found"),
    ],
)
def test_parse_errors_explain_what_to_send(raw, expected):
    with pytest.raises(ToolCallParseError, match=expected) as info:
        parse_tool_call(raw)
    assert isinstance(info.value, ValueError)


# ====================================================================== prompt
def test_prompt_has_task_state_last_action_legal_calls_and_tools():
    adapter = LLMAdapter(LampsEnv())
    obs, info = adapter.reset(seed=3)
    lit = lit_lamp(3)
    assert obs.startswith("# Task\nLight lamps 0..3")
    state = "".join("*" if i == lit else "." for i in range(4))
    assert f"# Current state\n{state}\n" in obs  # the env's ansi text, though made without it
    assert adapter.unwrapped.render_mode is None  # ... and the render mode is restored
    assert "None yet: this is the start of the episode." in obs
    ranges = {0: "{1-3}", 1: "{0, 2-3}", 2: "{0-1, 3}", 3: "{0-2}"}[lit]  # the unlit lamps
    assert f"- switch_on: lamp in {ranges}\n" in obs
    assert "- switch_all_off (no arguments)" in obs
    assert "- switch_on(lamp: integer 0..3) -- Switch a lamp on." in obs
    assert 'Reply with exactly one tool call as JSON: {"name": "<tool name>", "arguments": {...}}' in obs
    assert info["consecutive_errors"] == 0
    assert adapter.observation_space.contains(obs)


def test_describe_on_the_env_is_the_state_text():
    class Described(LampsEnv):
        def describe(self) -> str:
            return "Lamps on: " + ", ".join(str(i) for i in np.flatnonzero(self.lit))

    adapter = LLMAdapter(Described())
    obs, _ = adapter.reset(seed=3)
    assert f"# Current state\nLamps on: {lit_lamp(3)}\n" in obs
    assert "lit: [" not in obs


def test_observation_summary_is_the_last_fallback():
    adapter = LLMAdapter(GridEnv())  # no describe(), no ansi text
    obs, _ = adapter.reset(seed=0)
    assert "# Current state\nboard: [[0, 0, 0], [0, 0, 0], [0, 0, 0]]\n" in obs
    adapter.step({"name": "place", "arguments": {"row": 1, "col": 2}})
    assert "board: [[0, 0, 0], [0, 0, 1], [0, 0, 0]]" in adapter.state_text()


def test_ansi_render_is_the_fallback_state_text():
    obs, _ = LLMAdapter(LampsEnv(render_mode="ansi")).reset(seed=3)
    expected = "".join("*" if i == lit_lamp(3) else "." for i in range(4))
    assert f"# Current state\n{expected}\n" in obs


def test_describe_override_and_task_description_attribute():
    env = LampsEnv()
    env.task_description = "Light every lamp with as few moves as possible."
    adapter = LLMAdapter(env, describe=lambda e, obs: f"{int(obs['lit'].sum())} lamp(s) lit",
                         tools_in_prompt=False, list_legal_actions=0)
    obs, _ = adapter.reset(seed=0)
    assert obs == (
        "# Task\nLight every lamp with as few moves as possible.\n\n# Current state\n1 lamp(s) lit\n\n"
        "# Last action\nNone yet: this is the start of the episode.\n"
        "Progress: 0% of the sub-goals are met."
    )


def test_summarize_observation_is_compact():
    obs = {"a": np.array([1.0, 2.0], dtype=np.float32), "b": np.arange(100).reshape(10, 10), "c": np.int64(3)}
    assert summarize_observation(obs) == "a: [1, 2]\nb: array of shape (10, 10) (min 0, max 99, mean 49.5)\nc: 3"


def test_long_prompts_are_cut_to_the_observation_space():
    adapter = LLMAdapter(LampsEnv(), describe=lambda e, o: "x" * 5000, max_observation_length=1000)
    obs, _ = adapter.reset(seed=0)
    assert len(obs) == 1000 and "[... cut ...]" in obs and adapter.observation_space.contains(obs)


Cell = Annotated[int, Field(ge=0, le=2)]


@action
def place(row: Cell, col: Cell, env) -> None:
    """Place a stone."""
    env.board[row, col] = True


@action
def paint(colour: Literal["red", "blue"], env) -> None:
    """Choose the colour."""
    env.colour = colour


@action
def note(text: str, env) -> None:
    """Write a note (free text)."""


@evaluator
def board_full(env) -> bool:
    return bool(env.board.all())


class GridEnv(CrabEnv):
    """Fill a 3x3 board."""

    def __init__(self):
        super().__init__([place, paint, note])
        self.observation_space = gym.spaces.Dict({"board": gym.spaces.MultiBinary((3, 3))})
        self.board = np.zeros((3, 3), dtype=bool)
        self.colour = "red"

    def _reset_state(self, options):
        self.board = np.zeros((3, 3), dtype=bool)

    def _build_graph(self):
        g = nx.DiGraph()
        g.add_node(board_full)
        return g

    def _get_obs(self):
        return {"board": self.board.astype(np.int8)}

    def _check_action(self, name, args):
        if name == "place" and self.board[args["row"], args["col"]]:
            return "occupied"
        return None

    def _action_mask(self):
        return np.concatenate([~self.board.reshape(-1), [True, True]])

    def _is_terminated(self):
        return bool(self.board.all())

    def render(self):
        return None


def test_legal_calls_of_several_parameters_enums_and_free_text():
    adapter = LLMAdapter(GridEnv(), list_legal_actions=4)
    adapter.reset(seed=0)
    adapter.step({"name": "place", "arguments": {"row": 0, "col": 0}})
    assert adapter.legal_actions_text() == (
        '- place: {"row": 0, "col": 1}\n- place: {"row": 0, "col": 2}\n'
        '- place: {"row": 1, "col": 0}\n- place: {"row": 1, "col": 1}\n'
        "- ... and 4 more legal place calls\n"
        '- paint: colour in {"red", "blue"}\n'
        "- also: note (free-form arguments)"
    )
    assert "- note(text: string) -- Write a note (free text)." in adapter.tools_text()
    assert '- paint(colour: one of "red", "blue")' in adapter.tools_text()
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*different from the unwrapped.*")
        warnings.filterwarnings("ignore", message=".*not having a spec.*")
        check_env(LLMAdapter(GridEnv()), skip_render_check=True)


# ====================================================================== stepping
def test_a_full_episode_from_json_text():
    adapter = LLMAdapter(LampsEnv())
    adapter.reset(seed=3)
    total, terminated = 0.0, False
    for lamp in sorted(set(range(4)) - {lit_lamp(3)}):
        obs, reward, terminated, truncated, info = adapter.step(
            json.dumps({"name": "switch_on", "arguments": {"lamp": lamp}}))
        total += reward
        assert info["valid"] and adapter.last_action_error is None
    assert terminated and not truncated
    assert total == pytest.approx(1.0)  # every sub-goal (0.5) + optimal 3 moves (0.5)
    assert info["metrics"] == {"moves": 3} and info["solution"] == {"order": sorted(set(range(4)) - {lit_lamp(3)})}
    assert "The episode is over." in obs and 'Metrics: {"moves": 3}' in obs
    assert "# Legal calls now" not in obs


@pytest.mark.parametrize(
    "bad, error",
    [
        ("I think lamp 2 is best.", "no tool call found"),
        ('{"name": "switch_on", "arguments": "{\\"lamp\\": 2"}', "not valid JSON"),
        ('{"name": "fly", "arguments": {}}', "unknown action"),
        ('{"name": "switch_on", "arguments": {"lamp": 9}}', "less than or equal to 3"),
        ('{"name": "switch_on", "arguments": {"lamp": 1, "colour": "red"}}', "'colour' is not a parameter"),
        ('{"name": "switch_on", "arguments": {}}', "'lamp' is required"),
        ("ALREADY_ON", "is already on"),  # legal schema, illegal now
    ],
)
def test_bad_calls_never_crash_and_leave_the_state_unchanged(bad, error):
    adapter = LLMAdapter(LampsEnv(), invalid_action_penalty=0.25)
    obs0, info0 = adapter.reset(seed=3)
    if bad == "ALREADY_ON":
        bad = json.dumps({"name": "switch_on", "arguments": {"lamp": lit_lamp(3)}})
    before = adapter.unwrapped.lit.copy()
    obs, reward, terminated, truncated, info = adapter.step(bad)
    assert np.array_equal(adapter.unwrapped.lit, before) and adapter.unwrapped.order == []
    assert (terminated, truncated, info["valid"]) == (False, False, False)
    assert reward == -0.25
    assert error in info["error"] and error in adapter.last_action_error
    assert "REJECTED (the state is unchanged)" in obs and error in obs
    assert set(info) == set(info0) and info["consecutive_errors"] == 1
    assert info["completeness"] == info0["completeness"]
    # the state part of the prompt is unchanged
    assert obs.split("# Last action")[0] == obs0.split("# Last action")[0]


def test_env_penalty_and_adapter_penalty_add_up_for_env_rejections():
    adapter = LLMAdapter(LampsEnv(invalid_action_penalty=0.5), invalid_action_penalty=0.25)
    adapter.reset(seed=3)
    _, reward, *_ = adapter.step({"name": "switch_on", "arguments": {"lamp": 9}})
    assert reward == -0.75
    _, reward, *_ = adapter.step("no call here")  # never reaches the env: the adapter's only
    assert reward == -0.25


def test_consecutive_error_limit_truncates_and_a_valid_call_resets_the_count():
    adapter = LLMAdapter(LampsEnv(), max_consecutive_errors=3)
    adapter.reset(seed=3)
    free = sorted(set(range(4)) - {lit_lamp(3)})
    for expected in (1, 2):
        *_, truncated, info = adapter.step("??")
        assert not truncated and info["consecutive_errors"] == expected
    *_, truncated, info = adapter.step(json.dumps({"name": "switch_on", "arguments": {"lamp": free[0]}}))
    assert info["valid"] and info["consecutive_errors"] == 0 and not truncated
    results = [adapter.step("??") for _ in range(3)]
    assert [r[3] for r in results] == [False, False, True]
    assert "stopped after 3 rejected calls in a row" in results[-1][0]
    with pytest.raises(ValueError):
        LLMAdapter(LampsEnv(), max_consecutive_errors=0)


def test_info_keys_are_fixed():
    adapter = LLMAdapter(LampsEnv())
    _, info0 = adapter.reset(seed=1)
    keys = set(info0)
    for text in ["junk", json.dumps({"name": "switch_all_off"}), '{"name": "switch_on", "arguments": {"lamp": 0}}']:
        assert set(adapter.step(text)[4]) == keys
    assert {"action", "valid", "error", "completeness", "consecutive_errors"} <= keys


def test_tools_come_from_the_env():
    adapter = LLMAdapter(LampsEnv())
    assert adapter.tools("openai") == LampsEnv().tools("openai")
    anthropic = adapter.tools("anthropic")
    assert [t["name"] for t in anthropic] == ["switch_on", "switch_all_off"]
    assert anthropic[0]["input_schema"]["properties"]["lamp"]["maximum"] == 3


def test_only_crab_envs_are_adapted():
    with pytest.raises(TypeError, match="CrabEnv"):
        LLMAdapter(gym.make("CartPole-v1"))


# ====================================================================== spaces
def test_spaces_accept_any_string():
    adapter = LLMAdapter(LampsEnv())
    for text in ["", "é ✓ {json} \n\t", "x" * 10_000]:
        assert adapter.action_space.contains(text)
        assert adapter.observation_space.contains(text)
    assert not adapter.action_space.contains(3)


def test_samples_are_valid_legal_calls_and_seeded():
    adapter = LLMAdapter(LampsEnv())
    adapter.reset(seed=0)
    adapter.action_space.seed(7)
    seen = []
    for _ in range(30):
        sample = adapter.action_space.sample()
        seen.append(sample)
        call = json.loads(sample)
        assert set(call) == {"name", "arguments"}
        *_, terminated, truncated, info = adapter.step(sample)
        assert info["valid"], info["error"]
        if terminated:
            adapter.reset()
    again = LLMAdapter(LampsEnv())
    again.reset(seed=0)
    again.action_space.seed(7)
    replay = []
    for _ in range(30):
        replay.append(again.action_space.sample())
        if again.step(replay[-1])[2]:
            again.reset()
    assert replay == seen


def test_sampling_after_the_end_still_gives_schema_valid_calls():
    adapter = LLMAdapter(LampsEnv())
    adapter.reset(seed=3)
    for lamp in sorted(set(range(4)) - {lit_lamp(3)}):
        adapter.step({"name": "switch_on", "arguments": {"lamp": lamp}})
    adapter.action_space.seed(0)
    env = LampsEnv()
    for _ in range(10):
        call = json.loads(adapter.action_space.sample())
        env.parse_action(call)  # raises if not schema-valid


def test_sampling_does_not_touch_the_env_action_space_rng():
    env = LampsEnv()
    env.action_space.seed(1)
    expected = copy.deepcopy(env.action_space).sample()
    adapter = LLMAdapter(env)
    adapter.reset(seed=0)
    adapter.action_space.seed(0)
    for _ in range(5):
        adapter.action_space.sample()
    assert str(env.action_space.sample()) == str(expected)


def test_action_space_copies_do_not_drag_the_env_along():
    adapter = LLMAdapter(LampsEnv())
    adapter.reset(seed=0)
    clone = pickle.loads(pickle.dumps(adapter.action_space))
    assert isinstance(clone, ToolCallTextSpace) and isinstance(clone.sample(), str)
    deep = copy.deepcopy(adapter.action_space)
    assert json.loads(deep.sample())["name"] in ("switch_on", "switch_all_off")


# ====================================================================== env checker
@pytest.mark.parametrize("render_mode", [None, "ansi", "rgb_array"])
def test_check_env_on_the_toy_env(render_mode):
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*different from the unwrapped.*")
        warnings.filterwarnings("ignore", message=".*not having a spec.*")
        check_env(LLMAdapter(LampsEnv(render_mode=render_mode)), skip_render_check=render_mode is None)


@pytest.mark.parametrize("env_id", REALM_IDS)
def test_check_env_on_realm_envs(env_id):
    env = make_realm(env_id)
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*different from the unwrapped.*")
        check_env(LLMAdapter(env.unwrapped), skip_render_check=False)
        check_env(LLMAdapter(make_realm(env_id)), skip_render_check=True)  # through gym.make's wrappers


@pytest.mark.parametrize("env_id", REALM_IDS)
def test_random_text_rollout_on_realm_envs(env_id):
    adapter = LLMAdapter(make_realm(env_id), max_consecutive_errors=5)
    obs, info = adapter.reset(seed=0)
    adapter.action_space.seed(0)
    assert "# Task" in obs and "# Current state" in obs
    for _ in range(200):
        obs, reward, terminated, truncated, info = adapter.step(adapter.action_space.sample())
        assert adapter.observation_space.contains(obs)
        if terminated or truncated:
            break
    codec = adapter.unwrapped.codec
    if codec.n_flat:  # finite legal samples are always accepted, so the episode ends
        assert terminated, "sampling legal calls should complete the episode"
        assert "The episode is over." in obs


def test_p11_prompt_reads_like_a_schedule():
    env = make_realm("Realm-P11-v0")
    adapter = LLMAdapter(env)
    obs, _ = adapter.reset(seed=0)
    assert "- dispatch: job in {0-5}" in obs
    assert "- dispatch(job: integer 0..5)" in obs
    _, _, _, _, info = adapter.step('{"name": "dispatch", "arguments": {"job": 6}}')
    assert not info["valid"] and "less than or equal to 5" in adapter.last_action_error


def test_module_has_no_wall_clock():
    source = importlib.import_module("crab_gym.wrappers.llm_adapter").__file__
    text = open(source, encoding="utf-8").read()
    assert "time." not in text and "datetime" not in text


def _nested(depth: int, leaf: object, as_dict: bool = False) -> object:
    value = leaf
    for _ in range(depth):
        value = {"a": value} if as_dict else [value]
    return value


@pytest.mark.parametrize("output", [
    "[" * 1000 + "]" * 1000,
    '{"name": "dispatch", "arguments": ' + "[" * 1000 + "]" * 1000 + "}",
    _nested(1000, []),
    {"name": "dispatch", "arguments": _nested(1000, {}, as_dict=True)},
    {"name": "dispatch", "arguments": {"job": _nested(1000, 0)}},
], ids=["text", "arguments text", "list", "arguments dict", "argument value"])
def test_output_nested_a_thousand_deep_is_answered_never_raised(output):
    """Issue 38, item 2: it raised RecursionError; the docstring promises an answer."""
    adapter = LLMAdapter(gym.make("Realm-P11-v0", instance="ft06"))
    adapter.reset(seed=0)
    prompt, reward, terminated, _, info = adapter.step(output)
    assert info["valid"] is False and "nests 65 levels deep (at most 64)" in info["error"] and not terminated
    assert "nested more than 64 levels deep" in prompt or "[[[[" in prompt
    _, _, _, _, info = adapter.step('{"name": "dispatch", "arguments": {"job": 0}}')
    assert info["valid"] is True  # nothing of the env was touched
