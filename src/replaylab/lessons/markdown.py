"""Shared pieces of the lesson pages: safe markdown, number texts, the allowlist and run sections.

Everything a model (or the author of a recording) wrote is untrusted text: tool names, arguments,
refusal texts that quote them, and the words of each message. It goes through `text`, `cell`,
`quote` or `fenced`, which make sure it is shown as plain text and can never break a table, open
a heading, a link or an HTML element, nor pass on a control character (`visible`). Texts made by
the build (labels, summaries) are trusted and wrapped in `Md` so that tables keep them as they are.

Every number comes from the lesson's results.json; nothing here types a number of a lesson. The
results are read strictly: a key the schema (schemas/results.schema.json) requires is indexed, and
a missing one is an error that names it; only a key the schema makes optional is looked up.
"""

import json
import math
import re
import urllib.parse
from collections.abc import Callable, Collection, Iterable, Sequence
from typing import Any

from replaylab.agents.live import client_instructions, how_it_ended
from replaylab.agents.loop import CALLS_ONLY
from replaylab.agents.tools import ACCEPTED_KEY
from replaylab.agents.recording import model_shown, printable
from replaylab.lessons import counted

NOT_VERIFIED = "not verified: the build does not run this"
NOT_MEASURED = "not measured"
# Words the HTML page (replaylab.html_page) looks for, to fold a run's messages and to make the
# evidence stand out; the Markdown reads the same without it.
FOLDED = "The messages of run"  # a heading that starts so: its section is folded
EVIDENCE = "Evidence:"  # the paragraph that gives a statement's evidence label (`evidence`)
EVIDENCE_LABEL = "numerically verified"  # every evidence label a judge gives starts so
NOT_A_RESULT = "not a result"  # in a bold statement: what follows is not a result
# How a page states the build's judgement of an answer (the HTML page colours each: right, caution, wrong).
RIGHT_AND_SUPPORTED = "The agent's answer is right, and its own experiments support it."
RIGHT_UNSUPPORTED = "A right answer its experiments do not support"
SUPPORTED_WRONG = "A supported answer that is wrong"
WRONG = "The agent's answer is wrong"
JUDGEMENTS = {RIGHT_AND_SUPPORTED: "right", RIGHT_UNSUPPORTED: "caution", SUPPORTED_WRONG: "wrong", WRONG: "wrong"}


class Md(str):
    """Markdown made by the build: put into a table or a page as it is."""


# ---------------------------------------------------------------------------------------------
# escaping of untrusted text

_ALWAYS = set("\\`*[]|#~$")
_ENTITIES = {"&": "&amp;", "<": "&lt;", ">": "&gt;"}
_LINE_START = re.compile(r"^(\d{1,9})([.)])(?=\s|$)")


def _escape_line(line: str) -> str:
    out: list[str] = []
    for i, char in enumerate(line):
        if char in _ENTITIES:
            out.append(_ENTITIES[char])
        elif char in _ALWAYS:
            out.append("\\" + char)
        elif char == "_":
            before = line[i - 1] if i > 0 else " "
            after = line[i + 1] if i + 1 < len(line) else " "
            out.append("_" if before.isalnum() and after.isalnum() else "\\_")
        else:
            out.append(char)
    escaped = "".join(out)
    if re.match(r"[-+](\s|$)", escaped) or re.fullmatch(r"[-=\s]+", escaped):
        escaped = "\\" + escaped
    return _LINE_START.sub(r"\1\\\2", escaped)


def visible(value: str) -> str:
    """Text with every control character (an ANSI escape sequence begins with one), line separator
    and bidirectional override written as an escape (ESC as \\x1b, U+202E as \\u202e), which every
    font shows; tab, line feed and carriage return are kept. The rule is the terminal's too
    (recording.printable)."""
    return printable(value, keep="\t\n\r")


def _lines(value: object) -> list[str]:
    """Untrusted text as lines, with every control character made visible (tabs stay tabs)."""
    value = value if isinstance(value, str) else str(value)
    return visible(value.replace("\r\n", "\n").replace("\r", "\n")).split("\n")


def text(value: object) -> str:
    """Untrusted text as one line of plain markdown (line breaks become spaces)."""
    return " ".join(_escape_line(line.strip()) for line in _lines(value) if line.strip())


def cell(value: object) -> str:
    """Any value as the content of a table cell: `Md` as it is, anything else escaped."""
    if isinstance(value, Md):
        return value.replace("\n", " ")
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, (int, float)):
        return number(value, "%g")
    return "<br>".join(_escape_line(line.strip()) for line in _lines(value))


def quote(value: object, prefix: str) -> str:
    """A blockquote of untrusted text, introduced by the (trusted) `prefix`."""
    lines = [f"> {prefix}", ">"]
    body = [_escape_line(line.strip()) for line in _lines(value)]
    if not any(body):
        body = ["*(no text)*"]
    lines += [f"> {line}" if line else ">" for line in body]
    return "\n".join(lines)


