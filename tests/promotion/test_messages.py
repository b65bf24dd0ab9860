"""The promotion PR's title, body and labels and the promotion commit's message from ``messages``
templates: the context, the rendering, and whole promotions on the local forge, real git."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner, Result

from promoter.cli.main import cli
from promoter.errors import TemplateError
from promoter.gitcmd import Git
from promoter.model import Environment, GateSpec, Manifest, Source
from promoter.platform.objects import Change
from promoter.promotion.messages import Facts, Texts, commit_facts, default_texts, texts
from tests.support.helpers import ENV, WORKLOAD, ControlPlaneFactory, stage
from tests.support.helpers import pipeline as build_pipeline

DOCS = Path(__file__).resolve().parents[2] / "docs" / "configuration.md"
ADA = ("Ada Lovelace", "ada@example.com")


def commit(repo: Path, *paragraphs: str, when: str = "2026-03-01T09:30:00+01:00") -> str:
    """A commit by Ada at ``when`` with the message ``paragraphs`` (the first is the subject)."""
    if not (repo / ".git").exists():
        subprocess.run(["git", "init", "-q", "-b", "main", str(repo)], check=True)
    who = {
        "GIT_AUTHOR_NAME": ADA[0],
        "GIT_AUTHOR_EMAIL": ADA[1],
        "GIT_AUTHOR_DATE": when,
        "GIT_COMMITTER_DATE": when,
    }
    args = [f"-m{p}" for p in paragraphs]
    subprocess.run(
        ["git", "-C", str(repo), "commit", "-q", "--allow-empty", *args],
        check=True,
        env={**os.environ, **who},
    )
    return Git(repo).out("rev-parse", "HEAD")


def environment(**messages: str | list[str]) -> Environment:
    """Environment ``qa`` with ``messages`` (a list: labels), each template at line 10."""
    found = {
        key: tuple(Manifest(v, 10 + i) for i, v in enumerate(value))
        if isinstance(value, list)
        else (Manifest(value, 10),)
        for key, value in messages.items()
    }
    return Environment(
        "qa",
        "qa",
        "qa",
        "envs/qa",
        "auto",
        600.0,
        (GateSpec("soak", "5m", Source("promoter.yaml", 9)),),
        Source("promoter.yaml", 8),
        messages=found,
    )


def facts(main: dict[str, object]) -> Facts:
    changes = {"small": Change(2, 1, 0), "large": Change(0, 0, 3), ".promoter": Change(changed=1)}
    return Facts(
        main, "", "", changes, (GateSpec("soak", "5m", Source("promoter.yaml", 9)),), "https://ci/run/1"
    )


def test_commit_facts_are_the_main_commits_metadata(tmp_path: Path) -> None:
    sha = commit(
        tmp_path / "cp",
        "Bump api to 1.4",
        "Pins the chart.",
        "Co-authored-by: Grace Hopper <grace@example.com>\nSigned-off-by: Ada Lovelace <ada@example.com>",
    )
    assert commit_facts(Git(tmp_path / "cp"), sha) == {
        "sha": sha,
        "short_sha": sha[:7],
        "subject": "Bump api to 1.4",
        "body": "Pins the chart.\n\nCo-authored-by: Grace Hopper <grace@example.com>\nSigned-off-by: Ada Lovelace <ada@example.com>",
        "author": "Ada Lovelace <ada@example.com>",
        "author_name": "Ada Lovelace",
        "author_email": "ada@example.com",
        "date": "2026-03-01T09:30:00+01:00",
        "trailers": [
            {"key": "Co-authored-by", "value": "Grace Hopper <grace@example.com>"},
            {"key": "Signed-off-by", "value": "Ada Lovelace <ada@example.com>"},
        ],
        "co_authors": ["Grace Hopper <grace@example.com>"],
    }


def test_every_variable_reaches_the_templates(tmp_path: Path) -> None:
    sha = commit(tmp_path / "cp", "Bump api", "Body.", "Co-authored-by: Grace Hopper <grace@example.com>")
    env = environment(
        title="{{ environment.name }}/{{ environment.gitops_branch }}:{{ environment.gitops_path }} {{ main.short_sha }}",
        body=(
            "{% for t in changes.cluster_types %}{{ t.name }} +{{ t.added }} ~{{ t.changed }} -{{ t.removed }}\n{% endfor %}"
            "{{ changes.added }} {{ changes.changed }} {{ changes.removed }} {{ changes.summary }}\n"
            "{% for g in gates %}{{ g.type }}: {{ g.waits_for }}\n{% endfor %}"
            "{{ main.co_authors | join(', ') }} | {{ main.date }} | {{ run_url }} | {{ environment.merge }}"
        ),
        labels=[
            "env/{{ environment.name }}",
            "by/{{ main.author_name | lower | replace(' ', '-') }}",
            "env/qa",
        ],
        commitMessage="{{ default.title }}\n\n{{ main.trailers | map(attribute='key') | join(',') }}\n\n\n",
    )
    default = default_texts("Promote it", "the default body\n")
    got = texts(env, facts(commit_facts(Git(tmp_path / "cp"), sha)), default)
    assert got == Texts(
        title=f"qa/qa:envs/qa {sha[:7]}",
        body=(
            "large +0 ~0 -3\nsmall +2 ~1 -0\n2 1 3 +2 ~1 -3\nsoak: 5m00s\n"
            "Grace Hopper <grace@example.com> | 2026-03-01T09:30:00+01:00 | https://ci/run/1 | auto"
        ),
        labels=("env/qa", "by/ada-lovelace"),  # each label once
        commit_message="Promote it\n\nCo-authored-by\n",
    )


def test_without_templates_the_default_text_is_kept(tmp_path: Path) -> None:
    default = default_texts("Promote abc1234 to qa: x", "body\n")
    assert texts(environment(), facts({}), default) is default
    assert default.commit_message == "Promote abc1234 to qa: x\n\nbody\n"
    only = texts(environment(labels=["a"]), facts({}), default)
    assert (only.title, only.body, only.commit_message, only.labels) == (
        default.title,
        "body\n",
        default.commit_message,
        ("a",),
    )


def test_a_value_only_real_data_exposes_names_the_field_and_line(tmp_path: Path) -> None:
    sha = commit(tmp_path / "cp", "No trailers here")
    env = environment(body="ok\n{{ main.trailers[0].value }}")
    with pytest.raises(TemplateError) as err:
        texts(env, facts(commit_facts(Git(tmp_path / "cp"), sha)), default_texts("t", "b"))
    assert str(err.value).startswith("promoter.yaml:11: messages.body (environment qa): undefined value")


def _docs_block(after: str, language: str) -> str:
    text = DOCS.read_text()
    start = text.index(after)
    found = re.search(rf"```{language}\n(.*?)```", text[start:], re.S)
    assert found is not None
    return found.group(1)


def test_the_docs_example_writes_argo_cds_hydrator_message(tmp_path: Path) -> None:
    """docs/configuration.md's Argo CD example, rendered for the commit it describes, is the
    message it shows; without a body, the hydrator's form too."""
    template = yaml.safe_load(_docs_block("**Argo CD's hydrator message.**", "yaml"))["spec"]["messages"][
        "commitMessage"
    ]
    shown = _docs_block("the promotion commit says:", "text")
    repo = tmp_path / "cp"
    sha = commit(
        repo, "Bump api to 1.4", "Pins the chart.", "Co-authored-by: Grace Hopper <grace@example.com>"
    )
    got = texts(
        environment(commitMessage=template), facts(commit_facts(Git(repo), sha)), default_texts("t", "b")
    )
    assert got.commit_message == shown.replace("3f2a9c1", sha[:7])
    bare = commit(repo, "Bump api to 1.5")
    got = texts(
        environment(commitMessage=template), facts(commit_facts(Git(repo), bare)), default_texts("t", "b")
    )
    assert (
        got.commit_message
        == f"{bare[:7]}: Bump api to 1.5\n\nCo-authored-by: Ada Lovelace <ada@example.com>\n"
    )


