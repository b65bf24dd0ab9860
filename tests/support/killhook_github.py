"""Run the promoter CLI (github forge) in this process and SIGKILL it right after the n-th side
effect of a kind.

Usage: python -m tests.support.killhook_github KIND N promoter-args...

KIND is one of
- ``render``: the promotion commit written into the platform cache (nothing pushed yet);
- ``push``: a push to the platform repo that landed;
- ``create_pr``, ``label``, ``update_pr``, ``merge``, ``comment``: that GitHub request answered;
- ``status``: a ``promoter/<env>`` status posted on the control-plane commit;
- ``gate``: a gate check returned;
- ``write``: any of push, create_pr, label, update_pr, merge, status, comment (the side effects
  that stay on GitHub) not yet in ``KILLHOOK_LOG``: a chain of runs, each killed after the next
  write, walks through every write even where a resumed run does one again;
- ``crash``: raise an exception naming the credentials after the n-th write, instead of dying
  (a crash log);
- ``none``: no hook (a rerun).

A real process dies by a real SIGKILL: no finally blocks, no atexit, nothing flushed. As in the
in-process GitHub tests, the CLI's clock is a FakeClock: GitHub's request spacing (1 s between
writes, 3 s before a PR is created or merged) and poll intervals pass without sleeping.

``KILLHOOK_LOG``: append ``kind<TAB>what`` for the side effect the process dies after.
``KILLHOOK_TRACE``: append ``kind<TAB>what`` for every side effect, dying or not.
``KILLHOOK_ARGV_LOG``: append the argv of every process the promoter starts, one JSON list a
line, so that a test can show that no token is ever on a command line.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Callable
from typing import Any

import promoter.clock
import promoter.promotion.gating as orchestrator_module
from promoter.cli.main import main
from promoter.forges.github.api import GitHubHttp
from promoter.forges.github.forge import GitHubForge
from promoter.forges.github.repo import GitHubPlatformRepo
from promoter.gates import build_gate
from promoter.platform.repo import PlatformRepo

#: GitHubHttp call names that are side effects on a PR, by kind (statuses are hooked on the forge).
CALLS = {
    "create PR": "create_pr",
    "label PR": "label",
    "update PR": "update_pr",
    "merge PR": "merge",
    "comment on PR": "comment",
}
WRITES = ("push", *CALLS.values(), "status")
KINDS = ("render", *WRITES, "gate", "write", "crash", "none")


class Hook:
    """Counts side effects and ends the process after the chosen one."""

    def __init__(self, kind: str, n: int) -> None:
        if kind not in KINDS:
            raise SystemExit(f"killhook_github: unknown kind {kind!r}; one of {', '.join(KINDS)}")
        self.kind, self.n, self.count = kind, n, 0
        self.environment = ""  # the environment whose PR the forge is working on
        self.log, self.trace = os.environ.get("KILLHOOK_LOG"), os.environ.get("KILLHOOK_TRACE")
        self.done: set[str] = set()
        if kind == "write" and self.log and os.path.exists(self.log):
            with open(self.log) as handle:
                self.done = set(handle.read().splitlines())

    def after(self, kind: str | None, what: str) -> None:
        if kind is None:
            return
        line = f"{kind}\t{what}"
        if self.trace:
            _append(self.trace, line)
        chosen = kind == self.kind or (self.kind in ("write", "crash") and kind in WRITES)
        if not chosen or line in self.done:
            return
        self.count += 1
        if self.count != self.n:
            return
        if self.log:
            _append(self.log, line)
        if self.kind == "crash":
            names = ("PROMOTER_GITHUB_TOKEN", "PROMOTER_GITHUB_APP_PRIVATE_KEY")
            secrets = " ".join(os.environ[name] for name in names if os.environ.get(name))
            raise RuntimeError(f"crashed after {kind} {what} with {secrets}")
        os.kill(os.getpid(), signal.SIGKILL)

    def wrap(self, kind: str, fn: Callable[..., Any], what: Callable[..., str]) -> Callable[..., Any]:
        def wrapped(*args: Any, **kwargs: Any) -> Any:
            value = fn(*args, **kwargs)
            self.after(kind, what(*args, **kwargs))
            return value

        return wrapped

    def on_pr(self, fn: Callable[..., Any], environment: Callable[..., str]) -> Callable[..., Any]:
        """Remember which environment's PR the forge is working on, for the log."""

        def wrapped(*args: Any, **kwargs: Any) -> Any:
            self.environment = environment(*args, **kwargs)
            return fn(*args, **kwargs)

        return wrapped


def _append(path: str, line: str) -> None:
    with open(path, "a") as handle:
        handle.write(line + "\n")


def install(kind: str, n: int) -> None:
    hook = Hook(kind, n)
    http_call = GitHubHttp.call

    def call(self: GitHubHttp, name: str, fn: Callable[[], Any], **kwargs: Any) -> Any:
        value = http_call(self, name, fn, **kwargs)
        hook.after(CALLS.get(name), f"{name} ({hook.environment})")
        return value

    GitHubHttp.call = call  # type: ignore[method-assign]
    PlatformRepo.commit = hook.wrap(  # type: ignore[method-assign]
        "render", PlatformRepo.commit, lambda repo, plan, root, parents, message: message.split("\n")[0]
    )
    GitHubPlatformRepo.push = hook.wrap(  # type: ignore[method-assign]
        "push", GitHubPlatformRepo.push, lambda repo, updates: ", ".join(updates)
    )
    GitHubForge.set_status = hook.wrap(  # type: ignore[method-assign]
        "status",
        GitHubForge.set_status,
        lambda forge, commit, context, state, description, *rest: f"{context} {state}: {description}",
    )
    GitHubForge.open_pr = hook.on_pr(GitHubForge.open_pr, lambda forge, env, *rest: env.name)  # type: ignore[method-assign]
    for method in ("refresh_pr", "merge_pr", "comment"):
        original = getattr(GitHubForge, method)
        setattr(GitHubForge, method, hook.on_pr(original, lambda forge, pr, *rest: pr.environment))

    def build(spec: Any) -> Any:
        gate = build_gate(spec)
        gate.check = hook.wrap("gate", gate.check, lambda ctx: gate.describe())  # type: ignore[method-assign]
        return gate

    orchestrator_module.build_gate = build  # type: ignore[attr-defined]


def log_argv(path: str) -> None:
    """Append the argv of every process started from here to ``path``."""
    real_init = subprocess.Popen.__init__

    def init(self: subprocess.Popen[Any], args: Any, *rest: Any, **kwargs: Any) -> None:
        argv = [str(a) for a in args] if isinstance(args, list | tuple) else [str(args)]
        _append(path, json.dumps(argv))
        real_init(self, args, *rest, **kwargs)

    subprocess.Popen.__init__ = init  # type: ignore[method-assign]


if __name__ == "__main__":
    install(sys.argv[1], int(sys.argv[2]))
    promoter.clock.RealClock = promoter.clock.FakeClock  # type: ignore[misc, assignment]
    if os.environ.get("KILLHOOK_ARGV_LOG"):
        log_argv(os.environ["KILLHOOK_ARGV_LOG"])
    sys.argv = ["promoter", *sys.argv[3:]]
    main()
