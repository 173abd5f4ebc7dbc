"""Where the parts of REALM P11 (job-shop scheduling) live: the problem's record in the index."""

from crab_gym.envs.realm.common.index_permutation import Numbering
from crab_gym.envs.realm.common.problem_spec import NamedHeuristic, ProblemSpec
from crab_gym.envs.realm.common.splits import Splits, numbered

#: The dispatching rules, each a policy of its own (``crab-gym run --policy mwkr``); MWKR is
#: the greedy the scoring check ranks.
RULES = (
    ("SPT", "shortest processing time of the next operation"),
    ("LPT", "longest processing time of the next operation"),
    ("MWKR", "most work remaining"),
    ("MOR", "most operations remaining"),
    ("FIFO", "earliest ready time of the next operation"),
)

#: P11's splits are the literature's families: Taillard's 80 (15x15 to 100x20) are the test set,
#: as in the learned-scheduling literature (L2D, ScheduleNet); Fisher-Thompson and Lawrence the dev set.
_LITERATURE = {
    "ft": ("ft06", "ft10", "ft20"),
    "la": tuple(f"la{i:02d}" for i in range(1, 41)),
    "ta": tuple(f"ta{i:02d}" for i in range(1, 81)),
    "abz": tuple(f"abz{i}" for i in range(5, 10)),
    "orb": tuple(f"orb{i:02d}" for i in range(1, 11)),
    "swv": tuple(f"swv{i:02d}" for i in range(1, 21)),
    "yn": tuple(f"yn{i}" for i in range(1, 5)),
}
P11_SPLITS = Splits(
    dev=_LITERATURE["ft"] + _LITERATURE["la"], test=_LITERATURE["ta"], quick=("ft06", "la01", "la16"),
    sets=_LITERATURE,
    description="the literature's instances: dev = ft06, ft10, ft20 and la01-la40; test = Taillard's ta01-ta80; "
    "quick = ft06, la01, la16; each family (ft, la, ta, abz, orb, swv, yn) is a split of its own",
)

#: P11's jobs and machines are numbers, not names: renaming (``obfuscate=True``) renumbers them
#: by seeded permutations wherever they appear (:mod:`crab_gym.envs.realm.common.index_permutation`).
JOB_SHOP_NUMBERING = Numbering(
    sizes={"job": "n_jobs", "machine": "n_machines"},
    rows={"action_mask": "job", "done": "job", "lower_bound": "job", "machine": "job", "processing_time": "job",
          "machine_available": "machine"},
    values={"machine": "machine"},
    arguments={"dispatch.job": "job"},
    lists={"sequence": ("machine", "job")},
    records={"job": "job", "machine": "machine"},
    text={r"\bjob (\d+)\b": "job", r"\bjob_(\d+)_": "job", r"\bM(\d+)\b": "machine"},
)

P11 = ProblemSpec(
    problem="P11", title="job-shop scheduling", package=__package__,
    env="env:JobShopEnv", names="library:list_jssp_instances", load="library:load_jssp_instance",
    generate="generator:generate_p11", check="checker:check", reference="references:yardstick", viewer="render:VIEWER",
    vector_env="vector_env:JobShopVectorEnv",
    heuristics=tuple(
        NamedHeuristic(name.lower(), f"heuristics:{name}", f"{name} dispatching rule: {what}",
                       greedy=name == "MWKR", style="fixed")
        for name, what in RULES
    ),
    idle_plan=False, splits=P11_SPLITS, docs="docs/jobshop.md", tests="tests/jobshop",
    name_fields=(), numbering=JOB_SHOP_NUMBERING,
)


#: REALM-Bench's job-shop variants (issue 25): J2 (one disruption per instance), J3 (200 jobs
#: x 50 machines, jobs that revisit machines), J4 (both, three disruptions); J1 is P11.
_VARIANT_RULES = tuple(
    NamedHeuristic(f"j_{name.lower()}", f"variants.heuristics:{name}", f"{name} dispatching rule on J2/J3/J4: {what}",
                   greedy=False, style="fixed")
    for name, what in RULES
)
_REPLANNER = NamedHeuristic("j_greedy", "variants.heuristics:GreedyReplanner",
                            "greedy list-scheduling plan (earliest start, most work remaining), re-planned at every strike")


