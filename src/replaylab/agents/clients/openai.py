"""The `openai` provider: OpenAI chat completions with tools, through the official SDK.

The only module that imports the SDK, and only when a client is made (importing it costs about
0.4 s, which the command line and the workflow do not pay to list the providers). Any
OpenAI-compatible server works through the base URL (OPENAI_BASE_URL or --base-url). The key is
read once into a `Secret` and handed to the SDK as a callable, so its value is read only when a
request is made; every message, error and log record that comes back is cleaned of it before
anything else sees it.

Retries are the SDK's: 408, 409, 429, 5xx, timeouts and dropped connections are retried up to
`max_retries` times with exponential backoff (0.5 s doubling to 8 s, less up to a quarter of
jitter), or after the server's Retry-After (retry-after-ms, Retry-After) when it gives one of at
most two minutes. No redirect is followed: a 3xx is one line naming both hosts, and the key goes to
the configured server only.

Time is bounded per request as a whole, not per read: every read and write of a connection waits
at most until the request's deadline (its `timeout` from its start) and the run's (its
`max_seconds_per_run`), so a server that trickles its answer a byte at a time, or never ends it,
holds a run no longer than either. The run's deadline ends the run (the loop's `OutOfTime`), with
no retry, and so does a retry whose wait (backoff or Retry-After) would pass it: it is not waited
for, and a note says so.

What the provider answered is kept, within what a recording holds: a count of tokens that is not
one (absent, null, negative, absurd, not a whole number) is recorded as null, calls past the
recording's limit are cut, and half a character is replaced; each with a note in the recording
(`notes`). A count that is not one never lifts `max_tokens_per_run` (`tokens_used`): it is counted
as the most the provider may bill for it, or, with no bound known, the run stops at the limit.
"""

import functools
import json
import logging
from collections.abc import Iterable
from types import ModuleType
from typing import Any

from replaylab.agents import environment
from replaylab.agents.clients import Options, Provider, ProviderError, record_command, register
from replaylab.agents.loop import OutOfTime
from replaylab.agents.messages import ModelMessage, ToolCall
from replaylab.agents.names import file_safe
from replaylab.agents.recording import (
    CALL_DEPTH, MAX_CALLS, MAX_DEPTH, MAX_TOKENS, has_surrogate, nesting, printable, recording_text, unique_keys,
)
from replaylab.agents.recording import Recording
from replaylab.agents.secrets import Secret, clean_text

KEY_VARIABLE = "OPENAI_API_KEY"
BASE_URL_VARIABLE = "OPENAI_BASE_URL"
DEFAULT_MODEL = "gpt-4o-mini"
DEFAULT_BASE_URL = "https://api.openai.com/v1"  # the SDK's, when OPENAI_BASE_URL is not set (doctor asks it)
TIMEOUT_S = 60.0
MAX_RETRIES = 4
HOW = (
    "Recorded run: the model answered through an OpenAI-compatible chat completions API with tools; "
    "the harness checked every call against the allowlist and computed every result."
)


def _sdk() -> ModuleType:
    """The SDK, imported on first use."""
    import openai

    return openai


@functools.cache
def _sdk_client_class() -> Any:
    """The SDK's client, whose retries wait only within the run's time: before each wait (its
    backoff, or the server's Retry-After), `before_wait` ends the run instead when the run's
    deadline comes first."""
    before_wait = _http().before_wait

    class Client(_sdk().OpenAI):  # type: ignore[misc]  # the SDK is imported on first use: Any to mypy
        def _calculate_retry_timeout(self, remaining_retries: int, options: Any, response_headers: Any = None) -> float:
            wait = float(super()._calculate_retry_timeout(remaining_retries, options, response_headers))
            asked = None if response_headers is None else response_headers.get("retry-after")
            before_wait(wait, f"the provider asked for a retry after {printable(asked)[:40]} s (Retry-After)" if asked
                        else "the request failed in a way worth a retry")
            return wait

    return Client


def _http_client() -> Any:
    """The process's one HTTP client, bounded in time (replaylab.http_deadlines)."""
    from openai._constants import DEFAULT_CONNECTION_LIMITS

    return _http().http_client(_sdk().DefaultHttpxClient, DEFAULT_CONNECTION_LIMITS)


def _http() -> ModuleType:
    """The HTTP layer bounded in time (replaylab.http_deadlines), imported with the SDK."""
    from replaylab import http_deadlines

    return http_deadlines


