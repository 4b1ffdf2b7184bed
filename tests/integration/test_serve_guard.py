"""`heron serve`'s safe defaults: Host/Origin checks (DNS rebinding, cross-site calls, as
Ollama has them), CORS for allowed origins, body size limit, request limits naming the
field. Raw http.client requests, so the Host and Origin headers are exactly ours."""
import http.client
import json
import urllib.parse

import pytest

from conftest import start_serve


def request(url, method, path, body=None, headers=None):
    """(status, headers, parsed or raw body) of one request on a fresh connection."""
    u = urllib.parse.urlparse(url)
    conn = http.client.HTTPConnection(u.hostname, u.port, timeout=120)
    try:
        # skip_host: the Host header is whatever the test puts in `headers`.
        conn.putrequest(method, path, skip_host=True, skip_accept_encoding=True)
        hdrs = {"Host": u.netloc, **(headers or {})}
        data = body.encode() if isinstance(body, str) else body
        if data is not None:
            hdrs.setdefault("Content-Type", "application/json")
            hdrs["Content-Length"] = str(len(data))
        for k, v in hdrs.items():
            if v is not None:
                conn.putheader(k, v)
        conn.endheaders()
        if data is not None:
            try:
                conn.send(data)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the server may answer and close before reading an oversized body
        r = conn.getresponse()
        raw = r.read()
        try:
            parsed = json.loads(raw)
        except ValueError:
            parsed = raw
        return r.status, {k.lower(): v for k, v in r.getheaders()}, parsed
    finally:
        conn.close()


@pytest.mark.parametrize("host", ["localhost:{port}", "127.0.0.1:{port}", "[::1]:{port}", "localhost",
                                  "app.localhost:{port}", "0.0.0.0:{port}"])
def test_hosts_naming_this_machine_pass(serve, host):
    port = urllib.parse.urlparse(serve.url).port
    status, _, body = request(serve.url, "GET", "/api/version", headers={"Host": host.format(port=port)})
    assert status == 200 and "version" in body


@pytest.mark.parametrize("host", ["evil.example", "evil.example:11435", "localhost.evil.example",
                                  "192.168.1.20:11435", "127.0.0.1.nip.io"])
def test_foreign_hosts_are_refused(serve, host):
    # A DNS-rebinding page reaches 127.0.0.1 under its own name: it must get nothing.
    for method, path, body in [("GET", "/api/tags", None), ("POST", "/api/generate", '{"model": "default"}'),
                               ("GET", "/v1/models", None)]:
        status, _, answer = request(serve.url, method, path, body, headers={"Host": host})
        assert status == 403, (path, answer)
        # Each API's error shape: OpenAI's object under /v1/, else Ollama's string.
        message = answer["error"]["message"] if path.startswith("/v1/") else answer["error"]
        assert f"Host '{host}' is not allowed" in message and "DNS rebinding" in message


@pytest.mark.parametrize("origin", ["http://localhost:5173", "https://127.0.0.1", "http://0.0.0.0:8080",
                                    "app://heron", "tauri://localhost", "file://",
                                    "vscode-webview://abc123"])
def test_allowed_origins_get_cors_headers(serve, origin):
    status, headers, _ = request(serve.url, "GET", "/api/version", headers={"Origin": origin})
    assert status == 200
    assert headers["access-control-allow-origin"] == origin
    status, headers, _ = request(serve.url, "OPTIONS", "/api/chat",
                                 headers={"Origin": origin, "Access-Control-Request-Method": "POST",
                                          "Access-Control-Request-Headers": "content-type"})
    assert status == 204
    assert headers["access-control-allow-origin"] == origin
    assert "POST" in headers["access-control-allow-methods"]
    assert headers["access-control-allow-headers"] == "content-type"


@pytest.mark.parametrize("origin", ["http://evil.example", "https://localhost.evil.example",
                                    "http://localhost:3000.evil.example", "null"])
def test_foreign_origins_are_refused(serve, origin):
    for method in ["GET", "OPTIONS"]:
        status, headers, body = request(serve.url, method, "/api/version", headers={"Origin": origin})
        assert status == 403
        assert "access-control-allow-origin" not in headers
        assert f"Origin '{origin}' is not allowed" in body["error"] and "HERON_ORIGINS" in body["error"]


def test_no_origin_no_cors_headers(serve):
    status, headers, _ = request(serve.url, "GET", "/api/version")
    assert status == 200 and "access-control-allow-origin" not in headers


def test_heron_origins_adds_patterns(heron_bin, tmp_path):
    with start_serve(heron_bin, tmp_path,
                     HERON_ORIGINS="https://*.example.com, http://intranet:8080") as s:
        for origin, want in [("https://app.example.com", 200), ("http://intranet:8080", 200),
                             ("http://intranet:8081", 403), ("https://example.org", 403),
                             ("http://localhost:1234", 200)]:
            status, _, _ = request(s.url, "GET", "/api/version", headers={"Origin": origin})
            assert status == want, origin


def test_oversized_body_is_413(serve):
    body = '{"model": "default", "prompt": "' + "a" * (33 << 20) + '"}'
    status, _, answer = request(serve.url, "POST", "/api/generate", body)
    assert status == 413
    assert "over the limit of 32 MiB" in answer["error"]


