"""Run the promoter CLI in this process and SIGKILL it right after the n-th side effect of a kind.

Usage: python -m tests.support.killhook KIND N promoter-args...  (KIND: push, merge, status, gate, note,
claim: a notifier's claim of what it is about to send, recorded before any request)
A real process dies by a real SIGKILL: no finally blocks, no atexit, nothing flushed.
"""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import Callable
from typing import Any

import promoter.promotion.gating as orchestrator_module
from promoter.changecontrol.notify import Notifier
from promoter.cli.main import main
from promoter.forges.local import LocalForge
from promoter.forges.notes import NoteStatuses
from promoter.gates import build_gate
from promoter.platform.repo import PlatformRepo


def install(kind: str, n: int) -> None:
    count = 0

    def wrap(this_kind: str, fn: Callable[..., Any]) -> Callable[..., Any]:
        def wrapped(*args: Any, **kwargs: Any) -> Any:
            nonlocal count
            value = fn(*args, **kwargs)
            if this_kind == kind:
                count += 1
                if count == n:
                    os.kill(os.getpid(), signal.SIGKILL)
            return value

        return wrapped

    PlatformRepo.push = wrap("push", PlatformRepo.push)  # type: ignore[method-assign]
    LocalForge.merge_pr = wrap("merge", LocalForge.merge_pr)  # type: ignore[method-assign]
    LocalForge.set_status = wrap("status", LocalForge.set_status)  # type: ignore[method-assign]
    NoteStatuses.post = wrap("note", NoteStatuses.post)  # type: ignore[method-assign]
    Notifier._claim = wrap("claim", Notifier._claim)  # type: ignore[method-assign]

    def build(spec: Any) -> Any:
        gate = build_gate(spec)
        gate.check = wrap("gate", gate.check)  # type: ignore[method-assign]
        return gate

    orchestrator_module.build_gate = build  # type: ignore[assignment]


if __name__ == "__main__":
    install(sys.argv[1], int(sys.argv[2]))
    sys.argv = ["promoter", *sys.argv[3:]]
    main()