def _clean_log_records(secrets: Iterable[Secret | str | None]) -> None:
    """Make every log record, of any logger and level, without the key (the SDK and its HTTP
    library log at DEBUG; a logger's own filter would miss its child loggers)."""
    previous = logging.getLogRecordFactory()

    def factory(*args: Any, **kwargs: Any) -> logging.LogRecord:
        record = previous(*args, **kwargs)
        try:
            text = record.getMessage()
        except Exception:  # a record whose arguments don't fit its format: keep only the format
            text = str(record.msg)
        cleaned = clean_text(text, secrets)
        if cleaned != text:
            record.msg, record.args = cleaned, ()
        return record

    logging.setLogRecordFactory(factory)


def _request_messages(system: str, conversation: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = [{"role": "system", "content": system}]
    for item in conversation:
        if item["role"] == "user":
            messages.append({"role": "user", "content": item["content"]})
        elif item["role"] == "assistant":
            message = item["message"]
            entry: dict[str, Any] = {"role": "assistant", "content": message.text or None}
            if message.tool_calls:
                entry["tool_calls"] = [
                    {
                        "id": call.id,
                        "type": "function",
                        "function": {
                            "name": call.name if isinstance(call.name, str) else json.dumps(call.name),
                            "arguments": call.arguments if isinstance(call.arguments, str) else json.dumps(call.arguments),
                        },
                    }
                    for call in message.tool_calls
                ]
            messages.append(entry)
        else:
            result = item["result"]
            messages.append({"role": "tool", "tool_call_id": result.call_id, "content": json.dumps(result.content)})
    return messages


def _arguments(text: str) -> Any:
    """The model's arguments as JSON data; text that is not JSON (or nested deeper than a recording
    holds) stays text, which the allowlist refuses."""
    try:
        value = json.loads(text, object_pairs_hook=unique_keys)
    except (TypeError, ValueError, RecursionError):  # a key twice is a ValueError too: no last one wins
        return text
    return value if nesting(value) + CALL_DEPTH <= MAX_DEPTH else text


def _expect(value: Any, kinds: type | tuple[type, ...], where: str, expected: str) -> Any:
    """`value` if it is one of `kinds`; else the ProviderError saying what the answer holds there."""
    if isinstance(value, kinds):
        return value
    raise ProviderError(
        f"the provider's answer is not a chat completion: {where} is {type(value).__name__}, not {expected}"
    )


def _message(response: Any) -> Any:
    """The first choice's message of a response, each field checked: a server that answers with
    something else is one ProviderError line, never an AttributeError later."""
    from openai.types.chat import ChatCompletion, ChatCompletionMessage, ChatCompletionMessageFunctionToolCall
    from openai.types.chat.chat_completion import Choice
    from openai.types.chat.chat_completion_message_function_tool_call import Function

    _expect(response, ChatCompletion, "$", "an object")
    choices = _expect(response.choices, list, "$.choices", "a list")
    if not choices:
        raise ProviderError("the provider answered with no message")
    where = "$.choices[0].message"
    message = _expect(_expect(choices[0], Choice, "$.choices[0]", "an object").message, ChatCompletionMessage, where, "an object")
    _expect(message.content, (str, type(None)), f"{where}.content", "text")
    for i, call in enumerate(_expect(message.tool_calls, (list, type(None)), f"{where}.tool_calls", "a list") or ()):
        at = f"{where}.tool_calls[{i}]"
        _expect(call, ChatCompletionMessageFunctionToolCall, at, "a function call")
        _expect(call.id, str, f"{at}.id", "text")
        _expect(_expect(call.function, Function, f"{at}.function", "an object").name, str, f"{at}.function.name", "text")
        _expect(call.function.arguments, str, f"{at}.function.arguments", "text")
    return message


def _host(url: Any) -> str:
    """The host (and port) of an HTTP library's URL, never its user part, path or query (they may hold a key)."""
    return f"{url.host}:{url.port}" if url.port else str(url.host)


def _describe(error: Exception, timeout: float, key_variable: str = KEY_VARIABLE, server: str = "") -> str:
    """A provider's failure in one line, naming the variable the key came from and the server's host."""
    openai = _sdk()
    status = error.status_code if isinstance(error, openai.APIStatusError) else None
    at = f" at {server}" if server else ""
    if status is not None and 300 <= status < 400:
        failed: Any = error  # an APIStatusError (it has a status): the answer is its `response`
        response = failed.response
        location = str(response.headers.get("location") or "")
        try:
            to = _host(response.url.join(location)) if location else "nowhere (no Location)"
        except Exception:  # the HTTP library's own error for a Location that is not a URL
            to = "a Location that is not a URL"
        return (f"the provider{at} redirected the request to {to} (HTTP {status}): not followed, the key is sent to "
                f"the configured server only; give the server's own URL ({BASE_URL_VARIABLE} or --base-url)")
    if isinstance(error, openai.AuthenticationError):
        return f"the provider{at} refused the key in {key_variable} ({status}): {error}"
    if isinstance(error, openai.APITimeoutError):
        return f"the provider{at} did not answer within {timeout:g} s (after retries)"
    if isinstance(error, openai.APIConnectionError):
        return f"could not reach the provider{at}: {error}"
    if status is not None:
        return f"the provider answered {status}: {error}"
    return f"{type(error).__name__}: {error}"


def _count(value: object) -> int | None:
    """A token count as reported, if it is one a recording holds (0 to MAX_TOKENS), else None."""
    if isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= MAX_TOKENS:
        return value
    return None


def _shown(value: object) -> str:
    """A reported value, on a short line (a count of 10**30 is shown by its size)."""
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) >= 10**15:
        return f"a number of {len(str(abs(value)))} digits"
    return printable(repr(value))[:60]


