"""The GitHub Actions runtime: what a step of the promoter writes to its runner (step outputs,
the step summary, annotations and masks, log groups), the heartbeat's cadence, the diff's pull
request comment, and the rehearsal of the promotion workflow on a laptop. Everything here is a
no-op outside Actions, or says so.

May import: the promotion flows' reports and everything below them (``promotion`` and lower);
never ``runtime``'s siblings above it, ``scaffold``, ``demos`` or ``cli``."""
