"""`replaylab campaign`: a campaign from the command line, run by the workflow.

It puts the configuration it is given (config/config.yaml's campaign section, then --config FILE,
then the options) into results/campaigns/<name>/campaign.yaml, checks it as the workflow would
(replaylab.settings), says what it will send and what that costs at most, and runs Snakemake's
`campaign` target with that file as a process it owns (replaylab.owned_workflow: whatever ends
this command, a signal, `kill -9` or its output closed, ends Snakemake and its jobs): the workflow
records, replays, judges and compares; this command only watches (the recordings on disk, and the
small progress files the recording jobs write) and shows how far it is. Run again, Snakemake
records only what is missing; two commands of one campaign at once are one too many, and the
second is refused (replaylab.ownership).
"""

import contextlib
import json
import os
import re
import signal
import sys
import time
from pathlib import Path
from urllib.parse import urlsplit

import yaml

from replaylab import campaign as plan
from replaylab import campaign_settings, owned_workflow, ownership, selection
from replaylab.agents import environment
from replaylab.agents.recording import printable
from replaylab.errors import InvalidInput
from replaylab.lessons import counted, registry

# replaylab.settings and campaign_recording are imported where they are used: every `replaylab`
# command builds this command's parser, and they would cost each one's start about 3 ms.

INTERRUPTED = 130
# What of a campaign decides the runs it records: a change of these with runs on disk would mix
# runs recorded two ways under one name.
DECIDES_RUNS = ("max_tokens_per_run", "max_seconds_per_run")


class Refused(InvalidInput):
    """One line: why the campaign does not start (nothing was sent, nothing written)."""


def _read_yaml(path, what):
    from replaylab import settings

    try:
        return settings.read_mapping(path, what)
    except settings.InputError as error:
        raise Refused(str(error)) from None


def section_of(args, folder="."):
    """The campaign section the options describe, the whole configuration with it, and where it
    came from: the project's configuration read with --config FILE over its campaign section
    (replaylab.settings), then the options; unchecked."""
    from replaylab import settings

    try:
        config, source = settings.read(folder, [args.config] if args.config else ())
    except settings.InputError as error:
        raise Refused(str(error)) from None
    section = dict(config.get("campaign") or {})
    sources = [source]
    if args.model:
        entries = {m if isinstance(m, str) else m.get("name"): m for m in section.get("models") or [] if isinstance(m, (str, dict))}
        chosen = []
        for name in (n.strip() for n in args.model.split(",")):
            if not name:
                raise Refused(f"--model {args.model}: an empty model name")
            chosen.append(entries.get(name) or {"name": name, "provider": args.provider or default_provider(name)})
        section["models"] = chosen
    for key in ("lessons", "instances", "runs", "max_connections", "name"):
        value = getattr(args, key)
        if value is not None:
            section[key] = [n.strip() for n in value.split(",")] if key == "lessons" else value
    if any(getattr(args, o) is not None for o in ("model", "lessons", "instances", "runs", "max_connections", "name")):
        sources.append("the options")
    return section, {**config, "campaign": section}, " + ".join(sources)


def default_provider(name):
    """A model of the command line names no provider: scripted's own programs are scripted's, any
    other model is asked of an OpenAI-compatible server (OPENAI_BASE_URL, OPENAI_API_KEY). A name
    that looks like a program and is none (`scripted-bogus`, a typo) is refused: it would otherwise
    be sent, and paid for, as an OpenAI model."""
    scripted = campaign_settings.unattended_provider("scripted")
    programs = tuple(scripted.models or ()) if scripted else ()
    if name in programs:
        return "scripted"
    if name.startswith("scripted-"):
        raise Refused(f"--model {name}: not a scripted program; they are: {', '.join(programs)} "
                      "(a model of an OpenAI-compatible server with this name: add --provider openai)")
    return "openai"


def _written(section):
    return yaml.safe_dump({"campaign": section}, sort_keys=False, allow_unicode=True)


