"""The few transformers calls whose spelling changed between the releases the collector supports.

Everything else in the collector is written against the API that every
supported release shares; each function here answers one question with
whichever spelling the installed release understands, so that a rename in
transformers is handled in this module alone:

- the key/value cache is passed to ``forward`` as ``cache`` (transformers 5.x)
  or ``past_key_values`` (earlier), read back from the output under the same
  name, and is either a ``Cache`` object or, in older releases for some
  models, a tuple of per-layer ``(key, value)`` tensors;
- ``from_pretrained`` takes the weights' type as ``dtype`` (4.56 and later) or
  ``torch_dtype`` (earlier);
- keeping only the last position's logits is ``logits_to_keep``,
  ``num_logits_to_keep``, or not offered.
"""

from __future__ import annotations

import inspect

__all__ = ["cache_argument", "dtype_argument", "last_logits_only", "returned_cache", "select_rows"]

# The first release whose from_pretrained takes ``dtype`` (it warns about ``torch_dtype``
# since); earlier releases pass an unknown ``dtype`` on to the config and load float32.
_DTYPE_RENAMED = (4, 56)


def _forward_parameters(model) -> set[str]:
    # inspect.signature follows functools.wraps, so deprecation wrappers show the real names
    return set(inspect.signature(model.forward).parameters)


def cache_argument(model, cache) -> dict:
    """Keyword arguments that pass ``cache`` to ``model``'s forward pass.

    Examples
    --------
    >>> from rankstats_collectors.hf.compat import cache_argument
    >>> class New:
    ...     def forward(self, input_ids, cache=None): ...
    >>> class Old:
    ...     def forward(self, input_ids, past_key_values=None): ...
    >>> cache_argument(New(), "kv"), cache_argument(Old(), "kv")
    ({'cache': 'kv'}, {'past_key_values': 'kv'})
    """
    name = "cache" if "cache" in _forward_parameters(model) else "past_key_values"
    return {name: cache}


def returned_cache(output):
    """The key/value cache a forward pass returned (called with ``use_cache=True``)."""
    fields = output.keys()
    # Reading the old name on a new release works but logs a deprecation notice.
    return output["cache"] if "cache" in fields else output["past_key_values"]


def select_rows(cache, rows):
    """The cache with batch rows ``rows`` only (repeats allowed), in that order.

    A ``Cache`` object is changed in place and returned; a tuple of per-layer
    tensors (which older releases return for some models) is indexed into a
    new tuple.

    Examples
    --------
    >>> import torch
    >>> from rankstats_collectors.hf.compat import select_rows
    >>> layer = (torch.arange(3.0).view(3, 1), -torch.arange(3.0).view(3, 1))
    >>> [t.ravel().tolist() for t in select_rows((layer,), torch.tensor([2, 2, 0]))[0]]
    [[2.0, 2.0, 0.0], [-2.0, -2.0, -0.0]]
    """
    if isinstance(cache, tuple):
        return tuple(tuple(tensor[rows] for tensor in layer) for layer in cache)
    cache.batch_select_indices(rows)
    return cache


def last_logits_only(model) -> dict:
    """Keyword arguments that make ``model`` return the last position's logits only, if it can.

    For a large vocabulary the full (batch × length × vocabulary) logits of a
    prompt would dominate memory; without the option the result is the same,
    only larger.
    """
    parameters = _forward_parameters(model)
    for name in ("logits_to_keep", "num_logits_to_keep"):
        if name in parameters:
            return {name: 1}
    return {}


def dtype_argument(dtype, version: str | None = None) -> dict:
    """Keyword arguments of ``from_pretrained`` that load the weights as ``dtype``.

    Parameters
    ----------
    dtype : torch.dtype
        The weights' type.
    version : str, optional
        A transformers version; by default the installed one.

    Examples
    --------
    >>> from rankstats_collectors.hf.compat import dtype_argument
    >>> dtype_argument("float16", "4.55.4"), dtype_argument("float16", "5.0.0")
    ({'torch_dtype': 'float16'}, {'dtype': 'float16'})
    """
    if version is None:
        import transformers

        version = transformers.__version__
    from packaging.version import Version  # a dependency of transformers

    release = Version(version).release[:2]
    return {"dtype" if release >= _DTYPE_RENAMED else "torch_dtype": dtype}
