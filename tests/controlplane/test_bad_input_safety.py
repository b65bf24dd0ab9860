"""Bad input, round three (issue 30): changes that are valid objects but would ship something
destructive or wrong: a removal past the guard, a dirty working tree, a source that does not
answer. Each runs the real CLI on a control plane already promoted once, and expects exit 2,
one ``error: ...`` line naming what and why, and not a ref moved in either repo."""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from click.testing import CliRunner

from promoter.cli.main import cli
from tests.controlplane.test_bad_input import Case, P, _check, dev_env, sub
from tests.support.fake_github import GitServer
from tests.support.helpers import WORKLOAD, ControlPlaneFactory, dedent, pipeline, stage
from tests.support.sources import bare_repo, source_server

API = dedent(
    """
    apiVersion: promoter.dev/v1alpha1
    kind: Workload
    metadata: {name: api}
    spec:
      workspace: team
      deploymentTargets:
        - {name: a, environment: dev, manifests: {repo: https://example.com/api, branch: main, path: ./dev}}
        - {name: a2, environment: qa, manifests: {repo: https://example.com/api, branch: main, path: ./qa}}
        - {name: a3, environment: prod, manifests: {repo: https://example.com/api, branch: main, path: ./prod}}
    """
)
# dev lands in two waves (canary: small, rest: large); qa removes at most 1; prod at most 25%
PIPELINE = pipeline(
    stage("dev", waves="[{name: canary, clusterTypes: [small]}]"),
    stage("qa", removalLimit="1"),
    stage("prod", removalLimit='"25%"'),
)
SMALL = "metadata: {name: small, labels: {size: small, tier: web}}"
LARGE = "metadata: {name: large, labels: {size: large, tier: web}}"
LARGE_DOC = (
    f"apiVersion: promoter.dev/v1alpha1\nkind: ClusterType\n{LARGE}\nspec: {{reconciler: flux}}\n---\n"
)
POLICY = "  clusterTypeSelector: {labelSelector: {matchLabels: {tier: web}}}\n"
POLICY_DOC = f"apiVersion: promoter.dev/v1alpha1\nkind: SchedulingPolicy\nmetadata: {{name: web}}\nspec:\n{POLICY}---\n"
ENV = (
    f"apiVersion: promoter.dev/v1alpha1\nkind: ClusterType\n{SMALL}\nspec: {{reconciler: flux}}\n---\n"
    + LARGE_DOC
    + POLICY_DOC
    + 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: defaults, labels: {platform-config: "true"}}\n'
    "data: {REGION: here}\n"
)
W, A, E = "workloads/app.yaml", "workloads/api.yaml", "env.yaml"
Edit = Callable[[str], str]


@dataclass(frozen=True)
class Removal:
    """A change after the first promotion, and what the guard must say about it."""

    id: str
    says: tuple[str, ...]  # fragments of the one error line
    args: tuple[str, ...] = ()  # promote's arguments besides the control plane
    main: dict[str, str | None] = field(default_factory=dict)  # None deletes the file
    envs: dict[str, Edit] = field(default_factory=dict)  # env.yaml of that branch, edited
    validate: bool = False  # also check that validate warns of it (each costs a render of all)


REMOVALS = [
    Removal(
        "selector-matches-nothing",
        (
            "dev: would remove all 4 assignments",
            "all of them",
            "SchedulingPolicy 'web' (dev:env.yaml:11): its clusterTypeSelector matches no cluster type",
        ),
        ("--schedule", "dev"),
        envs={"dev": lambda t: sub(t, "{tier: web}}}", "{tier: mobile}}}")},
        validate=True,
    ),
    Removal(
        "policy-deleted",
        ("dev: would remove all 4 assignments", "SchedulingPolicy 'web' is gone from branch dev"),
        ("--schedule", "dev"),
        envs={"dev": lambda t: sub(t, POLICY_DOC, "")},
    ),
    Removal(
        "label-renamed-on-env-branch",
        (
            "qa: would remove 2 of its 4 assignments (large/api-a2, large/app-t2)",
            "more than its removalLimit of 1 allows",
            "cluster type 'large' (qa:env.yaml:6): labels changed, tier: web -> api",
        ),
        ("--schedule", "qa"),
        envs={"qa": lambda t: sub(t, LARGE, LARGE.replace("tier: web", "tier: api"))},
    ),
    Removal(
        "cluster-type-deleted",
        (
            "prod: would remove 2 of its 4 assignments",
            "more than its removalLimit of 25% allows",
            "cluster type 'large' is gone from branch prod (it was at prod:env.yaml:6)",
        ),
        ("--schedule", "prod"),
        envs={"prod": lambda t: sub(t, LARGE_DOC, "")},
    ),
    Removal(
        "wave-emptied",
        ("dev, wave canary: would remove all 2 assignments", "labels changed, tier: web -> edge"),
        main={P: PIPELINE + "# a new main commit\n"},
        envs={"dev": lambda t: sub(t, SMALL, SMALL.replace("tier: web", "tier: edge"))},
        validate=True,
    ),
    Removal(
        "workload-deleted-past-the-bound",  # dev may lose 1 of 2 per wave; qa's bound stops the run
        (
            "qa: would remove 2 of its 4 assignments",
            "workload 'api' is gone from main (it was at workloads/api.yaml:1)",
        ),
        main={A: None},
        validate=True,
    ),
    Removal(
        "target-moved-to-another-environment",
        (
            "qa: would remove 2 of its 4",
            "deployment target 'a2' of workload 'api' moved to environment 'prod'",
        ),
        main={A: sub(API, "{name: a2, environment: qa,", "{name: a2, environment: prod,")},
    ),
]


