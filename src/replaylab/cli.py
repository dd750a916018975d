"""The `replaylab` command. Exit codes: 0 ok, 1 unexpected error, 2 invalid input, 3 refused or
mismatched, 130 interrupted (Ctrl-C)."""

import argparse
import dataclasses
import functools
import json
import math
import os
import signal
import sys
from pathlib import Path

from replaylab import __version__, project, selection
from replaylab.agents import clients
from replaylab.agents import recording as recording_io
from replaylab.agents.clients import load_provider
from replaylab.agents.live import how_it_ended
from replaylab.agents.messages import ToolCall
from replaylab.agents.replay import DEFAULT_TOLERANCE, ReplayMismatch, replay
from replaylab.display import print_step
from replaylab.errors import InvalidInput, ReplaylabError
from replaylab.lessons import count_calls, counted, registry, submitted
from replaylab.recorder import (
    ALREADY_THERE,
    chosen_variant,
    live_path,
    prepare,
    record_new,
)

OK, UNEXPECTED, INVALID, REFUSED = 0, 1, 2, 3


class Parser(argparse.ArgumentParser):
    """argparse, with a wrong option or value said on one line (exit code 2), without the usage."""

    def error(self, message):
        print(f"{self.prog}: {recording_io.printable(message)} (see {self.prog} --help)", file=sys.stderr)
        sys.exit(INVALID)


def tolerance(text):
    """A tolerance option: a finite number of at least 0."""
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and value >= 0):
        raise argparse.ArgumentTypeError(f"{text!r} is not a finite number of at least 0")
    return value


MODEL_NAME_MAX = 200
DECLARED_HOW = " The model's name was declared with --model by whoever ran it; replaylab did not verify it."
MAX_COUNT = 1_000_000  # runs `generate` writes at once; the runs are planned in memory first


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


def _print_json(data):
    print(json.dumps(data, indent=2, ensure_ascii=False, allow_nan=False, default=str))


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
        _print_json(listed)
        return OK
    for item in listed:
        seed = " (the seeds' own question)" if item["seed"] else ""
        parameters = ", ".join(f"{k} {v}" for k, v in item["parameters"].items())
        print(f"{item['instance']}  {item['difficulty']:<6}  variants {', '.join(item['variants'])}"
              f"{'; ' + parameters if parameters else ''}{seed}")
    counts = {lesson.name: len(lesson.instances) for lesson in lessons}
    print(f"{sum(counts.values())} instances: " + ", ".join(f"{n} of {name}" for name, n in counts.items()))
    return OK


def cmd_tools(args):
    from replaylab.pipeline import allowlists

    specs = allowlists(args.lesson)
    if args.json:
        _print_json(specs)
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


def cmd_call(args):
    # read as strictly as a recording: no key twice, no NaN, bounded nesting and integers
    arguments = recording_io.parse_json(args.arguments, "the arguments")
    result = registry.lesson(args.lesson).all_tools().dispatch(ToolCall("1", args.tool, arguments))
    _print_json({"ok": result.ok, "content": result.content})
    return OK if result.ok else REFUSED


def _load(path):
    from replaylab.inputs import check_recording

    return check_recording(path)


def cmd_replay(args):
    run = _load(args.recording)
    try:
        transcript = replay(run, registry.lesson(run.lesson).variant_of(run), args.tolerance)
    except ReplayMismatch as mismatch:
        print(f"replaylab: {recording_io.printable(f'{args.recording}: {mismatch}')}", file=sys.stderr)
        return REFUSED
    replayed = dataclasses.replace(run, transcript=transcript)
    if args.json:
        _print_json(recording_io.to_data(replayed))
        return OK
    numbers = count_calls(transcript)
    calls, ran = numbers["calls"], numbers["ran"]
    print(f"{run.lesson}/{run.run} ({run.label}; messages by: {run.model})")
    print(
        f"replayed {counted(calls, 'call', 'calls')} ({ran} ran, {calls - ran} refused): every result agrees "
        f"with the recording within {args.tolerance:g}"
    )
    for number, step in enumerate(transcript.steps, start=1):
        print_step(number, step)
    lesson = registry.lesson(run.lesson)
    v = lesson.variant_of(run)
    answered = submitted(replayed, v)[0] is not None
    print(how_it_ended(run.provenance["kind"], transcript.finished, len(transcript.steps), v.max_steps, transcript.stopped_by,
                       answered, run.ended))
    print(f"decided by the build: {recording_io.printable(lesson.verdict_line(replayed))}")
    return OK


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