def compare_with_recorded(section, path):
    """None when there is no campaign.yaml yet, else whether it is the same; `Refused` when the
    settings differ in a way that would change how the runs already on disk were recorded."""
    if not path.exists():
        return None
    before = _read_yaml(path, "the campaign's own settings").get("campaign")
    if not isinstance(before, dict) or "models" not in before:
        raise Refused(f"{path}: not a campaign's settings: remove it, or give the campaign another --name")
    old = {m.name: m.recorded() for m in campaign_settings.models(before)}
    for model in campaign_settings.models(section):
        if model.name in old and old[model.name] != model.recorded():
            raise Refused(f"{path}: the model {model.name!r} was recorded as {json.dumps(old[model.name])}, "
                          f"not {json.dumps(model.recorded())}: its runs on disk would change meaning; "
                          "give the campaign another --name")
    for key in DECIDES_RUNS:
        if before.get(key) != section.get(key):
            raise Refused(f"{path}: {key} was {before.get(key)}, not {section.get(key)}: the runs on disk were "
                          "recorded with the other; give the campaign another --name")
    return before == section


# ---------------------------------------------------------------------------------------------
# What would be sent


def host(url):
    """A server's host and port, never a path, a query or a user part (which may hold a key)."""
    try:
        found = urlsplit(url)
        return f"{found.hostname}:{found.port}" if found.port else (found.hostname or "?")
    except ValueError:
        return "?"


def endpoint_text(model):
    provider = campaign_settings.unattended_provider(model.provider)
    if provider.server is None:
        return f"the {model.provider} provider (on this machine, no server)"
    if model.base_url:
        return host(model.base_url)
    variable = model.base_url_env or provider.server
    value = environment.setting(variable)
    return f"${variable} = {host(value)}" if value else f"${variable} (not set: the provider's default server)"


DEFAULT_SERVER = "https://api.openai.com/v1"  # the openai SDK's, when no URL is given


def check_servers(campaign, missing):
    """`Refused` when a model with runs to record has runs on disk from another server than the
    one its entry now names (its variable changed since): the new runs would be another server's
    under its name."""
    for model in campaign.models:
        provider = campaign_settings.unattended_provider(model.provider)
        if provider.server is None or not missing[model.name]:
            continue
        url = model.base_url or environment.setting(model.base_url_env or provider.server) or DEFAULT_SERVER
        for lesson in campaign.lessons:
            first = next((Path(path) for name, run in campaign.runs(lesson).items() if run.model == model.name
                          and os.path.lexists(path := campaign.recording(lesson, name))), None)
            if first is None:
                continue
            try:
                server = json.loads(first.read_text(encoding="utf-8"))["provenance"].get("server")
            except (OSError, ValueError, KeyError, TypeError, AttributeError):
                continue  # the workflow's own check names a malformed recording
            if server and server != host(url):
                raise Refused(f"{first}: the model {model.name!r} was recorded from {server}; its server is now "
                              f"{host(url)}: give the campaign another --name, or point it at that server again")
            break


def plan_of(campaign, missing):
    """What a run of the campaign would send, per endpoint and model, and what it costs at most
    at the configured prices (None where no bound is known), as data (`--json`)."""
    settings = campaign.settings
    prices, limit, retries = settings["prices"], settings["max_tokens_per_run"], settings["max_retries"]
    total = sum(len(campaign.runs(lesson)) for lesson in campaign.lessons)
    todo = sum(map(len, missing.values()))
    found = {"campaign": campaign.name, "lessons": campaign.lessons, "runs_per_model_and_variant": settings["runs"],
             "instances": {lesson: len(campaign.instances(lesson)) for lesson in campaign.lessons},
             "runs": total, "on_disk": total - todo, "to_record": todo, "max_tokens_per_run": limit, "endpoints": []}
    for names in plan.endpoints(settings).values():
        first = next(m for m in campaign.models if m.name == names[0])
        key = first.key_variable()
        endpoint = {"endpoint": endpoint_text(first), "key_variable": key, "key_set": key is not None and environment.is_set(key),
                    "max_connections": settings["max_connections"], "models": []}
        for model in (m for m in campaign.models if m.name in names):
            runs = missing[model.name]
            sends = campaign_settings.unattended_provider(model.provider).server is not None
            requests = sum(registry.lesson(r.lesson).variant_of(r).max_steps for r in runs) if sends else 0
            price = prices.get(model.name)
            cost = len(runs) * limit * max(price["input"], price["output"]) / 1e6 if price and limit else None
            endpoint["models"].append({"name": model.name, "sends": sends, "runs": len(runs), "requests_at_most": requests,
                                       "requests_at_most_with_retries": requests * (1 + retries), "settings": model.settings,
                                       "priced": bool(price), "cost_at_most_usd": 0.0 if not runs else cost})
        found["endpoints"].append(endpoint)
    models = [m for e in found["endpoints"] for m in e["models"] if m["runs"] and m["sends"]]
    known = [m["cost_at_most_usd"] for m in models if m["priced"]]
    found["cost_at_most_usd"] = sum(known) if known and None not in known else None
    found["unbounded"] = [m["name"] for m in models if m["priced"] and m["cost_at_most_usd"] is None]
    return found


