"""Where the parts of REALM P7 (disaster relief) live: the problem's record in the index."""

from crab_gym.envs.realm.common.problem_spec import NamedHeuristic, ProblemSpec

P7 = ProblemSpec(
    problem="P7", title="disaster relief", package=__package__,
    env="env:DisasterReliefEnv", names="formats:shipped_p7_names", load="formats:load_p7",
    generate="generator:generate_p7", check="check:check", reference="references:reference_p7", viewer="render:VIEWER",
    upstream="formats:from_upstream_p7", upstream_keys=("regions", "resources"),
    upstream_marks=("resources",),
    heuristics=(NamedHeuristic("p7_greedy", "heuristics:GreedyReliefPolicy",
                               "each free vehicle sends the load that earns most severity-weighted need met now"),),
    multiagent=True, disruptions=True, docs="docs/disaster_relief.md", tests="tests/disaster_relief",
)

SPECS = (P7,)