def _usage_as_sent(body: bytes) -> dict[str, Any] | None:
    """The answer's `usage` object as the server sent it (the SDK reads "12" as 12, or not, depending
    on the rest of the object: a count is a JSON whole number, read here), or None."""
    try:
        usage = json.loads(body).get("usage")
    except (ValueError, RecursionError, AttributeError):  # the SDK parsed it: not reached but for a body it took otherwise
        return None
    return usage if isinstance(usage, dict) else None


def _max_output(settings: dict[str, Any]) -> int | None:
    """The most tokens a request lets the model write (its `max_completion_tokens`, else its
    `max_tokens`, when a count), or None when it sets no such bound."""
    for name in ("max_completion_tokens", "max_tokens"):
        count = _count(settings.get(name))
        if count:
            return count
    return None


USAGE_FIELDS = (("input_tokens", "prompt_tokens"), ("output_tokens", "completion_tokens"))


def _settings_sent(settings: dict[str, Any]) -> dict[str, Any]:
    """The request's fields of a model's generation settings: passed as they are in the JSON body
    (`extra_body`), so that a field the SDK does not know, but the server takes, is sent too."""
    return {"extra_body": dict(settings)} if settings else {}


SERVED_MAX = 20  # distinct answers kept of each field a server reports (a run asks one model)


def _served(response: Any, secrets: Iterable[Secret | str | None]) -> dict[str, str]:
    """What the server said of itself in one answer: the model it answered as, and its
    `system_fingerprint` where given; each cleaned of the key, printable and cut to 200 characters
    (a server's text, shown on pages), None when absent or not text."""
    found: dict[str, str] = {}
    for field, value in (("model", response.model), ("system_fingerprint", response.system_fingerprint)):
        if isinstance(value, str) and value:
            found[field] = printable(clean_text(value, secrets))[:200]
    return found


