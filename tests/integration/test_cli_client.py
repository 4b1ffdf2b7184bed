"""`heron run/list/show/ps/stop/rm/cp/--version` against a live `heron serve`, checked
against the unmodified `ollama` client talking to the same server."""
import json
import os
import re
import subprocess

import httpx
import ollama
import pytest
from conftest import _free_port as free_port

GREEDY = {"temperature": 0, "seed": 7, "num_predict": 40}


@pytest.fixture(scope="module")
def client(serve):
    return ollama.Client(host=serve.url, timeout=120)


def heron(heron_bin, host, *args, stdin=None, timeout=300):
    env = dict(os.environ, HERON_HOST=host)
    return subprocess.run([str(heron_bin), *map(str, args)], env=env, capture_output=True,
                          text=True, input=stdin, timeout=timeout)


@pytest.fixture(scope="module")
def cli(heron_bin, serve):
    """`heron ARGS` with HERON_HOST pointing at the session's server."""
    host = serve.url.removeprefix("http://")
    return lambda *args, **kw: heron(heron_bin, host, *args, **kw)


def table(stdout):
    """Rows of an Ollama-style table: columns are separated by runs of 2+ spaces."""
    lines = [line for line in stdout.splitlines() if line.strip()]
    header = re.split(r"\s{2,}", lines[0].strip())
    rows = []
    for line in lines[1:]:
        # Cells may be empty (the ID of a model without a digest): cut at the header's offsets.
        starts = [lines[0].index(h) for h in header]
        cells = [line[a:b].strip() for a, b in zip(starts, starts[1:] + [None])]
        rows.append(dict(zip(header, cells)))
    return header, rows


def ollama_human_bytes(b):
    """Ollama's format.HumanBytes: decimal units, one decimal below 100 unless whole
    (its format/bytes_test.go: 1500 -> "1.5 KB", 10500 -> "10.5 KB", 999999 -> "999 KB")."""
    for scale, unit in ((1e12, "TB"), (1e9, "GB"), (1e6, "MB"), (1e3, "KB")):
        if b >= scale:
            v = b / scale
            if v >= 100 or v == int(v):
                return f"{int(v)} {unit}"
            return f"{v:.1f} {unit}"
    return f"{b} B"


def ollama_processor(size, vram):
    """Ollama's `ps` PROCESSOR column."""
    if not vram:
        return "100% CPU"
    if vram >= size:
        return "100% GPU"
    gpu = int(100 * vram / size)
    return f"{100 - gpu}%/{gpu}% CPU/GPU"


# --- run, non-interactive ---------------------------------------------------------------

def test_run_with_prompt_argument_matches_ollama_generate(cli, client):
    r = cli("run", "default", "Why", "is the sky blue?", "--options", json.dumps(GREEDY))
    assert r.returncode == 0, r.stderr
    want = client.generate(model="default", prompt="Why is the sky blue?", options=GREEDY).response
    assert want.strip()
    assert r.stdout == want + "\n"


def test_run_format_json_answers_a_json_object(cli, client):
    prompt = "Give the name and age of John, who is 30, as JSON."
    r = cli("run", "default", prompt, "--format", "json", "--options", json.dumps(GREEDY))
    assert r.returncode == 0, r.stderr
    assert isinstance(json.loads(r.stdout), dict), r.stdout
    assert r.stdout == client.generate(model="default", prompt=prompt, format="json",
                                       options=GREEDY).response + "\n"
    r = cli("run", "default", prompt, "--format", "yaml")
    assert r.returncode != 0 and "--format must be json" in r.stderr


def test_run_with_stdin_matches_ollama_generate(cli, client):
    text = "Name three primary colors.\n"
    r = cli("run", "default", "--options", json.dumps(GREEDY), stdin=text)
    assert r.returncode == 0, r.stderr
    assert r.stdout == client.generate(model="default", prompt=text, options=GREEDY).response + "\n"
    # Piped text comes first, the arguments follow after a space (as in `ollama run`).
    r = cli("run", "default", "Answer briefly.", "--options", json.dumps(GREEDY), stdin=text)
    want = client.generate(model="default", prompt=text + " Answer briefly.", options=GREEDY)
    assert r.returncode == 0 and r.stdout == want.response + "\n"


