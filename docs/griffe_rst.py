r"""A griffe extension for the API reference: the docstrings' reST markup, as Markdown.

rankstats' docstrings are numpydoc, written for ``help()`` and Sphinx-style
readers: cross-references are roles (``:func:`kendall_w```), formulas are
``:math:`...``` and ``.. math::`` blocks, references are ``.. [1]`` entries.
mkdocstrings renders docstrings as Markdown, where those would show as raw
markup. This extension rewrites each docstring once the package is loaded:

- a statistic's docstring is the one its ``@statistic`` decorator fills at
  import time (``{nan_policy}`` and the other shared parameter descriptions,
  see ``rankstats._statistic.SHARED_DOCS``): the module is imported and the
  function's runtime ``__doc__`` replaces the source's, so the page shows
  what ``help()`` shows; a public name assigned from a call that makes a
  function (``maxp = _one_metric(...)``) is documented as that function,
  with its runtime signature and docstring. Every other module is read from
  its source only, never imported (``python -m`` entry points run on import);
- ``:func:`~rankstats.errors.RankstatsWarning``` becomes the code
  ``RankstatsWarning`` linked (optionally: no warning when the target is not
  rendered) to the documented object;
- ``:math:`x``` becomes ``\(x\)`` and a ``.. math::`` block becomes
  ``\[ ... \]`` on lines of their own, for ``pymdownx.arithmatex``;
- ``.. [1] Author`` becomes a list item ``- [1] Author``, and each entry of a
  See Also section (``friedman : the same test ...``) a list item with the
  name as code, instead of one run-on paragraph;
- a parameter entry naming several parameters (``judges, objects : str``)
  becomes one entry per name, so each shows its own default from the
  signature (griffe's numpy parser gives them all the first one's).

It is loaded by ``mkdocs.yml`` (``extensions: - docs/griffe_rst.py``) and
is not part of the package.
"""

from __future__ import annotations

import importlib
import inspect
import re
import textwrap

try:  # pytest collects this file for doctests without the docs extra installed
    import griffe
    from griffe import Extension
except ImportError:  # pragma: no cover
    griffe = None
    Extension = object

_ROLE = re.compile(r":(?:py:)?(func|class|mod|meth|attr|data|obj|exc):`(?P<body>[^`]+)`")
_MATH = re.compile(r":math:`(?P<body>[^`]+)`")
_MATH_BLOCK = re.compile(r"^(?P<indent>[ \t]*)\.\. math::[ \t]*(?P<first>.*)$")
_PLACEHOLDER = re.compile(r"^[ \t]*\{[a-z_]+\}[ \t]*$", flags=re.MULTILINE)
_CITATION = re.compile(r"^(?P<indent>[ \t]*)\.\. \[(?P<label>[^\]]+)\][ \t]+")


def _role(match: re.Match, resolve) -> str:
    body = match.group("body").strip()
    titled = re.fullmatch(r"(?P<title>.+?)\s*<(?P<target>[^>]+)>", body)
    if titled:
        title, target = titled.group("title"), titled.group("target")
    else:
        target = body.lstrip("~")
        title = target.rsplit(".", 1)[-1] if body.startswith("~") else target
    target = target.lstrip(".")
    if match.group(1) in ("func", "meth") and not title.endswith(")"):
        title += "()"
    identifier = resolve(target) if resolve else None
    if identifier is None:
        return f"<code>{title}</code>"
    return f'<span data-autorefs-optional="{identifier}"><code>{title}</code></span>'


def _math_blocks(text: str) -> str:
    lines = text.split("\n")
    out: list[str] = []
    i = 0
    while i < len(lines):
        match = _MATH_BLOCK.match(lines[i])
        if not match:
            out.append(lines[i])
            i += 1
            continue
        indent = match.group("indent")
        body = [match.group("first")] if match.group("first").strip() else []
        i += 1
        block: list[str] = []
        while i < len(lines) and (
            not lines[i].strip() or len(lines[i]) - len(lines[i].lstrip()) > len(indent)
        ):
            block.append(lines[i])
            i += 1
        while block and not block[-1].strip():
            block.pop()
        body += textwrap.dedent("\n".join(block)).split("\n") if block else []
        out += [
            "",
            indent + "\\[",
            *(indent + line.strip() for line in body if line.strip()),
            indent + "\\]",
            "",
        ]
    return "\n".join(out)


_SECTION_RULE = re.compile(r"^[ \t]*-{3,}[ \t]*$")
_SEVERAL = re.compile(r"^(?P<indent>[ \t]*)(?P<names>\w+(?:, \w+)+) : (?P<rest>.*)$")