class OpenAIClient:
    def __init__(self, model: str, key: Secret, base_url: str | None = None, timeout: float = TIMEOUT_S,
                 max_retries: int = MAX_RETRIES, settings: dict[str, Any] | None = None,
                 key_variable: str = KEY_VARIABLE) -> None:
        self.model = model
        self.key_variable = key_variable
        self.settings = dict(settings or {})
        self.served: dict[str, list[str]] = {"model": [], "system_fingerprint": []}
        self.secrets = (key,)
        self.usage: dict[str, int | None] = {"input_tokens": 0, "output_tokens": 0}
        self.usage_reported = False  # some answer held a usage object
        self._silent: list[int] = []  # the steps whose answer held no usage object
        self.counted = 0  # tokens counted towards max_tokens_per_run (tokens_used)
        self.unbounded: str | None = None  # why a count had no bound (the run stops at a token limit), or None
        self._bounded: dict[str, str] = {}  # {side: how its first count that is not one was counted}: noted when a limit asks
        self.request_ids: list[str] = []
        self.notes: list[dict[str, str]] = []  # what the recording holds otherwise than the provider sent it: {"where", "what"}
        self.deadline: float | None = None  # time.monotonic() at which the run's time is up (the loop sets it), or None
        self._timeout = timeout
        self._sdk = _sdk_client_class()(api_key=key.reveal, base_url=base_url, timeout=timeout, max_retries=max_retries,
                                              http_client=_http_client())
        # the server's host (and port), never its path, query or user part, which may hold a key
        url = self._sdk.base_url
        self.server = clean_text(_host(url), self.secrets)
        _clean_log_records(self.secrets)

    def complete(self, system: str, conversation: list[dict[str, Any]], tools: list[dict[str, Any]]) -> ModelMessage:
        step = sum(1 for item in conversation if item["role"] == "assistant")  # the step this answer becomes
        deadlines = _http().deadlines
        deadlines.request_s, deadlines.run_at = self._timeout, self.deadline
        messages = _request_messages(system, conversation)
        functions = [{"type": "function", "function": spec} for spec in tools]
        try:
            raw = self._sdk.chat.completions.with_raw_response.create(
                model=self.model, messages=messages, tools=functions, **_settings_sent(self.settings),
            )
            response = raw.parse()
            usage = _usage_as_sent(raw.http_response.content)
        except _http().RunOver as over:
            if str(over):  # a retry's wait refused: the run ends before its deadline, said why
                self._note("$.stopped_by", clean_text(f"request {step + 1}: {over}", self.secrets)[:500])
            raise OutOfTime(f"the run's time ran out while the provider answered request {step + 1}") from None
        except _sdk().OpenAIError as error:
            raise ProviderError(clean_text(_describe(error, self._timeout, self.key_variable, self.server),
                                           self.secrets)) from None
        except ValueError as error:  # the SDK's JSON parser: a body that is not JSON
            raise ProviderError(clean_text(f"the provider's answer is not JSON: {error}", self.secrets)) from None
        except RecursionError:  # the SDK's JSON parser, on a body of arrays inside arrays
            raise ProviderError("the provider's answer is not JSON: nested too deep for a chat completion") from None
        finally:
            deadlines.request_s = deadlines.run_at = deadlines.at = None
        message = _message(response)
        self._note_served(response)
        request_id = response._request_id  # from the x-request-id header; None when absent
        if request_id:
            # cleaned of the key (a server may echo it), and printable (it is shown on pages)
            self.request_ids.append(printable(clean_text(recording_text(request_id), self.secrets))[:200])
        self._count_usage(usage, step, len(json.dumps({"messages": messages, "tools": functions})))
        return self._kept(message, step)  # the loop cleans it of secrets before anything sees it

    def _note(self, where: str, what: str) -> None:
        self.notes.append({"where": where, "what": what})

    def _count_usage(self, usage: dict[str, Any] | None, step: int, request_size: int) -> None:
        """Add an answer's usage to the run's, and to the tokens counted towards a token limit. A
        count that is not one (absent, null, negative, absurd, not a whole number) makes its side of
        the run's usage unknown (null), with a note: the run is kept, and no total is invented.
        Towards the limit it counts as the most the provider may bill for it (`_bound`)."""
        reported = None if usage is None else {side: usage.get(field) for side, field in USAGE_FIELDS}
        if reported is None:
            self._silent.append(step)
        elif not self.usage_reported:
            self.usage_reported = True
            for side, _ in USAGE_FIELDS:  # earlier answers held no usage: their tokens are unknown
                if self._silent:
                    self._unknown(side, f"the provider reported no usage in its answer {self._silent[0] + 1}")
        for side, field in USAGE_FIELDS:
            value = None if reported is None else reported[side]
            count = _count(value)
            if self.usage_reported:
                if count is None:
                    said = "no usage" if reported is None else f"{field} {_shown(value)}"
                    self._unknown(side, f"the provider reported {said} in its answer {step + 1}, which is not a count "
                                        f"of tokens (0 to {MAX_TOKENS})")
                used = self.usage[side]
                self.usage[side] = None if count is None or used is None else min(used + count, MAX_TOKENS)
            self.counted = min(self.counted + (self._bound(side, field, step, request_size) if count is None else count),
                               MAX_TOKENS)

    def _unknown(self, side: str, why: str) -> None:
        """Make a side of the run's usage unknown (null), with a note the first time."""
        if self.usage[side] is not None:
            self._note(f"$.provenance.usage.{side}", f"{why}: recorded as null (unknown)")
        self.usage[side] = None

    def _bound(self, side: str, field: str, step: int, request_size: int) -> int:
        """The most the provider may bill for a count it did not give as one: for the prompt, the
        size of the request's messages and tools as JSON (a tokenizer makes at most one token of
        each byte of text); for the completion, the request's max_completion_tokens (or
        max_tokens). Without one, 0 here and `unbounded` says why: the run stops at a token limit.
        How the first of each side was counted is noted when a limit asks (`tokens_used`)."""
        bound = request_size if side == "input_tokens" else _max_output(self.settings)
        if bound is None:
            self.unbounded = self.unbounded or (
                f"the provider's {field} of its answer {step + 1} is not a count, and the request set no "
                "max_completion_tokens nor max_tokens to bound it")
        if side not in self._bounded:
            self._bounded[side] = (
                f"{field} of answer {step + 1} counted towards max_tokens_per_run as {bound}, the most the provider may "
                + ("bill for it (the request's size in bytes; at most one token per byte)" if side == "input_tokens"
                   else "bill for it (the request's max_completion_tokens or max_tokens)")
                if bound is not None else
                f"{field} of answer {step + 1} has no bound (the request set no max_completion_tokens nor max_tokens): "
                "the run stops there (max_tokens_per_run)")
        return bound or 0

    def _kept(self, message: Any, step: int) -> ModelMessage:
        """The message as a recording holds it: at most MAX_CALLS calls, no half characters; each
        change noted."""
        at = f"$.steps[{step}]"
        text = message.content or ""
        if has_surrogate(text):
            text = recording_text(text)
            self._note(f"{at}.text", "the text held half of a character (a lone surrogate), which no UTF-8 text "
                                     "holds: replaced by U+FFFD")
        sent = list(message.tool_calls or ())
        if len(sent) > MAX_CALLS:
            self._note(f"{at}.tool_calls", f"the message held {len(sent)} tool calls; a recording holds at most "
                                           f"{MAX_CALLS} per message: the first {MAX_CALLS} are kept")
            sent = sent[:MAX_CALLS]
        calls = []
        for i, call in enumerate(sent):
            fields = {"id": call.id, "name": call.function.name, "arguments": call.function.arguments}
            for field, value in fields.items():
                if has_surrogate(value):
                    fields[field] = recording_text(value)
                    self._note(f"{at}.tool_calls[{i}].{field}", "held half of a character (a lone surrogate), which "
                                                                "no UTF-8 text holds: replaced by U+FFFD")
            calls.append(ToolCall(fields["id"], fields["name"], _arguments(fields["arguments"])))
        return ModelMessage(text, tuple(calls))

    def _note_served(self, response: Any) -> None:
        for field, value in _served(response, self.secrets).items():
            if value not in self.served[field] and len(self.served[field]) < SERVED_MAX:
                self.served[field].append(value)

    def served_provenance(self) -> dict[str, Any]:
        """The settings sent with every request, and what the server reported back."""
        extra: dict[str, Any] = {"settings": dict(self.settings)} if self.settings else {}
        if self.served["model"]:
            extra["served_models"] = list(self.served["model"])
        if self.served["system_fingerprint"]:
            extra["system_fingerprints"] = list(self.served["system_fingerprint"])
        return extra

    def tokens_used(self) -> int:
        """Tokens counted towards max_tokens_per_run so far: each count as the provider reported it,
        and each that is not one as the most the provider may bill for it (`_bound`); past a count
        with no bound, `unbounded` says why, and the run stops (loop.Limits). Asked only by a token
        limit, after each message: how each side's first count that is not one was counted is
        noted then (a run without a limit is not told of a limit it does not have)."""
        for side in list(self._bounded):
            if self._bounded[side]:
                self._note("$.provenance.usage", self._bounded[side])
                self._bounded[side] = ""
        return self.counted

    def tokens_unbounded(self) -> str | None:
        """Why a count of this run has no bound (a token limit then stops the run), or None."""
        return self.unbounded

    def provenance_extra(self) -> dict[str, Any]:
        """The server's host, and only what the provider reported: token usage and request ids."""
        extra: dict[str, Any] = {"server": self.server}
        if self.usage_reported:
            extra["usage"] = dict(self.usage)
        if self.request_ids:
            extra["request_ids"] = list(self.request_ids[:1000])
        return {**extra, **self.served_provenance()}


def make_client(options: Options) -> OpenAIClient:
    key = environment.secret(options.key_variable or KEY_VARIABLE)
    return OpenAIClient(
        options.model or DEFAULT_MODEL,
        key,
        options.base_url or environment.setting(BASE_URL_VARIABLE),
        timeout=TIMEOUT_S if options.timeout is None else options.timeout,
        max_retries=MAX_RETRIES if options.max_retries is None else options.max_retries,
        settings=options.settings,
        key_variable=options.key_variable or KEY_VARIABLE,
    )


def rerecord(recording: Recording) -> str:
    return record_command(recording, "openai", "--model", recording.provenance["model"])


def run_name(options: Options) -> str:
    return f"{file_safe(options.model or DEFAULT_MODEL)}-{options.variant}"


register(
    Provider(
        "openai", "provider-api", make_client, lambda options: HOW, rerecord, run_name,
        key=KEY_VARIABLE, server=BASE_URL_VARIABLE, default_model=DEFAULT_MODEL, unattended=True,
    )
)
