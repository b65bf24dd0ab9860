"""A Go ``text/template`` evaluator, sandboxed, with the sprig functions Kalypso uses.

``GoTemplate(source, name).render(data)`` parses once and runs many times. Errors are
``TemplateError`` naming ``name`` and the template's line. ``escape_html`` writes every
action's value as Go's ``html/template`` writes it in HTML text (Kalypso's 2023 scheduler
parsed its templates with ``html/template``)."""

from __future__ import annotations

from typing import Any

from promoter.errors import TemplateError
from promoter.gotemplate.execute import Executor
from promoter.gotemplate.functions import NAMES, html_escape
from promoter.gotemplate.parser import parse
from promoter.gotemplate.sprig import to_yaml
from promoter.gotemplate.values import NO_VALUE, Limits, StringMap, Struct


class GoTemplate:
    def __init__(
        self, source: str, name: str, *, escape_html: bool = False, limits: Limits | None = None
    ) -> None:
        self.name = name
        self.limits = limits or Limits()
        if len(source) > self.limits.output:
            raise TemplateError(f"template of {len(source)} characters, over the limit", file=name)
        self.tree = parse(source, name, NAMES)
        self.escape = html_escape if escape_html else None

    def render(self, data: Any) -> str:
        return Executor(self.tree, self.limits, self.escape).run(data)


__all__ = ["NO_VALUE", "GoTemplate", "Limits", "StringMap", "Struct", "to_yaml"]
