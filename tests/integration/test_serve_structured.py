"""Structured outputs (JSON-schema-constrained generation) through the unmodified `ollama` and
`openai` clients, with the default SmolLM2-135M-Instruct.

The suite is tests/fixtures/schemas/: one schema per file, of the kinds applications send
(extraction, classification, tool arguments, configs, recursion through $ref, unions, tuples,
patterns, formats), a prompt for each (prompts.json) and one hand-written valid instance of
each (examples.json). Whatever a 135M model makes of the prompt, the answer must parse, obey
its schema and end on its own ("stop"), since the sampler may only pick tokens that keep the
text a prefix of a valid value and must close it.

Formats are checked as RFC 3339 / JSON Schema define them. jsonschema alone checks date,
email (only that it has an "@") and uuid under Draft 2020-12; date-time and time need
rfc3339-validator, and jsonschema.FormatChecker() without a draft even checks "time" the
Draft 3 way (HH:MM:SS with no offset). So FORMATS below is the library's date and uuid and our
own email, time and date-time.

tests/fixtures/schemas/unsupported/ holds one schema per keyword the engine refuses; both
APIs must answer 400 and name the keyword."""
import datetime
import json
import re

import httpx
import jsonschema
import ollama
import openai
import pytest

from conftest import FIXTURES, start_serve

SCHEMAS = FIXTURES / "schemas"
SUITE = {p.stem: json.loads(p.read_text()) for p in sorted(SCHEMAS.glob("*.json"))
         if p.stem not in ("prompts", "examples")}
PROMPTS = json.loads((SCHEMAS / "prompts.json").read_text())
EXAMPLES = json.loads((SCHEMAS / "examples.json").read_text())
UNSUPPORTED_KEYWORD = json.loads((SCHEMAS / "unsupported" / "unsupported.json").read_text())
UNSUPPORTED = {stem: json.loads((SCHEMAS / "unsupported" / f"{stem}.json").read_text())
               for stem in UNSUPPORTED_KEYWORD}

GREEDY = {"temperature": 0, "num_predict": 512}

# A subset through /v1/chat/completions: the suite runs once, through Ollama, to keep CI time
# down; these cover OpenAI's own documented examples plus formats, patterns and nesting.
# (The recursive ones, OpenAI's UI component and linked list, run through Ollama: at
# temperature 0 without a repeat penalty this model nests them until the budget ends.)
OPENAI_SUBSET = ["openai_calendar_event", "openai_math_reasoning", "openai_content_moderation",
                 "openai_research_paper", "person", "invoice", "sentiment", "geo_coordinates",
                 "flight_booking", "recipe", "contact_card"]

# Sampled at temperature 1: patterns, number bounds and a oneOf of const-tagged objects. Their
# strings are bounded, so a random walk still ends well inside num_predict.
SAMPLED = ["chess_move", "geo_coordinates", "shape"]


# --- format checks -------------------------------------------------------------------------

FORMATS = jsonschema.FormatChecker(["date", "uuid"])  # jsonschema's own: regex + fromisoformat, UUID()
_TIME = r"([01]\d|2[0-3]):[0-5]\d:[0-5]\d(\.\d+)?([Zz]|[+-]([01]\d|2[0-3]):[0-5]\d)"
_DATE = r"\d{4}-\d{2}-\d{2}"


@FORMATS.checks("email")
def _email(value):
    return not isinstance(value, str) or re.fullmatch(r"[^@\s]+@[^@\s]+", value) is not None


@FORMATS.checks("time")
def _time(value):
    """RFC 3339 full-time: the offset is not optional."""
    return not isinstance(value, str) or re.fullmatch(_TIME, value) is not None


@FORMATS.checks("date-time", raises=ValueError)
def _date_time(value):
    if not isinstance(value, str):
        return True
    if not re.fullmatch(f"{_DATE}[Tt]{_TIME}", value):
        return False
    datetime.datetime.fromisoformat(value.upper().replace("Z", "+00:00"))  # a real day of a real month
    return True


def validate(instance, schema):
    jsonschema.Draft202012Validator(schema, format_checker=FORMATS).validate(instance)


