"""Send requests to an OpenAI-compatible API: concurrently, within rate limits, resumably.

Each :class:`Request` is answered at most once: its record is looked up in a
:class:`~rankstats_collectors.cache.ResponseCache` under the hash of everything that
changes the output (model, endpoint, decoding settings, messages or prompt),
and written there as soon as the answer arrives, so a run killed at any point
and restarted repeats no completed request. Transient failures (429, 5xx,
timeouts, dropped connections) are retried with exponential backoff that
honours ``Retry-After``; so are answers whose body is malformed or cut short
(not JSON, or not a completion). Any other error stops the run at once,
keeping everything answered so far; every message names the model, the
request (task, template, sample) and the status. The cache is locked for the
whole run, so a second run on the same cache waits or is refused instead of
sending every request again. The API key is handed to the client only: it is
in no cache key, record, message or log.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from rankstats.errors import OptionError, RankstatsError

from ..cache import ResponseCache
from .costs import Ledger, estimate_tokens
from .limits import Backoff, RateLimiter, retry_after_seconds

__all__ = ["ENDPOINTS", "Request", "RequestError", "Requester", "redact", "run_requests"]

ENDPOINTS = ("chat", "completions")
#: Statuses worth another try: timeouts, conflicts, rate limits, server errors.
RETRYABLE = frozenset({408, 409, 429, 500, 502, 503, 504})


class RequestError(RankstatsError, RuntimeError):
    """A request failed for good (e.g. 400, 401, 404, or retries exhausted); the run stopped."""


class MalformedResponse(Exception):
    """A 200 answer whose body is not the completion asked for (retried like a 5xx)."""


def redact(text: str, secrets: Sequence[str]) -> str:
    """``text`` with every secret replaced by ``[redacted]``.

    Examples
    --------
    >>> from rankstats_collectors.openai.client import redact
    >>> redact("bad key sk-123 given", ["sk-123"])
    'bad key [redacted] given'
    """
    for secret in secrets:
        if secret:
            text = text.replace(secret, "[redacted]")
    return text


@dataclass(frozen=True)
class Request:
    """One API call: the model, the endpoint and the body (decoding settings and input).

    ``label`` names the request in messages (e.g. task, template, sample);
    it is not sent and not part of the cache key.

    Examples
    --------
    >>> from rankstats_collectors.openai.client import Request
    >>> a = Request("gpt-x", "chat", {"messages": [{"role": "user", "content": "Hi"}],
    ...                               "temperature": 0.0}, label="t/1/a")
    >>> b = Request("gpt-x", "chat", {"temperature": 0.0,
    ...                               "messages": [{"role": "user", "content": "Hi"}]})
    >>> a.key == b.key
    True
    """

    model: str
    endpoint: str
    body: Mapping
    label: str = field(default="", compare=False)

    def __post_init__(self):
        if self.endpoint not in ENDPOINTS:
            raise OptionError(
                f"endpoint must be one of {', '.join(ENDPOINTS)}, not {self.endpoint!r}"
            )

    @property
    def key(self) -> str:
        """The cache key: a hash of the model, endpoint and body."""
        return ResponseCache.key(
            {
                "collector": "openai",
                "model": self.model,
                "endpoint": self.endpoint,
                "body": dict(self.body),
            }
        )

    @property
    def input_text(self) -> str:
        """The prompt, or the messages' contents joined (for token estimates)."""
        if self.endpoint == "completions":
            return str(self.body.get("prompt", ""))
        return "\n".join(str(m.get("content", "")) for m in self.body.get("messages", []))

    @property
    def max_tokens(self) -> int:
        """The most tokens the request may generate."""
        value = self.body.get("max_tokens", self.body.get("max_completion_tokens"))
        return int(value or 0)


def _record(endpoint: str, response) -> dict:
    """The parts of a response worth keeping, as plain JSON.

    Raises :class:`MalformedResponse` when the body is not a completion of
    ``endpoint`` (text instead of JSON, no choices, fields of the wrong type).
    """
    try:
        record = _fields(endpoint, response)
        json.dumps(record, allow_nan=False)
    except (AttributeError, IndexError, KeyError, TypeError, ValueError) as error:
        shown = repr(response) if isinstance(response, (str, bytes)) else type(response).__name__
        shown = shown if len(shown) <= 80 else shown[:77] + "..."
        raise MalformedResponse(
            f"the body is not a {endpoint} completion ({shown}: {type(error).__name__}: {error})"
        ) from None
    if not isinstance(record["text"], str):
        raise MalformedResponse(f"the body's text is a {type(record['text']).__name__}, not text")
    return record


