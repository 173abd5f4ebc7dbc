"""The README's examples run and print exactly what the README says they print."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

import pytest

from crab_gym.core import ActionArgumentError

README = Path(__file__).resolve().parents[1] / "README.md"


def python_blocks() -> list[str]:
    return re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)


def documented_output(block: str) -> list[str]:
    """Lines written as ``# <output>`` right after a print (the README's convention)."""
    lines = block.splitlines()
    out = []
    for prev, line in zip(lines, lines[1:]):
        if line.startswith("# ") and (prev.lstrip().startswith("print(") or prev.startswith("# ") or "print(" in prev):
            out.append(line[2:])
    return out


@pytest.fixture(scope="module")
def namespace() -> dict:
    ns: dict = {"__name__": "readme_example"}
    return ns


def run_block(block: str, ns: dict) -> list[str]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(block, "README.md", "exec"), ns)
    return out.getvalue().splitlines()


def test_examples_print_the_documented_output(namespace):
    blocks = python_blocks()
    assert len(blocks) >= 2
    for block in blocks[:2]:
        expected = documented_output(block)
        assert expected, "every README example documents its output"
        assert run_block(block, namespace) == expected


def test_documented_error_for_bad_arguments(namespace):
    run_block(python_blocks()[0], namespace)
    with pytest.raises(ActionArgumentError) as info:
        namespace["env"].take("brew", {"kind": "oolong"})
    assert str(info.value) in README.read_text()


def test_environment_example_runs():
    blocks = python_blocks()
    env_block = next(b for b in blocks if 'gym.make("Realm-P3-v0"' in b and "render()" in b)
    printed = run_block(env_block, {"__name__": "readme_example"})
    assert printed[0].startswith("p3_small_01: clock 07:00; served 0/4")
    assert any("pickup:p1" in line for line in printed)


def test_datasets_example_runs():
    block = next(b for b in python_blocks() if "from crab_gym.datasets import" in b)
    ns: dict = {"__name__": "readme_example"}
    run_block(block, ns)
    assert ns["names"] and all(n.startswith("p3_") for n in ns["names"])
    assert ns["inst"].name == ns["names"][0]
    assert ns["fresh"].name and ns["fresh"] == ns["generate_instance"]("P1", "small", seed=7)
