"""A Go ``text/template`` evaluator, sandboxed, with the sprig functions Kalypso uses.

``GoTemplate(source, name).render(data)`` parses once and runs many times, as Kalypso's
scheduler runs a Template's manifest (``scheduler/templater.go`` ``replaceTemplateVariables``):
with ``rerender`` (the default), an output that holds ``{{`` is parsed and run again with the
same data until it holds none (Kalypso's loop since e652096, 2024-08-01). ``yaml`` is the
library behind ``toYaml`` and ``stringify``: ``v3`` (Kalypso since 97c555b, 2025-04-28) or
``v2`` (before). Errors are ``TemplateError`` naming ``name`` (the file) and the line, worded as
Go words them for Kalypso's template named ``template``. ``escape_html`` writes every action's
value as Go's ``html/template`` writes it in HTML text (Kalypso's 2023 scheduler parsed its
templates with ``html/template``)."""

from __future__ import annotations

from typing import Any

from promoter.errors import TemplateError
from promoter.gotemplate.execute import Executor
from promoter.gotemplate.functions import NAMES, TABLES, html_escape
from promoter.gotemplate.kalypso import YamlVersion
from promoter.gotemplate.parser import parse
from promoter.gotemplate.sprig import to_yaml
from promoter.gotemplate.values import NO_VALUE, AnyMap, Limits, StringMap, Struct

#: Kalypso's loop has no bound; promoter stops an output that keeps holding ``{{`` here
MAX_RENDERS = 100


class GoTemplate:
    def __init__(
        self,
        source: str,
        name: str,
        *,
        escape_html: bool = False,
        limits: Limits | None = None,
        yaml: YamlVersion = "v3",
        rerender: bool = True,
    ) -> None:
        self.name = name
        self.limits = limits or Limits()
        self.functions = TABLES[yaml]
        self.rerender = rerender
        self.tree = self._parse(source)
        self.escape = html_escape if escape_html else None

    def _parse(self, source: str) -> Any:
        if len(source) > self.limits.output:
            raise TemplateError(f"template of {len(source)} characters, over the limit", file=self.name)
        return parse(source, self.name, NAMES)

    def render(self, data: Any) -> str:
        out = Executor(self.tree, self.limits, self.escape, self.functions).run(data)
        renders = 1
        while self.rerender and "{{" in out:
            if renders >= MAX_RENDERS:
                raise TemplateError(
                    f"the output still holds {{{{ after {MAX_RENDERS} renders: Kalypso's scheduler, which "
                    "renders an output again while it holds {{, would never stop",
                    file=self.name,
                )
            out = Executor(self._parse(out), self.limits, self.escape, self.functions).run(data)
            renders += 1
        return out


__all__ = ["NO_VALUE", "AnyMap", "GoTemplate", "Limits", "StringMap", "Struct", "YamlVersion", "to_yaml"]