def cmd_session(args):
    from replaylab.agents.clients.interactive import HOW, MODEL
    from replaylab.agents.live import LiveRun
    from replaylab.session import run_session

    v, name, path, instance = live_target(args, "session")
    provenance = live_provenance(args, "interactive", MODEL, HOW)
    live = start_live_run(path, lambda: LiveRun(args.lesson, name, v, args.group, provenance, path, instance))
    signum = run_session(live)
    if signum is not None:
        print(f"replaylab: stopped by {signal.Signals(signum).name}; wrote {path} ({len(live.steps)} message(s); "
              f"{live.ended})", file=sys.stderr)
        return 128 + signum
    print(f"wrote {path} ({len(live.steps)} message(s); {live.ended})", file=sys.stderr)
    return OK


def cmd_mcp(args):
    from replaylab import mcp_server

    try:
        if args.runs and args.out:
            raise InvalidInput("--runs and --out: give one of them (--out names the file, --runs the folder of runs)")
        folder = Path(args.out).parent if args.out else Path(args.runs or "results/live") / args.lesson
        v, name, path, instance = live_target(args, None)
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except OSError as error:
            raise InvalidInput(f"{path or folder}: cannot write the recording: {error.strerror or error}") from None
        provenance = live_provenance(args, "mcp", mcp_server.UNDECLARED, mcp_server.HOW)
        live = start_live_run(path or folder, lambda: mcp_server.start(args.lesson, v, args.group, provenance, path, folder,
                                                                      instance))
    except ReplaylabError as error:
        # one line for the person, and the client's first request answered with it (it shows why)
        line = recording_io.printable(str(error))
        print(f"replaylab: {line}", file=sys.stderr)
        sys.stderr.flush()
        mcp_server.refuse(line)
        return INVALID
    # stdout carries the protocol: everything for a person goes to stderr
    print(f"replaylab mcp: serving {args.lesson} / {instance} / {v.name} over stdio; the calls are recorded in {live.path}",
          file=sys.stderr)
    code, line = mcp_server.run(live)
    print(f"replaylab mcp: {line}", file=sys.stderr)
    return code


def _stdout_gone():
    """The reader of stdout went away (`record ... | head -1`): what is printed there from now on
    is dropped, and the run goes on (it is paid for, and recorded)."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())  # the interpreter's last flush of stdout must not fail either
        os.close(devnull)
    except (OSError, ValueError):
        pass


def _printer(as_json):
    """Print each message and its results as they happen (to stderr when stdout carries JSON);
    when stdout's reader is gone, print no more (`_stdout_gone`), and record on."""
    count = [0]
    gone = [False]

    def on_step(step):
        count[0] += 1
        if gone[0]:
            return
        try:
            print_step(count[0], step, sys.stderr if as_json else sys.stdout)
            (sys.stderr if as_json else sys.stdout).flush()
        except BrokenPipeError:
            gone[0] = True
            _stdout_gone()

    on_step.gone = gone
    return on_step


def cmd_record(args):
    request, path = prepare(
        args.lesson, args.provider, model=args.model, seed=args.seed, variant=args.variant, instance=args.instance,
        group=args.group, run=args.run, out=args.out, source=args.source, base_url=args.base_url, timeout=args.timeout,
        max_retries=args.max_retries, max_tokens_per_run=args.max_tokens_per_run, max_seconds_per_run=args.max_seconds_per_run,
    )
    printer = _printer(args.json)
    transcript = record_new(request, path, on_step=printer)
    state = "finished" if transcript.finished else (
        f"stopped by {transcript.stopped_by['limit']}" if transcript.stopped_by else "not finished")
    ended = recording_io.load(path).ended  # why the run ended early, when a message could not be recorded
    line = f"wrote {path} ({len(transcript.steps)} messages, {state}{': ' + ended if ended else ''})"
    try:
        if printer.gone[0]:
            raise BrokenPipeError
        if args.json:
            _print_json({"written": str(path), "finished": transcript.finished, "stopped_by": transcript.stopped_by,
                         "steps": len(transcript.steps)})
        else:
            print(line)
        sys.stdout.flush()
    except BrokenPipeError:  # the run is on disk: say so where it is still read
        _stdout_gone()
        print(f"replaylab: stdout was closed by its reader; the run was recorded: {line}", file=sys.stderr)
    return OK