def _fields(endpoint: str, response) -> dict:
    choice = response.choices[0]
    usage = response.usage.model_dump() if response.usage is not None else None
    record = {
        "model": response.model,
        "finish_reason": choice.finish_reason,
        "usage": usage,
        "system_fingerprint": getattr(response, "system_fingerprint", None),
    }
    if endpoint == "chat":
        record["text"] = choice.message.content or ""
        content = choice.logprobs.content if choice.logprobs is not None else None
        record["logprobs"] = (
            None
            if content is None
            else [
                {
                    "token": t.token,
                    "logprob": t.logprob,
                    "top": [[alt.token, alt.logprob] for alt in (t.top_logprobs or [])],
                }
                for t in content
            ]
        )
    else:
        record["text"] = choice.text or ""
        logprobs = choice.logprobs
        record["logprobs"] = None if logprobs is None else _completion_logprobs(logprobs)
    return record


def _completion_logprobs(logprobs) -> dict:
    """Token log-probabilities of a completion, in the OpenAI shape whatever the server's.

    llama.cpp's server answers completions with the chat shape (a
    ``content`` list of tokens); the offsets are then counted from the start
    of the returned text.
    """
    content = (getattr(logprobs, "model_extra", None) or {}).get("content")
    if not logprobs.tokens and isinstance(content, list):
        tokens = [str(item.get("token", "")) for item in content]
        offsets = [sum(len(t) for t in tokens[:i]) for i in range(len(tokens))]
        return {
            "tokens": tokens,
            "token_logprobs": [item.get("logprob") for item in content],
            "text_offset": offsets,
        }
    return {
        "tokens": list(logprobs.tokens or []),
        "token_logprobs": list(logprobs.token_logprobs or []),
        "text_offset": list(logprobs.text_offset or []),
    }


