"""The errors replaylab raises on purpose, one hierarchy: each says in one line what is wrong and
where, and carries the exit code the command line ends with. Anything else that reaches the command
line is a bug, and it says so (replaylab.cli)."""


class ReplaylabError(Exception):
    """An error of replaylab's own: its text is one line for the person who can act on it."""

    exit_code = 1


class InvalidInput(ReplaylabError, ValueError):
    """Input the user can fix (a file, a field, an option, a value): exit code 2. A ValueError too,
    so that the checks written before the hierarchy keep catching it."""

    exit_code = 2


class Mismatch(ReplaylabError):
    """A run that does not replay, or a result that differs from a rebuild's: exit code 3."""

    exit_code = 3


class ProviderFailed(ReplaylabError, RuntimeError):
    """A provider's failure (its status and reason, cleaned of secrets): exit code 1."""

    exit_code = 1
