"""The HTML pages of a real build, opened in headless Chromium (Debian's package `chromium`).

A real Snakemake run in a temporary copy of the project writes every page (the summary, each
lesson, and a new run recorded with the scripted provider); Chromium opens each one from its file
at 390 px (a phone) and 1280 px (a desktop), driven over the DevTools protocol with
websocket-client. On each page: no console error, every image loaded, every link to a local file
resolves and none leaves the machine, the page is no wider than the screen (with its folded runs
closed and open), and the key numbers of the lesson, read from its results.json, are in the text
the browser shows. Under CI=true (.ci/run) full-page screenshots of every page are kept in
test-artifacts/screenshots/, CI's artefacts; not in a plain `make test-all` (they cost a sixth of
this module's CPU time). These tests are `slow`: `make test-all` runs them, `make test` does not.

Without Chromium the tests skip and say how to install it (`make chromium`); under CI=true they
fail instead.
"""

import base64
import copy
import json
import os
import shutil
import subprocess
import tempfile
import time
import zipfile
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlparse

import pytest
import websocket

from helpers import ROOT
from helpers.workflow import copy_project, snakemake
from replaylab import pipeline, render
from replaylab.build import build
from replaylab.html_page import html_page
from replaylab.lessons import registry

LESSONS = registry.names()
SCREENSHOTS = ROOT / "test-artifacts" / "screenshots"
WIDTHS = (390, 1280)
CHROMIUM = shutil.which("chromium")
LIVE_RUN = "browsed"  # the run recorded with the scripted provider for its page
CAMPAIGN = "baseline"  # the configured campaign's name
PAGES = ["index", *LESSONS, "live", "campaign", "campaign-lesson", "run"]

# Chromium, and a build of its own (one worker makes it: tests/conftest.py)
pytestmark = [pytest.mark.workflow, pytest.mark.slow]


def in_ci():
    return os.environ.get("CI", "").lower() in ("true", "1")


@pytest.fixture(scope="session")
def chromium_path():
    """Skip on a developer's machine without Chromium; fail under CI=true, where it must be there."""
    if CHROMIUM is None:
        reason = "headless Chromium is not installed (Debian's package chromium; `make chromium` installs it)"
        if in_ci():
            pytest.fail(f"the browser tests must run under CI=true, but {reason}")
        pytest.skip(reason)
    return CHROMIUM


# ---------------------------------------------------------------------------------------------
# A small DevTools protocol client


