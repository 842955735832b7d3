"""Time of the spot calculator on a huge Poisson tail (deadline odds summed up to k ~ 1.8e15) beside an ordinary
5-hour job, measured side by side in one run (tests/test_fault_inputs.py checks the bounded work in steps).

Run: .venv/bin/python benchmarks/spot_tail.py [--repeat 2000]
"""

from __future__ import annotations

import argparse
import statistics
import time

from tools.spot.risk import SpotRiskRequest, assess_spot, run_model

HUGE = dict(
    job_hours=1000,
    preemption_rate_per_hour=0.5,
    checkpoint_write_s=1,
    restart_overhead_s=1,
    deadline_hours=1e12,
    spot_price_per_hour=1,
    on_demand_price_per_hour=2,
    checkpoint_on_notice=True,
    notice_s=120,
)
ORDINARY = dict(job_hours=5, spot_price_per_hour=1, on_demand_price_per_hour=2, deadline_hours=8)


def per_call_us(body: dict, repeat: int) -> list[float]:
    """Microseconds per uncached assess_spot call, `repeat` times."""
    times = []
    for _ in range(repeat):
        run_model.cache_clear()
        started = time.perf_counter()
        assess_spot(SpotRiskRequest(**body))
        times.append((time.perf_counter() - started) * 1e6)
    return times


def main(argv: list[str] | None = None) -> int:
    """Print p50/p95 per side and the huge/ordinary ratio."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=2000)
    args = parser.parse_args(argv)
    sides = {"ordinary (baseline)": per_call_us(ORDINARY, args.repeat), "huge tail": per_call_us(HUGE, args.repeat)}
    for name, times in sides.items():
        ordered = sorted(times)
        print(f"{name:20} p50 {statistics.median(ordered):8.1f} us   p95 {ordered[int(0.95 * len(ordered))]:8.1f} us")
    ratio = statistics.median(sides["huge tail"]) / statistics.median(sides["ordinary (baseline)"])
    print(f"huge/ordinary p50 ratio: {ratio:.2f}")
    print(f"reproduce: python benchmarks/spot_tail.py --repeat {args.repeat}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
