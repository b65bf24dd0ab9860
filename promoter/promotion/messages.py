"""The promotion PR's title, body and labels and the promotion commit's message: the default text
(``report.pr_title``, ``pr_body``), or what the Pipeline's ``messages`` templates render from
the main commit, the environment, the diff and the gates
(docs/configuration.md#promotion-pr-and-commit-templates).

Templates run in the rendering sandbox (jinja2's immutable sandbox with limits on time and size)
with undefined names as errors. ``check_environment`` renders them against a sample context when
the Pipeline is read (``promoter validate``); ``texts`` renders them with the real one before
anything is pushed, so a value only real data exposes is exit 2, with the field named.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, NoReturn

import jinja2

from promoter.controlplane.messages import LABELS, MAX_LABEL
from promoter.errors import TemplateError
from promoter.gates.registry import gate_class
from promoter.gitcmd import Git
from promoter.model import Environment, GateSpec, Manifest
from promoter.platform.objects import Change
from promoter.promotion.report import change_summary, pr_body, pr_title
from promoter.rendering.sandbox import LimitedSandbox, describe_error, template_line, time_limit
from promoter.rendering.undefined import MissingValue, NamedUndefined, describe_missing

MAX_TEXT = 65_536  # characters of a PR body GitHub keeps; no rendered field may be longer
CO_AUTHORED_BY = "co-authored-by"
_FORMAT = "%H%x00%s%x00%b%x00%an%x00%ae%x00%aI%x00%(trailers:only,unfold)"


@dataclass(frozen=True)
class Texts:
    """What a promotion writes: the PR's title, body and labels (the templates' own; the forge
    adds its own), and the promotion commit's message."""

    title: str
    body: str
    labels: tuple[str, ...]
    commit_message: str

    @property
    def labelled(self) -> str:
        """What the run's PR line says of the templates' labels (nothing without them)."""
        return f", labels {', '.join(self.labels)}" if self.labels else ""


def default_texts(title: str, body: str) -> Texts:
    """The text with no templates: the commit message is the title and the body."""
    return Texts(title, body, (), f"{title}\n\n{body}")


@dataclass(frozen=True)
class Facts:
    """What a template may read besides the default text: the main commit's metadata
    (``commit_facts``), the step, the diff and the gates."""

    main: Mapping[str, Any]
    step: str  # the wave's label (``wave canary (1/2)``), '' for the whole environment
    wave: str
    changes: Mapping[str, Change]
    gates: tuple[GateSpec, ...]
    run_url: str | None = None


def commit_facts(git: Git, commit: str) -> dict[str, Any]:
    """The main commit as templates see it (``main``): sha, short sha, subject, body (git's
    ``%b``, its trailers included), author, date (ISO 8601) and trailers, in one ``git log``."""
    return _facts(git.out("log", "-1", f"--format={_FORMAT}", operands=[commit]))


def _facts(record: str) -> dict[str, Any]:
    """``main`` from the fields of ``_FORMAT``, separated by NUL."""
    sha, subject, body, name, email, date, trailers = record.split("\x00")
    pairs = [line.partition(":") for line in trailers.splitlines() if ":" in line]
    found = [{"key": key.strip(), "value": value.strip()} for key, _, value in pairs]
    return {
        "sha": sha,
        "short_sha": sha[:7],
        "subject": subject,
        "body": body.strip("\n"),
        "author": f"{name} <{email}>",
        "author_name": name,
        "author_email": email,
        "date": date,
        "trailers": found,
        "co_authors": [t["value"] for t in found if t["key"].lower() == CO_AUTHORED_BY],
    }


#: The main commit ``validate`` renders templates with: every variable a real one has.
SAMPLE_MAIN = _facts(
    "\x00".join(
        (
            "0123456789abcdef0123456789abcdef01234567",
            "Sample subject of a main commit",
            "Its body.\n\nCo-authored-by: A Person <a.person@example.com>\n",
            "Sample Author",
            "sample.author@example.com",
            "2025-01-02T03:04:05+00:00",
            "Co-authored-by: A Person <a.person@example.com>\n",
        )
    )
)
SAMPLE_CHANGES = {"sample-cluster-type": Change(1, 1, 1), ".promoter": Change(changed=1)}
SAMPLE_RUN = "https://github.com/org/control-plane/actions/runs/1"


def context(env: Environment, facts: Facts, default: Texts) -> dict[str, Any]:
    """The variables of a template: ``main``, ``environment``, ``changes``, ``gates``,
    ``default`` (the text with no template) and ``run_url``."""
    types = [
        {"name": name, "added": c.added, "changed": c.changed, "removed": c.removed}
        for name, c in sorted(facts.changes.items())
        if name != ".promoter"
    ]
    return {
        "main": dict(facts.main),
        "environment": {
            "name": env.name,
            "branch": env.branch,
            "gitops_branch": env.gitops_branch,
            "gitops_path": env.gitops_path or ".",
            "merge": env.merge,
            "wave": facts.wave,
            "step": facts.step,
        },
        "changes": {
            "cluster_types": types,
            **{key: sum(t[key] for t in types) for key in ("added", "changed", "removed")},
            "summary": change_summary(dict(facts.changes)),
        },
        "gates": [{"type": g.type, "waits_for": _waits_for(g)} for g in facts.gates],
        "default": {"title": default.title, "body": default.body, "commit_message": default.commit_message},
        "run_url": facts.run_url or "",
    }