def assert_valid(text, schema):
    try:
        instance = json.loads(text)
    except json.JSONDecodeError as e:
        pytest.fail(f"not JSON ({e}): {text!r}")
    try:
        validate(instance, schema)
    except jsonschema.ValidationError as e:
        pytest.fail(f"does not follow the schema: {e.message} at {list(e.absolute_path)}\n{text}")
    return instance


def names_keyword(message, keyword):
    """The keyword quoted or as a JSON-pointer segment: a bare word would let "not supported"
    pass for `not`."""
    return re.search(rf"[\"'`/]{re.escape(keyword)}(?!\w)", message) is not None


def ask(stem):
    return [{"role": "user", "content": PROMPTS[stem]}]


# --- the suite itself (no server) ------------------------------------------------------------

def test_examples_cover_the_suite():
    assert len(SUITE) >= 55
    assert set(PROMPTS) == set(SUITE) and set(EXAMPLES) == set(SUITE)
    assert set(OPENAI_SUBSET) <= set(SUITE) and set(SAMPLED) <= set(SUITE)


@pytest.mark.parametrize("stem", sorted(SUITE))
def test_examples_validate_against_their_schemas(stem):
    jsonschema.Draft202012Validator.check_schema(SUITE[stem])
    validate(EXAMPLES[stem], SUITE[stem])


@pytest.mark.parametrize("stem", sorted(UNSUPPORTED))
def test_examples_unsupported_schemas_are_valid_and_use_their_keyword(stem):
    jsonschema.Draft202012Validator.check_schema(UNSUPPORTED[stem])
    assert f'"{UNSUPPORTED_KEYWORD[stem]}":' in json.dumps(UNSUPPORTED[stem])


@pytest.mark.parametrize("fmt, good, bad", [
    ("date", "2024-02-29", ["2023-02-29", "2024-2-9", "24-02-09", "2024-02-29T00:00:00Z"]),
    ("time", "23:59:59.5+02:00", ["12:00", "12:00:00", "24:00:00Z", "12:00:00 Z"]),
    ("date-time", "2024-02-29T10:15:00Z", ["2024-02-30T10:15:00Z", "2024-02-29 10:15:00Z",
                                           "2024-02-29T10:15:00", "2024-02-29"]),
    ("email", "a.b@example.com", ["nobody", "a@", "@b", "a b@c.d", "a@b@c"]),
    ("uuid", "123e4567-e89b-12d3-a456-426614174000", ["123e4567e89b12d3a456426614174000", "xyz"]),
])
def test_examples_format_checks_are_strict(fmt, good, bad):
    assert FORMATS.conforms(good, fmt)
    assert not [b for b in bad if FORMATS.conforms(b, fmt)]


# --- every schema through Ollama ------------------------------------------------------------

# A 135M model at temperature 0 sometimes repeats itself inside an unbounded string or a
# recursive structure until the token budget cuts it ("length"), which no engine prevents:
# the schema allows it. So: every answer that ends on its own is valid, and most end so.
MOST = 0.85


def follow_every_schema(stems, answer):
    """answer(stem) -> (text, finish reason); fails on any invalid answer, returns the cut."""
    cut = []
    for stem in stems:
        text, reason = answer(stem)
        if reason == "length":
            cut.append(stem)
            continue
        assert reason == "stop", (stem, reason, text)
        try:
            validate(json.loads(text), SUITE[stem])
        except (json.JSONDecodeError, jsonschema.ValidationError) as e:
            pytest.fail(f"{stem}: {e}\n{text}")
    assert len(cut) <= (1 - MOST) * len(stems), f"cut by the token budget: {cut}"
    return cut


def test_ollama_chat_follows_every_schema(oll):
    def answer(stem):
        r = oll.chat(model="default", messages=ask(stem), format=SUITE[stem], options=GREEDY)
        return r.message.content, r.done_reason
    follow_every_schema(sorted(SUITE), answer)


