"""Bad input the Kubernetes API server would refuse, end to end: values that match every OpenAPI
schema but break a rule of the API server's own validation (quantities, ports, names, label
keys and values, enums, selectors, schedules, Secret types, RBAC) or a CEL rule of a Flux CRD.
Each ends as test_bad_input's cases do: ``validate`` and ``promote`` exit 2 with one line naming
the template, the assignment, the rendered file, the object, the field, the value and the rule,
and not a ref moves in either repo.
"""

from __future__ import annotations

import pytest

from tests.controlplane.test_bad_input import ANY_LINE, Case, _check, sub, template
from tests.support.helpers import ENV, ControlPlaneFactory

T = "templates/flux.yaml"
Q = "templates/quota.yaml"
DE = "dev:env.yaml"
META = "metadata: {name: '{{ name }}', namespace: '{{ namespace }}'}"
POD = "spec: {containers: [{name: app, image: 'nginx:1.27'"  # closed by each case: "}]}"


def quota_template(*lines: str) -> str:
    """A namespace template named quota: the Namespace, then a ResourceQuota whose ``spec`` is
    ``lines`` (as the example of docs/configuration.md writes it)."""
    head = (
        "apiVersion: promoter.dev/v1alpha1\nkind: Template\nmetadata: {name: quota}\nspec:\n  type: namespace\n"
        "  manifests:\n    - |\n      apiVersion: v1\n      kind: Namespace\n      metadata: {name: '{{ namespace }}'}\n"
        "    - |\n      apiVersion: v1\n      kind: ResourceQuota\n      metadata: {name: default, namespace: '{{ namespace }}'}\n"
    )
    return head + "".join(f"      {ln}\n" for ln in lines)


def with_config(line: str, namespace_service: bool = False) -> str:
    """The dev branch's env.yaml with ``line`` in its ConfigMap (and the quota template named)."""
    env = sub(ENV, "data: {REGION: here}", f"data: {{REGION: here, {line}}}")
    return (
        sub(env, "spec: {reconciler: flux}", "spec: {reconciler: flux, namespaceService: quota}")
        if namespace_service
        else env
    )


def deployment(*spec: str, labels: str = "{app: web}") -> str:
    return template(
        "apiVersion: apps/v1",
        "kind: Deployment",
        META,
        "spec:",
        "  selector: {matchLabels: {app: web}}",
        "  template:",
        f"    metadata: {{labels: {labels}}}",
        *(f"    {line}" for line in spec),
    )


def one(kind: str, api_version: str, *body: str) -> str:
    return template(f"apiVersion: {api_version}", f"kind: {kind}", META, *body)


