"""`replaylab campaign`: its options and its work are replaylab.campaign_command's; it runs in the project."""

from replaylab.cli.common import add_verb, in_project


def add_parser(subparsers):
    sub = add_verb(subparsers, "campaign", cmd_campaign, "record, replay, judge and compare models on lessons (Snakemake's campaign "
                   "target); run again, it records only what is missing")
    from replaylab.campaign_command import add_arguments

    add_arguments(sub)


def cmd_campaign(args):
    from replaylab import campaign_command

    in_project(args, "config")
    return campaign_command.command(args)
