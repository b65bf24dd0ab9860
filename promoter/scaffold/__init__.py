"""What ``promoter init`` writes: the workflows (``workflows``, ``wake``, ``oncall``), the
answers it reads from the repository and the flags (``setup``), a control-plane skeleton
(``skeleton``), a local first day with a bare platform repo (``local``), and the files written
and the next steps said (``files``, ``steps``). Text is built by pure functions; the writers
are thin.

May import: ``ghactions`` (the heartbeat's crons the workflows use) and everything below it;
never ``demos`` or ``cli``."""
