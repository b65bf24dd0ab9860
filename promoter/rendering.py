"""Rendering (pure): assignments and templates in, ``{path: bytes}`` out.

Templates run in jinja2's immutable sandbox with undefined names as errors. Every rendered
document must parse back as YAML. Errors name the template file and line and the assignment.
"""

from __future__ import annotations

import base64
import gc
import json
import os
import pickle
import signal
import sys
import threading
import time
import traceback
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from importlib import resources
from types import TracebackType
from typing import Any

import jinja2
import yaml
from jinja2.sandbox import ImmutableSandboxedEnvironment

from promoter import sandbox
from promoter.errors import ConfigError, PromoterError, TemplateError
from promoter.model import EnvironmentObjects, MainObjects, Manifest, Template
from promoter.sandbox import LimitedSandbox, RenderTimeout, time_limit
from promoter.scheduling import Assignment, assign
from promoter.yamlfile import MAX_DEPTH, check_depth, load_documents, surely_one_mapping

MAX_OUTPUT_BYTES = 4 * 1024 * 1024
ROLE_FILES = (
    ("reconciler", "reconciler.yaml"),
    ("namespace", "namespace.yaml"),
    ("config", "platform-config.yaml"),
)

_YamlLoader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # C speed where PyYAML has it
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
    out = {}
    for key, value in config.items():
        if isinstance(value, str):
            out[str(key)] = value
        elif isinstance(value, bool):
            out[str(key)] = "true" if value else "false"
        elif isinstance(value, dict | list):
            out[str(key)] = json.dumps(value, sort_keys=True, default=str)
        else:
            out[str(key)] = "" if value is None else str(value)
    return out


def _environment() -> ImmutableSandboxedEnvironment:
    env = LimitedSandbox(undefined=jinja2.StrictUndefined, autoescape=False, keep_trailing_newline=True)
    env.filters.update(
        to_yaml=to_yaml,
        to_json=lambda v: json.dumps(v, sort_keys=True, default=str),
        quote=quote,
        configmap_data=configmap_data,
        b64encode=lambda v: base64.b64encode(str(v).encode()).decode(),
    )
    return env


def builtin_templates() -> dict[str, Template]:
    """The default templates shipped with the package (flux, argocd, default, configmap)."""
    from promoter.loading import _Object, _template

    out: dict[str, Template] = {}
    folder = resources.files("promoter") / "templates"
    for item in sorted(folder.iterdir(), key=lambda p: p.name):
        if item.name.endswith(".yaml"):
            file = f"builtin:{item.name}"
            for doc in load_documents(item.read_bytes(), file):
                template = _template(_Object(file, doc))
                out[template.name] = template
    return out


@dataclass(frozen=True)
class Rendered:
    """The rendered tree of one environment, relative to its gitops path."""

    files: dict[str, bytes]
    cluster_types: tuple[str, ...]
    assignments: tuple[Assignment, ...]


