"""What Flux posts as commit statuses, by release: what a ``commitStatus`` gate can hear.

Read from fluxcd/notification-controller's and kustomize-controller's code (docs/health-gates.md,
"What each Flux posts"): the commit-status providers (github, gitlab, ...) post

- up to 2.7: ``success`` and ``failure`` for every Kustomization event that carries a revision
  (``Progressing`` ones skipped), the context ``kustomization/<name>/<first part of the
  Provider's UID>``; an info event such as "dependency not ready" is posted as ``success`` too;
- from 2.6, a Provider ``v1beta3`` may set the context with ``spec.commitStatusExpr`` (CEL over
  ``event``, ``provider``, ``alert``), so that each cluster posts its own;
- 2.8: only events marked ``commit_status`` (the success event) reach them: a failed
  reconciliation posts **no** failure status (notification-controller 1.8.x; 2.8.0 posted
  nothing at all for Kustomizations);
- from 2.9: failures again (error events pass), and success unless kustomize-controller's
  ``DisableCommitStatusEvent`` feature gate is on, which promoter cannot see.

Pure: releases in, facts and sentences out.
"""

from __future__ import annotations

from collections.abc import Iterable

from promoter.model import ClusterType, Release, Versions

#: Provider v1beta3 ``spec.commitStatusExpr`` (notification-controller 1.6, fluxcd/notification-controller#1068).
STATUS_EXPR: Release = (2, 6)
#: Failure events dropped by commit-status providers (notification-controller 1.8.x, #1373) ...
NO_FAILURES: Release = (2, 8)
#: ... and let through again (#1317, notification-controller 1.9); the success event may be
#: switched off there (kustomize-controller ``DisableCommitStatusEvent``, #1755).
SWITCHABLE_SUCCESS: Release = (2, 9)
#: What Flux's github provider writes for a ``success`` that is not a verdict on the revision:
#: up to 2.7 the info event "Dependencies do not meet ready condition" (reason
#: ``DependencyNotReady``) is posted as ``success`` on the revision not applied yet.
NOT_APPLIED = frozenset({"dependency not ready"})
#: The context Flux writes without ``commitStatusExpr``: ``<kind>/<name>/<8 hex of a UID>``.
DEFAULT_CONTEXT = "kustomization/<name>/<Provider UID prefix>"


def version(release: Release) -> str:
    return f"{release[0]}.{release[1]}"


def posts_failures(release: Release) -> bool:
    """Whether a failed reconciliation posts a ``failure`` status."""
    return not NO_FAILURES <= release < SWITCHABLE_SUCCESS


def success_switchable(release: Release) -> bool:
    """Whether a feature gate promoter cannot see may stop the ``success`` status."""
    return release >= SWITCHABLE_SUCCESS


def has_status_expr(release: Release) -> bool:
    return release >= STATUS_EXPR


def runs_flux(cluster_type: ClusterType, default: Versions) -> Release | None:
    """The Flux release a cluster type's clusters run, as its ``spec.versions`` (else the
    Pipeline's) says; None when not said, or when its reconciler is the built-in ``argocd``."""
    if cluster_type.reconciler == "argocd":
        return None
    return cluster_type.versions.over(default).flux


def default_shaped(pattern: str) -> bool:
    """Whether a context pattern reads Flux's default contexts without naming a cluster:
    ``kustomization/...`` whose last part is only wildcards (``kustomization/platform/*``)."""
    last = pattern.rsplit("/", 1)[-1]
    return pattern.startswith("kustomization/") and bool(last) and set(last) <= {"*", "?"}


def silence_cause(releases: Iterable[Release]) -> str:
    """Why clusters of these Flux releases may have posted nothing on the rollout; a generic
    cause when no release is declared. Short: it ends a message of at most 400 characters."""
    found = sorted(set(releases))
    quiet = [r for r in found if not posts_failures(r)]
    if quiet:
        return (
            f"Flux {version(quiet[0])} posts no failure status: a failed reconciliation looks like "
            "silence; the hub gate sees it"
        )
    switchable = [r for r in found if success_switchable(r)]
    if switchable:
        return (
            f"Flux {version(switchable[0])} posts failures, so the silent clusters have not applied it yet, "
            "or run kustomize-controller with DisableCommitStatusEvent, which posts no success"
        )
    if found:
        return (
            f"Flux {version(found[-1])} posts failures, so the silent clusters have not applied it yet "
            "(not fetched, health checks running, suspended) or cannot post (Alert, Provider, token)"
        )
    return (
        "the silent clusters have not applied it yet, or their reconciler does not post (Flux 2.8 posts no "
        "failure status; spec.versions says which Flux runs)"
    )
