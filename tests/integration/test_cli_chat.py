"""`heron run NAME` on a terminal (a pseudo-terminal here): slash commands, \"\"\" input,
history of the conversation, and Ctrl-C, with every answer checked against the `ollama`
client's answer to the same conversation on the same server."""
import os
import pty
import re
import select
import signal
import time

import ollama
import pytest

OPTIONS = {"temperature": 0, "num_predict": 24}
SYSTEM = "You are a geography teacher in Zürich."  # non-ASCII: the line editor keeps UTF-8


class Terminal:
    """A program on a pseudo-terminal: what it printed so far, and typing into it."""

    def __init__(self, argv, env):
        self.argv, self.env = argv, env
        self.pid, self.fd = pty.fork()
        if self.pid == 0:
            os.execve(argv[0], argv, env)
        self.out = ""  # everything printed, with \r\n turned into \n
        self.seen = 0  # how much of `out` expect() has consumed

    def _read(self, timeout):
        r, _, _ = select.select([self.fd], [], [], timeout)
        if not r:
            return False
        try:
            data = os.read(self.fd, 65536)
        except OSError:  # the program has gone
            return False
        self.out += data.decode("utf-8", "replace").replace("\r\n", "\n")
        return bool(data)

    def expect(self, pattern, timeout=120):
        """Waits for `pattern` after what was seen; returns the text before it."""
        deadline = time.time() + timeout
        while True:
            m = re.compile(pattern).search(self.out, self.seen)
            if m:
                before = self.out[self.seen:m.start()]
                self.seen = m.end()
                return before
            if time.time() > deadline or not self._read(min(1.0, max(0.0, deadline - time.time()))):
                if time.time() > deadline:
                    raise AssertionError(f"no {pattern!r} in:\n{self.out[self.seen:]}")

    def type(self, text):
        os.write(self.fd, text.encode())

    def line(self, text):
        self.type(text + "\r")

    def exit_code(self, timeout=15):
        deadline = time.time() + timeout
        while time.time() < deadline:
            pid, status = os.waitpid(self.pid, os.WNOHANG)
            if pid:
                return os.waitstatus_to_exitcode(status)
            self._read(0.1)
        return None

    def close(self):
        try:
            os.kill(self.pid, signal.SIGKILL)
            os.waitpid(self.pid, 0)
        except (ProcessLookupError, ChildProcessError):
            pass
        os.close(self.fd)


@pytest.fixture
def chat(heron_bin, serve, tmp_path):
    env = dict(os.environ, HERON_HOST=serve.url.removeprefix("http://"), HOME=str(tmp_path),
               TERM="xterm")
    env.pop("HERON_MODELS", None)
    t = Terminal([str(heron_bin), "run", "default"], env)
    yield t
    t.close()


@pytest.fixture(scope="module")
def client(serve):
    return ollama.Client(host=serve.url, timeout=120)


def after_echo(t, typed):
    """What is printed after the echo of the line `typed`, up to the next prompt. Text typed
    before the line editor takes the terminal may be echoed twice (once by the terminal)."""
    t.expect(re.escape(typed) + "\n")
    text = t.expect(r"\n\n>>> ")
    return text[len(typed) + 1:] if text.startswith(typed + "\n") else text


def answer(t, question):
    """Asks `question` at the prompt and returns the answer as printed."""
    t.line(question)
    return after_echo(t, question)


def reference(client, messages):
    return client.chat(model="default", messages=messages, options=OPTIONS).message.content


