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

__version__ = "0.1.0"

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