def test_run_verbose_prints_ollama_style_timings(cli):
    r = cli("run", "default", "Hi", "--verbose", "--options", '{"temperature": 0, "num_predict": 5}')
    assert r.returncode == 0, r.stderr
    m = re.search(r"eval count:\s+(\d+) token\(s\)\neval duration:\s+([\d.]+)(ms|s)\n"
                  r"eval rate:\s+([\d.]+) tokens/s", r.stderr)
    assert m, r.stderr
    assert int(m.group(1)) == 5
    for label in ("total duration:", "load duration:", "prompt eval count:", "prompt eval rate:"):
        assert label in r.stderr
    # An answer that repeats the prompt may be speculated (prompt lookup; the depth
    # controller, which measures this machine's costs as it goes, decides): --verbose then
    # says how (the line itself: CliFormat.TimingStatsSaySpeculationRounds).
    echo = ("Repeat this list exactly: apple, banana, cherry, date, elderberry, fig, grape, "
            "apple, banana, cherry, date, elderberry, fig, grape.")
    r = cli("run", "default", echo, "--verbose", "--options",
            '{"temperature": 0, "num_predict": 64}')
    assert r.returncode == 0, r.stderr
    lines = [line for line in r.stderr.splitlines() if line.startswith("speculation:")]
    assert all(re.fullmatch(r"speculation:\s+\d+ rounds, mean depth \d+\.\d\d, mean accepted "
                            r"\d+\.\d\d", line) for line in lines), r.stderr


# --- list, ps, show, stop ---------------------------------------------------------------

def test_list_matches_ollama_list(cli, client):
    r = cli("list")
    assert r.returncode == 0, r.stderr
    header, rows = table(r.stdout)
    assert header == ["NAME", "ID", "SIZE", "MODIFIED"]
    models = client.list().models
    assert [row["NAME"] for row in rows] == [m.model for m in models]
    for row, m in zip(rows, models):
        assert row["SIZE"] == ollama_human_bytes(m.size)
        assert row["ID"] == (m.digest or "").removeprefix("sha256:")[:12]
        assert re.fullmatch(r"Less than a second ago|\d+ seconds ago|About a minute ago|\d+ \w+ ago",
                            row["MODIFIED"]), row
    ls_header, ls_rows = table(cli("ls").stdout)
    assert ls_header == header and [row["NAME"] for row in ls_rows] == [row["NAME"] for row in rows]


def test_ps_matches_ollama_ps(cli, client):
    client.generate(model="default", prompt="Hi", keep_alive="10m", options={"num_predict": 1})
    r = cli("ps")
    assert r.returncode == 0, r.stderr
    header, rows = table(r.stdout)
    assert header == ["NAME", "ID", "SIZE", "PROCESSOR", "UNTIL"]
    loaded = client.ps().models
    assert sorted(row["NAME"] for row in rows) == sorted(m.model for m in loaded)
    by_name = {m.model: m for m in loaded}
    for row in rows:
        m = by_name[row["NAME"]]
        assert row["SIZE"] == ollama_human_bytes(m.size)
        assert row["PROCESSOR"] == ollama_processor(m.size, m.size_vram)
    default = [row for row in rows if row["NAME"] in ("default:latest", "default")]
    assert default and re.fullmatch(r"(9|10) minutes from now", default[0]["UNTIL"]), rows


def test_show_matches_ollama_show(cli, client, serve):
    want = client.show("default")
    system = httpx.post(serve.url + "/api/show", json={"model": "default"}).json().get("system")
    for flag, field in (("--modelfile", want.modelfile), ("--template", want.template),
                        ("--parameters", want.parameters), ("--system", system),
                        ("--license", want.license)):
        r = cli("show", "default", flag)
        assert r.returncode == 0, r.stderr
        assert r.stdout == (field or "") + "\n", flag
    r = cli("show", "default")
    assert r.returncode == 0, r.stderr
    assert "  Capabilities\n" in r.stdout
    for capability in want.capabilities or []:
        assert f"    {capability}\n" in r.stdout
    if want.details.format:
        assert re.search(r"\n    format\s+" + re.escape(want.details.format) + "\n", r.stdout)


def test_stop_unloads(cli, client):
    client.generate(model="default", prompt="Hi", keep_alive="10m", options={"num_predict": 1})
    before = [m.model for m in client.ps().models]
    r = cli("stop", "default")
    assert r.returncode == 0, r.stderr
    after = [m.model for m in client.ps().models]
    assert len(after) == len(before) - 1
    assert cli("ps").stdout.count("default") == 0


# --- rm and cp (the model store's endpoints) ---------------------------------------------

