"""Secrets never print, are never pickled, and are cleaned from everything a model sends back."""

import copy
import json
import pickle

import pytest

from replaylab.agents import loop, recording
from replaylab.agents.clients import load_provider
from replaylab.agents.clients.scripted import ScriptedClient
from replaylab.agents.messages import ModelMessage, ToolCall
from replaylab.agents.secrets import REDACTED, Secret, clean, clean_message, clean_text, is_provider_name
from replaylab.agents.tools import Allowlist, Choice, Parameter, Tool

FAKE_KEY = "sk-test-FAKE0123456789abcdef"


# ---------------------------------------------------------------------------------------------
# Secret


def test_secret_shows_redacted_everywhere():
    secret = Secret(FAKE_KEY)
    assert str(secret) == "[redacted]"
    assert repr(secret) == "[redacted]"
    assert f"{secret}" == "[redacted]"
    assert f"{secret!r}" == "[redacted]"
    assert f"{secret:>40}" == "[redacted]"
    assert format(secret, "s") == "[redacted]"
    assert "%s %r" % (secret, secret) == "[redacted] [redacted]"
    assert "{} {!r} {!s}".format(secret, secret, secret) == "[redacted] [redacted] [redacted]"
    assert repr([secret, {"k": secret}]) == "[[redacted], {'k': [redacted]}]"


def test_secret_value_only_by_reveal():
    secret = Secret(FAKE_KEY)
    assert secret.reveal() == FAKE_KEY
    assert not hasattr(secret, "__dict__")
    with pytest.raises(AttributeError):
        secret.value = "other"
    assert secret.reveal() == FAKE_KEY


@pytest.mark.parametrize("protocol", range(pickle.HIGHEST_PROTOCOL + 1))
def test_pickling_a_secret_raises(protocol):
    with pytest.raises(TypeError, match="^a Secret cannot be pickled$"):
        pickle.dumps(Secret(FAKE_KEY), protocol=protocol)
    with pytest.raises(TypeError, match="^a Secret cannot be pickled$"):
        pickle.dumps({"nested": [Secret(FAKE_KEY)]}, protocol=protocol)


def test_copying_a_secret_does_not_leak_it():
    with pytest.raises(TypeError):
        copy.copy(Secret(FAKE_KEY))


@pytest.mark.parametrize("value", ["", None, 123, b"sk-bytes"])
def test_a_secret_is_a_non_empty_string(value):
    with pytest.raises(ValueError):
        Secret(value)


# ---------------------------------------------------------------------------------------------
# clean


def test_clean_nested_values_and_keys():
    data = {
        "text": f"my key is {FAKE_KEY}!",
        FAKE_KEY: [FAKE_KEY, {"inner": f"Bearer {FAKE_KEY}", f"k-{FAKE_KEY}": (FAKE_KEY, 1)}],
        "numbers": [1, 2.5, True, False, None, 10**400],
    }
    for secrets in ([FAKE_KEY], [Secret(FAKE_KEY)], (Secret(FAKE_KEY), "")):
        cleaned = clean(data, secrets)
        assert FAKE_KEY not in repr(cleaned)
        assert cleaned == {
            "text": "my key is [redacted]!",
            "[redacted]": ["[redacted]", {"inner": "Bearer [redacted]", "k-[redacted]": ("[redacted]", 1)}],
            "numbers": [1, 2.5, True, False, None, 10**400],
        }
        assert type(cleaned[REDACTED][1]["k-[redacted]"]) is tuple


@pytest.mark.parametrize("value", [0, 1, -7, 2.5, float("inf"), True, False, None, 10**400])
def test_clean_leaves_numbers_bools_and_none_unchanged(value):
    cleaned = clean(value, [FAKE_KEY])
    assert cleaned is value or (cleaned == value and type(cleaned) is type(value))
    assert clean([value, {"k": value}], [FAKE_KEY]) == [value, {"k": value}]
    assert type(clean([value], [FAKE_KEY])[0]) is type(value)


def test_clean_text_and_no_secrets():
    assert clean_text(f"a{FAKE_KEY}b{FAKE_KEY}", [FAKE_KEY]) == "a[redacted]b[redacted]"
    assert clean_text("nothing here", [FAKE_KEY]) == "nothing here"
    message = ModelMessage(FAKE_KEY, (ToolCall(FAKE_KEY, FAKE_KEY, {FAKE_KEY: FAKE_KEY}),))
    assert clean_message(message, ()) == message  # a client without secrets: nothing to clean


def test_clean_message_every_field():
    message = ModelMessage(
        f"text {FAKE_KEY}",
        (ToolCall(f"id-{FAKE_KEY}", [FAKE_KEY, {"n": FAKE_KEY}], {FAKE_KEY: [FAKE_KEY, 1, None, {"d": FAKE_KEY}]}),),
    )
    cleaned = clean_message(message, (Secret(FAKE_KEY),))
    assert FAKE_KEY not in repr(cleaned)
    assert cleaned == ModelMessage(
        "text [redacted]",
        (ToolCall("id-[redacted]", ["[redacted]", {"n": "[redacted]"}], {"[redacted]": ["[redacted]", 1, None, {"d": "[redacted]"}]}),),
    )


# ---------------------------------------------------------------------------------------------
# A fake model that repeats the key everywhere; nothing downstream ever holds it


