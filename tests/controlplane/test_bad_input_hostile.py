"""Hostile input, round two (issue 10): each class of attack by a control-plane author or a
dispatch input, more than one case per class, through the real CLI as ``test_bad_input`` runs
its corpus: exit 2, one ``error: <file>:<line>: ...`` line, no ref moved in either repo."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from promoter.cli.main import cli
from promoter.controlplane.repo import ControlPlane
from promoter.errors import one_line
from promoter.gitcmd import Git, valid_branch, valid_revision
from promoter.urls import redact, url_problem
from tests.controlplane.test_bad_input import ANY_LINE, DE, ENVS, Case, P, W, _check, dev_env, sub, template
from tests.support.helpers import ENV, PIPELINE, WORKLOAD, ControlPlaneFactory

HUGE_HEX = "0x" + "f" * 20_000
SEXAGESIMAL = ":".join(["59"] * 3000)

CASES = [
    # ------------------------------------------------------------ numbers past Python's limits
    Case(
        "huge-hex-config-value",
        DE,
        14,
        "quote it",
        dev={"env.yaml": sub(ENV, "REGION: here", f"BIG: {HUGE_HEX}")},
    ),
    Case(
        "huge-sexagesimal-value",
        DE,
        14,
        "quote it",
        dev={"env.yaml": sub(ENV, "REGION: here", f"T: {SEXAGESIMAL}")},
    ),
    Case(
        "huge-hex-explicit-key",
        DE,
        15,
        "quote it",
        dev={"env.yaml": sub(ENV, "data: {REGION: here}", f"data:\n  ? {HUGE_HEX}\n  : x")},
    ),
    Case(
        "long-hex-key",
        DE,
        14,
        "outside the 64-bit range",
        dev={"env.yaml": sub(ENV, "REGION: here", "0x" + "f" * 90 + ": x")},
    ),
    Case(
        "huge-int-in-manifests",
        W,
        7,
        "quote it",
        main={
            W: sub(
                WORKLOAD, "branch: main, path: ./dev}", "branch: main, path: ./dev, size: 0x" + "9" * 30 + "}"
            )
        },
    ),
    Case(
        "int-over-64-bits",
        DE,
        14,
        "outside the 64-bit range",
        dev={"env.yaml": sub(ENV, "REGION: here", "N: 99999999999999999999")},
    ),
    # ------------------------------------------------------------ names that end in a newline
    Case(
        "name-with-final-newline",
        DE,
        3,
        "invalid name",
        dev={"env.yaml": sub(ENV, "metadata: {name: small,", 'metadata: {name: "small\\n",')},
    ),
    Case(
        "label-value-with-final-newline",
        DE,
        3,
        "invalid label value",
        dev={"env.yaml": sub(ENV, "labels: {size: small}", 'labels: {size: "small\\n"}')},
    ),
    Case(
        "workload-name-with-final-newline",
        W,
        3,
        "invalid name",
        main={W: sub(WORKLOAD, "{name: app,", '{name: "app\\n",')},
    ),
    Case(
        "label-key-with-final-newline",
        W,
        3,
        "invalid label key",
        main={W: sub(WORKLOAD, "labels: {type: application}", 'labels: {"type\\n": application}')},
    ),
    # ------------------------------------------------------------ control characters in file names
    Case(
        "newline-in-file-name",
        "bad\\nerror: forged.yaml",
        ANY_LINE,
        "a '[' or '{' is never closed",
        main={"bad\nerror: forged.yaml": "kind: [\n"},
    ),
    Case(
        "escape-in-file-name",
        "x\\x1b[31mred.yaml",
        ANY_LINE,
        "a '[' or '{' is never closed",
        main={"x\x1b[31mred.yaml": "kind: [\n"},
    ),
    Case(
        "carriage-return-in-file-name",
        "a\\rerror: b.yaml",
        ANY_LINE,
        "a '[' or '{' is never closed",
        main={"a\rerror: b.yaml": "kind: [\n"},
    ),
    # ------------------------------------------------------------ platform branches
    Case(
        "gitops-branch-git-refuses",
        P,
        8,
        "invalid branch name",
        main={P: dev_env("gitops: {branch: prod/.hidden}")},
    ),
    Case("gitops-branch-lock", P, 8, "invalid branch name", main={P: dev_env("gitops: {branch: dev.lock}")}),
    Case("gitops-branch-option", P, 8, "invalid branch name", main={P: dev_env("gitops: {branch: -x}")}),
    Case(
        "gitops-branch-reflog", P, 8, "invalid branch name", main={P: dev_env("gitops: {branch: 'dev@{1}'}")}
    ),
    Case("control-plane-branch-newline", P, 8, "invalid branch name", main={P: dev_env('branch: "dev\\n"')}),
    Case(
        "gitops-branch-is-promotion-branch",
        P,
        7,
        "promotion and rollback branches",
        main={P: dev_env("gitops: {branch: promoter/qa}")},
    ),
    Case(
        "gitops-branch-is-promoter",
        P,
        7,
        "promotion and rollback branches",
        main={P: dev_env("gitops: {branch: promoter}")},
    ),
    Case(
        "gitops-branch-of-another-environment",
        P,
        8,
        "of environment 'dev'",
        main={P: sub(PIPELINE, "    - name: qa\n", "    - name: qa\n      gitops: {branch: dev}\n")},
    ),
    Case(
        "gitops-folders-overlap",
        P,
        9,
        "overlaps",
        main={
            P: sub(
                sub(
                    PIPELINE,
                    "    - name: dev\n",
                    "    - name: dev\n      gitops: {branch: all, path: envs}\n",
                ),
                "    - name: qa\n",
                "    - name: qa\n      gitops: {branch: all, path: envs/qa}\n",
            )
        },
    ),
    Case(
        "gitops-branch-inside-another",
        P,
        8,
        "cannot live beside branch",
        main={P: sub(PIPELINE, "    - name: qa\n", "    - name: qa\n      gitops: {branch: dev/qa}\n")},
    ),
    # ------------------------------------------------------------ platform URLs
    Case(
        "url-ext-transport",
        P,
        5,
        "remote-helper",
        main={P: sub(PIPELINE, "../platform.git", "'ext::sh -c touch% /tmp/x'")},
    ),
    Case("url-fd-transport", P, 5, "remote-helper", main={P: sub(PIPELINE, "../platform.git", "'fd::3'")}),
    Case(
        "url-ssh-option-host",
        P,
        5,
        "ssh option",
        main={
            P: sub(
                PIPELINE,
                "{url: ../platform.git}",
                "{url: 'ssh://-oProxyCommand=touch%20x/o/r', forge: github}",
            )
        },
    ),
    Case(
        "url-password",
        P,
        5,
        "remove the credentials",
        main={P: sub(PIPELINE, "../platform.git", "'https://me:s3cret-pass@github.com/o/r'")},
    ),
    Case(
        "url-token-as-user",
        P,
        5,
        "remove the credentials",
        main={P: sub(PIPELINE, "../platform.git", "'https://ghp_abcdefabcdef@github.com/o/r'")},
    ),
    Case(
        "url-path-for-github",
        P,
        5,
        "the github forge needs",
        main={P: sub(PIPELINE, "{url: ../platform.git}", "{url: ../platform.git, forge: github}")},
    ),
    Case(
        "url-https-for-local",
        P,
        5,
        "the local forge needs",
        main={P: sub(PIPELINE, "{url: ../platform.git}", "{url: 'https://github.com/o/r', forge: local}")},
    ),
    # ------------------------------------------------------------ control characters from a render
    Case(
        "rendered-carriage-return",
        "templates/flux.yaml",
        ANY_LINE,
        "",
        main={"templates/flux.yaml": template("a: b", "{{ 'c: [\\r\\n d' }}")},
    ),
    Case(
        "rendered-escape",
        "templates/flux.yaml",
        ANY_LINE,
        "",
        main={"templates/flux.yaml": template("a: b", "{{ 'c: \\x1b[31m\\n  - [' }}")},
    ),
]


@pytest.mark.parametrize("case", [pytest.param(c, id=c.id) for c in CASES])
def test_hostile_input(factory: ControlPlaneFactory, case: Case) -> None:
    _check(factory, case)


def test_password_in_url_is_never_echoed(factory: ControlPlaneFactory) -> None:
    factory.create(
        main={P: sub(PIPELINE, "../platform.git", "'https://me:s3cret-pass@github.com/o/r'"), W: WORKLOAD}
    )
    result = CliRunner().invoke(cli, ["validate", "--control-plane", str(factory.path)])
    assert result.exit_code == 2
    assert "s3cret-pass" not in result.output and "s3cret-pass" not in result.stderr


def test_environments_may_share_a_branch_in_separate_folders(factory: ControlPlaneFactory) -> None:
    pipeline = PIPELINE
    for env in ENVS:
        pipeline = sub(
            pipeline,
            f"    - name: {env}\n",
            f"    - name: {env}\n      gitops: {{branch: all, path: {env}}}\n",
        )
    factory.create(main={P: pipeline, W: WORKLOAD})
    result = CliRunner().invoke(cli, ["validate", "--control-plane", str(factory.path)])
    assert result.exit_code == 0, result.output


# ------------------------------------------------------------ option injection into git


INJECTIONS = ["--upload-pack=touch {m};false", "--output={m}", "-otouch {m}", "--exec=touch {m}"]


@pytest.mark.parametrize("value", INJECTIONS)
@pytest.mark.parametrize("command", ["validate", "render", "promote"])
def test_commit_that_is_an_option_is_refused(
    factory: ControlPlaneFactory, tmp_path: Path, value: str, command: str
) -> None:
    path = factory.create(platform_branches=ENVS)
    subprocess.run(["git", "-C", str(path), "remote", "add", "origin", str(path)], check=True)
    marker = tmp_path / "pwned"
    args = [command, "--control-plane", str(path), "--commit", value.format(m=marker)]
    if command == "render":
        args += ["--env", "dev", "--out", str(tmp_path / "out")]
    before = factory.refs()
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 2, result.output
    assert not marker.exists()
    assert result.stderr.startswith("error: --commit '-") and result.stderr.count("\n") == 1
    assert factory.refs() == before


@pytest.mark.parametrize("value", INJECTIONS)
def test_main_branch_and_rollback_target_that_are_options_are_refused(
    factory: ControlPlaneFactory, tmp_path: Path, value: str
) -> None:
    path = factory.create(platform_branches=ENVS)
    marker = tmp_path / "pwned"
    for args in (
        ["validate", "--main-branch", value.format(m=marker)],
        ["rollback", "--env", "dev", "--to", value.format(m=marker)],
    ):
        result = CliRunner().invoke(cli, [*args, "--control-plane", str(path)])
        assert result.exit_code == 2, result.output
        assert not marker.exists()


def test_git_never_reads_an_operand_as_an_option(factory: ControlPlaneFactory, tmp_path: Path) -> None:
    """Below the validation, the one argv builder puts user values after --end-of-options."""
    path = factory.create()
    subprocess.run(["git", "-C", str(path), "remote", "add", "origin", str(path)], check=True)
    marker = tmp_path / "pwned"
    cp = ControlPlane(path)
    assert cp._fetch(f"--upload-pack=touch {marker};false") is False
    assert Git(path).rev_parse(f"--output={marker}") is None
    assert Git(path).read_file("main", f"--output={marker}") is None
    assert not marker.exists()


@pytest.mark.parametrize(
    ("text", "ok"),
    [
        ("main", True),
        ("HEAD~2", True),
        ("0123abcd", True),
        ("v1.2.3", True),
        ("origin/main^2", True),
        ("-x", False),
        ("main\n", False),
        ("a..b", False),
        ("HEAD@{1}", False),
        ("main:promoter.yaml", False),
        ("x y", False),
    ],
)
def test_revisions_follow_gits_ref_rules(text: str, ok: bool) -> None:
    assert valid_revision(text) is ok


@pytest.mark.parametrize(
    ("name", "ok"),
    [
        ("dev", True),
        ("team/dev", True),
        ("prod/.hidden", False),
        ("a.lock", False),
        ("x//y", False),
        ("-d", False),
        ("HEAD", False),
    ],
)
def test_branches_follow_gits_ref_rules(name: str, ok: bool) -> None:
    assert valid_branch(name) is ok


# ------------------------------------------------------------ one line, no echo of secrets


@pytest.mark.parametrize(
    ("text", "line"),
    [
        ("a\nb", "a\\nb"),
        ("a\r\nb", "a\\r\\nb"),
        ("\x1b[31mred", "\\x1b[31mred"),
        ("x\u2028y\x85z", "x\\u2028y\\x85z"),
        ("plain: ok", "plain: ok"),
    ],
)
def test_one_line_escapes_every_control_character(text: str, line: str) -> None:
    assert one_line(text) == line


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("https://u:p4ss@host/x", "https://***@host/x"),
        ("fetch http://tok3n@h/o/r failed", "fetch http://***@h/o/r failed"),
        ("ssh://git:pw@h/o/r", "ssh://***@h/o/r"),
        ("ssh://git@h/o/r", "ssh://git@h/o/r"),
    ],
)
def test_urls_are_shown_without_credentials(text: str, shown: str) -> None:
    assert redact(text) == shown


@pytest.mark.parametrize(
    ("url", "forge", "ok"),
    [
        ("https://github.com/o/r", "github", True),
        ("git@github.com:o/r.git", "github", True),
        ("ssh://git@ghe.example.com:2222/o/r", "github", True),
        ("/srv/platform repo", "local", True),
        ("file:///srv/platform", "local", True),
        ("ext::sh -c id", "github", False),
        ("-oProxyCommand=x@h:o/r", "github", False),
        ("https://github.com/o/r", "local", False),
        ("../platform", "github", False),
        ("ftp://h/o/r", "github", False),
    ],
)
def test_platform_urls_per_forge(url: str, forge: str, ok: bool) -> None:
    assert (url_problem(url, forge) is None) is ok