def cmd_generate(args):
    from replaylab.generate import generate

    chosen = None if args.instances == selection.SEEDS else selection.select(registry.lesson(args.lesson), args.instances, "--instances")
    written = generate(args.lesson, args.count, args.out, args.first_seed, chosen)
    if args.json:
        _print_json({"written": [str(p) for p in written]})
    else:
        print(f"wrote {len(written)} scripted runs of {args.lesson} into {Path(args.out) / args.lesson}")
    return OK


INSPECT_EXTRA = 'needs the inspect extra (inspect-ai): pip install -c constraints.txt -e ".[inspect]", or use .venv-inspect (make inspect-env)'


def cmd_import_inspect(args):
    if (args.out is None) == (args.campaign is None):
        raise InvalidInput("import-inspect: give either --out FOLDER or --campaign NAME")
    try:
        import inspect_ai  # noqa: F401
    except ModuleNotFoundError:
        raise InvalidInput(f"import-inspect {INSPECT_EXTRA}") from None
    from replaylab.campaign import FOLDER
    from replaylab.inspect_tasks.importer import import_logs

    if args.campaign is not None and not (recording_io.RUN_NAME.fullmatch(args.campaign) and len(args.campaign) <= recording_io.RUN_NAME_MAX):
        raise InvalidInput(f"--campaign: {args.campaign[:60]!r} is not a campaign name (the configuration's campaign.name): "
                           f"letters, digits, '_', '.' and '-', starting with a letter or digit, at most {recording_io.RUN_NAME_MAX}")
    out = Path(FOLDER, args.campaign, "recordings") if args.campaign else Path(args.out)
    written = import_logs(args.logs, out, campaign=args.campaign)
    if args.json:
        _print_json({"written": [str(p) for p in written]})
    else:
        for path in written:
            print(f"wrote {recording_io.printable(str(path))}")
        print(f"imported {counted(len(written), 'run', 'runs')} from {counted(len(args.logs), 'Inspect log', 'Inspect logs')}; "
              "each replayed through the current code first")
    return OK


def cmd_promote(args):
    from replaylab.promote import promote

    lines = promote(args.run_file, args.recordings, args.dry_run, args.tolerance)
    if args.json:
        _print_json({"changes": lines})
    else:
        print("\n".join(lines))
    return OK


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


def cmd_doctor(args):
    from replaylab.doctor import diagnose

    root = in_project(args, required=False, chdir=False)  # none: the configuration of this folder, if any
    rows = diagnose(args.recordings, root)
    failed = [what for what, ok, _ in rows if ok is False]
    if args.json:
        _print_json({"ok": not failed, "checks": [{"what": w, "ok": ok, "detail": d} for w, ok, d in rows]})
    else:
        for what, ok, detail in rows:
            mark = {True: "ok  ", False: "FAIL", None: "    "}[ok]
            print(f"{mark} {what}: {detail}")
        print("everything needed works" if not failed else f"{len(failed)} problem(s): {', '.join(failed)}")
    return OK if not failed else UNEXPECTED


def cmd_campaign(args):
    from replaylab import campaign_command

    in_project(args, "config")
    return campaign_command.command(args)


def cmd_build(args):
    from replaylab.build import build

    lessons = args.lessons or list(registry.names())
    for lesson in lessons:
        registry.lesson(lesson)
    if not Path(args.recordings).is_dir():
        raise InvalidInput(f"--recordings {recording_io.printable(args.recordings)}: not a folder")
    build(lessons, args.recordings, args.results, args.tolerance, progress=(lambda text: None) if args.json else print)
    if args.json:
        _print_json({"results": args.results, "lessons": lessons})
    return OK


