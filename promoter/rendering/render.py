"""Rendering one assignment with one template (pure): jinja2's sandbox with undefined names as
errors; every rendered document must parse back as one YAML mapping. Errors name the template
file and line and the assignment."""

from __future__ import annotations

import base64
import json
import signal
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import cache, lru_cache, partial
from typing import Any, cast

import jinja2
import yaml
from jinja2.sandbox import ImmutableSandboxedEnvironment

from promoter.controlplane.yamlfile import maybe_deep, surely_one_mapping
from promoter.errors import TemplateError
from promoter.gotemplate import GoTemplate
from promoter.k8s.names import bounded
from promoter.k8s.values import as_configmap_string
from promoter.model import Manifest, Template
from promoter.rendering import sandbox
from promoter.rendering.budget import Budget
from promoter.rendering.gotemplates import go_data, go_yaml_problem
from promoter.rendering.parse import load_rendered, read_rendered_text
from promoter.rendering.sandbox import (
    LimitedSandbox,
    RenderTimeout,
    describe_error,
    template_line,
    time_limit,
)
from promoter.rendering.skeleton import Pairs, SkeletonReader
from promoter.rendering.undefined import MissingValue, NamedUndefined, describe_missing
from promoter.scheduling.targets import Assignment

MAX_OUTPUT_BYTES = 4 * 1024 * 1024
# The file each role of template renders to, in a deployment target's folder.
ROLE_FILES = (
    ("reconciler", "reconciler.yaml"),
    ("namespace", "namespace.yaml"),
    ("config", "platform-config.yaml"),
)

_YamlDumper: Any = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


def to_yaml(value: Any) -> str:
    """Block-style YAML of ``value``, no trailing newline (for use with ``indent``)."""
    text = yaml.dump(
        value,
        Dumper=_YamlDumper,
        default_flow_style=False,
        sort_keys=False,
        allow_unicode=True,
        width=1_000_000,
    )
    return text.removesuffix("\n...\n").rstrip("\n")


def quote(value: Any) -> str:
    """A YAML-safe double-quoted scalar (JSON strings are valid YAML)."""
    return json.dumps(value if isinstance(value, str) else str(value), ensure_ascii=False)


def configmap_data(config: dict[str, Any]) -> dict[str, str]:
    """ConfigMap data must be strings: scalars as text, maps and lists as JSON."""
    return {str(key): as_configmap_string(value) for key, value in config.items()}


class TimedOut(TemplateError):
    """A render ran past its time limit: bad input at once, whatever is left to render (the
    template would do the same for the next assignment)."""


@cache
def _environment() -> ImmutableSandboxedEnvironment:
    """One sandbox per process (it keeps no run's state): each text compiles once (``_compiled``)."""
    env = LimitedSandbox(undefined=NamedUndefined, autoescape=False, keep_trailing_newline=True)
    env.filters.update(
        to_yaml=to_yaml,
        to_json=lambda v: json.dumps(v, sort_keys=True, default=str),
        quote=quote,
        configmap_data=configmap_data,
        b64encode=lambda v: base64.b64encode(str(v).encode()).decode(),
        bounded=lambda v, limit=63: bounded(str(v), int(limit)),
    )
    return env


@lru_cache(maxsize=4096)
def _compiled(text: str) -> jinja2.Template:
    return _environment().from_string(text)


