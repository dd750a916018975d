"""`python -m replaylab.inspect_tasks.listing [FILE]`: a task file for `inspect list tasks`.

Inspect lists the `@task` functions of the files it finds by reading their code, never by running
it: replaylab's own tasks (`replaylab/<lesson>`, made from the registry in tasks.py) are tasks no
listing shows. This writes FILE (default `replaylab_tasks.py` in the current folder), one written-out
`@task` function per lesson of the registry, each calling `tasks.lesson_task`, so that `inspect list
tasks` (in that folder, or given FILE) lists every lesson's task, and `inspect eval FILE@<lesson>`
runs the same task as `inspect eval replaylab/<lesson>`. The file is made from the registry, never
kept in the package (nothing outside a lesson's package and the registry names a lesson); it
refuses to load once the registry's lessons differ from its own, with the command that writes it
again.
"""

import sys
from pathlib import Path

from replaylab.agents.recording import write_atomic
from replaylab.lessons import registry

DEFAULT = "replaylab_tasks.py"
MARK = "# Written by python -m replaylab.inspect_tasks.listing from replaylab's registry of lessons."


class NotWritten(ValueError):
    """One line: why the file was not written."""


def text(names):
    """The task file's code, for the lessons `names` in the registry's order."""
    lines = [
        MARK,
        '"""replaylab\'s lessons as Inspect AI tasks, one written-out @task each, for `inspect list tasks` (which reads a',
        "file's code, never runs it). `inspect eval THIS_FILE@LESSON` runs the task `replaylab/LESSON`; write the file",
        'again when a lesson is added (docs/inspect.md)."""',
        "",
        "from inspect_ai import Task, task",
        "",
        "from replaylab.inspect_tasks.listing import check",
        "from replaylab.inspect_tasks.tasks import lesson_task",
        "from replaylab.selection import SEEDS",
        "",
        f"check(__file__, {tuple(names)!r})",
    ]
    for name in names:
        lines += ["", "", "@task", f"def {name}(variant: str | None = None, instances: str | int = SEEDS) -> Task:",
                  f"    {f'replaylab lesson {name}: {registry.lesson(name).title}'!r}",
                  f"    return lesson_task({name!r}, variant, instances)"]
    return "\n".join(lines) + "\n"


def check(path, names):
    """Called by the written file when Inspect loads it: one line (Inspect's PrerequisiteError)
    when the registry's lessons are no longer the file's, since its tasks would be the wrong ones."""
    if tuple(names) != tuple(registry.names()):
        from inspect_ai._util.error import PrerequisiteError  # Inspect's one-line error (pinned version)

        raise PrerequisiteError(f"{path}: written for the lessons {', '.join(names)}; replaylab's are now "
                                f"{', '.join(registry.names())}: write it again with python -m replaylab.inspect_tasks.listing {path}")


def write(path=DEFAULT):
    """Write the task file at `path` (a file of its own is replaced, any other refused); the path."""
    path = Path(path)
    if path.is_dir():
        raise NotWritten(f"{path}: a folder: give the task file's path (e.g. {path / DEFAULT})")
    if path.suffix != ".py":
        raise NotWritten(f"{path}: not a .py file: inspect list tasks reads only .py files")
    if path.exists() and not path.read_text(encoding="utf-8", errors="replace").startswith(MARK):
        raise NotWritten(f"{path}: exists and is not a task file this command wrote: give another path, or delete it first")
    write_atomic(path, text(registry.names()))
    return path


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) > 1 or (argv and argv[0].startswith("-")):
        print("usage: python -m replaylab.inspect_tasks.listing [FILE]  (default replaylab_tasks.py)", file=sys.stderr)
        return 2
    try:
        path = write(*argv)
    except (NotWritten, OSError) as error:
        print(f"replaylab: {error}", file=sys.stderr)
        return 2
    print(f"wrote {path}: the tasks {', '.join(registry.names())}; `inspect list tasks` lists them, "
          f"`inspect eval {path}@LESSON` runs one")
    return 0


if __name__ == "__main__":
    sys.exit(main())
