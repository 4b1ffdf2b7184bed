"""The README, `heron serve --help` and the code name the same environment variables,
each once, with the same defaults."""
import os
import re
import subprocess

from conftest import ROOT

# Set by `heron serve` for each runner it starts, or by the integration tests (a runner
# that emits a file's text instead of sampling): not a user's setting.
INTERNAL = {"HERON_RUNNER_TOKEN", "HERON_TEST_SCRIPTED_OUTPUT"}


def readme_table():
    text = (ROOT / "README.md").read_text()
    section = text.split("### Environment", 1)[1].split("\n#", 1)[0]
    rows = re.findall(r"^\| `(HERON_[A-Z_]+)` \| (.+?) \| (.+?) \|$", section, re.M)
    return [(name, meaning, default) for name, meaning, default in rows]


def help_table(heron_bin):
    out = subprocess.run([str(heron_bin), "serve", "--help"], capture_output=True, text=True,
                         timeout=60).stdout
    return re.findall(r"^  (HERON_[A-Z_]+) +(.+) \[(.+)\]$", out, re.M)


def read_by_code():
    """Every variable name the sources spell as a string of its own (what getenv reads)."""
    names = set()
    for path in (ROOT / "src").rglob("*.cpp"):
        names |= set(re.findall(r'"(HERON_[A-Z_]+)"', path.read_text()))
    return names - INTERNAL


def test_readme_and_serve_help_list_every_variable_once_with_its_default(heron_bin):
    readme, shown = readme_table(), help_table(heron_bin)
    assert readme and shown
    assert len({n for n, _, _ in readme}) == len(readme), "a variable listed twice in the README"
    assert len({n for n, _, _ in shown}) == len(shown), "a variable listed twice by serve --help"
    assert sorted(readme) == sorted(shown)
    assert {n for n, _, _ in readme} == read_by_code()


def test_version_calls_the_documented_default_host(heron_bin):
    default = dict((n, d) for n, _, d in readme_table())["HERON_HOST"]
    env = {k: v for k, v in os.environ.items() if k != "HERON_HOST"}
    r = subprocess.run([str(heron_bin), "--version"], capture_output=True, text=True, timeout=60,
                       env=env)
    assert r.returncode == 0
    assert f"http://{default}" in r.stdout or "heron version is" in r.stdout
