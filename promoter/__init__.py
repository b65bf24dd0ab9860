"""promoter: promote a GitOps control plane through environments, gated on rollout health.

The public API is small: load a control plane, render an environment, run a promotion.
"""

from __future__ import annotations

from importlib import metadata

from promoter.errors import (
    ConfigError,
    GateFailed,
    GateTimedOut,
    InputError,
    PromoterError,
    PromotionFailed,
    TemplateError,
)

try:
    # The installed distribution's, which setuptools-scm took from the git tag at build time.
    __version__ = metadata.version("promoter")
except metadata.PackageNotFoundError:  # the sources on sys.path with nothing installed
    __version__ = "0+unknown"

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
