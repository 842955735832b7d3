"""One record per provider (tools/providers/data/<id>.json): validated on load, read by every part that has a
provider quirk, and a new provider is one file (the CONTRIBUTING recipe, walked with a made-up provider)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tools.providers import DATA_DIR, all_records, load_records

ROOT = Path(__file__).resolve().parents[1]


def test_every_shipped_record_is_valid_and_named_by_its_id() -> None:
    shipped = all_records()
    assert len(shipped) >= 17 and sorted(shipped) == sorted(p.stem for p in DATA_DIR.glob("*.json"))
    assert all(record.sources for record in shipped.values() if record.billing_granularity_s is not None)


def test_each_quirk_reaches_the_part_that_uses_it() -> None:
    """Pricing semantics, catalog reading, spot defaults, refresh list and launchability all come from the records."""
    from agent.export.skypilot import SKYPILOT_CLOUDS
    from tools.catalog.importers.gpu_resolution import AGGREGATORS, GPU_MEMORY_SEMANTICS
    from tools.catalog.price_trust import market_priced_providers
    from tools.catalog.update import DEFAULT_CLOUDS
    from tools.spot.risk import MARKETPLACE_RATE_PER_HOUR, default_preemption_rate

    assert market_priced_providers() == ["mithril"]
    assert GPU_MEMORY_SEMANTICS["vast"] == "summed" and GPU_MEMORY_SEMANTICS["runpod"] == "ignore"
    assert {"shadeform", "primeintellect"} == AGGREGATORS
    assert default_preemption_rate("Vast.ai")[0] == MARKETPLACE_RATE_PER_HOUR
    assert default_preemption_rate("aws")[0] < MARKETPLACE_RATE_PER_HOUR
    assert {"aws", "gcp", "lambda", "runpod", "vast", "mithril", "simplepod"} <= set(DEFAULT_CLOUDS)
    assert "coreweave" not in DEFAULT_CLOUDS and "aws" in SKYPILOT_CLOUDS and "simplepod" not in SKYPILOT_CLOUDS


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"spot_notce_s": 5}, "spot_notce_s"),
        (
            {"pricing": {"on_demand_is_market": "sometimes", "interruptible": False, "spot_kind": None, "source": "x"}},
            "on_demand_is_market",
        ),
        ({"id": "Other"}, "id"),
    ],
)
def test_a_bad_record_is_refused_naming_its_file(tmp_path: Path, change: dict, message: str) -> None:
    record = json.loads((DATA_DIR / "runpod.json").read_text()) | change
    (tmp_path / "runpod.json").write_text(json.dumps(record))
    with pytest.raises(ValueError, match=r"runpod\.json") as error:
        load_records(tmp_path)
    assert message in str(error.value)


NEW_PROVIDER = {
    "id": "acmegpu",
    "display_name": "Acme GPU Cloud",
    "aliases": ["acme"],
    "billing_granularity_s": 60,
    "billing_minimum_s": 60,
    "spot_available": True,
    "spot_notice_s": 30,
    "pricing": {"on_demand_is_market": True, "interruptible": True, "spot_kind": "auction", "source": "test"},
    "catalog": {
        "gpu_memory_in_catalog": "summed",
        "refreshed_by_update": True,
        "form_factor_rules": [{"pattern": "^sxm-", "form_factor": "SXM", "source": "test"}],
    },
    "spot_marketplace": True,
    "skypilot": {"cloud": "acmegpu", "launchable": True},
    "sources": {"billing_granularity_s": "test"},
}

WALK = """
import sys
from pathlib import Path
import tools.providers.records as records
records.DATA_DIR = Path(sys.argv[1])
from agent.export.skypilot import SKYPILOT_CLOUDS
from tools.catalog.importers.gpu_resolution import FORM_FACTOR_RULES, GPU_MEMORY_SEMANTICS
from tools.catalog.price_trust import market_priced_providers
from tools.catalog.update import DEFAULT_CLOUDS
from tools.providers import get_provider, normalise_provider
from tools.spot.risk import MARKETPLACE_RATE_PER_HOUR, default_preemption_rate
print(normalise_provider("Acme"), get_provider("acme").billed_seconds(61), "acmegpu" in market_priced_providers(),
      GPU_MEMORY_SEMANTICS["acmegpu"], any(r[0] == "acmegpu" for r in FORM_FACTOR_RULES), "acmegpu" in DEFAULT_CLOUDS,
      "acmegpu" in SKYPILOT_CLOUDS, default_preemption_rate("acme")[0] == MARKETPLACE_RATE_PER_HOUR)
"""


def test_a_new_provider_is_one_file(tmp_path: Path) -> None:
    """Copy the shipped records, add one file: every part that reads provider quirks sees the new provider."""
    folder = tmp_path / "providers"
    shutil.copytree(DATA_DIR, folder)
    (folder / "acmegpu.json").write_text(json.dumps(NEW_PROVIDER))
    out = subprocess.run(
        [sys.executable, "-c", WALK, str(folder)], capture_output=True, text=True, timeout=120, cwd=ROOT, check=True
    ).stdout.split()
    assert out == ["acmegpu", "120.0", "True", "summed", "True", "True", "True", "True"]
