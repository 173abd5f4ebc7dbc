"""Where the parts of REALM P2 (multi-group campus tours) live: the problem's record in the index."""

from crab_gym.envs.realm.common.problem_spec import NamedHeuristic, ProblemSpec

P2 = ProblemSpec(
    problem="P2", title="multi-group campus tours", package=__package__,
    env="env:GroupToursEnv", names="formats:shipped_p2_names", load="formats:load_p2",
    generate="generator:generate_p2", check="check:check", reference="references:reference_p2", viewer="render:VIEWER",
    upstream="formats:from_upstream_p2", upstream_keys=("visitor_groups", "tour_guides"),
    upstream_marks=("visitor_groups", "tour_guides"),
    heuristics=(NamedHeuristic("p2_earliest_start", "heuristics:EarliestStartPolicy",
                               "earliest-preferred group first, to the guide who can start it soonest"),),
    multiagent=True, docs="docs/group_tours.md", tests="tests/group_tours",
)

SPECS = (P2,)
