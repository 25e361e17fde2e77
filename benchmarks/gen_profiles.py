"""Payload profiles of the synthetic capture generator: traffic of many shapes.

A loader's speed depends on the shape of the traffic, so the benchmark measures several:
each profile is a set of knobs over :mod:`gen_traffic`'s model (the ``default`` profile is
the model as it always was, byte for byte). The ratio against polars that counts is the
worst profile's.

- ``escapes``: large tool results whose text is dense with JSON escapes (``\\n``, ``\\"``,
  ``\\\\``, ``\\uXXXX``), the slow case of every string scanner;
- ``notifications``: many small notifications (progress on every call, frequent small
  log messages), so the per-frame cost dominates, not the bytes;
- ``base64``: tool results and resources as base64 blobs (long strings, no escapes);
- ``long_ids``: long string request ids (a prefix and two UUIDs, ~90 characters) on
  both sides, which the pairing must hash and keep exactly;
- ``sessions``: many concurrent, short-lived sessions (a gateway's log): many
  ``initialize`` handshakes and catalogues, ids prefixed by their session so they do
  not collide in one stream;
- ``meta2026``: a 2026-07-28-style ``_meta`` on every request (protocol version, client
  capabilities and client info under ``io.modelcontextprotocol/`` keys, a W3C
  ``traceparent``), as the 2026-07-28 schema lets a client send on each request.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Profile", "PROFILES"]


@dataclass(frozen=True)
class Profile:
    """The knobs one profile turns (defaults: the generator's original model)."""

    name: str = "default"
    #: tools/call text result size: lognormal median, sigma, cap
    result_size: tuple[float, float, int] = (520, 1.6, 900_000)
    dense_escapes: bool = False
    #: share of tools/call with a progress token, and how many progress notifications
    progress_share: float = 0.25
    progress_count: tuple[int, int] = (1, 9)
    #: server actions per second (log messages, pings...) and a log message's median size
    server_rate: float = 0.25
    log_size: float = 160
    #: share of tools/call results that are base64 images; of resources/read that are blobs
    image_share: float = 0.0
    blob_share: float = 0.15
    blob_size: tuple[float, float, int] = (3000, 1.2, 700_000)
    long_ids: bool = False
    #: concurrent sessions in an NDJSON stream (ids then prefixed by session) and lifetime
    ndjson_slots: int = 1
    life_median: float = 12000
    meta2026: bool = False


PROFILES: dict[str, Profile] = {p.name: p for p in (
    Profile(),
    Profile("escapes", result_size=(3000, 1.0, 400_000), dense_escapes=True),
    Profile("notifications", progress_share=1.0, progress_count=(4, 16), server_rate=4.0,
            log_size=40, result_size=(120, 1.0, 20_000)),
    Profile("base64", image_share=0.7, blob_share=0.8, blob_size=(4000, 1.0, 400_000)),
    Profile("long_ids", long_ids=True),
    Profile("sessions", ndjson_slots=64, life_median=40),
    Profile("meta2026", meta2026=True),
)}
