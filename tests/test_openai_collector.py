"""The OpenAI collector, run with the real openai client against a fake server on 127.0.0.1."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("openai")

from fake_openai import FakeOpenAI, _logprob, _tokens

import rankstats
from rankstats.cli import main
from rankstats_collectors.cache import ResponseCache
from rankstats_collectors.openai import (
    Backoff,
    RateLimiter,
    Requester,
    RequestError,
    Settings,
    collect,
)
from rankstats_collectors.openai.client import Request, run_requests
from rankstats_collectors.tasks import load_samples, load_templates

KEY = "sk-test-9f8e7d6c5b4a-do-not-leak"
ENV = "RANKSTATS_TEST_OPENAI_KEY"
ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def fake():
    server = FakeOpenAI(KEY)
    server.url = server.start()
    yield server
    server.stop()


@pytest.fixture(autouse=True)
def key(monkeypatch):
    monkeypatch.setenv(ENV, KEY)


@pytest.fixture
def task_files(tmp_path):
    templates = [
        {
            "task": "parity",
            "id": "1",
            "text": "Is {x} even? Answer yes or no.",
            "is_original": True,
            "method": "original",
        },
        {
            "task": "parity",
            "id": "2",
            "text": "Even number {x}? yes/no",
            "is_original": False,
            "method": "rephrase",
        },
        {
            "task": "parity",
            "id": "3",
            "text": "Q: is {x} divisible by two?\nA:",
            "is_original": False,
            "method": "cot",
        },
    ]
    samples = [
        {
            "task": "parity",
            "id": f"s{i}",
            "x": i,
            "gold": "yes" if i % 2 == 0 else "no",
            "options": ["yes", "no"],
        }
        for i in range(6)
    ]
    (tmp_path / "templates.jsonl").write_text("\n".join(json.dumps(t) for t in templates) + "\n")
    (tmp_path / "samples.jsonl").write_text("\n".join(json.dumps(s) for s in samples) + "\n")
    return tmp_path / "templates.jsonl", tmp_path / "samples.jsonl"


def requester(cache, fake, **options):
    options = {
        "backoff": Backoff(base=0.001, cap=0.01),
        "timeout": 2.0,
        "concurrency": 4,
        **options,
    }
    return Requester(
        ResponseCache(cache) if not isinstance(cache, ResponseCache) else cache,
        base_url=fake.url,
        api_key_env=ENV,
        **options,
    )


def run(fake, task_files, cache, models=("m1", "m2"), settings=None, **options):
    templates, samples = load_templates(task_files[0]), load_samples(task_files[1])
    return collect(
        list(models),
        templates,
        samples,
        cache=cache,
        settings=settings or Settings(),
        requester=requester(cache, fake, **options),
    )


def same_cube(a, b):
    for name in ("score", "response"):
        assert a[name].equals(b[name]), name
    for name in a.coords:
        assert a[name].equals(b[name]), name


def no_repeats(fake):
    counts = Counter(fake.completed())
    return [body for body, n in counts.items() if n > 1]


def files_mentioning_key(folder):
    return [p for p in Path(folder).rglob("*") if p.is_file() and KEY.encode() in p.read_bytes()]


# ---- a whole run with faults ----------------------------------------------------------------


def test_faults_and_a_kill_end_with_the_fault_free_cube(fake, task_files, tmp_path):
    reference_server = FakeOpenAI(KEY)
    reference_server.url = reference_server.start()
    try:
        reference = run(reference_server, task_files, tmp_path / "reference.jsonl").cube
    finally:
        reference_server.stop()

    fake.fail(429, times=4, retry_after="0.01")
    fake.fail(500, times=2)
    fake.stall(times=1, seconds=30)
    fake.stall_after = 10  # then hold every request, so the run can be killed mid-way
    cache = tmp_path / "run.responses.jsonl"
    command = [
        sys.executable,
        "-m",
        "rankstats.cli",
        "collect",
        "openai",
        "--model",
        "m1",
        "--model",
        "m2",
        "--templates",
        str(task_files[0]),
        "--samples",
        str(task_files[1]),
        "-o",
        str(tmp_path / "run.nc"),
        "--cache",
        str(cache),
        "--base-url",
        fake.url,
        "--api-key-env",
        ENV,
        "--timeout",
        "0.5",
        "--backoff-base",
        "0.01",
        "--concurrency",
        "3",
        "--no-progress",
    ]
    process = subprocess.Popen(
        command,
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        env={**os.environ, ENV: KEY},
    )
    deadline = time.monotonic() + 60
    while len(ResponseCache(cache)) < 10 if cache.exists() else True:
        assert time.monotonic() < deadline, process.stdout.read1().decode()
        assert process.poll() is None, process.stdout.read().decode()
        time.sleep(0.05)
    os.kill(process.pid, signal.SIGKILL)
    process.wait()
    process.stdout.close()
    assert not (tmp_path / "run.nc").exists()
    statuses = Counter(entry["status"] for entry in fake.log)
    assert statuses[429] == 4 and statuses[500] == 2 and statuses[0] >= 1  # 0: stalled

    fake.stall_after = None
    assert main(command[3:]) == 0
    cube = rankstats.open_cube(tmp_path / "run.nc")
    same_cube(cube, reference)
    assert cube.sizes["model"] == 2 and int(cube.score.notnull().sum()) == 2 * 3 * 6
    assert no_repeats(fake) == []
    assert len(fake.completed()) == 2 * 3 * 6  # every request billed exactly once
    assert files_mentioning_key(tmp_path) == []


def test_retry_after_is_honoured_and_backoff_used_otherwise(fake, tmp_path):
    waits = []

    async def sleep(seconds):
        waits.append(seconds)

    fake.fail(429, times=2, retry_after="0.07")
    fake.fail(503, times=1)
    asker = requester(
        tmp_path / "c.jsonl",
        fake,
        concurrency=1,
        sleep=sleep,
        backoff=Backoff(base=0.5, factor=2.0, jitter=0.0),
    )
    request = Request(
        "m1",
        "chat",
        {"messages": [{"role": "user", "content": "hi"}], "temperature": 0.0, "max_tokens": 3},
    )
    answers = run_requests([request], asker)
    assert answers[request.key]["text"] in ("yes", "no")
    assert waits == [0.07, 0.07, 2.0]  # Retry-After twice, then 0.5 * 2**2 on attempt 3
    assert asker.retries == 3


def test_a_stalled_response_times_out_and_is_retried(fake, tmp_path):
    fake.stall(times=1, seconds=20)
    asker = requester(tmp_path / "c.jsonl", fake, timeout=0.3, concurrency=1)
    request = Request(
        "m1", "completions", {"prompt": "Is 2 even?", "max_tokens": 2, "temperature": 0.0}
    )
    started = time.monotonic()
    run_requests([request], asker)
    assert time.monotonic() - started < 5
    assert [entry["status"] for entry in fake.log] == [0, 200]


def test_retries_give_up_after_max_attempts(fake, tmp_path):
    fake.fail(500, times=5)
    asker = requester(tmp_path / "c.jsonl", fake, max_attempts=3)
    request = Request("m1", "chat", {"messages": [{"role": "user", "content": "x"}]})
    with pytest.raises(RequestError, match="after 3 attempts"):
        run_requests([request], asker)


# ---- stopping for good ----------------------------------------------------------------------


def test_a_non_retryable_error_stops_and_keeps_what_was_done(fake, task_files, tmp_path):
    cache = tmp_path / "c.jsonl"
    first = run(fake, task_files, cache, models=["m1"])
    assert len(ResponseCache(cache)) == 18
    fake.fail(400, times=1)
    with pytest.raises(RequestError, match="HTTP 400") as error:
        run(fake, task_files, cache, models=["m1", "m2"], concurrency=1)
    assert "18 new requests" in str(error.value) or "of 18 new requests" in str(error.value)
    assert len(ResponseCache(cache)) >= 18
    done = run(fake, task_files, cache, models=["m1", "m2"])
    same_cube(done.cube.sel(model=["m1"]), first.cube)
    assert no_repeats(fake) == []


@pytest.mark.parametrize(
    "model, wrong_key, status", [("m1", True, 401), ("missing-model", False, 404)]
)
def test_auth_and_missing_model_stop_with_a_clear_message(
    fake, task_files, tmp_path, monkeypatch, model, wrong_key, status
):
    if wrong_key:
        monkeypatch.setenv(ENV, KEY + "-wrong")
    with pytest.raises(RequestError, match=f"HTTP {status}") as error:
        run(fake, task_files, tmp_path / "c.jsonl", models=[model])
    assert KEY not in str(error.value)
    assert files_mentioning_key(tmp_path) == []


def test_missing_key_is_named(fake, task_files, tmp_path, monkeypatch):
    monkeypatch.delenv(ENV)
    with pytest.raises(RequestError, match=ENV):
        run(fake, task_files, tmp_path / "c.jsonl")
    assert fake.log == []


# ---- cache, plans, costs --------------------------------------------------------------------


def test_cache_key_ignores_transport_and_a_rerun_sends_nothing(fake, task_files, tmp_path):
    cache = tmp_path / "c.jsonl"
    first = run(fake, task_files, cache)
    sent = len(fake.log)
    again = run(fake, task_files, cache, concurrency=1, timeout=9.0)
    assert len(fake.log) == sent
    same_cube(first.cube, again.cube)
    assert again.ledger.as_dict()["m1"]["cached"] == 18
    assert again.ledger.as_dict()["m1"]["requests"] == 0
    hotter = run(fake, task_files, cache, settings=Settings(temperature=0.5))
    assert len(fake.log) == sent + 36 and hotter.cube is not None


def test_dry_run_plans_without_sending(fake, task_files, tmp_path, capsys):
    arguments = [
        "collect",
        "openai",
        "--model",
        "m1",
        "--templates",
        str(task_files[0]),
        "--samples",
        str(task_files[1]),
        "--cache",
        str(tmp_path / "c.jsonl"),
        "--base-url",
        fake.url,
        "--api-key-env",
        ENV,
        "--dry-run",
        "--price",
        "m1=1.0,2.0",
    ]
    assert main(arguments) == 0
    assert fake.log == []
    out = capsys.readouterr().out
    assert "m1: 18 requests to send (0 already cached)" in out and "at most $" in out
    run(fake, task_files, tmp_path / "c.jsonl", models=["m1"])
    assert main(arguments) == 0
    assert "m1: 0 requests to send (18 already cached)" in capsys.readouterr().out


def test_costs_come_from_the_returned_usage(fake, task_files, tmp_path):
    templates, samples = load_templates(task_files[0]), load_samples(task_files[1])
    cache = tmp_path / "c.jsonl"
    result = collect(
        ["m1"],
        templates,
        samples,
        cache=cache,
        prices={"m1": (1.0, 10.0)},
        requester=requester(cache, fake),
    )
    records = [json.loads(line)["record"] for line in cache.read_text().splitlines()]
    tokens_in = sum(r["usage"]["prompt_tokens"] for r in records)
    tokens_out = sum(r["usage"]["completion_tokens"] for r in records)
    account = result.ledger.as_dict()["m1"]
    assert (account["prompt_tokens"], account["completion_tokens"]) == (tokens_in, tokens_out)
    assert account["cost"] == pytest.approx((tokens_in * 1.0 + tokens_out * 10.0) / 1e6)


def test_rate_limits_pace_requests_and_tokens():
    now = [0.0]

    async def sleep(seconds):
        now[0] += seconds

    limiter = RateLimiter(
        requests_per_minute=120, tokens_per_minute=1000, clock=lambda: now[0], sleep=sleep
    )

    async def go():
        await limiter.acquire(600)
        await limiter.acquire(600)  # needs 200 more tokens: 12 s at 1000 a minute

    asyncio.run(go())
    assert now[0] == pytest.approx(12.0)


# ---- scoring --------------------------------------------------------------------------------


def test_generated_answers_are_scored_against_gold(fake, task_files, tmp_path):
    cube = run(fake, task_files, tmp_path / "c.jsonl").cube
    gold = np.array(["yes" if i % 2 == 0 else "no" for i in range(6)])
    expected = (cube.response.values == gold).astype(float)
    np.testing.assert_array_equal(cube.score.values, expected)
    assert cube.attrs["temperature"] == 0.0 and cube.attrs["endpoint"] == "chat"
    assert cube.template_method.values.tolist() == [["original", "rephrase", "cot"]]
    assert rankstats.validate(cube) is not None


def test_completion_options_pick_the_likeliest_by_logprobs(fake, task_files, tmp_path):
    settings = Settings(endpoint="completions", scoring="options")
    cube = run(fake, task_files, tmp_path / "c.jsonl", models=["m1"], settings=settings).cube
    templates = load_templates(task_files[0])["parity"]
    for t, template in enumerate(templates):
        for s in range(6):
            prompt = template.text.replace("{x}", str(s))
            totals = []
            for option in ("yes", "no"):
                tokens = _tokens(prompt + " " + option)
                offsets = np.cumsum([0] + [len(x) for x in tokens[:-1]])
                totals.append(
                    sum(
                        _logprob(x)
                        for x, o in zip(tokens, offsets, strict=True)
                        if o + len(x) > len(prompt)
                    )
                )
            assert cube.response.values[0, 0, t, s] == ("yes", "no")[int(np.argmax(totals))]
            # the cube keeps each option's log-probability and length, and the response's
            np.testing.assert_allclose(cube.option_logprob.values[0, 0, t, s], totals)
            assert cube.logprob.values[0, 0, t, s] == max(totals)
            assert cube.option_tokens.values[0, 0, t, s].tolist() == [1, 1]
    # so the cube carries what POSIX needs
    assert np.isfinite(rankstats.posix(cube).values).all()


def test_chat_options_use_the_first_token_alternatives(fake, task_files, tmp_path):
    settings = Settings(endpoint="chat", scoring="options")
    cube = run(fake, task_files, tmp_path / "c.jsonl", models=["m1"], settings=settings).cube
    plain = run(fake, task_files, tmp_path / "d.jsonl", models=["m1"]).cube
    # the fake ranks the generated token first among the alternatives
    np.testing.assert_array_equal(cube.response.values, plain.response.values)


def test_the_collect_command_writes_a_cube_and_a_cost_summary(fake, task_files, tmp_path, capsys):
    output = tmp_path / "cube.nc"
    assert (
        main(
            [
                "collect",
                "openai",
                "--model",
                "m1",
                "--templates",
                str(task_files[0]),
                "--samples",
                str(task_files[1]),
                "-o",
                str(output),
                "--base-url",
                fake.url,
                "--api-key-env",
                ENV,
                "--no-progress",
                "--price",
                "m1=0.5,1.5",
            ]
        )
        == 0
    )
    out = capsys.readouterr().out
    assert "m1: 18 requests (0 from the cache)" in out and "$" in out
    cube = rankstats.open_cube(output)
    assert cube.attrs["base_url"].startswith("http://127.0.0.1:")
    assert files_mentioning_key(tmp_path) == []


@pytest.mark.parametrize("target", ["samples", "folder", "missing"])
def test_the_collect_command_refuses_a_bad_output_before_any_request(
    fake, task_files, tmp_path, capsys, target
):
    samples = task_files[1]
    before = samples.read_bytes()
    output = {"samples": samples, "folder": tmp_path, "missing": tmp_path / "missing" / "cube.nc"}[
        target
    ]
    assert (
        main(
            [
                "collect",
                "openai",
                "--model",
                "m1",
                "--templates",
                str(task_files[0]),
                "--samples",
                str(samples),
                "-o",
                str(output),
                "--base-url",
                fake.url,
                "--api-key-env",
                ENV,
                "--no-progress",
            ]
        )
        == 2
    )
    err = capsys.readouterr().err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert fake.log == [] and samples.read_bytes() == before


def test_budgeted_search_through_the_collector_bills_each_cell_once(fake, task_files, tmp_path):
    from rankstats_collectors.openai.chat import cell_scorer

    templates = load_templates(task_files[0])["parity"]
    samples = load_samples(task_files[1])["parity"]
    asker = requester(tmp_path / "c.jsonl", fake)
    score = cell_scorer("m1", "parity", templates, samples, asker)
    best = rankstats.estimate_maxp(
        score,
        [t.id for t in templates],
        [s.id for s in samples],
        stages=[(None, 2), (2, 2), (1, None)],
        seed=0,
    )
    assert best.calls == 3 * 2 + 2 * 2 + 1 * 2 == len(fake.completed())
    full = collect(
        ["m1"], {"parity": templates}, {"parity": samples}, cache=asker.cache, requester=asker
    ).cube
    exact = full.score.sel(model="m1", task="parity").mean("sample")
    chosen = [t.id for t in templates].index(best.template)
    seen = full.score.sel(model="m1", task="parity").isel(template=chosen)
    assert 0.0 <= best.estimate <= 1.0 and float(exact.max()) >= float(seen.mean()) - 1e-12
    assert no_repeats(fake) == []
    average = rankstats.estimate_avgp(
        score, [t.id for t in templates], [s.id for s in samples], templates_per_sample=4, seed=0
    )
    assert no_repeats(fake) == [] and average.calls <= 4 * 6


def test_the_collect_command_estimates_on_a_budget(fake, task_files, tmp_path, capsys):
    arguments = [
        "collect",
        "openai",
        "--model",
        "m1",
        "--templates",
        str(task_files[0]),
        "--samples",
        str(task_files[1]),
        "--cache",
        str(tmp_path / "c.jsonl"),
        "--base-url",
        fake.url,
        "--api-key-env",
        ENV,
        "--no-progress",
        "--estimate",
        "maxp",
        "--stages",
        "all:2,2:2,1:rest",
    ]
    assert main([*arguments, "--dry-run"]) == 0
    assert "m1 parity: 12 calls" in capsys.readouterr().out and fake.log == []
    assert main(arguments) == 0
    out = capsys.readouterr().out
    assert "m1 parity: MaxP ≈" in out and "12 calls of 18" in out
    assert len(fake.completed()) == 12 and no_repeats(fake) == []


# ---- malformed answers, outputs that cannot be written, a cache shared by two runs ---------

LABEL = "(task 'parity', template '2', sample 's3')"


def one_request():
    return Request(
        "m1",
        "chat",
        {
            "messages": [{"role": "user", "content": "Is 3 even?"}],
            "temperature": 0.0,
            "max_tokens": 3,
        },
        label=LABEL,
    )


@pytest.mark.parametrize("kind", ["json", "html", "shape", "truncated"])
def test_a_malformed_body_is_retried_like_a_server_error(fake, tmp_path, kind):
    fake.corrupt(kind, times=2)
    asker = requester(tmp_path / "c.jsonl", fake, concurrency=1)
    request = one_request()
    answers = run_requests([request], asker)
    assert answers[request.key]["text"] in ("yes", "no")
    assert [entry["status"] for entry in fake.log] == ["corrupt", "corrupt", 200]
    assert asker.retries == 2
    assert ResponseCache(tmp_path / "c.jsonl").get(request.key) == answers[request.key]


@pytest.mark.parametrize("kind", ["json", "html", "shape"])
def test_a_body_malformed_every_time_names_the_request_and_status(fake, tmp_path, kind):
    fake.corrupt(kind, times=3)
    asker = requester(tmp_path / "c.jsonl", fake, max_attempts=3)
    with pytest.raises(RequestError) as error:
        run_requests([one_request()], asker)
    message = str(error.value)
    for part in (
        "m1 chat request",
        "task 'parity'",
        "template '2'",
        "sample 's3'",
        "HTTP 200 with a malformed body",
        "after 3 attempts",
        "0 of 1 new requests",
    ):
        assert part in message, part
    assert KEY not in message
    assert len(ResponseCache(tmp_path / "c.jsonl")) == 0


def _read_only(path: Path) -> Path:
    path.write_bytes(b"previous cube")
    path.chmod(0o444)
    return path


@pytest.mark.parametrize(
    "output, error",
    [
        (lambda folder: folder / "missing" / "cube.nc", "does not exist"),
        (lambda folder: folder, "is a folder"),
        (lambda folder: _read_only(folder / "cube.nc"), "write-protected"),
    ],
)
def test_an_output_that_cannot_be_written_stops_before_any_request(
    fake, task_files, tmp_path, output, error
):
    target = output(tmp_path)
    cache = tmp_path / "c.jsonl"
    templates, samples = load_templates(task_files[0]), load_samples(task_files[1])
    with pytest.raises(rankstats.errors.PathError, match=error):
        collect(
            ["m1"], templates, samples, cache=cache, output=target, requester=requester(cache, fake)
        )
    assert fake.log == [] and not cache.exists()
    if target.is_file():
        assert target.read_bytes() == b"previous cube"


HOLDER = """
import sys, time
from rankstats_collectors.cache import ResponseCache
cache = ResponseCache(sys.argv[1])
with cache.locked():
    print("locked", flush=True)
    time.sleep(float(sys.argv[2]))