class Requester:
    """Answers requests from the cache or the API, concurrently and within limits.

    Parameters
    ----------
    cache : ResponseCache
        Where answers are looked up and stored.
    base_url : str, optional
        An OpenAI-compatible server (default: the client's, i.e. OpenAI's).
    api_key_env : str
        The environment variable holding the key (never the key itself, so
        it stays out of command lines and settings).
    concurrency : int
        Requests in flight at most.
    limiter : RateLimiter, optional
        Requests- and tokens-per-minute budgets.
    backoff : Backoff
        Delays between attempts.
    max_attempts : int
        Attempts per request before giving up.
    timeout : float
        Seconds to wait for one response.
    ledger : Ledger, optional
        Counts requests and tokens.
    progress : bool
        Show a progress bar on stderr.
    sleep : callable, optional
        ``async sleep(seconds)``, injected by tests.
    lock_timeout : float, default 0
        Seconds to wait for another process writing the same cache before
        :class:`~rankstats_collectors.cache.CacheBusyError`; 0 refuses at once.
    """

    def __init__(
        self,
        cache: ResponseCache,
        *,
        base_url: str | None = None,
        api_key_env: str = "OPENAI_API_KEY",
        concurrency: int = 8,
        limiter: RateLimiter | None = None,
        backoff: Backoff | None = None,
        max_attempts: int = 6,
        timeout: float = 60.0,
        ledger: Ledger | None = None,
        progress: bool = False,
        sleep: Callable | None = None,
        seed: int | None = None,
        lock_timeout: float = 0.0,
    ):
        if concurrency < 1 or max_attempts < 1 or not timeout > 0:
            raise OptionError("concurrency and max_attempts must be positive, timeout above 0")
        self.lock_timeout = lock_timeout
        self.cache = cache
        self.base_url = base_url
        self.api_key_env = api_key_env
        self.concurrency = concurrency
        self.limiter = limiter
        self.backoff = backoff or Backoff()
        self.max_attempts = max_attempts
        self.timeout = timeout
        self.ledger = ledger if ledger is not None else Ledger()
        self.progress = progress
        self.sleep = sleep or asyncio.sleep
        self.random = random.Random(seed)
        self.retries = 0

    def _key(self) -> str:
        key = os.environ.get(self.api_key_env)
        if not key:
            raise RequestError(f"no API key: set the environment variable {self.api_key_env}")
        return key

    def _client(self, key: str):
        from .. import require

        openai = require("openai", "openai")
        return openai.AsyncOpenAI(
            api_key=key, base_url=self.base_url, timeout=self.timeout, max_retries=0
        )

    async def _call(self, client, request: Request):
        if request.endpoint == "chat":
            return await client.chat.completions.create(model=request.model, **request.body)
        return await client.completions.create(model=request.model, **request.body)

    async def _fetch(
        self, client, request: Request, secrets: list[str], stop: asyncio.Event | None = None
    ) -> dict:
        import openai

        estimate = estimate_tokens(request.input_text) + request.max_tokens
        what = _described(request)
        for attempt in range(self.max_attempts):
            if self.limiter is not None:
                await self.limiter.acquire(estimate)
            try:
                response = await self._call(client, request)
                record = _record(request.endpoint, response)
            except (openai.APITimeoutError, openai.APIConnectionError) as error:
                problem, wait = f"{type(error).__name__}", None
            except openai.APIStatusError as error:
                status = error.status_code
                if status not in RETRYABLE:
                    raise RequestError(
                        redact(f"{what} failed with HTTP {status}: {error.message}", secrets)
                    ) from None
                problem = f"HTTP {status}"
                wait = retry_after_seconds(error.response.headers)
            except (ValueError, openai.APIResponseValidationError, MalformedResponse) as error:
                # a 200 whose body is not JSON (ValueError), or not the completion asked for
                problem, wait = f"HTTP 200 with a malformed body: {_short(error)}", None
            else:
                if self.limiter is not None and record["usage"]:
                    self.limiter.settle(estimate, record["usage"].get("total_tokens") or 0)
                self.cache.put(request.key, record)
                self.ledger.add(request.model, record["usage"])
                return record
            if stop is not None and stop.is_set():
                raise RequestError(
                    redact(f"{what} not retried ({problem}): the run is stopping", secrets)
                )
            if attempt + 1 == self.max_attempts:
                raise RequestError(
                    redact(
                        f"{what} still failing after {self.max_attempts} attempts ({problem})",
                        secrets,
                    )
                )
            self.retries += 1
            await self.sleep(self.backoff.delay(attempt, wait, self.random))
            if stop is not None and stop.is_set():
                raise RequestError(
                    redact(f"{what}: not retried ({problem}), the run is stopping", secrets)
                )
        raise AssertionError("unreachable")  # pragma: no cover

    async def run(self, requests: Sequence[Request]) -> dict[str, dict]:
        """Answer every request; return ``{key: record}``. Stops at the first fatal error."""
        answers: dict[str, dict] = {}
        pending: dict[str, Request] = {}
        for request in requests:
            key = request.key
            record = self.cache.get(key)
            if record is not None:
                if key not in answers:
                    self.ledger.add(request.model, None, cached=True)
                answers[key] = record
            else:
                pending.setdefault(key, request)
        if not pending:
            return answers
        key = self._key()
        with self.cache.locked(timeout=self.lock_timeout):
            # another run may have answered some of them while this one waited for the cache
            for request_key in [k for k in pending if k in self.cache]:
                request = pending.pop(request_key)
                self.ledger.add(request.model, None, cached=True)
                answers[request_key] = self.cache.get(request_key)
            if pending:
                await self._send(pending, answers, key)
        return answers

    async def _send(self, pending: dict, answers: dict, key: str) -> None:
        secrets = [key]
        client = self._client(key)
        gate = asyncio.Semaphore(self.concurrency)
        stop = asyncio.Event()
        fatal: list[RequestError] = []
        bar = _bar(len(pending), self.progress)

        async def one(request: Request) -> None:
            async with gate:
                # after a fatal error nothing new is sent, but what is in flight finishes and
                # is cached, so no answered (and billed) request is lost
                if stop.is_set():
                    return
                try:
                    answers[request.key] = await self._fetch(client, request, secrets, stop)
                except RequestError as error:
                    if not stop.is_set():
                        fatal.append(error)
                    stop.set()
                    raise
            bar.update(1)

        try:
            outcomes = await asyncio.gather(
                *(one(r) for r in pending.values()), return_exceptions=True
            )
        finally:
            bar.close()
            await client.close()
        failures = fatal + [o for o in outcomes if isinstance(o, BaseException)]
        if failures:
            finished = sum(1 for k in pending if k in answers)
            first = failures[0]
            shown = (
                str(first)
                if isinstance(first, RequestError)
                else f"{type(first).__name__}: {first}"
            )
            raise RequestError(
                redact(
                    f"{shown} — stopped; {finished} of {len(pending)} new requests were "
                    f"answered and are cached in {str(self.cache.path)!r}; fix the cause and run "
                    "again to resume",
                    secrets,
                )
            ) from None


def _described(request: Request) -> str:
    """``model endpoint request (task ..., template ..., sample ...)``, for messages."""
    label = f" {request.label}" if request.label else ""
    return f"{request.model} {request.endpoint} request{label}"


def _short(error: BaseException) -> str:
    text = str(error) or type(error).__name__
    return text if len(text) <= 160 else text[:157] + "..."


class _NoBar:
    def update(self, n: int) -> None:
        pass

    def close(self) -> None:
        pass


def _bar(total: int, show: bool):
    if not show:
        return _NoBar()
    # A requirement of the extra: when it is missing, say so rather than drop the bar.
    from .. import require

    tqdm = require("tqdm.auto", "openai").tqdm
    return tqdm(total=total, unit="request", file=sys.stderr, dynamic_ncols=True)


def run_requests(requests: Sequence[Request], requester: Requester) -> dict[str, dict]:
    """Run :meth:`Requester.run` to completion from synchronous code."""
    return asyncio.run(requester.run(requests))
