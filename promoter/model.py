"""Control-plane objects (DESIGN section 3), validated and typed: built by ``controlplane.loading``
from git objects; everything downstream works on these and never on raw YAML."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date
from typing import Any, Literal, get_args

MergePolicy = Literal["auto", "manual", "direct", "next"]  # next: docs/hydrator.md
StatusState = Literal["pending", "success", "failure", "error"]
STATUS_STATES: tuple[StatusState, ...] = ("pending", "success", "failure", "error")
# The promoter's own branches on the platform repo; no environment may render into them.
BRANCH_PREFIX = "promoter"
# GitHub keeps at most this many characters of a commit status's description.
DESCRIPTION_LIMIT = 140


def promotion_branch(environment: str) -> str:
    """The branch an environment's promotion PR comes from."""
    return f"{BRANCH_PREFIX}/{environment}"


def rollback_branch(environment: str) -> str:
    """The branch an environment's rollback PR comes from."""
    return f"{BRANCH_PREFIX}/{environment}-rollback"


@dataclass(frozen=True)
class Status:
    """A commit status, as a forge keeps it: the newest per context is the current one."""

    context: str
    state: str  # a StatusState; read leniently from what a forge or a human wrote
    description: str = ""
    target_url: str | None = None
    created_at: str = ""


TemplateType = Literal["reconciler", "namespace", "config"]
#: What a promotion that stopped (``--wait none``, DESIGN section 12) waits for. ``window`` and
#: ``hold`` are change control's (section 13): a closed change window waits on time (its next
#: check is when the window opens); a hold waits for ``promoter release`` or its ``until``.
WaitFor = Literal["merge", "approval", "gates", "bake", "window", "hold"]
WAIT_REASONS: tuple[WaitFor, ...] = ("merge", "approval", "gates", "bake", "window", "hold")
#: The change-control events a notification receiver may be sent (DESIGN section 13).
NotifyEvent = Literal["approval", "failed", "rolled-back", "held", "released", "window", "done"]
NOTIFY_EVENTS: tuple[NotifyEvent, ...] = get_args(NotifyEvent)  # in that order
FailurePolicy = Literal["stop", "rollback"]
#: ``prChecks.require``: every check on the promotion PR's head ("all"), or name patterns.
PRChecksRequire = Literal["all"] | tuple[str, ...]


@dataclass(frozen=True)
class Source:
    """Where an object or field was read: file path in the branch, and line."""

    file: str
    line: int | None = None

    def __str__(self) -> str:
        return f"{self.file}:{self.line}" if self.line else self.file


@dataclass(frozen=True)
class Requirement:
    key: str
    operator: Literal["In", "NotIn", "Exists", "DoesNotExist"]
    values: tuple[str, ...] = ()

    def matches(self, labels: dict[str, str]) -> bool:
        present = self.key in labels
        if self.operator == "Exists":
            return present
        if self.operator == "DoesNotExist":
            return not present
        if self.operator == "In":
            return present and labels[self.key] in self.values
        return not present or labels[self.key] not in self.values


@dataclass(frozen=True)
class Selector:
    """A Kubernetes-style label selector, optionally narrowed to a workspace."""

    match_labels: dict[str, str] = field(default_factory=dict)
    match_expressions: tuple[Requirement, ...] = ()
    workspace: str | None = None

    def matches(self, labels: dict[str, str], workspace: str | None = None) -> bool:
        if self.workspace is not None and self.workspace != workspace:
            return False
        if any(labels.get(k) != v for k, v in self.match_labels.items()):
            return False
        return all(r.matches(labels) for r in self.match_expressions)


@dataclass(frozen=True)
class GateSpec:
    type: str
    spec: Any
    source: Source
    #: A command gate's: variables its commands never get (the notification receivers' secrets).
    withheld: tuple[str, ...] = ()


@dataclass(frozen=True)
class WindowRule:
    """One allowed or denied time of a change window, in the window's zone: it matches a local
    time when every field it has matches (days of the week, hours of the day, dates)."""

    days: frozenset[int] | None  # 0 is Monday
    hours: tuple[int, int] | None  # minutes after midnight, [start, end); end <= start: overnight
    dates: tuple[tuple[date, date], ...] | None  # inclusive ranges
    reason: str
    line: int | None = None


@dataclass(frozen=True)
class Windows:
    """When changes may land (``allow``: any rule matches; none given: always) and when they may
    not (``deny`` wins over ``allow``), in a named IANA time zone."""

    zone: str
    allow: tuple[WindowRule, ...]
    deny: tuple[WindowRule, ...]
    source: Source


