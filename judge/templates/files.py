"""Templates to and from YAML / JSON, and the built-in library (``builtin.yaml`` beside this
module, the prompts of ../shared/PROMPTS.md)."""

from __future__ import annotations

import dataclasses
import json
import os
from collections.abc import Iterable, Mapping
from functools import cache
from pathlib import Path
from typing import Any

from judge.templates.fields import TemplateError, closest
from judge.templates.template import Template

_BUILTIN_PATH = Path(__file__).resolve().parent / "builtin.yaml"
_TEMPLATE_KEYS = tuple(f.name for f in dataclasses.fields(Template))
_REQUIRED_KEYS = ("id", "version", "kind", "text")


def _looks_like_path(obj: Any) -> bool:
    if isinstance(obj, os.PathLike):
        return True
    if not isinstance(obj, str) or "\n" in obj or obj.lstrip().startswith(("{", "[")):
        return False
    try:
        return Path(obj).is_file()
    except OSError:  # e.g. a one-line YAML document longer than a file name may be
        return False


def load_templates(path_or_text: str | os.PathLike, fmt: str | None = None) -> dict[str, Template]:
    """Read templates from a YAML or JSON file or string, validating every entry.

    Parameters
    ----------
    path_or_text : path or str
        A file path, or the YAML / JSON text itself.
    fmt : {"yaml", "json"}, optional
        Defaults to the file suffix (.json -> json), else yaml.

    The document is a list of template mappings, a mapping with a ``templates`` list (other
    top-level keys must start with "_", e.g. to hold YAML anchors), or one template mapping.
    Keys are those of :class:`Template`.

    Returns
    -------
    dict id -> Template, in file order.

    Raises
    ------
    TemplateError
        For unreadable text, an unknown key (naming it and the closest valid one), a missing
        required key, an unknown field in a text, a duplicate id, or any rule of
        :class:`Template` (comparative: {a} and {b}, two distinct labels; absolute: a scale).
    """
    origin = "text"
    if _looks_like_path(path_or_text):
        path = Path(path_or_text)
        origin = str(path)
        if fmt is None:
            fmt = "json" if path.suffix.lower() == ".json" else "yaml"
        try:
            content = path.read_text(encoding="utf-8")
        except OSError as exc:
            raise TemplateError(f"cannot read templates from {path}: {exc}") from None
    else:
        content = str(path_or_text)
        fmt = fmt or "yaml"
    if fmt not in ("yaml", "json"):
        raise TemplateError(f"fmt must be 'yaml' or 'json', got {fmt!r}")
    try:
        if fmt == "json":
            doc = json.loads(content)
        else:
            import yaml  # only needed here

            doc = yaml.safe_load(content)
    except Exception as exc:  # yaml.YAMLError / json.JSONDecodeError: report, do not guess
        raise TemplateError(f"cannot parse {fmt} templates from {origin}: {exc}") from None

    if isinstance(doc, Mapping) and "templates" in doc:
        extra = [k for k in doc if k != "templates" and not str(k).startswith("_")]
        if extra:
            raise TemplateError(
                f"{origin}: unknown top-level key {extra[0]!r}; put templates under 'templates' "
                "(keys starting with '_' may hold YAML anchors)"
            )
        entries = doc["templates"]
    elif isinstance(doc, Mapping):
        entries = [doc]
    else:
        entries = doc
    if not isinstance(entries, list) or not entries:
        raise TemplateError(f"{origin}: expected a list of templates, got {type(entries).__name__}")

    out: dict[str, Template] = {}
    for i, entry in enumerate(entries):
        label = f"{origin}: template #{i + 1}"
        if not isinstance(entry, Mapping):
            raise TemplateError(f"{label} must be a mapping of keys, got {type(entry).__name__}")
        if "id" in entry:
            label += f" ({entry['id']!r})"
        for k in entry:
            if k not in _TEMPLATE_KEYS:
                raise TemplateError(
                    f"{label}: unknown key {k!r}{closest(str(k), _TEMPLATE_KEYS)}; "
                    f"valid keys: {', '.join(_TEMPLATE_KEYS)}"
                )
        missing = [k for k in _REQUIRED_KEYS if k not in entry]
        if missing:
            raise TemplateError(f"{label}: missing required key(s) {', '.join(missing)}")
        kwargs = dict(entry)
        for k in ("labels", "scale"):
            if isinstance(kwargs.get(k), list):
                kwargs[k] = tuple(kwargs[k])
        try:
            template = Template(**kwargs)
        except TemplateError as exc:
            raise TemplateError(f"{label}: {exc}") from None
        if template.id in out:
            raise TemplateError(f"{label}: duplicate template id {template.id!r}")
        out[template.id] = template
    return out


def dump_templates(
    templates: Mapping[str, Template] | Iterable[Template], fmt: str = "yaml"
) -> str:
    """Serialise templates in the format :func:`load_templates` reads (round-trips exactly)."""
    items = list(templates.values()) if isinstance(templates, Mapping) else list(templates)
    for t in items:
        if not isinstance(t, Template):
            raise TemplateError(f"dump_templates expects Template objects, got {type(t).__name__}")
    doc = {"templates": [t.to_dict() for t in items]}
    if fmt == "json":
        return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"
    if fmt != "yaml":
        raise TemplateError(f"fmt must be 'yaml' or 'json', got {fmt!r}")
    import yaml

    class _Dumper(yaml.SafeDumper):
        pass

    def _str(dumper: yaml.SafeDumper, value: str) -> yaml.Node:
        # Multi-line prompts read best as literal blocks; PyYAML falls back to quoting when a
        # block cannot represent the string exactly (e.g. trailing spaces).
        style = "|" if "\n" in value else None
        return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)

    _Dumper.add_representer(str, _str)
    return yaml.dump(doc, Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=100)


@cache
def _builtin() -> tuple[Template, ...]:
    return tuple(load_templates(_BUILTIN_PATH).values())


def builtin_templates() -> dict[str, Template]:
    """The built-in library (PROMPTS.md), id -> Template; a fresh dict on every call."""
    return {t.id: t for t in _builtin()}


__all__ = ["builtin_templates", "dump_templates", "load_templates"]