@pytest.fixture(scope="module")
def promoted(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A control plane (2 workloads x 2 cluster types per environment) promoted everywhere."""
    root = tmp_path_factory.mktemp("promoted")
    factory = ControlPlaneFactory(root)
    main = {P: PIPELINE, W: WORKLOAD, A: API}
    factory.create(
        main=main, envs={e: {E: ENV} for e in ("dev", "qa", "prod")}, platform_branches=("dev", "qa", "prod")
    )
    result = _run(factory, "promote")
    assert result.exit_code == 0, result.output
    return root


@pytest.fixture
def copy(promoted: Path, tmp_path: Path) -> ControlPlaneFactory:
    shutil.copytree(promoted, tmp_path, dirs_exist_ok=True)
    made = ControlPlaneFactory(tmp_path)
    return made


def _run(factory: ControlPlaneFactory, command: str, *args: str):  # type: ignore[no-untyped-def]
    extra = ["--poll-interval", "0.1s"] if command == "promote" else []
    return CliRunner().invoke(cli, [command, "--control-plane", str(factory.path), *extra, *args])


def _change(factory: ControlPlaneFactory, case: Removal) -> None:
    git = ["git", "-C", str(factory.path)]
    if case.main:
        for path, text in case.main.items():
            if text is None:
                subprocess.run([*git, "rm", "-q", path], check=True)
            else:
                (factory.path / path).write_text(text)
                subprocess.run([*git, "add", path], check=True)
        subprocess.run([*git, "commit", "-qm", f"main: {case.id}"], check=True)
    for env, edit in case.envs.items():
        text = subprocess.run([*git, "show", f"{env}:{E}"], capture_output=True, text=True, check=True).stdout
        factory.commit(env, {E: edit(text)}, f"{env}: {case.id}", keep=True)


@pytest.mark.parametrize("case", [pytest.param(c, id=c.id) for c in REMOVALS])
def test_removal_past_the_guard_stops_before_anything_is_pushed(
    copy: ControlPlaneFactory, case: Removal
) -> None:
    _change(copy, case)
    before = copy.refs()
    result = _run(copy, "promote", *case.args)
    context = f"exit {result.exit_code}\nstdout: {result.stdout}\nstderr: {result.stderr}"
    assert result.exit_code == 2, context
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), context
    for fragment in case.says:
        assert fragment in lines[0], context
    assert "--allow-removal lets a wanted removal through" in lines[0]
    assert copy.refs() == before, context
    if not case.validate:
        return
    validated = _run(copy, "validate")  # the same removal, as a warning, before anyone promotes
    assert validated.exit_code == 0, validated.output
    assert any(ln.startswith("warning: ") and case.says[-1] in ln for ln in validated.stderr.splitlines())


def test_a_wanted_removal_passes_with_the_flag_and_its_pr_lists_it_first(copy: ControlPlaneFactory) -> None:
    _change(copy, REMOVALS[0])
    result = _run(copy, "promote", "--schedule", "dev", "--allow-removal")
    assert result.exit_code == 0, result.output
    assert (
        "dev: removes all 4 assignments (large/api-a, large/app-t, small/api-a, small/app-t)" in result.stdout
    )
    assert not [f for f in copy.platform_files("dev") if f.startswith(("small/", "large/"))]
    message = subprocess.run(
        ["git", "-C", str(copy.platform), "log", "-1", "--format=%b", "promoter/dev"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert message.startswith("**Removes 4 assignments** (SchedulingPolicy 'web'")
    assert "- `large/api-a`\n- `large/app-t`\n- `small/api-a`\n- `small/app-t`\n" in message


def test_diff_warns_of_the_removal(copy: ControlPlaneFactory) -> None:
    _change(copy, REMOVALS[2])
    result = _run(copy, "diff", "--env", "qa", "--no-exit-code")
    assert result.exit_code == 0, result.output
    assert (
        "warning: qa: removes 2 of its 4 assignments (large/api-a2, large/app-t2), because cluster type "
        "'large' (qa:env.yaml:6): labels changed, tier: web -> api (a promotion stops here without "
        "--allow-removal: more than its removalLimit of 1 allows)"
    ) in result.stderr.splitlines()


def test_a_removal_within_the_bound_passes(copy: ControlPlaneFactory) -> None:
    """dev's waves lose 1 of 2 each (50%, the default bound): promoted, and said."""
    _change(
        copy,
        Removal(
            "one-workload-from-dev",
            (),
            main={A: sub(API, "{name: a, environment: dev,", "{name: a, environment: qa,")},
        ),
    )
    result = _run(copy, "promote", "--to", "dev")
    assert result.exit_code == 0, result.output
    assert (
        "dev, wave canary: removes 1 of its 2 assignments (small/api-a), because deployment target 'a' "
        "of workload 'api' moved to environment 'qa'"
    ) in result.stdout


# ------------------------------------------------------------ the working tree


@pytest.mark.parametrize(
    ("dirty", "named"),
    [
        pytest.param(
            lambda p: (p / "workloads/new.yaml").write_text("kind: Workload\n"),
            "workloads/new.yaml",
            id="untracked",
        ),
        pytest.param(lambda p: (p / W).write_text(WORKLOAD + "# edited\n"), W, id="modified"),
        pytest.param(lambda p: (p / A).unlink(), A, id="deleted"),
    ],
)
def test_a_dirty_working_tree_is_refused(
    copy: ControlPlaneFactory, dirty: Callable[[Path], object], named: str
) -> None:
    dirty(copy.path)
    before = copy.refs()
    result = _run(copy, "promote", "--force", "--to", "dev")
    assert result.exit_code == 2, result.output
    assert result.stderr == (
        f"error: {copy.path} has 1 uncommitted or untracked file ({named}) that this run does not "
        "promote: it promotes commits only; commit them, or pass --allow-dirty to promote without them\n"
    )
    assert copy.refs() == before
    if named != W:  # one promotion past a dirty tree is enough
        return
    allowed = _run(copy, "promote", "--force", "--to", "dev", "--allow-dirty")
    assert allowed.exit_code == 0, allowed.output
    assert allowed.stderr.startswith(f"warning: {copy.path} has 1 uncommitted or untracked file ({named})")


def test_files_outside_the_control_plane_do_not_count(copy: ControlPlaneFactory) -> None:
    """A README, or the promoter checked out into .promoter/ (the reusable workflow does)."""
    (copy.path / "README.md").write_text("notes\n")
    (copy.path / ".promoter" / "actions").mkdir(parents=True)
    (copy.path / ".promoter" / "actions" / "action.yml").write_text("name: x\n")
    result = _run(copy, "promote")
    assert result.exit_code == 0, result.output
    assert "uncommitted" not in result.stderr


# ------------------------------------------------------------ the removalLimit field

FIELD_CASES = [
    Case(
        "removal-limit-negative",
        P,
        8,
        "removalLimit: must be a whole number of at least 0 or a percent",
        main={P: dev_env("removalLimit: -1")},
    ),
    Case("removal-limit-over-100-percent", P, 8, "got '150%'", main={P: dev_env('removalLimit: "150%"')}),
    Case("removal-limit-fraction", P, 8, "got 0.5", main={P: dev_env("removalLimit: 0.5")}),
    Case("removal-limit-boolean", P, 8, "got True", main={P: dev_env("removalLimit: true")}),
    Case(
        "check-sources-not-boolean",
        P,
        8,
        "checkSources: must be a boolean",
        main={P: dev_env('checkSources: "yes"')},
    ),
]


@pytest.mark.parametrize("case", [pytest.param(c, id=c.id) for c in FIELD_CASES])
def test_pipeline_safety_fields(factory: ControlPlaneFactory, case: Case) -> None:
    _check(factory, case)


# ------------------------------------------------------------ sources that answer


@pytest.fixture(scope="module")
def sources(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, str]]:
    """(git server URL, Helm/OCI server host): a real repo over smart HTTP, and index.yaml and
    the registry's /v2/ on 127.0.0.1."""
    server = GitServer({"/team/app.git": bare_repo(tmp_path_factory.mktemp("sources"))})
    with source_server() as http:
        yield server.url, f"127.0.0.1:{http.server_address[1]}"
    server.stop()


