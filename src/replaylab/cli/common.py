"""What the verbs of the command line share: the exit codes, printing JSON, the option types, the
project's folder, and the checks of a run recorded as it happens (`session` and `mcp`)."""

import argparse
import json
import math
import os
from pathlib import Path

from replaylab import project
from replaylab.agents import recording as recording_io
from replaylab.agents.clients import load_provider
from replaylab.errors import InvalidInput
from replaylab.lessons import registry
from replaylab.recorder import ALREADY_THERE, chosen_variant, live_path

OK, UNEXPECTED, INVALID, REFUSED = 0, 1, 2, 3

MODEL_NAME_MAX = 200
DECLARED_HOW = " The model's name was declared with --model by whoever ran it; replaylab did not verify it."
MAX_COUNT = 1_000_000  # runs `generate` writes at once; the runs are planned in memory first


def add_verb(subparsers, name, function, help_text, **options):
    """A verb's parser: its help text (also its description), --json, and `function`, its handler."""
    sub = subparsers.add_parser(name, help=help_text, description=help_text, **options)
    sub.add_argument("--json", action="store_true", help="machine-readable output")
    sub.set_defaults(function=function)
    return sub


def print_json(data):
    print(json.dumps(data, indent=2, ensure_ascii=False, allow_nan=False, default=str))


def tolerance(text):
    """A tolerance option: a finite number of at least 0."""
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and value >= 0):
        raise argparse.ArgumentTypeError(f"{text!r} is not a finite number of at least 0")
    return value


def count(text):
    """A number of runs: a whole number of at least 1, at most MAX_COUNT."""
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number of at least 1")
    if value > MAX_COUNT:
        raise argparse.ArgumentTypeError(f"{text!r} is more than {MAX_COUNT} runs")
    return value


def in_project(args, *paths, required=True, chdir=True):
    """The project's folder (replaylab.project), wherever the command was started (None when there
    is none and it is not `required`). With `chdir` (a command that starts Snakemake there), the
    command runs in it: the paths the user gave (`args.<name>` for each of `paths`, when set) are
    read from where they were given."""
    root = project.find()
    if root is None:
        if required:
            raise InvalidInput(f"no replaylab project in {os.getcwd()} or above it (a folder with {project.SNAKEFILE} and "
                               f"{project.CONFIG}): run it in one, or set {project.VARIABLE}")
        return None
    if not chdir or Path.cwd().resolve() == root:
        return root
    for name in paths:  # given from elsewhere: read where they were given
        value = getattr(args, name, None)
        if value:
            setattr(args, name, str(Path(value).resolve()))
    os.chdir(root)
    return root


def check_declared_model(name):
    """A model name given with --model: printable text of at most MODEL_NAME_MAX characters."""
    if not name or not name.strip() or not name.isprintable() or len(name) > MODEL_NAME_MAX:
        raise InvalidInput(
            f"--model: {name[:60]!r} is not a model name: printable text of 1 to {MODEL_NAME_MAX} characters"
        )
    return name


def live_target(args, default_run):
    """(variant, run name, path, instance id) of a run recorded as it happens (session, mcp): the
    instance, variant, run name, group, model and path are all checked before the agent's first
    message, and a recording already at the path is refused. `default_run` None: the name is chosen
    when it is claimed (mcp), and the path is None then."""
    lesson = registry.lesson(args.lesson)
    v, instance = chosen_variant(lesson, args.instance, args.variant)
    name = args.run or (Path(args.out).stem if args.out else default_run)
    if name is not None:
        recording_io.check_run_name(name, "--run")
    if args.out and Path(args.out).name != f"{name}.json":
        raise InvalidInput(f"--out {args.out}: the file name must be the run's name, {name}.json (--out ends in RUN.json)")
    if not recording_io.RUN_NAME.fullmatch(args.group) or len(args.group) > recording_io.RUN_NAME_MAX:
        raise InvalidInput(
            f"--group: {args.group!r} is not a group name: letters, digits, '_', '.' and '-', starting with a "
            f"letter or digit, at most {recording_io.RUN_NAME_MAX} characters"
        )
    if args.model is not None:
        check_declared_model(args.model)
    if name is None:
        return v, None, None, instance
    path = live_path(args.lesson, name, args.out, getattr(args, "runs", None) or "results/live")
    if os.path.lexists(path):
        raise InvalidInput(f"{path}: {ALREADY_THERE}")
    _writable_folder(path)
    return v, name, path, instance


def _writable_folder(path):
    """Refuse a path whose folder cannot be made."""
    folder = next((p for p in path.parents if os.path.lexists(p)), None)
    if folder is not None and not folder.is_dir():
        raise InvalidInput(f"{path}: cannot write the recording: {folder} is not a folder")


def start_live_run(path, start):
    """The recording, claimed (created) before the agent's first message by `start()`: the path is
    claimed, or one line."""
    try:
        return start()
    except FileExistsError as error:
        if error.errno is None:  # every default name of this second is taken
            raise InvalidInput(str(error)) from None
        raise InvalidInput(f"{path}: {ALREADY_THERE}") from None
    except OSError as error:
        raise InvalidInput(f"{path}: cannot write the recording: {error.strerror or error}") from None


def live_provenance(args, kind, model, how):
    provider = load_provider(kind)
    if args.model:
        return recording_io.provenance(provider.kind, args.model, how + DECLARED_HOW, model_declared=True, provider=provider.name)
    return recording_io.provenance(provider.kind, model, how, provider=provider.name)
