"""``messages``: the promotion PR's title, body and labels and the promotion commit's message,
as jinja2 templates, in the Pipeline's spec and in each environment
(docs/configuration.md#promotion-pr-and-commit-templates).

An environment's field replaces the Pipeline's, field by field (``labels: []`` there drops the
Pipeline's labels); a field neither gives keeps the default text. Each environment holds the
templates that apply to it (``Environment.messages``: field -> its templates with their lines,
one per label).

Here the fields are read and their shape checked. The templates themselves are rendered against
a sample context of each environment by ``promoter.promotion.messages.check_environment``, which
``validate`` and the promotion flows call before anything is pushed: it needs the rendering
sandbox and the promotion's own words, both above the control plane.
"""

from __future__ import annotations

from dataclasses import replace

from promoter.controlplane.fields import Fields, kind_of
from promoter.model import Environment, Manifest

Messages = dict[str, tuple[Manifest, ...]]

#: The fields of ``messages``: one template each, ``labels`` a list of them.
TEXT_FIELDS = ("title", "body", "commitMessage")
LABELS = "labels"
#: GitHub's limit on a label's name.
MAX_LABEL = 50


def messages_from(f: Fields) -> Messages:
    """The ``messages`` of a Pipeline's spec or of one environment; empty when absent."""
    m = f.fields("messages")
    if m is None:
        return {}
    out: Messages = {}
    for key in TEXT_FIELDS:
        text = m.get(key, str)
        if text is not None:
            out[key] = (Manifest(text, _first_line(m.line_of(key), text)),)
    if m.get(LABELS, list) is not None:  # [] too: no labels, whatever the Pipeline says
        out[LABELS] = tuple(_label(m, line, item) for _path, line, item in m.items(LABELS))
    m.done()
    return out


def _first_line(key_line: int | None, text: str) -> int | None:
    """The file line of a template's first line: a block scalar's (``|``) starts below its key."""
    if key_line is None:
        return None
    return key_line + 1 if "\n" in text else key_line


def _label(m: Fields, line: int | None, item: object) -> Manifest:
    if not isinstance(item, str) or not item.strip():
        m.fail(f"each label is a non-empty string (a template), got {kind_of(item)}", LABELS, line=line)
    return Manifest(item, line)


def with_messages(environments: list[Environment], spec: Fields) -> list[Environment]:
    """The environments, each with the Pipeline's ``messages`` under its own."""
    pipeline = messages_from(spec)
    return [replace(env, messages={**pipeline, **env.messages}) for env in environments]
