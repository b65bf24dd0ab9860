"""Scheduling and config (DESIGN section 4), pure: objects in, assignments and config out.

At scale (hundreds of workloads on hundreds of cluster types) testing every ConfigMap against
every assignment costs millions of label comparisons, so ``assign`` uses a ``ConfigIndex``:
per cluster type, the ConfigMaps that its own labels do not rule out, keyed by one label the
deployment target still has to match. Merged configs are memoised by the ConfigMaps they come
from, and schema checks by the config they check. ``config_maps_for`` keeps the plain
definition; both give the same answer.
"""
