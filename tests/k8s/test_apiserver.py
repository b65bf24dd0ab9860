"""Kubernetes' own kinds judged as the API server judges them beyond their OpenAPI schemas: a
valid object of each kind passes, and each mistake is named by its field path, value and rule
(promoter/k8s/apiserver.py through promoter/k8s/core.py)."""

from __future__ import annotations

import copy
import re
from typing import Any

import pytest
from click.testing import CliRunner

from promoter.cli.main import cli
from promoter.k8s import core
from tests.support.helpers import ControlPlaneFactory

POD = {"containers": [{"name": "app", "image": "nginx:1.27"}]}
TEMPLATE = {"metadata": {"labels": {"app": "web"}}, "spec": POD}
SELECTOR = {"matchLabels": {"app": "web"}}


def obj(api_version: str, kind: str, spec: dict[str, Any] | None = None, **top: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "apiVersion": api_version,
        "kind": kind,
        "metadata": {"name": "web", "namespace": "team"},
    }
    if spec is not None:
        body["spec"] = spec
    return {**body, **top}


VALID = {
    "namespace": obj("v1", "Namespace")
    | {"metadata": {"name": "team", "labels": {"example.com/owner": "a-b"}}},
    "configmap": obj("v1", "ConfigMap", data={"A_KEY": "1", "b.c-d": "x"}, binaryData={"bin": "aGVsbG8="}),
    "secret-tls": obj("v1", "Secret", type="kubernetes.io/tls", data={"tls.crt": "YQ==", "tls.key": "Yg=="}),
    "secret-dockerconfig": obj(
        "v1",
        "Secret",
        type="kubernetes.io/dockerconfigjson",
        stringData={".dockerconfigjson": '{"auths": {}}'},
    ),
    "serviceaccount": obj("v1", "ServiceAccount"),
    "role": obj(
        "rbac.authorization.k8s.io/v1",
        "Role",
        rules=[{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get"]}],
    ),
    "clusterrole-urls": obj(
        "rbac.authorization.k8s.io/v1",
        "ClusterRole",
        rules=[{"nonResourceURLs": ["/healthz"], "verbs": ["get"]}],
    ),
    "rolebinding": obj(
        "rbac.authorization.k8s.io/v1",
        "RoleBinding",
        roleRef={"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "view"},
        subjects=[
            {"kind": "ServiceAccount", "name": "web"},
            {"kind": "Group", "name": "devs", "apiGroup": "rbac.authorization.k8s.io"},
            {"kind": "User", "name": "me"},  # apiGroup defaulted
        ],
    ),
    "resourcequota": obj(
        "v1",
        "ResourceQuota",
        {"hard": {"pods": "10", "requests.cpu": "500m", "limits.memory": "2Gi", "count/deployments.apps": 5}},
    ),
    "limitrange": obj(
        "v1",
        "LimitRange",
        {
            "limits": [
                {"type": "Container", "min": {"cpu": "100m"}, "default": {"cpu": "1"}, "max": {"cpu": "2"}}
            ]
        },
    ),
    "networkpolicy": obj(
        "networking.k8s.io/v1",
        "NetworkPolicy",
        {
            "podSelector": SELECTOR,
            "policyTypes": ["Ingress"],
            "ingress": [
                {
                    "from": [{"ipBlock": {"cidr": "10.0.0.0/16", "except": ["10.0.1.0/24"]}}],
                    "ports": [{"port": 80, "endPort": 90}],
                }
            ],
        },
    ),
    "service": obj(
        "v1",
        "Service",
        {"selector": {"app": "web"}, "ports": [{"name": "http", "port": 80, "targetPort": "http"}]},
    ),
    "deployment": obj(
        "apps/v1",
        "Deployment",
        {
            "replicas": 2,
            "selector": SELECTOR,
            "template": TEMPLATE,
            "strategy": {"rollingUpdate": {"maxSurge": "25%"}},
        },
    ),
    "statefulset": obj(
        "apps/v1", "StatefulSet", {"selector": SELECTOR, "template": TEMPLATE, "serviceName": "web"}
    ),
    "job": obj("batch/v1", "Job", {"template": {"spec": {**POD, "restartPolicy": "Never"}}}),
    "cronjob": obj(
        "batch/v1",
        "CronJob",
        {
            "schedule": "0 3 * * *",
            "timeZone": "Europe/Paris",
            "jobTemplate": {"spec": {"template": {"spec": {**POD, "restartPolicy": "OnFailure"}}}},
        },
    ),
    "pvc": obj(
        "v1",
        "PersistentVolumeClaim",
        {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}},
    ),
    "ingress": obj(
        "networking.k8s.io/v1",
        "Ingress",
        {
            "rules": [
                {
                    "host": "*.example.com",
                    "http": {
                        "paths": [
                            {
                                "path": "/",
                                "pathType": "Prefix",
                                "backend": {"service": {"name": "web", "port": {"number": 80}}},
                            }
                        ]
                    },
                }
            ]
        },
    ),
}


@pytest.mark.parametrize("name", list(VALID))
def test_valid_objects_pass(name: str) -> None:
    assert core.check(VALID[name]) is None


def changed(name: str, path: str, value: Any) -> dict[str, Any]:
    """VALID[name] with the field at ``path`` (dots; digits index lists) set to ``value``."""
    body = copy.deepcopy(VALID[name])
    *parents, last = path.split(".")
    node: Any = body
    for part in parents:
        node = node[int(part)] if part.isdigit() else node[part]
    node[int(last) if last.isdigit() else last] = value
    return body


C0 = "spec.template.spec.containers.0"
BAD = [
    (
        "resourcequota",
        "spec.hard.pods",
        "threethreethree",
        "spec.hard[pods]: 'threethreethree': is not a quantity",
    ),
    ("resourcequota", "spec.hard.pods", "2.5", "spec.hard[pods]: '2.5': must be an integer"),
    (
        "resourcequota",
        "spec.hard",
        {"requests.cpu": "-1"},
        "spec.hard[requests.cpu]: '-1': must be greater than or equal to 0",
    ),
    (
        "resourcequota",
        "spec.hard.cpus",
        "1",
        "spec.hard[cpus]: 'cpus': the resource name must be a standard resource for quota",
    ),
    (
        "resourcequota",
        "spec.scopes",
        ["Forever"],
        "spec.scopes[0]: 'Forever': supported values: \"Terminating\"",
    ),
    (
        "limitrange",
        "spec.limits.0.min",
        {"cpu": "3"},
        "spec.limits[0].min[cpu]: '3': must be less than or equal to default value 1",
    ),
    (
        "limitrange",
        "spec.limits.0.type",
        "Node",
        'supported values: "Pod", "Container", "PersistentVolumeClaim"',
    ),
    (
        "deployment",
        "spec.template.metadata.labels",
        {"app": "api"},
        "`selector` does not match template `labels`",
    ),
    ("deployment", "spec.selector", {}, "spec.selector: {}: empty selector is invalid"),
    (
        "deployment",
        f"{C0}.resources",
        {"requests": {"memory": "1Gb"}},
        f"{C0.replace('.0', '[0]')}.resources.requests[memory]: '1Gb'",
    ),
    (
        "deployment",
        f"{C0}.resources",
        {"requests": {"cpu": "2"}, "limits": {"cpu": "1"}},
        "must be less than or equal to cpu limit",
    ),
    ("deployment", f"{C0}.resources", {"limits": {"gpu": "1"}}, "must be a standard resource for containers"),
    (
        "deployment",
        f"{C0}.ports",
        [{"containerPort": 0}],
        "containerPort: 0: must be between 1 and 65535, inclusive",
    ),
    (
        "deployment",
        f"{C0}.ports",
        [{"containerPort": 80, "name": "http_port"}],
        "name: 'http_port': must be an IANA service name",
    ),
    (
        "deployment",
        f"{C0}.ports",
        [{"containerPort": 80, "protocol": "tcp"}],
        'protocol: \'tcp\': supported values: "SCTP", "TCP", "UDP"',
    ),
    (
        "deployment",
        f"{C0}.imagePullPolicy",
        "Sometimes",
        'supported values: "Always", "IfNotPresent", "Never"',
    ),
    ("deployment", f"{C0}.name", "App", "containers[0].name: 'App': must be a DNS-1123 label"),
    (
        "deployment",
        f"{C0}.env",
        [{"name": "A=B", "value": "1"}],
        "env[0].name: 'A=B': a valid environment variable name",
    ),
    (
        "deployment",
        f"{C0}.livenessProbe",
        {"httpGet": {"port": 70000}},
        "livenessProbe.httpGet.port: 70000: must be between 1 and 65535",
    ),
    (
        "deployment",
        f"{C0}.volumeMounts",
        [{"name": "data", "mountPath": "/d"}],
        "volumeMounts[0].name: 'data': Not found",
    ),
    (
        "deployment",
        "spec.template.spec.restartPolicy",
        "Never",
        "restartPolicy: 'Never': supported values: \"Always\"",
    ),
    (
        "deployment",
        "spec.strategy",
        {"rollingUpdate": {"maxSurge": "ten"}},
        "maxSurge: 'ten': must be an integer or a percentage",
    ),
    (
        "deployment",
        "spec.strategy",
        {"rollingUpdate": {"maxSurge": 0, "maxUnavailable": 0}},
        "may not be 0 when `maxSurge` is 0",
    ),
    (
        "deployment",
        "spec.template.metadata.labels",
        {"app": "web", "tier": "x" * 64},
        "must be a label value",
    ),
    (
        "deployment",
        "spec.template.spec.tolerations",
        [{"key": "k", "operator": "Maybe"}],
        "tolerations[0].operator: 'Maybe'",
    ),
    (
        "deployment",
        "spec.template.spec.affinity",
        {
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [
                        {"matchExpressions": [{"key": "zone", "operator": "Gt", "values": ["a"]}]}
                    ]
                }
            }
        },
        "must be one integer when `operator` is 'Gt' or 'Lt'",
    ),
    (
        "deployment",
        "spec.template.spec.affinity",
        {
            "podAntiAffinity": {
                "preferredDuringSchedulingIgnoredDuringExecution": [
                    {"weight": 0, "podAffinityTerm": {"topologyKey": "zone"}}
                ]
            }
        },
        "weight: 0: must be in the range 1-100",
    ),
    (
        "deployment",
        "spec.template.spec.affinity",
        {
            "podAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": [
                    {"labelSelector": SELECTOR, "topologyKey": ""}
                ]
            }
        },
        "topologyKey: '': Required value",
    ),
    (
        "deployment",
        "spec.template.spec.topologySpreadConstraints",
        [{"maxSkew": 0, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule"}],
        "maxSkew: 0: must be greater than zero",
    ),
    (
        "deployment",
        "spec.template.spec.topologySpreadConstraints",
        [{"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "Never"}],
        "whenUnsatisfiable: 'Never': supported values",
    ),
    (
        "deployment",
        "spec.template.spec.securityContext",
        {"runAsUser": -1},
        "securityContext.runAsUser: -1: must be between 0 and 2147483647",
    ),
    (
        "deployment",
        "spec.template.spec.securityContext",
        {"seccompProfile": {"type": "Localhost"}},
        "localhostProfile: None: Required value",
    ),
    (
        "deployment",
        "spec.template.spec.securityContext",
        {"fsGroupChangePolicy": "Sometimes"},
        "fsGroupChangePolicy: 'Sometimes': supported values",
    ),
    (
        "deployment",
        f"{C0}.securityContext",
        {"privileged": True, "allowPrivilegeEscalation": False},
        "cannot set `allowPrivilegeEscalation` to false and `privileged` to true",
    ),
    (
        "deployment",
        f"{C0}.livenessProbe",
        {"tcpSocket": {"port": 80}, "successThreshold": 2},
        "livenessProbe.successThreshold: 2: must be 1",
    ),
    (
        "deployment",
        f"{C0}.readinessProbe",
        {"tcpSocket": {"port": 80}, "exec": {"command": ["true"]}},
        "must specify exactly one handler",
    ),
    (
        "deployment",
        "spec.replicas",
        2**40,
        "spec.replicas: 1099511627776: must be at most 2147483647: the field is an int32",
    ),
    (
        "deployment",
        "spec.revisionHistoryLimit",
        -1,
        "spec.revisionHistoryLimit: -1: must be greater than or equal to 0",
    ),
    ("statefulset", "spec.podManagementPolicy", "Random", 'supported values: "OrderedReady", "Parallel"'),
    ("job", "spec.template.spec.restartPolicy", "Always", 'supported values: "OnFailure", "Never"'),
    ("job", "spec.selector", SELECTOR, "`selector` not auto-generated"),
    (
        "job",
        "metadata.name",
        "j" * 64,
        "metadata.name: '" + "j" * 64 + "': must be no more than 63 characters",
    ),
    (
        "cronjob",
        "spec.schedule",
        "every 5 minutes",
        "spec.schedule: 'every 5 minutes': expected exactly 5 fields",
    ),
    ("cronjob", "spec.timeZone", "Europe/Pariss", "spec.timeZone: 'Europe/Pariss': unknown time zone"),
    ("cronjob", "spec.concurrencyPolicy", "Sometimes", 'supported values: "Allow", "Forbid", "Replace"'),
    ("cronjob", "metadata.name", "c" * 53, "must be no more than 52 characters"),
    ("service", "spec.ports", [{"port": 80}, {"port": 443}], "spec.ports[0].name: None: Required value"),
    ("service", "spec.ports", [{"port": 0}], "spec.ports[0].port: 0: must be between 1 and 65535"),
    (
        "service",
        "spec.ports",
        [{"port": 80, "targetPort": "http-port-number-one"}],
        "targetPort: 'http-port-number-one': must be an IANA",
    ),
    (
        "service",
        "spec.ports",
        [{"port": 80, "nodePort": 30080}],
        "nodePort: 30080: may not be used when `type` is 'ClusterIP'",
    ),
    ("service", "spec.clusterIP", "10.0.0.300", "spec.clusterIP: '10.0.0.300': must be a valid IP address"),
    (
        "service",
        "spec.loadBalancerSourceRanges",
        ["10.0.0.0/8", "everywhere"],
        "spec.loadBalancerSourceRanges[1]: 'everywhere': must be a valid CIDR",
    ),
    ("service", "spec.ipFamilies", ["IPv5"], "spec.ipFamilies[0]: 'IPv5': supported values"),
    (
        "service",
        "spec.ports",
        [{"port": 80, "appProtocol": "http 2"}],
        "appProtocol: 'http 2': must be a qualified name",
    ),
    ("service", "spec.type", "Internal", "spec.type: 'Internal': supported values: \"ClusterIP\""),
    ("service", "spec.sessionAffinity", "Sticky", 'supported values: "ClientIP", "None"'),
    ("service", "metadata.name", "1web", "metadata.name: '1web': must be a DNS-1035 label"),
    ("service", "spec.selector", {"app": "web app"}, "spec.selector[app]: 'web app': must be a label value"),
    ("configmap", "data", {"bad key": "x"}, "data[bad key]: 'bad key': the key"),
    ("configmap", "binaryData", {"bin": "not base64!"}, "binaryData[bin]: 'not base64!': is not base64"),
    (
        "configmap",
        "data",
        {"k": "x" * (1024 * 1024 + 1)},
        "bytes': Too long: must have at most 1048576 bytes",
    ),
    (
        "secret-tls",
        "data",
        {"tls.crt": "YQ=="},
        "data[tls.key]: None: Required value: a Secret of type kubernetes.io/tls holds tls.key",
    ),
    ("secret-tls", "data", {"tls.crt": "YQ", "tls.key": "Yg=="}, "data[tls.crt]: 'YQ': is not base64"),
    (
        "secret-dockerconfig",
        "stringData",
        {".dockerconfigjson": "{auths"},
        "data[.dockerconfigjson]: '(the value)': must be valid JSON",
    ),
    (
        "namespace",
        "metadata.labels",
        {"owner": "-team"},
        "metadata.labels[owner]: '-team': must be a label value",
    ),
    (
        "namespace",
        "metadata.annotations",
        {"a/b/c": "x"},
        "metadata.annotations[a/b/c]: 'a/b/c': the key must be a qualified name",
    ),
    (
        "namespace",
        "metadata.annotations",
        {"big": "x" * (256 * 1024)},
        "may hold at most 262144 bytes of keys and values",
    ),
    ("namespace", "spec", {"finalizers": ["bad finalizer"]}, "spec.finalizers[0]: 'bad finalizer'"),
    ("serviceaccount", "metadata.name", "Web", "metadata.name: 'Web': must be a DNS-1123 subdomain"),
    (
        "role",
        "rules",
        [{"apiGroups": [""], "resources": ["pods"], "verbs": []}],
        "rules[0].verbs: []: Required value",
    ),
    (
        "role",
        "rules",
        [{"resources": ["pods"], "verbs": ["get"]}],
        "rules[0].apiGroups: None: Required value",
    ),
    (
        "role",
        "rules",
        [{"nonResourceURLs": ["/x"], "verbs": ["get"]}],
        "namespaced rules cannot apply to non-resource URLs",
    ),
    (
        "role",
        "metadata.name",
        "a/b",
        "metadata.name: 'a/b': may not be '.' or '..' and may not contain '/' or '%'",
    ),
    (
        "rolebinding",
        "roleRef.kind",
        "Group",
        'roleRef.kind: \'Group\': supported values: "Role", "ClusterRole"',
    ),
    ("rolebinding", "roleRef.apiGroup", "rbac", "roleRef.apiGroup: 'rbac': supported values"),
    (
        "rolebinding",
        "subjects",
        [{"kind": "User", "name": "me", "apiGroup": "rbac"}],
        "subjects[0].apiGroup: 'rbac': supported values",
    ),
    (
        "rolebinding",
        "subjects",
        [{"kind": "ServiceAccount", "name": "web", "apiGroup": "v1"}],
        "subjects[0].apiGroup: 'v1': a ServiceAccount subject has apiGroup \"\"",
    ),
    (
        "networkpolicy",
        "spec.policyTypes",
        ["Inbound"],
        'spec.policyTypes[0]: \'Inbound\': supported values: "Ingress", "Egress"',
    ),
    (
        "networkpolicy",
        "spec.ingress",
        [{"ports": [{"port": 90, "endPort": 80}]}],
        "endPort: 80: must be greater than or equal to `port`",
    ),
    (
        "networkpolicy",
        "spec.ingress",
        [{"from": [{"ipBlock": {"cidr": "10.0.0.300/16"}}]}],
        "cidr: '10.0.0.300/16': must be a valid CIDR",
    ),
    (
        "networkpolicy",
        "spec.ingress",
        [{"from": [{"ipBlock": {"cidr": "10.0.0.0/16", "except": ["10.1.0.0/24"]}}]}],
        "must be a strict subset",
    ),
    (
        "networkpolicy",
        "spec.podSelector",
        {"matchExpressions": [{"key": "app", "operator": "In"}]},
        "must be specified when `operator` is 'In'",
    ),
    (
        "networkpolicy",
        "spec.podSelector",
        {"matchExpressions": [{"key": "app", "operator": "Is"}]},
        "operator: 'Is': supported values",
    ),
    (
        "pvc",
        "spec.resources",
        {"requests": {"storage": "0"}},
        "spec.resources.requests[storage]: '0': must be greater than zero",
    ),
    ("pvc", "spec.resources", {"requests": {"storage": "ten gigs"}}, "is not a quantity"),
    (
        "pvc",
        "spec.accessModes",
        ["ReadWriteSometimes"],
        "spec.accessModes[0]: 'ReadWriteSometimes': supported values",
    ),
    ("pvc", "spec.accessModes", [], "at least 1 access mode is required"),
    (
        "pvc",
        "spec.storageClassName",
        "Fast_SSD",
        "spec.storageClassName: 'Fast_SSD': must be a DNS-1123 subdomain",
    ),
    (
        "ingress",
        "spec.rules.0.host",
        "10.0.0.1",
        "spec.rules[0].host: '10.0.0.1': must be a DNS name, not an IP address",
    ),
    ("ingress", "spec.rules.0.host", "Example.com", "must be a DNS-1123 subdomain"),
    ("ingress", "spec.rules.0.http.paths.0.pathType", "Regex", "pathType: 'Regex': supported values"),
    ("ingress", "spec.rules.0.http.paths.0.path", "api", "path: 'api': must be an absolute path"),
    (
        "ingress",
        "spec.rules.0.http.paths.0.backend",
        {"service": {"name": "web", "port": {}}},
        "must specify exactly one of `name` and `number`",
    ),
    (
        "ingress",
        "spec.rules.0.http.paths.0.backend",
        {"service": {"name": "web", "port": {"number": 0}}},
        "number: 0: must be between 1 and 65535",
    ),
]


@pytest.mark.parametrize(
    ("name", "path", "value", "says"), BAD, ids=[f"{b[0]}-{i}" for i, b in enumerate(BAD)]
)
def test_what_the_api_server_refuses(name: str, path: str, value: Any, says: str) -> None:
    problem = core.check(changed(name, path, value))
    assert problem is not None, f"{name} {path}={value!r} passed"
    assert says in problem, problem
    assert problem.endswith(f"(the Kubernetes 1.33 API server's validation of {VALID[name]['kind']})")


def test_the_issue_s_example_reads_as_one_line() -> None:
    body = changed("resourcequota", "spec.hard.pods", "threethreethree")
    assert core.check(body) == (
        "spec.hard[pods]: 'threethreethree': is not a quantity such as 500m, 2Gi or 3: quantities must match "
        "the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$' "
        "(the Kubernetes 1.33 API server's validation of ResourceQuota)"
    )


def test_a_selector_with_expressions_matches_as_the_api_server_matches() -> None:
    selector = {
        "matchLabels": {"app": "web"},
        "matchExpressions": [{"key": "tier", "operator": "NotIn", "values": ["db"]}],
    }
    assert core.check(changed("deployment", "spec.selector", selector)) is None
    selector["matchExpressions"] = [{"key": "tier", "operator": "Exists"}]
    assert "does not match template `labels`" in str(
        core.check(changed("deployment", "spec.selector", selector))
    )


def test_a_schema_error_still_comes_first() -> None:
    problem = core.check(changed("deployment", "spec.replicas", "two"))
    assert problem is not None and "the Kubernetes 1.33 schema of Deployment" in problem


def test_check_platform_judges_a_merged_tree_as_the_api_server_would(factory: ControlPlaneFactory) -> None:
    """The command gate finds in a hand-edited platform tree what the API server would refuse."""
    factory.create()
    quota = "apiVersion: v1\nkind: ResourceQuota\nmetadata: {name: default, namespace: team}\nspec: {hard: {pods: three}}\n"
    sha = factory.commit_platform(
        "dev",
        {
            ".promoter/promotion.yaml": "mainCommit: x\n",
            "small/app/namespace.yaml": f"apiVersion: v1\nkind: Namespace\nmetadata: {{name: team}}\n---\n{quota}",
        },
    )
    result = CliRunner().invoke(cli, ["check-platform", "--repo", str(factory.platform), "--ref", sha])
    assert result.exit_code == 1, result.output
    assert (
        "small/app/namespace.yaml: ResourceQuota/team/default: spec.hard[pods]: 'three': is not a quantity"
        in result.stderr
    )
    assert re.search(r"^1 problem in 2 manifests at ", result.stderr, re.M), result.stderr
