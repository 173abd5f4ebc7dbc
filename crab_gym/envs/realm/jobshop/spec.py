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

SPECS = (P11,)
