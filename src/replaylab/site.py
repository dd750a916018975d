"""The build's pages as one folder for `snakemake --report` (results/site/): results/index.html
and every file reachable from it by relative links, page after page, copied in the same layout.

The report keeps a folder marked with `htmlindex` whole (its other files travel with the page), so
inside the report every link of every page works as it does in results/: back links, lessons,
campaigns, run pages, tables and transcripts. Figures are embedded in the pages already."""

import shutil
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlparse

from replaylab.pipeline import whole_folder


class _Links(HTMLParser):
    """The targets of a page's links (`<a href>`)."""

    def __init__(self, text: str) -> None:
        super().__init__()
        self.found: list[str] = []
        self.feed(text)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        href = dict(attrs).get("href")
        if tag == "a" and href:
            self.found.append(href)


def reachable(index: str | Path) -> list[Path]:
    """Every file under the index's folder that a chain of relative links from the index reaches
    (the index included), as paths relative to that folder; links that leave it, have a scheme or
    name no file are not followed."""
    root = Path(index).parent.resolve()
    start = Path(index).resolve()
    seen, queue = {start}, [start]
    while queue:
        page = queue.pop()
        for href in _Links(page.read_text(encoding="utf-8")).found:
            url = urlparse(href)
            if url.scheme or url.netloc or not url.path:
                continue
            target = (page.parent / unquote(url.path)).resolve()
            if target in seen or not target.is_file() or not target.is_relative_to(root):
                continue
            seen.add(target)
            if target.suffix == ".html":
                queue.append(target)
    return sorted(path.relative_to(root) for path in seen)


def write_site(index: str | Path, folder: str | Path) -> int:
    """Copy what `reachable(index)` finds into `folder` (whole or not at all); returns how many files."""
    root = Path(index).parent
    files = reachable(index)
    with whole_folder(folder) as building:
        for relative in files:
            target = building / relative
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(root / relative, target)
    return len(files)
