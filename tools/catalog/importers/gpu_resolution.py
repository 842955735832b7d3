"""What GPU a catalog row rents: canonical name, form factor, usable memory per GPU, and the GPU-to-GPU path inside
the instance (with whether that path was stated or assumed). Per-cloud quirks from ``shared/reference/hardware.md``
§5 and ``shared/data/skypilot-catalog-v7/SOURCE.md``."""

from __future__ import annotations

import re
from dataclasses import dataclass

from tools.gpus import GpuSpec, gpu_variants, parse_gpu_name
from tools.providers import all_records

GPU_MEMORY_SEMANTICS: dict[str, str] = {
    pid: r.catalog.gpu_memory_in_catalog for pid, r in all_records().items() if r.catalog is not None
}
"""What GpuInfo's ``Gpus[0].MemoryInfo.SizeInMiB`` means per cloud (each record's ``catalog.gpu_memory_in_catalog``,
from SOURCE.md 'Per-cloud caveats'). Other clouds: per GPU, as SkyPilot's own ``list_accelerators`` reads it."""

AGGREGATORS = frozenset(pid for pid, r in all_records().items() if r.catalog is not None and r.catalog.aggregator)
"""Clouds whose instance-type prefix names the underlying provider (``<upstream>_...`` / ``<upstream>__...``)."""

FORM_FACTOR_RULES: list[tuple[str, str, str, str]] = [
    (pid, rule.pattern, rule.form_factor, rule.source)
    for pid, r in all_records().items()
    if r.catalog is not None
    for rule in r.catalog.form_factor_rules
]
"""(cloud, instance-type regex, form factor, source), from each record's ``catalog.form_factor_rules``."""

CATALOG_MEMORY_TOLERANCE = 0.10
"""A per-GPU memory stated by the catalog that differs from the spec table's by more than this fraction is a
different memory variant of the card (vast's 48 GB RTX 4090): the catalog's figure is used for that offer."""


@dataclass(frozen=True)
class ResolvedGpu:
    """The GPU of one catalog row, as far as the row tells."""

    name: str
    """Canonical name (tools.gpus), or the catalog's name when the GPU is not in the spec table."""
    form_factor: str | None
    spec: GpuSpec | None
    vram_gib: float | None


def form_from_text(*texts: str | None) -> str | None:
    """Form factor named in instance types or upstream ids: NVL beats SXM beats PCIe ('h100-nvl-pcie' is NVL);
    'pci' alone counts as PCIe (cudo 'intel-ice-lake-a100-pci_8x...')."""
    joined = " ".join(t for t in texts if t).lower()
    if re.search(r"nvl(?!ink)", joined):
        return "NVL"
    if "sxm" in joined:
        return "SXM"
    if re.search(r"(?<![a-z])pci(?:e|-?express)?(?![a-z])", joined):
        return "PCIe"
    return None


def memory_from_text(*texts: str | None) -> float | None:
    """A GPU memory size written in an instance type or upstream id ('gpu_8x_a100_80gb_sxm4' -> 80)."""
    for text in texts:
        if not text:
            continue
        match = re.search(r"(?<![0-9a-z])(16|24|32|40|48|80|94|96|141|180|192)\s*g(?:b|ib)?(?![0-9a-z])", text.lower())
        if match:
            return float(match.group(1))
    return None


def upstream(cloud: str, instance_type: str) -> str | None:
    """The underlying provider of an aggregator's instance type ('hyperstack_H100x8' -> 'hyperstack'), or None."""
    if cloud not in AGGREGATORS:
        return None
    match = re.match(r"^([a-z0-9]+)_", instance_type, re.IGNORECASE)
    return match.group(1).lower() if match else None


def _catalog_gib(cloud: str, reported_mib: float | None, gpu_count: int) -> float | None:
    """Per-GPU GiB that the row's GpuInfo states, by the cloud's semantics; None when absent or meaningless."""
    semantics = GPU_MEMORY_SEMANTICS.get(cloud, "per_gpu")
    if not reported_mib or semantics == "ignore":
        return None
    per_gpu_mib = reported_mib / gpu_count if semantics == "summed" else reported_mib
    return per_gpu_mib / 1024 if 1024 <= per_gpu_mib <= 400 * 1024 else None