"""


def _holding(cache: Path, seconds: float) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), *sys.path])}
    process = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(cache), str(seconds)],
        stdout=subprocess.PIPE,
        text=True,
        env=env,
    )
    assert process.stdout.readline().strip() == "locked"
    return process


def test_a_cache_written_by_another_run_is_refused_before_sending(fake, tmp_path):
    from rankstats_collectors.cache import CacheBusyError

    cache = tmp_path / "c.jsonl"
    holder = _holding(cache, 30)
    try:
        with pytest.raises(CacheBusyError, match="being written by another process"):
            run_requests([one_request()], requester(cache, fake))
        assert fake.log == []
    finally:
        holder.kill()
        holder.wait()
        holder.stdout.close()
    answers = run_requests([one_request()], requester(cache, fake))
    assert len(answers) == 1 and len(fake.completed()) == 1


def test_a_second_run_waits_for_the_cache_and_sends_only_what_is_missing(fake, tmp_path):
    cache = tmp_path / "c.jsonl"
    first, second = (
        one_request(),
        Request(
            "m1",
            "chat",
            {"messages": [{"role": "user", "content": "Is 4 even?"}], "max_tokens": 3},
            label=LABEL,
        ),
    )
    waiting = requester(cache, fake, lock_timeout=30)  # opened while the cache is empty
    holder = _holding(cache, 3)
    # what the other run answered while this one waited is read, not asked again
    run_requests([first], requester(ResponseCache(tmp_path / "other.jsonl"), fake))
    with open(cache, "a", encoding="utf-8") as handle:
        record = ResponseCache(tmp_path / "other.jsonl").get(first.key)
        handle.write(json.dumps({"key": first.key, "record": record}) + "\n")
    sent = len(fake.completed())
    assert holder.poll() is None  # still holding: the run below has to wait
    answers = run_requests([first, second], waiting)
    holder.wait()
    holder.stdout.close()
    assert set(answers) == {first.key, second.key}
    assert len(fake.completed()) == sent + 1
    assert waiting.ledger.summary().count("from the cache") >= 1


# ---- the OpenAI-compatible servers of the serving engines ---------------------------------------


@pytest.fixture(params=["vllm", "tgi", "llamacpp"])
def engine(request):
    server = FakeOpenAI(KEY, dialect=request.param)
    server.url = server.start()
    yield server
    server.stop()


def test_generated_answers_through_each_engine_s_server(engine, task_files, tmp_path):
    reference = FakeOpenAI(KEY)
    reference.url = reference.start()
    try:
        expected = run(reference, task_files, tmp_path / "ref.jsonl", models=["m1"]).cube
    finally:
        reference.stop()
    for endpoint in ("chat", "completions"):
        cube = run(
            engine,
            task_files,
            tmp_path / f"{endpoint}.jsonl",
            models=["m1"],
            settings=Settings(endpoint=endpoint),
        ).cube
        if endpoint == "chat":
            np.testing.assert_array_equal(cube.response.values, expected.response.values)
        gold = np.array(["yes" if i % 2 == 0 else "no" for i in range(6)])
        np.testing.assert_array_equal(
            cube.score.values, (cube.response.values == gold).astype(float)
        )
        served = {"vllm": "m1", "tgi": "tgi", "llamacpp": "local-model.gguf"}[engine.dialect]
        assert cube.model_revision.values.tolist() == [served]
    # options from the first token's top_logprobs: the chat dialect every engine speaks
    options = run(
        engine,
        task_files,
        tmp_path / "options.jsonl",
        models=["m1"],
        settings=Settings(endpoint="chat", scoring="options"),
    ).cube
    np.testing.assert_array_equal(options.response.values, expected.response.values)


def test_options_by_echoed_logprobs_where_the_engine_echoes(engine, task_files, tmp_path):
    settings = Settings(endpoint="completions", scoring="options")
    if engine.dialect == "vllm":
        cube = run(engine, task_files, tmp_path / "c.jsonl", models=["m1"], settings=settings).cube
        reference = FakeOpenAI(KEY)
        reference.url = reference.start()
        try:
            expected = run(
                reference, task_files, tmp_path / "r.jsonl", models=["m1"], settings=settings
            ).cube
        finally:
            reference.stop()
        np.testing.assert_array_equal(cube.response.values, expected.response.values)
    else:
        status = {"tgi": "422", "llamacpp": "400"}[engine.dialect]
        with pytest.raises(RequestError, match=status):
            run(engine, task_files, tmp_path / "c.jsonl", models=["m1"], settings=settings)


def test_llamacpp_completion_logprobs_in_the_chat_shape_are_read(tmp_path):
    server = FakeOpenAI(KEY, dialect="llamacpp")
    server.url = server.start()
    try:
        cache = tmp_path / "c.jsonl"
        body = {"prompt": "Is 2 even?", "max_tokens": 3, "logprobs": 0}
        answers = run_requests([Request("m1", "completions", body)], requester(cache, server))
    finally:
        server.stop()
    record = next(iter(answers.values()))
    assert record["logprobs"]["tokens"] == _tokens(record["text"])
    assert record["logprobs"]["token_logprobs"] == [_logprob(t) for t in _tokens(record["text"])]
