"""Bad input, end to end: every case runs the real CLI (``validate`` and ``promote``) on a control
plane with one mistake in it and expects exit 2, one ``error: <file>:<line>: ...`` line, and not a
single ref moved in either repo (DESIGN sections 3, 4 and 9: nothing is pushed when input is bad).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field

import pytest
from click.testing import CliRunner

from promoter.cli.main import cli
from promoter.controlplane.yamlfile import MAX_FILE_BYTES
from promoter.rendering import sandbox
from tests.support import forkserver
from tests.support.helpers import ENV, PIPELINE, WORKLOAD, ControlPlaneFactory, dedent

ENVS = ("dev", "qa", "prod")
ANY_LINE = -1  # the message names some line, which one depends on the parser

Files = dict[str, "str | bytes | None"]


@dataclass(frozen=True)
class Case:
    """One bad control plane: overrides of the valid default files (None deletes a file)."""

    id: str
    file: str  # the file the message must name, as it appears after "error: "
    line: int | None  # its line, None when the message has no line, ANY_LINE for any line
    says: str  # a fragment of the message
    main: Files = field(default_factory=dict)
    dev: Files = field(default_factory=dict)  # overrides on the dev branch only
    prod: Files = field(default_factory=dict)  # overrides on the prod branch only
    isolated: bool = False  # run the CLI in a subprocess: the failure can take the interpreter down
    render_seconds: float | None = None  # a shorter limit for one render than the real 5 s


def sub(text: str, old: str, new: str) -> str:
    """``text`` with ``old`` (which must occur exactly once) replaced by ``new``."""
    assert text.count(old) == 1, f"{old!r} occurs {text.count(old)} times"
    return text.replace(old, new)


def dev_env(*lines: str) -> str:
    """The default Pipeline with ``lines`` added to the dev entry (the first is line 8)."""
    return sub(PIPELINE, "    - name: dev\n", "    - name: dev\n" + "".join(f"      {ln}\n" for ln in lines))


def workload(name: str = "app", *, env: str = "dev", target: str = "t") -> str:
    return dedent(
        f"""
        apiVersion: promoter.dev/v1alpha1
        kind: Workload
        metadata: {{name: {name}}}
        spec:
          workspace: team
          deploymentTargets:
            - {{name: {target}, environment: {env}, manifests: {{repo: https://example.com/x}}}}
        """
    )


def cluster_type(spec: str = "{reconciler: flux}", name: str = "small") -> str:
    return f"apiVersion: promoter.dev/v1alpha1\nkind: ClusterType\nmetadata: {{name: {name}}}\nspec: {spec}\n"


def template(*lines: str, name: str = "flux", kind: str = "reconciler") -> str:
    """A Template with one block-scalar manifest whose first line is line 8 of the file."""
    head = f"apiVersion: promoter.dev/v1alpha1\nkind: Template\nmetadata: {{name: {name}}}\nspec:\n  type: {kind}\n  manifests:\n    - |\n"
    return head + "".join(f"      {ln}\n" for ln in lines)


def schema(body: str) -> str:
    return f"apiVersion: promoter.dev/v1alpha1\nkind: ConfigSchema\nmetadata: {{name: base}}\nspec:\n  schema: {body}\n"


def policy(spec: str) -> str:
    return (
        f"apiVersion: promoter.dev/v1alpha1\nkind: SchedulingPolicy\nmetadata: {{name: more}}\nspec:\n{spec}"
    )


def deep_aliases() -> str:
    """Each anchor 60 levels deep, each the innermost item of the next: deep only once expanded."""
    lines = ["a0: &a0 " + "[" * 60 + "x" + "]" * 60]
    lines += [f"a{i}: &a{i} " + "[" * 60 + f"*a{i - 1}" + "]" * 60 for i in range(1, 5)]
    return "\n".join(lines) + "\n"


def alias_bomb() -> str:
    lines = ['a: &a ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    for prev, name in zip("abcdefgh", "bcdefghi", strict=True):
        lines.append(f"{name}: &{name} [{', '.join([f'*{prev}'] * 9)}]")
    return "\n".join(lines) + "\n"


W = "workloads/app.yaml"
P = "promoter.yaml"
E = "env.yaml"
DE = "dev:env.yaml"  # how messages name a file of the dev branch
T = "templates/flux.yaml"
S = "schemas/base.yaml"

CASES = [
    # ------------------------------------------------------------ YAML itself
    Case(
        "yaml-bad-indentation",
        W,
        5,
        "wrong indentation: this line does not line up",
        main={W: "apiVersion: promoter.dev/v1alpha1\nkind: Workload\nmetadata:\n  name: app\n labels: {}\n"},
    ),
    Case(
        "yaml-tab-indentation",
        W,
        5,
        "a tab character: YAML indents with spaces only",
        main={W: sub(WORKLOAD, "  workspace: team", "\tworkspace: team")},
    ),
    Case(
        "yaml-unclosed-quote",
        W,
        ANY_LINE,
        "a quoted string is never closed (opened at line 3)",
        main={W: sub(WORKLOAD, "{name: app,", '{name: "app,')},
    ),
    Case(
        "yaml-unclosed-flow-sequence",
        W,
        ANY_LINE,
        "list or mapping is never closed (opened at line 10)",
        main={W: WORKLOAD + "extra: [1, 2\n"},
    ),
    Case(
        "yaml-error-on-env-branch",
        DE,
        14,
        "'}' closes nothing: a bracket too many",
        dev={E: sub(ENV, "data: {REGION: here}", "data: {REGION: here}}")},
    ),
    Case(
        "duplicate-key",
        W,
        10,
        "duplicate key 'kind' (first at line 2)",
        main={W: WORKLOAD + "kind: Workload\n"},
    ),
    Case(
        "duplicate-key-in-flow-mapping",
        W,
        3,
        "duplicate key 'name'",
        main={W: sub(WORKLOAD, "{name: app,", "{name: app, name: app2,")},
    ),
    Case(
        "duplicate-key-in-configmap-data",
        DE,
        14,
        "duplicate key 'REGION'",
        dev={E: sub(ENV, "{REGION: here}", "{REGION: here, REGION: there}")},
    ),
    Case(
        "yaml-merge-key",
        W,
        12,
        "merge keys",
        main={W: WORKLOAD + "base: &base {a: 1}\nother:\n  <<: *base\n"},
    ),
    Case("yaml-complex-key", W, 10, "plain scalars", main={W: WORKLOAD + "? [a, b]\n: c\n"}),
    Case(
        "yaml-python-tag-on-sequence",
        W,
        4,
        "unsupported YAML tag !!python/object/apply:os.system on a sequence",
        main={W: sub(WORKLOAD, "spec:\n", 'spec: !!python/object/apply:os.system ["true"]\nx:\n')},
    ),
    Case(
        "yaml-python-tag-on-scalar",
        W,
        5,
        "invalid YAML: could not determine a constructor",
        main={W: sub(WORKLOAD, "workspace: team", "workspace: !!python/name:os.system ''")},
    ),
    Case(
        "yaml-set-tag",
        W,
        3,
        "unsupported YAML tag !!set on a mapping",
        main={W: sub(WORKLOAD, "labels: {type: application}", "labels: !!set {application}")},
    ),
    Case(
        "yaml-explicit-int-tag",
        W,
        5,
        "invalid !!int value 'team'",
        main={W: sub(WORKLOAD, "workspace: team", "workspace: !!int team")},
    ),
    Case(
        "yaml-impossible-date",
        DE,
        14,
        "invalid !!timestamp value '2024-02-30' (day is out of range for month)",
        dev={E: sub(ENV, "{REGION: here}", "{REGION: here, UNTIL: 2024-02-30}")},
    ),
    Case(
        "yaml-deep-flow-nesting",
        "workloads/deep.yaml",
        1,
        "nested more than 100 levels deep",
        main={"workloads/deep.yaml": "a: " + "[" * 100_000 + "]" * 100_000 + "\n"},
    ),
    Case(
        "yaml-deep-block-nesting",
        "workloads/deep.yaml",
        101,
        "nested more than 100 levels deep",
        main={"workloads/deep.yaml": "".join(f"{' ' * i}k{i}:\n" for i in range(150)) + " " * 150 + "v\n"},
    ),
    Case(
        "yaml-deep-nesting-through-aliases",
        "workloads/deep.yaml",
        ANY_LINE,
        "nested more than 100 levels deep",
        main={"workloads/deep.yaml": deep_aliases()},
    ),
    Case(
        "alias-bomb",
        "workloads/bomb.yaml",
        ANY_LINE,
        "alias bomb",
        main={"workloads/bomb.yaml": alias_bomb()},
    ),
    Case(
        "oversized-file",
        "workloads/big.yaml",
        None,
        f"over the limit of {MAX_FILE_BYTES}",
        main={"workloads/big.yaml": "# " + "x" * MAX_FILE_BYTES + "\n"},
    ),
    Case(
        "non-utf8-bytes",
        W,
        3,
        "not valid UTF-8",
        main={W: sub(WORKLOAD, "application", "appl\xefcation").encode("latin-1")},
    ),
    Case(
        "non-utf8-on-env-branch",
        DE,
        14,
        "not valid UTF-8",
        dev={E: sub(ENV, "here", "Z\xfcrich").encode("latin-1")},
    ),
    Case("nul-byte", W, 5, "NUL", main={W: sub(WORKLOAD, "workspace: team", "workspace: te\x00am").encode()}),
    # ------------------------------------------------------------ wrong types
    Case(
        "list-field-is-string",
        W,
        6,
        "spec.deploymentTargets: must be a list, got a string",
        main={W: WORKLOAD.split("    - ")[0].replace("deploymentTargets:", "deploymentTargets: t")},
    ),
    Case(
        "label-value-is-int",
        W,
        3,
        "label 'type' must be a string",
        main={W: sub(WORKLOAD, "{type: application}", "{type: 1}")},
    ),
    Case(
        "label-value-is-bool",
        DE,
        3,
        "label 'size' must be a string",
        dev={E: sub(ENV, "{size: small}", "{size: yes}")},
    ),
    Case(
        "metadata-is-list",
        W,
        3,
        "metadata: must be a mapping, got a list",
        main={W: sub(WORKLOAD, "metadata: {name: app, labels: {type: application}}", "metadata: [app]")},
    ),
    Case(
        "spec-is-string",
        W,
        4,
        "spec: must be a mapping, got a string",
        main={W: WORKLOAD.split("spec:")[0] + "spec: none\n"},
    ),
    Case(
        "environments-is-mapping",
        P,
        6,
        "spec.environments: must be a list, got a mapping",
        main={P: PIPELINE.split("    - name: dev")[0] + "      dev: {}\n"},
    ),
    Case(
        "workspace-is-int",
        W,
        5,
        "spec.workspace: must be a string, got an integer",
        main={W: sub(WORKLOAD, "workspace: team", "workspace: 7")},
    ),
    Case(
        "configmap-data-is-list",
        DE,
        14,
        "data: must be a mapping, got a list",
        dev={E: sub(ENV, "data: {REGION: here}", "data: [REGION]")},
    ),
    Case(
        "manifest-entry-is-int",
        T,
        7,
        "each manifest is a template string or a mapping",
        main={T: template().replace("    - |\n", "    - 42\n")},
    ),
    Case(
        "environment-entry-is-string",
        P,
        7,
        "spec.environments[0]: must be a mapping, got a string",
        main={P: sub(PIPELINE, "- name: dev", "- dev")},
    ),
    # ------------------------------------------------------------ unknown fields, at every depth
    Case("unknown-field-top-level", W, 10, "unknown field 'status'", main={W: WORKLOAD + "status: {}\n"}),
    Case(
        "unknown-field-metadata",
        W,
        3,
        "unknown field 'metadata.owner'",
        main={W: sub(WORKLOAD, "{name: app,", "{name: app, owner: me,")},
    ),
    Case(
        "unknown-field-spec", W, 10, "unknown field 'spec.replicas'", main={W: WORKLOAD + "  replicas: 3\n"}
    ),
    Case(
        "unknown-field-environment",
        P,
        8,
        "unknown field 'spec.environments[0].colour'",
        main={P: dev_env("colour: blue")},
    ),
    Case(
        "unknown-field-deployment-target",
        W,
        7,
        "unknown field 'spec.deploymentTargets[0].weight'",
        main={W: sub(WORKLOAD, "{name: t,", "{name: t, weight: 1,")},
    ),
    Case(
        "unknown-field-gitops",
        P,
        8,
        "unknown field 'spec.environments[0].gitops.folder'",
        main={P: dev_env("gitops: {branch: dev, folder: x}")},
    ),
    Case(
        "unknown-field-platform-repo",
        P,
        5,
        "unknown field 'spec.platformRepo.token'",
        main={P: sub(PIPELINE, "{url: ../platform.git}", "{url: ../platform.git, token: x}")},
    ),
    Case(
        "unknown-field-cluster-type-spec",
        DE,
        4,
        "unknown field 'spec.reconcilers'",
        dev={E: sub(ENV, "spec: {reconciler: flux}", "spec: {reconciler: flux, reconcilers: [flux]}")},
    ),
    Case("unknown-field-configmap", DE, 15, "unknown field 'spec'", dev={E: ENV + "spec: {}\n"}),
    Case(
        "typo-of-a-required-field",
        W,
        8,
        "unknown field 'spec.deploymentTargets[1].enviroment', did you mean 'environment'?",
        main={W: sub(WORKLOAD, "{name: t2, environment: qa,", "{name: t2, enviroment: qa,")},
    ),
    Case(
        "manifests-branch-typo",  # passed once and rendered the default branch: the wrong revision
        W,
        8,
        "unknown field 'spec.deploymentTargets[1].manifests.brach', did you mean 'branch'?",
        main={
            W: sub(
                WORKLOAD,
                "repo: https://example.com/app, branch: main, path: ./qa",
                "repo: https://example.com/app, brach: dev-2, path: ./qa",
            )
        },
    ),
    Case(
        "manifests-key-of-another-source-kind",
        W,
        7,
        "manifests.tag': it is for an OCI source, and this is a git source (repo not oci://, no chart)",
        main={W: sub(WORKLOAD, "branch: main, path: ./dev", "tag: v1, path: ./dev")},
    ),
    Case(
        "manifests-two-oci-refs",
        W,
        7,
        "manifests.semver: give one of tag, semver, digest, not tag and semver",
        main={
            W: sub(
                WORKLOAD,
                "repo: https://example.com/app, branch: main, path: ./dev",
                "repo: oci://example.com/app, tag: v1, semver: 1.x",
            )
        },
    ),
    Case(
        "manifests-unquoted-version",
        W,
        7,
        "manifests.version: must be a non-empty string (quote it), got a number",
        main={W: sub(WORKLOAD, "branch: main, path: ./dev", "chart: app, version: 1.10")},
    ),
    Case(
        "manifests-values-not-a-mapping",
        W,
        7,
        "manifests.values: must be a mapping, got a list",
        main={W: sub(WORKLOAD, "branch: main, path: ./dev", "chart: app, values: [a]")},
    ),
    Case(
        "typo-of-an-optional-field",
        P,
        8,
        "unknown field 'spec.environments[0].timeot', did you mean 'timeout'?",
        main={P: dev_env("timeot: 5m")},
    ),
    Case(
        "unknown-field-match-expression",
        DE,
        23,
        "unknown field 'spec.clusterTypeSelector.labelSelector.matchExpressions[0].value'",
        dev={
            E: ENV
            + "---\n"
            + policy(
                "  clusterTypeSelector:\n    labelSelector:\n      matchExpressions:\n        - {key: size, operator: Exists, value: small}\n"
            )
        },
    ),
    # ------------------------------------------------------------ kind and apiVersion
    Case(
        "unknown-kind",
        W,
        2,
        "unknown kind 'Workloads'; did you mean Workload?",
        main={W: sub(WORKLOAD, "kind: Workload", "kind: Workloads")},
    ),
    Case(
        "unknown-kind-misspelt",
        W,
        2,
        "unknown kind 'Workoad'; did you mean Workload?",
        main={W: sub(WORKLOAD, "kind: Workload", "kind: Workoad")},
    ),
    Case(
        "unknown-kind-far",
        W,
        2,
        "unknown kind 'Deployment' (the kinds: ",
        main={W: sub(WORKLOAD, "kind: Workload", "kind: Deployment")},
    ),
    Case(
        "unsupported-api-version",
        W,
        1,
        "unsupported apiVersion 'promoter.dev/v2'",
        main={W: sub(WORKLOAD, "promoter.dev/v1alpha1", "promoter.dev/v2")},
    ),
    Case(
        "kind-without-api-version",
        W,
        1,
        "kind Workload needs apiVersion: promoter.dev/v1alpha1",
        main={W: WORKLOAD.split("\n", 1)[1]},
    ),
    Case(
        "pipeline-with-kalypso-api-version",
        P,
        1,
        "not a Kalypso kind",
        main={P: sub(PIPELINE, "promoter.dev/v1alpha1", "scheduler.kalypso.io/v1alpha1")},
    ),
    # ------------------------------------------------------------ names
    Case(
        "missing-metadata",
        W,
        1,
        "missing required field 'metadata'",
        main={W: sub(WORKLOAD, "metadata: {name: app, labels: {type: application}}\n", "")},
    ),
    Case(
        "missing-name",
        W,
        3,
        "missing required field 'metadata.name'",
        main={W: sub(WORKLOAD, "{name: app, labels", "{labels")},
    ),
    Case(
        "missing-target-name",
        W,
        7,
        "missing required field 'spec.deploymentTargets[0].name'",
        main={W: sub(WORKLOAD, "{name: t, ", "{")},
    ),
    Case("name-uppercase", W, 3, "invalid name 'App'", main={W: sub(WORKLOAD, "name: app,", "name: App,")}),
    Case("name-dot-dot", W, 3, "invalid name 'a..b'", main={W: sub(WORKLOAD, "name: app,", "name: a..b,")}),
    Case(
        "name-slash",
        W,
        3,
        "invalid name 'team/app'",
        main={W: sub(WORKLOAD, "name: app,", "name: team/app,")},
    ),
    Case(
        "name-leading-dash",
        W,
        3,
        "invalid name '-app'",
        main={W: sub(WORKLOAD, "name: app,", "name: '-app',")},
    ),
    Case(
        "name-too-long",
        W,
        3,
        "is 64 characters, over 63",
        main={W: sub(WORKLOAD, "name: app,", f"name: {'a' * 64},")},
    ),
    Case(
        "name-with-nul",
        W,
        3,
        "invalid name 'a\\x00b'",
        main={W: sub(WORKLOAD, "name: app,", 'name: "a\\0b",')},
    ),
    Case(
        "name-is-int",
        W,
        3,
        "metadata.name: must be a string, got an integer",
        main={W: sub(WORKLOAD, "name: app,", "name: 42,")},
    ),
    Case(
        "environment-name-invalid",
        P,
        7,
        "invalid name 'Dev'",
        main={P: sub(PIPELINE, "- name: dev", "- name: Dev")},
    ),
    Case(
        "cluster-type-name-invalid",
        DE,
        3,
        "invalid name 'small_1'",
        dev={E: sub(ENV, "name: small,", "name: small_1,")},
    ),
    # ------------------------------------------------------------ duplicates
    Case(
        "duplicate-workload",
        "workloads/copy.yaml",
        1,
        "duplicate Workload 'app' (also at workloads/app.yaml:1)",
        main={"workloads/copy.yaml": workload()},
    ),
    Case(
        "duplicate-template",
        "templates/b.yaml",
        1,
        "duplicate Template 'mine'",
        main={
            "templates/a.yaml": template("a: 1", name="mine"),
            "templates/b.yaml": template("a: 1", name="mine"),
        },
    ),
    Case(
        "duplicate-cluster-type",
        "dev:more.yaml",
        1,
        "duplicate ClusterType 'small' (also at dev:env.yaml:1)",
        dev={"more.yaml": cluster_type()},
    ),
    Case(
        "duplicate-environment",
        P,
        10,
        "environment 'qa' is listed twice (also at line 8)",
        main={P: PIPELINE + "    - name: qa\n"},
    ),
    Case(
        "duplicate-deployment-target",
        W,
        8,
        "duplicate deployment target 't'",
        main={W: sub(WORKLOAD, "{name: t2,", "{name: t,")},
    ),
    Case(
        "duplicate-output-name",
        "workloads/b.yaml",
        7,
        "deployment target name 'a-b-c' in dev",
        main={
            "workloads/a.yaml": workload("a", target="b-c"),
            "workloads/b.yaml": workload("a-b", target="c"),
        },
    ),
    Case(
        "duplicate-pipeline", P, 11, "duplicate Pipeline 'platform'", main={P: PIPELINE + "---\n" + PIPELINE}
    ),
    # ------------------------------------------------------------ the Pipeline
    Case("pipeline-missing", P, None, "no Pipeline at commit", main={P: None}),
    Case(
        "pipeline-elsewhere",
        "config/promoter.yaml",
        1,
        "the Pipeline must be in promoter.yaml",
        main={P: None, "config/promoter.yaml": PIPELINE},
    ),
    Case(
        "pipeline-without-environments",
        P,
        6,
        "spec.environments: needs at least one environment",
        main={P: PIPELINE.split("    - name: dev")[0].replace("environments:", "environments: []")},
    ),
    Case(
        "pipeline-without-platform-repo",
        P,
        5,
        "missing required field 'spec.platformRepo'",
        main={P: sub(PIPELINE, "  platformRepo: {url: ../platform.git}\n", "")},
    ),
    Case(
        "pipeline-bad-forge",
        P,
        5,
        "spec.platformRepo.forge: must be local or github",
        main={P: sub(PIPELINE, "{url: ../platform.git}", "{url: ../platform.git, forge: gitlab}")},
    ),
    # ------------------------------------------------------------ kinds on the wrong branch
    Case(
        "cluster-type-on-main",
        "clusters.yaml",
        1,
        "kind ClusterType belongs on an environment branch, not on main",
        main={"clusters.yaml": cluster_type()},
    ),
    Case(
        "configmap-on-main",
        "config.yaml",
        1,
        "kind ConfigMap belongs on an environment branch",
        main={"config.yaml": ENV.split("---\n")[2]},
    ),
    Case(
        "workload-on-env-branch",
        "dev:app.yaml",
        1,
        "kind Workload belongs on main, not on environment branch 'dev'",
        dev={"app.yaml": workload()},
    ),
    Case(
        "template-on-env-branch",
        "dev:t.yaml",
        1,
        "kind Template belongs on main",
        dev={"t.yaml": template("a: 1", name="mine")},
    ),
    # ------------------------------------------------------------ references
    Case(
        "environment-branch-missing",
        P,
        7,
        "branch 'develop' does not exist in the control-plane repo",
        main={P: dev_env("branch: develop")},
    ),
    Case(
        "target-names-unknown-environment",
        W,
        7,
        "names environment 'staging', which the Pipeline does not have",
        main={W: sub(WORKLOAD, "environment: dev", "environment: staging")},
    ),
    Case(
        "missing-reconciler-template",
        DE,
        1,
        "spec.reconciler: ClusterType 'small' names template 'fluxx', which does not exist",
        dev={E: sub(ENV, "{reconciler: flux}", "{reconciler: fluxx}")},
    ),
    Case(
        "missing-namespace-template",
        DE,
        1,
        "spec.namespaceService: ClusterType 'small' names template 'ns'",
        dev={E: sub(ENV, "{reconciler: flux}", "{reconciler: flux, namespaceService: ns}")},
    ),
    Case(
        "missing-config-template",
        DE,
        1,
        "spec.configType: ClusterType 'small' names template 'env-vars'",
        dev={E: sub(ENV, "{reconciler: flux}", "{reconciler: flux, configType: env-vars}")},
    ),
    Case(
        "reconciler-template-of-wrong-type",
        DE,
        1,
        "spec.reconciler: template 'configmap' is of type config, not reconciler",
        dev={E: sub(ENV, "{reconciler: flux}", "{reconciler: configmap}")},
    ),
    Case(
        "namespace-template-of-wrong-type",
        DE,
        1,
        "spec.namespaceService: template 'argocd' is of type reconciler, not namespace",
        dev={E: sub(ENV, "{reconciler: flux}", "{reconciler: flux, namespaceService: argocd}")},
    ),
    Case(
        "cluster-type-without-reconciler",
        DE,
        4,
        "missing required field 'spec.reconciler'",
        dev={E: sub(ENV, "{reconciler: flux}", "{configType: configmap}")},
    ),
    # ------------------------------------------------------------ environment fields
    Case(
        "gitops-path-absolute",
        P,
        8,
        "spec.environments[0].gitops.path: invalid path '/srv/dev'",
        main={P: dev_env("gitops: {branch: dev, path: /srv/dev}")},
    ),
    Case(
        "gitops-path-dot-dot",
        P,
        8,
        "'..' is not allowed",
        main={P: dev_env("gitops: {branch: dev, path: envs/../../etc}")},
    ),
    Case(
        "branch-with-dot-dot",
        P,
        8,
        "spec.environments[0].branch: invalid branch name 'dev..x'",
        main={P: dev_env("branch: dev..x")},
    ),
    Case("branch-with-space", P, 8, "invalid branch name 'my dev'", main={P: dev_env("branch: my dev")}),
    Case(
        "gitops-branch-leading-dash",
        P,
        8,
        "spec.environments[0].gitops.branch: invalid branch name '-dev'",
        main={P: dev_env("gitops: {branch: '-dev'}")},
    ),
    Case(
        "gitops-branch-reflog-syntax",
        P,
        8,
        "invalid branch name 'dev@{1}'",
        main={P: dev_env("gitops: {branch: 'dev@{1}'}")},
    ),
    Case(
        "merge-policy-unknown",
        P,
        8,
        "spec.environments[0].merge: must be one of auto, manual, direct, next, got 'sometimes'",
        main={P: dev_env("merge: sometimes")},
    ),
    Case(
        "timeout-not-a-duration",
        P,
        8,
        "spec.environments[0].timeout: expected a duration",
        main={P: dev_env("timeout: soon")},
    ),
    Case("timeout-negative", P, 8, "a duration cannot be negative", main={P: dev_env("timeout: -5")}),
    Case(
        "timeout-without-unit",
        P,
        8,
        "spec.environments[0].timeout: 24 has no unit: write 24s, 24m or 24h",
        main={P: dev_env("timeout: 24")},
    ),
    Case(
        "timeout-is-list",
        P,
        8,
        "spec.environments[0].timeout: must be a string or an integer or float, got a list",
        main={P: dev_env("timeout: [30m]")},
    ),
    Case(
        "gate-type-unknown",
        P,
        9,
        "unknown gate 'datadog'",
        main={P: dev_env("gates:", "  - datadog: {query: up}")},
    ),
    Case(
        "gate-not-a-mapping",
        P,
        9,
        "each gate is a mapping with one key",
        main={P: dev_env("gates:", "  - command")},
    ),
    Case(
        "gate-with-two-types",
        P,
        9,
        "each gate is a mapping with one key",
        main={P: dev_env("gates:", "  - {command: 'true', soak: 5m}")},
    ),
    Case(
        "gates-is-mapping",
        P,
        8,
        "spec.environments[0].gates: must be a list",
        main={P: dev_env("gates: {soak: 5m}")},
    ),
    Case(
        "command-gate-without-run",
        P,
        9,
        "'run' must be a non-empty string or list of strings",
        main={P: dev_env("gates:", "  - command: {shell: true}")},
    ),
    Case(
        "command-gate-empty-run",
        P,
        9,
        "'run' must be a non-empty string",
        main={P: dev_env("gates:", "  - command: {run: '  '}")},
    ),
    Case(
        "command-gate-unknown-field",
        P,
        9,
        "unknown field 'cmd'",
        main={P: dev_env("gates:", "  - command: {cmd: 'true'}")},
    ),
    Case(
        "command-gate-unbalanced-quote",
        P,
        9,
        "cannot split 'run'",
        main={P: dev_env("gates:", '  - command: {run: "echo \'oops"}')},
    ),
    Case(
        "command-gate-bad-interval",
        P,
        9,
        "expected a duration",
        main={P: dev_env("gates:", "  - command: {run: 'true', interval: often}")},
    ),
    Case(
        "soak-gate-bad-duration",
        P,
        9,
        "expected a duration like 30s, 5m or 1h, got 'forever'",
        main={P: dev_env("gates:", "  - soak: forever")},
    ),
    Case(
        "soak-gate-unknown-field",
        P,
        9,
        "unknown field 'minimum'",
        main={P: dev_env("gates:", "  - soak: {minimum: 5m}")},
    ),
    # ------------------------------------------------------------ waves
    Case(
        "waves-name-twice",
        P,
        10,
        "spec.environments[0].waves[1].name: wave 'a' is listed twice (also at line 9)",
        main={
            P: dev_env("waves:", "  - {name: a, clusterTypes: [small]}", "  - {name: a, clusterTypes: [big]}")
        },
    ),
    Case(
        "waves-cluster-type-in-two-waves",
        P,
        10,
        "cluster type 'small' is already in wave 'a' (line 9); a cluster type belongs to one wave",
        main={
            P: dev_env(
                "waves:", "  - {name: a, clusterTypes: [small]}", "  - {name: b, clusterTypes: [small]}"
            )
        },
    ),
    Case(
        "waves-cluster-type-twice-in-one-wave",
        P,
        9,
        "waves[0].clusterTypes: cluster type 'small' is listed twice",
        main={P: dev_env("waves:", "  - {name: a, clusterTypes: [small, small]}")},
    ),
    Case("waves-empty", P, 8, "waves: needs at least one wave", main={P: dev_env("waves: []")}),
    Case("waves-not-a-list", P, 8, "waves: must be a list", main={P: dev_env("waves: {name: a}")}),
    Case(
        "wave-without-cluster-types",
        P,
        9,
        "waves[0]: needs clusterTypes or a selector (or both)",
        main={P: dev_env("waves:", "  - {name: a, bake: 5m}")},
    ),
    Case(
        "wave-empty-selector",
        P,
        9,
        "waves[0].selector: an empty selector would take every cluster type",
        main={P: dev_env("waves:", "  - {name: a, selector: {}}")},
    ),
    Case(
        "wave-named-rest",
        P,
        9,
        "waves[0].name: 'rest' names the implicit last wave",
        main={P: dev_env("waves:", "  - {name: rest, clusterTypes: [small]}")},
    ),
    Case(
        "wave-unknown-field",
        P,
        9,
        "unknown field 'spec.environments[0].waves[0].clusters'",
        main={P: dev_env("waves:", "  - {name: a, clusters: [small]}")},
    ),
    Case(
        "wave-bake-not-a-duration",
        P,
        9,
        "waves[0].bake: expected a duration",
        main={P: dev_env("waves:", "  - {name: a, clusterTypes: [small], bake: a while}")},
    ),
    Case(
        "wave-gate-unknown",
        P,
        9,
        "unknown gate 'datadog'",
        main={P: dev_env("waves:", "  - {name: a, clusterTypes: [small], gates: [{datadog: {}}]}")},
    ),
    Case(
        "wave-names-a-missing-cluster-type",
        P,
        9,
        "environment 'dev', wave 'a': cluster type 'huge' does not exist on branch dev at ",
        main={P: dev_env("waves:", "  - {name: a, clusterTypes: [huge]}")},
    ),
    Case(
        "wave-selects-nothing",
        P,
        9,
        "environment 'dev', wave 'a': selects no cluster type on branch dev at ",
        main={P: dev_env("waves:", "  - {name: a, selector: {matchLabels: {size: huge}}}")},
    ),
    Case(
        "wave-selectors-overlap",
        P,
        10,
        "wave 'b': cluster type 'small' is also in wave 'a' (line 9); a cluster type belongs to one wave",
        main={
            P: dev_env(
                "waves:",
                "  - {name: a, clusterTypes: [small]}",
                "  - {name: b, selector: {matchExpressions: [{key: size, operator: Exists}]}}",
            )
        },
    ),
    # ------------------------------------------------------------ selectors
    Case(
        "match-expression-bad-operator",
        DE,
        23,
        "must be one of In, NotIn, Exists, DoesNotExist, got 'Equals'",
        dev={
            E: ENV
            + "---\n"
            + policy(
                "  clusterTypeSelector:\n    labelSelector:\n      matchExpressions:\n        - {key: size, operator: Equals, values: [a]}\n"
            )
        },
    ),
    Case(
        "match-expression-in-without-values",
        DE,
        23,
        "operator In needs values",
        dev={
            E: ENV
            + "---\n"
            + policy(
                "  clusterTypeSelector:\n    labelSelector:\n      matchExpressions:\n        - {key: size, operator: In}\n"
            )
        },
    ),
    Case(
        "match-labels-int-value",
        DE,
        23,
        "label 'size' must be a string",
        dev={
            E: ENV
            + "---\n"
            + policy("  clusterTypeSelector:\n    labelSelector:\n      matchLabels:\n        size: 3\n")
        },
    ),
    Case(
        "selector-label-outside-label-selector",
        DE,
        20,
        "unknown field 'spec.clusterTypeSelector.size'; a selector's labels go under labelSelector: "
        "{labelSelector: {size: ...}}",
        dev={E: ENV + "---\n" + policy("  clusterTypeSelector: {size: smal}\n")},
    ),
    # ------------------------------------------------------------ config schemas
    Case("schema-invalid", S, 5, "spec.schema: not a valid JSON Schema", main={S: schema("{type: objekt}")}),
    Case(
        "schema-invalid-pattern",
        S,
        5,
        "spec.schema: not a valid JSON Schema",
        main={S: schema("{type: object, properties: {REGION: {pattern: '(unclosed'}}}")},
    ),
    Case(
        "schema-ref-to-nothing",
        S,
        5,
        "$ref '#/$defs/region' does not resolve",
        main={S: schema("{type: object, properties: {REGION: {$ref: '#/$defs/region'}}}")},
    ),
    Case(
        "schema-ref-to-remote-document",
        S,
        5,
        "$ref 'https://example.com/region.json' does not resolve",
        main={S: schema("{properties: {REGION: {$ref: 'https://example.com/region.json'}}}")},
    ),
    Case(
        "schema-missing",
        S,
        5,
        "missing required field 'spec.schema'",
        main={S: schema("{}").replace("  schema: {}\n", "  other: 1\n")},
    ),
    Case(
        "schema-violated-required",
        S,
        1,
        "ConfigSchema 'base': assignment dev/small/app-t (defaults): config: 'ZONE' is a required property",
        main={S: schema("{type: object, required: [ZONE]}")},
    ),
    Case(
        "schema-violated-type",
        DE,
        14,
        "config.REGION: 'here' is not of type 'integer'",
        main={S: schema("{properties: {REGION: {type: integer}}}")},
    ),
    # ------------------------------------------------------------ templates
    Case(
        "template-syntax-error",
        T,
        11,
        "template 'flux' manifest 1: syntax error",
        main={T: template("apiVersion: v1", "kind: ConfigMap", "metadata: {name: x}", "data: {a: '{{ foo'}")},
    ),
    Case(
        "template-unknown-filter",
        T,
        ANY_LINE,
        "template 'flux' manifest 1",
        main={T: template("apiVersion: v1", "kind: ConfigMap", "metadata: {name: '{{ name | shout }}'}")},
    ),
    Case(
        "template-undefined-variable",
        T,
        11,
        "undefined variable 'nope': (the variables are cluster_type, ",
        main={
            T: template("apiVersion: v1", "kind: ConfigMap", "metadata: {name: x}", "data: {a: '{{ nope }}'}")
        },
    ),
    Case(
        "template-undefined-in-mapping-manifest",
        T,
        ANY_LINE,
        "undefined variable 'nope': (the variables are cluster_type, ",
        main={
            T: template("a: 1").replace(
                "    - |\n      a: 1\n",
                "    - apiVersion: v1\n      kind: ConfigMap\n      metadata: {name: '{{ nope }}'}\n",
            )
        },
    ),
    Case(
        "template-renders-invalid-yaml",
        T,
        ANY_LINE,
        "rendered text is not valid YAML",
        main={T: template("apiVersion: v1", "kind: ConfigMap", "metadata: {name: {{ '[' }}}")},
    ),
    Case(
        "template-renders-two-documents",
        T,
        8,
        "must render exactly one YAML mapping, got 2 documents",
        main={
            T: template(
                "apiVersion: v1",
                "kind: Namespace",
                "metadata: {name: a}",
                "---",
                "apiVersion: v1",
                "kind: Namespace",
                "metadata: {name: b}",
            )
        },
    ),
    Case(
        "template-renders-a-scalar",
        T,
        8,
        "must render exactly one YAML mapping",
        main={T: template("just some text")},
    ),
    Case(
        "template-runtime-error",
        T,
        10,
        "ZeroDivisionError",
        main={T: template("apiVersion: v1", "kind: ConfigMap", "metadata: {name: 'x{{ 1 // 0 }}'}")},
    ),
    Case(
        "template-output-too-large",
        T,
        8,
        "output is over",
        main={T: template("a: {% for i in range(50000) %}{{ 'x' * 100 }}{% endfor %}")},
    ),
    Case(
        "template-huge-string",
        T,
        8,
        "over the limit of 1000000",
        main={T: template("a: {{ 'x' * 5000000 }}")},
    ),
    Case("template-huge-power", T, 8, "exponent too large", main={T: template("a: {{ 10 ** 100000 }}")}),
    Case(
        "template-huge-range",
        T,
        8,
        "range() of",
        main={T: template("a: {% for i in range(10**8) %}{% endfor %}")},
    ),
    Case(
        "template-runs-forever",
        T,
        8,
        "rendering took longer than 1s",
        main={
            T: template("a: {% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}")
        },
        render_seconds=1.0,
    ),
    Case(
        "template-reads-a-file",
        T,
        8,
        "template 'flux' manifest 1",
        main={T: template("a: {% include '/etc/passwd' %}")},
    ),
    Case("template-reads-env", T, 8, "undefined variable 'os'", main={T: template("a: {{ os.environ }}")}),
    Case(
        "template-sandbox-mro",
        T,
        8,
        "template 'flux' manifest 1",
        main={T: template("a: \"{{ ''.__class__.__mro__ }}\"")},
    ),
    Case(
        "template-sandbox-globals",
        T,
        8,
        "template 'flux' manifest 1",
        main={T: template('a: "{{ cycler.__init__.__globals__ }}"')},
    ),
    Case(
        "template-sandbox-mutation",
        T,
        8,
        "template 'flux' manifest 1",
        main={T: template("a: \"{{ config.update({'REGION': 'x'}) }}\"")},
    ),
    Case(
        "template-sandbox-format",
        T,
        8,
        "template 'flux' manifest 1",
        main={T: template("a: \"{{ '{0.__class__}'.format(1) }}\"")},
    ),
    Case(
        "template-type-unknown",
        T,
        5,
        "spec.type: must be one of reconciler, namespace, config, got 'renderer'",
        main={T: template("a: 1", kind="renderer")},
    ),
    Case(
        "template-without-manifests",
        T,
        6,
        "spec.manifests: needs at least one manifest",
        main={T: template().replace("  manifests:\n    - |\n", "  manifests: []\n")},
    ),
]

# Cases that once were bugs outside the loading code: input errors found in a later environment, a deep render.
LATER_CASES = [
    pytest.param(
        Case(
            "error-only-on-prod-branch",
            "prod:env.yaml",
            1,
            "names template 'fluxx'",
            prod={E: sub(ENV, "{reconciler: flux}", "{reconciler: fluxx}")},
        ),
        id="error-only-on-prod-branch",
    ),
    pytest.param(
        Case(
            "qa-branch-missing",
            P,
            8,
            "branch 'quality' does not exist",
            main={P: sub(PIPELINE, "    - name: qa\n", "    - name: qa\n      branch: quality\n")},
        ),
        id="qa-environment-branch-missing",
    ),
    pytest.param(
        Case(
            "template-renders-deep-yaml",
            T,
            8,
            "template 'flux' manifest 1",
            main={T: template("a: {{ '[' * 100000 }}{{ ']' * 100000 }}")},
            isolated=True,
        ),
        id="template-renders-deeply-nested-yaml",
    ),
]


def _build(factory: ControlPlaneFactory, case: Case) -> None:
    main: Files = {P: PIPELINE, W: WORKLOAD, **case.main}
    envs = {}
    for env in ENVS:
        files: Files = {
            E: ENV,
            **(case.dev if env == "dev" else {}),
            **(case.prod if env == "prod" else {}),
        }
        envs[env] = {k: v for k, v in files.items() if v is not None}
    factory.create(main={k: v for k, v in main.items() if v is not None}, envs=envs, platform_branches=ENVS)  # type: ignore[arg-type]


@dataclass
class Outcome:
    exit_code: int
    stdout: str
    stderr: str


def _invoke(factory: ControlPlaneFactory, command: str, *, isolated: bool = False) -> Outcome:
    args = [command, "--control-plane", str(factory.path)]
    if command == "promote":
        args += ["--poll-interval", "0.1s"]
    if isolated:
        proc = forkserver.run("promoter", args)
        return Outcome(proc.returncode, proc.stdout, proc.stderr)
    result = CliRunner().invoke(cli, args)
    return Outcome(result.exit_code, result.stdout, result.stderr)


# Each case through validate, then promote (nothing pushed). On the oldest PyYAML
# (mk/pyyaml-range.mk) the corpus asks what the other PyYAML changes, how files are read: validate.
COMMANDS = ("validate",) if os.environ.get("PROMOTER_TEST_PYYAML") == "oldest" else ("validate", "promote")


def _check(factory: ControlPlaneFactory, case: Case) -> None:
    _build(factory, case)
    before = factory.refs()
    where = re.escape(case.file) + (
        "" if case.line is None else ":" + (r"\d+" if case.line == ANY_LINE else str(case.line)) + r"(:\d+)?"
    )
    for command in COMMANDS:
        result = _invoke(factory, command, isolated=case.isolated)
        context = f"{command}: exit {result.exit_code}\nstdout: {result.stdout}\nstderr: {result.stderr}"
        assert result.exit_code == 2, context
        lines = result.stderr.splitlines()
        assert len(lines) == 1, context
        assert re.match(rf"error: {where}: \S", lines[0]), context
        assert case.says in lines[0], context
        location = lines[0].split(": ", 2)[1]
        assert f"{location}: " not in lines[0].split(": ", 2)[2], context  # said once, not twice
        after = factory.refs()
        moved = {
            ref: (before.get(ref), after.get(ref))
            for ref in before.keys() | after.keys()
            if before.get(ref) != after.get(ref)
        }
        assert not moved, f"{context}\nrefs moved: {moved}"


@pytest.mark.parametrize("case", [pytest.param(c, id=c.id) for c in CASES])
def test_bad_input(factory: ControlPlaneFactory, case: Case, monkeypatch: pytest.MonkeyPatch) -> None:
    if case.render_seconds is not None:
        monkeypatch.setattr(sandbox, "RENDER_SECONDS", case.render_seconds)
    _check(factory, case)


@pytest.mark.parametrize("case", LATER_CASES)
def test_bad_input_found_before_anything_is_pushed(factory: ControlPlaneFactory, case: Case) -> None:
    _check(factory, case)


def test_case_ids_are_unique() -> None:
    ids = [c.id for c in CASES]
    assert len(ids) == len(set(ids))


def test_default_control_plane_is_valid(factory: ControlPlaneFactory) -> None:
    """The baseline every case varies: without the mistake, both commands succeed."""
    _build(factory, Case("valid", "", None, ""))
    for command in ("validate", "promote"):
        result = _invoke(factory, command)
        assert result.exit_code == 0, result.output