def _workload(manifests: str) -> str:
    return (
        "apiVersion: promoter.dev/v1alpha1\nkind: Workload\nmetadata: {name: app}\nspec:\n  workspace: team\n"
        f"  deploymentTargets:\n    - name: t\n      environment: dev\n      manifests: {manifests}\n"
    )


SOURCE_CASES = [  # (id, manifests with {git} and {http} in them, what the line says)
    (
        "git-repo-missing",
        "{{repo: '{git}/team/ap.git'}}",
        "{git}/team/ap.git does not answer: git ls-remote failed (fatal: repository",
    ),
    (
        "git-branch-typo",
        "{{repo: '{git}/team/app.git', branch: mian}}",
        "{git}/team/app.git does not answer: no branch 'mian'",
    ),
    (
        "helm-chart-missing",
        "{{repo: 'http://{http}/charts', chart: podinfoo}}",
        "no chart 'podinfoo' in the repository's index.yaml",
    ),
    (
        "helm-repo-missing",
        "{{repo: 'http://{http}/chart', chart: podinfo}}",
        "no Helm repository index (http://{http}/chart/index.yaml answered HTTP 404)",
    ),
    (
        "helm-version-missing",
        "{{repo: 'http://{http}/charts', chart: podinfo, version: 6.6.0}}",
        "no version 6.6.0 of chart 'podinfo'",
    ),
    (
        "oci-repository-missing",
        "{{repo: 'oci://{http}/team/ap', tag: '1.0'}}",
        "oci://{http}/team/ap does not answer: no tag '1.0' in the registry (HTTP 404)",
    ),
    (
        "oci-chart-version-missing",
        "{{repo: 'oci://{http}/charts', chart: podinfo, version: 6.6.0}}",
        "no tag '6.6.0' in the registry",
    ),
]


