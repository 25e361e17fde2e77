"""The Trace: what a user holds after ``mn.load``."""

from __future__ import annotations

import html
from functools import cached_property
from pathlib import Path
from typing import Any

import msgspec
import numpy as np
import pandas as pd

from .core import versions as V
from .core.checks_vec import VecInput, run_vec, session_versions_vec
from .core.envelope import bounded_recursion
from .core.pairing_vec import PairTable, pair_arrays
from .fast import release_memory
from .fast.compat import ColumnsView
from .fast.frames import frames_frame
from .fast.pairs import pairs_frame
from .fast.store import Store
from .lazytext import texts_of
from .table import VIOLATION_COLUMNS, Columns, empty

__all__ = ["Trace"]

_decode = msgspec.json.decode


class Trace:
    """A loaded capture: frames, pairs and violations, and what can be asked of them.

    Build one with :func:`mcp_notebook.load`.

    >>> import mcp_notebook as mn
    >>> t = mn.load(mn.sample_path("demo-stdio"))
    >>> len(t.frames), len(t.pairs) > 0
    (60, True)
    """

    #: made from a boundary view (:meth:`from_boundary`): envelopes only, no payload text
    payload_free: bool = False

    def __init__(self, cols: Columns | Store, version: str | None = None,
                 notes: list[str] | None = None, paths: list[str] | None = None) -> None:
        self._store = cols if isinstance(cols, Store) else Store.from_columns(cols)
        self._version_override = version
        self.notes: list[str] = list(notes or [])
        self.paths: list[str] = list(paths or [])

    @cached_property
    def _cols(self) -> Columns:
        """The columns as the reference ``Columns`` lists, made when first read."""
        return ColumnsView(self._store)

    # -- the three DataFrames ---------------------------------------------------------------
    @cached_property
    def frames(self) -> pd.DataFrame:
        """One row per captured record, in capture order (columns: ``table.FRAME_COLUMNS``)."""
        return _released(frames_frame(self._store))

    @cached_property
    def _pairing(self) -> PairTable:
        s = self._store
        # the body of an HTTP error reply (4xx/5xx) pairs as any other message: by its id,
        # and with a null id as an orphan, as on stdio (its status stays in the context)
        pt = pair_arrays(s.kind, s.session[0], s.direction, s.id_key, s.id_code[0],
                         s.id_code[1], s.method[0], s.method[1], s.is_tool_error, s.ref,
                         s.progress, id_index=s.id_index)
        s.id_index = None  # only the pairing reads it
        return _released(pt)

    @cached_property
    def pairs(self) -> pd.DataFrame:
        """One row per request, plus one per response with no request (``table.PAIR_COLUMNS``)."""
        return _released(pairs_frame(self._pairing, self._store, self.frames))

    def _check_input(self, versions: dict[Any, str]) -> VecInput:
        s = self._store
        raw = s.raw
        return VecInput(
            kind=s.kind, session=s.session[0], session_cats=s.session[1], direction=s.direction,
            id_key=s.id_key, method=s.method[0], method_cats=s.method[1],
            error_code=s.error_code, flags=s.flags, batch=s.batch, size=s.size,
            texts=lambda rows: texts_of(raw, rows), pairs=self._pairing, versions=versions,
            extra=s.extra, empty_results=s.empty_result.rows, long_keys=s.long_keys,
            reason=s.reason)

    def _found_versions(self, override: str | None = None) -> dict[Any, str]:
        return session_versions_vec(self._check_input({}), self._store.version.as_dict(),
                                    override)

    @cached_property
    def versions(self) -> dict[Any, str]:
        """The protocol version each session is checked against."""
        found = self._found_versions(self._version_override)
        return {s: V.normalise(found.get(s)) if s in found else V.DEFAULT
                for s in self.sessions()}

    @property
    def protocol_version(self) -> str | None:
        """The negotiated version (the most common over sessions), or None if none was seen."""
        if self._version_override:
            return self._version_override
        found = self._found_versions()
        if not found:
            return None
        values = list(found.values())
        return max(set(values), key=values.count)

    @cached_property
    def violations(self) -> pd.DataFrame:
        """One row per finding of the rule catalogue (``table.VIOLATION_COLUMNS``).

        Empty for a payload-free trace: the rules read what its frames do not hold.
        """
        if self.payload_free:
            return empty(VIOLATION_COLUMNS)
        hits = run_vec(self._check_input(self.versions))
        if not hits:
            return empty(VIOLATION_COLUMNS)
        # one string per rule for what repeats (a big trace can hold 100,000 findings)
        texts = {r.code: (r.cite, ", ".join(r.versions), _message(r, ""))
                 for r in {id(h[0]): h[0] for h in hits}.values()}
        return _released(pd.DataFrame({
            "rule": pd.Series([r.code for r, *_ in hits], dtype=object),
            "severity": pd.Categorical([r.severity for r, *_ in hits],
                                       categories=["error", "warning", "info"]),
            "seq": pd.array([s for _, s, _, _ in hits], dtype="Int64"),
            "related_seq": pd.array([rel for _, _, rel, _ in hits], dtype="Int64"),
            "message": pd.Series([_message(r, d) if d else texts[r.code][2]
                                  for r, _, _, d in hits], dtype=object),
            "spec": pd.Series([texts[r.code][0] for r, *_ in hits], dtype=object),
            "versions": pd.Series([texts[r.code][1] for r, *_ in hits], dtype=object),
        }))

    # -- questions ----------------------------------------------------------------------------
    def message(self, seq: int) -> Any:
        """The decoded JSON message of frame ``seq``; None for log, stderr and unparsable rows."""
        s = self._store
        batch = int(s.batch[seq])
        if s.kind[seq] >= 4 and batch < 0:  # invalid, stderr, log
            return None
        try:
            with bounded_recursion():
                value = _decode(s.raw[seq].encode("utf-8", "surrogateescape"))
        except (msgspec.DecodeError, RecursionError):
            return None
        if batch >= 0 and isinstance(value, list):
            return value[batch]
        return value

    def summary(self) -> dict[str, Any]:
        """Counts under the names of DESIGN.md (also ``mcp-notebook summary --json``)."""
        f, p, v = self.frames, self.pairs, self.violations
        kinds = f["kind"].value_counts()
        outcomes = p["outcome"].value_counts()

        def n(series: pd.Series, key: str) -> int:
            return int(series.get(key, 0))

        results, errors = n(kinds, "result"), n(kinds, "error")
        methods = f.loc[f["kind"].isin(["request", "notification"]), "method"]
        codes = f.loc[f["kind"] == "error", "error_code"].dropna()
        return {
            "frames": int(len(f)),
            "messages": int(f["kind"].isin(["request", "notification", "result", "error"]).sum()),
            "requests": n(kinds, "request"),
            "notifications": n(kinds, "notification"),
            "responses": results + errors,
            "results": results,
            "errors": errors,
            "tool_errors": int(f["is_tool_error"].sum()),
            "invalid": n(kinds, "invalid"),
            "stderr": n(kinds, "stderr"),
            "log": n(kinds, "log"),
            "blank_lines": self._store.blank_lines,
            "pairs": int((p["request_seq"].notna() & p["response_seq"].notna()
                          & (p["outcome"] != "duplicate")).sum()),
            "unanswered": int((p["request_seq"].notna() & p["response_seq"].isna()).sum()),
            "cancelled": n(outcomes, "cancelled"),
            "orphans": n(outcomes, "orphan"),
            "duplicates": n(outcomes, "duplicate"),
            "sessions": int(f["session"].nunique()),
            "protocol_version": self.protocol_version,
            "methods": {str(k): int(c) for k, c in methods.value_counts().items() if c},
            "error_codes": {str(int(k)): int(c) for k, c in codes.value_counts().items()},
            "violations": {
                "total": int(len(v)),
                "by_severity": {str(k): int(c) for k, c in v["severity"].value_counts().items()
                                if c},
                "by_rule": {str(k): int(c) for k, c in v["rule"].value_counts().items()},
            },
        }

    def latency_by_method(self) -> pd.DataFrame:
        """Per method: count, p50, p90, p99 and max latency (ms), errors and error rate."""
        from .boundary import latency_table

        return latency_table(self.pairs)

    def context_cost(self, by: str = "tool") -> pd.DataFrame:
        """Bytes and estimated tokens of each listed tool definition, largest first
        (``by="session"``/``"server"``: the sums); see :mod:`mcp_notebook.conversation`."""
        from .conversation.payload import context_cost

        return context_cost(self, by)

    def conformance(self) -> pd.DataFrame:
        """Per peer, each conformance-suite requirement: kept, broken or not exercised."""
        from .conversation.conformance import conformance

        return conformance(self)

    def boundary(self) -> pd.DataFrame:
        """One row per operation, without payload text (``boundary.BOUNDARY_COLUMNS``).

        A request with its response, or a notification: session, requester, method, the
        tool, prompt or resource it names, start, duration, outcome, error code and type,
        sizes, and the protocol version and peers from ``initialize``. Write it with
        :func:`mcp_notebook.boundary.write_boundary`.
        """
        from .boundary import boundary_of

        return boundary_of(self).copy()

    def to_otlp(self) -> dict[str, Any]:
        """One span per request as OTLP/JSON (see :mod:`mcp_notebook.otlp`)."""
        from .otlp import to_otlp

        return to_otlp(self)

    def to_perfetto(self, path: str | Path) -> dict[str, int]:
        """Write a Perfetto protobuf trace (see :mod:`mcp_notebook.perfetto`); return what
        it holds."""
        from .perfetto import write_perfetto

        return write_perfetto(self, path)

    def open_in_perfetto(self, title: str = "mcp_notebook trace") -> Any:
        """A button that opens ui.perfetto.dev with this trace (shown by a notebook; its
        ``html`` is the snippet)."""
        from .perfetto import PerfettoButton, perfetto_bytes

        return PerfettoButton(perfetto_bytes(self), title)

    def to_har(self, path: str | Path) -> Path:
        """Write a capture of MCP over HTTP as HAR 1.2 (see :mod:`mcp_notebook.har_out`)."""
        from .har_out import write_har

        return write_har(self, path)

    @classmethod
    def from_boundary(cls, source: Any) -> Trace:
        """A payload-free Trace from a boundary frame or a ``.parquet``/``.jsonl`` boundary file.

        Its pairs, ``latency_by_method`` and ``summary`` are those of the original capture
        (times to the microsecond); ``violations`` are empty. See
        :func:`mcp_notebook.boundary.trace_from_boundary`.
        """
        from .boundary import trace_from_boundary

        return trace_from_boundary(source)

    def sessions(self) -> list[Any]:
        """The sessions, in order of first appearance."""
        codes, cats = self._store.session
        if not (codes < 0).any():
            return list(cats)
        first_none = int(np.argmax(codes < 0))
        before = len(np.unique(codes[:first_none][codes[:first_none] >= 0]))
        return [*cats[:before], None, *cats[before:]]

    def extra(self, seq: int) -> dict[str, Any]:
        """Reader context of a frame (HTTP status, SSE event id, ...), if any."""
        return dict(self._store.extra.get(seq, {}))

    def redact(self, policy: Any = None, *, salt: str | bytes | None = None) -> Any:
        """A copy with secrets replaced by salted hashes, and a report of what was replaced.

        Returns ``(trace, report)`` (a named tuple): ``report`` has one row per secret
        (``seq, source, where, kind, replacement``). Ids, methods and sessions are kept,
        so the copy pairs exactly like this trace. ``policy`` is a
        :class:`mcp_notebook.redact.Policy` (the default finds tokens, API keys, JWTs,
        passwords, cookies...); ``salt`` keys the hashes (random per call by default).
        """
        from .redact import redact_trace

        return redact_trace(self, policy, salt=salt)

    # -- tables out -----------------------------------------------------------------------------
    def to_arrow(self) -> dict[str, Any]:
        """The three tables as ``pyarrow.Table`` s: ``{"frames": ..., "pairs": ...,
        "violations": ...}``; each id as its exact JSON text (``id_key``) and its JSON type
        (``id_type``). Needs pyarrow (``pip install 'mcp_notebook[parquet]'``)."""
        from .export import to_arrow

        return to_arrow(self)

    def to_parquet(self, folder: str | Path) -> dict[str, Path]:
        """Write ``frames.parquet``, ``pairs.parquet`` and ``violations.parquet`` into
        ``folder`` (the tables of :meth:`to_arrow`); returns ``{table: path}``."""
        from .export import to_parquet

        return to_parquet(self, folder)

    # -- display ------------------------------------------------------------------------------
    def __len__(self) -> int:
        return self._store.n

    def __repr__(self) -> str:
        s = self.summary()
        v = s["violations"]["by_severity"]
        return (f"<Trace {s['frames']} frames, {s['sessions']} session(s), "
                f"{s['requests']} requests, {s['pairs']} answered, {s['unanswered']} unanswered, "
                f"violations: {v.get('error', 0)} error / {v.get('warning', 0)} warning / "
                f"{v.get('info', 0)} info; protocol {s['protocol_version']}>")

    def _repr_html_(self) -> str:
        s = self.summary()
        v = s["violations"]
        cells = [("frames", s["frames"]), ("sessions", s["sessions"]),
                 ("requests", s["requests"]), ("notifications", s["notifications"]),
                 ("results", s["results"]), ("errors", s["errors"]),
                 ("tool errors", s["tool_errors"]), ("unanswered", s["unanswered"]),
                 ("orphans", s["orphans"]), ("duplicates", s["duplicates"]),
                 ("protocol", s["protocol_version"] or "unknown")]
        head = "".join(f"<th>{html.escape(str(k))}</th>" for k, _ in cells)
        body = "".join(f"<td>{html.escape(str(val))}</td>" for _, val in cells)
        rules = ", ".join(f"{html.escape(k)} × {n}" for k, n in list(v["by_rule"].items())[:8])
        sev = v["by_severity"]
        names = [Path(p).name for p in self.paths[:3]]  # file names: no machine paths
        paths = html.escape(", ".join(names) + (" …" if len(self.paths) > 3 else ""))
        return (
            f"<div class='mcp-trace'><b>MCP trace</b> <small>{paths}</small>"
            f"<table><tr>{head}</tr><tr>{body}</tr></table>"
            f"<div>violations: {sev.get('error', 0)} error, {sev.get('warning', 0)} warning, "
            f"{sev.get('info', 0)} info{(' — ' + rules) if rules else ''}</div></div>"
        )


def _released(value: Any) -> Any:
    release_memory()
    return value


def _message(rule: Any, detail: str) -> str:
    return f"{rule.title}: {detail}. {rule.advice}" if detail else f"{rule.title}. {rule.advice}"