@dataclass(frozen=True)
class Receiver:
    """A notification receiver: a Slack-compatible incoming webhook (its URL is the secret) or a
    generic JSON webhook signed with HMAC-SHA256; secrets are environment variable names."""

    name: str
    kind: Literal["slack", "webhook"]
    url: str | None  # webhook: the URL; slack: None (read from ``url_from``)
    url_from: str | None  # the environment variable holding the URL
    secret_from: str | None  # webhook: the environment variable holding the HMAC key
    events: tuple[NotifyEvent, ...]
    environments: tuple[str, ...]  # empty: every environment
    source: Source


REST_WAVE = "rest"  # the wave that holds the cluster types no wave of an environment names


@dataclass(frozen=True)
class RemovalLimit:
    """How many of an environment's (or a wave's) assignments one promotion may remove without
    ``--allow-removal``: a number, or a percent of those it held. Removing all of them is
    always refused."""

    count: int
    percent: bool = False

    def allows(self, removed: int, held: int) -> bool:
        bound = held * self.count / 100 if self.percent else self.count
        return removed <= bound and (removed < held or removed == 0)

    def __str__(self) -> str:
        return f"{self.count}%" if self.percent else str(self.count)


DEFAULT_REMOVAL_LIMIT = RemovalLimit(50, percent=True)


@dataclass(frozen=True)
class Wave:
    """One step of an environment's progressive rollout: the cluster types named in
    ``cluster_types`` and those ``selector`` matches, landed and gated together."""

    name: str
    cluster_types: tuple[str, ...]
    selector: Selector | None
    gates: tuple[GateSpec, ...] | None  # None: the environment's gates
    bake: float  # seconds to wait after its gates passed
    timeout: float | None  # None: the environment's
    source: Source
    windows: Windows | None = None  # apply in addition to the environment's

    def selects(self, name: str, labels: dict[str, str]) -> bool:
        return name in self.cluster_types or (self.selector is not None and self.selector.matches(labels))


@dataclass(frozen=True)
class Environment:
    name: str
    branch: str
    gitops_branch: str
    gitops_path: str
    merge: MergePolicy
    timeout: float
    gates: tuple[GateSpec, ...]
    source: Source
    on_failure: FailurePolicy = "stop"
    waves: tuple[Wave, ...] = ()  # empty: the whole environment at once
    platform_url: str | None = None  # gitops.repo: this environment's own platform repo
    #: ``follows``: the environments that must have succeeded for a commit before this one takes
    #: it (DESIGN section 14); None is the list's order: the environment before, if any.
    follows: tuple[str, ...] | None = None
    windows: Windows | None = None  # change windows (DESIGN section 13)
    removal_limit: RemovalLimit = DEFAULT_REMOVAL_LIMIT  # removalLimit: the removal guard's bound
    check_sources: bool = False  # checkSources: every manifests source answers before a push
    pr_checks: PRChecksRequire | None = None  # prChecks: the PR's own checks pass before its merge
    messages: dict[str, tuple[Manifest, ...]] = field(default_factory=dict)  # controlplane/messages.py


Release = tuple[int, int]  # (major, minor)


@dataclass(frozen=True)
class Versions:
    """What a cluster type's clusters run (``spec.versions``); None is "the newest", what
    promoter's schemas are (promoter/k8s/served.py)."""

    kubernetes: Release | None = None
    flux: Release | None = None
    argocd: Release | None = None

    def over(self, default: Versions) -> Versions:
        """These, each missing one taken from ``default`` (the Pipeline's)."""
        return Versions(
            self.kubernetes or default.kubernetes, self.flux or default.flux, self.argocd or default.argocd
        )

    def __bool__(self) -> bool:
        return any((self.kubernetes, self.flux, self.argocd))


NEWEST = Versions()