@pytest.mark.parametrize(("manifests", "says"), [pytest.param(m, s, id=i) for i, m, s in SOURCE_CASES])
def test_a_source_that_does_not_answer(
    factory: ControlPlaneFactory, sources: tuple[str, str], manifests: str, says: str
) -> None:
    """validate --sources names the target's line, the URL and why; a promotion to an
    environment with checkSources stops before pushing, as validate --sources does."""
    git, http = sources
    text = _workload(manifests.format(git=git, http=http))
    factory.create(
        main={P: pipeline(stage("dev", checkSources="true"), "qa", "prod"), W: text},
        platform_branches=("dev",),
    )
    before = factory.refs()
    promote = ("git" in manifests) or ("chart" in manifests and "oci" in manifests)  # one per protocol
    for command in (("validate", "--sources"), ("promote",))[: 2 if promote else 1]:
        result = _run(factory, *command)
        context = f"{command}: exit {result.exit_code}\nstdout: {result.stdout}\nstderr: {result.stderr}"
        assert result.exit_code == 2, context
        lines = result.stderr.splitlines()
        assert len(lines) == 1 and lines[0].startswith(
            f"error: {W}:7: deployment target app/t: its source "
        ), context
        assert says.format(git=git, http=http) in lines[0], context
        assert factory.refs() == before, context
    assert not promote or "checkSources of dev: nothing was pushed" in lines[0]


def test_sources_that_answer_pass(factory: ControlPlaneFactory, sources: tuple[str, str]) -> None:
    git, http = sources
    text = (
        _workload(f"{{repo: '{git}/team/app.git'}}")
        + f"    - {{name: h, environment: dev, manifests: {{repo: 'http://{http}/charts', chart: podinfo, version: 6.5.0}}}}\n"
        + f"    - {{name: o, environment: dev, manifests: {{repo: 'oci://{http}/private/app', tag: '2.0'}}}}\n"
    )
    factory.create(main={P: pipeline("dev", "qa", "prod"), W: text}, platform_branches=("dev",))
    result = _run(factory, "validate", "--sources")
    assert result.exit_code == 0, result.output
    assert "sources: ok, 3 answered\nvalid: main " in result.stdout
