"""`replaylab import-inspect`: the samples of Inspect AI logs brought in as recordings, each replayed first."""

from pathlib import Path

from replaylab.agents import recording as recording_io
from replaylab.cli.common import OK, add_verb, print_json
from replaylab.errors import InvalidInput
from replaylab.lessons import counted

INSPECT_EXTRA = 'needs the inspect extra (inspect-ai): pip install -c constraints.txt -e ".[inspect]", or use .venv-inspect (make inspect-env)'


def add_parser(subparsers):
    sub = add_verb(subparsers, "import-inspect", cmd_import_inspect,
                   "bring the samples of Inspect AI logs (inspect eval replaylab/LESSON) in as recordings, each replayed first")
    sub.add_argument("logs", nargs="+", metavar="LOG", help="Inspect logs (.eval or .json) of replaylab's tasks")
    sub.add_argument("--out", help="folder: the runs go to OUT/LESSON/<run>.json (a run_folders entry); never over an existing file")
    sub.add_argument("--campaign", metavar="NAME",
                     help="instead of --out: into results/campaigns/NAME/recordings, named as that campaign names its runs "
                     "(model, variant, epoch as index), for a campaign with provider inspect_ai")


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
    outcome = import_logs(args.logs, out, campaign=args.campaign)
    if args.json:
        print_json({"written": [str(p) for p in outcome.written], "logs": outcome.logs, "already": outcome.already})
    else:
        for path in outcome.written:
            print(f"wrote {recording_io.printable(str(path))}")
        skipped = len(args.logs) - outcome.logs
        print(f"imported {counted(len(outcome.written), 'run', 'runs')} from {counted(outcome.logs, 'Inspect log', 'Inspect logs')}"
              + (f" ({skipped} skipped)" if skipped else "") + (f", {outcome.already} already there" if outcome.already else "")
              + "; each replayed through the current code first")
    return OK