def fenced(value: object, info: str = "text") -> str:
    """A fenced code block that no backtick run inside `value` can close."""
    value = "\n".join(_lines(value))
    longest = max((len(run) for run in re.findall(r"`+", value)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{info}\n{value}\n{fence}"


def code(value: object) -> Md:
    """A short trusted name (a tool, a parameter, a command) as inline code; never use it for untrusted text."""
    value = " ".join(_lines(value))
    longest = max((len(run) for run in re.findall(r"`+", value)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if value.startswith("`") or value.endswith("`") else ""
    return Md(f"{fence}{pad}{value}{pad}{fence}")


# ---------------------------------------------------------------------------------------------
# numbers


def number(value: object, fmt: str = "%.6g") -> str:
    """A number as the page shows it; None (a value that was not finite) is "not measured"."""
    if value is None:
        return NOT_MEASURED
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, float) and math.isnan(value):
        return NOT_MEASURED
    return fmt % value


def join_words(words: Iterable[str], conjunction: str = "and") -> str:
    words = list(words)
    if not words:
        return "none"
    if len(words) == 1:
        return words[0]
    return f"{', '.join(words[:-1])} {conjunction} {words[-1]}"


def limit_range(low: float, high: float) -> str:
    return f"{number(low, '%g')} to {number(high, '%g')}"


# ---------------------------------------------------------------------------------------------
# tables


def table(rows: Sequence[dict[str, Any]], columns: Iterable[tuple[str, str]]) -> str:
    """A markdown table; `columns` is a list of (key, header). Cells are escaped unless `Md`."""
    if not rows:
        return "*(no rows)*"
    head = "| " + " | ".join(header for _, header in columns) + " |"
    rule = "|" + "|".join("---" for _ in columns) + "|"
    body = ["| " + " | ".join(cell(row[key]) for key, _ in columns) + " |" for row in rows]
    return "\n".join([head, rule, *body])


def figure(name: str, alt: str, caption: str) -> str:
    """An embedded figure (figures/<name>.png) that links to its file (full size on a small
    screen), with a short alternative text and a caption."""
    return f"[![{text(alt)}](figures/{name}.png)](figures/{name}.png)\n\n*Figure `{name}`: {text(caption)}*"


def name(value: object) -> Md:
    """A run, group or claim name: inline code when it is a plain identifier, else escaped text."""
    if isinstance(value, str) and re.fullmatch(r"[A-Za-z0-9_.-]{1,80}", value):
        return code(value)
    return Md(text(value))


def evidence(label: str | None) -> str:
    """The evidence label of a statement (given by the judge); None gives no label."""
    return f"{EVIDENCE} **{label}**." if label else ""


# ---------------------------------------------------------------------------------------------
# tool calls and results


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, allow_nan=True)


def call_text(name: Any, arguments: Any) -> str:
    """A tool call as plain (untrusted) text: name(key=value, ...), values as JSON."""
    shown_name = name if isinstance(name, str) else _json(name)
    if isinstance(arguments, dict):
        inner = ", ".join(f"{k}={_json(v)}" for k, v in arguments.items())
    else:
        inner = _json(arguments)
    return f"{shown_name}({inner})"


def result_text(result: dict[str, Any]) -> str | None:
    """A result as recomputed by the build, its numbers with %.6g (a name, such as the check that
    ran, as it is); None for a refusal."""
    if not result["ok"]:
        return None
    if ACCEPTED_KEY in result["content"]:  # the answer, echoed in words
        return f"accepted: {result['content'][ACCEPTED_KEY]}"
    return ", ".join(f"{k} = {v if isinstance(v, str) else number(v)}" for k, v in result["content"].items())


def refusal(result: dict[str, Any]) -> str:
    """The refusal text of a result that did not run."""
    return str(result["content"]["error"])


def result_cell(result: dict[str, Any]) -> Md:
    if result["ok"]:
        return Md(text(result_text(result)))
    return Md("refused: " + cell(refusal(result)))


def flag(value: object) -> str:
    """A yes/no value as the CSV tables write it."""
    return "true" if value else "false"


def outcome_columns(item: dict[str, Any], key: str) -> dict[str, Any]:
    """The CSV columns of an exercise's tool call (an item with ok, value and error): its value
    under `key` at full precision, as shown, or the refusal."""
    ok = item["ok"]
    return {
        "ok": flag(ok),
        key: item["value"]["value"] if ok else "",
        "shown": item["value"]["shown"] if ok else "refused: " + item["error"],
        "error": "" if ok else item["error"],
    }


def answer_fields(results: dict[str, Any]) -> list[str]:
    """The fields of the lesson's answer tool, as the allowlists print them (explanation apart)."""
    for spec in results["allowlists"].values():
        for tool in spec["tools"]:
            if tool["name"] == "answer":
                return [f for f in tool["parameters"]["properties"] if f != "explanation"]
    return []


def answer_cell(value: Any) -> Any:
    """An answer's field as a CSV cell: a list of names as "a;b", a missing field empty."""
    if value is None:
        return ""
    return ";".join(value) if isinstance(value, list) else value


def answer_rows(results: dict[str, Any]) -> list[dict[str, Any]]:
    """One row per run shown: its answer as submitted (answer_<field>, empty without an answer) and
    both judgements, with why."""
    scores = {score["run"]: score for score in results["scores"]}
    fields = answer_fields(results)
    rows: list[dict[str, Any]] = []
    for run, verdict in results["verdicts"].items():
        answer, score = verdict["answer"] or {}, scores[run]
        rows.append({
            "run": run,
            "answered": flag(verdict["answer"] is not None),
            **{f"answer_{field}": answer_cell(answer.get(field)) for field in fields},
            "right": flag(score["right"]),
            "wrong": score["wrong"] or "",
            "supported": "" if verdict["supported"] is None else flag(verdict["supported"]),
            "support": verdict["support"],
            "no_answer": verdict["no_answer"] or "",
            "explanation": verdict["explanation"] or "",
        })
    return rows


def score_of(results: dict[str, Any], run: str) -> dict[str, Any]:
    return next(score for score in results["scores"] if score["run"] == run)


def answer_statement(results: dict[str, Any], run: str, verdict: dict[str, Any], answer_text: str, truth: str,
                     label: str | None) -> list[str]:
    """What the build decided about a run's answer, the same way on every page: the answer as
    submitted, whether it is right (against `truth`, what the build computed), whether its own
    experiments support it, and the agent's explanation (shown, never judged). `answer_text`:
    the answer in words; `label`: the evidence label of the judgement."""
    score = score_of(results, run)
    if verdict["answer"] is None:
        return [f"**Run {name(run)} gave no answer**: {text(verdict['no_answer'])}. It is scored as not right; "
                "there is nothing to judge."]
    right, supported = score["right"], verdict["supported"]
    if right and supported:
        head = f"**{RIGHT_AND_SUPPORTED}**"
    elif right:
        head = f"**{RIGHT_UNSUPPORTED}**: the answer agrees with the build, but the agent's own experiments do not point at it."
    elif supported:
        head = f"**{SUPPORTED_WRONG}** ({text(score['wrong'])}): the agent's own experiments point at it, but the build's computation does not agree."
    else:
        head = f"**{WRONG}** ({text(score['wrong'])}), and its own experiments do not support it either."
    lines = [f"**Run {name(run)} answered: {text(answer_text)}.** {head}", "",
             f"- Right or wrong: {text(truth)}.",
             f"- Supported or not: {text(verdict['support'])}."]
    if verdict["explanation"]:
        lines += ["", quote(verdict["explanation"], "The agent's explanation, given with its answer (not a result, never judged):")]
    if label:
        lines += ["", evidence(label)]
    return lines


def call_rows(results: dict[str, Any]) -> list[dict[str, Any]]:
    """One row per tool call of every run, with the recomputed result (full precision as JSON)."""
    rows: list[dict[str, Any]] = []
    for run_name, run in results["runs"].items():
        for message, step in enumerate(run["transcript"]["steps"], start=1):
            for index, (call, result) in enumerate(zip(step["tool_calls"], step["results"]), start=1):
                ok = result["ok"]
                rows.append(
                    {
                        "run": run_name,
                        "message": message,
                        "call": index,
                        "tool": call["name"] if isinstance(call["name"], str) else _json(call["name"]),
                        "arguments": _json(call["arguments"]),
                        "ok": flag(ok),
                        "result": _json(result["content"]) if ok else "",
                        "error": "" if ok else refusal(result),
                        "shown": result_text(result) if ok else "refused: " + refusal(result),
                    }
                )
    return rows


# ---------------------------------------------------------------------------------------------
# sections shared by the three pages


def _parameter_row(tool: dict[str, Any], pname: str, spec: dict[str, Any], required: Collection[str]) -> dict[str, Any]:
    if "enum" in spec:
        kind, allowed = "one of", ", ".join(spec["enum"])
    elif spec["type"] == "array":
        kind, allowed = "list of names", "each at most once, of: " + ", ".join(spec["items"]["enum"])
    elif spec["type"] == "string":
        kind, allowed = "text", f"at most {spec['maxLength']} characters"
    else:
        kind = "integer" if spec["type"] == "integer" else "number"
        allowed = limit_range(spec["minimum"], spec["maximum"]) + " (inclusive)"
    return {
        "tool": code(tool["name"]),
        "parameter": code(pname),
        "kind": kind if pname in required else f"{kind}, optional",
        "allowed": allowed,
        "meaning": spec["description"],
    }


def allowlist_section(results: dict[str, Any], intro: str = "") -> str:
    """What the agent may and may not do, printed from results["allowlists"] (the code's specs)."""
    allowlists = results["allowlists"]
    groups: list[dict[str, Any]] = []  # variants with identical allowlists are shown once
    for name, spec in allowlists.items():
        for group in groups:
            if group["spec"] == spec:
                group["names"].append(name)
                break
        else:
            groups.append({"names": [name], "spec": spec})
    out = ["## What the agent may and may not do", ""]
    if intro:
        out += [intro, ""]
    out += [
        "The agent acts only through these tools; every call is checked against the bounds below "
        "before anything runs, and a call that fails the check is refused with a reason (the refusal "
        "is what the agent reads next). Any other tool name, a missing or extra argument, a number "
        f"sent as text, or a value outside its bounds is refused. The run ends with an accepted call of "
        f"{code('answer')}, whose fields are what the build judges; it is not an experiment. Printed "
        "from the code, not typed.",
        "",
    ]
    for group in groups:
        spec = group["spec"]
        names = join_words([code(n) for n in group["names"]])
        label = "Variant" if len(group["names"]) == 1 else "Variants"
        budget = spec["budget"]
        calls = spec["max_calls_per_message"]
        limits = [
            f"at most {spec['max_steps']} messages per run",
            f"at most {calls} tool calls executed per message (later calls in the same message are refused)",
            f"a budget of {counted(budget, 'experiment', 'experiments')} per run (refused calls cost nothing)"
            if budget is not None
            else "no experiment budget",
        ]
        out += [f"**{label} {names}**: " + "; ".join(limits) + ".", ""]
        rows: list[dict[str, Any]] = []
        for tool in spec["tools"]:
            required = tool["parameters"]["required"]
            for pname, pspec in tool["parameters"]["properties"].items():
                rows.append(_parameter_row(tool, pname, pspec, required))
        out += [table(rows, [("tool", "tool"), ("parameter", "parameter"), ("kind", "type"), ("allowed", "allowed values"), ("meaning", "meaning")]), ""]
        out += ["| tool | what it returns |", "|---|---|"]
        out += [f"| {code(tool['name'])} | {cell(tool['description'])} |" for tool in spec["tools"]]
        out += [""]
    return "\n".join(out)


WORDS_PREFIX = {
    "authored": "Author's words, written by a person (not a result):",
    "scripted": "Program's words (not a result):",
}


def words_prefix(run: dict[str, Any]) -> str:
    return WORDS_PREFIX.get(run["provenance"]["kind"], "Agent's words (not a result):")


def provenance_lines(run: dict[str, Any]) -> list[str]:
    p = run["provenance"]
    lines = [
        f"- **{text(run['label'])}**",
        f"- Messages produced by: {text(model_shown(p))}",
        f"- How: {text(p['how'])}",
        f"- Recorded {text(p['recorded'])} with replaylab {text(p['replaylab'])}"
        + (f"; seed {text(p['seed'])}" if "seed" in p else ""),
    ]
    client = p.get("client")  # a run recorded through MCP only
    if client:
        lines.append(f"- Through the MCP client {text(client['name'])} {text(client['version'])} "
                     "(its name and version as it reported them)")
    usage = p.get("usage")
    if usage:
        # null: the provider reported a value that is not a count (the recording's notes say which)
        lines.append("- Provider-reported usage: " + ", ".join(
            f"{text(k)} {'unknown (not a count as reported)' if v is None else text(v)}" for k, v in usage.items()))
    return lines


NOTES_SHOWN = 10


def notes_lines(notes: Sequence[dict[str, Any]]) -> list[str]:
    """What the recorder kept otherwise than the provider sent it (a usage that is not a count, a
    text cut to fit the format, ...), as its notes say: where in the recording, and what."""
    if not notes:
        return []
    lines = [f"- Kept otherwise than it came, as the recorder noted ({counted(len(notes), 'note', 'notes')}):"]
    lines += [f"  - at {text(note['where'])}: {text(note['what'])}" for note in notes[:NOTES_SHOWN]]
    if len(notes) > NOTES_SHOWN:
        lines.append(f"  - and {len(notes) - NOTES_SHOWN} more, in the recording")
    return lines


def run_section(run_name: str, run: dict[str, Any], results: dict[str, Any]) -> str:
    """One run: provenance, prompts, and each message with its calls and recomputed results."""
    transcript = run["transcript"]
    tolerance = transcript["replayed"]["tolerance"]
    out = [f"### Run {name(run_name)}", ""]
    out += provenance_lines(run)
    out += [
        f"- Variant {code(run['variant'])}, group {name(run['group'])}; "
        + how_it_ended(
            run["provenance"]["kind"], transcript["finished"], len(transcript["steps"]),
            results["allowlists"][run["variant"]]["max_steps"], transcript.get("stopped_by"),  # only a run a per-run limit ended
            results["verdicts"][run_name]["answer"] is not None, transcript.get("ended"),
        ) + ".",
        f"- Replayed by this build: every call went again through a fresh allowlist and the simulation; "
        f"each recomputed result agreed with the recording within {number(tolerance, '%g')} (relative and absolute). "
        f"The results below are the recomputed ones; the transcript as replayed: [{text(run['file'])}]({run['file']}).",
        *notes_lines(transcript.get("notes", ())),
        "",
    ]
    if run["provenance"]["kind"] == CALLS_ONLY:
        return "\n".join(out + calls_only_lines(run_name, run)).rstrip() + "\n"
    messages = counted(len(transcript["steps"]), "message", "messages")
    out += [f"#### {FOLDED} {name(run_name)}: the prompts and {messages} with every result recomputed", ""]
    out += [quote(transcript["system"], "System prompt given to the model (from the code):"), ""]
    out += [quote(transcript["task"], "Task given to the model (from the code):"), ""]
    prefix = words_prefix(run)
    for number_, step in enumerate(transcript["steps"], start=1):
        out += [f"**Message {number_}**", ""]
        out += [quote(step["text"], prefix), ""]
        if step["tool_calls"]:
            rows = [
                {"n": index, "call": call_text(call["name"], call["arguments"]), "result": result_cell(result)}
                for index, (call, result) in enumerate(zip(step["tool_calls"], step["results"]), start=1)
            ]
            out += [table(rows, [("n", "#"), ("call", "tool call (as the agent sent it)"), ("result", "result, recomputed by this build")]), ""]
        else:
            out += ["No tool call: this message ends the run, with no answer.", ""]
    return "\n".join(out).rstrip() + "\n"


def calls_only_lines(run_name: str, run: dict[str, Any]) -> list[str]:
    """An MCP run as its client saw it: the instructions it received, then its calls one by one (a
    client makes calls, never messages; the recording holds them up to 4 to a step)."""
    transcript = run["transcript"]
    calls = [(call, result) for step in transcript["steps"] for call, result in zip(step["tool_calls"], step["results"])]
    out = [f"#### {FOLDED} {name(run_name)}: the instructions and {counted(len(calls), 'call', 'calls')} with every result recomputed", ""]
    out += [quote(client_instructions(transcript["system"], transcript["task"]),
                  "Instructions the MCP client received, as its server's instructions and prompt (from the code):"), ""]
    if calls:
        rows = [{"n": index, "call": call_text(call["name"], call["arguments"]), "result": result_cell(result)}
                for index, (call, result) in enumerate(calls, start=1)]
        out += [table(rows, [("n", "call"), ("call", "tool call (as the client sent it)"), ("result", "result, recomputed by this build")]), ""]
    else:
        out += ["No call.", ""]
    return out


def run_link(run_name: str, prefix: str = "") -> str:
    """The path of a run's own page from its lesson's folder (`prefix` from elsewhere): its stable id
    is its name, runs/<run>.md (and .html)."""
    return prefix + "runs/" + urllib.parse.quote(str(run_name), safe="") + ".md"


def judgement_lines(run_name: str, results: dict[str, Any]) -> list[str]:
    """A run's answer as submitted and both judgements of it: right (against the build's own
    computation) and supported (by the run's own replayed experiments)."""
    score = score_of(results, run_name)
    verdict = results["verdicts"].get(run_name, {})
    if score["answer"] is None:
        answer = "no answer (scored as not right)"
    else:
        answer = Md(code(json.dumps(score["answer"], ensure_ascii=False, sort_keys=True)))
    lines = [
        f"- Answer, as submitted with the tool `answer`: {answer}",
        f"- Right: **{'right' if score['right'] else 'wrong'}**"
        + ("" if score["right"] else f" ({text(score['wrong'])})") + ", decided from numbers this build recomputed.",
        "- Supported by its own replayed experiments: "
        + ("not applicable (no answer)" if score["supported"] is None else "yes" if score["supported"] else "no")
        + (f" ({text(verdict['support'])})" if verdict.get("support") else "") + ".",
    ]
    if verdict.get("explanation"):
        lines += ["", quote(verdict["explanation"], "The agent's explanation, given with its answer (not a result, never judged):")]
    return lines


def run_page(run_name: str, results: dict[str, Any], heading: str) -> str:
    """The page of one run (runs/<run>.md): what it was asked, its messages with every call and
    recomputed result, its answer, both judgements and its provenance, linked back to its lesson."""
    run = dict(results["runs"][run_name], file="../" + results["runs"][run_name]["file"])
    back = f"[← {heading}](../index.md)"  # the lesson's heading: Markdown from the code, trusted
    out = [f"# Run {name(run_name)} of {heading}", "", back, "", "## What the build decided", ""]
    out += judgement_lines(run_name, results) + ["", "## The run as replayed", ""]
    out += [run_section(run_name, run, results).replace(f"### Run {name(run_name)}\n\n", "", 1), "", back]
    return "\n".join(out).rstrip() + "\n"


def verdict_cells(score: dict[str, Any]) -> dict[str, Any]:
    """A run's answer, decision and support, as the cells of a table of runs."""
    return {
        "answer": Md(text(json.dumps(score["answer"], ensure_ascii=False))) if score["answer"] else "no answer",
        "decided": "right" if score["right"] else Md("wrong: " + cell(score["wrong"])),
        "supported": "" if score["supported"] is None else score["supported"],
    }


def runs_list(results: dict[str, Any], names: Iterable[str]) -> str:
    """The runs shown on the lesson's page: a table, each linked to its own page."""
    rows: list[dict[str, Any]] = []
    for run_name in names:
        score = score_of(results, run_name)
        rows.append({
            "run": Md(f"[{name(run_name)}]({run_link(run_name)})"),
            "model": score["model"],
            "task": code(score["task"]),
            **verdict_cells(score),
            "messages": len(results["runs"][run_name]["transcript"]["steps"]),
        })
    return table(rows, [("run", "run (its page)"), ("model", "produced by"), ("task", "task"), ("answer", "answer"),
                        ("decided", "decided by the build"), ("supported", "supported"), ("messages", "messages")])


def sample_note(results: dict[str, Any]) -> str:
    """One line when the page shows a sample of the runs: how many of how many, and where the rest are."""
    counts = results["counts"]
    one, many = results["score_unit"]
    shown = len(results["scores"])
    if shown == counts["runs"]:
        return ""
    return (
        f"This page shows {shown} of the {counts['runs']} {many} in full, those worth reading first (the "
        f"reference {many}, then the wrong ones, one of each model, task and mistake before a second), and lists "
        f"{len(results['listed'])} more. Every {one} was replayed and judged the same way: each score is in "
        "`runs.csv.gz`, each verdict in `judged/`, each transcript in `transcripts/`."
    )


def runs_section(results: dict[str, Any], order: Sequence[str] | None = None) -> str:
    runs = results["runs"]
    names = order if order is not None else list(runs)
    counts = results["counts"]
    out = ["## The runs", ""]
    out += [
        "Each run is shown as this build replayed it. The words of each message were written by "
        "whoever produced the run (see its label): they are not results and the build never reads "
        "them to decide anything. Every number in the result column was computed by this build "
        "(rounded to 6 significant digits; the CSV table `run` has them at full precision).",
        "",
    ]
    note = sample_note(results)
    if note:
        out += [f"{counts['runs']} runs in all. {note}", ""]
    if not names:
        out += ["*(no runs)*", ""]
    if names:
        out += ["Each run has a page of its own: what it was asked, its messages with every call and recomputed "
                "result, its answer, both judgements and its provenance.", "", runs_list(results, names), ""]
    listed = results["listed"]
    if listed:
        one, many = results["score_unit"]
        out += [f"### {counted(len(listed), 'more ' + one, 'more ' + many)}, with their transcripts", ""]
        rows = [
            {
                "entry": Md(f"[{text(entry['run'])}]({entry['file']})"),
                "model": entry["model"],
                "task": code(entry["task"]),
                **verdict_cells(entry),
                "messages": entry["messages"],
            }
            for entry in listed
        ]
        columns = [("entry", f"{one} (its transcript)"), ("model", "produced by"), ("task", "task"), ("answer", "answer"),
                   ("decided", "decided by the build"), ("supported", "supported"), ("messages", "messages")]
        out += [table(rows, columns), ""]
        rest = counts["runs"] - len(results["scores"]) - len(listed)
        if rest:
            out += [f"{counted(rest, 'more ' + one, 'more ' + many)} are in `runs.csv.gz`, each with its transcript in `transcripts/`.", ""]
    return "\n".join(out)


def interval(row: dict[str, Any]) -> str:
    """The 95 % Wilson interval of a scorecard row, in whole per cent."""
    return f"{100 * row['low']:.0f} % to {100 * row['high']:.0f} %"


def scorecard_section(results: dict[str, Any]) -> str:
    """How often the runs gave the right answer, per model or program, decided by the build, with how
    many answered and how many answers their own experiments support."""
    rows = results["scorecard"]
    one, many = results["score_unit"]
    out = [
        "## Scorecard",
        "",
        f"Right answer, as the build decides it from recomputed numbers: {text(results['right_answer'])} A run "
        f"with no answer is not right, and the words of a run never change its score. The interval is the 95 % "
        f"Wilson score interval of the share of right {many}. **Supported**: the run's own experiments point at its "
        "answer; the two columns after it count the right answers they do not support and the supported answers "
        "that are wrong.",
        "",
    ]
    if not rows:
        return "\n".join(out + [f"*(no {many})*", ""])
    table_rows: list[dict[str, Any]] = []
    for r in rows:
        mistakes = "; ".join(f"{text(m['what'])} ({m['runs']})" for m in r["mistakes"]) or "none"
        table_rows.append(
            {
                "model": r["model"],
                "task": code(r["task"]),
                "runs": r["runs"],
                "answered": r["answered"],
                "right": f"{r['right']} ({100 * r['rate']:.0f} %)",
                "interval": interval(r),
                "supported": r["supported"],
                "right_unsupported": r["right_unsupported"],
                "supported_wrong": r["supported_wrong"],
                "calls": f"{r['mean_calls']:.3g} ({r['mean_budget_used']:.3g} ran)",
                "mistakes": mistakes,
            }
        )
    columns = [("model", "model or program"), ("task", "task"), ("runs", many), ("answered", "answered"), ("right", "right"),
               ("interval", "95 % interval"), ("supported", "supported"), ("right_unsupported", "right, not supported"),
               ("supported_wrong", "supported, wrong"), ("calls", "mean tool calls"), ("mistakes", f"what the wrong {many} got wrong")]
    out += [table(table_rows, columns), ""]
    few = [r for r in rows if not r["conclusive"]]
    for r in few:
        out += [
            f"- **Too few {many} to conclude anything** about {text(r['model'])} ({code(r['task'])}): "
            f"with {counted(r['runs'], one, many)}, the share of right answers could be anywhere "
            f"from {interval(r)}."
        ]
    if few:
        out.append("")
    out += [figure("scorecard", "scorecard", f"Share of {many} that reached the right answer, with its 95 % interval."), ""]
    from replaylab.lessons.scorecard import SCORECARD_COLUMNS  # pandas: only the render job writes this page

    out += ["The columns of `scorecard.csv` and `scorecard.json` (the same names in both):", ""]
    out += [f"- {code(column)}: {text(explanation)}" for column, explanation in SCORECARD_COLUMNS.items()]
    return "\n".join(out + [""])


def _share(right: int, runs: int) -> str:
    return f"{right} of {runs} ({100 * right / runs:.0f} %)" if runs else "no run"


def family_section(results: dict[str, Any]) -> str:
    """The lesson's family: its instances per difficulty, how the runs did on each level, the
    instances they never got right, and the careful and the trivial program on every instance."""
    family = results["family"]
    one, many = results["score_unit"]
    careful, trivial = family["baselines"]["careful"], family["baselines"]["trivial"]
    seeds = join_words([code(i) for i in family["seeds"]])
    out = [
        "## The family of instances",
        "",
        f"This lesson is a family of {counted(family['instances'], 'instance', 'instances')}: the same question with its own "
        f"numbers, drawn from stated ranges by the family's seed, each with a difficulty level and its answer computed by "
        f"this build (`instances.csv`; `replaylab tasks` lists them without their answers); the seeds' own "
        f"{'question is' if len(family['seeds']) == 1 else 'questions are'} {seeds}. Two programs ran on every instance through the same harness, judged like any run: the **careful** "
        f"program ({code(careful['strategy'])}), right on every instance, which shows each is solvable as posed with the "
        f"tools and the budget (an instance it got wrong would have stopped the build), and the **trivial** one "
        f"({code(trivial['strategy'])}: no experiment, or a fixed guess), the floor a model has to beat. They are scripted "
        "programs, not language models, and are not among the runs below.",
        "",
    ]
    careful_by = {row["difficulty"]: row for row in careful["by_difficulty"]}
    trivial_by = {row["difficulty"]: row for row in trivial["by_difficulty"]}
    rows = [{"difficulty": row["difficulty"], "instances": row["instances"], "taken": row["taken"],
             "right": _share(row["right"], row["runs"]),
             "careful": _share(careful_by[row["difficulty"]]["right"], careful_by[row["difficulty"]]["runs"]),
             "trivial": _share(trivial_by[row["difficulty"]]["right"], trivial_by[row["difficulty"]]["runs"])}
            for row in family["by_difficulty"]]
    rows.append({"difficulty": "all", "instances": family["instances"], "taken": family["instances"] - family["not_taken"],
                 "right": _share(sum(r["right"] for r in family["by_difficulty"]), sum(r["runs"] for r in family["by_difficulty"])),
                 "careful": _share(careful["right"], careful["runs"]), "trivial": _share(trivial["right"], trivial["runs"])})
    out += [table(rows, [("difficulty", "difficulty"), ("instances", "instances"), ("taken", f"instances with {many}"),
                         ("right", f"{many} right"), ("careful", "careful program right"), ("trivial", "trivial program right")]), ""]
    if family["never_right_count"]:
        listed = join_words([code(i) for i in family["never_right"]])
        more = family["never_right_count"] - len(family["never_right"])
        out += [f"Instances the {many} took and never got right ({family['never_right_count']}): {listed}"
                + (f", and {more} more (`runs.csv.gz` has every run)" if more else "") + ".", ""]
    elif family["not_taken"] < family["instances"]:
        out += [f"The {many} got every instance they took right at least once.", ""]
    if family["not_taken"]:
        out += [f"{counted(family['not_taken'], 'instance', 'instances')} of the family had no run in this build.", ""]
    return "\n".join(out)


def recording_section(results: dict[str, Any]) -> str:
    """How to record a new run: commands only, marked as not verified by the build."""
    lesson = results["lesson"]
    variants = list(results["allowlists"])
    out = [
        "## How to record a new run",
        "",
        f"*{NOT_VERIFIED}.* These commands are given for convenience; the build that made this page did not run them.",
        "",
        "From a file of messages you wrote (a JSON object with a list `messages`, each "
        '`{"text": ..., "tool_calls": [{"id": ..., "name": ..., "arguments": {...}}]}`), '
        "run through the allowlist and the simulation:",
        "",
        fenced(f"replaylab record {lesson} --provider authored --from FILE --run NAME", "sh"),
        "",
        "Typing the messages yourself, one JSON line at a time:",
        "",
        fenced(f"replaylab session {lesson} --variant V --run NAME", "sh"),
        "",
        f"where V is one of: {join_words([code(v) for v in variants], 'or')}.",
        "",
    ]
    runs = results["runs"]
    if runs:
        out += ["To record a run of this page again with the current code:", ""]
        out += [fenced("\n".join(run["rerecord"] for run in runs.values()), "sh"), ""]
    return "\n".join(out)


def tables_section(lesson_tables: Iterable[str], shown_here: Collection[str], extra: Iterable[str] = (),
                   sampled: bool = False, empty: Collection[str] = ()) -> str:
    """A list of the CSV files of the page (full precision), and the tables not shown above; a
    table with no rows in this build is named, not linked (its file is empty)."""
    out = ["## Tables", "", "Every table is also a CSV file with values at full precision:", ""]
    out += [f"- {t}: no rows in this build" if t in empty else
            f"- [{t}](tables/{t}.csv)" + (" (shown above)" if t in shown_here else "") for t in lesson_tables]
    if sampled:
        out += ["- [runs.csv.gz](runs.csv.gz): every judged run, its score and the tokens reported "
                "(the tables above hold the runs this page shows)"]
    out += [""]
    for part in extra:
        out += [part, ""]
    return "\n".join(out)


def judged_entries(entries: dict[str, Any], lines_of: Callable[[str, Any], list[str]], what: str = "run") -> list[str]:
    """The "What the build decided" lines of each judged entry ({name: verdict}), or one line saying
    there is none: the same on every lesson's page."""
    if not entries:
        return [f"*(no {what} to judge)*", ""]
    return [line for entry_name, entry in entries.items() for line in lines_of(entry_name, entry)]


def conclusion_lines(statement: Iterable[str], run: str, rows: dict[str, list[dict[str, Any]]], table_name: str) -> list[str]:
    """A statement of the build about a run, then its rows of the table `table_name`."""
    mine = [r for r in rows[table_name] if r["run"] == run]
    return [*statement, "", f"Table `{table_name}` (run {name(run)}):", "",
            table(mine, [("quantity", "quantity"), ("shown", "value"), ("unit", "unit")]), ""]


def empty_tables(results: dict[str, Any]) -> set[str]:
    """The lesson's tables that have no rows in this build."""
    from replaylab.lessons import registry

    return {name for name, rows in registry.lesson(results["lesson"]).tables(results).items() if not rows}


def section(lines_or_text: str | Iterable[str]) -> str:
    return lines_or_text if isinstance(lines_or_text, str) else "\n".join(lines_or_text)


def lesson_page(results: dict[str, Any], *, title: str, question: str, intro: str, decisions: str | Iterable[str],
                demos: str | Iterable[str], tables: tuple[Iterable[str], Collection[str], Iterable[str]], figure: str,
                runs_order: Sequence[str] | None = None, allowlist_intro: str = "") -> str:
    """A lesson's page: the sections every lesson has, in the same order, around what is the
    lesson's own. `tables` is (the lesson's table names, those shown on the page, the extra table
    lines); `figure` is the Markdown of its figure, shown after the decisions it illustrates."""
    parts = [
        f"# {title}",
        "",
        f"**Question:** {question}",
        "",
        intro,
        "",
        allowlist_section(results, allowlist_intro),
        section(decisions),
        *([sample_note(results), ""] if sample_note(results) else []),
        figure,
        "",
        scorecard_section(results),
        family_section(results),
        runs_section(results, runs_order),
        section(demos),
        tables_section(*tables, sampled=bool(sample_note(results)), empty=empty_tables(results)),
        recording_section(results),
    ]
    return "\n".join(parts).rstrip() + "\n"
