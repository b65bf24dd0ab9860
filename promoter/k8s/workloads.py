"""The workload kinds as the API server validates them (``apps`` and ``batch`` validation):
Deployment, StatefulSet, DaemonSet and ReplicaSet select their own pod template's labels; Jobs
and CronJobs restart their pods OnFailure or Never and run on a valid schedule.
"""

from __future__ import annotations

from typing import Any

from promoter.k8s import meta, pods
from promoter.k8s.cron import schedule_problem, time_zone_problem
from promoter.k8s.fields import (
    Finding,
    Findings,
    check,
    dns_subdomain,
    int_or_percent,
    items,
    mapping,
    non_negative,
    one_of,
    optional,
)
from promoter.k8s.quantity import quantities

ALWAYS = ("Always",)
JOB_RESTART = ("OnFailure", "Never")


def _selected(spec: dict[str, Any], path: str = "spec") -> Findings:
    """A required, non-empty selector that selects the pod template's labels."""
    selector = mapping(spec, "selector")
    if meta.is_empty(selector):
        yield Finding(
            f"{path}.selector",
            selector,
            "empty selector is invalid: it must select the pod template's labels",
        )
        return
    yield from meta.selector(selector, f"{path}.selector")
    labels = mapping(mapping(mapping(spec, "template"), "metadata"), "labels")
    if not meta.selects(selector, labels):
        yield Finding(
            f"{path}.template.metadata.labels", labels, "`selector` does not match template `labels`"
        )


INT32_MAX = 2147483647
INT64_FIELDS = frozenset({"activeDeadlineSeconds", "startingDeadlineSeconds"})


def _int32_count(value: Any) -> str | None:
    if isinstance(value, int) and value > INT32_MAX:
        return f"must be at most {INT32_MAX}: the field is an int32"
    return non_negative(value)


def _counts(spec: dict[str, Any], path: str, *keys: str) -> Findings:
    """Counts and durations in seconds: never negative, int32 unless the API says int64."""
    for key in keys:
        yield from optional(spec, key, path, non_negative if key in INT64_FIELDS else _int32_count)


def _percent_max(value: Any) -> str | None:
    if isinstance(value, str) and value.endswith("%") and value[:-1].isdigit() and int(value[:-1]) > 100:
        return "must not be greater than 100%"
    return None


def deployment(body: dict[str, Any]) -> Findings:
    spec = mapping(body, "spec")
    yield from _counts(
        spec, "spec", "replicas", "minReadySeconds", "revisionHistoryLimit", "progressDeadlineSeconds"
    )
    yield from _selected(spec)
    strategy = mapping(spec, "strategy")
    yield from optional(strategy, "type", "spec.strategy", lambda v: one_of(v, ("Recreate", "RollingUpdate")))
    rolling = mapping(strategy, "rollingUpdate")
    if strategy.get("type") == "Recreate" and rolling:
        yield Finding(
            "spec.strategy.rollingUpdate", rolling, "may not be specified when strategy `type` is 'Recreate'"
        )
    yield from optional(rolling, "maxSurge", "spec.strategy.rollingUpdate", int_or_percent)
    yield from optional(
        rolling, "maxUnavailable", "spec.strategy.rollingUpdate", int_or_percent, _percent_max
    )
    if (
        rolling
        and _is_zero(rolling.get("maxSurge", "25%"))
        and _is_zero(rolling.get("maxUnavailable", "25%"))
    ):
        yield Finding(
            "spec.strategy.rollingUpdate.maxUnavailable",
            rolling.get("maxUnavailable"),
            "may not be 0 when `maxSurge` is 0",
        )
    deadline, ready = spec.get("progressDeadlineSeconds"), spec.get("minReadySeconds", 0)
    if isinstance(deadline, int) and isinstance(ready, int) and deadline <= ready:
        yield Finding("spec.progressDeadlineSeconds", deadline, "must be greater than minReadySeconds")
    yield from pods.template(mapping(spec, "template"), "spec.template", ALWAYS)


def _is_zero(value: Any) -> bool:
    return value in (0, "0", "0%")


def replicaset(body: dict[str, Any]) -> Findings:
    spec = mapping(body, "spec")
    yield from _counts(spec, "spec", "replicas", "minReadySeconds")
    yield from _selected(spec)
    yield from pods.template(mapping(spec, "template"), "spec.template", ALWAYS)


def daemonset(body: dict[str, Any]) -> Findings:
    spec = mapping(body, "spec")
    yield from _counts(spec, "spec", "minReadySeconds", "revisionHistoryLimit")
    yield from _selected(spec)
    strategy = mapping(spec, "updateStrategy")
    yield from optional(
        strategy, "type", "spec.updateStrategy", lambda v: one_of(v, ("OnDelete", "RollingUpdate"))
    )
    rolling = mapping(strategy, "rollingUpdate")
    for key in ("maxSurge", "maxUnavailable"):
        yield from optional(rolling, key, "spec.updateStrategy.rollingUpdate", int_or_percent, _percent_max)
    yield from pods.template(mapping(spec, "template"), "spec.template", ALWAYS)


