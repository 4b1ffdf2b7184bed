"""What the model-specific benchmarks share: their command line (--runs, --gen-tokens,
--prompt-tokens) and the bench/bench_generate.py command it becomes."""
import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def parse_run_args(doc: str) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=doc,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--gen-tokens", type=int, default=64)
    ap.add_argument("--prompt-tokens", type=int, default=256)
    return ap.parse_args()


def generate_command(args: argparse.Namespace) -> list:
    """bench_generate.py with these runs and lengths; the caller adds engines and models."""
    return [sys.executable, str(ROOT / "bench/bench_generate.py"), "--runs", str(args.runs),
            "--gen-tokens", str(args.gen_tokens), "--prompt-tokens", str(args.prompt_tokens)]
