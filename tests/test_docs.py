"""The README a newcomer reads in five minutes, and docs/ for the rest: every page linked, every
link found."""

import re

from helpers import ROOT

README = (ROOT / "README.md").read_text(encoding="utf-8")
PAGES = sorted((ROOT / "docs").iterdir())


def links(text):
    return re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", text)


def test_the_readme_is_short_and_starts_with_the_two_commands():
    lines = README.splitlines()
    assert len(lines) <= 200, len(lines)
    top = "\n".join(lines[:30])
    assert "\nmake        #" in top and "\nmake test   #" in top


def test_every_docs_page_is_linked_from_the_readme():
    linked = {link for link in links(README) if link.startswith("docs/")}
    assert PAGES and {f"docs/{page.name}" for page in PAGES} <= linked


def test_every_local_link_of_the_readme_and_the_docs_leads_to_a_file():
    for page in [ROOT / "README.md", ROOT / "config" / "README.md", *PAGES]:
        for link in links(page.read_text(encoding="utf-8")):
            if not link.startswith(("http://", "https://")):
                assert (page.parent / link).exists(), (page.name, link)


def test_no_page_describes_the_machinery_that_is_gone():
    for page in [ROOT / "README.md", ROOT / "config" / "README.md", *PAGES]:
        text = page.read_text(encoding="utf-8")
        for gone in ("force-use-threads", "worker process", "fork server", "runlock", "preloaded"):
            assert gone not in text, (page.name, gone)