def hostile_messages():
    key = FAKE_KEY
    return [
        ModelMessage(
            f"Here is my key: {key}. Also {key[:10]}",
            (
                ToolCall(f"call-{key}", "measure", {"speed": 25, "method": key}),
                ToolCall("2", key, {"speed": 25, "method": "a"}),
                ToolCall("3", "measure", {key: 25, "method": "a"}),
                ToolCall("4", "measure", {"speed": [key, {"deep": [key]}], "method": "a"}),
            ),
        ),
        ModelMessage(
            key,
            (
                ToolCall(key, [key, key], key),
                ToolCall("6", {key: key}, {"speed": 30, "method": "a"}),
                ToolCall("7", "measure", {"speed": 30, "method": "a"}),
            ),
        ),
        ModelMessage(f"done ({key})"),
    ]


def run_fake_model():
    conversations = []
    messages = hostile_messages()

    def program(conversation):
        conversations.append(conversation)
        return messages[len(conversations) - 1]

    client = ScriptedClient(program, "fake model")
    client.secrets = (Secret(FAKE_KEY),)
    ran = []

    def measure(speed, method):
        ran.append((speed, method))
        return {"value": float(speed)}

    allowlist = Allowlist(
        [Tool("measure", "", (Parameter("speed", "", 1, 50), Choice("method", "", ("a", "b"))), measure)]
    )
    shown = []
    transcript = loop.run(client, "system", "task", allowlist, max_steps=5, on_step=shown.append)
    assert FAKE_KEY not in repr(shown) and len(shown) == len(transcript.steps)
    return transcript, conversations, ran, client


def test_a_fake_model_repeating_the_key_leaves_it_nowhere(tmp_path, capsys):
    transcript, conversations, ran, client = run_fake_model()
    assert transcript.finished and len(transcript.steps) == 3
    assert ran == [(30, "a")]  # only the clean call ran

    # the transcript and every later request to the model
    assert FAKE_KEY not in repr(transcript)
    assert REDACTED in transcript.steps[0].message.text
    assert transcript.steps[0].message.tool_calls[0].id == "call-[redacted]"
    assert transcript.steps[0].results[1].content == {"error": "'[redacted]' is not an allowed tool; the allowed tools are: measure"}
    assert transcript.steps[0].results[2].content == {"error": "unknown arguments: [redacted]"}
    for conversation in conversations[1:]:
        assert FAKE_KEY not in repr(conversation)

    # the recording, as text and as a saved file
    rec = recording.Recording(
        "projectile", "leak", "default", "leak",
        recording.provenance("scripted", "fake model", "A fake model that repeats its key.", seed=1),
        transcript,
    )
    text = recording.dumps(rec, client.secrets)
    assert FAKE_KEY not in text
    path = tmp_path / "leak.json"
    recording.save(rec, path, client.secrets)
    saved = path.read_bytes()
    assert FAKE_KEY.encode() not in saved
    assert FAKE_KEY[3:].encode() not in saved
    assert "[redacted]" in saved.decode("utf-8")
    loaded = recording.load(path)
    assert loaded.transcript == transcript

    # printing everything there is
    print(transcript, rec, text, client.secrets, client.secrets[0])
    import sys

    print(repr(transcript), file=sys.stderr)
    captured = capsys.readouterr()
    assert FAKE_KEY not in captured.out and FAKE_KEY not in captured.err
    assert "[redacted]" in captured.out


def test_dumps_cleans_a_transcript_that_was_not_cleaned_by_the_loop(tmp_path):
    """A key that reached a transcript some other way is still never written."""
    from replaylab.agents.messages import Step, ToolResult, Transcript

    call = ToolCall(FAKE_KEY, FAKE_KEY, {FAKE_KEY: [FAKE_KEY]})
    transcript = Transcript(
        FAKE_KEY, f"system {FAKE_KEY}", f"task {FAKE_KEY}",
        (Step(ModelMessage(FAKE_KEY, (call,)), (ToolResult(FAKE_KEY, FAKE_KEY, False, {"error": FAKE_KEY}),)),),
        True,
    )
    rec = recording.Recording(
        "projectile", "raw", "default", "raw",
        recording.provenance("provider-api", FAKE_KEY, f"how {FAKE_KEY}", request_ids=[FAKE_KEY]), transcript,
    )
    for secrets in ([FAKE_KEY], [Secret(FAKE_KEY)]):
        text = recording.dumps(rec, secrets)
        assert FAKE_KEY not in text
        json.loads(text)
        recording.save(rec, tmp_path / "raw.json", secrets)
        assert FAKE_KEY not in (tmp_path / "raw.json").read_text("utf-8")


# ---------------------------------------------------------------------------------------------
# Provider names


@pytest.mark.parametrize("name", ["../x", "a.b", "OpenAI", "os; rm", "", "x/y", "_private", "ré", " replay", None, 3])
def test_bad_provider_names_are_refused(name):
    assert not is_provider_name(name)
    with pytest.raises(ValueError, match="not a provider name"):
        load_provider(name)


@pytest.mark.parametrize("name", ["authored", "scripted", "interactive", "openai"])
def test_valid_provider_names_load(name):
    assert is_provider_name(name)
    provider = load_provider(name)
    assert provider.name == name and callable(provider.make_client)


def test_a_module_of_clients_that_is_not_a_provider_is_refused():
    assert is_provider_name("replay")
    with pytest.raises(ValueError, match="no provider named 'replay'"):
        load_provider("replay")


def test_an_unknown_but_well_formed_provider_is_a_value_error():
    with pytest.raises(ValueError, match="no provider named 'nosuchprovider'"):
        load_provider("nosuchprovider")
