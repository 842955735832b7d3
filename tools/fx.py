"""Dated, configurable currency conversion for budgets: catalog prices are USD, budgets may be EUR or IDR."""

from __future__ import annotations

import json
import os
from functools import lru_cache
from pathlib import Path

from pydantic import BaseModel, Field, ValidationError

FX_FILE = Path(__file__).parent / "data" / "fx_rates.json"
ENV_VAR = "GPU_ADVISOR_FX_RATES"


class FxTable(BaseModel):
    """Units of each currency per one unit of `base`, valid on `date`, from `source`."""

    date: str
    source: str
    base: str = "EUR"
    rates: dict[str, float] = Field(description="Currency code -> units per one `base`.")


class FxUsed(BaseModel):
    """The conversion applied to a budget, returned with the ranking."""

    from_currency: str
    to_currency: str = "USD"
    rate: float = Field(description="Units of `to_currency` per one unit of `from_currency`.")
    date: str
    source: str


@lru_cache(maxsize=8)
def _read(path: str) -> FxTable:
    """Parse one rate file (cached per path)."""
    try:
        table = FxTable.model_validate(json.loads(Path(path).read_text(encoding="utf-8")))
    except OSError as error:
        raise ValueError(f"cannot read exchange-rate file '{path}': {error.strerror or error}") from None
    except (json.JSONDecodeError, ValidationError) as error:
        raise ValueError(f"exchange-rate file '{path}' is malformed: {str(error).splitlines()[0]}") from None
    bad = [code for code, value in table.rates.items() if not value > 0]
    if bad or table.rates.get(table.base) not in (None, 1.0):
        raise ValueError(f"exchange-rate file '{path}': rates must be positive and the base must be 1")
    return table


def load_fx(path: str | Path | None = None) -> FxTable:
    """Rate table from `path`, else from $GPU_ADVISOR_FX_RATES, else the shipped tools/data/fx_rates.json."""
    chosen = path or os.environ.get(ENV_VAR) or FX_FILE
    return _read(str(Path(chosen).expanduser()))


def to_usd(amount: float, currency: str, table: FxTable | None = None) -> tuple[float, FxUsed]:
    """Convert `amount` in `currency` to USD with the table's dated rate."""
    table = table or load_fx()
    rates = {table.base: 1.0, **table.rates}
    code = currency.upper()
    if code not in rates or "USD" not in rates:
        raise ValueError(f"no exchange rate for {code} to USD in the rate table dated {table.date}")
    rate = rates["USD"] / rates[code]
    return amount * rate, FxUsed(from_currency=code, rate=rate, date=table.date, source=table.source)
