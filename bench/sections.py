"""bench/results.md holds several benchmarks' sections: each benchmark replaces its own and keeps
the others (a section runs from its heading to the next heading of level 1 or 2)."""

from pathlib import Path


def replace_section(path, heading, lines):
    """Write `lines` (starting with `heading`) in place of the section of that heading in the
    Markdown file at `path`, or at its end when it has none; every other section is kept."""
    path = Path(path)
    text = path.read_text(encoding="utf-8") if path.exists() else ""
    own = "\n".join(lines).rstrip("\n") + "\n"
    if heading + "\n" not in text:
        path.write_text((text.rstrip("\n") + "\n\n" if text.strip() else "") + own, encoding="utf-8")
        return
    before, _, rest = text.partition(heading + "\n")
    ends = [i for i in (rest.find("\n# "), rest.find("\n## ")) if i >= 0]
    after = rest[min(ends) + 1:] if ends else ""
    path.write_text(before + own + ("\n" + after if after else ""), encoding="utf-8")