def test_openai_json_schema_follows_the_schemas(oai):
    def answer(stem):
        r = oai.chat.completions.create(
            model="default", messages=ask(stem), temperature=0, max_tokens=512,
            frequency_penalty=0.5,  # as Ollama's default repeat_penalty: fewer loops
            response_format={"type": "json_schema",
                             "json_schema": {"name": stem, "schema": SUITE[stem], "strict": True}})
        return r.choices[0].message.content, r.choices[0].finish_reason
    follow_every_schema(OPENAI_SUBSET, answer)


@pytest.mark.parametrize("stem", SAMPLED)
def test_sampling_stays_valid_and_still_varies(oll, stem):
    schema = SUITE[stem]
    answers = []
    for seed in range(1, 6):
        r = oll.chat(model="default", messages=ask(stem), format=schema,
                     options={"temperature": 1.0, "seed": seed, "num_predict": 512})
        assert_valid(r.message.content, schema)
        assert r.done_reason == "stop", (seed, r.message.content)
        answers.append(r.message.content)
    # The constraint masks tokens; it must not turn sampling into greedy decoding.
    assert len(set(answers)) > 1, answers


def test_ollama_stream_concatenates_to_a_valid_value(oll):
    schema = SUITE["invoice"]
    chunks = list(oll.chat(model="default", messages=ask("invoice"), format=schema,
                           options=GREEDY, stream=True))
    text = "".join(c.message.content or "" for c in chunks)
    assert sum(1 for c in chunks if c.message.content) > 1  # it did stream, piece by piece
    assert chunks[-1].done and chunks[-1].done_reason == "stop"
    assert_valid(text, schema)
    # Streaming constrains exactly as the whole answer does.
    whole = oll.chat(model="default", messages=ask("invoice"), format=schema, options=GREEDY)
    assert whole.message.content == text


def test_openai_stream_concatenates_to_a_valid_value(oai):
    schema = SUITE["openai_calendar_event"]
    text, finish = "", None
    for chunk in oai.chat.completions.create(
            model="default", messages=ask("openai_calendar_event"), temperature=0, max_tokens=512,
            stream=True, response_format={"type": "json_schema", "json_schema": {
                "name": "CalendarEvent", "schema": schema, "strict": True}}):
        if chunk.choices:
            text += chunk.choices[0].delta.content or ""
            finish = chunk.choices[0].finish_reason or finish
    assert finish == "stop"
    assert_valid(text, schema)


# --- speculation --------------------------------------------------------------------------

# An answer that copies the prompt, so prompt lookup drafts; the grammar cuts each draft at
# its first token the schema refuses, and masks the verifying rows as plain decoding would.
# The pattern refuses what the model wants to write at some verified positions (capitals, '.').
ECHO_SCHEMA = {"type": "object", "properties": {"text": {"type": "string", "pattern": "^[a-z ,]+$"}},
               "required": ["text"], "additionalProperties": False}
ECHO = ("Repeat these sentences exactly, in the text field: The quick brown fox jumps over the "
        "lazy dog. The lazy dog sleeps in the warm afternoon sun, and the fox runs home.")


@pytest.mark.parametrize("options", [{"temperature": 0}, {"temperature": 0.7, "seed": 4}])
def test_speculation_under_a_schema_gives_the_plain_text(heron_bin, tmp_path, options):
    # A server of its own: the depth controller starts from its defaults, whatever ran before.
    with start_serve(heron_bin, tmp_path) as serve:
        def chat(speculation):
            r = httpx.post(serve.url + "/api/chat", timeout=300, json={
                "model": "default", "messages": [{"role": "user", "content": ECHO}],
                "stream": False, "format": ECHO_SCHEMA,
                "options": dict(options, num_predict=200, speculation=speculation)})
            assert r.status_code == 200, r.text
            return r.json()
        plain, spec = chat(False), chat(True)
    assert "speculation" not in plain
    assert spec["speculation"]["rounds"] > 0 and spec["speculation"]["accepted"] > 0, spec
    assert spec["message"]["content"] == plain["message"]["content"]
    assert spec["done_reason"] == plain["done_reason"] == "stop"
    assert_valid(spec["message"]["content"], ECHO_SCHEMA)


