"""`replaylab replay`: one recording replayed, the run printed with its recomputed results."""

import dataclasses
import sys

from replaylab.agents import recording as recording_io
from replaylab.agents.live import how_it_ended
from replaylab.agents.replay import DEFAULT_TOLERANCE, ReplayMismatch, replay
from replaylab.cli.common import OK, REFUSED, add_verb, print_json, tolerance
from replaylab.display import print_step
from replaylab.lessons import count_calls, counted, registry, submitted


def add_parser(subparsers):
    sub = add_verb(subparsers, "replay", cmd_replay, "replay one recording and print the run with recomputed results")
    sub.add_argument("recording", metavar="RECORDING")
    sub.add_argument("--tolerance", type=tolerance, default=DEFAULT_TOLERANCE, help="relative and absolute (default 1e-6)")


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
        print_json(recording_io.to_data(replayed))
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