class Renderer:
    """Compiles each template once and renders assignments with it."""

    def __init__(self, templates: dict[str, Template]) -> None:
        self.templates = templates
        self.env = _environment()
        self._compiled: dict[tuple[str, int, str], jinja2.Template] = {}
        self._watched = False
        self._started: float | None = None

    def compile_all(self) -> None:
        for template in self.templates.values():
            for index, manifest in enumerate(template.manifests):
                for text in _strings(manifest.body):
                    self._compile(template, index, manifest, text)

    def _compile(self, template: Template, index: int, manifest: Manifest, text: str) -> jinja2.Template:
        key = (template.name, index, text)
        compiled = self._compiled.get(key)
        if compiled is None:
            try:
                compiled = self.env.from_string(text)
            except jinja2.TemplateSyntaxError as err:
                raise self._error(
                    template, index, manifest, err.lineno, f"syntax error: {err.message}"
                ) from err
            self._compiled[key] = compiled
        return compiled

    def _error(
        self,
        template: Template,
        index: int,
        manifest: Manifest,
        lineno: int | None,
        message: str,
        a: Assignment | None = None,
    ) -> TemplateError:
        line = (manifest.line or template.source.line or 1) + (lineno - 1 if lineno else 0)
        who = f", assignment {a}" if a else ""
        return TemplateError(
            f"template {template.name!r} manifest {index + 1}{who}: {message}",
            file=template.source.file,
            line=line,
        )

    def render(self, template: Template, a: Assignment) -> bytes:
        if self._watched:
            self._started = time.monotonic()
            try:
                return self._render(template, a)
            finally:
                self._started = None
        with time_limit():
            return self._render(template, a)

    @contextmanager
    def watchdog(self) -> Iterator[None]:
        """Bound each render of a batch with one SIGALRM timer for the whole batch.

        ``time_limit`` arms and disarms a timer around every render, which costs more than
        rendering a small template. Here a timer ticks a few times a second and stops the
        render under way once it has run longer than ``sandbox.RENDER_SECONDS``; the limit and
        the error are the same. Off the main thread, or when another timer runs, each render
        keeps its own ``time_limit``.
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

        old = signal.signal(signal.SIGALRM, on_tick)
        signal.setitimer(signal.ITIMER_REAL, tick, tick)
        self._watched = True
        try:
            yield
        finally:
            self._watched = False
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, old)

    def _render(self, template: Template, a: Assignment) -> bytes:
        context = variables(a)
        docs: list[str] = []
        for index, manifest in enumerate(template.manifests):
            try:
                if isinstance(manifest.body, str):
                    text = self._compile(template, index, manifest, manifest.body).render(context)
                else:
                    text = to_yaml(self._render_tree(template, index, manifest, manifest.body, context))
            except (jinja2.TemplateError, TypeError, ValueError, ArithmeticError, LookupError) as err:
                if isinstance(err, TemplateError):
                    raise
                lineno = _template_line(err.__traceback__)
                message = getattr(err, "message", None) or str(err)
                raise self._error(
                    template, index, manifest, lineno, f"{type(err).__name__}: {message}", a
                ) from err
            if len(text) > MAX_OUTPUT_BYTES:
                raise self._error(
                    template, index, manifest, None, f"output is over {MAX_OUTPUT_BYTES} bytes", a
                )
            self._check_yaml(template, index, manifest, text, a)
            docs.append(text.strip("\n") + "\n")
        return "---\n".join(docs).encode("utf-8")

    def _render_tree(
        self, template: Template, index: int, manifest: Manifest, value: Any, context: dict[str, Any]
    ) -> Any:
        if isinstance(value, str):
            return self._compile(template, index, manifest, value).render(context)
        if isinstance(value, dict):
            return {k: self._render_tree(template, index, manifest, v, context) for k, v in value.items()}
        if isinstance(value, list):
            return [self._render_tree(template, index, manifest, v, context) for v in value]
        return value

    def _check_yaml(
        self, template: Template, index: int, manifest: Manifest, text: str, a: Assignment
    ) -> None:
        if not _maybe_deep(text) and surely_one_mapping(text):
            return
        if _maybe_deep(text):  # libyaml's composer recurses in C: refuse before it crashes
            try:
                check_depth(text, template.source.file, MAX_DEPTH)
            except ConfigError as err:
                raise self._error(
                    template, index, manifest, err.line, f"rendered text is {err.message}", a
                ) from err
        try:
            docs = [d for d in yaml.load_all(text, Loader=_YamlLoader) if d is not None]
        except yaml.YAMLError as err:
            mark = getattr(err, "problem_mark", None)
            problem = getattr(err, "problem", None) or str(err)
            raise self._error(
                template,
                index,
                manifest,
                mark.line + 1 if mark else None,
                f"rendered text is not valid YAML: {problem}",
                a,
            ) from err
        if len(docs) != 1 or not isinstance(docs[0], dict):
            raise self._error(
                template,
                index,
                manifest,
                None,
                f"must render exactly one YAML mapping, got {len(docs)} documents",
                a,
            )


def _maybe_deep(text: str) -> bool:
    """Cheap test: could ``text`` nest more than MAX_DEPTH levels? (flow brackets or indentation)"""
    if text.count("[") + text.count("{") > MAX_DEPTH:
        return True
    if len(text) <= 2 * MAX_DEPTH:
        return False
    # Every line of splitlines() lies within one "\n"-separated piece, so when no piece is longer
    # than MAX_DEPTH no line is indented more; str.split measures that at C speed.
    if max(map(len, text.split("\n"))) <= MAX_DEPTH:
        return False
    return max(len(ln) - len(ln.lstrip(" -")) for ln in text.splitlines()) > MAX_DEPTH


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
    }


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []


def _template_line(tb: TracebackType | None) -> int | None:
    """The template line jinja2 put into the traceback, if any."""
    line = None
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == "<template>":
            line = tb.tb_lineno
        tb = tb.tb_next
    return line


def all_templates(main: MainObjects) -> dict[str, Template]:
    """Built-ins, overridden by the control plane's own templates of the same name."""
    return {**builtin_templates(), **main.templates}


