"""Change control at the point a step would change something (DESIGN section 13): a hold, then a
closed change window, stop the promotion before it pushes or merges; only ``--force`` with a
reason passes, and the override is recorded with the holds. A hold wins over a window, and both
over an approval (the environment run asks this before it asks for one).

A step already landed is not stopped: its gates and bake go on (they change nothing), and what
it would land next (the next wave, the next environment) meets the hold or the window.
"""

from __future__ import annotations

import json
import os

from promoter.changecontrol import windows as change_windows
from promoter.changecontrol.holds import HOLD_LABEL, Hold, HoldBook, actor
from promoter.clock import Clock, format_duration
from promoter.console import Console
from promoter.forges.base import Forge
from promoter.gates.hubapi import URL_ENV, send_holds
from promoter.model import Environment, MainObjects, Pipeline, WaitFor, Windows, promotion_branch
from promoter.promotion.options import Options
from promoter.promotion.waiting import Wait, Waiting
from promoter.promotion.waves import Step


class ChangeControl:
    """Holds and windows of one run: the holds read once, the windows of ``policy`` (the Pipeline
    on main's head: the rules as they are now, not as the promoted commit had them)."""

    def __init__(
        self,
        book: HoldBook | None,
        clock: Clock,
        console: Console,
        options: Options,
        policy: Pipeline | None = None,
    ) -> None:
        self.book = book
        self.clock = clock
        self.out = console
        self.opts = options
        self.policy = policy
        self.overridden: dict[tuple[str, str], str] = {}  # (environment, wave) -> what was passed
        self.told: dict[str, str] = {}  # environment -> the holds the hub was last told, as JSON

    def stop(self, main: MainObjects, env: Environment, step: Step, forge: Forge | None) -> None:
        """Raise Waiting where ``step`` of ``env`` is held or outside its windows (or, waiting in
        the run, sleep until a window opens). ``forge``: where a hold label may be, given only
        while the environment's promotion PR is open (no request otherwise)."""
        if (env.name, step.name) in self.overridden:
            return
        hold = self.hold_on(env, step.name, forge)
        self.tell_hub(env.name, hold)
        if hold is not None:
            self._stop(main, env, step, "hold", hold.describe(), hold.at, hold.until)
            return
        windows = self.windows_of(env, step)
        closed = change_windows.closed(windows, self.clock.wall())
        while closed is not None and self.opts.waits and closed.opens is not None and not self._passes():
            left = closed.opens - self.clock.wall()
            self.out.say(f"{step.prefix(env.name)}: {closed.describe()}; waiting {format_duration(left)}")
            self.clock.sleep(left)
            self._refresh()
            if self.hold_on(env, step.name, forge) is not None:
                return self.stop(main, env, step, forge)
            closed = change_windows.closed(windows, self.clock.wall())
        if closed is not None:
            self._stop(main, env, step, "window", closed.describe(), closed.since, closed.opens)

    def hold_on(self, env: Environment, wave: str, forge: Forge | None) -> Hold | None:
        """The hold that stops ``wave`` of ``env`` ("": the whole): recorded, else (with
        ``forge``) a label on its open promotion PR."""
        now = self.clock.wall()
        recorded = [h for h in self.book.holds(now)] if self.book else []
        found = next((h for h in recorded if h.covers(env.name, wave)), None)
        if found is not None or forge is None:
            return found
        pr = forge.find_pr(env, promotion_branch(env.name))
        if pr is not None and pr.state == "open" and HOLD_LABEL in pr.labels:
            return Hold(env.name, None, f"label {HOLD_LABEL}", "label", now, origin="label", url=pr.url)
        return None

    def tell_hub(self, environment: str, found: Hold | None) -> None:
        """The environment's holds in force (recorded, and ``found`` when it is a label's), at the
        hub named by PROMOTER_HUB_URL, once per run unless they change: what its pages show as
        held. A hub that does not answer is a warning."""
        if self.opts.dry_run or not os.environ.get(URL_ENV):
            return
        now = self.clock.wall()
        held = [h for h in (self.book.holds(now) if self.book else []) if h.environment == environment]
        if found is not None and found.origin == "label":
            held.append(found)
        told = [h.to_json() for h in held]
        key = json.dumps([{**h, "at": None} if h["origin"] == "label" else h for h in told], sort_keys=True)
        if self.told.get(environment) == key:
            return
        self.told[environment] = key
        problem = send_holds(environment, told)
        if problem:
            self.out.say(f"{environment}: warning: {problem}")

    def windows_of(self, env: Environment, step: Step) -> tuple[Windows, ...]:
        """The environment's windows and its wave's (every wave's for a whole step), as ``policy``
        has them."""
        current = self.policy.environment(env.name) if self.policy else None
        source = current or env
        waves = [w for w in source.waves if not step.name or w.name == step.name]
        found = [source.windows, *(w.windows for w in waves)]
        return tuple(w for w in found if w is not None)

    def pr_note(self, env: Environment, step: Step) -> str | None:
        """What the promotion PR says of change control: a hold or window passed with --force,
        and the windows a merge waits for."""
        notes = [self.overridden[(env.name, step.name)]] if (env.name, step.name) in self.overridden else []
        notes += [
            f"merges only inside its change windows ({change_windows.describe(w)})"
            for w in self.windows_of(env, step)
        ]
        return "; ".join(notes) or None

    def _passes(self) -> bool:
        return self.opts.force and bool(self.opts.reason)

    def _refresh(self) -> None:
        if self.book is not None:
            self.book.records.read(fresh=True)

    def _stop(
        self,
        main: MainObjects,
        env: Environment,
        step: Step,
        kind: WaitFor,
        what: str,
        since: float,
        until: float | None,
    ) -> None:
        where = step.prefix(env.name)
        if self._passes():
            assert self.opts.reason is not None
            self.out.say(f"{where}: {what}; passed with --force: {self.opts.reason}")
            if self.book is not None and not self.opts.dry_run:
                by = actor()
                self.book.override(what, where, main.commit, by, self.opts.reason, self.clock.wall())
            self.overridden[(env.name, step.name)] = f"{what}; passed with --force: {self.opts.reason}"
            return
        hint = " (--force passes it only with --reason)" if self.opts.force else ""
        raise Waiting(Wait(kind, env.name, step.name, since, until, f"{where}: {what}{hint}"))