@dataclass(frozen=True)
class Pipeline:
    name: str
    platform_url: str
    forge: Literal["local", "github"] | None  # platformRepo.forge, validated when read
    environments: tuple[Environment, ...]
    source: Source
    versions: Versions = NEWEST  # spec.versions: the default of every cluster type
    #: ``failFast``: a failed environment stops the whole promotion, not only what follows it
    fail_fast: bool = False
    notifications: tuple[Receiver, ...] = ()  # spec.notifications (DESIGN section 13)
    sign_commits: Literal["git", "github"] = "git"  # spec.signatures.commits (docs/security.md)
    verify_main: Literal["git", "github"] | None = None  # spec.signatures.verifyMain; None: not verified
    hydrator_metadata: bool = False  # spec.hydrator.metadata: docs/hydrator.md

    def environment(self, name: str) -> Environment | None:
        return next((e for e in self.environments if e.name == name), None)

    def upstreams(self, name: str) -> tuple[str, ...]:
        """The environments ``name`` follows: all must have succeeded for a commit first."""
        i = self.index(name)
        follows = self.environments[i].follows
        return follows if follows is not None else (self.environments[i - 1].name,) if i else ()

    def downstreams(self, name: str) -> tuple[str, ...]:
        """The environments that follow ``name`` directly, in the list's order."""
        return tuple(e.name for e in self.environments if name in self.upstreams(e.name))

    def ancestors(self, name: str) -> frozenset[str]:
        """Every environment a commit passes before ``name`` (not ``name`` itself)."""
        return _closure(name, self.upstreams)

    def descendants(self, name: str) -> frozenset[str]:
        """Every environment that waits, directly or not, on ``name``."""
        return _closure(name, self.downstreams)

    def ordered(self) -> tuple[Environment, ...]:
        """The environments in an order of promotion: each after all it follows, else in the
        list's order (a list: the list). The graph has no cycle (checked when read)."""
        done: list[Environment] = []
        while len(done) < len(self.environments):
            names = {e.name for e in done}
            done.append(
                next(e for e in self.environments if e not in done and set(self.upstreams(e.name)) <= names)
            )
        return tuple(done)

    @property
    def is_chain(self) -> bool:
        """Whether each environment follows exactly the one listed before it (a list)."""
        names = [e.name for e in self.environments]
        return all(self.upstreams(n) == tuple(names[max(i - 1, 0) : i]) for i, n in enumerate(names))

    def platform_of(self, env: Environment) -> str:
        """The platform repo ``env`` renders to: its ``gitops.repo``, else ``platformRepo.url``."""
        return env.platform_url or self.platform_url

    def index(self, name: str) -> int:
        return [e.name for e in self.environments].index(name)


def _closure(name: str, step: Callable[[str], tuple[str, ...]]) -> frozenset[str]:
    seen: set[str] = set()
    todo = list(step(name))
    while todo:
        if (found := todo.pop()) not in seen:
            seen.add(found)
            todo.extend(step(found))
    return frozenset(seen)


@dataclass(frozen=True)
class Manifest:
    """One entry of a Template: a jinja2 text, or a YAML mapping whose strings are templates."""

    body: str | dict[str, Any]
    line: int | None


@dataclass(frozen=True)
class Template:
    name: str
    type: TemplateType
    manifests: tuple[Manifest, ...]
    source: Source
    content_type: str = ""  # Kalypso's spec.contentType ("env": a shell file)
    language: str = "jinja2"  # spec.language: jinja2, or gotemplate (Go text/template, Kalypso's)


@dataclass(frozen=True)
class DeploymentTarget:
    name: str
    environment: str
    labels: dict[str, str]
    manifests: dict[str, Any]
    source: Source
    #: ``dependsOn``: (workload, target, line of the item in this target's file), resolved when read
    depends_on: tuple[tuple[str, str, int | None], ...] = ()
    depth: int = 0  # the longest chain of dependsOn below it (0: none): Argo CD's sync wave


@dataclass(frozen=True)
class Workload:
    name: str
    labels: dict[str, str]
    workspace: str
    targets: tuple[DeploymentTarget, ...]
    source: Source


@dataclass(frozen=True)
class ConfigSchema:
    name: str
    labels: dict[str, str]
    schema: dict[str, Any]
    source: Source


@dataclass(frozen=True)
class ClusterType:
    name: str
    labels: dict[str, str]
    reconciler: str
    namespace_service: str
    config_type: str
    source: Source
    versions: Versions = NEWEST  # spec.versions: what its clusters run (promoter/k8s/served.py)


@dataclass(frozen=True)
class SchedulingPolicy:
    name: str
    targets: Selector
    cluster_types: Selector
    source: Source


@dataclass(frozen=True)
class ConfigMap:
    name: str
    labels: dict[str, str]
    data: dict[str, Any]
    source: Source
    lines: dict[str, int] = field(default_factory=dict, compare=False)  # each data key's line


@dataclass(frozen=True)
class MainObjects:
    """What is promoted: read from main at one commit."""

    commit: str
    pipeline: Pipeline
    templates: dict[str, Template]
    workloads: dict[str, Workload]
    schemas: dict[str, ConfigSchema]


@dataclass(frozen=True)
class EnvironmentObjects:
    """What belongs to one environment: read from its branch at one commit."""

    branch: str
    commit: str
    cluster_types: dict[str, ClusterType]
    policies: dict[str, SchedulingPolicy]
    configmaps: dict[str, ConfigMap]
