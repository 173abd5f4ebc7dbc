"""Shipped library, reference values and Taillard's generator."""

import numpy as np
import pytest

from crab_gym.datasets.jssp import (
    TAILLARD_SEEDS,
    JSSPInstance,
    generate_taillard,
    list_jssp_instances,
    load_jssp_instance,
    random_instance,
    taillard_benchmark,
)
from crab_gym.envs.realm.jobshop.generator import taillard_next, taillard_unif


def test_library_holds_the_classic_families():
    names = list_jssp_instances()
    assert len(names) == 162
    counts = {f: len(list_jssp_instances(f)) for f in ("ft", "la", "abz", "orb", "swv", "yn", "ta")}
    assert counts == {"ft": 3, "la": 40, "abz": 5, "orb": 10, "swv": 20, "yn": 4, "ta": 80}
    assert names[:3] == ["abz5", "abz6", "abz7"]
    assert list_jssp_instances("ta")[:2] == ["ta01", "ta02"]


@pytest.mark.parametrize(
    "name, shape, reference",
    [
        ("ft06", (6, 6), (55, "optimum")),
        ("ft10", (10, 10), (930, "optimum")),
        ("la01", (10, 5), (666, "optimum")),
        ("ta01", (15, 15), (1231, "optimum")),
        ("abz8", (20, 15), (667, "optimum")),  # 665 before: a mis-citation (bounds.json's note)
        ("ta41", (30, 20), (2005, "upper_bound")),
        ("yn2", (20, 20), (904, "optimum")),  # closed by OptalCP in 2026 (bounds.json)
    ],
)
def test_known_references(name, shape, reference):
    inst = load_jssp_instance(name)
    assert inst.shape == shape
    assert inst.reference == reference


def test_every_shipped_instance_is_consistent():
    for name in list_jssp_instances():
        inst = load_jssp_instance(name)
        assert inst.lower_bound is not None and inst.upper_bound is not None
        assert inst.trivial_lower_bound() <= inst.lower_bound <= inst.upper_bound, name
        if inst.optimum is not None:
            assert inst.lower_bound == inst.optimum == inst.upper_bound, name
        # classic instances: every job visits every machine once
        assert all(sorted(row) == list(range(inst.n_machines)) for row in inst.machines), name
        assert inst.citation


def test_ft06_matrix_matches_the_published_instance():
    inst = load_jssp_instance("ft06")
    assert inst.machines[0] == (2, 0, 1, 3, 5, 4)
    assert inst.durations[0] == (1, 3, 6, 7, 3, 6)
    assert inst.machines[5] == (1, 3, 5, 0, 4, 2)
    assert inst.durations[5] == (3, 3, 9, 10, 4, 1)


def test_loader_accepts_names_paths_and_objects(tmp_path):
    inst = load_jssp_instance("TA1")
    assert inst.name == "ta01"
    assert load_jssp_instance(inst) is inst
    path = tmp_path / "mine.txt"
    path.write_text("2 2\n0 3 1 4\n1 2 0 5\n")
    mine = load_jssp_instance(str(path))
    assert mine.durations == ((3, 4), (2, 5)) and mine.name == "mine"
    with pytest.raises(KeyError, match="unknown JSSP instance 'nope'"):
        load_jssp_instance("nope")
    with pytest.raises(FileNotFoundError):
        load_jssp_instance(tmp_path / "missing.txt")


def test_lcg_is_the_minimal_standard_generator():
    # Park & Miller's check value: 10,000 steps from seed 1 give 1043618065
    seed = 1
    for _ in range(10_000):
        seed = taillard_next(seed)
    assert seed == 1043618065
    value, _ = taillard_unif(840612802, 1, 99)
    assert value == 94  # first duration of ta01


def test_generator_reproduces_all_80_taillard_instances():
    assert len(TAILLARD_SEEDS) == 80
    assert TAILLARD_SEEDS["ta01"] == (15, 15, 840612802, 398197754)
    for name in TAILLARD_SEEDS:
        shipped = load_jssp_instance(name)
        regenerated = taillard_benchmark(name)
        assert regenerated.same_data(shipped), name
        assert (shipped.time_seed, shipped.machine_seed) == TAILLARD_SEEDS[name][2:]


def test_random_instances_are_seeded_and_rebuildable():
    a = random_instance(5, 4, 123)
    b = random_instance(5, 4, np.random.default_rng(123))
    assert a.same_data(b)
    assert not a.same_data(random_instance(5, 4, 124))
    again = generate_taillard(5, 4, a.time_seed, a.machine_seed)
    assert again.same_data(a)
    assert all(1 <= p <= 99 for row in a.durations for p in row)
    assert all(sorted(row) == [0, 1, 2, 3] for row in a.machines)
    with pytest.raises(ValueError, match="time_seed"):
        generate_taillard(2, 2, 0, 5)


def test_instance_model_rejects_bad_data():
    from crab_gym.envs.realm.common.errors import InstanceFormatError

    with pytest.raises(InstanceFormatError, match=r"durations\[0\]\[1\]"):
        JSSPInstance(durations=[[1, -2]], machines=[[0, 1]])
    with pytest.raises(InstanceFormatError, match="2.5 is not an integer"):
        JSSPInstance(durations=[[1, 2.5]], machines=[[0, 1]])
    with pytest.raises(InstanceFormatError, match="every job needs 2 operations"):
        JSSPInstance(durations=[[1, 2], [3]], machines=[[0, 1], [0]])
    with pytest.raises(InstanceFormatError, match="lower bound 9 exceeds upper bound 5"):
        JSSPInstance(durations=[[1]], machines=[[0]], lower_bound=9, upper_bound=5)
