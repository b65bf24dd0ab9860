"""Does each workload's manifests source answer? (``validate --sources``, and ``checkSources:
true`` on an environment before a promotion pushes.) A repo whose URL has a typo renders fine
and gives the clusters a source that never becomes Ready; this asks the source itself, as the
clusters' reconcilers will: a git repo and its branch (``git ls-remote``), an OCI repository
(the registry's v2 API: the tag or digest, else the tag list), a Helm repository's
``index.yaml`` and its chart (and version, when it is an exact one).

Every question is bounded in time and asked once per run. Credentials: git's own (credential
helpers, SSH keys, ``insteadOf``), plus the promoter's GitHub token for a GitHub host; for
HTTP, ``~/.netrc`` (read by requests), and the GitHub token for a GitHub host's registry.
A registry or git server on a loopback address is spoken to over plain HTTP, as Docker does.
"""

from __future__ import annotations

import base64
import os
import re
import subprocess
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

import yaml

from promoter.controlplane.sources import GIT, HELM, OCI, OCI_CHART, SourceKind, kind_for
from promoter.errors import ConfigError
from promoter.forges.github.urls import is_github_host
from promoter.model import MainObjects, Source
from promoter.urls import redact

if TYPE_CHECKING:
    import requests

EXACT_VERSION = re.compile(r"v?\d+\.\d+\.\d+([-+][0-9A-Za-z.+-]*)?")
TIMEOUT = 10.0  # seconds for one question
LOOPBACK = ("127.0.0.1", "localhost", "[::1]", "::1")
MANIFEST_TYPES = ", ".join(
    (
        "application/vnd.oci.image.index.v1+json",
        "application/vnd.oci.image.manifest.v1+json",
        "application/vnd.docker.distribution.manifest.v2+json",
        "application/vnd.docker.distribution.manifest.list.v2+json",
    )
)


@dataclass(frozen=True)
class Wanted:
    """One source a deployment target names: what to ask, and where it was written."""

    kind: SourceKind
    repo: str
    ref: str  # git: the branch; OCI: tag or digest; Helm: the chart
    version: str  # Helm and OCI charts: the version, '' for any


@dataclass(frozen=True)
class Missing:
    target: str  # ``workload/target``
    where: Source
    url: str
    why: str

    def message(self) -> str:
        return f"deployment target {self.target}: its source {self.url} does not answer: {self.why}"


def refuse(missing: list[Missing], what: str) -> None:
    """Exit 2 at the first target whose source does not answer, counting the others."""
    if not missing:
        return
    first = missing[0]
    more = (
        f" (and {len(missing) - 1} more: {', '.join(m.target for m in missing[1:4])})"
        if len(missing) > 1
        else ""
    )
    raise ConfigError(f"{first.message()}{more}; {what}", file=first.where.file, line=first.where.line)


def wanted(manifests: Mapping[str, object]) -> Wanted:
    """What a target's ``manifests`` make its reconciler fetch (the built-in templates' defaults)."""
    repo = str(manifests.get("repo", ""))
    kind = kind_for(repo, "chart" in manifests)
    text = {k: str(v) for k, v in manifests.items() if isinstance(v, str)}
    if kind is GIT:
        return Wanted(kind, repo, text.get("branch", "main"), "")
    if kind is OCI:
        ref = text.get("digest") or text.get("tag") or ("" if "semver" in text else "latest")
        return Wanted(kind, repo, ref, "")
    return Wanted(kind, repo, text.get("chart", ""), text.get("version", ""))


