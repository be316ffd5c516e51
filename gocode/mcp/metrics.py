"""Prometheus metrics of one controller (a :class:`~gocode.toolbox.Toolbox`), in its own registry.

Counters and histograms are updated as calls finish; gauges that describe the present (queue
depth, programs in flight, which upstream servers are connected) are read when scraped, so
they are never stale. Labels take only a few fixed values or configured server names — never a
request id, a tool argument or anything else that grows with traffic.

    gocode_calls_total{kind, phase, outcome}       kind: code|passthrough; outcome: ok|error|busy|cancelled
                                                   (cancelled: the client cancelled or hung up; phase too)
    gocode_build_seconds / gocode_run_seconds      histograms of execute_go_code's two halves
    gocode_queue_wait_seconds                      time spent waiting for a program slot
    gocode_binary_cache_{hits,misses}_total        builds answered from the binary cache or not
    gocode_binary_cache_hit_ratio                  hits / (hits + misses) since start
    gocode_runs_in_flight, gocode_queue_depth      programs running now, and waiting for a slot
    gocode_run_slots, gocode_queue_slots           the bound and the queue's size
    gocode_upstream_up{server}                     1 when the server's session is connected
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

import prometheus_client
from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, Counter, Histogram, generate_latest
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector

# The *_created series double every counter for nothing a dashboard uses.
prometheus_client.disable_created_metrics()

CONTENT_TYPE = CONTENT_TYPE_LATEST
# Builds link in ~0.3 s and compile in seconds; runs take from milliseconds to the timeout.
BUILD_BUCKETS = (0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60)
RUN_BUCKETS = (0.01, 0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60, 120, 300)


@dataclass(frozen=True)
class LiveState:
    """What the gauges read at scrape time."""

    running: Callable[[], int]
    waiting: Callable[[], int]
    limit: Callable[[], int]
    queue: Callable[[], int]
    upstreams: Callable[[], dict[str, bool]]


class _Live(Collector):
    def __init__(self, state: LiveState, cache: tuple[Counter, Counter]) -> None:
        self.state, self.cache = state, cache

    def collect(self) -> Iterator[GaugeMetricFamily]:
        s = self.state
        yield GaugeMetricFamily("gocode_runs_in_flight", "Programs building or running now.", value=s.running())
        yield GaugeMetricFamily("gocode_queue_depth", "Programs waiting for a slot.", value=s.waiting())
        yield GaugeMetricFamily("gocode_run_slots", "Programs allowed at once.", value=s.limit())
        yield GaugeMetricFamily("gocode_queue_slots", "Programs allowed to wait.", value=s.queue())
        hits, misses = (c._value.get() for c in self.cache)
        yield GaugeMetricFamily(
            "gocode_binary_cache_hit_ratio",
            "Share of builds answered from the binary cache since start (0 before the first build).",
            value=hits / (hits + misses) if hits + misses else 0.0,
        )
        up = GaugeMetricFamily("gocode_upstream_up", "1 when the server's session is connected.", labels=["server"])
        for name, ok in sorted(s.upstreams().items()):
            up.add_metric([name], 1.0 if ok else 0.0)
        yield up


class Metrics:
    """The metrics of one controller; :meth:`render` gives the text a scraper reads."""

    def __init__(self, live: LiveState) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        r = self.registry
        self.calls = Counter("gocode_calls", "Tool calls answered.", ["kind", "phase", "outcome"], registry=r)
        self.build_seconds = Histogram(
            "gocode_build_seconds", "Time to build a program (0 when cached).", buckets=BUILD_BUCKETS, registry=r
        )
        self.run_seconds = Histogram("gocode_run_seconds", "Time a program ran.", buckets=RUN_BUCKETS, registry=r)
        self.queue_wait_seconds = Histogram(
            "gocode_queue_wait_seconds", "Time a call waited for a program slot.", buckets=RUN_BUCKETS, registry=r
        )
        self.cache_hits = Counter("gocode_binary_cache_hits", "Builds answered from the binary cache.", registry=r)
        self.cache_misses = Counter("gocode_binary_cache_misses", "Builds that compiled.", registry=r)
        r.register(_Live(live, (self.cache_hits, self.cache_misses)))

    def call(self, kind: str, phase: str, outcome: str) -> None:
        self.calls.labels(kind, phase, outcome).inc()

    def run(self, build_ms: float, run_ms: float, cached: bool, built: bool) -> None:
        """One program's build and run (``built``: it got as far as a build attempt)."""
        if built:
            (self.cache_hits if cached else self.cache_misses).inc()
            self.build_seconds.observe(build_ms / 1000)
        if run_ms:
            self.run_seconds.observe(run_ms / 1000)

    def render(self) -> bytes:
        return generate_latest(self.registry)
