"""Instance splits: declared per problem, frozen, disjoint; selected by name, size or folder;
every episode record names its instance and split."""

from __future__ import annotations

import json

import pytest

from crab_gym.baselines.registry import NamedPolicy
from crab_gym.cli import main
from crab_gym.datasets import generate_instance, list_instances
from crab_gym.datasets.splits import SplitError, select, split_instances, split_names
from crab_gym.envs.realm.common.splits import every_third, size_in_name
from crab_gym.envs.realm.index import problem_specs
from crab_gym.evaluation.benchmark import Benchmark

SPECS = problem_specs()

#: The published sizes of the dev and test splits (docs/results.md): a change is a new benchmark.
SIZES = {"P1": (8, 12), "P2": (8, 12), "P3": (8, 12), "P4": (8, 12), "P5": (8, 12), "P6": (8, 12),
         "P7": (8, 12), "P8": (8, 12), "P9": (8, 12), "P10": (9, 14), "P11": (43, 80), "J2": (8, 14),
         "J3": (7, 13), "J4": (6, 10)}


@pytest.fixture(autouse=True)
def private_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("CRAB_GYM_CACHE_DIR", str(tmp_path / "cache"))


@pytest.mark.parametrize("spec", SPECS, ids=lambda s: s.problem)
def test_dev_and_test_are_disjoint_shipped_and_of_their_published_size(spec):
    splits = spec.splits
    assert splits is not None, f"{spec.problem} declares no splits"
    shipped = set(list_instances(spec.problem))
    for name, members in splits.named().items():
        assert members and set(members) <= shipped, (spec.problem, name, sorted(set(members) - shipped))
        assert len(set(members)) == len(members), (spec.problem, name)
    assert not set(splits.dev) & set(splits.test)
    assert set(splits.quick) <= set(splits.dev) and len(splits.quick) >= 3
    assert (len(splits.dev), len(splits.test)) == SIZES[spec.problem]
    assert splits.description


@pytest.mark.parametrize("spec", [s for s in SPECS if s.problem not in ("P11", "J2", "J4")], ids=lambda s: s.problem)
def test_generated_families_split_every_third_instance_of_each_size_class(spec):
    """The literal lists in the specs are the rule's output: the rule their description states."""
    rule = every_third(list_instances(spec.problem), "")
    assert (spec.splits.dev, spec.splits.test, spec.splits.quick) == (rule.dev, rule.test, rule.quick)


@pytest.mark.parametrize("problem", ["J2", "J4"])
def test_heavy_variants_keep_one_large_instance_per_split(problem):
    spec = next(s for s in SPECS if s.problem == problem)
    for members in (spec.splits.dev, spec.splits.test):
        assert sum(size_in_name(n) == "large" for n in members) == 1
    rule = every_third([n for n in list_instances(problem) if size_in_name(n) != "large"], "")
    assert [n for n in spec.splits.dev if size_in_name(n) != "large"] == list(rule.dev)
    assert [n for n in spec.splits.test if size_in_name(n) != "large"] == list(rule.test)


def test_every_split_a_run_can_name_resolves_and_sizes_filter():
    for spec in SPECS:
        for name in split_names(spec.env_id):
            assert split_instances(spec.env_id, name)
    cases = select(["Realm-P11-v0"], split="test", sizes=["15x15"])
    assert [c.instance for c in cases] == [f"ta{i:02d}" for i in range(1, 11)]
    assert {c.split for c in cases} == {"test[15x15]"} and {c.kwargs["instance"] for c in cases} == {
        c.instance for c in cases}
    small = select(["Realm-P3-v0"], sizes=["small"])
    assert len(small) == 8 and {c.size for c in small} == {"small"} and {c.split for c in small} == {"all[small]"}


def test_the_default_selection_is_the_quick_split_and_never_one_instance():
    cases = select(["Realm-P1-v0", "Realm-J3-v0"])
    assert [c.instance for c in cases] == ["p1_small_00", "p1_small_03", "p1_medium_00",
                                            "j3_small_00", "j3_small_03", "j3_medium_00"]
    assert {c.split for c in cases} == {"quick"}
    # an env without splits (or an explicit instance) plays its one case, unlabelled
    assert select(["Realm-P1-v0"], env_kwargs={"instance": "p1_large_00"})[0].split is None


@pytest.mark.parametrize("call, fragment", [
    (dict(split="tset"), "has no split 'tset': choose one of dev, test"),
    (dict(instances=["p1_smal_00"]), "has no instance 'p1_smal_00'"),
    (dict(split="test", sizes=["huge"]), "has no instance of size huge"),
    (dict(split="test", env_kwargs={"instance": "p1_small_00"}), "already picks the instance"),
    (dict(split="test", instances=["p1_small_00"]), "a split or instances, not both"),
])
def test_a_bad_selection_says_what_there_is(call, fragment):
    with pytest.raises(SplitError, match=fragment.replace("(", r"\(")):
        select(["Realm-P1-v0"], **call)


def test_a_folder_of_own_files_is_a_split(tmp_path):
    for seed in (5, 6):
        (tmp_path / f"mine_{seed}.json").write_text(generate_instance("P1", "small", seed=seed, name=f"mine_{seed}").to_json())
    (tmp_path / "notes.md").write_text("not an instance")
    cases = select(["Realm-P1-v0"], split=str(tmp_path))
    assert [c.instance for c in cases] == ["mine_5", "mine_6"]
    assert {c.split for c in cases} == {str(tmp_path)} and {c.size for c in cases} == {"small"}


def test_every_episode_record_names_its_instance_and_split(tmp_path, capsys):
    code = main(["run", "--env", "Realm-P1-v0", "--split", "test", "--sizes", "large", "--policy", "oracle",
                 "--episodes", "2", "--quiet", "--out", str(tmp_path)])
    assert code == 0, capsys.readouterr().err
    records = [json.loads(line) for line in (tmp_path / "episodes.jsonl").read_text().splitlines()]
    assert sorted((r["instance"], r["seed"]) for r in records) == [
        (n, s) for n in ("p1_large_01", "p1_large_02", "p1_large_04", "p1_large_05") for s in (0, 1)]
    assert {(r["split"], r["size"]) for r in records} == {("test[large]", "large")}
    assert all(r["env_kwargs"] == {"instance": r["instance"]} for r in records)
    assert {r["metrics"]["optimality"] for r in records} == {1.0}


def test_benchmark_takes_the_same_selection():
    bench = Benchmark(select(["Realm-P2-v0"], split="dev"), seeds=[0])
    report = bench.run({"oracle": NamedPolicy("oracle")}, progress=False)
    assert [r.instance for r in report.results] == sorted(split_instances("Realm-P2-v0", "dev"),
                                                          key=lambda n: (n.split("_")[1], n))
    assert {r.split for r in report.results} == {"dev"}
