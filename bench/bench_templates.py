#!/usr/bin/env python3
"""Chat-template render time, heron against jinja2, on a 50-turn conversation with tools.

For every template fixture in tests/fixtures/templates/ the script builds a 50-turn
conversation (system prompt, tool schemas, tool calls and tool results), falling back to a
plainer conversation when a template rejects tool or system turns, renders it with jinja2
in transformers' environment and with `heron render --bench`, checks that both produce the
same text, and prints the CPU time per render of each: the mean over a batch of --repeat
renders, the fastest of --batches batches in each of --rounds turns that the two sides take
alternately (heron's includes reading the JSON context). Target: heron >= 10x faster.

Run from the repository root after building the heron binary:
  .venv/bin/python bench/bench_templates.py [--heron build-jinja/heron] [--repeat 200]
      [--batches 5] [--rounds 3] [--cpu N] [--only NAME ...]   (only the fixtures whose name contains a NAME)
"""
import argparse
import glob
import json
import math
import os
import subprocess
import sys
import tempfile
import time

from transformers.utils.chat_template_utils import _compile_jinja_template

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FIXTURES = os.path.join(ROOT, "tests", "fixtures", "templates")

TOOLS = [
    {"type": "function", "function": {
        "name": "get_weather", "description": "Get the current weather in a city.",
        "parameters": {"type": "object", "properties": {
            "location": {"type": "string", "description": "City name"},
            "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]}},
            "required": ["location"]}}},
    {"type": "function", "function": {
        "name": "search", "description": "Search the web.",
        "parameters": {"type": "object", "properties": {
            "query": {"type": "string", "description": "What to look for"},
            "limit": {"type": "integer", "description": "How many results"}},
            "required": ["query"]}}},
]


def conversation(turns, with_tools, with_system):
    messages = [{"role": "system", "content": "You are a helpful assistant."}] if with_system else []
    for t in range(turns):
        messages.append({"role": "user", "content": f"Question {t}: what is the weather in city {t}? "
                                                    "Please answer in detail, with units."})
        if with_tools and t % 5 == 4:
            call = {"id": f"call_{t}", "type": "function",
                    "function": {"name": "get_weather", "arguments": {"location": f"City {t}", "unit": "celsius"}}}
            messages.append({"role": "assistant", "content": "", "tool_calls": [call]})
            messages.append({"role": "tool", "tool_call_id": f"call_{t}", "name": "get_weather",
                             "content": json.dumps({"temperature": t, "sky": "clear"})})
            messages.append({"role": "user", "content": "Thanks, go on."})
        messages.append({"role": "assistant", "content": f"In city {t} it is {t} degrees and sunny. "
                                                         "Anything else I can help with?"})
    return messages


def variants():
    yield "tools+system", conversation(50, True, True), TOOLS
    yield "tools", conversation(50, True, False), TOOLS
    yield "system", conversation(50, False, True), None
    yield "plain", conversation(50, False, False), None


def time_jinja(template, ctx, repeat, batches):
    # CPU time on both sides: a busy machine inflates wall time, not the work done; and
    # on both sides the fastest of `batches` batches (as timeit advises), the one least
    # disturbed by the rest of the machine.
    template.render(**ctx)
    best = None
    for _ in range(batches):
        start = time.process_time()
        for _ in range(repeat):
            template.render(**ctx)
        us = (time.process_time() - start) / repeat * 1e6
        best = us if best is None else min(best, us)
    return best


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--heron", default=os.path.join(ROOT, "build-jinja", "heron"))
    parser.add_argument("--repeat", type=int, default=200, help="renders per batch")
    parser.add_argument("--batches", type=int, default=5,
                        help="batches per turn; each side's fastest batch is reported")
    parser.add_argument("--rounds", type=int, default=3,
                        help="turns each side takes, alternating with the other")
    parser.add_argument("--only", nargs="+", metavar="NAME",
                        help="bench only the templates whose fixture name contains one of these")
    parser.add_argument("--cpu", type=int, default=min(os.sched_getaffinity(0)),
                        help="the one CPU both sides run on (default: the lowest allowed)")
    args = parser.parse_args()
    if min(args.repeat, args.batches, args.rounds) < 1:
        parser.error("--repeat, --batches and --rounds must be at least 1")
    # Both sides on one CPU (heron's process inherits it): unpinned, a process that moves
    # between this machine's CPUs ran either side up to 1.8x slower for a while, so a
    # ratio depended on which side a move happened to hit.
    os.sched_setaffinity(0, {args.cpu})

    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for path in sorted(glob.glob(os.path.join(FIXTURES, "*.json"))):
            name = os.path.basename(path)[:-5]
            if name in ("cases", "features") or (args.only and not any(o in name for o in args.only)):
                continue
            with open(path, encoding="utf-8") as f:
                fixture = json.load(f)
            template = _compile_jinja_template(fixture["source"])
            for label, messages, tools in variants():
                ctx = {"messages": messages, "tools": tools, "documents": None,
                       "add_generation_prompt": True, "bos_token": fixture["bos_token"],
                       "eos_token": fixture["eos_token"]}
                try:
                    expected = template.render(**ctx)
                    break
                except Exception:
                    continue
            else:
                print(f"{name}: no conversation renders with jinja2, skipped", file=sys.stderr)
                continue
            files = {}
            for key, value in (("template", None), ("messages", messages), ("tools", tools),
                               ("context", {"bos_token": fixture["bos_token"], "eos_token": fixture["eos_token"]})):
                files[key] = os.path.join(tmp, f"{name}.{key}")
                with open(files[key], "w", encoding="utf-8") as f:
                    f.write(fixture["source"] if key == "template" else json.dumps(value))
            cmd = [args.heron, "render", "--template", files["template"], "--messages", files["messages"],
                   "--context", files["context"], "--bench", str(args.repeat),
                   "--bench-batches", str(args.batches)]
            if tools is not None:
                cmd += ["--tools", files["tools"]]
            # The two sides take turns, so that a slow spell of the machine (seconds long,
            # slowing both alike) falls on both rather than on one side's only turn.
            jinja_us = heron_us = math.inf
            for _ in range(args.rounds):
                jinja_us = min(jinja_us, time_jinja(template, ctx, args.repeat, args.batches))
                proc = subprocess.run(cmd, capture_output=True)
                if proc.returncode != 0:
                    break
                stats = json.loads(proc.stderr.decode().strip().splitlines()[-1])
                heron_us = min(heron_us, stats["cpu_us_per_render"])
            if proc.returncode != 0:
                print(f"{name}: heron failed: {proc.stderr.decode(errors='replace')}", file=sys.stderr)
                continue
            same = proc.stdout.decode("utf-8") == expected
            rows.append((name, label, len(expected), jinja_us, heron_us, same))

    print(f"{'template':50} {'conversation':13} {'bytes':>7} {'jinja2 us':>10} {'heron us':>9} {'speedup':>8}  same")
    for name, label, size, j, h, same in rows:
        print(f"{name:50} {label:13} {size:7d} {j:10.1f} {h:9.1f} {j / h:7.1f}x  {'yes' if same else 'NO'}")
    if rows:
        geo = math.exp(sum(math.log(j / h) for _, _, _, j, h, _ in rows) / len(rows))
        worst = min(rows, key=lambda r: r[3] / r[4])
        print(f"\n{len(rows)} templates: geometric-mean speedup {geo:.1f}x, slowest {worst[3] / worst[4]:.1f}x "
              f"({worst[0]}); outputs identical: {sum(r[5] for r in rows)}/{len(rows)}")


if __name__ == "__main__":
    main()
