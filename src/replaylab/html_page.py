"""A Markdown page of the build as one self-contained HTML page: the Markdown is the only source.

`html_page(text, folder)` renders the text that a page writer made (escaped by
`replaylab.lessons.markdown`) with markdown-it-py into `templates/page.html`, whose style sheet
(`templates/page.css`) is inlined: no script, no font or file from the network. Raw HTML in the
Markdown is never passed through (markdown-it's `html` option is off), so text that escaped the
Markdown layer still shows as text, and control characters are shown as symbols
(`markdown.visible`); markdown-it refuses `javascript:`, `vbscript:`, `file:` and `data:` links
of its own accord. The page's Content-Security-Policy lets no script run and nothing load but
the embedded figures.

What the HTML adds to the Markdown, from the structure of the page alone:
- tables scroll inside a box of their own instead of widening the page; a wide one says so on a
  narrow screen, and shadows mark the edges with more columns behind them;
- each figure (a PNG file next to the page) is embedded as a data URI, so the page shows it
  wherever it is opened: in results/, in the Snakemake report (whose viewer copies each result
  into a folder of its own), or as a mailed file;
- a link to a Markdown page of the build (`x/index.md`) points at its HTML twin (`x/index.html`);
- the section under a heading that starts with `markdown.FOLDED` (a run's messages) is folded in
  a `<details>` element;
- a paragraph that gives the evidence (`markdown.EVIDENCE`), an evidence label in bold
  (`markdown.EVIDENCE_LABEL`), the build's judgement of an answer in bold
  (`markdown.JUDGEMENTS`: right, caution, wrong) and a statement in bold that is not a result
  (`markdown.NOT_A_RESULT`) get a class each, which the style sheet makes stand out.
"""

import base64
import re
from collections.abc import Sequence
from functools import cache
from importlib import resources
from pathlib import Path
from string import Template
from typing import TYPE_CHECKING

from markdown_it import MarkdownIt
from markdown_it.common.utils import escapeHtml
from markdown_it.token import Token

from replaylab.lessons.markdown import EVIDENCE, EVIDENCE_LABEL, FOLDED, JUDGEMENTS, NOT_A_RESULT, visible
from replaylab.errors import InvalidInput

if TYPE_CHECKING:
    from markdown_it.renderer import RendererHTML
    from markdown_it.utils import EnvType, OptionsDict

IMAGE_TYPES = {".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".gif": "image/gif", ".webp": "image/webp"}
_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")


class PageError(InvalidInput):
    """A page that cannot be made self-contained: an image that is missing or not a local file."""


@cache
def _template() -> tuple[Template, str]:
    folder = resources.files("replaylab") / "templates"
    return Template((folder / "page.html").read_text(encoding="utf-8")), (folder / "page.css").read_text(encoding="utf-8")


WIDE = 4  # columns from which a table may not fit a phone: it says that it scrolls

def _columns(tokens: Sequence[Token], idx: int) -> int:
    """The number of header cells of the table that opens at tokens[idx]."""
    count = 0
    for token in tokens[idx + 1 :]:
        if token.type == "th_open":
            count += 1
        elif token.type == "thead_close":
            break
    return count


def _wrap_table(self: "RendererHTML", tokens: Sequence[Token], idx: int, options: "OptionsDict", env: "EnvType") -> str:
    """A table inside a box that scrolls sideways; a wide one with a hint saying so (shown on a
    narrow screen) and shadows at the edges that have more columns behind them."""
    if tokens[idx].nesting == 1:
        if _columns(tokens, idx) >= WIDE:
            return ('<div class="table wide">\n<p class="scroll-hint">Scroll sideways for every column →</p>\n'
                    + self.renderToken(tokens, idx, options, env))
        return '<div class="table">\n' + self.renderToken(tokens, idx, options, env)
    return self.renderToken(tokens, idx, options, env) + "</div>\n"


@cache
def _parser() -> MarkdownIt:
    parser = MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False}).enable("table")
    parser.add_render_rule("table_open", _wrap_table)
    parser.add_render_rule("table_close", _wrap_table)
    return parser


