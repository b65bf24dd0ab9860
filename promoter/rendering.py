"""Rendering (pure): assignments and templates in, ``{path: bytes}`` out.

Templates run in jinja2's immutable sandbox with undefined names as errors. Every rendered
document must parse back as YAML. Errors name the template file and line and the assignment.
"""

from __future__ import annotations

import base64
import gc
import hashlib
import json
import os
import pickle
import signal
import sys
import threading
import time
import traceback
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from types import TracebackType
from typing import Any

import jinja2
import yaml
from jinja2.sandbox import ImmutableSandboxedEnvironment

from promoter import sandbox
from promoter.errors import ConfigError, PromoterError, TemplateError
from promoter.model import ClusterType, EnvironmentObjects, MainObjects, Manifest, Template
from promoter.platform import FolderMemo, RenderedFolders
from promoter.sandbox import LimitedSandbox, RenderTimeout, time_limit
from promoter.scheduling import Assignment, EnvironmentSchedule
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

    files: Mapping[str, bytes]
    cluster_types: tuple[str, ...]
    assignments: Sequence[Assignment]


class Renderer:
    """Compiles each template once and renders assignments with it."""

    def __init__(self, templates: dict[str, Template]) -> None:
        self.templates = templates
        self.env = _environment()
        self._compiled: dict[tuple[str, int, str], jinja2.Template] = {}
        self._watched = False
        self._started: float | None = None
        self.spent = 0.0  # seconds of rendering in this process, for the run's budget

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

    def render(self, template: Template, a: Assignment, context: dict[str, Any] | None = None) -> bytes:
        """The file ``template`` makes for ``a``; ``context``: ``variables(a)``, when the caller
        renders several templates for one assignment (templates cannot change it)."""
        context = variables(a) if context is None else context
        started = time.monotonic()
        try:
            if self._watched:
                self._started = started
                try:
                    return self._render(template, a, context)
                finally:
                    self._started = None
            with time_limit():
                return self._render(template, a, context)
        finally:
            self._spend(time.monotonic() - started, template, a)

    def _spend(self, seconds: float, template: Template, a: Assignment) -> None:
        """The run's budget: many renders, each under its own limit, may not add up to minutes."""
        self.spent += seconds
        if self.spent > sandbox.RUN_SECONDS:
            raise TemplateError(
                f"template {template.name!r}, assignment {a}: rendering took {self.spent:.0f}s in all, "
                f"over the limit of {sandbox.RUN_SECONDS:g}s for one run",
                file=template.source.file,
                line=template.source.line,
            )

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

    def _render(self, template: Template, a: Assignment, context: dict[str, Any]) -> bytes:
        docs: list[str] = []
        for index, manifest in enumerate(template.manifests):
            try:
                if isinstance(manifest.body, str):
                    text = self._compile(template, index, manifest, manifest.body).render(context)
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
                lineno = _template_line(err.__traceback__)
                message = _describe(err)
                raise self._error(template, index, manifest, lineno, message, a) from err
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


def _describe(err: BaseException) -> str:
    if isinstance(err, RecursionError):
        return "RecursionError: a macro or loop calls itself too deeply"
    if isinstance(err, MemoryError):
        return "MemoryError: the template needs more memory than this machine has"
    return f"{type(err).__name__}: {getattr(err, 'message', None) or err}"


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
    """Schedule and render one environment: ``<cluster-type>/<workload>-<target>/<role>.yaml``.

    A cluster type whose inputs (its assignments, their config, the templates, this code) have
    the digest of an earlier render that succeeded is not rendered again (``FolderMemo``): its
    files are rendered only if someone reads them, and a commit reuses its tree. The result is
    the same either way, since rendering is deterministic."""
    from promoter.loading import check_references

    templates = all_templates(main)
    check_references(main, env, builtin_templates())
    renderer = renderer or Renderer(templates)
    memo = FolderMemo.default()
    with _gc_paused():
        schedule = EnvironmentSchedule(main, env, environment)
        digests = folder_digests(main, env, environment, schedule, templates)
        known = {ct: tree for ct, digest in digests.items() if (tree := memo.get(digest))}
        todo = [ct for ct in schedule.pairs if ct not in known]
        assigned: dict[str, list[Assignment]] = {}
        if sum(len(schedule.pairs[ct]) for ct in todo) >= PARALLEL_MIN_ASSIGNMENTS and _can_fork():
            files = _render_in_two(renderer, templates, schedule, todo, assigned)
        else:
            assigned.update({ct: schedule.assign(ct) for ct in todo})
            with renderer.watchdog():
                files = _render_all(renderer, templates, [a for ct in todo for a in assigned[ct]])

    def later(ct: str) -> dict[str, bytes]:
        return _render_all(renderer, templates, schedule.assign(ct))

    rendered = RenderedFiles(schedule, files, known, digests, later)
    return Rendered(rendered, tuple(sorted(env.cluster_types)), _Assignments(schedule, assigned))


