"""What the block tests (post-hoc and incomplete designs) share: their roles and their outputs.

Blocks are the dimensions ranked within (e.g. ``("task",)`` on per-task
MaxP or AvgP, or ``("task", "template")`` on per-template scores), joined
into one axis of blocks by the kernel; treatments are what is ranked
(``"model"``). A kernel's outputs come in three kinds: one value per slice,
one per treatment, one per pair of treatments (over ``treatments`` and
``f"{treatments}_b"``).
"""

from __future__ import annotations

from .._statistic import Inputs, Role

#: Blocks: one dimension or several; by default every dimension but the treatments.
BLOCKS = Role(None, (-2,), many=True, rest=True)
TREATMENTS = ("model", -1)
ROLES = {"blocks": BLOCKS, "treatments": TREATMENTS}


def run(x: Inputs, kernel, outputs: dict, kwargs: dict):
    """Run a block-test kernel; ``outputs`` is ``{"slice"|"treatment"|"pair": names}``."""
    dims = {"slice": [], "treatment": ["treatments"], "pair": ["treatments", "treatments_b"]}
    # the first output must hold every output dim: it lends the Dataset its coordinates
    ordered = [
        (name, kind) for kind in ("pair", "treatment", "slice") for name in outputs.get(kind, ())
    ]
    return x.apply(
        kernel,
        {name: name for name, _ in ordered},
        output_dims={name: dims[kind] for name, kind in ordered},
        pairs="treatments" if outputs.get("pair") else None,
        kwargs={**kwargs, "block_axes": x.count("blocks")},
    )