def cmd_verify(args):
    from replaylab.verify import verify

    root = in_project(args, chdir=False)
    names = args.campaigns
    if len(names) == 1 and not args.results and ("/" in names[0] or names[0] in (".", "..") or (
            Path(names[0]).is_dir() and not (root / "results" / "campaigns" / names[0]).is_dir())):
        args.results, names = names[0], []  # the earlier form, `verify RESULTS`
    differences, compared = verify(root, args.results, names, args.cores, args.keep,
                                   note=lambda text: print(recording_io.printable(text), file=sys.stderr))
    args.results = args.results or "results"  # the project's, as its lines name it
    if args.json:
        _print_json({"results": args.results, "compared": compared, "differences": differences})
    else:
        for line in differences:
            print(recording_io.printable(line))
        same = "every file is the same" if not differences else f"{len(differences)} differ"
        print(f"replaylab verify: {compared} files of {args.results} rebuilt and compared: {same}", file=sys.stderr)
    return OK if not differences else UNEXPECTED


class SessionHelp(argparse.Action):
    """`session --help`: the help with its worked example, made (from the registry's first lesson)
    only when it is asked for, not at every start of the command."""

    def __init__(self, option_strings, dest, **options):
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, help="show this help message and exit")

    def __call__(self, parser, namespace, values, option_string=None):
        from replaylab.session import help_text

        parser.epilog = help_text()
        parser.print_help()
        parser.exit()