class RenderedFiles(RenderedFolders):
    """Every rendered path in order, with its content: rendered now, or, for a cluster type
    found in the memo, rendered on first read (``plan`` reads its tree from the memo instead)."""

    def __init__(
        self,
        schedule: EnvironmentSchedule,
        files: dict[str, bytes],
        known: dict[str, str],
        digests: dict[str, str],
        render: Callable[[str], dict[str, bytes]],
    ) -> None:
        self._paths = {
            ct: [f"{ct}/{w.name}-{t.name}/{filename}" for _, w, t in pairs for _, filename in ROLE_FILES]
            for ct, pairs in schedule.pairs.items()
        }
        self._files = files
        self._known = dict(known)
        self._digests = digests
        self._render = render

    def folders(self) -> list[str]:
        return list(self._paths)

    def digest(self, folder: str) -> str | None:
        return self._digests.get(folder)

    def known_tree(self, folder: str) -> str | None:
        return self._known.get(folder)

    def folder_files(self, folder: str) -> dict[str, bytes]:
        if folder in self._known:
            self._files.update(self._render(folder))
            del self._known[folder]
        return {p: self._files[p] for p in self._paths.get(folder, ())}

    def __getitem__(self, path: str) -> bytes:
        if path not in self._files:
            folder = path.split("/", 1)[0]
            if folder not in self._known or path not in self._paths.get(folder, ()):
                raise KeyError(path)
            self.folder_files(folder)
        return self._files[path]

    def __iter__(self) -> Iterator[str]:
        for paths in self._paths.values():
            yield from paths

    def __len__(self) -> int:
        return sum(map(len, self._paths.values()))

    def __contains__(self, path: object) -> bool:
        if not isinstance(path, str):
            return False
        return path in self._files or path in self._paths.get(path.split("/", 1)[0], ())


class _Assignments(Sequence[Assignment]):
    """The assignments in order; those of cluster types found in the memo, merged on demand."""

    def __init__(self, schedule: EnvironmentSchedule, assigned: dict[str, list[Assignment]]) -> None:
        self._schedule = schedule
        self._assigned = assigned
        self._len = sum(map(len, schedule.pairs.values()))
        self._all: list[Assignment] | None = None

    def _list(self) -> list[Assignment]:
        if self._all is None:
            self._all = [
                a
                for ct in self._schedule.pairs
                for a in (self._assigned.get(ct) or self._schedule.assign(ct))
            ]
        return self._all

    def __len__(self) -> int:
        return self._len

    def __getitem__(self, index: Any) -> Any:
        return self._list()[index]


# Bump when rendering changes its output in a way the code digest below would not notice.
RENDER_FORMAT = 1
_CODE_DIGEST: list[str] = []


def _code_digest() -> str:
    """What else a rendered file and its checks depend on: this code, the scheduling, sandbox and
    YAML modules, the sandbox's limits, the libraries."""
    if not _CODE_DIGEST:
        from promoter import scheduling, yamlfile

        h = hashlib.sha256(repr((RENDER_FORMAT, jinja2.__version__, yaml.__version__)).encode())
        for module in (sys.modules[__name__], scheduling, sandbox, yamlfile):
            h.update(Path(str(module.__file__)).read_bytes())
        _CODE_DIGEST.append(h.hexdigest())
    limits = (sandbox.RENDER_SECONDS, sandbox.MAX_STRING, sandbox.MAX_RANGE, MAX_OUTPUT_BYTES, MAX_DEPTH)
    return f"{_CODE_DIGEST[0]}:{limits!r}"


def _short(value: object) -> str:
    return hashlib.sha256(repr(value).encode()).hexdigest()[:32]


