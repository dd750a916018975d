"""`replaylab record`: a new run, authored (the messages of a file), scripted or from a provider."""

import os
import sys

from replaylab.agents import clients
from replaylab.agents import recording as recording_io
from replaylab.cli.common import OK, add_verb, print_json
from replaylab.display import print_step
from replaylab.recorder import prepare, record_new


def add_parser(subparsers):
    recordable = clients.providers()
    recordable = {name: p for name, p in recordable.items() if p.unattended or p.takes_file}
    models = "; ".join(
        f"{name}: {', '.join(p.models) if p.models else 'any model its server knows'}"
        + (f" (default {p.default_model})" if p.default_model else "")
        for name, p in recordable.items() if p.unattended
    )
    sub = add_verb(subparsers, "record", cmd_record,
                   "record a new run (authored: the messages of --from FILE; scripted: a built-in program)")
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


def _resumed(partial, messages):
    """Say, before the kept messages are shown again, that the run goes on from an unfinished one."""
    print(f"replaylab: continuing the unfinished run kept in {recording_io.printable(str(partial))}: its {messages} "
          f"messages replay as recorded, and the provider is asked from message {messages + 1}", file=sys.stderr, flush=True)


def cmd_record(args):
    request, path = prepare(
        args.lesson, args.provider, model=args.model, seed=args.seed, variant=args.variant, instance=args.instance,
        group=args.group, run=args.run, out=args.out, source=args.source, base_url=args.base_url, timeout=args.timeout,
        max_retries=args.max_retries, max_tokens_per_run=args.max_tokens_per_run, max_seconds_per_run=args.max_seconds_per_run,
    )
    printer = _printer(args.json)
    transcript = record_new(request, path, on_step=printer, on_resume=_resumed)
    state = "finished" if transcript.finished else (
        f"stopped by {transcript.stopped_by['limit']}" if transcript.stopped_by else "not finished")
    ended = recording_io.load(path).ended  # why the run ended early, when a message could not be recorded
    line = f"wrote {path} ({len(transcript.steps)} messages, {state}{': ' + ended if ended else ''})"
    try:
        if printer.gone[0]:
            raise BrokenPipeError
        if args.json:
            print_json({"written": str(path), "finished": transcript.finished, "stopped_by": transcript.stopped_by,
                        "steps": len(transcript.steps)})
        else:
            print(line)
        sys.stdout.flush()
    except BrokenPipeError:  # the run is on disk: say so where it is still read
        _stdout_gone()
        print(f"replaylab: stdout was closed by its reader; the run was recorded: {line}", file=sys.stderr)
    return OK