_VARIANT_SPLIT_RULE = ("{low}_<size>_<k> comes from the seeded generator (SHIPPED in variants/build.py); in each size "
                       "class the 1st, 4th, 7th, ... instance (by k) is dev, the others test; quick: the first dev "
                       "instances of the smaller classes")
#: J2/J4 large (200 x 50, 10,000 operations): one in dev and one in test, the others only in the
#: ``large`` split: each episode's adaptation yardstick re-plans them with CP-SAT (~15 s), and the
#: reference table must regenerate in 15 minutes on two cores.
_HEAVY_SPLIT_RULE = ("{low}_<size>_<k> comes from the seeded generator (SHIPPED in variants/build.py); small and "
                     "medium: the 1st, 4th, 7th, ... instance (by k) is dev, the others test; large: {low}_large_00 "
                     "dev, {low}_large_01 test, the others only in the `large` split (a large episode's adaptation "
                     "yardstick takes ~15 s); quick: the first dev instances of the smaller classes")

J2_SPLITS = Splits(
    dev=numbered("j2", small=(0, 3, 6, 9), medium=(0, 3, 6), large=(0,)),
    test=numbered("j2", small=(1, 2, 4, 5, 7, 8, 10, 11), medium=(1, 2, 4, 5, 7), large=(1,)),
    quick=numbered("j2", small=(0, 3), medium=(0,)),
    description=_HEAVY_SPLIT_RULE.format(low="j2"),
)

J3_SPLITS = Splits(
    dev=numbered("j3", small=(0, 3, 6), medium=(0, 3), large=(0, 3)),
    test=numbered("j3", small=(1, 2, 4, 5, 7), medium=(1, 2, 4, 5), large=(1, 2, 4, 5)),
    quick=numbered("j3", small=(0, 3), medium=(0,)),
    description=_VARIANT_SPLIT_RULE.format(low="j3"),
)

J4_SPLITS = Splits(
    dev=numbered("j4", small=(0, 3, 6), medium=(0, 3), large=(0,)),
    test=numbered("j4", small=(1, 2, 4, 5, 7), medium=(1, 2, 4, 5), large=(1,)),
    quick=numbered("j4", small=(0, 3), medium=(0,)),
    description=_HEAVY_SPLIT_RULE.format(low="j4"),
)


def _variant(problem: str, title: str, env: str, upstream_keys: tuple[str, ...], mark: str,
             splits: Splits) -> ProblemSpec:
    low = problem.lower()
    return ProblemSpec(
        problem=problem, title=title, package=__package__, env=env, names=f"variants.formats:list_{low}",
        load=f"variants.formats:load_{low}", generate=f"variants.generator:generate_{low}",
        check="variants.checker:check", reference="variants.references:reference", viewer="variants.render:VIEWER",
        upstream=f"variants.formats:convert_{low}", upstream_keys=upstream_keys, upstream_marks=(mark,),
        vector_env=f"variants.vector_env:{problem}VectorEnv", heuristics=(_REPLANNER, *_VARIANT_RULES),
        disruptions=problem != "J3", idle_plan=False, splits=splits, docs="docs/jobshop.md", tests="tests/jobshop",
        reference_attack="variants.oracle:attack_reference",
        probe_replanners=("variants.heuristics:EarliestStart", "variants.heuristics:GapFillingReplanner"),
        name_fields=(), kept_names=(problem, "machines", "jobs", "machine"),
    )


J2 = _variant("J2", "job-shop scheduling with a disruption", "variants.env_disruptions:DisruptedShopEnv",
              ("base_instance", "disruptions"), "base_instance", J2_SPLITS)
J3 = _variant("J3", "job-shop scheduling at 200 x 50, with recirculation", "variants.env:ShopEnv",
              ("processing_times",), "processing_times", J3_SPLITS)
J4 = _variant("J4", "job-shop scheduling at 200 x 50 with disruptions", "variants.env_disruptions:J4Env",
              ("processing_times", "disruptions"), "processing_times",
              J4_SPLITS)

SPECS = (P11, J2, J3, J4)
