"""`replaylab doctor`: what is needed, checked (versions, plugins, the key, the configuration, the recordings)."""

from replaylab.cli.common import OK, UNEXPECTED, add_verb, in_project, print_json


def add_parser(subparsers):
    sub = add_verb(subparsers, "doctor", cmd_doctor, "versions, optional plugins, the key (set, and accepted by GET /models; never its value), "
                   "the campaign's models and configuration, recordings replay")
    sub.add_argument("--recordings", help="the folder of committed recordings (default: the project's recordings/)")


def cmd_doctor(args):
    from replaylab.doctor import diagnose

    root = in_project(args, required=False, chdir=False)  # none: the configuration of this folder, if any
    rows = diagnose(args.recordings, root)
    failed = [what for what, ok, _ in rows if ok is False]
    if args.json:
        print_json({"ok": not failed, "checks": [{"what": w, "ok": ok, "detail": d} for w, ok, d in rows]})
    else:
        for what, ok, detail in rows:
            mark = {True: "ok  ", False: "FAIL", None: "    "}[ok]
            print(f"{mark} {what}: {detail}")
        print("everything needed works" if not failed else f"{len(failed)} problem(s): {', '.join(failed)}")
    return OK if not failed else UNEXPECTED