def plan_lines(found):
    """The plan, as a person reads it."""
    instances = sum(found["instances"].values())
    lines = [f"campaign {found['campaign']}: {found['runs']} runs ({', '.join(found['lessons'])}; "
             f"{found['runs_per_model_and_variant']} per model and variant of each of {counted(instances, 'instance', 'instances')}), "
             f"{found['on_disk']} on disk, {found['to_record']} to record"]
    for endpoint in found["endpoints"]:
        key = endpoint["key_variable"]
        said = "" if key is None else f", key in ${key} ({'set' if endpoint['key_set'] else 'NOT SET'})"
        lines.append(f"  endpoint {endpoint['endpoint']}{said}: at most {endpoint['max_connections']} requests at once")
        for model in endpoint["models"]:
            if not model["sends"]:
                lines.append(f"    {model['name']}: {counted(model['runs'], 'run', 'runs')}, made on this machine (nothing is sent)")
                continue
            text = (f"    {model['name']}: {counted(model['runs'], 'run', 'runs')}, at most {model['requests_at_most']} requests "
                    f"({model['requests_at_most_with_retries']} with every retry)")
            if model["settings"]:
                text += f", settings {json.dumps(model['settings'], sort_keys=True)}"
            if model["runs"] and model["priced"]:
                cost = model["cost_at_most_usd"]
                text += f", at most about {cost:.2f} USD" if cost is not None else ", cost not bounded (max_tokens_per_run is null)"
            elif model["runs"]:
                text += ", no price configured"
            lines.append(text)
    if found["cost_at_most_usd"] is not None:
        lines.append(f"  at most about {found['cost_at_most_usd']:.2f} USD at the configured prices (each run ends once it "
                     f"reports max_tokens_per_run = {found['max_tokens_per_run']} tokens; its last answer may pass that)")
    elif found["unbounded"]:
        lines.append(f"  cost not bounded for {', '.join(found['unbounded'])}: set max_tokens_per_run to bound it")
    return lines


# ---------------------------------------------------------------------------------------------
# Watching the workflow


class Watch:
    """How far the campaign is, from the recordings on disk (each read once, for its tokens) and
    the progress files of the recording jobs that are running."""

    def __init__(self, campaign):
        self.campaign = campaign
        self.names = {lesson: set(campaign.runs(lesson)) for lesson in campaign.lessons}
        self.total = sum(map(len, self.names.values()))
        self.usage = {}  # {path: (model, input tokens, output tokens)}
        from replaylab.campaign_recording import PROGRESS

        self.progress = Path(PROGRESS, campaign.name)
        self.log = Path("logs", "campaigns", campaign.name, "snakemake.log")

    def clear(self):
        """Progress files of an earlier run (a killed job leaves its counts behind)."""
        for path in self.progress.glob("*.json"):
            path.unlink()

    def _recorded(self):
        done = 0
        for lesson, names in self.names.items():
            folder = Path(self.campaign.recording(lesson, "x")).parent
            for path in folder.glob("*.json") if folder.is_dir() else ():
                if path.stem not in names:
                    continue
                done += 1
                if path not in self.usage:
                    self.usage[path] = self._tokens(path)
        return done

    @staticmethod
    def _tokens(path):
        """(model, input tokens, output tokens) of a recording on disk; a count it does not hold
        (none reported, or one the recorder refused as not a count: null) is 0 here."""
        try:
            provenance = json.loads(path.read_text(encoding="utf-8"))["provenance"]
            usage = provenance.get("usage") or {}
            return provenance["model"], _count(usage.get("input_tokens")), _count(usage.get("output_tokens"))
        except (OSError, ValueError, KeyError, TypeError):
            return None, 0, 0

    def _jobs(self):
        running = retries = 0
        for path in self.progress.glob("*.json"):
            try:
                counts = json.loads(path.read_text())
                running, retries = running + counts["running"], retries + counts["retries"]
            except (OSError, ValueError, KeyError, TypeError):
                continue  # being replaced: read at the next look
        return running, retries

    def _steps(self):
        """Snakemake's last "N of M steps (P%) done", from its log."""
        try:
            with open(self.log, "rb") as stream:
                stream.seek(max(0, stream.seek(0, os.SEEK_END) - 4096))
                found = re.findall(rb"(\d+) of (\d+) steps", stream.read())
        except OSError:
            return ""
        return f"; workflow: {found[-1][0].decode()} of {found[-1][1].decode()} steps done" if found else ""

    def line(self):
        done = self._recorded()
        running, retries = self._jobs()
        tokens = sum(i + o for _, i, o in self.usage.values())
        prices = self.campaign.settings["prices"]
        cost = sum((i * prices[m]["input"] + o * prices[m]["output"]) / 1e6 for m, i, o in self.usage.values() if m in prices)
        text = (f"{done} of {self.total} runs on disk, {self.total - done} left; "
                f"{counted(running, 'request', 'requests')} in flight, {retries} retried; {tokens} tokens")
        return text + (f", {cost:.4f} USD" if prices else "") + self._steps()