# ---------------------------------------------------------------- whole promotions, local forge

MESSAGES = """\
  messages:
    title: "{{ environment.name }}: {{ main.subject }} ({{ main.short_sha }})"
    body: |
      {{ main.author }} asks for {{ environment.name }}
      {{ changes.summary }}
    labels: [promotion-bot, "env/{{ environment.name }}"]
    commitMessage: |
      promote {{ main.short_sha }} to {{ environment.name }}

      {{ default.title }}
"""


def templated(dev: str = "auto", title: str | None = None) -> str:
    """Two environments with the Pipeline's ``MESSAGES``; qa has its own labels and commit message."""
    qa = stage("qa", messages='{labels: [reviewed], commitMessage: "qa {{ main.short_sha }}"}')
    text = build_pipeline(stage("dev", merge=dev), qa)
    text = text.replace("spec:\n", "spec:\n" + MESSAGES)
    return text if title is None else text.replace(MESSAGES.splitlines()[1], f"    title: {title}")


def setup(factory: ControlPlaneFactory, pipeline_text: str) -> str:
    workload = WORKLOAD.replace("environment: prod", "environment: qa")
    factory.create(
        main={"promoter.yaml": pipeline_text, "workloads/app.yaml": workload},
        envs={"dev": {"env.yaml": ENV}, "qa": {"env.yaml": ENV}},
        platform_branches=("dev", "qa"),
    )
    return Git(factory.path).out("rev-parse", "main")