def split_parameters(text: str) -> str:
    r"""One entry per name in a numpydoc Parameters section.

    Examples
    --------
    >>> split_parameters("Parameters\n----------\na, b : int\n    Sizes.").split("\n")
    ['Parameters', '----------', 'a : int', '    Sizes.', 'b : int', '    Sizes.']
    """
    lines = text.split("\n")
    out: list[str] = []
    section = ""
    i = 0
    while i < len(lines):
        line = lines[i]
        if i + 1 < len(lines) and _SECTION_RULE.match(lines[i + 1]) and line.strip():
            section = line.strip()
        match = _SEVERAL.match(line) if section in ("Parameters", "Other Parameters") else None
        if not match:
            out.append(line)
            i += 1
            continue
        indent = match.group("indent")
        i += 1
        body = []
        while i < len(lines) and (
            not lines[i].strip() or len(lines[i]) - len(lines[i].lstrip()) > len(indent)
        ):
            body.append(lines[i])
            i += 1
        trailing = []
        while body and not body[-1].strip():
            trailing.append(body.pop())
        for name in match.group("names").split(", "):
            out += [f"{indent}{name} : {match.group('rest')}", *body]
        out += trailing
    return "\n".join(out)


def rst_to_markdown(text: str, resolve=None) -> str:
    r"""Rewrite a docstring's reST roles, math and citations as Markdown.

    ``resolve(target)`` gives the identifier a cross-reference links to, or
    None for no link (the default).

    Examples
    --------
    >>> rst_to_markdown("See :func:`~rankstats.kendall_w`.", lambda target: target)
    'See <span data-autorefs-optional="rankstats.kendall_w"><code>kendall_w()</code></span>.'
    >>> rst_to_markdown("A :class:`xarray.Dataset`.")
    'A <code>xarray.Dataset</code>.'
    >>> print(rst_to_markdown(":math:`W = 1` when all agree."))
    \(W = 1\) when all agree.
    """
    text = split_parameters(text)
    text = _ROLE.sub(lambda match: _role(match, resolve), text)
    text = _math_blocks(text)
    text = _MATH.sub(lambda match: "\\(" + match.group("body") + "\\)", text)
    text = see_also_list(text, resolve)
    return "\n".join(_CITATION.sub(r"\g<indent>- [\g<label>] ", line) for line in text.split("\n"))


_SEE_ALSO_ITEM = re.compile(r"^(?P<names>[^:]+?)(?:\s+:\s*(?P<rest>.*))?$")


def _linked(name: str, resolve) -> str:
    identifier = resolve(name) if resolve else None
    if identifier is None:
        return f"`{name}`"
    return f'<span data-autorefs-optional="{identifier}"><code>{name}</code></span>'


def see_also_list(text: str, resolve=None) -> str:
    r"""Each entry of a numpydoc See Also section as a Markdown list item.

    Examples
    --------
    >>> text = "See Also\n--------\nfriedman : the same,\n    more.\nmean, median"
    >>> see_also_list(text).split("\n")[2:]
    ['- `friedman`: the same, more.', '- `mean`, `median`']
    """
    lines = text.split("\n")
    out: list[str] = []
    section = ""
    base = None
    for i, line in enumerate(lines):
        if i + 1 < len(lines) and _SECTION_RULE.match(lines[i + 1]) and line.strip():
            section, base = line.strip(), None
            out.append(line)
            continue
        if section != "See Also" or _SECTION_RULE.match(line) or not line.strip():
            out.append(line)
            continue
        indent = len(line) - len(line.lstrip())
        if base is None:
            base = indent
        if indent > base and out and out[-1].lstrip().startswith("- "):
            out[-1] += " " + line.strip()
            continue
        match = _SEE_ALSO_ITEM.match(line.strip())
        names = ", ".join(
            _linked(name.strip(), resolve) for name in match.group("names").split(",")
        )
        rest = match.group("rest")
        out.append(" " * indent + f"- {names}" + (f": {rest}" if rest else ""))
    return "\n".join(out)


class RstToMarkdown(Extension):
    """Rewrite every docstring of a loaded package (see the module's docstring)."""

    def on_package(self, *, pkg, loader=None, **kwargs) -> None:  # griffe >= 2
        """Complete and rewrite the docstrings of ``pkg`` and all its members."""
        _complete(pkg, set())
        _rewrite(pkg, pkg, loader, set())

    def on_package_loaded(self, *, pkg, loader=None, **kwargs) -> None:  # griffe < 2
        """Complete and rewrite the docstrings of ``pkg`` and all its members."""
        _complete(pkg, set())
        _rewrite(pkg, pkg, loader, set())


