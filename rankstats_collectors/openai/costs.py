"""Cost accounting: tokens in and out per model from the usage the API returns, and plans.

Prices are not built in (they change); give them per million tokens to see
money as well as tokens.

Examples
--------
>>> from rankstats_collectors.openai.costs import Ledger
>>> ledger = Ledger(prices={"gpt-x": (0.5, 1.5)})
>>> ledger.add("gpt-x", {"prompt_tokens": 1000, "completion_tokens": 200})
>>> ledger.add("gpt-x", None, cached=True)
>>> print(ledger.summary())
gpt-x: 2 requests (1 from the cache), 1,000 tokens in, 200 tokens out, $0.0008
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field

__all__ = ["Ledger", "Plan", "estimate_tokens"]


def estimate_tokens(text: str) -> int:
    """A rough token count (about four characters a token), for plans and rate limits.

    Examples
    --------
    >>> from rankstats_collectors.openai.costs import estimate_tokens
    >>> estimate_tokens("Is the sky blue?")
    4
    """
    return max(1, math.ceil(len(text) / 4)) if text else 0


@dataclass
class _Account:
    requests: int = 0
    cached: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0


@dataclass
class Ledger:
    """Requests and tokens per model; dollars where ``prices`` gives (in, out) per 1M tokens."""

    prices: Mapping[str, tuple[float, float]] = field(default_factory=dict)
    accounts: dict[str, _Account] = field(default_factory=dict)

    def add(self, model: str, usage: Mapping | None, *, cached: bool = False) -> None:
        """Count one answered request: billed with ``usage``, or answered from the cache."""
        account = self.accounts.setdefault(model, _Account())
        if cached:
            account.cached += 1
            return
        account.requests += 1
        usage = usage or {}
        account.prompt_tokens += int(usage.get("prompt_tokens") or 0)
        account.completion_tokens += int(usage.get("completion_tokens") or 0)

    def cost(self, model: str) -> float | None:
        """Dollars spent on ``model``, or None without a price for it."""
        if model not in self.prices or model not in self.accounts:
            return None
        price_in, price_out = self.prices[model]
        account = self.accounts[model]
        return (account.prompt_tokens * price_in + account.completion_tokens * price_out) / 1e6

    def as_dict(self) -> dict:
        """Per model: requests, cached, prompt_tokens, completion_tokens, cost (or None)."""
        return {
            model: {**account.__dict__, "cost": self.cost(model)}
            for model, account in sorted(self.accounts.items())
        }

    def summary(self) -> str:
        """One line per model."""
        lines = []
        for model, account in sorted(self.accounts.items()):
            total = account.requests + account.cached
            line = (
                f"{model}: {total:,} request{'s' if total != 1 else ''} "
                f"({account.cached:,} from the cache), {account.prompt_tokens:,} tokens in, "
                f"{account.completion_tokens:,} tokens out"
            )
            cost = self.cost(model)
            if cost is not None:
                line += f", ${cost:.4f}"
            lines.append(line)
        return "\n".join(lines) or "no requests"


@dataclass
class Plan:
    """What a run would request before it spends anything: requests and estimated tokens.

    Examples
    --------
    >>> from rankstats_collectors.openai.costs import Plan
    >>> plan = Plan()
    >>> plan.add("gpt-x", "Is the sky blue?", max_tokens=5)
    >>> plan.add("gpt-x", "Is grass green?", max_tokens=5, cached=True)
    >>> print(plan.summary())
    gpt-x: 1 request to send (1 already cached), about 4 tokens in, at most 5 tokens out
    """

    prices: Mapping[str, tuple[float, float]] = field(default_factory=dict)
    rows: dict[str, list[int]] = field(default_factory=dict)

    def add(self, model: str, prompt: str, *, max_tokens: int, cached: bool = False) -> None:
        """Count one request (or one answered from the cache)."""
        row = self.rows.setdefault(model, [0, 0, 0, 0])
        if cached:
            row[1] += 1
            return
        row[0] += 1
        row[2] += estimate_tokens(prompt)
        row[3] += int(max_tokens)

    @property
    def requests(self) -> int:
        """Requests that would be sent."""
        return sum(row[0] for row in self.rows.values())

    def summary(self) -> str:
        """One line per model."""
        lines = []
        for model, (send, cached, tokens_in, tokens_out) in sorted(self.rows.items()):
            line = (
                f"{model}: {send:,} request{'s' if send != 1 else ''} to send "
                f"({cached:,} already cached), about {tokens_in:,} tokens in, "
                f"at most {tokens_out:,} tokens out"
            )
            if model in self.prices:
                price_in, price_out = self.prices[model]
                line += f", at most ${(tokens_in * price_in + tokens_out * price_out) / 1e6:.4f}"
            lines.append(line)
        return "\n".join(lines) or "nothing to request"
