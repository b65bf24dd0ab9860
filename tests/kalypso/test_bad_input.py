"""Bad Kalypso input, end to end: each case is the small Kalypso world (tests/support/kalypso_world.py)
with one mistake; ``promoter render`` and ``promoter validate`` must exit 2 with one
``error: <file>:<line>: ...`` line and write nothing."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from click.testing import CliRunner

from promoter.cli.main import cli
from tests.support.kalypso_world import (
    API,
    ENVIRONMENT,
    OLD_RECONCILER,
    cluster_type,
    config,
    registration,
    target,
    workload,
    world,
)

Files = dict[str, "str | None"]


@dataclass(frozen=True)
class Case:
    id: str
    file: str
    line: int | None  # None: the message names no line
    says: str
    main: Files = field(default_factory=dict)
    dev: Files = field(default_factory=dict)
    repos: dict[str, dict[str, str]] = field(default_factory=dict)


def sub(text: str, old: str, new: str) -> str:
    assert text.count(old) == 1, old
    return text.replace(old, new)


BAD_TEMPLATE = API + (
    "kind: Template\nmetadata: {name: flux}\nspec:\n  type: reconciler\n  manifests:\n"
    "    - |\n      kind: X\n      metadata:\n        name: {{ .Nope }}\n"
)
CASES = [
    Case(
        "unknown-kalypso-kind",
        "workloads/app.yaml",
        2,
        "unknown Kalypso kind 'WorkloadRegistrations'",
        main={
            "workloads/app.yaml": sub(
                registration("app", "app-team"), "WorkloadRegistration", "WorkloadRegistrations"
            )
        },
    ),
    Case(
        "registration-unknown-field",
        "workloads/app.yaml",
        7,
        "unknown field 'spec.owner'",
        main={"workloads/app.yaml": registration("app", "app-team") + "  owner: me\n"},
    ),
    Case(
        "registration-without-workspace",
        "workloads/app.yaml",
        5,
        "missing required field 'spec.workspace'",
        main={"workloads/app.yaml": sub(registration("app", "app-team"), "  workspace: app-team\n", "")},
    ),
    Case(
        "registration-remote-helper",
        "workloads/app.yaml",
        5,
        "remote-helper",
        main={"workloads/app.yaml": sub(registration("app", "t"), "https://example.com/app", "ext::sh -c x")},
    ),
    Case(
        "workload-repo-unreachable",
        "workloads/app.yaml",
        5,
        "cannot fetch branch 'main' of /nonexistent/kalypso-repo: '/nonexistent/kalypso-repo' does not appear",
        main={
            "workloads/app.yaml": sub(
                registration("app", "t"), "https://example.com/app", "/nonexistent/kalypso-repo"
            )
        },
    ),
    Case(
        "workload-repo-without-workload",
        "workloads/app.yaml",
        5,
        "no Workload in https://example.com/app:.",
        repos={"app": {"README.yaml": "just: yaml\n"}},
    ),
    Case(
        "workload-unknown-field",
        "https://example.com/app:workload.yaml",
        10,
        "unknown field 'spec.deploymentTargets[0].owner'",
        repos={"app": {"workload.yaml": workload("app", "{}", target("web", "{}") + "      owner: me\n")}},
    ),
    Case(
        "workload-target-twice",
        "https://example.com/svc:w/svc.yaml",
        6,
        "deployment target 'app-web' is defined twice",
        repos={"svc": {"w/svc.yaml": workload("app", "{}", target("web", "{}"))}},
    ),
    Case(
        "cluster-type-on-main",
        "ct.yaml",
        2,
        "kind ClusterType belongs on an environment branch, not on main",
        main={"ct.yaml": cluster_type("x", "{}")},
    ),
    Case(
        "template-on-dev",
        "dev:templates/flux.yaml",
        2,
        "kind Template belongs on main, not on environment branch 'dev'",
        dev={"templates/flux.yaml": OLD_RECONCILER},
    ),
    Case(
        "base-repo-commit-not-a-sha",
        "dev:base-repo.yaml",
        4,
        "spec.commit: must be a commit sha, got 'latest'",
        dev={
            "base-repo.yaml": API
            + "kind: BaseRepo\nmetadata: {name: main}\nspec: {repo: x, commit: latest}\n"
        },
    ),
    Case(
        "base-repo-commit-missing",
        "dev:base-repo.yaml",
        1,
        "spec.commit: main commit 0123456789abcdef0123456789abcdef01234567 is not in the control-plane repo",
        dev={
            "base-repo.yaml": API
            + "kind: BaseRepo\nmetadata: {name: main}\nspec: {repo: x, commit: 0123456789abcdef0123456789abcdef01234567}\n"
        },
    ),
    Case(
        "two-gitops-repos",
        "dev:gitops-repo.yaml",
        1,
        "a second GitOpsRepo (the first is at dev:gitops-repo-2.yaml:1)",
        dev={
            "gitops-repo-2.yaml": API
            + "kind: GitOpsRepo\nmetadata: {name: again}\nspec: {repo: x, branch: dev}\n"
        },
    ),
    Case(
        "config-value-not-a-string",
        "dev:configs/c.yaml",
        6,
        "data.REPLICAS: a ConfigMap's values are strings (quote it)",
        dev={"configs/c.yaml": config("c-all", '{platform-config: "true"}', "{REPLICAS: 3}")},
    ),
    Case(
        "cluster-type-names-a-missing-template",
        "dev:cts/big.yaml",
        1,
        "spec.reconciler: ClusterType 'big' names template 'nope', which main does not have",
        dev={"cts/big.yaml": cluster_type("big", "{size: large}", "nope")},
    ),
    Case(
        "namespace-service-of-the-wrong-type",
        "dev:cts/big.yaml",
        1,
        "spec.namespaceService: template 'flux' is of type reconciler, not namespace",
        dev={
            "cts/big.yaml": sub(
                cluster_type("big", "{size: large}"), "namespaceService: ns", "namespaceService: flux"
            )
        },
    ),
    Case(
        "mapping-template-unknown-function",
        "templates/flux.yaml",
        10,
        'template flux, manifest 1, spec.repo: template: template:1: function "nofunc" not defined',
        main={"templates/flux.yaml": sub(OLD_RECONCILER, "'{{ .Repo }}'", "'{{ nofunc .Repo }}'")},
    ),
    Case(
        "string-template-unknown-field",
        "templates/flux.yaml",
        10,
        'template flux, manifest 1, for dev/big/app-web: template: template:3:11: executing "template" at <.Nope>: '
        "can't evaluate field Nope in type scheduler.dataType",
        main={"templates/flux.yaml": BAD_TEMPLATE},
    ),
    Case(
        "string-template-does-not-parse",
        "templates/flux.yaml",
        10,
        "template flux, manifest 1: template: template:3: unclosed action",
        main={"templates/flux.yaml": sub(BAD_TEMPLATE, "{{ .Nope }}", "{{ .Nope")},
    ),
    Case(
        "string-template-renders-no-yaml",
        "templates/flux.yaml",
        8,
        "template flux, manifest 1, for dev/big/app-web: the output is not YAML (its line 4:",
        main={"templates/flux.yaml": sub(BAD_TEMPLATE, "{{ .Nope }}", "[{{ .Namespace }}")},
    ),
    Case(
        "environment-branch-missing",
        ".environments/dev.yaml",
        5,
        "spec.controlPlane.branch: environment 'dev' names branch 'nope'",
        main={".environments/dev.yaml": sub(ENVIRONMENT, "branch: dev", "branch: nope")},
    ),
    Case(
        "environment-path-escapes",
        ".environments/dev.yaml",
        5,
        "invalid path '../x': '..' is not allowed",
        main={".environments/dev.yaml": sub(ENVIRONMENT, "path: .}", "path: ../x}")},
    ),
    Case(
        "yaml-syntax",
        "workloads/svc.yaml",
        3,
        "",
        main={"workloads/svc.yaml": API + "kind: WorkloadRegistration\nmetadata: {name: [svc}\n"},
    ),
]


@pytest.mark.parametrize("case", [pytest.param(c, id=c.id) for c in CASES])
def test_bad_kalypso_input(tmp_path: Path, case: Case) -> None:
    cp = world(tmp_path, dev=dict(case.dev), main=dict(case.main), repos=case.repos)
    out = tmp_path / "out"
    for args in (["render", "--env", "dev", "--out", str(out)], ["validate"]):
        result = CliRunner().invoke(cli, [args[0], "--control-plane", str(cp), *args[1:]])
        assert result.exit_code == 2, result.output
        lines = result.output.strip().splitlines()
        assert len(lines) == 1, result.output
        where = f"{case.file}:{case.line}" if case.line else f"{case.file}"
        assert re.match(rf"error: {re.escape(where)}(:[0-9]+)?: ", lines[0]), lines[0]  # a column may follow
        assert case.says in lines[0]
        assert not out.exists()


def test_case_ids_are_unique() -> None:
    assert len({c.id for c in CASES}) == len(CASES)
