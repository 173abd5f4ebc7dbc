"""Actions: schemas from hints + docstrings, validation, binding and composition."""

from __future__ import annotations

from enum import Enum
from typing import Annotated, Literal

import pytest
from pydantic import Field

from crab_gym.core import Action, ActionArgumentError, CompositionError, action


class Colour(Enum):
    RED = "red"
    GREEN = "green"


@action
def paint(
    colour: Colour,
    x: Annotated[int, Field(ge=0, le=9)],
    mode: Literal["fill", "outline"] = "fill",
    note: str = "",
    env=None,
) -> str:
    """Paint one cell.

    Args:
        colour: the paint colour.
        x: the column,
            counted from the left.
        mode: how to paint.
        note: free text kept with the cell.
    """
    if env is not None:
        env.append((colour.value, x, mode))
    return f"{colour.value}:{x}:{mode}"


@action
def numpy_style(count: int, label: str = "a") -> int:
    """Count things.

    Parameters
    ----------
    count : int
        how many things.
    label : str
        a name
        for them.
    """
    return count


def test_schema_has_descriptions_enums_required_and_no_refs():
    schema = paint.to_schema()
    assert schema["name"] == "paint"
    assert schema["description"] == "Paint one cell."
    params = schema["parameters"]
    assert params["additionalProperties"] is False
    assert params["required"] == ["colour", "x"]
    props = params["properties"]
    assert set(props) == {"colour", "x", "mode", "note"}  # env is kept, not public
    assert props["colour"]["enum"] == ["red", "green"]
    assert props["mode"]["enum"] == ["fill", "outline"]
    assert props["x"]["description"] == "the column, counted from the left."
    assert props["mode"]["description"] == "how to paint."  # has a default, still described
    assert props["note"]["description"] == "free text kept with the cell."
    assert (props["x"]["minimum"], props["x"]["maximum"]) == (0, 9)
    text = str(schema)
    assert "$ref" not in text and "$defs" not in text and "title" not in text


def test_numpy_docstring_descriptions():
    props = numpy_style.to_schema()["parameters"]["properties"]
    assert props["count"]["description"] == "how many things."
    assert props["label"]["description"] == "a name for them."
    assert numpy_style.to_schema()["description"] == "Count things."


def test_tool_shapes():
    openai = paint.to_tool("openai")
    assert openai["type"] == "function"
    assert openai["function"]["parameters"] == paint.to_schema()["parameters"]
    anthropic = paint.to_tool("anthropic")
    assert anthropic["name"] == "paint"
    assert anthropic["input_schema"] == paint.to_schema()["parameters"]
    with pytest.raises(ValueError, match="unknown tool format"):
        paint.to_tool("gemini")


def test_call_validates_and_passes_kept_params():
    log: list = []
    assert paint(colour="green", x=3, env=log) == "green:3:fill"
    assert log == [("green", 3, "fill")]


@pytest.mark.parametrize(
    "kwargs, param, fragment",
    [
        ({"colour": "blue", "x": 1}, "colour", "'red' or 'green'"),
        ({"colour": "red", "x": 10}, "x", "less than or equal to 9"),
        ({"colour": "red"}, "x", "is required"),
        ({"colour": "red", "x": 1, "size": 2}, "size", "not a parameter"),
    ],
)
def test_bad_arguments_name_action_parameter_and_expectation(kwargs, param, fragment):
    with pytest.raises(ActionArgumentError) as info:
        paint(**kwargs)
    assert info.value.action == "paint"
    assert info.value.parameter == param
    assert fragment in str(info.value)
    assert "paint" in str(info.value)


def test_missing_required_kept_parameter_is_a_clear_error():
    @action
    def needs_env(env) -> int:
        """Needs the env."""
        return 1

    with pytest.raises(ActionArgumentError, match="kept parameter"):
        needs_env()
    assert needs_env(env=object()) == 1


def test_unannotated_parameter_is_rejected():
    with pytest.raises(TypeError, match="no type hint"):

        @action
        def bad(x):  # noqa: ANN001
            return x


def test_bind_closes_parameters():
    red_at_2 = paint.bind(colour="red", x=2)
    assert red_at_2.is_closed
    assert red_at_2.required_params == []
    assert set(red_at_2.to_schema()["parameters"]["properties"]) == {"mode", "note"}
    assert red_at_2(mode="outline") == "red:2:outline"
    with pytest.raises(ActionArgumentError, match="less than or equal"):
        paint.bind(x=99)


@action
def make_number(seed: int) -> int:
    """Produce a number.

    Args:
        seed: the input.
    """
    return seed * 10


@action
def square(value: int, env=None) -> int:
    """Square a number.

    Args:
        value: the number.
    """
    if env is not None:
        env.append(("square", value))
    return value * value


@action
def shout(text: str) -> str:
    """Upper-case.

    Args:
        text: the text.
    """
    return text.upper()


def test_pipe_feeds_return_value_and_forwards_env():
    pipe = make_number >> square
    assert pipe.param_names == ["seed"]
    log: list = []
    assert pipe(seed=3, env=log) == 900
    assert log == [("square", 30)]


def test_pipe_type_mismatch_raises_at_composition():
    with pytest.raises(CompositionError, match="returns int but parameter 'text' expects str"):
        make_number >> shout


def test_pipe_needs_exactly_one_remaining_parameter():
    with pytest.raises(CompositionError, match="exactly one"):
        make_number >> paint


def test_sequence_runs_both_and_returns_second():
    calls: list = []

    @action
    def first(a: int, env) -> int:
        """First.

        Args:
            a: a.
        """
        env.append(("first", a))
        return a

    @action
    def second(b: int, env) -> str:
        """Second.

        Args:
            b: b.
        """
        env.append(("second", b))
        return f"b={b}"

    both = first + second
    assert both.param_names == ["a", "b"]
    assert both.kept_params == ("env",)
    assert both(a=1, b=2, env=calls) == "b=2"
    assert calls == [("first", 1), ("second", 2)]
    with pytest.raises(CompositionError, match="both have a parameter 'a'"):
        first + first
    with pytest.raises(ActionArgumentError, match="is required"):
        both(a=1, env=calls)


def test_action_from_explicit_model():
    from pydantic import ConfigDict, create_model

    model = create_model("M", __config__=ConfigDict(extra="forbid"), job=(int, Field(ge=0, le=2, description="job")))
    act = Action("dispatch", lambda job, env: (job, env), model, kept_params=("env",), description="Dispatch.")
    assert act(job=2, env="E") == (2, "E")
    assert act.to_schema()["parameters"]["properties"]["job"]["maximum"] == 2
