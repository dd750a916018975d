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
most two minutes.
"""

import functools
import json
import logging

from replaylab.agents import environment
from replaylab.agents.clients import Options, Provider, ProviderError, record_command, register
from replaylab.agents.messages import ModelMessage, ToolCall
from replaylab.agents.names import file_safe
from replaylab.agents.recording import CALL_DEPTH, MAX_DEPTH, nesting, printable, unique_keys
from replaylab.agents.secrets import clean_text

KEY_VARIABLE = "OPENAI_API_KEY"
BASE_URL_VARIABLE = "OPENAI_BASE_URL"
DEFAULT_MODEL = "gpt-4o-mini"
TIMEOUT_S = 60.0
MAX_RETRIES = 4
HOW = (
    "Recorded run: the model answered through an OpenAI-compatible chat completions API with tools; "
    "the harness checked every call against the allowlist and computed every result."
)


def _sdk():
    """The SDK, imported on first use."""
    import openai

    return openai


@functools.cache
def _http_client():
    """One HTTP client per process, shared by the SDK clients of every run (it is thread-safe):
    making one loads the system's certificates, about 0.1 s of a processor, which a campaign's job
    recording many runs at once would otherwise pay for each run."""
    return _sdk().DefaultHttpxClient()


def _clean_log_records(secrets):
    """Make every log record, of any logger and level, without the key (the SDK and its HTTP
    library log at DEBUG; a logger's own filter would miss its child loggers)."""
    previous = logging.getLogRecordFactory()

    def factory(*args, **kwargs):
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


def _request_messages(system, conversation):
    messages = [{"role": "system", "content": system}]
    for item in conversation:
        if item["role"] == "user":
            messages.append({"role": "user", "content": item["content"]})
        elif item["role"] == "assistant":
            message = item["message"]
            entry = {"role": "assistant", "content": message.text or None}
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


def _arguments(text):
    """The model's arguments as JSON data; text that is not JSON (or nested deeper than a recording
    holds) stays text, which the allowlist refuses."""
    try:
        value = json.loads(text, object_pairs_hook=unique_keys)
    except (TypeError, ValueError, RecursionError):  # a key twice is a ValueError too: no last one wins
        return text
    return value if nesting(value) + CALL_DEPTH <= MAX_DEPTH else text


def _expect(value, kinds, where, expected):
    """`value` if it is one of `kinds`; else the ProviderError saying what the answer holds there."""
    if isinstance(value, kinds):
        return value
    raise ProviderError(
        f"the provider's answer is not a chat completion: {where} is {type(value).__name__}, not {expected}"
    )


def _message(response):
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


def _describe(error, timeout):
    openai = _sdk()
    status = error.status_code if isinstance(error, openai.APIStatusError) else None
    if isinstance(error, openai.AuthenticationError):
        return f"the provider refused the key in {KEY_VARIABLE} ({status}): {error}"
    if isinstance(error, openai.APITimeoutError):
        return f"the provider did not answer within {timeout:g} s (after retries)"
    if isinstance(error, openai.APIConnectionError):
        return f"could not reach the provider: {error}"
    if status is not None:
        return f"the provider answered {status}: {error}"
    return f"{type(error).__name__}: {error}"


def _settings_sent(settings):
    """The request's fields of a model's generation settings: passed as they are in the JSON body
    (`extra_body`), so that a field the SDK does not know, but the server takes, is sent too."""
    return {"extra_body": dict(settings)} if settings else {}


SERVED_MAX = 20  # distinct answers kept of each field a server reports (a run asks one model)


def _served(response, secrets):
    """What the server said of itself in one answer: the model it answered as, and its
    `system_fingerprint` where given; each cleaned of the key, printable and cut to 200 characters
    (a server's text, shown on pages), None when absent or not text."""
    found = {}
    for field in ("model", "system_fingerprint"):
        value = getattr(response, field, None)
        if isinstance(value, str) and value:
            found[field] = printable(clean_text(value, secrets))[:200]
    return found


class OpenAIClient:
    def __init__(self, model, key, base_url=None, timeout=TIMEOUT_S, max_retries=MAX_RETRIES, settings=None):
        self.model = model
        self.settings = dict(settings or {})
        self.served = {"model": [], "system_fingerprint": []}
        self.secrets = (key,)
        self.usage = {"input_tokens": 0, "output_tokens": 0}
        self.usage_reported = False
        self.request_ids = []
        self._timeout = timeout
        self._sdk = _sdk().OpenAI(api_key=key.reveal, base_url=base_url, timeout=timeout, max_retries=max_retries,
                                  http_client=_http_client())
        # the server's host (and port), never its path, query or user part, which may hold a key
        url = self._sdk.base_url
        self.server = clean_text(f"{url.host}:{url.port}" if url.port else url.host, self.secrets)
        _clean_log_records(self.secrets)

    def complete(self, system, conversation, tools):
        try:
            response = self._sdk.chat.completions.create(
                model=self.model,
                messages=_request_messages(system, conversation),
                tools=[{"type": "function", "function": spec} for spec in tools],
                **_settings_sent(self.settings),
            )
        except _sdk().OpenAIError as error:
            raise ProviderError(clean_text(_describe(error, self._timeout), self.secrets)) from None
        except ValueError as error:  # the SDK's JSON parser: a body that is not JSON
            raise ProviderError(clean_text(f"the provider's answer is not JSON: {error}", self.secrets)) from None
        except RecursionError:  # the SDK's JSON parser, on a body of arrays inside arrays
            raise ProviderError("the provider's answer is not JSON: nested too deep for a chat completion") from None
        message = _message(response)
        self._note_served(response)
        request_id = response._request_id  # from the x-request-id header; None when absent
        if request_id:
            # cleaned of the key (a server may echo it), and printable (it is shown on pages)
            self.request_ids.append(printable(clean_text(request_id, self.secrets))[:200])
        usage = response.usage
        if usage is not None and all(isinstance(n, (int, type(None))) and not isinstance(n, bool)
                                     for n in (usage.prompt_tokens, usage.completion_tokens)):
            self.usage_reported = True
            self.usage["input_tokens"] += usage.prompt_tokens or 0
            self.usage["output_tokens"] += usage.completion_tokens or 0
        calls = tuple(
            ToolCall(call.id, call.function.name, _arguments(call.function.arguments))
            for call in (message.tool_calls or ())
        )
        return ModelMessage(message.content or "", calls)  # the loop cleans it before anything sees it

    def _note_served(self, response):
        for field, value in _served(response, self.secrets).items():
            if value not in self.served[field] and len(self.served[field]) < SERVED_MAX:
                self.served[field].append(value)

    def served_provenance(self):
        """The settings sent with every request, and what the server reported back."""
        extra = {"settings": dict(self.settings)} if self.settings else {}
        if self.served["model"]:
            extra["served_models"] = list(self.served["model"])
        if self.served["system_fingerprint"]:
            extra["system_fingerprints"] = list(self.served["system_fingerprint"])
        return extra

    def tokens_used(self):
        """Tokens the provider reported so far (None when it reports none)."""
        return self.usage["input_tokens"] + self.usage["output_tokens"] if self.usage_reported else None

    def provenance_extra(self):
        """The server's host, and only what the provider reported: token usage and request ids."""
        extra = {"server": self.server}
        if self.usage_reported:
            extra["usage"] = dict(self.usage)
        if self.request_ids:
            extra["request_ids"] = list(self.request_ids)
        return {**extra, **self.served_provenance()}


def make_client(options: Options):
    key = environment.secret(options.key_variable or KEY_VARIABLE)
    return OpenAIClient(
        options.model or DEFAULT_MODEL,
        key,
        options.base_url or environment.setting(BASE_URL_VARIABLE),
        timeout=TIMEOUT_S if options.timeout is None else options.timeout,
        max_retries=MAX_RETRIES if options.max_retries is None else options.max_retries,
        settings=options.settings,
    )


def rerecord(recording):
    return record_command(recording, "openai", "--model", recording.provenance["model"])


def run_name(options: Options):
    return f"{file_safe(options.model or DEFAULT_MODEL)}-{options.variant}"


register(
    Provider(
        "openai", "provider-api", make_client, lambda options: HOW, rerecord, run_name,
        key=KEY_VARIABLE, server=BASE_URL_VARIABLE, default_model=DEFAULT_MODEL, unattended=True,
    )
)