def _local(url: str) -> bool:
    return not (_SCHEME.match(url) or url.startswith(("/", "#", "\\")))


def _embed(image: Token, folder: Path) -> None:
    """Replace a figure's relative path by its bytes (a data URI); only files under `folder`."""
    src = str(image.attrGet("src") or "")
    path = (folder / src).resolve()
    kind = IMAGE_TYPES.get(path.suffix.lower())
    if not _local(src) or not path.is_relative_to(folder.resolve()) or kind is None:
        raise PageError(f"{folder}: the image {src!r} is not a figure file next to the page")
    try:
        data = path.read_bytes()
    except OSError as error:
        raise PageError(f"{folder}: the image {src!r} cannot be read: {error.strerror}") from None
    image.attrSet("src", f"data:{kind};base64,{base64.b64encode(data).decode('ascii')}")


def _link(token: Token) -> None:
    href = str(token.attrGet("href") or "")
    if _local(href):
        path, hash_, fragment = href.partition("#")
        if path.endswith(".md"):
            token.attrSet("href", path[:-3] + ".html" + hash_ + fragment)


def _inline_text(children: Sequence[Token], start: int = 0) -> str:
    """The plain text of inline tokens from `start` to the end of the span that opens there."""
    out: list[str]
    depth, out = 0, []
    for token in children[start:]:
        depth += token.nesting
        if token.type in ("text", "code_inline"):
            out.append(token.content)
        if depth <= 0 and token.nesting == -1:
            break
    return "".join(out)


def _mark(paragraph: Token, inline: Token) -> None:
    """Classes for what must stand out: evidence labels, and statements that are not results."""
    children = inline.children or []
    if children and children[0].type == "text" and children[0].content.startswith(EVIDENCE):
        paragraph.attrJoin("class", "evidence")
    for index, token in enumerate(children):
        if token.type == "strong_open":
            said = _inline_text(children, index)
            judgement = next((kind for start, kind in JUDGEMENTS.items() if said.startswith(start)), None)
            if said.startswith(EVIDENCE_LABEL):
                token.attrJoin("class", "evidence")
            elif judgement:
                token.attrJoin("class", judgement)
            elif NOT_A_RESULT in said:
                token.attrJoin("class", "not-result")


def _fold(tokens: Sequence[Token]) -> list[Token]:
    """Each section under a heading that starts with FOLDED, as <details> with the heading as its
    summary; it ends where a heading of the same or a higher level begins."""
    out: list[Token]
    folded: int | None
    out, folded, index = [], None, 0
    while index < len(tokens):
        token = tokens[index]
        if token.type == "heading_open":
            level = int(token.tag[1:])
            if folded is not None and level <= folded:
                out.append(Token("details_close", "details", -1, block=True))
                folded = None
            if folded is None and tokens[index + 1].content.startswith(FOLDED):
                details = Token("details_open", "details", 1, block=True)
                details.attrSet("class", "steps")
                out += [details, Token("summary_open", "summary", 1, block=True), *tokens[index : index + 3]]
                out.append(Token("summary_close", "summary", -1, block=True))
                folded, index = level, index + 3
                continue
        out.append(token)
        index += 1
    if folded is not None:
        out.append(Token("details_close", "details", -1, block=True))
    return out


def html_page(text: str, folder: str | Path) -> str:
    """The HTML of a Markdown page of the build whose figures lie under `folder` (the page's own
    folder): a whole document, self-contained. The page's title is its first heading."""
    folder = Path(folder)
    parser = _parser()
    tokens = parser.parse(visible(text))  # a page writer that forgot to escape leaks no control character
    title = ""
    for index, token in enumerate(tokens):
        if token.type == "inline":
            if not title and tokens[index - 1].tag == "h1":
                title = _inline_text(token.children or [])
            if tokens[index - 1].type == "paragraph_open":
                _mark(tokens[index - 1], token)
            for child in token.children or []:
                if child.type == "image":
                    _embed(child, folder)
                elif child.type == "link_open":
                    _link(child)
    body = parser.renderer.render(_fold(tokens), parser.options, {})
    template, style = _template()
    return template.substitute(title=escapeHtml(title or "replaylab"), style=style, body=body)
