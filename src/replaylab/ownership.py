"""One writer per name until it ends: a run recorded as it happens (`session`, `mcp`), a campaign.

The owner holds an exclusive `flock` on a hidden mark beside what it owns (`.NAME.owner`), which
says its process id. The kernel lets go of the lock when the process ends, however it ends
(`kill -9` too), so a mark left behind by a killed owner is free for the next one; an owner that
ends normally removes its mark. Whoever else asks for the name (a second session, `promote`, a
second campaign) is refused in one line before it does anything.
"""

import fcntl
import os
from pathlib import Path

from replaylab.errors import ReplaylabError


class Busy(ReplaylabError):
    """The name is owned by another process that is still running: exit code 1 (as a locked folder)."""

    exit_code = 1


def mark_of(target: str | Path) -> Path:
    """The hidden file beside `target` whose lock says who owns it."""
    target = Path(target)
    return target.with_name(f".{target.name}.owner")


class Owner:
    """The ownership of one name, held until `release` (or the end of the process)."""

    def __init__(self, mark: Path, fd: int, made: list[Path]) -> None:
        self.mark, self.fd, self._made = mark, fd, made

    def release(self) -> None:
        """Remove the mark (while still holding it: no one else can hold it meanwhile), let go of
        it, and remove the empty folders made for it. Twice is the same as once."""
        if self.fd < 0:
            return
        try:
            self.mark.unlink()
        except FileNotFoundError:
            pass
        os.close(self.fd)
        self.fd = -1
        _remove_empty(self._made)

    def __enter__(self) -> "Owner":
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


def _remove_empty(made: list[Path]) -> None:
    """Remove the folders made for a mark (deepest first), as long as they are empty."""
    for folder in reversed(made):
        try:
            folder.rmdir()
        except OSError:  # something else is in it now
            return


def _holder(fd: int) -> str:
    """The process id the mark names, as text ("another process" while the owner has not written it yet)."""
    try:
        text = os.pread(fd, 32, 0).decode("ascii", "replace").strip()
    except OSError:
        text = ""
    return f"process {text}" if text.isdigit() else "another process"


def take(target: str | Path, busy: str) -> Owner:
    """Own `target` (the name of a file or folder, which need not exist yet); `Busy` with the line
    `TARGET: <busy, with {holder} filled in>` when another process owns it."""
    mark = mark_of(target)
    made = [p for p in reversed(mark.parents) if not p.exists()]
    while True:
        mark.parent.mkdir(parents=True, exist_ok=True)
        try:
            fd = os.open(mark, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        except FileNotFoundError:  # its folder was removed meanwhile, by an owner that ended
            continue
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = _holder(fd)
            os.close(fd)
            _remove_empty(made)
            raise Busy(f"{target}: {busy.format(holder=holder)}") from None
        try:
            same = os.stat(mark).st_ino == os.fstat(fd).st_ino
        except FileNotFoundError:
            same = False
        if same:  # not a mark its last owner removed between our open and our lock: ours
            os.ftruncate(fd, 0)
            os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
            return Owner(mark, fd, made)
        os.close(fd)


def check_free(target: str | Path, busy: str) -> None:
    """`Busy` (as `take`) when another process owns `target`; nothing is written either way."""
    try:
        fd = os.open(mark_of(target), os.O_RDONLY | os.O_CLOEXEC)
    except OSError:  # no mark: no owner
        return
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        raise Busy(f"{target}: {busy.format(holder=_holder(fd))}") from None
    finally:
        os.close(fd)
