"""`heron run` starts `heron serve` in the background when nothing answers at $HERON_HOST."""
import os
import signal
import subprocess
from pathlib import Path

import ollama
import pytest
from conftest import _children, _free_port


def serve_pids(heron_bin, host):
    """`heron serve` processes of this binary that listen at `host` (from their environment)."""
    pids = []
    for proc in Path("/proc").glob("[0-9]*"):
        try:
            argv = (proc / "cmdline").read_bytes().split(b"\0")
            environ = (proc / "environ").read_bytes().split(b"\0")
            exe = (proc / "exe").resolve()
        except OSError:
            continue
        # By executable, not argv[0]: HERON_BIN may be relative, the auto-started serve not.
        if (exe == Path(heron_bin).resolve() and argv[1:2] == [b"serve"]
                and f"HERON_HOST={host}".encode() in environ):
            pids.append(int(proc.name))
    return pids


@pytest.fixture
def isolated(heron_bin, tmp_path):
    """An environment with its own HOME, HERON_MODELS and free port; any server started
    there is killed (with its runners) at the end."""
    host = f"127.0.0.1:{_free_port()}"
    env = dict(os.environ, HOME=str(tmp_path / "home"), HERON_MODELS=str(tmp_path / "store" / "models"),
               HERON_HOST=host)
    yield env
    for pid in serve_pids(heron_bin, host):
        for child in _children(pid):
            os.kill(child, signal.SIGKILL)
        os.kill(pid, signal.SIGKILL)


def test_run_starts_serve_when_none_answers(heron_bin, isolated, tmp_path):
    host = isolated["HERON_HOST"]
    assert not serve_pids(heron_bin, host)
    r = subprocess.run([str(heron_bin), "run", "default", "Say hi.", "--options",
                        '{"temperature": 0, "num_predict": 8}'],
                       env=isolated, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    log = tmp_path / "store" / "serve.log"  # next to $HERON_MODELS
    assert f"no server answers at http://{host}; starting `heron serve` (log: {log})" in r.stderr
    assert "listening on" in log.read_text()
    # The server outlives the command and answers the same question the same way.
    assert len(serve_pids(heron_bin, host)) == 1
    client = ollama.Client(host="http://" + host, timeout=120)
    want = client.generate(model="default", prompt="Say hi.", options={"temperature": 0, "num_predict": 8})
    assert r.stdout == want.response + "\n"
    # A second run finds it and starts no other.
    r = subprocess.run([str(heron_bin), "run", "default", "Hi", "--options", '{"num_predict": 2}'],
                       env=isolated, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0 and "starting" not in r.stderr
    assert len(serve_pids(heron_bin, host)) == 1


def test_a_server_that_cannot_start_is_reported(heron_bin, isolated, tmp_path):
    env = dict(isolated, HERON_KEEP_ALIVE="soon")  # `heron serve` refuses this and exits
    del env["HERON_MODELS"]
    r = subprocess.run([str(heron_bin), "run", "default", "Hi"], env=env, capture_output=True,
                       text=True, timeout=60)
    assert r.returncode == 1
    log = tmp_path / "home" / ".heron" / "serve.log"
    assert f"`heron serve` exited before it answered at http://{env['HERON_HOST']}; see {log}" in r.stderr
    assert "HERON_KEEP_ALIVE" in log.read_text()


def test_start_timeout_is_checked(heron_bin, isolated):
    env = dict(isolated, HERON_START_TIMEOUT="soon")
    r = subprocess.run([str(heron_bin), "run", "default", "Hi"], env=env, capture_output=True,
                       text=True, timeout=60)
    assert r.returncode == 2 and "$HERON_START_TIMEOUT must be a number of seconds" in r.stderr
