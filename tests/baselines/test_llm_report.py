"""The LLM table of ``crab-gym run`` / ``crab-gym report``: one row per model x env with the
feasible and optimal rates, optimality over feasible plans only, tokens, requests, wall time
and cost, for scripted models on the loopback server (values worked out from the script);
``--policy multi-llm`` plays a multi-agent id through the CLI with the same columns."""

from __future__ import annotations

import json
from typing import Any

import gymnasium as gym
import pytest

pytest.importorskip("openai")

import crab_gym  # noqa: E402,F401
from crab_gym.cli import main  # noqa: E402
from crab_gym.evaluation.episode import EpisodeResult  # noqa: E402
from crab_gym.evaluation.llm_report import Prices, llm_summary  # noqa: E402
from tests.baselines.scripted_chat_server import ScriptedChatServer, calls_message, text_message, tool_call  # noqa: E402

USAGE = {"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120}
ROUND_ROBIN = [j for _ in range(6) for j in range(6)]  # every job once per round: feasible, not optimal
CUT = 5  # --max-steps: the model that never calls a tool is cut after this many requests


@pytest.fixture(autouse=True)
def _loopback(loopback_only: None, tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CRAB_GYM_CACHE_DIR", str(tmp_path / "cache"))


def ft06_reference() -> dict[str, Any]:
    env = gym.make("Realm-P11-v0", instance="ft06")
    env.reset(seed=0)
    return env.unwrapped.reference.plan


def round_robin_metrics() -> dict[str, Any]:
    """What the env gives the round-robin schedule (the scripted 'rr' model plays it)."""
    env = gym.make("Realm-P11-v0", instance="ft06")
    env.reset(seed=0)
    for job in ROUND_ROBIN:
        _, _, terminated, _, info = env.step({"name": "dispatch", "arguments": {"job": job}})
    assert terminated
    return info["metrics"]


def three_models(plan: dict[str, Any]):
    """'opt' submits the reference plan, 'rr' dispatches round robin, 'chat' never calls a tool."""

    def reply(request: dict[str, Any]) -> dict[str, Any]:
        turn = sum(m["role"] == "assistant" for m in request["messages"])
        if request["model"] == "opt":
            return calls_message(tool_call("submit_plan", plan))
        if request["model"] == "rr":
            return calls_message(tool_call("dispatch", {"job": ROUND_ROBIN[turn]}))
        return text_message("I would rather talk about the weather.")

    return reply


def run_cli(capsys, *argv: str) -> tuple[int, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    assert code == 0, captured.err
    return code, captured.out


def test_the_llm_table_has_the_values_the_scripted_run_implies(capsys, tmp_path, monkeypatch):
    out = tmp_path / "run"
    rr = round_robin_metrics()
    assert 0.5 < rr["optimality"] < 0.999 and rr["constraint_satisfaction"] == 1.0
    with ScriptedChatServer([three_models(ft06_reference())] * 200, usage=USAGE) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.url)
        run_cli(capsys, "run", "--env", "Realm-P11-v0", "--env-kwargs", '{"instance": "ft06"}', "--policy", "llm",
                "--model", "opt", "rr", "chat", "--episodes", "2", "--max-steps", str(CUT), "--quiet",
                "--out", str(out))
    # 'rr' needs 36 steps: cut at 5 it has no plan (the next test lets it finish)
    report = json.loads((out / "report.json").read_text())
    rows = {row["model"]: row for row in report["llm_summary"]}
    assert sorted(rows) == ["chat", "opt", "rr"] and {r["agent"] for r in rows.values()} == {"llm"}
    assert {r["env"] for r in rows.values()} == {"Realm-P11-v0"} and all(r["episodes"] == 2 for r in rows.values())
    opt, chat, cut = rows["opt"], rows["chat"], rows["rr"]
    assert (opt["feasible"], opt["optimal"], opt["optimality_feasible"]) == (1.0, 1.0, pytest.approx(1.0))
    assert (opt["requests"], opt["tokens_in"], opt["tokens_out"]) == (1.0, 100.0, 20.0)
    for row in (chat, cut):  # no plan at all: never feasible, and no optimality to average
        assert (row["feasible"], row["optimal"], row["optimality_feasible"]) == (0.0, 0.0, None)
        assert (row["requests"], row["tokens_in"], row["tokens_out"]) == (CUT, CUT * 100.0, CUT * 20.0)
    assert all(r["wall_s"] > 0 for r in rows.values())
    assert all(r["cost"] is None for r in rows.values()) and "prices" not in report
    text = (out / "report.md").read_text()
    assert "**LLM runs** (one row per model x env)" in text and "| model | agent | env | kwargs | episodes | feasible |" in text
    assert "cost" not in text.split("**LLM runs**")[1].splitlines()[2]  # no prices, no cost columns

    # the report command prices the stored tokens: the two-command model comparison
    run_cli(capsys, "report", str(out), "--price-in", "2.5", "opt=1", "--price-out", "10")
    priced = {row["model"]: row for row in json.loads((out / "report.json").read_text())["llm_summary"]}
    assert priced["opt"]["cost"] == pytest.approx((100 * 1 + 20 * 10) / 1e6)
    assert priced["chat"]["cost"] == pytest.approx((500 * 2.5 + 100 * 10) / 1e6)
    assert priced["chat"]["cost_total"] == pytest.approx(2 * priced["chat"]["cost"])
    table = (out / "report.md").read_text().split("**LLM runs**")[1]
    assert '| chat | llm | Realm-P11-v0 | {"instance": "ft06"} | 2 | 0.000 | 0.000 | n/a | 500 | 100 | 5 |' in table
    assert "| 0.002250 | 0.004500 |" in table  # chat's cost per episode and in total
    assert "Prices per million tokens: in default 2.5, opt 1, out default 10." in table


def test_a_feasible_suboptimal_plan_counts_in_feasible_not_in_optimal(capsys, tmp_path, monkeypatch):
    rr = round_robin_metrics()
    with ScriptedChatServer([three_models(ft06_reference())] * 100, usage=USAGE) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.url)
        run_cli(capsys, "run", "--env", "Realm-P11-v0", "--env-kwargs", '{"instance": "ft06"}', "--policy", "llm",
                "--model", "rr", "--episodes", "1", "--quiet", "--out", str(tmp_path), "--price-in", "0",
                "--price-out", "0")
    (row,) = json.loads((tmp_path / "report.json").read_text())["llm_summary"]
    assert (row["feasible"], row["optimal"]) == (1.0, 0.0)
    assert row["optimality_feasible"] == pytest.approx(rr["optimality"])
    assert (row["requests"], row["tokens_in"], row["cost"]) == (36.0, 3600.0, 0.0)


def test_infeasible_plans_never_enter_mean_optimality():
    """Half the plans feasible at 0.8, half infeasible that an env scored 0.9 anyway: the mean is 0.8."""
    def episode(seed: int, feasible: bool, optimality: float) -> EpisodeResult:
        return EpisodeResult("Realm-P1-v0", {}, "llm:m", seed, terminated=True, completeness=1.0,
                             success=True, usage={"prompt_tokens": 10, "completion_tokens": 1},
                             metrics={"optimality": optimality, "feasible": feasible})
    results = [episode(0, True, 0.8), episode(1, False, 0.9), episode(2, True, 1.0), episode(3, False, 1.0)]
    (row,) = llm_summary(results, Prices({"": 1.0}, {"": 2.0}))
    assert (row["feasible"], row["optimal"], row["optimality_feasible"]) == (0.5, 0.25, pytest.approx(0.9))
    assert row["cost"] == pytest.approx(12 / 1e6) and row["cost_total"] == pytest.approx(48 / 1e6)


def test_an_agent_played_over_mcp_gets_a_row_without_token_counts(capsys, tmp_path):
    """Episodes an MCP client played (policy = its agent name, no usage: the server counts no
    tokens) get an LLM row beside the LLM policies; the baselines do not."""
    from crab_gym.evaluation.episode_store import EpisodeStore

    def episode(policy: str, index: int, feasible: bool, optimality: float) -> EpisodeResult:
        return EpisodeResult("Realm-P1-v0", {}, policy, index, index=index, max_steps=100, terminated=True,
                             completeness=1.0 if feasible else 0.5, success=feasible, wall_time_s=2.0,
                             metrics={"optimality": optimality, "constraint_satisfaction": 1.0})
    with EpisodeStore(tmp_path) as store:
        store.extend([episode("langgraph-gpt", 0, True, 0.8), episode("langgraph-gpt", 1, False, 0.0),
                      episode("oracle", 0, True, 1.0)])
    run_cli(capsys, "report", str(tmp_path), "--price-in", "1", "--price-out", "1")
    (row,) = json.loads((tmp_path / "report.json").read_text())["llm_summary"]
    assert (row["model"], row["agent"], row["episodes"]) == ("langgraph-gpt", "", 2)
    assert (row["feasible"], row["optimal"], row["optimality_feasible"]) == (0.5, 0.0, pytest.approx(0.8))
    assert (row["tokens_in"], row["requests"], row["cost"], row["wall_s"]) == (None, None, None, 2.0)
    assert "| langgraph-gpt |  | Realm-P1-v0 | 2 | 0.500 | 0.000 | 0.800 | n/a | n/a | n/a | 2.00 | n/a | n/a |" in (
        tmp_path / "report.md").read_text()


@pytest.mark.parametrize(("argv", "message"), [
    (["--price-in", "1"], "--price-in needs --price-out too"),
    (["--price-in", "cheap", "--price-out", "1"], "--price-in 'cheap': give PRICE or MODEL=PRICE"),
    (["--price-in", "-1", "--price-out", "1"], "--price-in '-1'"),
])
def test_bad_prices_are_one_line_errors(capsys, tmp_path, argv, message):
    assert main(["run", "--env", "Realm-P11-v0", "--policy", "llm", "--model", "m", "--quiet", *argv]) == 2
    assert message in capsys.readouterr().err


def test_model_without_an_llm_policy_is_a_usage_error(capsys):
    assert main(["run", "--env", "Realm-P11-v0", "--policy", "random", "--model", "m", "--quiet"]) == 2
    assert "--model names the model of an LLM policy" in capsys.readouterr().err


# ====================================================================== multi-llm through the CLI
def test_multi_llm_plays_a_multi_agent_id_through_the_cli(capsys, tmp_path, monkeypatch):
    pytest.importorskip("pettingzoo")
    from tests.baselines.test_multi_llm import INSTANCE, SEED, PlanFollower, reference_plan, single_env_outcome

    plan = reference_plan()
    expected_return, expected_metrics, _ = single_env_outcome(plan)
    with ScriptedChatServer([PlanFollower(plan)] * 40, usage=USAGE) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.url)
        run_cli(capsys, "run", "--env", "Realm-P3-v0", "--env-kwargs", json.dumps({"instance": INSTANCE}),
                "--policy", "multi-llm", "--model", "team", "--episodes", "1", "--seed", str(SEED), "--quiet",
                "--out", str(tmp_path), "--price-in", "1", "--price-out", "1")
        assert len(server.requests) == 8 and {r["json"]["model"] for r in server.requests} == {"team"}
    (episode,) = [json.loads(line) for line in (tmp_path / "episodes.jsonl").read_text().splitlines()]
    assert episode["policy"] == "multi-llm:team" and episode["error"] is None and episode["success"]
    assert episode["metrics"] == expected_metrics and episode["episode_return"] == pytest.approx(expected_return)
    assert episode["steps"] == 7 and episode["invalid_actions"] == 0  # rounds of the joint env
    assert episode["usage"]["actors"] == 2 and episode["usage"]["requests"] == 8
    assert episode["usage"]["prompt_tokens"] == 800 and episode["usage"]["completion_tokens"] == 160
    (row,) = json.loads((tmp_path / "report.json").read_text())["llm_summary"]
    assert (row["model"], row["agent"], row["env"]) == ("team", "multi-llm", "Realm-P3-v0")
    assert (row["feasible"], row["optimal"], row["optimality_feasible"]) == (1.0, 1.0, pytest.approx(1.0))
    assert (row["requests"], row["tokens_in"], row["tokens_out"]) == (8.0, 800.0, 160.0)
    assert row["cost"] == pytest.approx(960 / 1e6)


def test_multi_llm_fits_only_multi_agent_ids(capsys):
    assert main(["run", "--env", "Realm-P11-v0", "--policy", "multi-llm", "--model", "m", "--quiet"]) == 2
    assert "policy 'multi-llm' does not fit Realm-P11-v0" in capsys.readouterr().err