class Browser:
    """Headless Chromium with a DevTools connection; one tab per page opened."""

    FLAGS = [
        "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync",
        "--disable-default-apps", "--hide-scrollbars", "--remote-debugging-port=0",
    ]

    def __init__(self, executable):
        self.profile = tempfile.mkdtemp(prefix="replaylab-chromium-")
        self.process = subprocess.Popen(
            [executable, *self.FLAGS, f"--user-data-dir={self.profile}", "about:blank"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )
        port_file = Path(self.profile) / "DevToolsActivePort"
        deadline = time.monotonic() + 60
        while not (port_file.is_file() and len(port_file.read_text().split()) == 2):
            if self.process.poll() is not None or time.monotonic() > deadline:
                self.close()
                raise RuntimeError(f"Chromium did not start (exit code {self.process.returncode})")
            time.sleep(0.05)
        port, path = port_file.read_text().split()
        self.socket = websocket.create_connection(f"ws://127.0.0.1:{port}{path}", timeout=60, suppress_origin=True)
        self.next_id = 0
        self.events = []

    def send(self, method, session=None, **params):
        self.next_id += 1
        message = {"id": self.next_id, "method": method, "params": params}
        if session:
            message["sessionId"] = session
        self.socket.send(json.dumps(message))
        while True:
            reply = json.loads(self.socket.recv())
            if reply.get("id") == self.next_id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply.get("result", {})
            if "method" in reply:
                self.events.append(reply)

    def wait_for(self, event, session, timeout=60):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for index, found in enumerate(self.events):
                if found["method"] == event and found.get("sessionId") == session:
                    return self.events.pop(index)
            self.socket.settimeout(max(0.1, deadline - time.monotonic()))
            reply = json.loads(self.socket.recv())
            if "method" in reply:
                self.events.append(reply)
        raise TimeoutError(event)

    def evaluate(self, session, expression):
        result = self.send("Runtime.evaluate", session, expression=expression, returnByValue=True)
        if "exceptionDetails" in result:
            raise RuntimeError(result["exceptionDetails"])
        return result["result"].get("value")

    def open(self, path, width):
        """Load a file in a new tab at a screen `width`; returns (session, target)."""
        target = self.send("Target.createTarget", url="about:blank")["targetId"]
        session = self.send("Target.attachToTarget", targetId=target, flatten=True)["sessionId"]
        for domain in ("Page", "Runtime", "Log"):
            self.send(f"{domain}.enable", session)
        self.send(
            "Emulation.setDeviceMetricsOverride", session,
            width=width, height=900, deviceScaleFactor=1, mobile=width < 600,
        )
        self.send("Page.navigate", session, url=Path(path).resolve().as_uri())
        self.wait_for("Page.loadEventFired", session)
        return session, target

    def console_errors(self, session):
        errors = []
        for event in self.events:
            if event.get("sessionId") != session:
                continue
            params = event["params"]
            if event["method"] == "Runtime.consoleAPICalled" and params["type"] in ("error", "assert"):
                errors.append(" ".join(str(a.get("value", a.get("description", ""))) for a in params["args"]))
            elif event["method"] == "Runtime.exceptionThrown":
                errors.append(params["exceptionDetails"].get("text", "exception"))
            elif event["method"] == "Log.entryAdded" and params["entry"]["level"] == "error":
                errors.append(f"{params['entry']['text']} {params['entry'].get('url', '')}".strip())
        return errors

    def screenshot(self, session, target_file):
        height = self.evaluate(session, "Math.ceil(document.documentElement.scrollHeight)")
        width = self.evaluate(session, "document.documentElement.clientWidth")
        shot = self.send(
            "Page.captureScreenshot", session, format="png", captureBeyondViewport=True,
            clip={"x": 0, "y": 0, "width": width, "height": min(height, 16000), "scale": 1},
        )
        target_file.parent.mkdir(parents=True, exist_ok=True)
        target_file.write_bytes(base64.b64decode(shot["data"]))

    def close_tab(self, session, target):
        self.send("Target.closeTarget", targetId=target)
        self.events = [e for e in self.events if e.get("sessionId") != session]

    def close(self):
        if getattr(self, "socket", None):
            self.socket.close()
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        shutil.rmtree(self.profile, ignore_errors=True)


@pytest.fixture(scope="module")
def browser(chromium_path):
    found = Browser(chromium_path)
    yield found
    found.close()


# What the page shows, read by the browser: the text that is rendered (folded runs closed), the
# images, the links, and how wide the page is against the screen.
INSPECT = """(() => {
  const root = document.documentElement;
  const over = e => e.getBoundingClientRect().right > root.clientWidth + 1;
  const wide = [...document.querySelectorAll('body *')]
    .filter(e => over(e) && !over(e.parentElement))
    .slice(0, 5).map(e => e.tagName + (e.className ? '.' + e.className : '') + ': ' + e.textContent.slice(0, 60));
  return {
    title: document.title,
    text: document.body.innerText,
    images: [...document.images].map(i => ({src: i.getAttribute('src').slice(0, 40), loaded: i.complete && i.naturalWidth > 0})),
    links: [...document.querySelectorAll('a[href]')].map(a => a.href),
    scrollWidth: root.scrollWidth, clientWidth: root.clientWidth, wide: wide,
    scripts: document.scripts.length,
    handlers: [...document.querySelectorAll('*')].flatMap(e => [...e.attributes].map(a => a.name)).filter(n => n.startsWith('on')),
  };
})()"""
OPEN_EVERY_FOLD = "document.querySelectorAll('details').forEach(d => d.open = true); document.querySelectorAll('details').length"


def inspect(browser, path, width, shot=None):
    """What Chromium found on the page at one screen width: a dict of lists, each empty when the
    page is right (and the page's text, and the number of folds)."""
    session, target = browser.open(path, width)
    try:
        closed = browser.evaluate(session, INSPECT)
        if shot is not None:
            browser.screenshot(session, shot)
        folds = browser.evaluate(session, OPEN_EVERY_FOLD)
        opened = browser.evaluate(session, INSPECT)
        if shot is not None and folds:
            browser.screenshot(session, shot.with_name(shot.stem + "-open.png"))
        errors = browser.console_errors(session)
    finally:
        browser.close_tab(session, target)
    problems = {
        "console errors": errors,
        "images not loaded": [i["src"] for i in opened["images"] if not i["loaded"]],
        "links to missing files": [],
        "links off this machine": [],
        "too wide": [],
        "scripts or event handlers": [],
    }
    for link in opened["links"]:
        url = urlparse(link)
        if url.scheme == "file":
            if not Path(unquote(url.path)).exists():
                problems["links to missing files"].append(link)
        elif link.split("#")[0] != Path(path).resolve().as_uri():
            problems["links off this machine"].append(link)
    for state, found in (("folds closed", closed), ("folds open", opened)):
        if found["scrollWidth"] > found["clientWidth"]:
            problems["too wide"].append(f"{state}: {found['scrollWidth']} px on a {found['clientWidth']} px screen: {found['wide']}")
    if opened["scripts"] or opened["handlers"]:
        problems["scripts or event handlers"].append(f"{opened['scripts']} scripts, handlers {opened['handlers']}")
    return problems, closed["text"], folds, len(opened["images"])


# ---------------------------------------------------------------------------------------------
# The build whose pages are checked


@pytest.fixture(scope="module")
def site(built, tmp_path_factory):
    """A real build (a copy of the session's, tests/conftest.py), then a new run of the first lesson
    recorded with the scripted provider (its page lies under results/live/)."""
    project = tmp_path_factory.mktemp("browser") / "project"
    shutil.copytree(built, project, symlinks=True)
    snakemake(project, "--cores", "1", "record", "--config", "provider=scripted",
              f"record_lesson={LESSONS[0]}", f"record_run={LIVE_RUN}")
    config = project / "config" / "config.yaml"  # a small campaign of the scripted programs, then the summary
    config.write_text(config.read_text().replace("  runs: 5 # per model", "  runs: 3 # per model"))
    snakemake(project, "--cores", "2", "campaign")
    config.write_text(config.read_text().replace("  runs: 3 # per model", "  runs: 2 # per model"))  # one run less:
    snakemake(project, "--cores", "2", "campaign")  # the comparison says that 3rd runs are recorded, not counted
    # the summary page is made again on its own: the campaign's scorecard changed since
    snakemake(project, "--cores", "1", "results/index.html", "results/site")
    return project / "results"


def page_path(results, page):
    if page == "index":
        return results / "index.html"
    if page == "live":
        return results / "live" / LESSONS[0] / LIVE_RUN / "index.html"
    if page == "campaign":
        return results / "campaigns" / CAMPAIGN / "index.html"
    if page == "campaign-lesson":
        return results / "campaigns" / CAMPAIGN / LESSONS[0] / "index.html"
    if page == "run":  # the page of the first lesson's first run shown
        run = next(iter(pipeline.read_json(results / LESSONS[0] / "results.json")["runs"]))
        return results / LESSONS[0] / "runs" / f"{run}.html"
    return results / page / "index.html"


def results_of(results, page):
    """The results.json behind a page (the summary: every lesson's; a campaign's comparison or a run: none)."""
    if page == "index":
        return [pipeline.read_json(results / lesson / "results.json") for lesson in LESSONS]
    if page in ("campaign", "run"):
        return []
    return [pipeline.read_json(page_path(results, page).parent / "results.json")]


def verdict_texts(value, summary):
    """What any other lesson's verdict must show: every evidence label in it, and on the lesson's page
    also the text of every number it holds as {"value", "shown"} (the results schema's shown)."""
    if isinstance(value, list):
        return [text for item in value for text in verdict_texts(item, summary)]
    if not isinstance(value, dict):
        return []
    if set(value) == {"value", "shown"}:
        return [] if summary else [value["shown"]]
    found = [value["evidence"]] if isinstance(value.get("evidence"), str) else []
    return found + [text for key, item in value.items() if key != "evidence" for text in verdict_texts(item, summary)]


def key_numbers(data, summary=False):
    """The numbers a reader must find on the page of a lesson (or its entry in the summary), read
    from its results.json: what the build decided, with each evidence label."""
    found = []
    for verdict in data["verdicts"].values():
        answer = verdict["answer"] or {}
        if data["lesson"] == "projectile":
            found += ["%g" % answer[k] for k in ("low", "high") if k in answer] + [data["scans"]["best_angle"]["angle"]["shown"]]
            experiments = verdict["experiments"]
            if experiments.get("checkable") and not summary:
                found += [experiments["best_angle"]["shown"], "%g" % experiments["smallest_dt"]]
                found += [experiments["evidence"]] if experiments.get("evidence") else []
        elif data["lesson"] == "hunter":
            v = verdict["experiments"]
            found.append("%g" % v["limit"])
            checked = verdict["answer_check"]
            found += [checked["value"]["shown"]] if checked and not summary else []
            if not summary:
                if v["outcome"] == "counterexample":
                    found += [v["witness"]["value"]["shown"], v["evidence"]]
                else:
                    found.append(str(v["tested"]))
                    found += [v["closest"]["value"]["shown"]] if v.get("closest") else []
        elif data["lesson"] == "review":
            found += [name for key in ("piece_1_failed", "piece_2_failed") for name in answer.get(key, [])]
            if not summary:
                found += [f"measured {v['measured']['shown']}, tolerance {v['tolerance']['shown']}" for v in verdict["verdicts"] if not v["passed"]]
        else:
            found += verdict_texts(verdict, summary)
    for group in data.get("groups", {}).values():  # a lesson that decides per group
        for resolution in group["resolution"]:
            found += [resolution["evidence"]] if resolution.get("evidence") else []
            found += [f"piece {resolution['candidate']}"]
    if not summary:
        for row in data["scorecard"]:
            found.append(f"{row['right']} ({100 * row['rate']:.0f} %)")
    assert found, data["lesson"]
    return found


# ---------------------------------------------------------------------------------------------
# The tests


def links_on(browser, path):
    """The address of every link of a page, as Chromium resolves it."""
    session, target = browser.open(path, 1280)
    try:
        return browser.evaluate(session, "[...document.querySelectorAll('a[href]')].map(a => a.href)")
    finally:
        browser.close_tab(session, target)


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("page", PAGES)
def test_every_page_reads_well_in_chromium(browser, site, page, width):
    path = page_path(site, page)
    shot = SCREENSHOTS / f"{page}-{width}.png" if in_ci() else None
    problems, text, folds, images = inspect(browser, path, width, shot)
    assert not any(problems.values()), {k: v for k, v in problems.items() if v}
    shown = " ".join(text.split())
    for data in results_of(site, page):
        for number in key_numbers(data, summary=page == "index"):
            assert number in shown, f"{number!r} is not in the text of {path.relative_to(site)}"
    if page == "index":
        assert images == 0
        for lesson in LESSONS:
            assert f"file://{site}/{lesson}/index.html" in " ".join(links_on(browser, path))
        assert f"file://{site}/campaigns/{CAMPAIGN}/index.html" in links_on(browser, path)
    elif page == "campaign":
        data = json.loads((path.parent / "scorecard.json").read_text())
        assert images == 1 and "Summary" in text and " ".join(data["summary"].replace("**", "").split()) in shown
        assert "recorded runs are not counted" in shown
    elif page == "run":
        assert folds == 1 and images == 0 and "What the build decided" in text and "Right:" in shown
    else:
        data = results_of(site, page)[0]
        assert folds == 0 and images == len(render.figure_names(data["lesson"]))
        for run in data["runs"]:  # each run shown links to its own page
            assert (path.parent / "runs" / f"{run}.html").as_uri() in links_on(browser, path)


def test_the_report_shows_each_page_with_its_figures(browser, site, tmp_path):
    """`snakemake --report` holds the pages once, in the site's folder (every link works there):
    opened from there, the summary and each lesson's page show every figure and the lesson's
    numbers; no page is stored apart from the site, where its links would break."""
    project = site.parent
    snakemake(project, "--report", "results/report.zip")
    with zipfile.ZipFile(site / "report.zip") as archive:
        archive.extractall(tmp_path)
    (folder,) = [p.parent for p in tmp_path.glob("report/data/raw/*/index.html") if (p.parent / LESSONS[0]).is_dir()]
    assert [p for p in tmp_path.glob("report/data/raw/*/*.html") if p.parent != folder] == []
    lessons = {}
    for page in [folder / "index.html", *(folder / lesson / "index.html" for lesson in LESSONS)]:
        session, target = browser.open(page, 1280)
        try:
            found = browser.evaluate(session, INSPECT)
            errors = browser.console_errors(session)
        finally:
            browser.close_tab(session, target)
        assert not errors and all(image["loaded"] for image in found["images"]), (page, errors, found["images"])
        lessons[found["title"]] = (len(found["images"]), " ".join(found["text"].split()))
    for lesson in LESSONS:
        data = pipeline.read_json(site / lesson / "results.json")
        (images, text), = [v for title, v in lessons.items() if f"Lesson {lesson}" in title]
        assert images == len(render.figure_names(lesson))
        assert all(number in text for number in key_numbers(data))


def test_every_link_from_the_index_leads_somewhere(browser, site):
    """From results/index.html, every link of every page reached (lessons, campaigns, their lesson
    pages, run pages) is followed in Chromium: each names a file that exists (a table not empty),
    and every page of the build is reached."""
    start = (site / "index.html").resolve()
    seen, queue, broken, files = {start}, [start], [], set()
    while queue:
        page = queue.pop()
        for link in links_on(browser, page):
            url = urlparse(link)
            assert url.scheme == "file", (page, link)
            target = Path(unquote(url.path))
            if not target.is_file() or (target.suffix in (".csv", ".gz", ".json", ".png") and not target.stat().st_size):
                broken.append(f"{page.relative_to(site)} -> {link}")
                continue
            files.add(target)
            if target.suffix == ".html" and target not in seen:
                seen.add(target)
                queue.append(target)
    assert not broken, broken
    reached = {p.relative_to(site).as_posix() for p in seen}
    campaign = f"campaigns/{CAMPAIGN}"
    assert {"index.html", f"{campaign}/index.html", *(f"{lesson}/index.html" for lesson in LESSONS)} <= reached
    assert {f"{campaign}/{lesson}/index.html" for lesson in ("projectile", "hunter", "review")} <= reached
    for lesson in LESSONS:  # every run page of every lesson is linked from its page
        assert {f"{lesson}/runs/{p.name}" for p in (site / lesson / "runs").glob("*.html")} <= reached
    assert [p for p in files if p.suffix == ".csv"], "no table was linked"


def crawl(browser, start):
    """Follow every link from `start` through every page reached: (pages reached, broken links)."""
    start = start.resolve()
    seen, queue, broken = {start}, [start], []
    while queue:
        page = queue.pop()
        for link in links_on(browser, page):
            url = urlparse(link)
            target = Path(unquote(url.path))
            if url.scheme != "file" or not target.is_file() or not target.stat().st_size:
                broken.append(f"{page} -> {link}")
            elif target.suffix == ".html" and target not in seen:
                seen.add(target)
                queue.append(target)
    return seen, broken


def test_every_link_inside_the_report_works(browser, site, tmp_path):
    """`snakemake --report x.zip` holds the site (results/site/, every page and what it links, the
    campaigns included): opened inside the unpacked report, every link of every page works."""
    project = site.parent
    snakemake(project, "--report", "results/report-links.zip")
    with zipfile.ZipFile(site / "report-links.zip") as archive:
        archive.extractall(tmp_path)
    (index,) = [p for p in tmp_path.glob("report-links/data/raw/*/index.html") if (p.parent / LESSONS[0]).is_dir()]
    assert "site.html" in (tmp_path / "report-links" / "report.html").read_text(encoding="utf-8")
    seen, broken = crawl(browser, index)
    assert not broken, broken
    reached = {p.relative_to(index.parent).as_posix() for p in seen}
    assert f"campaigns/{CAMPAIGN}/index.html" in reached and f"campaigns/{CAMPAIGN}/{LESSONS[0]}/index.html" in reached
    assert {f"{lesson}/index.html" for lesson in LESSONS} <= reached
    assert any(p.startswith(f"{LESSONS[0]}/runs/") for p in reached)
    assert len(reached) == len({p.relative_to(site).as_posix() for p in crawl(browser, site / "index.html")[0]})


def test_a_campaigns_lesson_page_links_back_to_its_campaign_and_a_lessons_page_links_nowhere_up(browser, site):
    campaign = site / "campaigns" / CAMPAIGN
    for lesson in ("projectile", "hunter", "review"):
        links = links_on(browser, campaign / lesson / "index.html")
        assert links.count(f"file://{campaign}/index.html") == 2, links  # at the top and at the bottom
    for lesson in LESSONS:  # `snakemake LESSON` makes its page without the summary: no link to it
        folder = site / lesson
        links = links_on(browser, folder / "index.html")
        assert links and all(unquote(urlparse(link).path).startswith(f"{folder}/") for link in links), links


def test_every_link_of_one_lesson_built_alone_works(browser, tmp_path):
    """`snakemake LESSON` in a copy built from clean: every link of every page it made leads to a
    file it made, followed in Chromium."""
    lesson = LESSONS[0]
    project = copy_project(tmp_path / "project")
    snakemake(project, "--cores", "2", lesson)
    assert not (project / "results" / "index.html").exists()  # the summary needs every lesson
    seen, broken = crawl(browser, project / "results" / lesson / "index.html")
    assert not broken, broken
    runs = {p.resolve() for p in (project / "results" / lesson / "runs").glob("*.html")}
    assert runs and runs <= seen


def a_right_page(folder):
    """A page with nothing wrong: a link to itself and a block narrower than the phone."""
    fixed = folder / "fixed.html"
    fixed.write_text(
        "<!DOCTYPE html><html><head><meta name='viewport' content='width=device-width'></head><body>"
        "<a href='fixed.html'>here</a><div style='width: 300px'>narrow</div></body></html>",
        encoding="utf-8",
    )
    return fixed


def test_the_checks_find_what_is_wrong_with_a_page(browser, tmp_path):
    """A page with a missing image, a dead link, a link off the machine, a script and a block wider
    than the phone: each is reported (so a page without them passed for a reason)."""
    page = tmp_path / "bad.html"
    page.write_text(
        "<!DOCTYPE html><html><head><meta name='viewport' content='width=device-width'></head><body>"
        "<img src='missing.png' alt='x'><a href='nowhere.html'>dead</a><a href='https://example.invalid/'>away</a>"
        "<div style='width: 900px'>wide</div><script>console.error('boom')</script></body></html>",
        encoding="utf-8",
    )
    problems, _, _, _ = inspect(browser, page, 390)
    assert problems["images not loaded"] == ["missing.png"]
    assert [Path(urlparse(link).path).name for link in problems["links to missing files"]] == ["nowhere.html"]
    assert problems["links off this machine"] == ["https://example.invalid/"]
    assert any("900 px" in line or "DIV" in line for line in problems["too wide"]), problems["too wide"]
    assert "boom" in " ".join(problems["console errors"])
    assert any("missing.png" in line for line in problems["console errors"])
    assert problems["scripts or event handlers"]
    ok, _, _, _ = inspect(browser, a_right_page(tmp_path), 390)
    assert not any(ok.values()), ok


HOSTILE_WORDS = (
    "<script>window.__pwned = 1; console.error('script ran')</script>\n"
    "<img src=x onerror=\"window.__pwned = 2\">\n"
    "[click me](javascript:window.__pwned=3) and <a href=\"javascript:alert(1)\">raw link</a>\n"
    "\x1b[31mred\x1b[0m, a bell\x07, a NUL \x00 and a right-to-left override \u202eevil\n"
    "# not a heading\n| not | a table |\n> not a quote\n<details open><summary>raw</summary>html</details>"
)


@pytest.fixture(scope="module")
def hostile_page(tmp_path_factory):
    """The page of the first run of the first lesson's reference build, with every message replaced
    by hostile text."""
    folder = tmp_path_factory.mktemp("hostile")
    lesson = LESSONS[0]
    build([lesson], ROOT / "recordings", folder, 1e-6, progress=lambda text: None)
    data = copy.deepcopy(pipeline.read_json(folder / lesson / "results.json"))
    for run in data["runs"].values():
        for step in run["transcript"]["steps"]:
            step["text"] = HOSTILE_WORDS
    render.write_run_pages(lesson, data, folder / lesson / "runs")
    run = next(iter(data["runs"]))
    return folder / lesson / "runs" / f"{run}.html", {**data, "runs": {run: data["runs"][run]}}


class Elements(HTMLParser):
    """Every element of an HTML document with its attributes (the standard library's parser)."""

    def __init__(self, text):
        super().__init__()
        self.found = []
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        self.found.append((tag, dict(attrs)))


def test_hostile_words_are_inert_text_set_apart(hostile_page):
    path, data = hostile_page
    html = path.read_text(encoding="utf-8")
    elements = Elements(html).found
    assert not [tag for tag, _ in elements if tag in ("script", "iframe", "object", "embed", "form")]
    assert not [(tag, name) for tag, attrs in elements for name in attrs if name.startswith("on")]
    assert all(attrs["src"].startswith("data:image/png;base64,") for tag, attrs in elements if tag == "img")
    assert all(not attrs["href"].lower().startswith("javascript") for tag, attrs in elements if tag == "a")
    assert [tag for tag, _ in elements].count("details") == 1  # the run page's own fold only
    body = html[html.index("<body>") :]
    assert "&lt;script&gt;window.__pwned = 1" in body and "&lt;details open&gt;" in body
    for raw in ("\x1b", "\x07", "\x00", "\u202e"):
        assert raw not in body, repr(raw)
    assert "\\x1b[31mred" in body and "\\x07" in body and "\\x00" in body and "\\u202eevil" in body  # written out
    policy = next(attrs["content"] for tag, attrs in elements if attrs.get("http-equiv") == "Content-Security-Policy")
    assert "default-src 'none'" in policy and "script-src" not in policy  # no script may run, even one let through


def test_hostile_words_do_nothing_in_chromium(browser, hostile_page):
    path, data = hostile_page
    session, target = browser.open(path, 390)
    try:
        browser.evaluate(session, OPEN_EVERY_FOLD)
        pwned = browser.evaluate(session, "typeof window.__pwned")
        quotes = browser.evaluate(
            session,
            "[...document.querySelectorAll('blockquote')].filter(q => q.innerText.includes('window.__pwned = 1'))"
            ".map(q => [q.querySelector('p').innerText, getComputedStyle(q).backgroundColor, q.innerText])",
        )
        headings = browser.evaluate(session, "[...document.querySelectorAll('h1')].map(h => h.innerText)")
        errors = browser.console_errors(session)
    finally:
        browser.close_tab(session, target)
    assert pwned == "undefined" and not errors, errors
    steps = sum(len(run["transcript"]["steps"]) for run in data["runs"].values())
    assert len(quotes) == steps
    for label, background, text in quotes:
        assert label.endswith("(not a result):"), label
        assert background not in ("rgba(0, 0, 0, 0)", "rgb(255, 255, 255)")  # set apart from the page
        assert "<img src=x onerror=" in text and "[click me](javascript:window.__pwned=3)" in text
        assert "# not a heading" in text and "\\x1b[31mred" in text and "\\u202eevil" in text
    assert len(headings) == 1 and "not a heading" not in headings[0]


def test_a_figure_that_is_not_next_to_the_page_is_refused(tmp_path):
    (tmp_path / "page").mkdir()
    (tmp_path / "outside.png").write_bytes(b"\x89PNG\r\n\x1a\n")
    for src in ("../outside.png", "https://example.invalid/x.png", "/etc/hostname", "figures/missing.png", "page.css"):
        with pytest.raises(ValueError, match="image"):
            html_page(f"# Page\n\n![x]({src})\n", tmp_path / "page")
