"""Where the parts of REALM P11 (job-shop scheduling) live: the problem's record in the index."""

from crab_gym.envs.realm.common.problem_spec import NamedHeuristic, ProblemSpec

#: The dispatching rules, each a policy of its own (``crab-gym run --policy mwkr``); MWKR is
#: the greedy the scoring check ranks.
RULES = (
    ("SPT", "shortest processing time of the next operation"),
    ("LPT", "longest processing time of the next operation"),
    ("MWKR", "most work remaining"),
    ("MOR", "most operations remaining"),
    ("FIFO", "earliest ready time of the next operation"),
)

P11 = ProblemSpec(
    problem="P11", title="job-shop scheduling", package=__package__,
    env="env:JobShopEnv", names="library:list_jssp_instances", load="library:load_jssp_instance",
    generate="generator:generate_p11", check="check:check", reference="references:yardstick", viewer="render:VIEWER",
    vector_env="vector_env:JobShopVectorEnv",
    heuristics=tuple(
        NamedHeuristic(name.lower(), f"heuristics:{name}", f"{name} dispatching rule: {what}",
                       greedy=name == "MWKR", style="fixed")
        for name, what in RULES
    ),
    docs="docs/jobshop.md", tests="tests/jobshop",
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


def _variant(problem: str, title: str, env: str, upstream_keys: tuple[str, ...], mark: str) -> ProblemSpec:
    low = problem.lower()
    return ProblemSpec(
        problem=problem, title=title, package=__package__, env=env, names=f"variants.formats:list_{low}",
        load=f"variants.formats:load_{low}", generate=f"variants.generator:generate_{low}",
        check="variants.checker:check", reference="variants.references:reference", viewer="variants.render:VIEWER",
        upstream=f"variants.formats:convert_{low}", upstream_keys=upstream_keys, upstream_marks=(mark,),
        vector_env=f"variants.vector_env:{problem}VectorEnv", heuristics=(_REPLANNER, *_VARIANT_RULES),
        disruptions=problem != "J3", docs="docs/jobshop.md", tests="tests/jobshop",
        reference_attack="variants.oracle:attack_reference",
        probe_replanners=("variants.heuristics:EarliestStart", "variants.heuristics:GapFillingReplanner"),
    )


J2 = _variant("J2", "job-shop scheduling with a disruption", "variants.env_disruptions:DisruptedShopEnv",
              ("base_instance", "disruptions"), "base_instance")
J3 = _variant("J3", "job-shop scheduling at 200 x 50, with recirculation", "variants.env:ShopEnv",
              ("processing_times",), "processing_times")
J4 = _variant("J4", "job-shop scheduling at 200 x 50 with disruptions", "variants.env_disruptions:J4Env",
              ("processing_times", "disruptions"), "processing_times")

SPECS = (P11, J2, J3, J4)
