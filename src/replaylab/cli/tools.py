"""`replaylab tools`: a lesson's allowlists, as the model sees them."""

from replaylab.cli.common import OK, add_verb, print_json
from replaylab.lessons import registry


def add_parser(subparsers):
    sub = add_verb(subparsers, "tools", cmd_tools, "print the allowlist(s) of a lesson as the model sees them")
    sub.add_argument("lesson", metavar="LESSON", help=", ".join(registry.names()))


def cmd_tools(args):
    from replaylab.pipeline import allowlists

    specs = allowlists(args.lesson)
    if args.json:
        print_json(specs)
        return OK
    for name, spec in specs.items():
        budget = f", budget {spec['budget']} experiments" if spec["budget"] else ""
        print(
            f"{args.lesson} / {name}: at most {spec['max_steps']} messages, "
            f"{spec['max_calls_per_message']} tool calls per message{budget}"
        )
        for tool in spec["tools"]:
            required = tool["parameters"]["required"]
            parameters = [
                parameter_text(pname, p) + ("" if pname in required else " (optional)")
                for pname, p in tool["parameters"]["properties"].items()
            ]
            print(f"  {tool['name']}({', '.join(parameters)}): {tool['description']}")
    return OK


def parameter_text(name, spec):
    """One parameter of a tool's schema, as `replaylab tools` prints it: its kind and bounds."""
    if "enum" in spec:
        return f"{name} in {{{', '.join(spec['enum'])}}}"
    if spec["type"] == "array":
        return f"{name} list of {{{', '.join(spec['items']['enum'])}}}"
    if spec["type"] == "string":
        return f"{name} text of at most {spec['maxLength']} characters"
    kind = "integer" if spec["type"] == "integer" else "number"
    return f"{name} {kind} {spec['minimum']:g}..{spec['maximum']:g}"
