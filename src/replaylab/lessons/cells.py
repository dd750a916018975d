"""Cells of the CSV files a spreadsheet opens as text, never as a formula.

A run's words (an agent's explanation, a declared model name) reach the tables; a cell that starts
with `=`, `+`, `-`, `@`, a tab or a carriage return is a formula to Excel, LibreOffice and Google
Sheets (`=HYPERLINK(...)` runs when clicked). Such a cell is written with a leading apostrophe,
which those programs read as "text follows" and do not show (OWASP's advice on CSV injection); a
number (`-0.5`) is left as it is. A cell that starts with an apostrophe gets one more, so that
`from_cell` gives back exactly what was written: the tables read back stay the data.
"""

import csv
from collections.abc import Iterable
from typing import Any, Literal

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
MARK = "'"


def _number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def to_cell(value: Any) -> Any:
    """A value as a CSV cell: text a spreadsheet would run as a formula (or that starts with the
    mark) behind the mark; anything else as it is."""
    if not isinstance(value, str) or not value:
        return value
    if value.startswith(MARK) or (value.startswith(FORMULA_STARTS) and not _number(value)):
        return MARK + value
    return value


def quoting(values: Iterable[Any]) -> Literal[0, 2]:
    """The csv module's quoting for cells `values`: every text cell quoted when one holds a carriage
    return (the module quotes only the line terminator's characters, "\\n" here, and a bare CR would
    end the row for every reader), else only where needed."""
    carriage = any(isinstance(value, str) and "\r" in value for value in values)
    return csv.QUOTE_NONNUMERIC if carriage else csv.QUOTE_MINIMAL


def from_cell(value: Any) -> Any:
    """A cell of a table this project wrote, back as the value (`to_cell` undone)."""
    return value[1:] if isinstance(value, str) and value.startswith(MARK) else value