def resolve_gpu(
    cloud: str,
    accelerator: str,
    instance_type: str,
    *,
    info_name: str | None = None,
    upstream_id: str | None = None,
    reported_mib: float | None = None,
    gpu_count: int = 1,
) -> ResolvedGpu:
    """Canonical GPU, form factor and per-GPU memory of one catalog row, from every hint it carries."""
    stated_gib = _catalog_gib(cloud, reported_mib, gpu_count)
    parsed = parse_gpu_name(accelerator) or (parse_gpu_name(info_name) if info_name else None)
    if parsed is None:
        return ResolvedGpu(accelerator.strip(), None, None, round(stated_gib, 2) if stated_gib else None)

    # memory evidence, to tell variants apart (A100 40/80, V100 16/32, H100 NVL)
    memory_gib: float | None = parsed.memory_gb if parsed.memory_gb is not None else stated_gib
    if memory_gib is None:
        memory_gib = memory_from_text(upstream_id, instance_type)
    name = parsed.name
    form = parsed.form_factor
    if memory_gib is not None and parsed.memory_gb is None:
        again = parse_gpu_name(f"{accelerator} {round(memory_gib)}GB")
        if again is not None and again.name.split("-")[0] == parsed.name.split("-")[0]:
            name = again.name
            form = form or again.form_factor

    variants = gpu_variants(name)
    if form is None and info_name:
        named = parse_gpu_name(info_name)  # driver names such as 'NVIDIA-H100-80GB-HBM3' (the SXM card)
        if named is not None and named.name == name:
            form = named.form_factor
    if form is None:
        form = form_from_text(instance_type, upstream_id, info_name)
    if form is None:
        for rule_cloud, pattern, rule_form, _source in FORM_FACTOR_RULES:
            if rule_cloud == cloud and re.search(pattern, instance_type or ""):
                form = rule_form
                break
    forms = {s.form_factor for s in variants}
    if form is not None and form not in forms:
        # the hint names a form this model does not come in (e.g. 'pcie' on an SXM-only table row): ignore it
        form = None
    if form is None and len(forms) == 1:
        form = next(iter(forms))  # the model comes in one form factor only
    spec = next((s for s in variants if s.form_factor == form), None) if form else None
    reference = spec or next((s for s in variants if s.default), None)
    vram = (
        reference.memory_gib
        if reference and reference.memory_gib is not None
        else (round(memory_gib, 2) if memory_gib is not None else None)
    )
    if (
        stated_gib is not None
        and vram is not None
        and cloud in GPU_MEMORY_SEMANTICS
        and abs(stated_gib - vram) > CATALOG_MEMORY_TOLERANCE * vram
    ):
        # another memory variant than the table's (48 GB RTX 4090): the catalog wins, but only for clouds whose
        # SizeInMiB meaning is known (a summed figure read as per GPU would overstate memory)
        vram = round(stated_gib, 2)
    return ResolvedGpu(name, form, spec or (reference if len(variants) == 1 else None), vram)


def interconnect_for(resolved: ResolvedGpu, gpu_count: int) -> tuple[str, float | None, bool]:
    """(kind, unidirectional NVLink GB/s per GPU or None, assumed) for the GPUs inside one instance.

    kind: 'none' for a single GPU; 'nvlink' when all GPUs share NVLink (SXM boards); 'infinity-fabric' for AMD
    Instinct boards (MI300X: its own fabric, not PCIe); 'pcie' otherwise. assumed is True when the catalog does not
    state the path and the conservative one (PCIe) is assumed: form factor unknown, GPU not in the table, or two
    bridge-capable cards (a bridge may or may not be fitted). More than two bridged cards are PCIe as a fact:
    bridges join pairs only, so collectives cross PCIe."""
    if gpu_count <= 1:
        return "none", None, False
    spec = resolved.spec
    if spec is None or spec.form_factor is None:
        return "pcie", None, True
    if spec.gpu_link == "nvlink":
        return "nvlink", spec.nvlink_gbs, False
    if spec.gpu_link == "infinity-fabric":
        return "infinity-fabric", None, False
    if spec.gpu_link == "nvlink-bridge":
        return "pcie", None, gpu_count == 2
    if spec.gpu_link is None:
        return "pcie", None, False
    return "pcie", None, True  # RoCE / ICI parts: not modelled inside one instance, PCIe assumed