def _waits_for(gate: GateSpec) -> str:
    """What a gate waits for, in the words of its progress lines, without its type."""
    described = gate_class(gate.type).from_spec(gate.spec, gate.source).describe()
    return described.removeprefix(gate.type).strip()


def check_environment(env: Environment) -> None:
    """Render every template of ``env`` against a sample context of each of its steps (the
    whole environment, or each wave with its gates): a syntax error, an unknown variable or
    attribute, an empty or multi-line title, an invalid label are TemplateErrors at their line."""
    waves = env.waves
    steps = [(w.name, f"wave {w.name} ({i}/{len(waves)})", w.gates) for i, w in enumerate(waves, 1)]
    for wave, step, gates in steps or [("", "", env.gates)]:
        facts = Facts(
            SAMPLE_MAIN, step, wave, SAMPLE_CHANGES, env.gates if gates is None else gates, SAMPLE_RUN
        )
        title = pr_title(env.name, SAMPLE_MAIN["sha"], SAMPLE_MAIN["subject"], step)
        body = pr_body(
            environment=env.name,
            main_commit=SAMPLE_MAIN["sha"],
            main_subject=SAMPLE_MAIN["subject"],
            env_branch=env.branch,
            env_commit=SAMPLE_MAIN["sha"],
            previous=None,
            changes=SAMPLE_CHANGES,
            run_url=SAMPLE_RUN,
        )
        texts(env, facts, default_texts(title, body))


def texts(env: Environment, facts: Facts, default: Texts) -> Texts:
    """The texts of a promotion of ``env``: each field its template renders, else the default.
    TemplateError (exit 2) naming the field, the file and the line when one fails."""
    if not env.messages:
        return default
    variables = context(env, facts, default)

    def text(field: str, otherwise: str) -> str:
        found = env.messages.get(field)
        return _text(env, field, found[0], variables) if found else otherwise

    labels = [_label(env, i, m, variables) for i, m in enumerate(env.messages.get(LABELS, ()))]
    return Texts(
        text("title", default.title),
        text("body", default.body),
        tuple(dict.fromkeys(labels)) if LABELS in env.messages else default.labels,
        text("commitMessage", default.commit_message),
    )


def _text(env: Environment, field: str, manifest: Manifest, variables: dict[str, Any]) -> str:
    text = _render(env, field, manifest, variables)
    if field == "title":
        title = text.strip()
        if not title or "\n" in title:
            _fail(env, field, manifest, "renders empty" if not title else "renders more than one line")
        return title[:200]  # as the default title is cut
    if field == "commitMessage":
        if not text.strip():
            _fail(env, field, manifest, "renders empty")
        return text.strip("\n") + "\n"
    return text


def _label(env: Environment, index: int, manifest: Manifest, variables: dict[str, Any]) -> str:
    field = f"{LABELS}[{index}]"
    label = _render(env, field, manifest, variables).strip()
    if not label or "\n" in label or len(label) > MAX_LABEL:
        what = "empty" if not label else "more than one line" if "\n" in label else f"{len(label)} characters"
        _fail(
            env, field, manifest, f"renders {what}: a GitHub label is one line of 1 to {MAX_LABEL} characters"
        )
    return label


@lru_cache(maxsize=1)
def _sandbox() -> LimitedSandbox:
    """The rendering sandbox with jinja2's own filters, undefined names as errors."""
    return LimitedSandbox(undefined=NamedUndefined, autoescape=False, keep_trailing_newline=True)


@lru_cache(maxsize=256)
def _compiled(text: str) -> jinja2.Template:
    return _sandbox().from_string(text)


def _render(env: Environment, field: str, manifest: Manifest, variables: dict[str, Any]) -> str:
    assert isinstance(manifest.body, str)
    try:
        template = _compiled(manifest.body)
    except jinja2.TemplateSyntaxError as err:
        _fail(env, field, manifest, f"syntax error: {err.message}", err.lineno)
    try:
        with time_limit():
            text = template.render(variables)
    except (jinja2.TemplateError, TypeError, ValueError, ArithmeticError, LookupError, RecursionError) as err:
        said = describe_missing(err, variables) if isinstance(err, MissingValue) else describe_error(err)
        _fail(env, field, manifest, said, template_line(err.__traceback__))
    if len(text) > MAX_TEXT:
        _fail(env, field, manifest, f"renders {len(text)} characters, over {MAX_TEXT}")
    return text


def _fail(
    env: Environment, field: str, manifest: Manifest, problem: str, lineno: int | None = None
) -> NoReturn:
    line = (manifest.line or env.source.line or 1) + (lineno - 1 if lineno else 0)
    raise TemplateError(
        f"messages.{field} (environment {env.name}): {problem}", file=env.source.file, line=line
    )
