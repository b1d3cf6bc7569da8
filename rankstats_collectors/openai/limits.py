"""Rate limits and retry pacing: requests and tokens per minute, backoff honouring Retry-After.

Examples
--------
>>> from rankstats_collectors.openai.limits import Backoff
>>> pause = Backoff(base=1.0, factor=2.0, cap=10.0, jitter=0.0)
>>> [pause.delay(attempt) for attempt in range(5)]
[1.0, 2.0, 4.0, 8.0, 10.0]
>>> pause.delay(0, retry_after="3")
3.0
"""

from __future__ import annotations

import asyncio
import email.utils
import math
import random
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from rankstats.errors import OptionError

__all__ = ["Backoff", "RateLimiter", "retry_after_seconds"]


def retry_after_seconds(headers: Mapping[str, str] | None) -> float | None:
    """The wait a server asks for: ``retry-after-ms``, or ``Retry-After`` in seconds or as a date.

    Examples
    --------
    >>> from rankstats_collectors.openai.limits import retry_after_seconds
    >>> retry_after_seconds({"retry-after": "2"}), retry_after_seconds({"retry-after-ms": "250"})
    (2.0, 0.25)
    >>> retry_after_seconds({"retry-after": "soon"}) is None
    True
    """
    if not headers:
        return None
    lowered = {str(k).lower(): str(v) for k, v in headers.items()}
    if "retry-after-ms" in lowered:
        try:
            return max(0.0, float(lowered["retry-after-ms"]) / 1000.0)
        except ValueError:
            pass
    value = lowered.get("retry-after")
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when is None:
        return None
    return max(0.0, when.timestamp() - time.time())


@dataclass(frozen=True)
class Backoff:
    """Exponential backoff: ``base * factor**attempt`` capped at ``cap``, with random jitter.

    A server's ``Retry-After`` wins over the computed delay (it is capped at
    ``retry_after_cap`` so a bogus header cannot stall a run for hours).
    ``jitter`` is the fraction of the delay added at random, so concurrent
    requests that failed together do not retry together.
    """

    base: float = 1.0
    factor: float = 2.0
    cap: float = 60.0
    jitter: float = 0.25
    retry_after_cap: float = 300.0

    def delay(
        self, attempt: int, retry_after: str | float | None = None, rng: random.Random | None = None
    ) -> float:
        """Seconds to wait before retry number ``attempt + 1``."""
        if retry_after is not None:
            seconds = (
                retry_after
                if isinstance(retry_after, (int, float))
                else retry_after_seconds({"retry-after": retry_after})
            )
            if seconds is not None:
                return float(min(seconds, self.retry_after_cap))
        delay = min(self.cap, self.base * self.factor**attempt)
        if self.jitter:
            delay += delay * self.jitter * (rng or random).random()
        return float(delay)


class RateLimiter:
    """Requests-per-minute and tokens-per-minute budgets, as two token buckets.

    Each bucket holds up to one minute's allowance and refills continuously.
    :meth:`acquire` waits until both buckets can pay for a request and its
    estimated tokens; :meth:`settle` corrects the token bucket once the real
    usage is known. A request larger than a whole minute's token budget
    waits for a full bucket rather than forever.

    Parameters
    ----------
    requests_per_minute, tokens_per_minute : float, optional
        None: no limit.
    clock, sleep : callables
        Injected for tests (default: ``time.monotonic`` and ``asyncio.sleep``).

    Examples
    --------
    >>> import asyncio
    >>> from rankstats_collectors.openai.limits import RateLimiter
    >>> now = [0.0]
    >>> async def sleep(seconds):
    ...     now[0] += seconds
    >>> limiter = RateLimiter(requests_per_minute=60, clock=lambda: now[0], sleep=sleep)
    >>> async def burst():
    ...     for _ in range(61):
    ...         await limiter.acquire()
    >>> asyncio.run(burst())
    >>> round(now[0], 6)  # the 61st request waited one second for the bucket to refill
    1.0
    """

    def __init__(
        self,
        requests_per_minute: float | None = None,
        tokens_per_minute: float | None = None,
        *,
        clock: Callable[[], float] = time.monotonic,
        sleep=None,
    ):
        for name, value in (
            ("requests_per_minute", requests_per_minute),
            ("tokens_per_minute", tokens_per_minute),
        ):
            if value is not None and not value > 0:
                raise OptionError(f"{name} must be positive, not {value!r}")
        self.limits = [requests_per_minute, tokens_per_minute]
        self.levels = [float(v) if v else math.inf for v in self.limits]
        self.clock = clock
        self.sleep = sleep or asyncio.sleep
        self.updated = clock()

    def _refill(self) -> None:
        now = self.clock()
        elapsed = max(0.0, now - self.updated)
        self.updated = now
        for i, limit in enumerate(self.limits):
            if limit:
                self.levels[i] = min(float(limit), self.levels[i] + elapsed * limit / 60.0)

    def _wait_for(self, amounts: list[float]) -> float:
        wait = 0.0
        for level, limit, amount in zip(self.levels, self.limits, amounts, strict=True):
            if not limit:
                continue
            needed = min(amount, float(limit))  # more than a minute's budget: wait for a full one
            if level < needed:
                wait = max(wait, (needed - level) * 60.0 / limit)
        return wait

    async def acquire(self, tokens: float = 0.0) -> None:
        """Wait until one request carrying ``tokens`` (estimated) fits both budgets; pay."""
        amounts = [1.0, float(tokens)]
        while True:
            self._refill()
            wait = self._wait_for(amounts)
            if wait <= 0:
                for i, amount in enumerate(amounts):
                    self.levels[i] -= amount
                return
            await self.sleep(wait)

    def settle(self, estimated: float, actual: float) -> None:
        """Correct the token bucket by the difference between estimated and actual tokens."""
        if self.limits[1]:
            self.levels[1] = min(float(self.limits[1]), self.levels[1] + estimated - actual)