def render_environment(
    main: MainObjects, env: EnvironmentObjects, environment: str, renderer: Renderer | None = None
) -> Rendered:
    """Schedule and render one environment: ``<cluster-type>/<workload>-<target>/<role>.yaml``."""
    from promoter.loading import check_references

    templates = all_templates(main)
    check_references(main, env, builtin_templates())
    renderer = renderer or Renderer(templates)
    with _gc_paused():
        assignments = assign(main, env, environment)
        if len(assignments) >= PARALLEL_MIN_ASSIGNMENTS and _can_fork():
            files = _render_in_two(renderer, templates, assignments)
        else:
            with renderer.watchdog():
                files = _render_all(renderer, templates, assignments)
    return Rendered(files, tuple(sorted(env.cluster_types)), tuple(assignments))


def _render_all(
    renderer: Renderer, templates: dict[str, Template], assignments: Sequence[Assignment]
) -> dict[str, bytes]:
    files: dict[str, bytes] = {}
    for a in assignments:
        ct = a.cluster_type
        names = (ct.reconciler, ct.namespace_service, ct.config_type)
        for (_, filename), name in zip(ROLE_FILES, names, strict=True):
            files[f"{ct.name}/{a.name}/{filename}"] = renderer.render(templates[name], a)
    return files


# Rendering is CPU-bound Python: above this many assignments, a forked child renders the second
# half while this process renders the first (about 5 ms of overhead per thousand files).
PARALLEL_MIN_ASSIGNMENTS = 2000


@contextmanager
def _gc_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector while building large, long-lived, acyclic data: its
    passes over every live object would cost as much as the scheduling itself."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _can_fork() -> bool:
    """Fork only where it is safe and pays: Linux, a single thread, a second CPU."""
    if not sys.platform.startswith("linux") or threading.active_count() != 1:
        return False
    return len(os.sched_getaffinity(0)) >= 2


def _render_in_two(
    renderer: Renderer, templates: dict[str, Template], assignments: Sequence[Assignment]
) -> dict[str, bytes]:
    """Render the second half in a forked child, the first here; the same files, the same
    order, and the same first error (this half's errors come first) as one loop would give."""
    cut = len(assignments) // 2
    read_fd, write_fd = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: render, send the result or the error, and leave at once
        os.close(read_fd)
        _child_render(renderer, templates, assignments[cut:], write_fd)
    os.close(write_fd)
    try:
        with renderer.watchdog():
            files = _render_all(renderer, templates, assignments[:cut])
        with os.fdopen(read_fd, "rb") as pipe:
            kind, value = pickle.load(pipe)
    except BaseException:
        os.kill(pid, signal.SIGKILL)
        raise
    finally:
        os.waitpid(pid, 0)
    if kind == "error":
        raise value
    if kind == "crash":
        raise RuntimeError(f"rendering in a child process failed:\n{value}")
    files.update(value)
    return files


def _child_render(
    renderer: Renderer, templates: dict[str, Template], assignments: Sequence[Assignment], fd: int
) -> None:
    code = 0
    try:
        try:
            with renderer.watchdog():
                result: tuple[str, object] = ("files", _render_all(renderer, templates, assignments))
        except PromoterError as err:
            result = ("error", err)
        except Exception:
            result = ("crash", traceback.format_exc())
        with os.fdopen(fd, "wb") as pipe:
            try:
                data = pickle.dumps(result, protocol=pickle.HIGHEST_PROTOCOL)
            except Exception:  # an error that does not pickle: send its text
                data = pickle.dumps(("crash", traceback.format_exc()))
            pipe.write(data)
    except BaseException:  # interrupted, or the parent went away
        code = 1
    finally:
        os._exit(code)


__all__ = [
    "ConfigError",
    "Rendered",
    "Renderer",
    "builtin_templates",
    "render_environment",
    "to_yaml",
    "variables",
]
