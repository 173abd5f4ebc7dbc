"""The tools an MCP session sees, and what each call does.

Six tools are always there, written as the suite's own :class:`~crab_gym.core.action.Action`
objects (schemas from type hints and docstrings, arguments validated by pydantic, a bad one
answered with the reason): ``list_envs``, ``list_instances``, ``start_episode``, ``observe``,
``end_episode`` and ``act``. While an episode runs, the session's list also holds its env's
own actions (``dispatch``, ``visit``, ``submit_plan``, ...) with the schemas the LLM adapter
sends; ``act(name, arguments)`` reaches the same actions for clients that read the tool list
only once. Every answer is a :class:`ToolReply`: text for the model, the same as data, and
whether it is a tool error. Nothing here raises for a caller's mistake.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated, Any

from pydantic import Field

from crab_gym.core.action import Action, ActionArgumentError, action
from crab_gym.datasets.splits import SplitError, instance_size, realm_spec, split_instances, split_names
from crab_gym.envs.realm.index import problem_specs
from crab_gym.envs.registration import env_specs
from crab_gym.mcp.episode import EpisodeRequest, McpEpisode, ToolError, make_env, record_view
from crab_gym.mcp.sessions import Session

#: Tools whose work may wait on a solver or the disk: the server runs them off its event loop.
BLOCKING = frozenset({"start_episode", "end_episode", "list_instances"})
#: Tools that change nothing (the MCP ``readOnlyHint``).
READ_ONLY = frozenset({"list_envs", "list_instances", "observe"})


def blocking(session: Session, name: str) -> bool:
    """Whether this call may wait: a tool of :data:`BLOCKING`, or any call of an episode whose steps are slow."""
    return name in BLOCKING or (session.episode is not None and session.episode.slow)


@dataclass
class ToolReply:
    """One tool call's answer.

    Attributes:
        text: what the model reads.
        data: the same as structured content.
        error: answer as an MCP tool error (``isError``).
        tools_changed: the session's tool list changed (the server notifies the client).
        then: work to finish off the event loop (the episode's deferred solves and its
            record); its reply replaces this one.
    """

    text: str
    data: dict[str, Any]
    error: bool = False
    tools_changed: bool = False
    then: Callable[[], ToolReply] | None = None


#: The largest tool call's arguments the server reads, in characters of JSON (the plan of the
#: largest shipped instance, J3's 200x50, is about 12,000): a bigger call is refused unread.
MAX_ARGUMENT_CHARS = 1_000_000
#: The longest agent name an episode is recorded under (it goes into every record and report).
MAX_AGENT_CHARS = 200
#: An error message longer than this is cut (it may quote what the caller sent).
MAX_ERROR_CHARS = 2_000


def failure(message: str) -> ToolReply:
    if len(message) > MAX_ERROR_CHARS:
        cut = len(message) - MAX_ERROR_CHARS
        message = f"{message[:MAX_ERROR_CHARS]}... ({cut:,} more characters not shown)"
    return ToolReply(message, {"error": message}, error=True)


def _too_large(name: str, arguments: Any) -> str | None:
    """Why a call's arguments are refused unread (too many characters), or None."""
    try:
        size = len(json.dumps(arguments, default=str))
    except (TypeError, ValueError, RecursionError):
        return None  # the validation says what is wrong with them
    if size <= MAX_ARGUMENT_CHARS:
        return None
    return (f"the arguments of {name!r} are {size:,} characters of JSON; this server reads at most "
            f"{MAX_ARGUMENT_CHARS:,} per call (the largest shipped instance's plan is about 12,000)")


# ====================================================================== generic tools
@action
def list_envs() -> ToolReply:
    """List the env ids this server plays, with the problem each one poses."""
    titles = {spec.env_id: f"{spec.title} ({spec.problem})" for spec in problem_specs()}
    envs = [{"id": spec.id, "title": titles.get(spec.id, spec.entry_point), "has_instances": spec.id in titles}
            for spec in env_specs()]
    lines = [f"- {e['id']}: {e['title']}" for e in envs]
    text = "Envs (start one with start_episode; list_instances gives a REALM env's shipped instances):\n"
    return ToolReply(text + "\n".join(lines), {"envs": envs})


@action
def list_instances(env_id: str, split: str | None = None) -> ToolReply:
    """List a REALM env's instances (start_episode's instance argument): a split's, or every shipped one.

    Args:
        env_id: a REALM env id from list_envs, e.g. Realm-P11-v0.
        split: a split to list (test, dev, quick, a size class such as small; P11 also ta, la, ...); default: all.
    """
    spec = next((s for s in problem_specs() if s.env_id == env_id), None)
    if spec is None:
        realm = ", ".join(s.env_id for s in problem_specs())
        return failure(f"{env_id!r} is not a REALM env id: instances are listed for {realm}")
    try:
        names = split_instances(env_id, split or "all")
    except SplitError as exc:
        return failure(str(exc))
    splits = split_names(env_id)
    text = (f"{env_id} ({spec.title}), split {split or 'all'}: {len(names)} instances: " + ", ".join(names)
            + f"\nSplits: {', '.join(splits)} (start_episode(instance=..., split=...) records the split)")
    return ToolReply(text, {"env_id": env_id, "split": split or "all", "instances": names, "splits": splits})


@action(kept_params=("session",))
def start_episode(
    env_id: str,
    instance: str | None = None,
    seed: Annotated[int, Field(ge=0)] = 0,
    keywords: dict[str, Any] | None = None,
    max_steps: Annotated[int, Field(ge=1)] = 10_000,
    agent: Annotated[str, Field(max_length=MAX_AGENT_CHARS)] = "mcp",
    state_in_replies: bool = True,
    split: str | None = None,
    session: Any = None,
) -> ToolReply:
    """Start an episode in this session (a running one ends first, recorded as truncated); the env's actions become tools.

    Args:
        env_id: the env to play, from list_envs, e.g. Realm-P11-v0.
        instance: a shipped instance name from list_instances (default: the env picks one from the seed).
        seed: the reset seed.
        keywords: more keyword arguments of the env, as gym.make takes them, e.g. {"obfuscate": true}.
        max_steps: the episode is cut (truncated) after this many action calls.
        agent: the name the episode is recorded under (the report's policy column), e.g. the model's.
        state_in_replies: each action's reply also gives the new state and the legal calls.
        split: the split this instance is played as part of (list_instances lists a split's), recorded with the episode.
    """
    kwargs = dict(keywords or {})
    if instance is not None:
        if "instance" in kwargs and kwargs["instance"] != instance:
            return failure(f"instance is given twice: {instance!r} and keywords.instance {kwargs['instance']!r}")
        kwargs["instance"] = instance
    labels = _labels(env_id, kwargs.get("instance"), split)
    request = EpisodeRequest(env_id, kwargs, seed, max_steps, agent.strip() or "mcp", state_in_replies, **labels)
    env = make_env(env_id, kwargs)
    episode = McpEpisode(request, session.recorder.next_index(env_id, kwargs, request.agent), env)
    try:
        episode.reset()
    except ToolError:
        episode.close()
        raise
    previous = session.begin(episode)
    text, data = episode.observation()
    if previous is not None:
        text = (f"(The episode that was running, {previous.env_id} seed {previous.seed}, ended as truncated "
                "and was recorded.)\n\n" + text)
        data["previous"] = record_view(previous)
    tools = ", ".join(episode.action_names())
    text += f"\n\n# Tools of this episode\n{tools} (each with its own arguments; or act(name, arguments))"
    return ToolReply(text, data, tools_changed=True)


def _labels(env_id: str, instance: Any, split: str | None) -> dict[str, Any]:
    """The record's labels: the instance (a shipped name), its size, and the split, which must hold it."""
    if not isinstance(instance, str):
        if split is not None:
            raise ToolError(f"split {split!r} needs an instance of it: list_instances(env_id, split) lists them")
        return {}
    if split is not None:
        try:
            members = split_instances(env_id, split)
        except SplitError as exc:
            raise ToolError(str(exc)) from None
        if instance not in members:
            raise ToolError(f"instance {instance!r} is not in split {split!r} of {env_id}: list_instances lists its instances")
    try:
        size = instance_size(env_id, instance) if realm_spec(env_id) is not None else None
    except (KeyError, LookupError, ValueError, OSError):  # a bad name: making the env says so
        size = None
    return {"split": split, "instance": instance, "size": size}


@action(kept_params=("session",))
def observe(session: Any = None) -> ToolReply:
    """The current episode: the task, the state in words, the last call's result and the legal calls."""
    episode = _episode(session)
    text, data = episode.observation()
    return ToolReply(text, data)


@action(kept_params=("session",))
def end_episode(session: Any = None) -> ToolReply:
    """End the current episode now (recorded as truncated if it was still running) and give its record."""
    episode = _episode(session)
    was_done = episode.done
    session.end()
    result = episode.tally
    text = f"The episode {'had ended' if was_done else 'ended early (truncated)'}.\n" + _result_text(result)
    return ToolReply(text, {"result": record_view(result)}, tools_changed=True)