def test_chat_commands_and_answers_match_ollama(chat, client, tmp_path):
    t = chat
    t.expect(">>> ")
    t.line("/set parameter temperature 0")
    t.expect(r"Set parameter 'temperature' to '0'\n>>> ")
    t.line("/set parameter num_predict 24")
    t.expect(r"Set parameter 'num_predict' to '24'\n>>> ")
    t.line(f"/set system {SYSTEM}")
    t.expect(r"Set system message.\n>>> ")

    q1, q2 = "What is the capital of France?", "And of Germany?"
    a1 = answer(t, q1)
    history = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": q1}]
    assert a1 == reference(client, history)
    a2 = answer(t, q2)
    history += [{"role": "assistant", "content": a1}, {"role": "user", "content": q2}]
    assert a2 == reference(client, history)

    t.line("/clear")
    t.expect(r"Cleared session context\n>>> ")
    a3 = answer(t, q2)  # the conversation is gone, the system message stays
    assert a3 == reference(client, [{"role": "system", "content": SYSTEM}, {"role": "user", "content": q2}])

    t.line("/clear")
    t.expect(">>> ")
    t.line('"""What is')
    t.expect(r"\.\.\. ")
    t.line("the capital of Italy?")
    t.expect(r"\.\.\. ")
    t.line('"""')
    a4 = after_echo(t, '"""')
    assert a4 == reference(client, [{"role": "system", "content": SYSTEM},
                                    {"role": "user", "content": "What is\nthe capital of Italy?"}])

    t.line("/show system")
    t.expect(re.escape(SYSTEM) + r"\n>>> ")
    t.line("/show parameters")
    shown = t.expect(">>> ")
    assert "User defined parameters:\n" in shown
    assert re.search(r"\ntemperature\s+0(\.0)?\n", shown) and re.search(r"\nnum_predict\s+24\n", shown), shown
    t.line("/show modelfile")
    assert t.expect(">>> ").endswith(client.show("default").modelfile + "\n")
    t.line("/?")
    assert "/bye" in t.expect(">>> ")
    t.line("/set parameter temperature hot")
    assert "parameter 'temperature' must be a number" in t.expect(">>> ")
    t.line("/frobnicate")
    t.expect(r"Unknown command '/frobnicate'. Type /\? for help\n>>> ")
    t.line("/bye")
    assert t.exit_code() == 0

    # The input history outlives the session: Up twice brings back "/frobnicate".
    again = Terminal(t.argv, t.env)
    try:
        again.expect(">>> ")
        again.type("\x1b[A\x1b[A\r")
        again.expect(r"Unknown command '/frobnicate'")
    finally:
        again.close()
    assert (tmp_path / ".heron" / "history").exists()


def test_ctrl_c_stops_the_answer_not_the_program(chat, client):
    t = chat
    t.expect(">>> ")
    t.type("half a line\x03")  # at the prompt: the line is dropped, the chat goes on
    t.expect(r"Use Ctrl \+ d or /bye to exit.\n>>> ")
    # Greedy, this question runs to any length limit (about 3 minutes for 3000 tokens here).
    t.line("/set parameter temperature 0")
    t.expect(">>> ")
    t.line("/set parameter num_predict 3000")
    t.expect(">>> ")
    question = "Repeat the word hello 1000 times."
    t.line(question)
    t.expect(re.escape(question) + "\n")
    t.expect(r"[Hh]ello[\s\S]{20}")  # the answer is streaming
    stopped = time.time()
    t.type("\x03")
    t.expect(r">>> ", timeout=10)
    # The program works on, and so does the server: it dropped the stopped answer (the
    # runner takes one request at a time, so an answer still running would hold this one
    # up for minutes). The stopped exchange is not part of the conversation.
    t.line("/set parameter num_predict 24")
    t.expect(">>> ")
    q = "What is the capital of France?"
    got = answer(t, q)
    assert time.time() - stopped < 60
    assert got == reference(client, [{"role": "user", "content": q}])
    t.type("\x04")  # Ctrl-D leaves
    assert t.exit_code() == 0


def test_ctrl_c_ends_a_one_shot_answer_and_the_request(heron_bin, serve, client, tmp_path):
    """`heron run NAME PROMPT`: Ctrl-C during the answer ends the program at once with
    status 0 (as `ollama run` does: its generate() returns nil on context.Canceled), and
    the server drops the answer."""
    env = dict(os.environ, HERON_HOST=serve.url.removeprefix("http://"), HOME=str(tmp_path),
               TERM="xterm")
    env.pop("HERON_MODELS", None)
    question = "Repeat the word hello 1000 times."
    t = Terminal([str(heron_bin), "run", "default", question, "--options",
                  '{"temperature": 0, "num_predict": 3000}'], env)
    try:
        t.expect(r"[Hh]ello[\s\S]{20}")  # the answer is streaming
        stopped = time.time()
        t.type("\x03")
        assert t.exit_code(timeout=10) == 0
        assert time.time() - stopped < 5
        # The runner takes one request at a time: had the stopped answer gone on (about 3
        # minutes for 3000 tokens here), this one would wait for it.
        q = "What is the capital of France?"
        assert client.chat(model="default", messages=[{"role": "user", "content": q}],
                           options=OPTIONS).message.content
        assert time.time() - stopped < 60
    finally:
        t.close()