def _count(value):
    """A token count of a recording as a number for the progress line: 0 unless a whole number 0 or more."""
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0


def summary(folder):
    """The comparison's summary: `summary` of its scorecard.json where the comparison writes one,
    else what its page's "At a glance" says after its table (the figure and tables left out)."""
    try:
        found = json.loads((folder / "scorecard.json").read_text()).get("summary")
        if isinstance(found, str) and found:
            return found
    except (OSError, ValueError, AttributeError):
        pass
    try:
        page = (folder / "index.md").read_text()
    except OSError:
        return None
    part = page.split("\n## At a glance\n", 1)[-1].split("\n## ", 1)[0]
    after = part.split("\n|", 1)[-1]  # what follows the first table
    paragraphs = [p.strip() for p in after.split("\n\n")]
    kept = [p for p in paragraphs if p and not p.startswith(("|", "#", "![")) and "\n|" not in f"\n{p}"]
    return "\n".join(kept).replace("**", "").replace("`", "") or None  # for a terminal


def snakemake_command(target, written, cores):
    """Snakemake for one target of the workflow, with the campaign's file as configuration."""
    return [sys.executable, "-m", "snakemake", target, "--configfile", str(written), "--cores", str(cores)]


KILLED = 128  # + the number of the signal that killed Snakemake: the exit code a shell gives it (137: SIGKILL)
LOCKED = 1  # Snakemake found the project's folder locked (its own exit code then)
# What Snakemake's log says when another Snakemake holds the folder's lock, or a killed one left it
# (snakemake.exceptions.LockException, raised before any job runs)
LOCK_MESSAGES = ("LockException", "Directory cannot be locked")


def signal_name(number):
    """SIGKILL for 9; "an unknown signal" for a number Python does not name."""
    try:
        return signal.Signals(number).name
    except ValueError:
        return "an unknown signal"


def locked(log):
    """Whether Snakemake's log says it stopped on the folder's lock."""
    try:
        text = log.read_text(errors="replace")
    except OSError:
        return False
    return any(message in text for message in LOCK_MESSAGES)


# How the command ends when something stops it, and Snakemake and its jobs with it (owned_workflow):
# what it says first, and its exit code (128 + the signal, as a shell counts it; 141 for its output)
STOPPED = {signal.SIGINT: ("interrupted", INTERRUPTED),
           signal.SIGTERM: ("stopped by SIGTERM", 128 + signal.SIGTERM),
           signal.SIGHUP: ("stopped by SIGHUP (its terminal closed)", 128 + signal.SIGHUP)}
OUTPUT_CLOSED = owned_workflow.OUTPUT_CLOSED
CLOSED = "its output was closed (a broken pipe)"


def _output_fd():
    """The command's own standard output, watched for a reader that went away (None: not a file)."""
    try:
        return sys.stdout.fileno()
    except (OSError, ValueError, AttributeError):
        return None


def say_stopped(why, progress):
    """The one line of a command that something stopped, on stderr (which may be gone too)."""
    try:
        print(printable(f"replaylab: {why}: Snakemake and its jobs stopped; {progress}; the same command resumes"),
              file=sys.stderr, flush=True)
    except OSError:
        pass


def output_lost():
    """After a broken pipe on stdout: anything printed later goes nowhere, without an error at exit."""
    fd = _output_fd()
    if fd is not None:
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, fd)
        os.close(null)


