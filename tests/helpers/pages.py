"""Reading a built page as a reader does: the lesson's page and the pages of its runs."""


def with_run_pages(folder):
    """The text of folder/index.md and of every run page it links (folder/runs/*.md): what a run
    was asked, its provenance and how it ended are on its own page."""
    pages = [folder / "index.md", *sorted((folder / "runs").glob("*.md"))]
    return "\n".join(page.read_text(encoding="utf-8") for page in pages)
