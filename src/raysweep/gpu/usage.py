"""Resource-usage samples: exact summaries, bounded downsampling and report lines."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

Sample = dict[str, Any]


# -- summary and downsampling ---------------------------------------------
class _Stat:
    """Running weighted mean and peak of one quantity; None values are skipped."""

    def __init__(self) -> None:
        self.weight = 0
        self.total = 0.0
        self.peak: float | None = None

    def add(self, value: float | None, n: int = 1) -> None:
        if value is None:
            return
        self.weight += n
        self.total += value * n
        self.peak = value if self.peak is None else max(self.peak, value)

    @property
    def mean(self) -> float | None:
        return round(self.total / self.weight, 1) if self.weight else None


class Accumulator:
    """Summary statistics fed one sample at a time (merged samples weigh ``n``)."""

    def __init__(self) -> None:
        self.count = 0
        self.first_t: float | None = None
        self.last_t: float | None = None
        self.cpu = _Stat()
        self.ram = _Stat()
        self.ram_total: float | None = None
        self.gpus: dict[int, tuple[_Stat, _Stat]] = {}
        self.gpu_total: dict[int, float | None] = {}

    def add(self, sample: Sample) -> None:
        n = int(sample.get("n", 1))
        self.count += n
        t = sample.get("t")
        if t is not None:
            self.first_t = t if self.first_t is None else min(self.first_t, t)
            self.last_t = t if self.last_t is None else max(self.last_t, t)
        self.cpu.add(sample.get("cpu_pct"), n)
        self.ram.add(sample.get("ram_used_mb"), n)
        self.ram_total = sample.get("ram_total_mb") or self.ram_total
        for gpu in sample.get("gpus") or ():
            util, mem = self.gpus.setdefault(gpu["index"], (_Stat(), _Stat()))
            util.add(gpu.get("util_pct"), n)
            mem.add(gpu.get("mem_used_mb"), n)
            self.gpu_total[gpu["index"]] = gpu.get("mem_total_mb") or self.gpu_total.get(
                gpu["index"]
            )

    def add_peaks(self, summary: dict[str, Any]) -> None:
        """Fold in an earlier summary's exact peaks (its merged samples hold window means)."""
        self.cpu.peak = _max2(self.cpu.peak, summary.get("cpu_pct_peak"))
        self.ram.peak = _max2(self.ram.peak, summary.get("ram_used_mb_peak"))
        for gpu in summary.get("gpus") or ():
            util, mem = self.gpus.setdefault(gpu["index"], (_Stat(), _Stat()))
            util.peak = _max2(util.peak, gpu.get("util_pct_peak"))
            mem.peak = _max2(mem.peak, gpu.get("mem_used_mb_peak"))

    def result(self) -> dict[str, Any]:
        """The summary dict (see :func:`summarize_usage`)."""
        span = None if self.first_t is None or self.last_t is None else self.last_t - self.first_t
        return {
            "samples": self.count,
            "duration_s": None if span is None else round(span, 1),
            "cpu_pct_mean": self.cpu.mean,
            "cpu_pct_peak": self.cpu.peak,
            "ram_used_mb_peak": self.ram.peak,
            "ram_total_mb": self.ram_total,
            "gpus": [
                {
                    "index": index,
                    "util_pct_mean": util.mean,
                    "util_pct_peak": util.peak,
                    "mem_used_mb_peak": mem.peak,
                    "mem_total_mb": self.gpu_total.get(index),
                }
                for index, (util, mem) in sorted(self.gpus.items())
            ],
        }


def earlier_usage(data: Any) -> dict[str, Any] | None:
    """An earlier invocation's resource_usage.json, when it has samples to append to.

    Its ``invocations`` (a file written before they were recorded counts as one).
    """
    if not isinstance(data, dict) or not isinstance(data.get("samples"), list):
        return None
    samples = [s for s in data["samples"] if isinstance(s, dict) and "t" in s]
    invocations = data.get("invocations")
    if not isinstance(invocations, list):
        invocations = [
            {
                "started_at": data.get("started_at"),
                "gpu_ids": data.get("gpu_ids"),
                "samples": len(samples),
                "first_t": samples[0]["t"] if samples else None,
                "last_t": samples[-1]["t"] if samples else None,
            }
        ]
    return {**data, "samples": samples, "invocations": invocations}


