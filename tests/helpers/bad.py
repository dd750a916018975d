"""Recordings broken on purpose, one way each (issue 16): the reader's tests and the workflow's
dry-run tests refuse the same bytes with the same words."""

import json
import os

from helpers import RECORDINGS

VALID = (RECORDINGS / "hunter" / "symplectic-euler.json").read_text(encoding="utf-8")


def nested(depth, inner=1):
    value = inner
    for _ in range(depth):
        value = {"a": value}
    return value


def changed(change):
    data = json.loads(VALID)
    change(data)
    return json.dumps(data, indent=2, ensure_ascii=False)


def deep_arguments(depth):
    """The text of the recording, its first call's arguments nested `depth` objects deep."""
    text = changed(lambda d: d["steps"][0]["tool_calls"][0].__setitem__("arguments", "@@"))
    return text.replace('"@@"', '{"a": ' * depth + "1" + "}" * depth).encode()


DEEP = "$.steps[0].tool_calls[0].arguments.a.a.a.a.a.a.a...: nested more than 64 levels deep"
# name: (the file's bytes, what the one line says after "<file>: ")
BAD = {
    "nested-500": (deep_arguments(500), DEEP),
    "nested-1000": (deep_arguments(1000), "nested more than 64 levels deep"),
    "nested-100000": (VALID.replace('"finished": true', '"finished": ' + "[" * 100_000 + "]" * 100_000).encode(),
                      "nested more than 64 levels deep"),
    "lone-surrogate": (VALID.replace('"text": "', '"text": "\\ud800', 1).encode(),
                       "holds a lone surrogate"),
    "integer-5000-digits": (VALID.replace('"periods": 20', '"periods": ' + "9" * 5000, 1).encode(),
                            "$.steps[0].tool_calls[0].arguments.periods: an integer of 5000 digits"),
    "duplicate-key": (VALID.replace('"run": "symplectic-euler",', '"run": "symplectic-euler",\n  "run": "symplectic-euler",', 1).encode(),
                      "$: the key 'run' appears twice"),
    "ansi-in-model": (changed(lambda d: d["provenance"].__setitem__("model", "x\x1b[2Jspoof")).encode(),
                      "$.provenance.model: 'x\\x1b[2Jspoof' holds the control character \\x1b"),
    "newline-in-group": (changed(lambda d: d.__setitem__("group", "a\nreplaylab: all good")).encode(),
                         "$.group: 'a\\nreplaylab: all good' holds the control character \\x0a"),
    "not-utf8": (VALID.encode().replace(b'"text": "', b'"text": "\xff', 1), "not UTF-8 text"),
    "encoded-surrogate": (VALID.encode().replace(b'"text": "', b'"text": "\xed\xa0\x80', 1), "not UTF-8 text"),
    "too-large": (VALID.replace('"text": "', '"text": "' + "x" * (9 * 1024 * 1024), 1).encode(),
                  "bytes; a recording has at most 8388608 bytes"),
}


# What a recording's path can be without being a regular file, and what the reader says of each.
NOT_A_FILE = {
    "folder": "a folder, not a recording file",
    "dangling": "a symbolic link to a file that does not exist",
    "loop": "a loop of symbolic links",
    "fifo": "a named pipe (FIFO), not a recording file",
}


def make_not_a_file(path, kind):
    """Put at `path` one of NOT_A_FILE: a folder, a link to nothing, a link to itself, a FIFO (which
    an ordinary open would wait on forever)."""
    if kind == "folder":
        path.mkdir()
    elif kind == "dangling":
        path.symlink_to(path.with_name("nothing-here.json"))
    elif kind == "loop":
        path.symlink_to(path)
    elif kind == "fifo":
        os.mkfifo(path)
    else:
        raise ValueError(kind)
    return path
