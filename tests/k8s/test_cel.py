"""The CRDs' CEL rules (x-kubernetes-validations), evaluated with CEL's semantics for the part of
CEL they are written in; every rule of the shipped CRDs compiles."""

from __future__ import annotations

import pytest

from promoter.k8s import cel, crds
from promoter.k8s.manifests import Doc, check_document


def test_every_rule_of_the_shipped_crds_is_evaluated() -> None:
    assert crds.skipped() == ()
    loaded, _ = crds._loaded()
    assert sum(len(rules) for rules in loaded.values()) >= 15  # HelmRelease 5, Bucket 7, ...


@pytest.mark.parametrize(
    ("rule", "value", "holds"),
    [
        ("has(self.a) || has(self.b)", {"a": 1}, True),
        ("has(self.a) || has(self.b)", {}, False),
        ("!has(self.a) || !has(self.b)", {"a": 1, "b": 2}, False),
        ("self.p == 'aws' || !has(self.s)", {"s": 1}, False),  # self.p unset: an error, not decided
        ("self.p == 'aws' || !has(self.s)", {}, True),  # the error absorbed by the true side
        ("!has(self.s) || self.s.p != 'aws' || !has(self.s.r)", {"s": {"p": "aws", "r": 1}}, False),
        ("(has(self.a) && !has(self.b)) || (!has(self.a) && has(self.b))", {"b": 1}, True),
        ('self.n == "x" && self.m != 2', {"n": "x", "m": 3}, True),
        ("self.k == true", {"k": True}, True),
    ],
)
def test_rules_evaluate_as_cel_does(rule: str, value: dict[str, object], holds: bool) -> None:
    assert cel.holds(cel.compile_rule(rule), value, {}) is holds


def test_defaults_are_applied_before_a_rule_is_evaluated() -> None:
    rule = cel.compile_rule("self.provider == 'generic' || !has(self.sts)")
    assert cel.holds(rule, {"sts": {}}, {"provider": "generic"})
    assert not cel.holds(rule, {"sts": {}, "provider": "gcp"}, {"provider": "generic"})


@pytest.mark.parametrize(
    "rule", ["self.items.all(i, i > 0)", "size(self.a) > 1", "self.a + 1 == 2", "self.a ="]
)
def test_more_of_cel_than_the_crds_use_does_not_compile(rule: str) -> None:
    with pytest.raises(cel.Unsupported):
        cel.compile_rule(rule)


def _problem(body: dict[str, object]) -> str:
    problems = check_document(Doc("small/app/reconciler.yaml", body))
    assert len(problems) == 1, problems
    return str(problems[0])


def test_a_helmrelease_strategy_rule_names_the_object_and_the_rule() -> None:
    body = {
        "apiVersion": "helm.toolkit.fluxcd.io/v2",
        "kind": "HelmRelease",
        "metadata": {"name": "app", "namespace": "team"},
        "spec": {
            "interval": "5m",
            "chartRef": {"kind": "OCIRepository", "name": "app"},
            "upgrade": {"strategy": {"name": "RemediateOnFailure", "retryInterval": "1m"}},
        },
    }
    assert _problem(body) == (
        "small/app/reconciler.yaml: HelmRelease/team/app: spec.upgrade.strategy: "
        '{"name": "RemediateOnFailure", "retryInterval": "1m"}: '
        ".retryInterval can only be set when .name is 'RetryOnFailure' "
        "(the rule !has(self.retryInterval) || self.name == 'RetryOnFailure') (the API server's validation of HelmRelease)"
    )


def test_a_gitrepository_service_account_needs_a_cloud_provider() -> None:
    body = {
        "apiVersion": "source.toolkit.fluxcd.io/v1",
        "kind": "GitRepository",
        "metadata": {"name": "app", "namespace": "team"},
        "spec": {"interval": "5m", "url": "https://example.com/x", "serviceAccountName": "sa"},
    }
    assert "serviceAccountName can only be set when provider is 'azure' or 'aws'" in _problem(body)
    body["spec"]["provider"] = "azure"  # type: ignore[index]
    assert check_document(Doc("small/app/reconciler.yaml", body)) == []


def test_a_custom_resource_s_metadata_is_checked_as_every_object_s() -> None:
    body = {
        "apiVersion": "kustomize.toolkit.fluxcd.io/v1",
        "kind": "Kustomization",
        "metadata": {"name": "app", "namespace": "team", "annotations": {"-bad/key": "x"}},
        "spec": {"interval": "5m", "prune": True, "sourceRef": {"kind": "GitRepository", "name": "app"}},
    }
    assert (
        "metadata.annotations[-bad/key]: '-bad/key': the key must be a qualified name: its prefix before '/' must be a DNS-1123 subdomain"
        in _problem(body)
    )
