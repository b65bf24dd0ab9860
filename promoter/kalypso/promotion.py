"""Promoting a Kalypso control plane with promoter's own flows (docs/kalypso.md#promote).

Kalypso keeps the order of its environments outside git, so it is given: ``--environments
dev,stage``, or a file holding a promoter ``Pipeline`` that only lists environments (each its
``name`` and, if it likes, ``merge``, ``timeout``, ``gates``, ``onFailure``). The rest comes from
Kalypso's own files: each environment's branch from main's ``.environments/``, its platform repo,
branch and folder from the branch's ``GitOpsRepo``. The tree landed is the one Kalypso's
scheduler would commit (``render.render_tree``), and the engine is promoter's: merge policy,
gates, statuses, resume."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path

from promoter.controlplane.documents import ObjectDoc
from promoter.controlplane.fields import Fields
from promoter.controlplane.pipeline import environment_from
from promoter.controlplane.repo import ControlPlane
from promoter.controlplane.yamlfile import LDict, load_documents
from promoter.errors import ConfigError, UsageError
from promoter.kalypso.control import KalypsoControlPlane
from promoter.kalypso.loading import KalypsoBranch
from promoter.kalypso.objects import GitOpsRepo, KEnvironment
from promoter.model import Environment, EnvironmentObjects, MainObjects, Pipeline, Source
from promoter.rendering.tree import Rendered
from promoter.scheduling.targets import Assignment
from promoter.urls import scheme_of

#: What an environment of the environments file may say; the rest is Kalypso's.
LITE_FIELDS = ("name", "merge", "timeout", "gates", "onFailure")
PIPELINE_NAME = "kalypso"


@dataclass(frozen=True)
class Order:
    """The environments in promotion order, each with how it lands and what gates it; branch
    and GitOps place are filled in from Kalypso's files."""

    environments: tuple[Environment, ...]
    source: Source


def order_from_flag(value: str) -> Order:
    """``--environments dev,stage``: merge auto, no gates, timeout 30m each."""
    names = [n.strip() for n in value.split(",")]
    if not value.strip() or any(not n for n in names):
        raise UsageError(f"--environments {value}: a comma-separated list of environment names")
    source = Source("--environments", None)
    envs = tuple(
        environment_from(Fields({"name": n}, "--environments", f"[{i}]")) for i, n in enumerate(names)
    )
    return Order(_unique(envs, "--environments"), source)


def order_from_file(path: str) -> Order:
    """A file holding one ``Pipeline`` whose environments say only what ``LITE_FIELDS`` allows."""
    obj = _pipeline_doc(path)
    spec = obj.spec()
    envs = [
        _lite_environment(Fields(item, path, sub, line))
        for sub, line, item in spec.items("environments", required=True)
    ]
    if not envs:
        spec.fail("needs at least one environment", "environments")
    spec.done()
    obj.top.done()
    return Order(_unique(tuple(envs), path), obj.source)


def _pipeline_doc(path: str) -> ObjectDoc:
    """The one ``Pipeline`` the environments file holds."""
    try:
        data = Path(path).read_bytes()
    except OSError as err:
        raise UsageError(f"--environments-file {path}: {err.strerror or err}") from err
    docs = [d for d in load_documents(data, path) if d is not None]
    if len(docs) != 1 or not isinstance(docs[0], LDict) or docs[0].get("kind") != "Pipeline":
        raise ConfigError(
            "must hold one Pipeline (kind: Pipeline) that lists environments", file=path, line=1
        )
    return ObjectDoc(path, docs[0])


def _lite_environment(fields: Fields) -> Environment:
    """An environment of the file, which names none of the fields Kalypso's files give."""
    for key in fields.value:
        if key not in LITE_FIELDS:
            fields.fail(
                f"Kalypso's files say this (its GitOpsRepo, .environments/); here only {', '.join(LITE_FIELDS)}",
                key,
            )
    return environment_from(fields)


def _unique(envs: tuple[Environment, ...], file: str) -> tuple[Environment, ...]:
    seen: set[str] = set()
    for env in envs:
        if env.name in seen:
            raise ConfigError(f"environment {env.name!r} is listed twice", file=file, line=env.source.line)
        seen.add(env.name)
    return envs