def _canonical(obj) -> str | None:
    try:
        return obj.canonical_path
    except Exception:  # an alias that does not resolve
        return None


def _resolver(obj, pkg, loader):
    """``resolve(target)``: the canonical path of what ``target`` names from ``obj``, or None."""
    scopes = []
    scope = obj
    while scope is not None:  # the object itself, its class, module, parent packages
        scopes.append(scope)
        scope = scope.parent
    if pkg not in scopes:
        scopes.append(pkg)

    def resolve(target: str) -> str | None:
        if loader is not None:
            try:
                return _canonical(loader.modules_collection[target])
            except Exception:
                pass
        for scope in scopes:
            try:
                return _canonical(scope[target])
            except Exception:
                continue
        return None

    return resolve


def _filled_at_import(obj) -> bool:
    """Whether ``obj``'s docstring is completed when its module is imported."""
    decorators = getattr(obj, "decorators", ()) or ()
    decorated = any(
        str(d.value).split("(")[0].rsplit(".", 1)[-1] == "statistic" for d in decorators
    )
    return decorated or bool(_PLACEHOLDER.search(obj.docstring.value))


def _runtime(obj):
    """The object at ``obj.path`` once its module is imported."""
    module = obj.module
    try:
        value = importlib.import_module(module.path)
    except Exception as error:
        raise RuntimeError(
            f"importing {module.path} for the docstrings of {obj.path} "
            f"failed: {type(error).__name__}: {error}"
        ) from error
    for part in obj.path[len(module.path) + 1 :].split("."):
        value = getattr(value, part)
    return value


def _runtime_docstring(obj) -> str | None:
    return inspect.getdoc(_runtime(obj))


def _made_by_a_call(obj) -> bool:
    """A module attribute whose value is a call (it may make a function at import time)."""
    return (
        obj.is_attribute
        and obj.parent is not None
        and obj.parent.is_module
        and type(obj.value).__name__ == "ExprCall"
        and not obj.name.startswith("_")
    )


def _docstring_like(module, value: str):
    """A Docstring parsed as the other docstrings of ``module`` are."""
    model = module.docstring or next(
        (
            member.docstring
            for member in module.members.values()
            if not getattr(member, "is_alias", False) and member.docstring
        ),
        None,
    )
    return griffe.Docstring(
        value,
        parser=getattr(model, "parser", None),
        parser_options=getattr(model, "parser_options", None),
    )


def _as_function(obj, function):
    """A griffe Function for the runtime ``function`` bound to the attribute ``obj``."""
    parameters = []
    for parameter in inspect.signature(function).parameters.values():
        default = None if parameter.default is parameter.empty else repr(parameter.default)
        parameters.append(
            griffe.Parameter(
                parameter.name,
                kind=griffe.ParameterKind(parameter.kind.description),
                default=default,
            )
        )
    return griffe.Function(
        obj.name,
        lineno=obj.lineno,
        endlineno=obj.endlineno,
        parameters=griffe.Parameters(*parameters),
        docstring=_docstring_like(obj.parent, inspect.getdoc(function) or ""),
    )


def _complete(obj, seen: set) -> None:
    """Replace what the source cannot tell with what importing the module gives."""
    if getattr(obj, "is_alias", False) or id(obj) in seen:
        return
    seen.add(id(obj))
    for name, member in list(obj.members.items()):
        if getattr(member, "is_alias", False):
            continue
        if member.is_attribute and _made_by_a_call(member):
            try:
                value = _runtime(member)
            except AttributeError:  # not there at run time: leave it as the source says
                continue
            if inspect.isfunction(value) or (callable(value) and hasattr(value, "__wrapped__")):
                obj.set_member(name, _as_function(member, value))
        else:
            _complete(member, seen)


def _rewrite(obj, pkg, loader, seen: set) -> None:
    if getattr(obj, "is_alias", False) or id(obj) in seen:
        return
    seen.add(id(obj))
    docstring = getattr(obj, "docstring", None)
    if docstring is not None and not getattr(docstring, "_rankstats_markdown", False):
        if obj.is_function and _filled_at_import(obj):
            docstring.value = _runtime_docstring(obj) or docstring.value
        docstring.value = rst_to_markdown(docstring.value, _resolver(obj, pkg, loader))
        docstring._rankstats_markdown = True
    for member in list(obj.members.values()):
        _rewrite(member, pkg, loader, seen)