def statefulset(body: dict[str, Any]) -> Findings:
    spec = mapping(body, "spec")
    yield from _counts(spec, "spec", "replicas", "minReadySeconds", "revisionHistoryLimit")
    yield from optional(
        spec, "podManagementPolicy", "spec", lambda v: one_of(v, ("OrderedReady", "Parallel"))
    )
    strategy = mapping(spec, "updateStrategy")
    yield from optional(
        strategy, "type", "spec.updateStrategy", lambda v: one_of(v, ("OnDelete", "RollingUpdate"))
    )
    rolling = mapping(strategy, "rollingUpdate")
    yield from optional(rolling, "partition", "spec.updateStrategy.rollingUpdate", non_negative)
    yield from optional(
        rolling, "maxUnavailable", "spec.updateStrategy.rollingUpdate", int_or_percent, _percent_max
    )
    retention = mapping(spec, "persistentVolumeClaimRetentionPolicy")
    for key in ("whenDeleted", "whenScaled"):
        yield from optional(
            retention,
            key,
            "spec.persistentVolumeClaimRetentionPolicy",
            lambda v: one_of(v, ("Retain", "Delete")),
        )
    yield from optional(mapping(spec, "ordinals"), "start", "spec.ordinals", non_negative)
    yield from optional(spec, "serviceName", "spec", dns_subdomain)
    yield from _selected(spec)
    for i, claim in items(spec, "volumeClaimTemplates"):
        yield from claim_spec(mapping(claim, "spec"), f"spec.volumeClaimTemplates[{i}].spec")
    yield from pods.template(mapping(spec, "template"), "spec.template", ALWAYS)


ACCESS_MODES = ("ReadWriteOnce", "ReadOnlyMany", "ReadWriteMany", "ReadWriteOncePod")


def claim_spec(spec: dict[str, Any], path: str) -> Findings:
    """A PersistentVolumeClaim's spec: access modes, a storage request above zero, enums."""
    yield from _access_modes(spec.get("accessModes") or [], f"{path}.accessModes")
    yield from optional(spec, "volumeMode", path, lambda v: one_of(v, ("Block", "Filesystem")))
    if spec.get("storageClassName"):
        yield from check(f"{path}.storageClassName", spec["storageClassName"], dns_subdomain)
    yield from _claim_resources(spec, path)
    yield from meta.selector(mapping(spec, "selector"), f"{path}.selector")


def _access_modes(modes: Any, path: str) -> Findings:
    if not modes:
        yield Finding(path, modes, "at least 1 access mode is required")
    for i, mode in enumerate(modes):
        yield from check(f"{path}[{i}]", mode, lambda v: one_of(v, ACCESS_MODES))
    if "ReadWriteOncePod" in modes and len(modes) > 1:
        yield Finding(path, modes, "may not use ReadWriteOncePod with other access modes")


def _claim_resources(spec: dict[str, Any], path: str) -> Findings:
    """Valid quantities, and a storage request above zero (unless the claim binds to a volume or
    fills from a data source, which size it)."""
    resources = mapping(spec, "resources")
    requests, found = quantities(mapping(resources, "requests"), f"{path}.resources.requests")
    yield from found
    yield from quantities(mapping(resources, "limits"), f"{path}.resources.limits")[1]
    storage = requests.get("storage")
    if storage is None and not spec.get("dataSourceRef") and not spec.get("volumeName"):
        yield Finding(
            f"{path}.resources.requests[storage]", None, "Required value: a claim requests its storage size"
        )
    elif storage is not None and storage <= 0:
        yield Finding(
            f"{path}.resources.requests[storage]",
            mapping(resources, "requests")["storage"],
            "must be greater than zero",
        )


def job_spec(spec: dict[str, Any], path: str) -> Findings:
    yield from _counts(
        spec,
        path,
        "parallelism",
        "completions",
        "backoffLimit",
        "ttlSecondsAfterFinished",
        "activeDeadlineSeconds",
    )
    yield from optional(spec, "completionMode", path, lambda v: one_of(v, ("NonIndexed", "Indexed")))
    if not meta.is_empty(spec.get("selector")) and spec.get("manualSelector") is not True:
        yield Finding(
            f"{path}.selector",
            spec["selector"],
            "`selector` not auto-generated: the API server adds its own controller-uid to a Job's selector unless manualSelector is true",
        )
    if spec.get("manualSelector") is True:
        yield from _selected(spec, path)
    template = mapping(spec, "template")
    restart = mapping(template, "spec").get("restartPolicy")
    if restart is None:
        yield Finding(
            f"{path}.template.spec.restartPolicy",
            restart,
            'Required value: supported values: "OnFailure", "Never"',
        )
    yield from pods.template(template, f"{path}.template", JOB_RESTART)


def job(body: dict[str, Any]) -> Findings:
    yield from job_spec(mapping(body, "spec"), "spec")


def cronjob(body: dict[str, Any]) -> Findings:
    spec = mapping(body, "spec")
    yield from check("spec.schedule", spec.get("schedule"), schedule_problem)
    if spec.get("timeZone") is not None:
        yield from check("spec.timeZone", spec["timeZone"], time_zone_problem)
    yield from optional(
        spec, "concurrencyPolicy", "spec", lambda v: one_of(v, ("Allow", "Forbid", "Replace"))
    )
    yield from _counts(
        spec, "spec", "startingDeadlineSeconds", "successfulJobsHistoryLimit", "failedJobsHistoryLimit"
    )
    job_template = mapping(spec, "jobTemplate")
    template_meta = mapping(job_template, "metadata")
    yield from meta.labels(mapping(template_meta, "labels"), "spec.jobTemplate.metadata.labels")
    yield from job_spec(mapping(job_template, "spec"), "spec.jobTemplate.spec")
