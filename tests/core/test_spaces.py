"""ActionCodec: schema-derived spaces, and tool call <-> element round trips."""

from __future__ import annotations

from enum import Enum
from typing import Annotated, Literal

import numpy as np
import pytest
from gymnasium import spaces
from gymnasium.utils.env_checker import data_equivalence
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, ConfigDict, Field

from crab_gym.core import ActionArgumentError, ActionCodec, UnsupportedParameterError, action


class Shape(Enum):
    SQUARE = "square"
    ROUND = "round"


class Point(BaseModel):
    model_config = ConfigDict(extra="forbid")
    x: Annotated[int, Field(ge=0, le=3)]
    label: Literal["a", "b"]


@action
def everything(
    shape: Shape,
    mode: Literal["x", "y", "z"],
    flag: bool,
    n: Annotated[int, Field(ge=-2, le=5)],
    ratio: Annotated[float, Field(ge=-1.0, le=2.5)],
    text: str,
    items: list[Annotated[int, Field(ge=0, le=9)]],
    points: list[Point],
    default_n: Annotated[int, Field(ge=0, le=3)] = 2,
) -> None:
    """Every supported type.

    Args:
        shape: an enum.
        mode: a literal.
        flag: a bool.
        n: a bounded int.
        ratio: a bounded float.
        text: any text.
        items: a list of ints.
        points: a list of objects.
        default_n: has a default.
    """


@action
def pick(row: Annotated[int, Field(ge=0, le=2)], col: Literal["l", "r"]) -> None:
    """Pick a cell.

    Args:
        row: the row.
        col: the column.
    """


@action
def done() -> None:
    """Declare completion."""


def test_space_structure():
    codec = ActionCodec([everything, pick, done])
    assert isinstance(codec.space, spaces.OneOf)
    inner = codec.space.spaces[0]
    assert inner["shape"] == spaces.Discrete(2)
    assert inner["mode"] == spaces.Discrete(3)
    assert inner["flag"] == spaces.Discrete(2)
    assert inner["n"] == spaces.Discrete(8, start=-2)
    assert inner["ratio"].low[0] == -1.0 and inner["ratio"].high[0] == 2.5
    assert inner["text"].contains("any string, even ünïcode {json}")
    assert isinstance(inner["items"], spaces.Sequence)
    assert isinstance(inner["points"].feature_space, spaces.Dict)
    assert ActionCodec([pick]).space == spaces.Dict({"row": spaces.Discrete(3), "col": spaces.Discrete(2)})


def test_encode_fills_defaults_and_decode_returns_json_values():
    codec = ActionCodec([everything, pick, done])
    call = {
        "name": "everything",
        "arguments": {
            "shape": "round", "mode": "z", "flag": True, "n": -2, "ratio": 0.25,
            "text": "hi", "items": [3, 9], "points": [{"x": 1, "label": "b"}],
        },
    }
    element = codec.encode(call)
    assert element[0] == 0
    assert element[1]["default_n"] == 2
    assert element[1]["shape"] == 1 and element[1]["n"] == -2
    decoded = codec.decode(element)
    assert decoded == {"name": "everything", "arguments": {**call["arguments"], "default_n": 2}}
    assert codec.decode(codec.encode({"name": "done"})) == {"name": "done", "arguments": {}}


def test_encode_rejects_invalid_calls():
    codec = ActionCodec([pick, done])
    with pytest.raises(ActionArgumentError, match="unknown action"):
        codec.encode({"name": "jump", "arguments": {}})
    with pytest.raises(ActionArgumentError, match="row"):
        codec.encode({"name": "pick", "arguments": {"row": 7, "col": "l"}})
    with pytest.raises(ActionArgumentError, match="not valid JSON"):
        codec.encode({"name": "pick", "arguments": "{row: 1"})
    assert codec.encode({"name": "pick", "arguments": '{"row": 1, "col": "r"}'})[1] == {"row": 1, "col": 1}


def test_unsupported_types_name_action_and_parameter():
    @action
    def unbounded(count: int) -> None:
        """U.

        Args:
            count: c.
        """

    @action
    def mapping(plan: dict[str, int]) -> None:
        """M.

        Args:
            plan: p.
        """

    with pytest.raises(UnsupportedParameterError, match="action 'unbounded', parameter 'count'.*bounds"):
        ActionCodec([unbounded])
    with pytest.raises(UnsupportedParameterError, match="action 'mapping', parameter 'plan'"):
        ActionCodec([mapping])


def test_flat_index_enumerates_finite_choices_row_major():
    codec = ActionCodec([everything, pick, done])
    assert not codec.is_finite("everything") and codec.is_finite("pick")
    assert codec.n_flat == 3 * 2 + 1
    assert codec.flat_to_call(0) == {"name": "pick", "arguments": {"row": 0, "col": "l"}}
    assert codec.flat_to_call(1) == {"name": "pick", "arguments": {"row": 0, "col": "r"}}
    assert codec.flat_to_call(5) == {"name": "pick", "arguments": {"row": 2, "col": "r"}}
    assert codec.flat_to_call(6) == {"name": "done", "arguments": {}}
    for i in range(codec.n_flat):
        assert codec.call_to_flat(codec.flat_to_call(i)) == i


ALL = ActionCodec([everything, pick, done])


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**31 - 1))
def test_every_sample_decodes_to_an_accepted_call_and_round_trips(seed):
    ALL.space.seed(seed)
    element = ALL.space.sample()
    call = ALL.decode(element)
    act = ALL.action(call["name"])
    act.validate(call["arguments"])  # accepted by the action
    assert data_equivalence(ALL.encode(call), element)
    assert ALL.decode(ALL.encode(call)) == call


point_st = st.fixed_dictionaries({"x": st.integers(0, 3), "label": st.sampled_from(["a", "b"])})
call_st = st.fixed_dictionaries(
    {
        "shape": st.sampled_from(["square", "round"]),
        "mode": st.sampled_from(["x", "y", "z"]),
        "flag": st.booleans(),
        "n": st.integers(-2, 5),
        "ratio": st.floats(-1.0, 2.5, allow_nan=False),
        "text": st.text(max_size=40),
        "items": st.lists(st.integers(0, 9), max_size=5),
        "points": st.lists(point_st, max_size=3),
        "default_n": st.integers(0, 3),
    }
)


@settings(max_examples=100, deadline=None)
@given(arguments=call_st)
def test_encode_then_decode_is_identity(arguments):
    call = {"name": "everything", "arguments": arguments}
    element = ALL.encode(call)
    assert ALL.space.contains(element)
    assert ALL.decode(element) == call


def test_decode_rejects_malformed_elements():
    with pytest.raises(ActionArgumentError, match="out of range"):
        ALL.decode((np.int64(9), {}))
    with pytest.raises(ActionArgumentError, match="pair"):
        ALL.decode("pick")
    with pytest.raises(ActionArgumentError, match="missing"):
        ALL.decode((np.int64(1), {"row": 1}))
