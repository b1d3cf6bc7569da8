"""A chat function over the OpenAI machinery (cache, retries, limits), and a scorer for estimates.

:class:`ChatClient` answers batches of conversations, for
:func:`rankstats_collectors.prompts.paraphrase.generate_paraphrases`.
:func:`cell_scorer` scores (template, sample) pairs of one model and task,
for the budgeted estimators :func:`rankstats.estimate_avgp` and
:func:`rankstats.estimate_maxp`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from .client import Request, Requester, run_requests
from .collection import Settings, build_jobs, score_job

__all__ = ["ChatClient", "cell_scorer"]


class ChatClient:
    """``chat(conversations) -> replies`` through a :class:`Requester`.

    Parameters
    ----------
    model : str
        The chat model.
    requester : Requester
        Carries the cache, server, key variable, limits and retries.
    temperature : float
        Sampling temperature (paraphrasing wants some variety).
    max_tokens : int
        The longest reply.
    """

    def __init__(
        self, model: str, requester: Requester, *, temperature: float = 0.7, max_tokens: int = 1024
    ):
        self.model = model
        self.requester = requester
        self.temperature = temperature
        self.max_tokens = max_tokens

    def requests(self, conversations: Sequence[Sequence[Mapping[str, str]]]) -> list[Request]:
        """The requests answering ``conversations``."""
        return [
            Request(
                self.model,
                "chat",
                {
                    "messages": [dict(m) for m in conversation],
                    "temperature": self.temperature,
                    "max_tokens": self.max_tokens,
                },
                label=f"(conversation {i + 1})",
            )
            for i, conversation in enumerate(conversations)
        ]

    def __call__(self, conversations: Sequence[Sequence[Mapping[str, str]]]) -> list[str]:
        """One reply per conversation, from the cache or the server."""
        requests = self.requests(conversations)
        answers = run_requests(requests, self.requester)
        return [answers[r.key]["text"] for r in requests]


def cell_scorer(
    model: str,
    task: str,
    templates,
    samples,
    requester: Requester,
    *,
    settings: Settings | None = None,
    scorer: str | Callable = "exact_match",
):
    """A scoring function of (template id, sample id) pairs for one model and task.

    Each call sends its pairs' requests concurrently (or reads them from the
    cache) and returns their scores in order.

    Examples
    --------
    >>> import rankstats
    >>> from rankstats_collectors.openai.chat import cell_scorer  # doctest: +SKIP
    >>> score = cell_scorer("gpt-4o-mini", "t", templates, samples, requester)  # doctest: +SKIP
    >>> rankstats.estimate_maxp(score, [t.id for t in templates],
    ...                         [s.id for s in samples])  # doctest: +SKIP
    """
    from ..scoring import get_scorer

    settings = settings or Settings()
    score = get_scorer(scorer)
    by_template = {t.id: t for t in templates}
    by_sample = {s.id: s for s in samples}

    def scores(pairs: Sequence[tuple[str, str]]) -> list[float]:
        jobs = []
        for template_id, sample_id in pairs:
            jobs.extend(
                build_jobs(
                    [model],
                    {task: [by_template[template_id]]},
                    {task: [by_sample[sample_id]]},
                    settings,
                )
            )
        answers = run_requests([r for job in jobs for r in job.requests], requester)
        return [score_job(job, answers, settings, score)[0] for job in jobs]

    return scores
