"""Which of Kalypso's schedulers promoter renders as: its **generation** (docs/kalypso.md, "The
scheduler's generations"), as the facts' history of microsoft/kalypso-scheduler defines them.

- ``2023``: the scheduler of Kalypso's 2023 sample (7a5558a to 6e9d37f): ``html/template``,
  namespace ``<env>-<workspace>-<target>``, the built-in ConfigMap in ``config.yaml``.
- ``2024``: a scheduler built from e652096 (2024-08-01) up to 97c555b (2025-04-28): sprig
  v2.22.0 on ``text/template``, the re-render loop, ``unquote``, config lists **appended**,
  ``toYaml``/``stringify`` in **yaml.v2**.
- ``head`` (the default): the scheduler's code at HEAD (1f5fef0, 2026-04): config lists merged by
  ``name``, ``toYaml``/``stringify`` in **yaml.v3**.

One option (``--kalypso-generation``) and one variable (``PROMOTER_KALYPSO_GENERATION``) name
it; the old ``--kalypso-naming`` / ``PROMOTER_KALYPSO_NAMING`` keep working (``current`` is
``head``)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

from promoter.errors import UsageError
from promoter.gotemplate import YamlVersion

Generation = Literal["2023", "2024", "head"]
GENERATIONS: tuple[Generation, ...] = ("2023", "2024", "head")
DEFAULT: Generation = "head"
VARIABLE = "PROMOTER_KALYPSO_GENERATION"
OPTION = "--kalypso-generation"
OLD_VARIABLE = "PROMOTER_KALYPSO_NAMING"
LENIENT_VARIABLE = "PROMOTER_KALYPSO_LENIENT"
OLD_OPTION = "--kalypso-naming"
#: the old naming's values, as generations
OLD_NAMES: dict[str, Generation] = {"2023": "2023", "current": "head"}


@dataclass(frozen=True)
class Rules:
    """What a generation's scheduler does where the generations differ."""

    yaml: YamlVersion  # toYaml and stringify
    merge_lists_by_name: bool  # mergeObjects of two lists (97c555b); else appended (5aef437)
    azure_app_config: bool  # azure-app-config* ConfigMaps (6bb99c7, 729834d)


RULES: dict[Generation, Rules] = {
    "2023": Rules("v2", False, False),
    "2024": Rules("v2", False, False),
    "head": Rules("v3", True, True),
}


def generation_from(
    environ: Mapping[str, str], given: str | None = None, given_naming: str | None = None
) -> Generation:
    """The generation: ``--kalypso-generation``, else ``--kalypso-naming``, else
    ``PROMOTER_KALYPSO_GENERATION``, else ``PROMOTER_KALYPSO_NAMING``, else ``head``."""
    for where, value, old in (
        (OPTION, given, False),
        (OLD_OPTION, given_naming, True),
        (VARIABLE, environ.get(VARIABLE), False),
        (OLD_VARIABLE, environ.get(OLD_VARIABLE), True),
    ):
        if value:
            return _parse(where, value, old)
    return DEFAULT


def _parse(where: str, value: str, old: bool) -> Generation:
    if old:
        if value in OLD_NAMES:
            return OLD_NAMES[value]
        choices = ", ".join(OLD_NAMES)
        raise UsageError(
            f"{where}={value}: must be one of {choices} (or use {OPTION}: {', '.join(GENERATIONS)})"
        )
    for generation in GENERATIONS:
        if value == generation:
            return generation
    raise UsageError(f"{where}={value}: must be one of {', '.join(GENERATIONS)}")


def lenient_from(environ: Mapping[str, str]) -> bool:
    """``PROMOTER_KALYPSO_LENIENT``: ``1``/``true`` renders what Kalypso's scheduler fails on
    promoter's way; ``0``/``false``/unset refuses it; anything else is a usage error."""
    value = environ.get(LENIENT_VARIABLE, "").strip().lower()
    if value in ("", "0", "false", "no"):
        return False
    if value in ("1", "true", "yes"):
        return True
    raise UsageError(f"{LENIENT_VARIABLE}={value}: must be 1 or 0 (true or false)")