# --- JSON mode --------------------------------------------------------------------------------

JSON_PROMPT = "Give the name and age of John, who is 30 years old, as JSON."


def test_ollama_generate_json_mode(oll):
    r = oll.generate(model="default", prompt=JSON_PROMPT, format="json", options=GREEDY)
    assert isinstance(json.loads(r.response), dict), r.response
    assert r.done_reason == "stop"


def test_ollama_chat_json_mode(oll):
    r = oll.chat(model="default", messages=[{"role": "user", "content": JSON_PROMPT}],
                 format="json", options=GREEDY)
    assert isinstance(json.loads(r.message.content), dict), r.message.content
    assert r.done_reason == "stop"


def test_openai_json_object_mode(oai):
    r = oai.chat.completions.create(model="default", temperature=0, max_tokens=512,
                                    messages=[{"role": "user", "content": JSON_PROMPT}],
                                    response_format={"type": "json_object"})
    assert isinstance(json.loads(r.choices[0].message.content), dict), r.choices[0].message.content
    assert r.choices[0].finish_reason == "stop"


def test_ollama_schema_on_generate(oll):
    """/api/generate takes a schema as /api/chat does."""
    schema = SUITE["sentiment"]
    r = oll.generate(model="default", prompt=PROMPTS["sentiment"], format=schema, options=GREEDY)
    assert_valid(r.response, schema)
    assert r.done_reason == "stop"


# --- refusals ---------------------------------------------------------------------------------

@pytest.mark.parametrize("stem", sorted(UNSUPPORTED))
def test_ollama_refuses_unsupported_keywords(oll, stem):
    keyword = UNSUPPORTED_KEYWORD[stem]
    with pytest.raises(ollama.ResponseError) as e:
        oll.chat(model="default", messages=[{"role": "user", "content": "Hi"}],
                 format=UNSUPPORTED[stem], options=GREEDY)
    assert e.value.status_code == 400
    assert names_keyword(e.value.error, keyword), e.value.error


@pytest.mark.parametrize("stem", sorted(UNSUPPORTED))
def test_openai_refuses_unsupported_keywords(oai, stem):
    keyword = UNSUPPORTED_KEYWORD[stem]
    with pytest.raises(openai.BadRequestError) as e:
        oai.chat.completions.create(
            model="default", messages=[{"role": "user", "content": "Hi"}], max_tokens=8,
            response_format={"type": "json_schema",
                             "json_schema": {"name": stem, "schema": UNSUPPORTED[stem]}})
    assert e.value.status_code == 400
    message = str(e.value) + json.dumps(e.value.body)
    assert names_keyword(message, keyword), message


# The ollama client's own types refuse these before sending, so they go out raw.
@pytest.mark.parametrize("endpoint", ["/api/chat", "/api/generate"])
@pytest.mark.parametrize("fmt", [42, ["json"], "yaml", {"type": "object", "properties": []}],
                         ids=["number", "list", "yaml", "bad-schema"])
def test_ollama_malformed_format_is_400(serve, endpoint, fmt):
    body = {"model": "default", "stream": False, "format": fmt, "options": {"num_predict": 8}}
    if endpoint == "/api/chat":
        body["messages"] = [{"role": "user", "content": "Hi"}]
    else:
        body["prompt"] = "Hi"
    r = httpx.post(serve.url + endpoint, json=body, timeout=120)
    assert r.status_code == 400, r.text
    assert r.json()["error"]


@pytest.mark.parametrize("response_format", [
    {"type": "json_schema"},
    {"type": "json_schema", "json_schema": {"name": "x", "schema": "string"}},
    {"type": "json_schema", "json_schema": {"name": "x", "schema": [{"type": "string"}]}},
    {"type": "yaml"},
], ids=["no-json_schema", "string-schema", "list-schema", "unknown-type"])
def test_openai_malformed_response_format_is_400(oai, response_format):
    with pytest.raises(openai.BadRequestError) as e:
        oai.chat.completions.create(model="default", messages=[{"role": "user", "content": "Hi"}],
                                    max_tokens=8, response_format=response_format)
    assert e.value.status_code == 400