def folder_digests(
    main: MainObjects,
    env: EnvironmentObjects,
    environment: str,
    schedule: EnvironmentSchedule,
    templates: dict[str, Template],
) -> dict[str, str]:
    """Per cluster type with assignments: a digest of everything its folder is rendered and
    checked from. Its assignments (targets in order), the ConfigMaps it may match (those not
    labelled for another cluster type), the schemas, its templates, the environment and where
    it goes, and the code."""
    where = main.pipeline.environment(environment)
    general = sorted(schedule.index.general(), key=lambda cm: cm.name)
    common = _short(
        (
            _code_digest(),
            environment,
            main.pipeline.platform_url,
            (where.gitops_branch, where.gitops_path) if where else None,
            [(s.name, s.labels, s.schema) for s in sorted(main.schemas.values(), key=lambda s: s.name)],
            [(cm.name, cm.labels, cm.data) for cm in general],
        )
    )
    targets: dict[tuple[str, str], str] = {}
    out = {}
    for name, pairs in schedule.pairs.items():
        ct = pairs[0][0]
        named = sorted(schedule.index.named(ct), key=lambda cm: cm.name)
        parts = [
            common,
            _short((_cluster_type_inputs(ct, templates), [(cm.name, cm.labels, cm.data) for cm in named])),
        ]
        for _, w, t in pairs:
            key = (w.name, t.name)
            if key not in targets:
                targets[key] = _short((w.name, w.labels, w.workspace, t.name, t.labels, t.manifests))
            parts.append(targets[key])
        out[name] = hashlib.sha256(" ".join(parts).encode()).hexdigest()
    return out


def _cluster_type_inputs(ct: ClusterType, templates: dict[str, Template]) -> object:
    used = (ct.reconciler, ct.namespace_service, ct.config_type)
    return (ct.name, ct.labels, used, [(templates[n].type, templates[n].manifests) for n in used])


def _render_all(
    renderer: Renderer, templates: dict[str, Template], assignments: Sequence[Assignment]
) -> dict[str, bytes]:
    files: dict[str, bytes] = {}
    for a in assignments:
        ct = a.cluster_type
        context = variables(a)
        names = (ct.reconciler, ct.namespace_service, ct.config_type)
        for (_, filename), name in zip(ROLE_FILES, names, strict=True):
            files[f"{ct.name}/{a.name}/{filename}"] = renderer.render(templates[name], a, context)
    return files


# Merging config and rendering are CPU-bound Python: above this many assignments, a forked child
# does the second half of the cluster types while this process does the first (the overhead,
# mostly sending the child's files back, is about 2 ms per thousand files).
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
    renderer: Renderer,
    templates: dict[str, Template],
    schedule: EnvironmentSchedule,
    cluster_types: list[str],
    assigned: dict[str, list[Assignment]],
) -> dict[str, bytes]:
    """Merge config and render the second half of ``cluster_types`` in a forked child, the
    first half here. The same files in the same order, and the same first error, as one loop
    gives: config errors (all checked before any render) before template errors, and this
    half's before the child's. ``assigned`` gets this half's assignments; the child's are
    merged again if someone asks for them."""
    total = sum(len(schedule.pairs[ct]) for ct in cluster_types)
    count, cut = 0, len(cluster_types)
    for i, ct in enumerate(cluster_types):
        if count >= total / 2:
            cut = i
            break
        count += len(schedule.pairs[ct])
    mine, theirs = cluster_types[:cut], cluster_types[cut:]
    read_fd, write_fd = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: merge, render, send the result or the error, and leave at once
        os.close(read_fd)
        _child_render(renderer, templates, schedule, theirs, write_fd)
    os.close(write_fd)
    try:
        assigned.update({ct: schedule.assign(ct) for ct in mine})
        try:
            with renderer.watchdog():
                files = _render_all(renderer, templates, [a for ct in mine for a in assigned[ct]])
            failed: TemplateError | None = None
        except TemplateError as err:
            files, failed = {}, err
        with os.fdopen(read_fd, "rb") as pipe:
            kind, value = pickle.load(pipe)
    except BaseException:
        os.kill(pid, signal.SIGKILL)
        raise
    finally:
        os.waitpid(pid, 0)
    if kind == "crash":
        raise RuntimeError(f"rendering in a child process failed:\n{value}")
    if kind == "config-error":
        raise value
    if failed is not None:
        raise failed
    if kind == "error":
        raise value
    files.update(value)
    return files


def _child_render(
    renderer: Renderer,
    templates: dict[str, Template],
    schedule: EnvironmentSchedule,
    cluster_types: list[str],
    fd: int,
) -> None:
    code = 0
    try:
        try:
            assignments = [a for ct in cluster_types for a in schedule.assign(ct)]
        except PromoterError as err:
            result: tuple[str, object] = ("config-error", err)
        else:
            try:
                with renderer.watchdog():
                    result = ("files", _render_all(renderer, templates, assignments))
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