def promote(factory: ControlPlaneFactory, *args: str) -> Result:
    command = ["promote", "--control-plane", str(factory.path), "--poll-interval", "0.1s", *args]
    return CliRunner().invoke(cli, command)


def platform(factory: ControlPlaneFactory, *args: str) -> str:
    return Git(factory.platform).out(*args)


def test_a_promotion_writes_the_templates_text_and_a_rerun_is_a_noop(factory: ControlPlaneFactory) -> None:
    x = setup(factory, templated())
    result = promote(factory)
    assert result.exit_code == 0, result.output
    pr = f"{factory.platform}#promoter/dev"
    assert f"dev: PR {pr} (auto merge, labels promotion-bot, env/dev)" in result.output
    assert f"qa: PR {factory.platform}#promoter/qa (auto merge, labels reviewed)" in result.output
    title = f"dev: initial main ({x[:7]})"
    dev_head = platform(factory, "rev-parse", "promoter/dev")
    assert platform(factory, "log", "-1", "--format=%B", dev_head) == (
        f"promote {x[:7]} to dev\n\nPromote {x[:7]} to dev: initial main"
    )
    assert platform(factory, "log", "-1", "--format=%B", "promoter/qa") == f"qa {x[:7]}"
    # the local forge merges with the PR's title, and keeps its labels as notes of its head
    assert platform(factory, "log", "-1", "--format=%s", "dev") == f"Merge {title}"
    assert platform(factory, "notes", "--ref=promoter-labels", "show", dev_head) == "promotion-bot\nenv/dev"
    qa_head = platform(factory, "rev-parse", "promoter/qa")
    assert platform(factory, "notes", "--ref=promoter-labels", "show", qa_head) == "reviewed"
    before = factory.refs()
    again = promote(factory)
    assert again.exit_code == 0, again.output
    assert "PR " not in again.output
    assert factory.refs() == before


def test_a_rerun_reuses_its_own_promotion_branch(factory: ControlPlaneFactory) -> None:
    """merge: manual, --wait none: the first run pushes and opens the PR; the second finds the
    promotion branch already at this promotion, templated message and all."""
    x = setup(factory, templated(dev="manual"))
    first = promote(factory, "--wait", "none")
    assert first.exit_code == 0, first.output
    head = platform(factory, "rev-parse", "promoter/dev")
    assert platform(factory, "log", "-1", "--format=%s", head) == f"promote {x[:7]} to dev"
    second = promote(factory, "--wait", "none")
    assert second.exit_code == 0, second.output
    assert f"dev: promoter/dev is already at this promotion ({head[:12]})" in second.output
    assert platform(factory, "rev-parse", "promoter/dev") == head
    assert platform(factory, "notes", "--ref=promoter-labels", "show", head) == "promotion-bot\nenv/dev"


def test_a_template_failing_on_real_data_stops_before_any_push(factory: ControlPlaneFactory) -> None:
    """The sample main commit has a trailer, so validate passes; "initial main" has none."""
    setup(factory, templated(title='"{{ main.trailers[0].value }}"'))
    assert CliRunner().invoke(cli, ["validate", "--control-plane", str(factory.path)]).exit_code == 0
    before = factory.refs()
    result = promote(factory)
    assert result.exit_code == 2, result.output
    assert result.stderr.splitlines() == [
        "error: promoter.yaml:6: messages.title (environment dev): undefined value: "
        "list object has no element 0"
    ]
    assert factory.refs() == before
