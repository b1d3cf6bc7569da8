"""Find, identify and load Hugging Face models and their tokenizers.

:func:`resolve` reads only a model's configuration and tokenizer, so unknown
models fail before any weights are loaded; it also pins the model's identity
(the Hub commit, or a hash of a local folder's files), which goes into every
cache key and into the cube.
"""

from __future__ import annotations

import hashlib
import platform
from dataclasses import dataclass
from pathlib import Path

from .compat import dtype_argument
from .errors import CollectorError

__all__ = [
    "ModelSpec",
    "choose_device",
    "choose_dtype",
    "library_versions",
    "load_model",
    "resolve",
]

_CHUNK = 1 << 20


@dataclass
class ModelSpec:
    """A model as the collector runs it.

    Attributes
    ----------
    name : str
        The model id or path as the user gave it; the cube's ``model`` label.
    revision : str
        The Hub commit of the files used, or ``"sha256:..."`` of a local
        folder's files.
    encoder_decoder : bool
        True for sequence-to-sequence models (``AutoModelForSeq2SeqLM``).
    tokenizer : transformers.PreTrainedTokenizerBase
        The model's tokenizer.
    """

    name: str
    revision: str
    encoder_decoder: bool
    tokenizer: object
    requested_revision: str | None = None


def folder_hash(folder: Path) -> str:
    r"""``sha256:<hex>`` over the names and contents of the files directly in ``folder``.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> from rankstats_collectors.hf.loading import folder_hash
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (folder / "config.json").write_text("{}")
    >>> import hashlib
    >>> folder_hash(folder) == "sha256:" + hashlib.sha256(b"config.json\0{}\0").hexdigest()
    True
    """
    digest = hashlib.sha256()
    for path in sorted(p for p in Path(folder).iterdir() if p.is_file()):
        digest.update(path.name.encode() + b"\0")
        with open(path, "rb") as handle:
            while chunk := handle.read(_CHUNK):
                digest.update(chunk)
        digest.update(b"\0")
    return "sha256:" + digest.hexdigest()


def resolve(model: str, *, revision: str | None = None, chat: bool = False) -> ModelSpec:
    """Read a model's configuration and tokenizer, without its weights.

    Parameters
    ----------
    model : str
        A local folder written by ``save_pretrained``, or a Hub model id.
    revision : str, optional
        The Hub revision (branch, tag or commit) to use.
    chat : bool
        Whether prompts will go through the tokenizer's chat template (it
        must have one).

    Returns
    -------
    ModelSpec

    Raises
    ------
    CollectorError
        The model cannot be found, its configuration is neither a
        decoder-only nor an encoder-decoder language model, it has no
        tokenizer, or it has no chat template when ``chat`` is set.

    Examples
    --------
    >>> import tempfile
    >>> from rankstats_collectors.hf.loading import resolve
    >>> resolve(tempfile.mkdtemp())
    Traceback (most recent call last):
    ...
    rankstats_collectors.hf.errors.CollectorError: model '...': not found (not a local model ...
    """
    from transformers import AutoConfig, AutoTokenizer

    local = Path(model).expanduser()
    if local.exists() and not local.is_dir():
        raise CollectorError(f"model {model!r}: a file, not a model folder")
    try:
        config = AutoConfig.from_pretrained(
            str(local) if local.is_dir() else model, revision=revision
        )
    except (OSError, ValueError) as error:
        raise CollectorError(
            f"model {model!r}: not found (not a local model folder, and not a Hugging Face "
            f"Hub model available here): {error}"
        ) from None
    try:
        tokenizer = AutoTokenizer.from_pretrained(
            str(local) if local.is_dir() else model, revision=revision
        )
    except (OSError, ValueError, TypeError) as error:
        raise CollectorError(f"model {model!r}: its tokenizer cannot be loaded: {error}") from None
    if chat and not getattr(tokenizer, "chat_template", None):
        raise CollectorError(
            f"model {model!r}: its tokenizer has no chat template; run without chat templates"
        )
    if local.is_dir():
        identity = folder_hash(local)
    else:
        identity = getattr(config, "_commit_hash", None) or revision or "unknown"
    return ModelSpec(
        model, identity, bool(getattr(config, "is_encoder_decoder", False)), tokenizer, revision
    )


def choose_device(device: str | None = None):
    """The torch device: ``device`` if given, else CUDA when present, else CPU.

    Examples
    --------
    >>> from rankstats_collectors.hf.loading import choose_device
    >>> choose_device("cpu").type
    'cpu'
    """
    import torch

    if device:
        return torch.device(device)
    return torch.device("cuda" if torch.cuda.is_available() else "cpu")


def choose_dtype(dtype: str, device):
    """The torch dtype: ``"auto"`` is bfloat16 (or float16) on CUDA and float32 on CPU.

    Examples
    --------
    >>> from rankstats_collectors.hf.loading import choose_dtype
    >>> choose_dtype("auto", "cpu")
    torch.float32
    >>> choose_dtype("float16", "cpu")
    torch.float16
    """
    import torch

    if dtype == "auto":
        if getattr(device, "type", str(device)) == "cuda":
            return torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16
        return torch.float32
    value = getattr(torch, str(dtype), None)
    if not isinstance(value, torch.dtype) or not value.is_floating_point:
        raise CollectorError(
            f"dtype {dtype!r} is not a floating-point torch dtype "
            "(e.g. float32, bfloat16, float16) or 'auto'"
        )
    return value


def load_model(spec: ModelSpec, device, dtype):
    """The model's weights, on ``device`` in ``dtype``, in evaluation mode."""
    from transformers import AutoModelForCausalLM, AutoModelForSeq2SeqLM

    auto = AutoModelForSeq2SeqLM if spec.encoder_decoder else AutoModelForCausalLM
    local = Path(spec.name).expanduser()
    model = auto.from_pretrained(
        str(local) if local.is_dir() else spec.name,
        revision=spec.requested_revision,
        **dtype_argument(dtype),
    )
    return model.to(device).eval()


def library_versions() -> dict[str, str]:
    """Versions of Python, torch, transformers and tokenizers, for the cube's attributes.

    Examples
    --------
    >>> from rankstats_collectors.hf.loading import library_versions
    >>> sorted(library_versions())
    ['python', 'tokenizers', 'torch', 'transformers']
    """
    from importlib.metadata import PackageNotFoundError, version

    versions = {"python": platform.python_version()}
    for package in ("torch", "transformers", "tokenizers"):
        try:
            versions[package] = version(package)
        except PackageNotFoundError:
            versions[package] = "not installed"
    return versions
