"""Where the parts of REALM P5 and P8 (wedding logistics, without and with disruptions) live."""

from crab_gym.envs.realm.common.problem_spec import NamedHeuristic, ProblemSpec
from crab_gym.envs.realm.common.splits import Splits, numbered

GREEDY = NamedHeuristic("wedding_greedy", "heuristics:greedy_action",
                        "each free vehicle to the legal guest or errand it can begin soonest, unloading at the venue",
                        style="action")

#: The instance fields that hold names (renamed by ``obfuscate=True``), the same in both problems.
NAME_FIELDS = ("places[]", "guests[].guest_id", "errands[].errand_id", "vehicles[].vehicle_id")

P5_SPLITS = Splits(
    dev=numbered("p5", small=(0, 3, 6), medium=(0, 3, 6), large=(0, 3)),
    test=numbered("p5", small=(1, 2, 4, 5), medium=(1, 2, 4, 5), large=(1, 2, 4, 5)),
    quick=numbered("p5", small=(0, 3), medium=(0,)),
    description=("p5_<size>_<k> is generate_p5(size, seed=k); in each size class"
                 " the 1st, 4th, 7th, ... instance (by k) is dev, the others test; quick: the first dev instances of the smaller classes"),
)

P5 = ProblemSpec(
    problem="P5", title="wedding logistics", package=__package__,
    env="env:WeddingEnv", names="formats:shipped_p5_names", load="formats:load_p5",
    generate="generator:generate_p5", check="checker:check", reference="references:p5_reference", viewer="render:VIEWER",
    upstream="formats:from_upstream_p5", upstream_keys=("guests", "errands", "travel_times"),
    upstream_marks=("travel_times",),
    heuristics=(GREEDY,), multiagent=True, splits=P5_SPLITS, docs="docs/wedding.md", tests="tests/wedding",
    name_fields=NAME_FIELDS,
)

P8_SPLITS = Splits(
    dev=numbered("p8", small=(0, 3, 6), medium=(0, 3, 6), large=(0, 3)),
    test=numbered("p8", small=(1, 2, 4, 5), medium=(1, 2, 4, 5), large=(1, 2, 4, 5)),
    quick=numbered("p8", small=(0, 3), medium=(0,)),
    description=("p8_<size>_<k> is generate_p8(size, seed=k, draw=d); in each size class"
                 " the 1st, 4th, 7th, ... instance (by k) is dev, the others test; quick: the first dev instances of the smaller classes"),
)

P8 = ProblemSpec(
    problem="P8", title="wedding logistics with disruptions", package=__package__,
    env="env_disruptions:WeddingDisruptionEnv", names="formats:shipped_p8_names", load="formats:load_p8",
    generate="generator:generate_p8", check="checker:check", reference="references:p8_reference", viewer="render:VIEWER",
    upstream="formats:from_upstream_p8", upstream_keys=("guests", "errands", "travel_times", "disruptions"),
    upstream_marks=("travel_times",),
    heuristics=(GREEDY,), multiagent=True, disruptions=True, splits=P8_SPLITS, docs="docs/wedding.md", tests="tests/wedding",
    name_fields=NAME_FIELDS, kept_names=("traffic_delay", "road_closure"),
)

SPECS = (P5, P8)