CASES = [
    Case(
        "quota-pods-from-a-word",  # the example: config REPLICAS 'three' times 10
        Q,
        ANY_LINE,
        "spec.hard[pods]: 'threethreethreethreethreethreethreethreethreethree': is not a quantity such as 500m, 2Gi or 3",
        main={Q: quota_template("spec:", "  hard:", "    pods: {{ (config.REPLICAS * 10) | quote }}")},
        dev={"env.yaml": with_config("REPLICAS: three", namespace_service=True)},
    ),
    Case(
        "quota-pods-not-whole",
        Q,
        ANY_LINE,
        "spec.hard[pods]: '2.5': must be an integer",
        main={Q: quota_template("spec: {hard: {pods: '{{ config.PODS }}'}}")},
        dev={"env.yaml": with_config("PODS: '2.5'", namespace_service=True)},
    ),
    Case(
        "quota-unknown-resource",
        Q,
        ANY_LINE,
        "spec.hard[pod]: 'pod': the resource name must be a standard resource for quota",
        main={Q: quota_template("spec: {hard: {pod: '10'}}")},
        dev={"env.yaml": with_config("X: y", namespace_service=True)},
    ),
    Case(
        "container-memory-in-gigabytes",
        T,
        ANY_LINE,
        "spec.template.spec.containers[0].resources.limits[memory]: '1GB': is not a quantity",
        main={T: deployment(POD + ", resources: {limits: {memory: '{{ config.MEMORY }}'}}}]}")},
        dev={"env.yaml": with_config("MEMORY: 1GB")},
    ),
    Case(
        "container-requests-over-limits",
        T,
        ANY_LINE,
        "resources.requests[cpu]: '2': must be less than or equal to cpu limit",
        main={T: deployment(POD + ", resources: {requests: {cpu: '2'}, limits: {cpu: 500m}}}]}")},
    ),
    Case(
        "container-port-out-of-range",
        T,
        ANY_LINE,
        "containers[0].ports[0].containerPort: 80800: must be between 1 and 65535, inclusive",
        main={T: deployment(POD + ", ports: [{containerPort: {{ config.PORT }}}]}]}")},
        dev={"env.yaml": with_config("PORT: '80800'")},
    ),
    Case(
        "container-protocol-lowercase",
        T,
        ANY_LINE,
        'ports[0].protocol: \'tcp\': supported values: "SCTP", "TCP", "UDP"',
        main={T: deployment(POD + ", ports: [{containerPort: 80, protocol: tcp}]}]}")},
    ),
    Case(
        "deployment-selector-misses-its-pods",
        T,
        ANY_LINE,
        'spec.template.metadata.labels: {"app": "api"}: `selector` does not match template `labels`',
        main={T: deployment(POD + "}]}", labels="{app: api}")},
    ),
    Case(
        "pod-label-value-with-space",
        T,
        ANY_LINE,
        "spec.template.metadata.labels[team]: 'web team': must be a label value",
        main={T: deployment(POD + "}]}", labels="{app: web, team: '{{ config.TEAM }}'}")},
        dev={"env.yaml": with_config("TEAM: web team")},
    ),
    Case(
        "annotation-key-with-two-slashes",
        T,
        ANY_LINE,
        "metadata.annotations[example.com/a/b]: 'example.com/a/b': the key must be a qualified name",
        main={
            T: template(
                "apiVersion: v1",
                "kind: ConfigMap",
                "metadata: {name: '{{ name }}', namespace: '{{ namespace }}', annotations: {example.com/a/b: x}}",
            )
        },
    ),
    Case(
        "service-port-name-with-underscore",
        T,
        ANY_LINE,
        "spec.ports[0].name: 'http_api': must be a DNS-1123 label",
        main={T: one("Service", "v1", "spec: {selector: {app: web}, ports: [{name: http_api, port: 80}]}")},
    ),
    Case(
        "service-node-port-on-cluster-ip",
        T,
        ANY_LINE,
        "spec.ports[0].nodePort: 30080: may not be used when `type` is 'ClusterIP'",
        main={T: one("Service", "v1", "spec: {ports: [{port: 80, nodePort: 30080}]}")},
    ),
    Case(
        "cronjob-schedule-four-fields",
        T,
        ANY_LINE,
        "spec.schedule: '*/5 * * *': expected exactly 5 fields",
        main={
            T: one(
                "CronJob",
                "batch/v1",
                "spec:",
                "  schedule: '{{ config.SCHEDULE }}'",
                "  jobTemplate: {spec: {template: {spec: {restartPolicy: Never, containers: [{name: a, image: b}]}}}}",
            )
        },
        dev={"env.yaml": with_config("SCHEDULE: '*/5 * * *'")},
    ),
    Case(
        "cronjob-time-zone-unknown",
        T,
        ANY_LINE,
        "spec.timeZone: 'Europe/Pariss': unknown time zone",
        main={
            T: one(
                "CronJob",
                "batch/v1",
                "spec:",
                "  schedule: '0 3 * * *'",
                "  timeZone: Europe/Pariss",
                "  jobTemplate: {spec: {template: {spec: {restartPolicy: Never, containers: [{name: a, image: b}]}}}}",
            )
        },
    ),
    Case(
        "job-restarts-always",
        T,
        ANY_LINE,
        'spec.template.spec.restartPolicy: \'Always\': supported values: "OnFailure", "Never"',
        main={
            T: one(
                "Job",
                "batch/v1",
                "spec: {template: {spec: {restartPolicy: Always, containers: [{name: a, image: b}]}}}",
            )
        },
    ),
    Case(
        "claim-access-mode-unknown",
        T,
        ANY_LINE,
        "spec.accessModes[0]: 'ReadWriteAll': supported values",
        main={
            T: one(
                "PersistentVolumeClaim",
                "v1",
                "spec: {accessModes: [ReadWriteAll], resources: {requests: {storage: 1Gi}}}",
            )
        },
    ),
    Case(
        "ingress-host-is-an-ip",
        T,
        ANY_LINE,
        "spec.rules[0].host: '10.0.0.1': must be a DNS name, not an IP address",
        main={
            T: one(
                "Ingress",
                "networking.k8s.io/v1",
                "spec: {rules: [{host: 10.0.0.1, http: {paths: [{path: /, pathType: Prefix,",
                "  backend: {service: {name: web, port: {number: 80}}}}]}}]}",
            )
        },
    ),
    Case(
        "networkpolicy-cidr-invalid",
        T,
        ANY_LINE,
        "spec.egress[0].to[0].ipBlock.cidr: '10.0.0.0/33': must be a valid CIDR",
        main={
            T: one(
                "NetworkPolicy",
                "networking.k8s.io/v1",
                "spec: {podSelector: {}, egress: [{to: [{ipBlock: {cidr: 10.0.0.0/33}}]}]}",
            )
        },
    ),
    Case(
        "rolebinding-to-a-group",
        T,
        ANY_LINE,
        'roleRef.kind: \'Group\': supported values: "Role", "ClusterRole"',
        main={
            T: one(
                "RoleBinding",
                "rbac.authorization.k8s.io/v1",
                "roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Group, name: devs}",
            )
        },
    ),
    Case(
        "secret-tls-without-key",
        T,
        ANY_LINE,
        "data[tls.key]: None: Required value: a Secret of type kubernetes.io/tls holds tls.key",
        main={T: one("Secret", "v1", "type: kubernetes.io/tls", "stringData: {tls.crt: x}")},
    ),
    Case(
        "configmap-binary-data-not-base64",
        T,
        ANY_LINE,
        "binaryData[logo]: 'not base64!': is not base64",
        main={T: one("ConfigMap", "v1", "binaryData: {logo: 'not base64!'}")},
    ),
    Case(
        "helmrelease-retry-interval-without-retry",  # a CEL rule of the HelmRelease CRD
        T,
        ANY_LINE,
        ".retryInterval can only be set when .name is 'RetryOnFailure' (the rule",
        main={
            T: one(
                "HelmRelease",
                "helm.toolkit.fluxcd.io/v2",
                "spec: {interval: 5m, chartRef: {kind: OCIRepository, name: x},",
                "  upgrade: {strategy: {name: RemediateOnFailure, retryInterval: 1m}}}",
            )
        },
    ),
    Case(
        "gitrepository-service-account-without-provider",  # a CEL rule of the GitRepository CRD
        T,
        ANY_LINE,
        "serviceAccountName can only be set when provider is 'azure' or 'aws'",
        main={
            T: one(
                "GitRepository",
                "source.toolkit.fluxcd.io/v1",
                "spec: {interval: 5m, url: 'https://example.com/x', serviceAccountName: reader}",
            )
        },
    ),
    Case(
        "kustomization-interval-not-a-go-duration",
        T,
        ANY_LINE,
        "spec.interval: '5 minutes' does not match '^([0-9]+(\\\\.[0-9]+)?(ms|s|m|h))+$'",
        main={
            T: one(
                "Kustomization",
                "kustomize.toolkit.fluxcd.io/v1",
                "spec: {interval: '{{ config.INTERVAL }}', prune: true, sourceRef: {kind: GitRepository, name: x}}",
            )
        },
        dev={"env.yaml": with_config("INTERVAL: 5 minutes")},
    ),
]


@pytest.mark.parametrize("case", [pytest.param(c, id=c.id) for c in CASES])
def test_what_the_api_server_refuses_is_bad_input(factory: ControlPlaneFactory, case: Case) -> None:
    _check(factory, case)


def test_case_ids_are_unique() -> None:
    ids = [c.id for c in CASES]
    assert len(ids) == len(set(ids))
