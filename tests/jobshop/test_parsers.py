"""Both text formats: round trips and clear errors on bad files."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from crab_gym.datasets.jssp import (
    JSSPInstance,
    load_jssp_instance,
    parse_standard,
    parse_taillard,
    parse_taillard_many,
    read_jssp_file,
    write_standard,
    write_taillard,
)
from crab_gym.envs.realm.common.errors import InstanceFormatError


@pytest.mark.parametrize("name", ["ft06", "la01", "orb07", "ta01", "swv11"])
def test_standard_round_trip(name):
    inst = load_jssp_instance(name)
    back = parse_standard(write_standard(inst), name=name)
    assert back.same_data(inst)
    assert write_standard(back) == write_standard(inst)


@pytest.mark.parametrize("name", ["ft06", "ta01", "ta80", "abz8"])
def test_taillard_round_trip(name):
    inst = load_jssp_instance(name)
    text = write_taillard(inst)
    back = parse_taillard(text, name=name)
    assert back.same_data(inst)
    assert (back.upper_bound, back.lower_bound, back.optimum) == (inst.upper_bound, inst.lower_bound, inst.optimum)
    assert (back.time_seed, back.machine_seed) == (inst.time_seed, inst.machine_seed)
    assert write_taillard(back) == text


def test_taillard_file_layout_and_one_based_machines():
    text = write_taillard(load_jssp_instance("ta01"))
    lines = text.splitlines()
    assert lines[0] == "Nb of jobs, Nb of Machines, Time seed, Machine seed, Upper bound, Lower bound"
    assert lines[1].split() == ["15", "15", "840612802", "398197754", "1231", "1231"]
    assert lines[2] == "Times" and lines[18] == "Machines"
    assert lines[3].split()[:3] == ["94", "66", "10"]
    assert lines[19].split()[:3] == ["7", "13", "5"]  # machine 6 (0-based) is written 7


def test_taillard_file_with_several_instances(tmp_path):
    text = write_taillard(load_jssp_instance("ta01")) + "\n" + write_taillard(load_jssp_instance("ta02"))
    found = parse_taillard_many(text, name="tai15")
    assert [i.name for i in found] == ["tai15_1", "tai15_2"]
    assert found[1].same_data(load_jssp_instance("ta02"))
    with pytest.raises(InstanceFormatError, match="holds 2 instances"):
        parse_taillard(text)


def test_read_file_detects_each_format(tmp_path):
    inst = load_jssp_instance("la01")
    for fname, text in [("a.txt", write_standard(inst)), ("b.txt", write_taillard(inst))]:
        path = tmp_path / fname
        path.write_text(text)
        assert read_jssp_file(path).same_data(inst)
    path = tmp_path / "c.json"
    import json

    path.write_text(json.dumps(inst.to_dict()))
    assert read_jssp_file(path) == inst


def test_standard_form_allows_comments_and_blank_lines():
    inst = parse_standard("# tiny\n2 2\n\n0 3 1 4\n# job 1\n1 2 0 5\n")
    assert inst.machines == ((0, 1), (1, 0)) and inst.durations == ((3, 4), (2, 5))


BAD_STANDARD = [
    ("", 1, "empty file"),
    ("2\n0 1 1 1\n", 1, "expected 'n_jobs n_machines'"),
    ("2 x\n", 1, "token 2 is 'x'"),
    ("2 2\n0 3 1 4\n", 2, "only 1 job lines follow"),
    ("2 2\n0 3 1 4\n1 2 0\n", 3, "job 1: expected 2 'machine duration' pairs"),
    ("2 2\n0 3 1 4\n1 2 2 5\n", 3, "machine 2 outside 0..1"),
    ("2 2\n0 3 1 4\n1 -2 0 5\n", 3, "negative duration -2"),
    ("2 2\n0 3 1 4\n1 2 0 5\n0 1 1 1\n", 4, "extra line"),
    ("1 2\n0 3.5 1 4\n", 2, "token 2 is '3.5'"),
]


@pytest.mark.parametrize("text, line, message", BAD_STANDARD)
def test_bad_standard_files_name_file_line_and_problem(tmp_path, text, line, message):
    path = tmp_path / "broken.txt"
    path.write_text(text)
    with pytest.raises(InstanceFormatError) as err:
        parse_standard(path)
    assert err.value.source == "broken.txt"
    assert err.value.line == line
    assert message in str(err.value)
    assert str(err.value).startswith(f"broken.txt, line {line}: ")


GOOD_TAILLARD = (
    "Nb of jobs, Nb of Machines, Time seed, Machine seed, Upper bound, Lower bound\n"
    "2 2 0 0 9 7\n"
    "Times\n"
    "3 4\n"
    "2 5\n"
    "Machines\n"
    "1 2\n"
    "2 1\n"
)

BAD_TAILLARD = [
    (GOOD_TAILLARD.replace("Nb of jobs", "Jobs"), 1, "expected the header line"),
    (GOOD_TAILLARD.replace("2 2 0 0 9 7", "2 2 0 0 9"), 2, "expected 6 numbers"),
    (GOOD_TAILLARD.replace("Times", "Durations"), 3, "expected the line 'Times'"),
    (GOOD_TAILLARD.replace("2 5\n", "2 5 6\n"), 5, "'Times' row for job 1: expected 2 integers"),
    (GOOD_TAILLARD.replace("2 1\n", "2 0\n"), 8, "machine 0 outside 1..2 (this format numbers machines from 1)"),
    (GOOD_TAILLARD.replace("3 4\n", "3 x\n"), 4, "token 2 is 'x'"),
    (GOOD_TAILLARD.replace("2 2 0 0 9 7", "2 2 0 0 5 7"), 2, "lower bound 7 exceeds upper bound 5"),
    (GOOD_TAILLARD[: GOOD_TAILLARD.index("\nMachines") + 1], 5, "missing the 'Machines' block"),
]


def test_good_taillard_text():
    inst = parse_taillard(GOOD_TAILLARD)
    assert inst.machines == ((0, 1), (1, 0)) and inst.upper_bound == 9 and inst.lower_bound == 7
    assert inst.time_seed is None and inst.optimum is None


@pytest.mark.parametrize("text, line, message", BAD_TAILLARD)
def test_bad_taillard_files_name_file_line_and_problem(tmp_path, text, line, message):
    path = tmp_path / "tai_bad.txt"
    path.write_text(text)
    with pytest.raises(InstanceFormatError) as err:
        parse_taillard(path)
    assert err.value.source == "tai_bad.txt"
    assert err.value.line == line
    assert message in str(err.value)


@st.composite
def instances(draw):
    n = draw(st.integers(1, 6))
    m = draw(st.integers(1, 5))
    durations = draw(st.lists(st.lists(st.integers(0, 999), min_size=m, max_size=m), min_size=n, max_size=n))
    perm = st.permutations(list(range(m)))
    machines = [draw(perm) for _ in range(n)]
    return JSSPInstance(durations=durations, machines=machines, name="h", n_machines=m)


@settings(max_examples=60, deadline=None)
@given(instances())
def test_round_trips_on_random_instances(inst):
    assert parse_standard(write_standard(inst)).same_data(inst)
    assert parse_taillard(write_taillard(inst)).same_data(inst)
    assert JSSPInstance.from_dict(inst.to_dict()) == inst