def sampled_seconds(invocations: Sequence[dict[str, Any]]) -> float:
    """Seconds sampled over every invocation: the gaps between them (a crash, a night) left out."""
    spans = [
        inv["last_t"] - inv["first_t"]
        for inv in invocations
        if inv.get("first_t") is not None and inv.get("last_t") is not None
    ]
    return round(sum(spans), 1)


def summarize_usage(samples: Sequence[Sample]) -> dict[str, Any]:
    """Mean/peak CPU %, peak RAM and, per GPU, mean/peak utilisation and peak memory.

    Merged (downsampled) samples count ``n`` times in means; their peaks are
    window means for utilisation, so the monitor's live summary is the exact one.
    """
    acc = Accumulator()
    for sample in samples:
        acc.add(sample)
    return acc.result()


def _mean2(x: float | None, nx: int, y: float | None, ny: int) -> float | None:
    if x is None or y is None:
        return y if x is None else x
    return round((x * nx + y * ny) / (nx + ny), 1)


def _max2(x: float | None, y: float | None) -> float | None:
    if x is None or y is None:
        return y if x is None else x
    return max(x, y)


def _merge(a: Sample, b: Sample) -> Sample:
    """One sample for the window of ``a`` and ``b``: mean utilisation, peak memory."""
    na, nb = int(a.get("n", 1)), int(b.get("n", 1))
    gpus_b = {g["index"]: g for g in b.get("gpus") or ()}
    gpus = []
    for ga in a.get("gpus") or ():
        gb = gpus_b.pop(ga["index"], {})
        gpus.append(
            {
                "index": ga["index"],
                "util_pct": _mean2(ga.get("util_pct"), na, gb.get("util_pct"), nb),
                "mem_used_mb": _max2(ga.get("mem_used_mb"), gb.get("mem_used_mb")),
                "mem_total_mb": ga.get("mem_total_mb") or gb.get("mem_total_mb"),
            }
        )
    gpus.extend(gpus_b.values())
    return {
        "t": round((a["t"] * na + b["t"] * nb) / (na + nb), 3),
        "n": na + nb,
        "cpu_pct": _mean2(a.get("cpu_pct"), na, b.get("cpu_pct"), nb),
        "ram_used_mb": _max2(a.get("ram_used_mb"), b.get("ram_used_mb")),
        "ram_total_mb": b.get("ram_total_mb") or a.get("ram_total_mb"),
        "gpus": gpus,
    }


def downsample(samples: Sequence[Sample]) -> list[Sample]:
    """Merge the older half pairwise (``n`` samples become about ``3n/4``)."""
    half = len(samples) // 2
    old = samples[:half]
    merged = [_merge(old[i], old[i + 1]) for i in range(0, half - 1, 2)]
    if half % 2:
        merged.append(dict(old[-1]))
    return merged + list(samples[half:])


def _fmt_mib(mb: float | None) -> str:
    if mb is None:
        return "n/a"
    return f"{mb / 1024:.1f} GiB" if mb >= 1024 else f"{mb:.0f} MiB"


def _fmt_pct(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.1f}%"


def _fmt_duration(seconds: float | None) -> str:
    if seconds is None:
        return "n/a"
    minutes, secs = divmod(round(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h {minutes:02d}m" if hours else f"{minutes}m {secs:02d}s"


def format_usage_summary(summary: dict[str, Any]) -> str:
    """Human lines for report.txt from a :func:`summarize_usage` dict."""
    if not summary.get("samples"):
        return "Resource usage: no samples recorded"
    lines = [
        f"Resource usage ({summary['samples']} samples over "
        f"{_fmt_duration(summary.get('duration_s'))}):",
        f"  CPU    mean {_fmt_pct(summary.get('cpu_pct_mean'))}, "
        f"peak {_fmt_pct(summary.get('cpu_pct_peak'))}",
        f"  RAM    peak {_fmt_mib(summary.get('ram_used_mb_peak'))} "
        f"of {_fmt_mib(summary.get('ram_total_mb'))}",
    ]
    for gpu in summary.get("gpus") or ():
        lines.append(
            f"  GPU {gpu['index']}  util mean {_fmt_pct(gpu.get('util_pct_mean'))}, "
            f"peak {_fmt_pct(gpu.get('util_pct_peak'))}; memory peak "
            f"{_fmt_mib(gpu.get('mem_used_mb_peak'))} of {_fmt_mib(gpu.get('mem_total_mb'))}"
        )
    if not summary.get("gpus"):
        lines.append(f"  GPUs   not sampled ({summary.get('gpu_error') or 'none watched'})")
    return "\n".join(lines)
