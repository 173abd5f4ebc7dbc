"""Where the parts of REALM P6 and P9 (Thanksgiving dinner, without and with flight delays) live."""

from crab_gym.envs.realm.common.problem_spec import NamedHeuristic, ProblemSpec
from crab_gym.envs.realm.common.splits import Splits, numbered

GREEDY = NamedHeuristic("thanksgiving_greedy", "heuristics:greedy_action",
                        "fetch the earliest flights first, then cook the longest remaining chain first", style="action")

#: The instance fields that hold names (renamed by ``obfuscate=True``), the same in both problems.
NAME_FIELDS = ("cars[].car_id", "cars[].start", "members[].member_id", "tasks[].task_id", "flights[].flight_id")

P6_SPLITS = Splits(
    dev=numbered("p6", small=(0, 3, 6), medium=(0, 3, 6), large=(0, 3)),
    test=numbered("p6", small=(1, 2, 4, 5), medium=(1, 2, 4, 5), large=(1, 2, 4, 5)),
    quick=numbered("p6", small=(0, 3), medium=(0,)),
    description=("p6_<size>_<k> is generate_p6(size, seed=k); in each size class"
                 " the 1st, 4th, 7th, ... instance (by k) is dev, the others test; quick: the first dev instances of the smaller classes"),
)

P6 = ProblemSpec(
    problem="P6", title="Thanksgiving dinner", package=__package__,
    env="env:ThanksgivingEnv", names="formats:shipped_p6_names", load="formats:load_p6",
    generate="generator:generate_p6", check="checker:check", reference="references:p6_reference", viewer="render:VIEWER",
    upstream="formats:from_upstream", upstream_keys=("cooking_tasks", "family_members"),
    upstream_marks=("cooking_tasks", "family_members"),
    heuristics=(GREEDY,), multiagent=True, splits=P6_SPLITS, docs="docs/thanksgiving.md", tests="tests/thanksgiving",
    name_fields=NAME_FIELDS,
)

P9_SPLITS = Splits(
    dev=numbered("p9", small=(0, 3, 6), medium=(0, 3, 6), large=(0, 3)),
    test=numbered("p9", small=(1, 2, 4, 5), medium=(1, 2, 4, 5), large=(1, 2, 4, 5)),
    quick=numbered("p9", small=(0, 3), medium=(0,)),
    description=("p9_<size>_<k> is generate_p9(size, seed=k); in each size class"
                 " the 1st, 4th, 7th, ... instance (by k) is dev, the others test; quick: the first dev instances of the smaller classes"),
)

P9 = ProblemSpec(
    problem="P9", title="Thanksgiving dinner with flight delays", package=__package__,
    env="env_delays:ThanksgivingDelaysEnv", names="formats:shipped_p9_names", load="formats:load_p9",
    generate="generator:generate_p9", check="checker:check", reference="references:p9_reference", viewer="render:VIEWER",
    upstream="formats:from_upstream", upstream_keys=("cooking_tasks", "family_members", "disruptions"),
    upstream_marks=("cooking_tasks", "family_members"),
    heuristics=(GREEDY,), multiagent=True, disruptions=True, splits=P9_SPLITS, docs="docs/thanksgiving.md", tests="tests/thanksgiving",
    name_fields=NAME_FIELDS, kept_names=("flight_delay",),
)

SPECS = (P6, P9)