class Renderer:
    """Compiles each template once and renders assignments with it."""

    def __init__(self, templates: dict[str, Template]) -> None:
        self.templates = templates
        self.env = _environment()
        self._compiled: dict[tuple[str, int, str], jinja2.Template] = {}
        self._go_compiled: dict[tuple[str, int], GoTemplate] = {}
        self._watched = False
        self._started: float | None = None
        self.budget = Budget()  # seconds of rendering in this process, for the run's budget
        self.reader = SkeletonReader()  # rendered documents read once per skeleton
        self._joined: tuple[dict[str, Any] | None, dict[str, Any]] = (None, {})  # see _run

    def compile_all(self) -> None:
        for template in self.templates.values():
            for index, manifest in enumerate(template.manifests):
                if template.language == "gotemplate":
                    self._go(template, index, manifest)
                    continue
                for text in _strings(manifest.body):
                    self._compile(template, index, manifest, text)

    def _go(self, template: Template, index: int, manifest: Manifest) -> GoTemplate:
        """A Go text/template manifest (``spec.language: gotemplate``), compiled once."""
        key = (template.name, index)
        compiled = self._go_compiled.get(key)
        if compiled is None:
            assert isinstance(manifest.body, str)  # the reader refuses mappings for gotemplate
            try:
                compiled = GoTemplate(manifest.body, template.source.file)
            except TemplateError as err:
                raise self._error(template, index, manifest, err.line, err.message) from err
            self._go_compiled[key] = compiled
        return compiled

    def _render_go(self, template: Template, a: Assignment) -> tuple[bytes, list[dict[str, Any]]]:
        """As Kalypso's current scheduler writes a Template (``scheduler/githubrepo.go``
        ``getManifestsYamlString``): each output that is not empty as it is, joined by
        ``---\n``; each must be YAML mappings. With the objects of its documents, for the checks."""
        data = go_data(a)
        outputs: list[str] = []
        for index, manifest in enumerate(template.manifests):
            try:
                text = self._go(template, index, manifest).render(data)
            except TemplateError as err:
                raise self._error(template, index, manifest, err.line, err.message, a) from err
            if text == "":
                continue
            if len(text) > MAX_OUTPUT_BYTES:
                raise self._error(
                    template, index, manifest, None, f"output is over {MAX_OUTPUT_BYTES} bytes", a
                )
            problem = go_yaml_problem(text, template.source.file)
            if problem is not None:
                raise self._error(template, index, manifest, problem[0], problem[1], a)
            outputs.append(text)
        out = "---\n".join(outputs).encode("utf-8")
        return out, [d for d in load_rendered(out) if isinstance(d, dict)] if out else []

    def _compile(self, template: Template, index: int, manifest: Manifest, text: str) -> jinja2.Template:
        key = (template.name, index, text)
        compiled = self._compiled.get(key)
        if compiled is None:
            try:
                compiled = _compiled(text)
            except jinja2.TemplateSyntaxError as err:
                raise self._error(
                    template, index, manifest, err.lineno, f"syntax error: {err.message}"
                ) from err
            self._compiled[key] = compiled
        return compiled

    def _run(self, compiled: jinja2.Template, context: dict[str, Any]) -> str:
        """``compiled.render(context)`` without the two copies of the variables and jinja2's
        globals that ``render`` makes each time: they are joined once per assignment (its
        templates come one after another with one ``context``), and each render reads them as
        they are, which is safe as a template can change neither (the sandbox is immutable,
        ``set`` writes to the template's own scope). Every template here is compiled by
        ``self.env`` with no globals of its own, so its globals are the environment's."""
        if self._joined[0] is not context:
            self._joined = (context, {**self.env.globals, **context})
        # what ``compiled.new_context(joined, shared=True)`` makes, but for the set of the
        # globals' names it builds each time, which only ``{% import %}`` reads (no loader here)
        ctx = self.env.context_class(self.env, self._joined[1], compiled.name, compiled.blocks)
        try:
            return self.env.concat(compiled.root_render_func(ctx))
        except Exception:
            self.env.handle_exception()

    def _error(
        self,
        template: Template,
        index: int,
        manifest: Manifest,
        lineno: int | None,
        message: str,
        a: Assignment | None = None,
        kind: type[TemplateError] = TemplateError,
    ) -> TemplateError:
        line = (manifest.line or template.source.line or 1) + (lineno - 1 if lineno else 0)
        who = f", assignment {a}" if a else ""
        return kind(
            f"template {template.name!r} manifest {index + 1}{who}: {message}",
            file=template.source.file,
            line=line,
        )

    def render(self, template: Template, a: Assignment, context: dict[str, Any] | None = None) -> bytes:
        """The file ``template`` makes for ``a``; ``context``: ``variables(a)``, when the caller
        renders several templates for one assignment (templates cannot change it)."""
        return self.render_read(template, a, variables(a) if context is None else context)[0]

    def render_read(
        self, template: Template, a: Assignment, context: dict[str, Any], names: Pairs | None = None
    ) -> tuple[bytes, list[dict[str, Any]]]:
        """The file, and, given the assignment's ``names`` (``skeleton.assignment_values``), the
        objects its documents are (for the checks: the same as reading the file back)."""
        started = time.monotonic()
        try:
            if self._watched:
                self._started = started
                try:
                    out = self._render(template, a, context, names)
                finally:
                    self._started = None
            else:
                with time_limit():
                    out = self._render(template, a, context, names)
        finally:
            seconds = time.monotonic() - started
            self._spend(seconds, template, a)
        self._in_time(seconds, template, a)
        return out

    def _in_time(self, seconds: float, template: Template, a: Assignment) -> None:
        """A render that ended past its limit is refused too: the timer may not have fired in
        time (work in C holds Python's signal handlers back; off the main thread none runs)."""
        if seconds > sandbox.RENDER_SECONDS:
            raise TimedOut(
                f"template {template.name!r}, assignment {a}: rendering took longer than {sandbox.RENDER_SECONDS:g}s",
                file=template.source.file,
                line=template.source.line,
            )

    def _spend(self, seconds: float, template: Template, a: Assignment) -> None:
        """The run's budget: many renders, each under its own limit, may not add up to minutes."""
        self.budget.spend(seconds, template, a)

    @contextmanager
    def watchdog(self, stop: Callable[[], BaseException | None] | None = None) -> Iterator[None]:
        """Bound each render of a batch with one SIGALRM timer for the whole batch.

        ``time_limit`` arms and disarms a timer around every render, which costs more than
        rendering a small template. Here a timer ticks a few times a second and stops the
        render under way once it has run longer than ``sandbox.RENDER_SECONDS``; the limit and
        the error are the same. Off the main thread, or when another timer runs, each render
        keeps its own ``time_limit``. ``stop``, asked at each tick, returns an exception to stop
        the batch with (another process's render ran past its limit), or None.
        """
        if (
            threading.current_thread() is not threading.main_thread()
            or signal.getitimer(signal.ITIMER_REAL)[0]
        ):
            yield
            return
        limit = sandbox.RENDER_SECONDS
        tick = min(0.25, limit / 4)

        def on_tick(signum: int, frame: object) -> None:
            started = self._started
            if started is not None and time.monotonic() - started > limit:
                raise RenderTimeout(f"rendering took longer than {limit:g}s")
            stopped = stop() if stop is not None and self._watched else None
            if stopped is not None:
                raise stopped

        old = signal.signal(signal.SIGALRM, on_tick)
        signal.setitimer(signal.ITIMER_REAL, tick, tick)
        self._watched = True
        try:
            yield
        finally:
            self._watched = False
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, old)

    def _render(
        self, template: Template, a: Assignment, context: dict[str, Any], names: Pairs | None
    ) -> tuple[bytes, list[dict[str, Any]]]:
        if template.language == "gotemplate":
            return self._render_go(template, a)
        docs: list[str] = []
        objects: list[dict[str, Any]] = []
        for index, manifest in enumerate(template.manifests):
            try:
                if isinstance(manifest.body, str):
                    text = self._run(self._compile(template, index, manifest, manifest.body), context)
                else:
                    text = to_yaml(self._render_tree(template, index, manifest, manifest.body, context))
            except (
                jinja2.TemplateError,
                TypeError,
                ValueError,
                ArithmeticError,
                LookupError,
                RecursionError,  # a macro that calls itself
                MemoryError,  # what the size limits did not foresee
            ) as err:
                if isinstance(err, TemplateError):
                    raise
                lineno = template_line(err.__traceback__)
                message = (
                    describe_missing(err, context) if isinstance(err, MissingValue) else describe_error(err)
                )
                kind = TimedOut if isinstance(err, RenderTimeout) else TemplateError
                raise self._error(template, index, manifest, lineno, message, a, kind) from err
            if len(text) > MAX_OUTPUT_BYTES:
                raise self._error(
                    template, index, manifest, None, f"output is over {MAX_OUTPUT_BYTES} bytes", a
                )
            body = text.strip("\n") + "\n"
            if names is None:
                self._check_yaml(template, index, manifest, text, a)
            else:
                objects.append(
                    self.reader.read(body, names, partial(self._read, template, index, manifest, text, a))
                )
            docs.append(body)
        return "---\n".join(docs).encode("utf-8"), objects

    def _read(
        self, template: Template, index: int, manifest: Manifest, text: str, a: Assignment
    ) -> dict[str, Any]:
        """The full check of one rendered document, and its objects as the file will read."""
        self._check_yaml(template, index, manifest, text, a)
        [doc] = load_rendered((text.strip("\n") + "\n").encode("utf-8"))
        return cast(dict[str, Any], doc)

    def _render_tree(
        self, template: Template, index: int, manifest: Manifest, value: Any, context: dict[str, Any]
    ) -> Any:
        if isinstance(value, str):
            return self._run(self._compile(template, index, manifest, value), context)
        if isinstance(value, dict):
            return {k: self._render_tree(template, index, manifest, v, context) for k, v in value.items()}
        if isinstance(value, list):
            return [self._render_tree(template, index, manifest, v, context) for v in value]
        return value

    def _check_yaml(
        self, template: Template, index: int, manifest: Manifest, text: str, a: Assignment
    ) -> None:
        if not maybe_deep(text) and surely_one_mapping(text):
            return
        docs, problem = read_rendered_text(text, template.source.file)
        if problem is not None:
            raise self._error(template, index, manifest, problem[0], problem[1], a)
        if len(docs) != 1 or not isinstance(docs[0], dict):
            raise self._error(
                template,
                index,
                manifest,
                None,
                f"must render exactly one YAML mapping, got {len(docs)} documents",
                a,
            )


def variables(a: Assignment) -> dict[str, Any]:
    """The template variables of DESIGN section 4."""
    return {
        "environment": a.environment,
        "cluster_type": a.cluster_type.name,
        "cluster_type_labels": dict(a.cluster_type.labels),
        "workload": a.workload.name,
        "workspace": a.workload.workspace,
        "deployment_target": a.target.name,
        "name": a.name,
        "labels": a.labels,
        "manifests": a.target.manifests,
        "namespace": a.namespace,
        "config": a.config,
        "depends_on": a.dependencies,  # dependsOn: [{workload, deployment_target, name, namespace}]
        "dependency_depth": a.target.depth,  # 0 without dependsOn: Argo CD's sync wave
    }


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []
