"""Rendering in two processes: merging config and rendering are CPU-bound Python, so above a
size a forked child does the second half of the cluster types while this process does the
first. The same files in the same order, and the same first error, as one loop gives."""

from __future__ import annotations

import gc
import os
import pickle
import select
import signal
import sys
import threading
import traceback
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any, Literal

from promoter.errors import PromoterError, TemplateError
from promoter.model import Template
from promoter.rendering.checks import check_rendered
from promoter.rendering.render import ROLE_FILES, Renderer, TimedOut, variables
from promoter.rendering.skeleton import assignment_values
from promoter.scheduling.environment import EnvironmentSchedule
from promoter.scheduling.targets import Assignment

# What the child sends back through the pipe, tagged.
ChildResult = (
    tuple[Literal["files"], tuple[dict[str, bytes], TemplateError | None]]
    | tuple[Literal["config-error", "error"], PromoterError]
    | tuple[Literal["crash"], str]
)


Checked = tuple[dict[str, bytes], TemplateError | None]


def render_checked(
    renderer: Renderer, templates: dict[str, Template], assignments: Sequence[Assignment]
) -> Checked:
    """The files of ``assignments`` and the first problem the clusters would find in them (whole
    cluster types: one is never split between the two processes). A template error raises."""
    files: dict[str, bytes] = {}
    documents: dict[str, list[dict[str, Any]]] = {}
    for a in assignments:
        ct = a.cluster_type
        context = variables(a)
        names = assignment_values(context)
        folder = f"{ct.name}/{context['name']}"
        for (_, filename), name in zip(
            ROLE_FILES, (ct.reconciler, ct.namespace_service, ct.config_type), strict=True
        ):
            path = f"{folder}/{filename}"
            data, documents[path] = renderer.render_read(templates[name], a, context, names)
            if data or templates[name].language != "gotemplate":  # Kalypso writes no empty file
                files[path] = data
    if not assignments:
        return files, None
    cluster_types = {a.cluster_type.name: a.cluster_type for a in assignments}
    return files, check_rendered(documents, assignments[0].environment, cluster_types, templates)


def render_all(
    renderer: Renderer, templates: dict[str, Template], assignments: Sequence[Assignment]
) -> dict[str, bytes]:
    """The files of ``assignments``, unchecked (a memoised folder: checked when it rendered)."""
    files: dict[str, bytes] = {}
    for a in assignments:
        ct = a.cluster_type
        context = variables(a)
        names = (ct.reconciler, ct.namespace_service, ct.config_type)
        for (_, filename), name in zip(ROLE_FILES, names, strict=True):
            data = renderer.render(templates[name], a, context)
            if data or templates[name].language != "gotemplate":  # Kalypso writes no empty file
                files[f"{ct.name}/{a.name}/{filename}"] = data
    return files


# Merging config and rendering are CPU-bound Python: above this many assignments, a forked child
# does the second half of the cluster types while this process does the first (the overhead,
# mostly sending the child's files back, is about 2 ms per thousand files).
PARALLEL_MIN_ASSIGNMENTS = 2000


@contextmanager
def gc_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector while building large, long-lived, acyclic data: its
    passes over every live object would cost as much as the scheduling itself."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def can_fork() -> bool:
    """Fork only where it is safe and pays: Linux, a single thread, a second CPU."""
    if not sys.platform.startswith("linux") or threading.active_count() != 1:
        return False
    return len(os.sched_getaffinity(0)) >= 2


def render_in_two(
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
    cut = _halfway(schedule, cluster_types)
    mine, theirs = cluster_types[:cut], cluster_types[cut:]
    read_fd, write_fd = os.pipe()
    alarm_read, alarm_write = os.pipe()  # one byte: the child's render ran past its limit
    pid = os.fork()
    if pid == 0:  # the child: merge, render, send the result or the error, and leave at once
        os.close(read_fd)
        os.close(alarm_read)
        _child_render(renderer, templates, schedule, theirs, write_fd, alarm_write)
    os.close(write_fd)
    os.close(alarm_write)
    try:
        assigned.update({ct: schedule.assign(ct) for ct in mine})
        checked: TemplateError | None = None
        try:
            with renderer.watchdog(stop=lambda: _ChildTimedOut() if _alarmed(alarm_read) else None):
                files, checked = render_checked(renderer, templates, [a for ct in mine for a in assigned[ct]])
            failed: TemplateError | None = None
        except TimedOut:  # bad input already: the child's work is of no use (killed below)
            raise
        except TemplateError as err:
            files, failed = {}, err
        except _ChildTimedOut:  # its error is on its way: stop here and report it
            files, failed = {}, None
        with os.fdopen(read_fd, "rb") as pipe:
            kind, value = pickle.load(pipe)
    except BaseException:
        os.kill(pid, signal.SIGKILL)
        raise
    finally:
        os.close(alarm_read)
        os.waitpid(pid, 0)
    return _combined(files, checked, failed, kind, value)


def _combined(
    files: dict[str, bytes],
    checked: TemplateError | None,
    failed: TemplateError | None,
    kind: str,
    value: Any,
) -> dict[str, bytes]:
    """Both halves' files, or the error one loop would have met first: a render past its
    limit, a config error (all are checked before any render), this half's template error,
    the child's, then a problem the checks found in either half."""
    if kind == "error" and isinstance(value, TimedOut):
        raise value
    if kind == "crash":
        raise RuntimeError(f"rendering in a child process failed:\n{value}")
    if kind == "config-error":
        raise value
    if failed is not None:
        raise failed
    if kind == "error":
        raise value
    theirs_files, theirs_checked = value
    if checked or theirs_checked:  # after every template error, as one loop would find them
        raise checked or theirs_checked
    files.update(theirs_files)
    return files


class _ChildTimedOut(Exception):
    """Raised in this process, at a watchdog tick, once the child's render ran past its limit."""


def _alarmed(fd: int) -> bool:
    """Whether the child wrote its byte (the pipe also reads as ready, empty, once it exited)."""
    return bool(select.select([fd], [], [], 0)[0]) and os.read(fd, 1) == b"!"


def _halfway(schedule: EnvironmentSchedule, cluster_types: list[str]) -> int:
    """Where to cut ``cluster_types`` so that each half has about half of the assignments."""
    total = sum(len(schedule.pairs[ct]) for ct in cluster_types)
    count = 0
    for i, ct in enumerate(cluster_types):
        if count >= total / 2:
            return i
        count += len(schedule.pairs[ct])
    return len(cluster_types)


def _child_render(
    renderer: Renderer,
    templates: dict[str, Template],
    schedule: EnvironmentSchedule,
    cluster_types: list[str],
    fd: int,
    alarm: int,
) -> None:
    code = 0
    try:
        try:
            assignments = [a for ct in cluster_types for a in schedule.assign(ct)]
        except PromoterError as err:
            result: ChildResult = ("config-error", err)
        else:
            try:
                with renderer.watchdog():
                    result = ("files", render_checked(renderer, templates, assignments))
            except TimedOut as err:  # the run is over: tell the parent at once, then why
                os.write(alarm, b"!")
                result = ("error", err)
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
