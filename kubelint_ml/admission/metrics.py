"""Prometheus metrics in the text exposition format (version 0.0.4), written by hand.

A handful of counters and one histogram do not need ``prometheus_client``:
the format is a few lines of text, and the server runs one process, so there
is no multi-process collection to do. Label values are rule ids, severities and
fixed words (their count is bounded by the rule set).
"""

from __future__ import annotations

import threading
import typing
from collections import defaultdict

# Seconds. Reviews take about a millisecond; the webhook's timeoutSeconds is a few seconds.
LATENCY_BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)
PREFIX = "kubelint_ml_admission_"


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')


def _labels(pairs: tuple) -> str:
    if not pairs:
        return ""
    return "{" + ",".join(f'{k}="{_escape(str(v))}"' for k, v in pairs) + "}"


class Metrics:
    """Counters, gauges and the latency histogram; safe to update from several threads."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.counters: dict[str, dict[tuple, float]] = defaultdict(lambda: defaultdict(float))
        self.gauges: dict[str, dict[tuple, float]] = defaultdict(dict)
        self.buckets = [0] * len(LATENCY_BUCKETS)
        self.latency_sum = 0.0
        self.latency_count = 0

    HELP: typing.ClassVar[dict[str, tuple[str, str]]] = {
        "requests_total": (
            "counter",
            "AdmissionReview requests answered, by result (allowed, denied, excluded, invalid, too_large, timeout, error).",
        ),
        "denials_total": (
            "counter",
            "Reviews with error findings, by mode (enforce: denied; audit: would have been denied).",
        ),
        "findings_total": (
            "counter",
            "Findings reported by reviews (suppressed ones not counted), by rule and severity.",
        ),
        "review_duration_seconds": ("histogram", "Time from the start of a request to its answer, body read included."),
        "config_reloads_total": ("counter", "Config reloads, by result (success, failure)."),
        "config_last_reload_successful": (
            "gauge",
            "1 when the last config change was loaded, 0 when it was rejected (the last good config is in use).",
        ),
        "certificate_reloads_total": ("counter", "TLS certificate reloads, by result (success, failure)."),
        "in_flight_reviews": ("gauge", "Reviews being answered now."),
        "connection_timeouts_total": (
            "counter",
            "Connections closed by a time limit, by phase: tls_handshake (no TLS handshake completed in time; "
            "failed and abandoned handshakes count too), headers (request line and headers not in time), "
            "unread_body (the rest of a request answered early not in time).",
        ),
    }

    def inc(self, name: str, labels: tuple = (), by: float = 1.0) -> None:
        with self._lock:
            self.counters[name][labels] += by

    def set(self, name: str, value: float, labels: tuple = ()) -> None:
        with self._lock:
            self.gauges[name][labels] = value

    def add(self, name: str, by: float, labels: tuple = ()) -> None:
        with self._lock:
            self.gauges[name][labels] = self.gauges[name].get(labels, 0.0) + by

    def observe(self, seconds: float) -> None:
        with self._lock:
            for i, bound in enumerate(LATENCY_BUCKETS):
                if seconds <= bound:
                    self.buckets[i] += 1
            self.latency_sum += seconds
            self.latency_count += 1

    def render(self) -> str:
        out: list[str] = []
        with self._lock:
            for name, (kind, text) in self.HELP.items():
                full = PREFIX + name
                out.append(f"# HELP {full} {text}")
                out.append(f"# TYPE {full} {kind}")
                if kind == "histogram":
                    for bound, count in zip(LATENCY_BUCKETS, self.buckets):
                        out.append(f'{full}_bucket{{le="{bound}"}} {count}')
                    out.append(f'{full}_bucket{{le="+Inf"}} {self.latency_count}')
                    out.append(f"{full}_sum {self.latency_sum:.6f}")
                    out.append(f"{full}_count {self.latency_count}")
                    continue
                series = self.counters.get(name, {}) if kind == "counter" else self.gauges.get(name, {})
                for labels, value in sorted(series.items()):
                    out.append(f"{full}{_labels(labels)} {_number(value)}")
        return "\n".join(out) + "\n"


def _number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else repr(float(value))
