"""GPU spec table: memory, bandwidth, dense TFLOPS, FP8, NVLink and PCIe per GPU, with forgiving name lookup.

The data lives in ``tools/data/gpus.json`` (one row per GPU and form factor, each with its ``source``), compiled from
``shared/reference/hardware.md`` §1 (spec table) and §2.1 (intra-node links). A figure that no source gives is
``None`` — never guessed.

Naming scheme (``GpuSpec.name``)
    Upper-case model name without vendor words or spaces: ``H100``, ``H200``, ``B200``, ``GH200``, ``L4``, ``L40S``,
    ``A10G``, ``T4``, ``MI300X``, ``Gaudi2``, ``TPU-v5e``. NVIDIA workstation cards keep their ``RTX`` prefix and the
    ``A``/``Ada``/``PRO`` marker: ``RTXA6000``, ``RTX6000Ada``, ``RTXPRO6000``; ``RTX6000`` is the Turing Quadro RTX
    6000. GeForce cards: ``RTX4090``, ``RTX3090``, ``RTX3060Ti``. A memory suffix ``-<N>GB`` is part of the name only
    for models sold in several memory sizes with otherwise the same name: ``A100-40GB``/``A100-80GB``,
    ``V100-16GB``/``V100-32GB``. The form factor is a separate field, never part of the name:
    ``"SXM"`` (board-mounted with NVLink/NVSwitch), ``"PCIe"`` (add-in card), ``"NVL"`` (H100 NVL, a PCIe card with
    94 GB and an NVLink bridge), ``"Superchip"`` (GH200/GB200), ``"OAM"`` (AMD Instinct), or ``None`` when unknown.
    A bare ``"A100"`` means the 40 GB card and a bare ``"V100"`` the 16 GB card, as in SkyPilot's catalogs; a model
    with several form factors has a default one (``H100``, ``A100-*``, ``V100-*``: SXM), used when none is asked for.

Memory rule (``GpuSpec.memory_gib``)
    The device memory in GiB that a job can plan with, i.e. what the driver reports as total memory
    (``nvidia-smi --query-gpu=memory.total``, MiB / 1024), taken in this order of preference:

    1. ``memory_rule="driver"``: a driver-reported figure seen in the SkyPilot v7 catalogs of marketplaces that copy
       ``nvidia-smi`` (vast, hyperbolic), e.g. H100 SXM 81559 MiB = 79.65 GiB, H200 143771 MiB = 140.4 GiB,
       RTX 4090 24564 MiB = 23.99 GiB;
    2. ``"cloud-api"``: the per-GPU figure of the AWS EC2 API as copied into SkyPilot's aws catalog (L4 and A10G:
       22888 MiB = 22.35 GiB);
    3. ``"marketed"``: the vendor's capacity in GB read as GiB (GPU memory comes in binary sizes: an "80GB" A100
       reports 81920 MiB = 80 GiB, as the aws/gcp/lambda catalogs show);
    4. ``"catalog"``: only a SkyPilot catalog's per-GPU ``SizeInMiB`` (cards not in hardware.md).

    ``None`` when no source gives a figure (A16).

Link bandwidths
    ``nvlink_gbs`` and ``pcie_gbs`` are **unidirectional** GB/s per GPU — half of NVIDIA's bidirectional figure
    (NVLink4 "900 GB/s" -> 450) — which is the ``B`` that collective-cost formulas such as ring all-reduce
    ``2(n-1)/n * S/B`` want. ``nvlink_gbs`` is ``None`` when the card has no NVLink (or, for the RTX 3090 bridge, when
    no source gives the bandwidth). ``gpu_link`` says which kind of GPU-to-GPU link exists: ``"nvlink"`` (SXM boards,
    all GPUs of the node through NVSwitch), ``"nvlink-bridge"`` (optional 2-way bridge between PCIe cards: pairs
    only), ``"infinity-fabric"``, ``"roce"``, ``"ici"`` or ``None`` (PCIe only). ``fabric_gbs`` is the per-GPU
    unidirectional bandwidth of a fabric that is neither NVLink nor PCIe (MI300X Infinity Fabric: 448 GB/s
    all-to-all), ``None`` for the others.

Coverage
    Every GPU that an offer of the shipped catalog names has memory, memory bandwidth, a dense training rate and a
    GPU-link figure, each with its source (``tests/test_gpus.py::test_every_catalog_gpu_has_sourced_specs``).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, NamedTuple

DATA_FILE = Path(__file__).parent / "data" / "gpus.json"

FORM_FACTORS = ("SXM", "PCIe", "NVL", "Superchip", "OAM")


@dataclass(frozen=True, kw_only=True)
class GpuSpec:
    """Specs of one GPU model in one form factor (per GPU / per chip)."""

    name: str
    """Canonical name, see the module docstring for the scheme."""
    form_factor: str | None
    """'SXM' | 'PCIe' | 'NVL' | 'Superchip' | 'OAM' | None (unknown)."""
    memory_gib: float | None
    """Usable device memory in GiB (driver-reported total where known; see the module docstring)."""
    memory_bandwidth_tbs: float | None
    """Device memory bandwidth, TB/s."""
    bf16_tflops: float | None
    """Dense BF16 tensor TFLOPS (no sparsity; GeForce: FP32-accumulate rate). None if not found or unsupported."""
    fp16_tflops: float | None
    """Dense FP16 tensor TFLOPS (same rate as BF16 on NVIDIA tensor cores; V100/T4: their FP16 tensor rate)."""
    fp8: bool | None
    """FP8 tensor-core support (by compute capability, TransformerEngine support matrix)."""
    nvlink_gbs: float | None
    """Per-GPU NVLink bandwidth, UNIDIRECTIONAL GB/s (NVIDIA's bidirectional figure / 2); None = no NVLink."""
    pcie_gen: int | None
    """Host PCIe generation."""
    pcie_gbs: float | None
    """Host PCIe x16 bandwidth, UNIDIRECTIONAL GB/s (Gen3 16, Gen4 31, Gen5 63; hardware.md §2.1)."""
    source: str
    """Where the figures come from (hardware.md section and its source tags)."""
    vendor: str = "NVIDIA"
    bf16_supported: bool | None = None
    """Whether the GPU can compute in BF16 at all (False for V100, T4: compute capability < 8.0)."""
    gpu_link: str | None = None
    """'nvlink' | 'nvlink-bridge' | 'infinity-fabric' | 'roce' | 'ici' | None (GPU-to-GPU only over PCIe)."""
    fabric_gbs: float | None = None
    """Per-GPU UNIDIRECTIONAL GB/s of a non-NVLink GPU fabric (MI300X Infinity Fabric all-to-all); None otherwise."""
    memory_rule: str | None = None
    """How memory_gib was obtained: 'driver' | 'cloud-api' | 'marketed' | 'catalog'."""
    default: bool = True
    """True for the form factor assumed when a name does not say which."""
    aliases: tuple[str, ...] = field(default=())

    @property
    def key(self) -> str:
        """'NAME' or 'NAME/FORM', unique in the table."""
        return f"{self.name}/{self.form_factor}" if self.form_factor else self.name

    @property
    def has_full_nvlink(self) -> bool:
        """True when every GPU of a node talks over NVLink (SXM boards with NVSwitch), not just bridged pairs."""
        return self.gpu_link == "nvlink" and self.nvlink_gbs is not None

    def training_tflops(self) -> float | None:
        """Dense tensor TFLOPS for mixed-precision training: BF16 where supported, else FP16."""
        return self.bf16_tflops if self.bf16_tflops is not None else self.fp16_tflops


class ParsedGpuName(NamedTuple):
    """What a raw GPU name says: the canonical name, the form factor it names (or None), the memory it names."""

    name: str
    form_factor: str | None
    memory_gb: float | None


_VENDOR_WORDS = {
    "NVIDIA",
    "TESLA",
    "GEFORCE",
    "QUADRO",
    "AMD",
    "INSTINCT",
    "INTEL",
    "HABANA",
    "GOOGLE",
    "GPU",
    "TENSOR",
    "CORE",
    "GENERATION",
    "GRAPHICS",
    "CARD",
}
_MEMORY_TYPE = re.compile(r"^(HBM\d?E?|GDDR\d+X?)$")
_MEMORY = re.compile(r"^(\d+(?:\.\d+)?)(?:GB|G|GIB)$")


def _tokens(raw: str) -> tuple[str, float | None, str | None]:
    """Split a raw name into (key without memory/form words, memory in GB or None, form factor or None)."""
    text = raw.upper().strip()
    text = re.sub(r"[\s_\-/,().:]+", " ", text)
    memory: float | None = None
    form: str | None = None
    keep: list[str] = []
    tokens = text.split()
    for _i, token in enumerate(tokens):
        if token in _VENDOR_WORDS or token == "NVLINK" or _MEMORY_TYPE.match(token):
            continue
        if re.fullmatch(r"SXM\d?", token) or token == "MEGA":
            form = "SXM"
            continue
        if token == "PCIE":
            form = "PCIe"
            continue
        if token == "NVL":
            form = "NVL"
            continue
        if token == "OAM":
            form = "OAM"
            continue
        match = _MEMORY.match(token)
        if match:
            memory = float(match.group(1))
            continue
        if token in {"GB", "GIB"} and keep and re.fullmatch(r"\d+", keep[-1]) and len(keep) > 1:
            memory = float(keep.pop())
            continue
        keep.append(token)
    return "".join(keep), memory, form


def _squash(text: str) -> str:
    return re.sub(r"[^A-Z0-9]", "", text.upper())


def _name_memory(name: str) -> float | None:
    match = re.search(r"-(\d+)GB$", name)
    return float(match.group(1)) if match else None


def _normalise_form(form_factor: str | None) -> str | None:
    if form_factor is None:
        return None
    _, _, form = _tokens(form_factor)
    if form:
        return form
    for known in FORM_FACTORS:
        if form_factor.strip().lower() == known.lower():
            return known
    raise ValueError(f"unknown form factor {form_factor!r}; expected one of {', '.join(FORM_FACTORS)}")


class _Table:
    def __init__(self, rows: list[dict[str, Any]]) -> None:
        self.specs: list[GpuSpec] = []
        self.by_name: dict[str, list[GpuSpec]] = {}
        self.index: dict[str, set[str]] = {}
        self.bare_default: dict[str, str] = {}
        self.exact: dict[str, tuple[str, str | None]] = {}
        for row in rows:
            spec = GpuSpec(**{**row, "aliases": tuple(row.get("aliases", ()))})
            self.specs.append(spec)
            self.by_name.setdefault(spec.name, []).append(spec)
            for label in spec.aliases:
                self.exact.setdefault(_squash(label), (spec.name, spec.form_factor))
            for label in (spec.name, *spec.aliases):
                key, memory, _ = _tokens(label)
                self.index.setdefault(key, set()).add(spec.name)
                if memory is None and _name_memory(spec.name) is not None:
                    self.bare_default.setdefault(key, spec.name)
                if key == _tokens(spec.name)[0] and memory is None:
                    self.bare_default.setdefault(key, spec.name)
        for name, specs in self.by_name.items():
            defaults = [s for s in specs if s.default]
            if len(defaults) != 1:
                raise ValueError(f"gpus.json: {name} needs exactly one default form factor")

    def parse(self, raw: str) -> ParsedGpuName | None:
        if not raw or not raw.strip():
            return None
        key, memory, form = _tokens(raw)
        exact = self.exact.get(_squash(raw))
        if exact is not None and form is None and re.search(r"HBM|GDDR", raw.upper()):
            # a driver name that tells the form only by its memory type: 'NVIDIA H100 80GB HBM3' is the SXM card
            form = exact[1]
        names = self.index.get(key)
        if not names:
            return None
        if len(names) == 1:
            name = next(iter(names))
        elif memory is not None:
            name = min(names, key=lambda n: abs((_name_memory(n) or 0) - memory))
        else:
            name = self.bare_default.get(key) or min(names)
        if form is None and memory is not None:
            form = self._form_by_memory(name, memory)
        return ParsedGpuName(name, form, memory)

    def _form_by_memory(self, name: str, memory: float) -> str | None:
        """A memory size that only one form factor has names it (H100 94GB -> NVL)."""
        specs = self.by_name[name]
        default = next(s for s in specs if s.default)
        if default.memory_gib is None or abs(default.memory_gib - memory) <= 0.06 * memory:
            return None
        best = min(specs, key=lambda s: abs((s.memory_gib or 0) - memory))
        return best.form_factor if best is not default else None


@lru_cache(maxsize=1)
def _table() -> _Table:
    data = json.loads(DATA_FILE.read_text(encoding="utf-8"))
    return _Table(data["gpus"])


def parse_gpu_name(raw: str) -> ParsedGpuName | None:
    """Parse a GPU name as clouds, drivers and people write it; None when the model is not in the table."""
    return _table().parse(raw)


def canonical_gpu_name(raw: str) -> str | None:
    """Canonical name for any spelling ('a100 80gb', 'A100-SXM4-80GB', '4090', 'NVIDIA H100 80GB HBM3'), or None."""
    parsed = parse_gpu_name(raw)
    return parsed.name if parsed else None


@lru_cache(maxsize=4096)
def lookup_gpu(name: str, form_factor: str | None = None) -> GpuSpec | None:
    """Spec row for a GPU name in any spelling; the form factor comes from the argument, else from the name
    ('H100-SXM', 'A100 80GB PCIe', 'H100 NVL'), else the model's default. None when unknown, or when the model does
    not come in the form factor asked for."""
    parsed = parse_gpu_name(name)
    if parsed is None:
        return None
    form = _normalise_form(form_factor) or parsed.form_factor
    specs = _table().by_name[parsed.name]
    if form is None:
        return next(s for s in specs if s.default)
    return next((s for s in specs if s.form_factor == form), None)


def gpu_variants(name: str) -> list[GpuSpec]:
    """All form factors of one model (e.g. H100: SXM, NVL, PCIe); [] when unknown."""
    parsed = parse_gpu_name(name)
    return list(_table().by_name[parsed.name]) if parsed else []


def all_gpus() -> list[GpuSpec]:
    """Every row of the table, in file order."""
    return list(_table().specs)


def gpu_names() -> list[str]:
    """Every canonical name, once each, in file order."""
    return list(_table().by_name)


def closest_gpu_names(raw: str, limit: int = 3) -> list[str]:
    """The known GPU names closest in spelling to `raw` (for "unknown GPU 'H900'; closest: H100, H200, ...")."""
    from rapidfuzz import fuzz, process

    found = process.extract(raw.upper(), gpu_names(), scorer=fuzz.ratio, limit=limit)
    return [name for name, _score, _index in found]


def gpu_family_names(raw: str) -> list[str]:
    """Canonical names a loose query means: 'A100' -> ['A100-80GB', 'A100-40GB'] (any memory size), 'A100 80GB' ->
    ['A100-80GB'], 'H100' -> ['H100']; [] when unknown. For filters, where a bare 'A100' should not mean 40 GB only."""
    parsed = parse_gpu_name(raw)
    if parsed is None:
        return []
    if parsed.memory_gb is not None or _name_memory(parsed.name) is None:
        return [parsed.name]
    table = _table()
    names = table.index.get(_tokens(raw)[0], {parsed.name})
    return [n for n in table.by_name if n in names]
