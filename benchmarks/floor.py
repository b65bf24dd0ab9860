"""The floor: what rendering and committing the same files costs with nothing of the promoter
around it. The same templates (and filters) rendered by a bare jinja2 loop over precomputed
variables, with no scheduling, no config merge, no checks; then ``git fast-import`` of those
bytes as one commit in a fresh bare repo."""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jinja2

from promoter.model import Template
from promoter.platform.repo import GIT_TUNING
from promoter.platform.writer import FAST_IMPORT_OPTIONS, blob_command, delta_order, marks_of
from promoter.rendering.render import ROLE_FILES, configmap_data, quote, to_yaml, variables
from promoter.scheduling.targets import Assignment

Job = tuple[str, tuple[jinja2.Template, ...], dict[str, Any]]


@dataclass(frozen=True)
class FloorResult:
    files: int
    bytes: int
    render_s: float
    fast_import_s: float
    fast_import_default_s: float  # with git's defaults, for comparison

    @property
    def total_s(self) -> float:
        return self.render_s + self.fast_import_s


def _environment() -> jinja2.Environment:
    env = jinja2.Environment(undefined=jinja2.StrictUndefined, autoescape=False, keep_trailing_newline=True)
    env.filters.update(to_yaml=to_yaml, quote=quote, configmap_data=configmap_data)
    return env


def jobs(templates: dict[str, Template], assignments: list[Assignment]) -> list[Job]:
    """(path, compiled manifests, variables) per file: everything the loop needs, made in advance."""
    env = _environment()
    compiled: dict[str, tuple[jinja2.Template, ...]] = {}
    for name, template in templates.items():
        if all(isinstance(m.body, str) for m in template.manifests):
            compiled[name] = tuple(env.from_string(str(m.body)) for m in template.manifests)
    out: list[Job] = []
    for a in assignments:
        context = variables(a)
        names = (a.cluster_type.reconciler, a.cluster_type.namespace_service, a.cluster_type.config_type)
        for (_, filename), name in zip(ROLE_FILES, names, strict=True):
            out.append((f"{a.cluster_type.name}/{a.name}/{filename}", compiled[name], context))
    return out


def render(work: list[Job]) -> dict[str, bytes]:
    """The bare loop."""
    return {path: "---\n".join(t.render(ctx) for t in manifests).encode() for path, manifests, ctx in work}


def fast_import(repo: Path, files: dict[str, bytes], *, tuned: bool = True) -> None:
    """One commit holding ``files``, written by ``git fast-import`` into a fresh bare repo.

    ``tuned``: with the allocator setting and options the promoter gives git (GIT_TUNING,
    FAST_IMPORT_OPTIONS), so that the floor is what git itself can do at best; otherwise with
    git's defaults."""
    shutil.rmtree(repo, ignore_errors=True)
    subprocess.run(["git", "init", "--quiet", "--bare", str(repo)], check=True)
    message = b"floor"
    who = b"floor <floor@localhost> 0 +0000"
    chunks = [
        b"commit refs/heads/floor\nauthor ",
        who,
        b"\ncommitter ",
        who,
        b"\ndata %d\n" % len(message),
        message,
        b"\n",
    ]
    # the blobs first, in the order the promoter writes them (grouped by file name, so that
    # each is a small delta of the one before), then the commit naming them by mark
    order = delta_order(files) if tuned else sorted(files)
    marks = marks_of(order)
    chunks = [blob_command(marks[p], files[p]) for p in order] + chunks
    chunks.extend(b"M 100644 :%d %s\n" % (marks[path], path.encode()) for path in sorted(files))
    options = FAST_IMPORT_OPTIONS if tuned else ()
    env = {**os.environ, **GIT_TUNING} if tuned else None
    subprocess.run(
        ["git", "-C", str(repo), "fast-import", "--quiet", *options],
        input=b"".join(chunks),
        check=True,
        env=env,
    )


def measure(templates: dict[str, Template], assignments: list[Assignment], repo: Path) -> FloorResult:
    work = jobs(templates, assignments)
    start = time.perf_counter()
    files = render(work)
    rendered = time.perf_counter()
    fast_import(repo, files)
    done = time.perf_counter()
    fast_import(repo, files, tuned=False)
    default = time.perf_counter() - done
    return FloorResult(len(files), sum(map(len, files.values())), rendered - start, done - rendered, default)


def measure_control_plane(control_plane: Path, environment: str, repo: Path) -> dict[str, Any]:
    """The floor for one environment of a control plane: its variables come from the promoter's
    own scheduling (not timed), the rest is timed as above."""
    from promoter.controlplane.repo import ControlPlane
    from promoter.rendering.builtins import all_templates
    from promoter.scheduling.environment import assign

    cp = ControlPlane(control_plane)
    main = cp.main(cp.resolve(None))
    env = main.pipeline.environment(environment)
    assert env is not None
    assignments = assign(main, cp.environment(env), environment)
    result = measure(all_templates(main), assignments, repo)
    return {
        "files": result.files,
        "bytes": result.bytes,
        "render_s": result.render_s,
        "fast_import_s": result.fast_import_s,
        "fast_import_default_s": result.fast_import_default_s,
        "total_s": result.total_s,
    }