class KalypsoPromotion(ControlPlane):
    """The control plane as the promotion flows see it: a Pipeline made of the order and
    Kalypso's files, and each environment rendered Kalypso's way (``render``, the flows'
    render hook)."""

    def __init__(self, kcp: KalypsoControlPlane, order: Order) -> None:
        super().__init__(kcp.cp.path, kcp.cp.main_branch)
        self.kcp = kcp
        self.order = order
        self._branches: dict[str, KalypsoBranch] = {}
        self._kenvs: dict[str, KEnvironment] = {}  # the Environments of the main commits read

    def main(self, commit: str) -> MainObjects:
        if commit not in self._main:
            kmain = self.kcp.main(commit)
            envs = []
            url = None
            for wanted in self.order.environments:
                kenv = _environment_of(kmain.environments, wanted, commit)
                self._kenvs[kenv.name] = kenv
                gitops = _gitops(self._branch(kenv))
                _check_same_forge(kenv, gitops, url)
                url = url or gitops.ref.repo
                envs.append(
                    replace(
                        wanted,
                        branch=kenv.control_plane.branch,
                        gitops_branch=gitops.ref.branch,
                        gitops_path=gitops.ref.path,
                        platform_url=gitops.ref.repo if gitops.ref.repo != url else None,
                    )
                )
            assert url is not None
            pipeline = Pipeline(PIPELINE_NAME, url, None, tuple(envs), self.order.source)
            self._main[commit] = MainObjects(commit, pipeline, dict(kmain.templates), {}, {})
        return self._main[commit]

    def environment(self, env: Environment, commit: str | None = None) -> EnvironmentObjects:
        """The environment branch at its head (or ``commit``), as promoter's objects."""
        kenv = self._kenvs.get(env.name) or self.kcp.environment(self.kcp.main(self.resolve(None)), env.name)
        branch = self.kcp.branch(kenv, commit)
        return EnvironmentObjects(
            branch.branch,
            branch.commit,
            dict(branch.cluster_types),
            dict(branch.policies),
            dict(branch.configmaps),
        )

    def render(self, main: MainObjects, objects: EnvironmentObjects, environment: str) -> Rendered:
        """``environment``'s tree as Kalypso's scheduler would commit it, rendered from main
        commit ``main.commit`` and the environment branch at ``objects.commit``."""
        rendered = self.kcp.render(environment, main.commit, objects.commit)
        assignments = [
            Assignment(environment, p.cluster_type, p.target.workload, p.target.target, dict(p.config))
            for placed in rendered.placements.values()
            for p in placed
        ]
        cluster_types = tuple(sorted(rendered.branch.cluster_types))
        # the scheduler since 2024 keeps a target folder's files it does not write; 2023's replaced folders
        return Rendered(
            rendered.files,
            cluster_types,
            assignments,
            True,
            dict(rendered.workload_commits),
            self.kcp.pr_labels(rendered),
            keeps_unwritten=self.kcp.naming != "2023",
        )

    def base_commit(self, environment: str) -> str:
        """The main commit ``environment``'s BaseRepo pins (what Kalypso runs there)."""
        kenv = self.kcp.environment(self.kcp.main(self.resolve(None)), environment)
        return self.kcp.base_commit(kenv, self._branch(kenv))

    def gitops_of(self, environment: str) -> GitOpsRepo:
        """The GitOpsRepo of an environment of the Pipeline (``main`` has read it)."""
        return _gitops(self._branches[environment])

    def _branch(self, kenv: KEnvironment) -> KalypsoBranch:
        """The environment branch at its head, read once per run."""
        if kenv.name not in self._branches:
            self._branches[kenv.name] = self.kcp.branch(kenv)
        return self._branches[kenv.name]


def _environment_of(
    environments: Mapping[str, KEnvironment], wanted: Environment, commit: str
) -> KEnvironment:
    """The Kalypso Environment of the order's ``wanted`` environment, on main ``commit``."""
    kenv = environments.get(wanted.name)
    if kenv is None:
        known = ", ".join(sorted(environments)) or "none"
        raise ConfigError(
            f"environment {wanted.name!r}: main {commit[:12]} has no such Environment in "
            f".environments/ (it has {known})",
            file=wanted.source.file,
            line=wanted.source.line,
        )
    return kenv


def _check_same_forge(kenv: KEnvironment, gitops: GitOpsRepo, url: str | None) -> None:
    """An environment renders on the forge of those before it (``url``, the first one's repo)."""
    if url is not None and _local(gitops.ref.repo) != _local(url):
        raise ConfigError(
            f"spec.repo: environment {kenv.name!r} renders to {gitops.ref.repo}, on another forge "
            f"than the environments before it ({url}); promote them in separate runs",
            file=gitops.source.file,
            line=gitops.source.line,
        )


def _local(url: str) -> bool:
    """Whether ``url`` is served by the local forge (a path or file://), not GitHub."""
    return scheme_of(url) in ("path", "file")


def _gitops(branch: KalypsoBranch) -> GitOpsRepo:
    if branch.gitops is None:
        raise ConfigError(
            f"environment branch {branch.branch!r} has no GitOpsRepo: where it renders to is unknown",
            file=f"{branch.branch}:",
        )
    return branch.gitops
