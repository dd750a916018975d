"""`replaylab tasks`: the instances of the lessons' families, never an answer."""

from replaylab.cli.common import OK, add_verb, print_json
from replaylab.lessons import registry


def add_parser(subparsers):
    sub = add_verb(subparsers, "tasks", cmd_tasks,
                   "list the instances of the lessons' families (id, difficulty, variants, parameters; never an answer)")
    sub.add_argument("lesson", metavar="LESSON", nargs="?", help=f"one of {', '.join(registry.names())} (default: every lesson)")


def listed_instances(lesson):
    """What `replaylab tasks` says of each instance of a lesson: what an agent may read (its task
    text states the same numbers), never the build's answer."""
    return [
        {"lesson": lesson.name, "instance": i.id, "difficulty": i.difficulty, "seed": i.seed,
         "variants": list(lesson.instance_variants(i.id)), "parameters": i.parameters}
        for i in lesson.instances.values()
    ]


def cmd_tasks(args):
    lessons = [registry.lesson(args.lesson)] if args.lesson else registry.lessons()
    listed = [item for lesson in lessons for item in listed_instances(lesson)]
    if args.json:
        print_json(listed)
        return OK
    for item in listed:
        seed = " (the seeds' own question)" if item["seed"] else ""
        parameters = ", ".join(f"{k} {v}" for k, v in item["parameters"].items())
        print(f"{item['instance']}  {item['difficulty']:<6}  variants {', '.join(item['variants'])}"
              f"{'; ' + parameters if parameters else ''}{seed}")
    counts = {lesson.name: len(lesson.instances) for lesson in lessons}
    print(f"{sum(counts.values())} instances: " + ", ".join(f"{n} of {name}" for name, n in counts.items()))
    return OK