def watch_workflow(target, written, cores, log_stream, keep, tick=lambda: None):
    """Run Snakemake's `target` as a process this command owns, calling `tick()` every half second
    (it raises BrokenPipeError when the output is gone) until it ends: (its exit code, None); or, when a
    signal or a closed output stops the command first, Snakemake and its jobs stopped: (None, (what
    stopped it, in words; the command's exit code))."""
    fd = _output_fd()
    with owned_workflow.signals_stop() as stopping:
        workflow = owned_workflow.start(snakemake_command(target, written, cores), log_stream, keep)
        try:
            while workflow.poll() is None and stopping.signum is None:
                time.sleep(0.5)
                if fd is not None and owned_workflow.output_closed(fd):
                    raise BrokenPipeError
                tick()
        except BrokenPipeError:
            workflow.stop()
            output_lost()
            return None, (CLOSED, OUTPUT_CLOSED)
        if stopping.signum is not None:
            workflow.stop()
            return None, STOPPED[stopping.signum]
        return workflow.wait(), None


def run_workflow(campaign, written, cores, watch, out=sys.stdout, keep=()):
    """Snakemake's `campaign` target with the campaign's file, a process this command owns
    (owned_workflow), watched until it ends; its output goes to the campaign's log. The exit code."""
    log = watch.log
    log.parent.mkdir(parents=True, exist_ok=True)
    tty = out.isatty()
    shown, last = None, 0.0

    def tick():
        nonlocal shown, last
        text = watch.line()
        if text != shown and (tty or time.monotonic() - last >= 2):
            try:
                print(f"\r{text}\033[K" if tty else text, end="" if tty else "\n", file=out, flush=True)
            except OSError as error:  # a broken pipe, or EIO from a terminal that hung up
                raise BrokenPipeError from error
            shown, last = text, time.monotonic()

    with open(log, "w") as stream:
        returncode, stopped = watch_workflow("campaign", written, cores, stream, keep, tick)
    if stopped is not None:
        why, code = stopped
        if tty and code != OUTPUT_CLOSED:
            with contextlib.suppress(OSError):  # a terminal that hung up
                print(file=out)
        say_stopped(why, watch.line().split(";")[0])
        return code
    text = watch.line()
    if tty or text != shown:
        print(f"\r{text}\033[K" if tty else text, file=out, flush=True)
    folder, where = Path.cwd(), Path.cwd() / log  # the project's folder: Snakemake's, and its lock's
    if returncode < 0:  # killed by a signal: its number, as a shell says it (128 + the number)
        number = -returncode
        print(printable(f"replaylab: Snakemake was killed by {signal_name(number)} (signal {number}): {text.split(';')[0]}; "
                        f"the same command resumes, after `snakemake --unlock` in {folder} if it finds the folder locked "
                        f"(a killed Snakemake may leave its lock); its log: {where}"), file=sys.stderr, flush=True)
        return KILLED + number
    if returncode and locked(log):
        print(printable(f"replaylab: the project folder {folder} is locked: another Snakemake holds its lock, or one was "
                        f"killed before it let go; when none runs there any more, `snakemake --unlock` in {folder} frees "
                        f"it, and the same command resumes; its log: {where}"), file=sys.stderr, flush=True)
        return LOCKED
    if returncode:
        lines = [line for line in log.read_text(errors="replace").splitlines() if "not recorded" in line or "Error" in line]
        print(f"replaylab: the workflow failed (exit {returncode}); its log: {log}", file=sys.stderr)
        for line in lines[:5]:
            print(f"  {printable(line)}", file=sys.stderr)
    return returncode


SUMMARY = Path("results/index.html")


def refresh_summary(written, cores, log, keep=(), progress=""):
    """After a campaign, the summary page of the build (results/index.html), when there is one,
    made again by Snakemake (owned as the campaign's) so that it lists the campaign as compared now;
    the exit code."""
    if not SUMMARY.exists():
        return 0
    with open(log, "a") as stream:
        code, stopped = watch_workflow(str(SUMMARY), written, cores, stream, keep)
    if stopped is not None:
        say_stopped(stopped[0], progress)
        return stopped[1]
    if code:
        print(f"replaylab: {SUMMARY} was not made again (exit {code}); its log: {log}", file=sys.stderr)
    return code


RUNNING = ("the campaign is running already, in {holder} (`replaylab campaign`, or the Snakemake it started, which "
           "ends with it): run the same command again once that has ended")