@functools.cache
def parser():
    """Built once per process: argparse's building costs about 10 ms (gettext looks each help text
    up), which a process that calls `main` many times (the fuzz test, a campaign's fork server)
    would pay every time; parsing leaves the parser as it was."""
    main = Parser(prog="replaylab", description=__doc__)
    main.add_argument("--version", action="version", version=f"replaylab {__version__}")
    verbs = main.add_subparsers(dest="verb", required=True, metavar="VERB")

    def verb(name, function, help_text, **options):
        sub = verbs.add_parser(name, help=help_text, description=help_text, **options)
        sub.add_argument("--json", action="store_true", help="machine-readable output")
        sub.set_defaults(function=function)
        return sub

    sub = verb("tasks", cmd_tasks, "list the instances of the lessons' families (id, difficulty, variants, parameters; never an answer)")
    sub.add_argument("lesson", metavar="LESSON", nargs="?", help=f"one of {', '.join(registry.names())} (default: every lesson)")
    sub = verb("tools", cmd_tools, "print the allowlist(s) of a lesson as the model sees them")
    sub.add_argument("lesson", metavar="LESSON", help=", ".join(registry.names()))
    sub = verb("call", cmd_call, "run one tool call through a fresh allowlist with all of a lesson's tools")
    sub.add_argument("lesson", metavar="LESSON")
    sub.add_argument("tool", metavar="TOOL")
    sub.add_argument("arguments", metavar="JSON-ARGUMENTS")
    sub = verb("replay", cmd_replay, "replay one recording and print the run with recomputed results")
    sub.add_argument("recording", metavar="RECORDING")
    sub.add_argument("--tolerance", type=tolerance, default=DEFAULT_TOLERANCE, help="relative and absolute (default 1e-6)")
    sub = verb("session", cmd_session, "record a run typed as JSON lines on stdin (results/live/LESSON/RUN.json); "
               "exit code 130 after Ctrl-C, 143 after SIGTERM, the run recorded as not finished", add_help=False)
    sub.formatter_class = argparse.RawDescriptionHelpFormatter
    sub.add_argument("-h", "--help", action=SessionHelp)
    sub.add_argument("lesson", metavar="LESSON")
    sub.add_argument("--instance", metavar="ID", help="the instance of the lesson's family (default: the seeds' own "
                     "question); `replaylab tasks LESSON` lists them")
    sub.add_argument("--variant", help="the instance's variant (default: its first); see `replaylab tools LESSON`")
    sub.add_argument("--run", help="the run's name (default: session)")
    sub.add_argument("--group", default="live")
    sub.add_argument("--model", help="the model that types the messages, as you declare it (recorded as declared, not verified)")
    sub.add_argument("--out", metavar="PATH/RUN.json",
                     help="the file to write, named after the run: it must end in RUN.json (RUN: --run, else this "
                     "name) and may not exist (default results/live/LESSON/RUN.json)")
    sub = verb("mcp", cmd_mcp, "serve one lesson's variant to an MCP client over stdio, recorded as a run "
               "(results/live/LESSON/RUN.json); exit code 130 after Ctrl-C, 143 after SIGTERM")
    sub.add_argument("lesson", metavar="LESSON")
    sub.add_argument("--instance", metavar="ID", help="the instance of the lesson's family (default: the seeds' own "
                     "question); `replaylab tasks LESSON` lists them")
    sub.add_argument("--variant", help="the instance's variant (default: its first); see `replaylab tools LESSON`")
    sub.add_argument("--run", help="the run's name (default: mcp-DATE-TIME, claimed at each start, -2, -3... when "
                     "taken); a server with no call removes its empty recording")
    sub.add_argument("--group", default="live")
    sub.add_argument("--model", help="the model behind the client, as you declare it (recorded as declared, not verified)")
    sub.add_argument("--runs", metavar="FOLDER",
                     help="the folder of new runs: the run is FOLDER/LESSON/RUN.json (default results/live, from the "
                     "folder the client starts the server in; give an absolute path in a client's configuration)")
    sub.add_argument("--out", metavar="PATH/RUN.json",
                     help="the file to write, named after the run: it must end in RUN.json (RUN: --run, else this "
                     "name) and may not exist (default FOLDER/LESSON/RUN.json)")
    recordable = clients.providers()
    recordable = {name: p for name, p in recordable.items() if p.unattended or p.takes_file}
    models = "; ".join(
        f"{name}: {', '.join(p.models) if p.models else 'any model its server knows'}"
        + (f" (default {p.default_model})" if p.default_model else "")
        for name, p in recordable.items() if p.unattended
    )
    sub = verb("record", cmd_record, "record a new run (authored: the messages of --from FILE; scripted: a built-in program)")
    sub.add_argument("lesson", metavar="LESSON")
    sub.add_argument("--provider", default="scripted", choices=list(recordable),
                     help="who writes the messages (default scripted: a built-in program, no key)")
    sub.add_argument("--model", help=models)
    sub.add_argument("--base-url", help="an OpenAI-compatible server (default: OPENAI_BASE_URL, else OpenAI's)")
    sub.add_argument("--seed", type=int, default=0, help="scripted: the seed of the program")
    sub.add_argument("--timeout", type=float, help="seconds to wait for one answer of the provider")
    sub.add_argument("--max-retries", type=int, choices=range(0, 21), metavar="N",
                     help="retries of a request that met 408, 409, 429, 5xx, a timeout or a dropped connection")
    sub.add_argument("--max-tokens-per-run", type=int, metavar="N", help="end the run once the provider reports N tokens (off by default)")
    sub.add_argument("--max-seconds-per-run", type=float, metavar="S", help="end the run after S seconds (off by default)")
    sub.add_argument("--from", dest="source", metavar="FILE", help="a recording or a file of messages")
    sub.add_argument("--run", help="the run's name (default: from FILE, else from the provider, model, variant and seed)")
    sub.add_argument("--instance", metavar="ID", help="the instance of the lesson's family (default: from FILE, else the "
                     "seeds' own question); `replaylab tasks LESSON` lists them")
    sub.add_argument("--variant", help="default: from FILE, else the instance's first")
    sub.add_argument("--group", help="default: from FILE, else the provider's ('reference' authored, 'scripted', 'live')")
    sub.add_argument("--out", help="where to write (default results/live/LESSON/RUN.json); never over an existing file")
    sub = verb("generate", cmd_generate, "write N scripted runs of a lesson, varied by seed (for tests and benchmarks)")
    sub.add_argument("lesson", metavar="LESSON")
    sub.add_argument("--count", type=count, required=True, help="how many runs (or groups of runs, one per variant, for a lesson judged per group), at most 1000000")
    sub.add_argument("--out", required=True, help="folder: the runs go to OUT/LESSON/<run>.json")
    sub.add_argument("--first-seed", type=int, default=0)
    sub.add_argument("--instances", type=selection.option, default="seeds", metavar="SELECTION",
                     help="the instances the runs take in turn: seeds (the seeds' own questions, the default), all, or "
                     "a number drawn by seed 0")
    sub = verb("import-inspect", cmd_import_inspect,
               "bring the samples of Inspect AI logs (inspect eval replaylab/LESSON) in as recordings, each replayed first")
    sub.add_argument("logs", nargs="+", metavar="LOG", help="Inspect logs (.eval or .json) of replaylab's tasks")
    sub.add_argument("--out", help="folder: the runs go to OUT/LESSON/<run>.json (a run_folders entry); never over an existing file")
    sub.add_argument("--campaign", metavar="NAME",
                     help="instead of --out: into results/campaigns/NAME/recordings, named as that campaign names its runs "
                     "(model, variant, epoch as index), for a campaign with provider inspect_ai")
    sub = verb("promote", cmd_promote, "show what a new run changes, then move it into recordings/")
    sub.add_argument("run_file", metavar="RUN", help="a recording, e.g. results/live/LESSON/RUN.json")
    sub.add_argument("--recordings", default="recordings", help="the folder of committed recordings")
    sub.add_argument("--dry-run", action="store_true", help="only show what would change")
    sub.add_argument("--tolerance", type=tolerance, default=DEFAULT_TOLERANCE)
    sub = verb("doctor", cmd_doctor, "versions, optional plugins, the key (set, and accepted by GET /models; never its value), "
               "the campaign's models and configuration, recordings replay")
    sub.add_argument("--recordings", help="the folder of committed recordings (default: the project's recordings/)")
    sub = verb("verify", cmd_verify, "build every result again in a temporary folder, with the settings it was built with, "
               "and list each file of RESULTS that differs")
    sub.add_argument("campaigns", nargs="*", metavar="CAMPAIGN",
                     help="the campaigns of RESULTS/campaigns/ to rebuild too (default: every one found)")
    sub.add_argument("--results", metavar="RESULTS", help="the folder of results (default: the project's results/)")
    sub.add_argument("--cores", default="all", help="for Snakemake's rebuild (default all)")
    sub.add_argument("--keep", action="store_true", help="keep the rebuild's folder, and say where")
    sub = verb("campaign", cmd_campaign, "record, replay, judge and compare models on lessons (Snakemake's campaign "
               "target); run again, it records only what is missing")
    from replaylab.campaign_command import add_arguments

    add_arguments(sub)
    sub = verb("build", cmd_build, "compute every result of the lessons in one process, without Snakemake")
    sub.add_argument("lessons", nargs="*", metavar="LESSON")
    sub.add_argument("--recordings", default="recordings")
    sub.add_argument("--results", default="results")
    sub.add_argument("--tolerance", type=tolerance, default=DEFAULT_TOLERANCE)
    return main


