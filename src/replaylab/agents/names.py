"""A model's name as part of a file name, and back.

Model names hold characters a file name should not (`org/model:tag`). Letters, digits, `.` and
`-` are kept; every other character, `_` included, becomes `_` and the two hex digits of each of
its UTF-8 bytes (`org/model:tag` -> `org_2fmodel_3atag`). So `_` is always followed by two hex
digits, a name never holds `__`, and the text can be read back (`model_of`): pages show the model
as it was named.
"""

import re

_KEPT = re.compile(r"[A-Za-z0-9.-]")
_ESCAPED = re.compile(r"(?:_[0-9a-f]{2})+")
_FILE_SAFE = re.compile(r"(?:[A-Za-z0-9.-]|_[0-9a-f]{2})*")


def file_safe(model: str) -> str:
    """`model` as letters, digits, `.`, `-` and `_xx` escapes."""
    return "".join(char if _KEPT.fullmatch(char) else "".join(f"_{byte:02x}" for byte in char.encode()) for char in model)


def model_of(safe: str) -> str:
    """The model name that `file_safe` made `safe` from; ValueError for text it cannot have made."""
    if not _FILE_SAFE.fullmatch(safe):
        raise ValueError(f"{safe!r} is not a model name made safe for a file name")
    try:
        return _ESCAPED.sub(lambda m: bytes.fromhex(m[0].replace("_", "")).decode(), safe)
    except UnicodeDecodeError:
        raise ValueError(f"{safe!r} is not a model name made safe for a file name") from None