def command(args):
    """`replaylab campaign`: the exit code. Past the checks of its settings, the command owns the
    campaign's name until it ends (replaylab.ownership; a dry run, which writes nothing, aside): a
    second command of the same name is refused before it reads or writes anything."""
    from replaylab import settings

    section, config, source = section_of(args)
    try:
        checked = settings.of(config, source)
    except settings.InputError as error:
        raise Refused(str(error)) from None
    section = checked.campaign.section()  # as the schema types it
    campaign = plan.Campaign(section, checked.batch_size, source=source)
    owner = None if args.dry_run else ownership.take(Path(campaign.folder), RUNNING)
    try:
        return _run(args, section, campaign, owner)
    except BrokenPipeError:  # stdout's reader went away: not a success (Snakemake, if it ran, is stopped)
        output_lost()
        try:
            print(f"replaylab: {CLOSED}", file=sys.stderr, flush=True)
        except OSError:
            pass
        return OUTPUT_CLOSED
    finally:
        if owner is not None:
            owner.release()


def _run(args, section, campaign, owner):
    folder = Path(campaign.folder)
    written = folder / "campaign.yaml"
    same = compare_with_recorded(section, written)
    missing = plan.missing_runs(campaign)
    check_servers(campaign, missing)
    found = plan_of(campaign, missing)
    unset = campaign_settings.unset_variables([m for m in campaign.models if missing[m.name]])
    if args.json and args.dry_run:
        print(json.dumps({**found, "unset": unset, "sent": False}, ensure_ascii=True))
        return 0
    say = (lambda *_: None) if args.json else print
    for line in plan_lines(found):
        say(line)
    if args.dry_run:
        for line in unset:
            say(f"  {line}")
        say("dry run: nothing sent, nothing written")
        return 0
    if unset:
        raise Refused(f"{unset[0]}; nothing was sent")
    if same is None:
        say(f"new campaign: its settings are in {written}")
    else:
        say(f"resuming the campaign in {folder}: only the runs not on disk are recorded"
              + ("" if same else f" (its settings in {written} updated)"))
    if not same:
        folder.mkdir(parents=True, exist_ok=True)
        temporary = written.with_name(f".{written.name}.tmp")
        temporary.write_text(_written(section), encoding="utf-8")
        os.replace(temporary, written)
    watch = Watch(campaign)
    watch.clear()
    keep = (owner.fd,)  # Snakemake holds the campaign's name too: it is not free until Snakemake has ended
    code = run_workflow(campaign, written, args.cores, watch, out=open(os.devnull, "w") if args.json else sys.stdout, keep=keep)
    code = code or refresh_summary(written, args.cores, watch.log, keep, watch.line().split(";")[0])
    page = folder / "index.html"
    page = page if page.exists() else folder / "index.md"
    said = summary(folder) if code == 0 else None
    if args.json:
        print(json.dumps({**found, "exit_code": code, "summary": said, "page": str(page) if code == 0 else None,
                          "progress": watch.line()}, ensure_ascii=True))
        return code
    if code:
        return code
    if said:
        print(said)
    print(f"the comparison: {page}")
    return 0


def cores(text):
    if text == "all" or (text.isdigit() and int(text) >= 1):
        return text
    raise ValueError(f"--cores {text}: a number of at least 1, or all")


def positive(text):
    if text.isdigit() and int(text) >= 1:
        return int(text)
    raise ValueError(f"{text!r} is not a whole number of at least 1")


def add_arguments(sub):
    sub.add_argument("--model", help="the models, comma-separated: entries of the configuration's campaign by name, "
                     "else scripted's programs (scripted-careful...) or models of the OpenAI-compatible server at "
                     "OPENAI_BASE_URL (key in OPENAI_API_KEY)")
    sub.add_argument("--provider", help="the provider of --model's names that the configuration does not list")
    sub.add_argument("--lesson", dest="lessons", help="the lessons, comma-separated (every variant of each instance taken)")
    sub.add_argument("--instances", type=selection.option, metavar="SELECTION",
                     help="the instances of each lesson's family: seeds, all, or a number drawn by seed 0 "
                     "(--config takes {count, difficulty, seed})")
    sub.add_argument("--runs", type=positive, help="runs per model, per variant of each instance")
    sub.add_argument("--max-connections", type=positive, help="requests in flight to each server at once")
    sub.add_argument("--name", help="the campaign's folder, results/campaigns/NAME/ (default the configuration's)")
    sub.add_argument("--config", metavar="FILE", help="a YAML file of campaign settings (a `campaign:` section, or its keys)")
    sub.add_argument("--cores", type=cores, default="all", help="for Snakemake (default all)")
    sub.add_argument("--dry-run", action="store_true", help="say what would be sent and what it costs at most; send nothing")
