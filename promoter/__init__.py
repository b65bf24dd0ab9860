"""promoter: promote a GitOps control plane through environments, gated on rollout health.

The public API is small: load a control plane, render an environment, run a promotion.
"""

from __future__ import annotations

from promoter.errors import (
    ConfigError,
    GateFailed,
    GateTimedOut,
    InputError,
    PromoterError,
    PromotionFailed,
    TemplateError,
)


def __getattr__(name: str) -> str:
    """``__version__``: the installed distribution's, which setuptools-scm took from the git tag
    at build time; read when asked (importlib.metadata takes 10 ms: more than the rest of
    ``import promoter``, and an eighth of ``promoter report-status``'s start, which never asks)."""
    if name != "__version__":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from importlib import metadata  # heavy (10 ms, as above): loads only when the version is asked for

    try:
        return metadata.version("promoter")
    except metadata.PackageNotFoundError:  # the sources on sys.path with nothing installed
        return "0+unknown"


__all__ = [
    "ConfigError",
    "GateFailed",
    "GateTimedOut",
    "InputError",
    "PromoterError",
    "PromotionFailed",
    "TemplateError",
    "__version__",
]