def main(argv=None):
    args = parser().parse_args(argv)
    try:
        if hasattr(args, "lesson") and not (args.verb == "tasks" and args.lesson is None):  # tasks: every lesson
            registry.lesson(args.lesson)
        return args.function(args)
    except ReplaylabError as error:  # replaylab's own: one line, and its exit code (2 for input the user can fix)
        print(f"replaylab: {recording_io.printable(str(error))}", file=sys.stderr)
        if isinstance(error, InvalidInput) and args.verb == "session" and args.json:  # its stdout is the agent's
            print(json.dumps({"error": str(error)}, ensure_ascii=True), flush=True)
        return error.exit_code
    except BrokenPipeError:  # the reader (e.g. `head`) went away: not an error of ours
        sys.stderr.close()
        return OK
    except KeyboardInterrupt:
        print("replaylab: interrupted (SIGINT); nothing half-written was kept", file=sys.stderr)
        return 128 + signal.SIGINT
    except Exception as error:  # a bug: one line that says so, and the traceback only on request
        print(f"replaylab: unexpected error, a bug of replaylab (please report it, with the command; REPLAYLAB_DEBUG=1 "
              f"shows the traceback): {type(error).__name__}: {recording_io.printable(str(error))}", file=sys.stderr)
        if "REPLAYLAB_DEBUG" in os.environ:
            raise
        return UNEXPECTED


if __name__ == "__main__":
    sys.exit(main())