def test_body_under_the_limit_is_read(serve):
    # 31 MiB of JSON is parsed (and rejected for its content, not its size).
    body = '{"model": "default", "prompt": "x", "pad": "' + "a" * (31 << 20) + '", "options": {"top_k": -1}}'
    status, _, answer = request(serve.url, "POST", "/api/generate", body)
    assert status == 400 and "options.top_k" in answer["error"]


FORM = "application/x-www-form-urlencoded"  # what `curl -d` sends, as Ollama's examples do


@pytest.mark.parametrize("path,key", [("/api/generate", "prompt"), ("/api/chat", "messages"),
                                      ("/v1/completions", "prompt"),
                                      ("/v1/chat/completions", "messages")])
def test_a_1mb_prompt_is_read_as_json_whatever_the_content_type(serve, tiny_llama, path, key):
    # 1 MiB of prompt: read whole either way, so the runner counts every token of it.
    prompt = "hello " * ((1 << 20) // 6)
    body = {"model": str(tiny_llama.resolve()), "stream": False,
            key: prompt if key == "prompt" else [{"role": "user", "content": prompt}]}
    answers = [request(serve.url, "POST", path, json.dumps(body), {"Content-Type": ctype})
               for ctype in ("application/json", FORM, None)]
    for status, _, answer in answers:
        assert status == 400, answer
        text = json.dumps(answer)
        assert "tokens, which does not fit the context length of 256" in text
    assert answers[1][2] == answers[0][2] and answers[2][2] == answers[0][2]
    n_tokens = int(json.dumps(answers[0][2]).split("the prompt has ")[1].split()[0])
    assert n_tokens > 170000  # every "hello " of the megabyte


def test_a_15kb_chat_sent_like_curl_is_answered(serve, tiny_llama):
    # The reported case: a chat body over httplib's 8 KiB form limit, labelled as a form.
    # JSON whitespace makes the body large and keeps the prompt small.
    body = ('{"model": ' + json.dumps(str(tiny_llama.resolve())) + "," + " " * 15000 +
            '"stream": false, "messages": [{"role": "user", "content": "hello"}],'
            ' "options": {"num_predict": 4, "temperature": 0}}')
    answers = [request(serve.url, "POST", "/api/chat", body, {"Content-Type": ctype})
               for ctype in ("application/json", FORM)]
    assert [a[0] for a in answers] == [200, 200], answers
    assert answers[1][2]["message"] == answers[0][2]["message"]
    assert answers[1][2]["eval_count"] == 4


@pytest.mark.parametrize("path,body,field", [
    ("/api/generate", {"options": {"num_ctx": (1 << 20) + 1}}, "options.num_ctx"),
    ("/api/generate", {"options": {"num_predict": (1 << 20) + 1}}, "options.num_predict"),
    ("/api/generate", {"options": {"top_k": (1 << 20) + 1}}, "options.top_k"),
    ("/api/chat", {"options": {"num_ctx": 0}}, "options.num_ctx"),
    ("/v1/chat/completions", {"max_tokens": (1 << 20) + 1}, "max_tokens"),
    ("/v1/completions", {"max_tokens": (1 << 20) + 1}, "max_tokens"),
])
def test_option_limits_name_the_field(serve, path, body, field):
    base = {"model": "default", "prompt": "hi", "messages": [{"role": "user", "content": "hi"}]}
    status, _, answer = request(serve.url, "POST", path, json.dumps({**base, **body}))
    assert status == 400
    message = answer["error"] if isinstance(answer["error"], str) else answer["error"]["message"]
    assert message.startswith(field + " must be between"), message


@pytest.mark.parametrize("path", ["/api/chat", "/v1/chat/completions"])
def test_message_count_limit(serve, path):
    body = {"model": "default", "messages": [{"role": "user", "content": "hi"}] * 4097}
    status, _, answer = request(serve.url, "POST", path, json.dumps(body))
    assert status == 400
    message = answer["error"] if isinstance(answer["error"], str) else answer["error"]["message"]
    assert message.startswith("messages holds 4097 messages; at most 4096"), message


def test_rendered_prompt_limit(serve):
    # Under the body limit, over the rendered-prompt limit (16 MiB).
    body = {"model": "default", "messages": [{"role": "user", "content": "a" * (9 << 20)},
                                             {"role": "user", "content": "b" * (9 << 20)}]}
    status, _, answer = request(serve.url, "POST", "/api/chat", json.dumps(body))
    assert status == 400
    assert answer["error"].startswith("messages: the prompt rendered from the chat template is"), answer


@pytest.mark.parametrize("path", ["/api/generate", "/v1/chat/completions"])
def test_number_overflow_is_400(serve, path):
    # A fuzzer finding (tests/fixtures/fuzz/api_request/number-overflow): used to be a 500.
    status, _, answer = request(serve.url, "POST", path, '{"model": "default", "seed": 1e999}')
    assert status == 400
    message = answer["error"] if isinstance(answer["error"], str) else answer["error"]["message"]
    assert "invalid JSON in the request body" in message and "number overflow" in message


def test_deeply_nested_body_is_400(serve):
    # A million nested arrays: refused while parsing, before anything walks the tree.
    body = '{"model": "default", "x": ' + "[" * 1_000_000 + "]" * 1_000_000 + "}"
    status, _, answer = request(serve.url, "POST", "/api/chat", body)
    assert status == 400
    assert "the request body is nested more than 128 levels deep" in answer["error"]