def test_cp_and_rm(cli, client, default_model):
    client.create(model="cli-test-source", from_=str(default_model))  # a model in the store
    r = cli("cp", "cli-test-source", "cli-test-copy")
    assert r.returncode == 0, r.stderr
    assert r.stdout == "copied 'cli-test-source' to 'cli-test-copy'\n"
    names = [m.model for m in client.list().models]
    assert any(n.startswith("cli-test-copy") for n in names), names
    r = cli("rm", "cli-test-copy")
    assert r.returncode == 0, r.stderr
    assert r.stdout == "deleted 'cli-test-copy'\n"
    assert not any(m.model.startswith("cli-test-copy") for m in client.list().models)
    assert any(m.model.startswith("cli-test-source") for m in client.list().models)
    client.delete("cli-test-source")


def test_rm_unknown_model_prints_the_servers_message(cli, client):
    with pytest.raises(ollama.ResponseError) as e:
        client.delete("no-such-model-for-cli-tests")
    r = cli("rm", "no-such-model-for-cli-tests")
    assert r.returncode == 1
    assert e.value.error in r.stderr


# --- errors, help, version ---------------------------------------------------------------

def test_unknown_model_gives_the_servers_message(cli, client):
    with pytest.raises(ollama.ResponseError) as e:
        client.show("no-such-model")
    for args in (("run", "no-such-model", "hi"), ("show", "no-such-model")):
        r = cli(*args)
        assert r.returncode == 1, args
        assert e.value.error in r.stderr and r.stdout == ""
    # A request the server refuses (a prompt longer than num_ctx): its message, exit 1.
    with pytest.raises(ollama.ResponseError) as e:
        client.generate(model="default", prompt="hello " * 50, options={"num_ctx": 16})
    r = cli("run", "default", "hello " * 50, "--options", '{"num_ctx": 16}')
    assert r.returncode == 1 and e.value.error in r.stderr and r.stdout == ""
    r = cli("stop", "no-such-model")
    assert r.returncode == 1 and "couldn't find model 'no-such-model' to stop" in r.stderr


@pytest.mark.parametrize(
    "args, message",
    [
        (("run",), "give the model to run"),
        (("run", "default", "--bogus"), "unknown flag --bogus for 'heron run'"),
        (("run", "default", "--options", "[1]"), "--options: options must be a JSON object"),
        (("run", "default", "--options", '{"temperature": "hot"}'), "temperature must be a number"),
        (("run", "default", "--options", "{"), "--options:"),
        (("run", "default", "--keepalive", "5x"), "--keepalive must be a duration"),
        (("list", "extra"), "unexpected argument 'extra'"),
        (("ps", "--all"), "unknown flag --all"),
        (("show",), "give one model name"),
        (("show", "default", "--modelfile", "--template"), "only one of --modelfile"),
        (("rm",), "give the names of the models to remove"),
        (("cp", "a"), "give a source and a destination name"),
        (("stop",), "give one model name"),
    ],
)
def test_bad_usage_exits_2_with_a_clear_message(cli, args, message):
    r = cli(*args)
    assert r.returncode == 2, (args, r.stderr)
    assert message in r.stderr
    assert r.stdout == ""


def test_connection_failure_names_the_address(heron_bin):
    host = f"127.0.0.1:{free_port()}"
    for args in (["list"], ["ps"], ["show", "default"], ["stop", "default"], ["rm", "x"], ["cp", "a", "b"]):
        r = heron(heron_bin, host, *args, timeout=30)
        assert r.returncode == 1, args
        assert f"could not connect to heron at http://{host}: nothing answers there" in r.stderr
    r = heron(heron_bin, host, "--version", timeout=30)
    assert r.returncode == 0
    assert r.stdout.startswith(f"Warning: could not connect to a running heron server at http://{host}\n")
    assert re.search(r"Warning: client version is \S+\n$", r.stdout)


def test_version_asks_the_server(cli, serve):
    server_version = httpx.get(serve.url + "/api/version").json()["version"]
    r = cli("--version")
    assert r.returncode == 0
    assert r.stdout.splitlines()[0] == f"heron version is {server_version}"


@pytest.mark.parametrize("command", ["run", "list", "ls", "show", "ps", "rm", "cp", "stop", "serve"])
def test_every_command_has_help(cli, command):
    for args in ((command, "--help"), ("help", command)):
        r = cli(*args)
        assert r.returncode == 0, args
        assert "usage: heron" in r.stdout and "--help" in r.stdout
