"""The data Kalypso's current scheduler gives its templates (``scheduler/templater.go``
``dataType``, ``newData``), for promoter's own Templates written in Go ``text/template``
(``spec.language: gotemplate``) and for Kalypso's control planes."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from promoter.gotemplate.values import StringMap, Struct, sprint


class SchedulerData(Struct):
    """Kalypso's ``dataType``: naming another field is an error, as in Go."""

    type_name = "scheduler.dataType"


def scheduler_data(
    *,
    name: str,
    namespace: str,
    environment: str,
    workspace: str,
    workload: str,
    labels: Mapping[str, str],
    manifests: Mapping[str, Any],
    cluster_type: str,
    config: Mapping[str, Any],
) -> SchedulerData:
    """``.DeploymentTargetName``, ``.Namespace``, ``.Environment``, ``.Workspace``,
    ``.Workload``, ``.Labels`` and ``.Manifests`` (``map[string]string``: a missing key is
    ``""``), ``.ClusterType``, ``.ConfigData`` (``map[string]interface{}``: a missing key is no
    value)."""
    return SchedulerData(
        DeploymentTargetName=name,
        Namespace=namespace,
        Environment=environment,
        Workspace=workspace,
        Workload=workload,
        Labels=StringMap(labels),
        Manifests=StringMap({str(k): sprint(v) for k, v in manifests.items()}),
        ClusterType=cluster_type,
        ConfigData=dict(config),
    )
