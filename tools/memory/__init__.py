"""VRAM estimator: per-GPU peak training memory with a breakdown, fit check, limits and ranked fixes.

The names below are imported from their modules on first use (tools/faces.py).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tools.faces import lazy_face

if TYPE_CHECKING:
    from tools.memory.cache import cached_estimate as cached_estimate
    from tools.memory.defaults import DEFAULTS as DEFAULTS
    from tools.memory.defaults import example_sequence as example_sequence
    from tools.memory.estimator import Estimate as Estimate
    from tools.memory.estimator import LayoutQuestion as LayoutQuestion
    from tools.memory.estimator import estimate as estimate
    from tools.memory.estimator import estimate_for_spec as estimate_for_spec
    from tools.memory.estimator import layout_gib as layout_gib
    from tools.memory.estimator import layout_question as layout_question
    from tools.memory.estimator import per_gpu_gib as per_gpu_gib
    from tools.memory.estimator import request_for_plan as request_for_plan
    from tools.memory.estimator import request_for_spec as request_for_spec
    from tools.memory.estimator import request_with_defaults as request_with_defaults
    from tools.memory.estimator import resolve_arch as resolve_arch
    from tools.memory.estimator import vram_for as vram_for
    from tools.memory.peak import FIT_MARGIN as FIT_MARGIN
    from tools.memory.request import EstimateRequest as EstimateRequest
    from tools.memory.setup import Setup as Setup
    from tools.memory.setup import build_setup as build_setup
    from tools.memory.setup import degrees_fit as degrees_fit

FACE = {
    "layout_gib": "estimator",
    "layout_question": "estimator",
    "LayoutQuestion": "estimator",
    "per_gpu_gib": "estimator",
    "DEFAULTS": "defaults",
    "example_sequence": "defaults",
    "Estimate": "estimator",
    "EstimateRequest": "request",
    "FIT_MARGIN": "peak",
    "Setup": "setup",
    "build_setup": "setup",
    "degrees_fit": "setup",
    "cached_estimate": "cache",
    "estimate": "estimator",
    "estimate_for_spec": "estimator",
    "request_for_plan": "estimator",
    "request_for_spec": "estimator",
    "request_with_defaults": "estimator",
    "resolve_arch": "estimator",
    "vram_for": "estimator",
}
__getattr__, __dir__ = lazy_face(__name__, FACE)
__all__ = sorted(FACE)