@action(kept_params=("session",))
def act(name: str, arguments: dict[str, Any] | None = None, session: Any = None) -> ToolReply:
    """Call one of the current episode's actions by name (the same as calling that action's own tool).

    Args:
        name: the action, e.g. dispatch or submit_plan (observe lists them).
        arguments: the action's arguments as an object.
    """
    return play(session, name, arguments or {})


GENERIC: dict[str, Action] = {a.name: a for a in (list_envs, list_instances, start_episode, observe, end_episode, act)}


# ====================================================================== playing
def _episode(session: Session) -> McpEpisode:
    if session.episode is None:
        raise ToolError("no episode is running in this session: call start_episode first (list_envs gives the env ids)")
    return session.episode


def play(session: Session, name: str, arguments: Any) -> ToolReply:
    """One call of the episode's env; once the episode ends, its record is finished off the loop."""
    episode = _episode(session)
    if name not in episode.action_names():
        raise ToolError(f"{name!r} is not an action of {episode.request.env_id}: its actions are "
                        + ", ".join(episode.action_names()))
    was_done = episode.done
    try:
        step = episode.step(name, arguments)
        reply = ToolReply(step.text, step.data, error=step.error)
    except ToolError as exc:
        if was_done or not episode.done:
            raise
        reply = failure(str(exc))  # the env raised: the episode ends, recorded with the error
    if episode.done:
        reply.then = lambda: _finished(session, reply)
    return reply


def _finished(session: Session, reply: ToolReply) -> ToolReply:
    """The last call's reply, with the episode's final metrics and where it was recorded."""
    episode = _episode(session)
    session.conclude()
    result = episode.tally
    if result.error:
        text = reply.text + "\n" + _result_text(result, metrics=True)
    else:  # the adapter's words give the metrics of an episode the env ended
        text = episode.adapter.result_text() + "\n" + _result_text(result, metrics=not result.terminated)
    return ToolReply(text, {**reply.data, "result": record_view(result)}, error=reply.error)


def _result_text(result: Any, *, metrics: bool = True) -> str:
    """The episode's record: how it went (and the env's metrics, unless the text has them)."""
    where = f" ({result.policy!r} episode {result.index} of {result.env_id}, seed {result.seed})"
    how = "ended by the env" if result.terminated else "cut short (truncated)"
    lines = [f"Episode result{where}: {how}; success {result.success}, return {result.episode_return:.4f}, "
             f"{result.steps} calls ({result.invalid_actions} rejected), completeness {result.completeness:.3f}"]
    if metrics:
        shown = ", ".join(f"{k} {_short(v)}" for k, v in sorted(result.metrics.items()))
        lines.append(f"Metrics: {shown or 'none'}")
    if result.error:
        lines.append(f"Error: {result.error}")
    return "\n".join(lines)


def _short(value: Any) -> str:
    return f"{value:.4g}" if isinstance(value, float) else str(value)


# ====================================================================== the toolbox
@dataclass(frozen=True)
class ToolDef:
    """A tool as the session lists it."""

    name: str
    description: str
    input_schema: dict[str, Any]
    read_only: bool = False


def definitions(session: Session) -> list[ToolDef]:
    """The session's tools now: the six generic ones, then the running episode's actions."""
    tools = [ToolDef(a.name, a.description, _schema(a), a.name in READ_ONLY) for a in GENERIC.values()]
    if session.episode is not None:
        tools += [ToolDef(s["name"], s["description"], s["parameters"]) for s in session.episode.tool_schemas()
                  if s["name"] not in GENERIC]  # a clashing action stays reachable through act
    return tools


def _schema(act_: Action) -> dict[str, Any]:
    return act_.to_schema()["parameters"]


def call(session: Session, name: str, arguments: Any) -> ToolReply:
    """Answer one tool call; a caller's mistake is a tool error with the reason, never an exception."""
    session.calls += 1
    refused = _too_large(name, arguments)
    if refused is not None:
        return failure(refused)
    try:
        if name in GENERIC:
            tool = GENERIC[name]
            return tool.run_validated(tool.validate(arguments if arguments is not None else {}), session=session)
        if session.episode is None:
            known = ", ".join(GENERIC)
            return failure(f"unknown tool {name!r}: with no episode running the tools are {known}")
        return play(session, name, arguments)
    except (ToolError, ActionArgumentError) as exc:
        return failure(str(exc))
