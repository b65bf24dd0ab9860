"""The ``promoter/<env>`` statuses on main commits: read once per run, kept in step with what
this run posts (a forge may take a moment to show a status it was just sent)."""

from __future__ import annotations

import time
from collections.abc import Callable

from promoter.clock import iso
from promoter.errors import shorten
from promoter.forges.base import Forge
from promoter.model import DESCRIPTION_LIMIT, Environment, Status, StatusState


class Statuses:
    def __init__(self, forge: Forge, *, repost: bool = True, wall: Callable[[], float] = time.time) -> None:
        """``repost`` False (``--wait none``): a status the commit already has is not posted
        again, so its time (when the phase started, which later runs measure from) stays."""
        self.forge = forge
        self.repost = repost
        self.wall = wall  # the time of day a status posted now is stamped with, as the forge does
        self._cache: dict[str, dict[str, Status]] = {}
        #: post nothing (the scheduling flow re-rendering folders of several main commits
        #: leaves every commit's status as it is: a stopped promotion stays held)
        self.muted = False

    def of(self, commit: str) -> dict[str, Status]:
        """Statuses of a main commit, read once per run and kept in step with what we post."""
        if commit not in self._cache:
            self._cache[commit] = dict(self.forge.get_statuses(commit))
        return self._cache[commit]

    def post(self, commit: str, context: str, state: StatusState, description: str, url: str | None) -> None:
        if self.muted:
            return
        now = self.of(commit).get(context)
        text = shorten(description, DESCRIPTION_LIMIT)
        # A forge keeps the text whole (git notes) or cut at a word (GitHub): either is this status.
        if not self.repost and now and now.state == state and now.description in (description, text):
            return  # the same phase: its time stays (a later run's link would restart its clock)
        self.forge.set_status(commit, context, state, description, url)
        self.of(commit)[context] = Status(context, state, text, url, iso(self.wall()))

    def context_of(self, env: Environment) -> str:
        return self.forge.status_context(env.name)

    def state_of(self, commit: str, context: str) -> str | None:
        status = self.of(commit).get(context)
        return status.state if status else None

    def succeeded(self, commit: str, env: Environment) -> bool:
        return self.state_of(commit, self.context_of(env)) == "success"
