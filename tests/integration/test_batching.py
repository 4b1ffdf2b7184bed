"""Continuous batching (HERON_NUM_PARALLEL): requests decode together as the rows of one
forward. Each answer is the one the same request gets from a server that runs one request
at a time (greedy, seeded sampling, stop strings), a request joins a batch while another
streams, and a client that leaves mid-batch does not disturb the others."""
import concurrent.futures
import json

import httpx
import ollama
import pytest
from conftest import start_serve

REQUESTS = [
    {"prompt": "Name three colours.", "options": {"temperature": 0, "num_predict": 24}},
    {"prompt": "Write one sentence about the sea.",
     "options": {"temperature": 0.8, "seed": 7, "top_k": 40, "num_predict": 20}},
    {"prompt": "List the days of the week.",
     "options": {"temperature": 0, "num_predict": 40, "stop": ["Wednesday"]}},
    {"prompt": "What is the capital of France? Answer in a short paragraph.",
     "options": {"temperature": 0, "num_predict": 32}},
]


@pytest.fixture(scope="module")
def batched(heron_bin, tmp_path_factory):
    with start_serve(heron_bin, tmp_path_factory.mktemp("batched"), HERON_NUM_PARALLEL="4") as s:
        yield s


def generate(url, request, timeout=120):
    r = ollama.Client(host=url, timeout=timeout).generate(model="default", **request)
    return r.response, r.done_reason, r.eval_count


def test_concurrent_requests_give_what_they_give_one_at_a_time(serve, batched):
    alone = [generate(serve.url, r) for r in REQUESTS]
    generate(batched.url, {"prompt": "hi", "options": {"num_predict": 1}})  # loaded
    with concurrent.futures.ThreadPoolExecutor(len(REQUESTS)) as pool:
        together = list(pool.map(lambda r: generate(batched.url, r), REQUESTS))
    assert together == alone
    assert alone[2][1] == "stop" and alone[2][0].endswith("3. ")


def test_a_request_joins_while_another_streams(serve, batched):
    # About 3000 tokens: one at a time, a request behind it would wait for most of a minute.
    long = {"model": "default", "prompt": "Write a long story about a dragon.",
            "options": {"temperature": 0, "num_predict": 3000}}
    with httpx.stream("POST", batched.url + "/api/generate", json=long, timeout=120) as r:
        lines = r.iter_lines()
        next(lines)
        # It joins the batch and finishes in seconds, while the long request decodes.
        joined = generate(batched.url, REQUESTS[0], timeout=20)
        assert joined == generate(serve.url, REQUESTS[0]) and joined[1:] == ("length", 24)
        assert not json.loads(next(lines))["done"]
    # The long one was left mid-batch; the model serves the next request as before.
    assert generate(batched.url, REQUESTS[3]) == generate(serve.url, REQUESTS[3])


def test_a_client_that_leaves_mid_batch_does_not_disturb_the_others(serve, batched):
    expected = generate(serve.url, REQUESTS[3])

    def leave_early():
        body = {"model": "default", "prompt": "Describe a forest.",
                "options": {"temperature": 0, "num_predict": 500}}
        with httpx.stream("POST", batched.url + "/api/generate", json=body, timeout=120) as r:
            for i, _ in enumerate(r.iter_lines()):
                if i == 5:
                    return

    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        leaving = pool.submit(leave_early)
        staying = pool.submit(generate, batched.url, REQUESTS[3])
        leaving.result(timeout=120)
        assert staying.result(timeout=120) == expected