@dataclass
class SourceChecker:
    """Asks each source once (``cache``) within ``timeout`` seconds."""

    environ: Mapping[str, str] = field(default_factory=lambda: os.environ)
    timeout: float = TIMEOUT
    cache: dict[Wanted, str | None] = field(default_factory=dict)

    def check(self, main: MainObjects, environments: Iterable[str] | None = None) -> list[Missing]:
        """The targets (of ``environments``, or all) whose source does not answer."""
        chosen = None if environments is None else set(environments)
        missing = []
        for workload in main.workloads.values():
            for target in workload.targets:
                if chosen is not None and target.environment not in chosen:
                    continue
                want = wanted(target.manifests)
                why = self.problem(want)
                if why is not None:
                    name = f"{workload.name}/{target.name}"
                    missing.append(Missing(name, target.source, redact(want.repo), why))
        return missing

    def problem(self, want: Wanted) -> str | None:
        import requests  # heavy (110 ms, a third of `promoter validate`'s start): only when sources are checked

        if want not in self.cache:
            try:
                self.cache[want] = self._ask(want)
            except requests.RequestException as err:
                self.cache[want] = f"no answer ({type(err).__name__})"
            except subprocess.TimeoutExpired:
                self.cache[want] = f"no answer within {self.timeout:g}s"
        return self.cache[want]

    def _ask(self, want: Wanted) -> str | None:
        if want.kind is GIT:
            return self._git(want)
        if want.kind is HELM:
            return self._helm(want)
        name = want.repo.removeprefix("oci://").rstrip("/")
        if want.kind is OCI_CHART:
            name = f"{name}/{want.ref}"
        version = want.version if _exact(want.version) else ""
        return self._oci(name, version if want.kind is OCI_CHART else want.ref)

    # ------------------------------------------------------------ git

    def _git(self, want: Wanted) -> str | None:
        env = {**self.environ, "GIT_TERMINAL_PROMPT": "0", "GIT_ASKPASS": "true", "LC_ALL": "C"}
        env.update(self._git_token(want.repo))
        proc = subprocess.run(
            ["git", "ls-remote", "--heads", want.repo, f"refs/heads/{want.ref}"],
            capture_output=True,
            timeout=self.timeout,
            env=env,
            stdin=subprocess.DEVNULL,
        )
        if proc.returncode != 0:
            lines = [ln.strip() for ln in proc.stderr.decode(errors="replace").splitlines() if ln.strip()]
            detail = next((ln for ln in lines if ln.startswith("fatal:")), lines[0] if lines else "")
            return f"git ls-remote failed ({redact(detail) if detail else f'exit {proc.returncode}'})"
        if not proc.stdout.strip():
            return f"no branch {want.ref!r}"
        return None

    def _git_token(self, repo: str) -> dict[str, str]:
        """The GitHub token as git's HTTP header for a GitHub host only, through the
        environment (not the command line, which other users of the machine can read)."""
        parts = urlsplit(repo)
        token = self._github_token()
        if not token or parts.scheme != "https" or not is_github_host(parts.netloc, self.environ):
            return {}
        basic = base64.b64encode(f"x-access-token:{token}".encode()).decode()
        return {
            "GIT_CONFIG_COUNT": "1",
            "GIT_CONFIG_KEY_0": f"http.https://{parts.netloc}/.extraheader",
            "GIT_CONFIG_VALUE_0": f"AUTHORIZATION: basic {basic}",
        }

    # ------------------------------------------------------------ HTTP

    def _helm(self, want: Wanted) -> str | None:
        import requests  # heavy, as in ``problem``: loads only when sources are checked

        url = want.repo.rstrip("/") + "/index.yaml"
        response = requests.get(url, timeout=self.timeout)
        if response.status_code != 200:
            return f"no Helm repository index ({url} answered HTTP {response.status_code})"
        try:
            index = yaml.safe_load(response.content)
        except yaml.YAMLError:
            return f"{url} is not a Helm repository index (not YAML)"
        entries = index.get("entries") if isinstance(index, dict) else None
        if not isinstance(entries, dict):
            return f"{url} is not a Helm repository index (no entries)"
        versions = entries.get(want.ref)
        if not versions:
            return f"no chart {want.ref!r} in the repository's index.yaml"
        if _exact(want.version) and not any(
            isinstance(v, dict) and str(v.get("version")) == want.version for v in versions
        ):
            return f"no version {want.version} of chart {want.ref!r} in the repository's index.yaml"
        return None

    def _oci(self, name: str, ref: str) -> str | None:
        host, _, path = name.partition("/")
        scheme = "http" if host.split(":")[0] in LOOPBACK or host.startswith("[::1]") else "https"
        exact = bool(ref)
        url = f"{scheme}://{host}/v2/{path}/" + (f"manifests/{ref}" if exact else "tags/list")
        response = self._registry(url, host, exact)
        if response.status_code == 200:
            return None
        if response.status_code == 404:
            return f"no {'tag ' + repr(ref) if exact else 'repository'} in the registry (HTTP 404)"
        return f"the registry answered HTTP {response.status_code} for {url}"

    def _registry(self, url: str, host: str, exact: bool) -> requests.Response:
        """A GET (HEAD for a manifest), with the anonymous or GitHub-token bearer token the
        registry asks for in ``WWW-Authenticate`` (the distribution spec's token flow)."""
        import requests  # heavy, as in ``problem``: loads only when sources are checked

        method = requests.head if exact else requests.get
        headers = {"Accept": MANIFEST_TYPES}
        response = method(url, headers=headers, timeout=self.timeout)
        params = _token_request(response)
        if params is None:
            return response
        realm = params.pop("realm")
        grant = requests.get(realm, params=params, auth=self._registry_auth(host), timeout=self.timeout)
        bearer = _granted(grant)
        if not bearer:
            return response
        return method(url, headers={**headers, "Authorization": f"Bearer {bearer}"}, timeout=self.timeout)

    def _registry_auth(self, host: str) -> tuple[str, str] | None:
        """The GitHub token as the basic credentials of a token request, for a GitHub host only."""
        token = self._github_token()
        return ("x-access-token", token) if token and is_github_host(host, self.environ) else None

    def _github_token(self) -> str | None:
        return self.environ.get("PROMOTER_GITHUB_TOKEN") or self.environ.get("GITHUB_TOKEN")


def _token_request(response: requests.Response) -> dict[str, str] | None:
    """The parameters (``realm``, ``service``, ``scope``) of the token a 401's
    ``WWW-Authenticate: Bearer`` challenge asks for; None when it asks for none."""
    challenge = response.headers.get("WWW-Authenticate", "")
    if response.status_code != 401 or not challenge.lower().startswith("bearer "):
        return None
    params = dict(part.split("=", 1) for part in challenge[7:].replace('"', "").split(",") if "=" in part)
    return params if params.get("realm") else None


def _granted(grant: requests.Response) -> str | None:
    """The token a token server granted (``token``, or OAuth's ``access_token``)."""
    body = grant.json() if grant.ok else {}
    bearer = body.get("token") or body.get("access_token") if isinstance(body, dict) else None
    return str(bearer) if bearer else None


def _exact(version: str) -> bool:
    """A chart version to look up as it is (``1.2.3``, ``v1.2.3-rc.1``); a range (``*``,
    ``>=1.2``, ``1.x``, ``~1.2``) is matched by the reconciler, not here."""
    return EXACT_VERSION.fullmatch(version) is not None
