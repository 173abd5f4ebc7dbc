"""Where the parts of REALM P6 and P9 (Thanksgiving dinner, without and with flight delays) live."""

from crab_gym.envs.realm.common.problem_spec import NamedHeuristic, ProblemSpec

GREEDY = NamedHeuristic("thanksgiving_greedy", "heuristics:greedy_action",
                        "fetch the earliest flights first, then cook the longest remaining chain first", style="action")

P6 = ProblemSpec(
    problem="P6", title="Thanksgiving dinner", package=__package__,
    env="env:ThanksgivingEnv", names="formats:shipped_p6_names", load="formats:load_p6",
    generate="generator:generate_p6", check="check:check", reference="references:p6_reference", viewer="render:VIEWER",
    upstream="formats:from_upstream", upstream_keys=("cooking_tasks", "family_members"),
    upstream_marks=("cooking_tasks", "family_members"),
    heuristics=(GREEDY,), multiagent=True, docs="docs/thanksgiving.md", tests="tests/thanksgiving",
)

P9 = ProblemSpec(
    problem="P9", title="Thanksgiving dinner with flight delays", package=__package__,
    env="env_delays:ThanksgivingDelaysEnv", names="formats:shipped_p9_names", load="formats:load_p9",
    generate="generator:generate_p9", check="check:check", reference="references:p9_reference", viewer="render:VIEWER",
    upstream="formats:from_upstream", upstream_keys=("cooking_tasks", "family_members", "disruptions"),
    upstream_marks=("cooking_tasks", "family_members"),
    heuristics=(GREEDY,), multiagent=True, disruptions=True, docs="docs/thanksgiving.md", tests="tests/thanksgiving",
)

SPECS = (P6, P9)
