"""The Trace: what a user holds after ``mn.load``."""

from __future__ import annotations

import html
from collections import Counter
from collections.abc import Iterable
from functools import cached_property
from pathlib import Path
from typing import Any

import msgspec
import numpy as np
import pandas as pd

from .engine.checks import VecInput, load_rule_modules, run_vec_columns, session_versions_vec
from .engine.gcpause import gc_paused
from .engine.messages import messages
from .engine.pairing import PairTable, pair_arrays
from .fast import release_memory
from .fast.frames import frames_frame
from .fast.pairs import pairs_frame
from .fast.store import Store
from .info import with_info
from .lazytext import texts_of
from .peers import peers_of
from .protocol import versions as V
from .protocol.envelope import bounded_recursion
from .table import VIOLATION_COLUMNS, Columns, empty

__all__ = ["Trace"]

load_rule_modules()  # the catalogue's checks, imported with the Trace (not by its first check)

_decode = msgspec.json.decode


class Trace:
    """A loaded capture: frames, pairs and violations, and what can be asked of them.

    Build one with :func:`mcp_notebook.load`.

    >>> import mcp_notebook as mn
    >>> t = mn.load(mn.sample_path("demo-stdio"))
    >>> len(t.frames), len(t.pairs) > 0
    (60, True)
    """

    #: made from a boundary view (:meth:`from_boundary`, or ``mn.load`` of a boundary or
    #: OTLP/JSON file): envelopes only, no payload text, and no rule run
    payload_free: bool = False
    _peers: dict[Any, dict[str, str | None]] | None = None

    def __init__(self, cols: Columns | Store, version: str | None = None,
                 notes: list[str] | None = None, paths: list[str] | None = None) -> None:
        self._store = cols if isinstance(cols, Store) else Store.from_columns(cols)
        self._version_override = version
        self.notes: list[str] = list(notes or [])
        self.paths: list[str] = list(paths or [])

    # -- the three DataFrames ---------------------------------------------------------------
    @cached_property
    def frames(self) -> pd.DataFrame:
        """One row per captured record, in capture order (columns: ``table.FRAME_COLUMNS``)."""
        return _released(with_info(frames_frame(self._store)))

    @cached_property
    def _pairing(self) -> PairTable:
        s = self._store
        # the body of an HTTP error reply (4xx/5xx) pairs as any other message: by its id,
        # and with a null id as an orphan, as on stdio (its status stays in the context)
        with gc_paused():  # its findings and arrays hold no cycle: no collection walks them
            pt = pair_arrays(s.kind, s.session[0], s.direction, s.id_key, s.id_code[0],
                             s.id_code[1], s.method[0], s.method[1], s.is_tool_error, s.ref,
                             s.progress, id_index=s.id_index)
        s.id_index = None  # only the pairing reads it
        return _released(pt)

    @cached_property
    def pairs(self) -> pd.DataFrame:
        """One row per request, plus one per response with no request (``table.PAIR_COLUMNS``)."""
        # the frames table when it is there (else the pairs make its times themselves)
        return _released(pairs_frame(self._pairing, self._store, self.__dict__.get("frames")))

    def _check_input(self, versions: dict[Any, str]) -> VecInput:
        s = self._store
        raw = s.raw
        return VecInput(
            kind=s.kind, session=s.session[0], session_cats=s.session[1], direction=s.direction,
            id_key=s.id_key, method=s.method[0], method_cats=s.method[1],
            error_code=s.error_code, flags=s.flags, batch=s.batch, size=s.size,
            texts=lambda rows: texts_of(raw, rows), pairs=self._pairing, versions=versions,
            extra=s.extra, empty_results=s.empty_result.rows, long_keys=s.long_keys,
            reason=s.reason, call=s.call, listed=s.listed)

    def _found_versions(self, override: str | None = None) -> dict[Any, str]:
        return session_versions_vec(self._check_input({}), self._store.version,
                                    override)

    def versions_named(self) -> dict[Any, str]:
        """The protocol version each session names (initialize, else ``_meta``); sessions
        that name none are left out (:attr:`versions` gives them the default)."""
        return self._found_versions()

    @cached_property
    def versions(self) -> dict[Any, str]:
        """The protocol version each session is checked against."""
        found = self._found_versions(self._version_override)
        return {s: V.normalise(found.get(s)) if s in found else V.DEFAULT
                for s in self.sessions()}

    @property
    def protocol_version(self) -> str | None:
        """The negotiated version (the most common over sessions; of a tie, the one seen
        first in session order), or None if none was seen."""
        if self._version_override:
            return self._version_override
        found = self._found_versions()
        if not found:
            return None
        counts = Counter(found.values())  # insertion order: the first of a tie wins
        return max(counts, key=counts.__getitem__)

    @cached_property
    def violations(self) -> pd.DataFrame:
        """One row per finding of the rule catalogue (``table.VIOLATION_COLUMNS``).

        Empty for a payload-free trace: the rules read what its frames do not hold.
        """
        if self.payload_free:
            return empty(VIOLATION_COLUMNS)
        vi = self._check_input(self.versions)
        # the collector paused: the checks make many objects (decoded lists, hits) and no
        # cycle but the one cleared below, before the collector runs again (a collection
        # would walk them all, and the first one after the pause every one still held)
        with gc_paused():
            try:
                h = run_vec_columns(vi)
            finally:
                # the conversation rules' view of the input refers back to it: a cycle
                # holding every message those rules decoded, which only the cyclic
                # collector would free (at the user's next collection, or at exit); the
                # run is over: let it go
                vi.__dict__.clear()
                del vi
        if not len(h):
            return empty(VIOLATION_COLUMNS)
        # columns by rule index: one string per rule (or per rule and detail) for what
        # repeats (a capture of tiny frames can hold millions of findings)
        rules = h.rules

        def per_rule(values: list[Any]) -> np.ndarray:
            return np.asarray(values, dtype=object)[h.rule]
        sev_names = ["error", "warning", "info"]
        # each message once per (rule, detail), the rules' details taken together
        msg = messages(rules, h.rule, h.detail)
        return _released(pd.DataFrame({
            "rule": pd.Series(per_rule([r.code for r in rules]), dtype=object),
            "severity": pd.Categorical.from_codes(
                np.asarray([sev_names.index(r.severity) for r in rules],
                           dtype=np.int8)[h.rule], categories=sev_names),
            "seq": pd.array(h.seq, dtype="Int64"),
            "related_seq": pd.arrays.IntegerArray(h.related, h.related < 0),
            "message": pd.Series(msg, dtype=object, copy=False),
            "spec": pd.Series(per_rule([r.cite for r in rules]), dtype=object),
            "versions": pd.Series(per_rule([", ".join(r.versions) for r in rules]),
                                  dtype=object),
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

    def messages(self, seqs: Iterable[int]) -> list[Any]:
        """:meth:`message` of many frames, their text read in one pass."""
        rows = np.asarray(seqs if isinstance(seqs, np.ndarray) else list(seqs), dtype=np.int64)
        s = self._store
        out: list[Any] = []
        with bounded_recursion():
            for seq, text in zip(rows.tolist(), texts_of(s.raw, rows), strict=True):
                batch = int(s.batch[seq])
                if text is None or (s.kind[seq] >= 4 and batch < 0):  # invalid, stderr, log
                    out.append(None)
                    continue
                try:
                    value = _decode(text.encode("utf-8", "surrogateescape"))
                except (msgspec.DecodeError, RecursionError):
                    out.append(None)
                    continue
                out.append(value[batch] if batch >= 0 and isinstance(value, list)
                           and batch < len(value) else value)
        return out

    def texts(self, seqs: Iterable[int]) -> list[str | None]:
        """The exact text of frames (``frames.raw``), read in one pass: a capture whose
        text stays on disk is read by offset, only these frames."""
        return list(texts_of(self._store.raw, np.asarray(seqs if isinstance(seqs, np.ndarray) else list(seqs), dtype=np.int64)))

    #: the columns :meth:`column` gives besides those of ``frames``: what a reader or the
    #: classifier noted per frame
    CONTEXT_COLUMNS = ("flags", "ref", "progress", "version")

    def column(self, name: str) -> list[Any]:
        """One column of the frames as a list of Python values (None where missing),
        made from the store without building the ``frames`` table: a column of
        ``frames`` (``kind``, ``session``, ``raw``, ...), or one of
        :data:`CONTEXT_COLUMNS` (``ref``: the progress token or cancelled id,
        ``progress``: the progress value, ``version``: the protocol version a frame names,
        ``flags``: the envelope rules it breaks)."""
        fields = set(Columns.__dataclass_fields__) - {"extra", "blank_lines"}
        if name not in fields:
            raise KeyError(f"no column {name!r}: one of {', '.join(sorted(fields))}")
        return self._store.values(name)

    def to_columns(self) -> Columns:
        """Every column as the reference :class:`~mcp_notebook.table.Columns` lists (a new
        copy, one list per column: for code that rewrites frames, as redaction does)."""
        c = Columns()
        for name in set(Columns.__dataclass_fields__) - {"extra", "blank_lines"}:
            setattr(c, name, self._store.values(name))
        c.extra = self.contexts()
        c.blank_lines = self._store.blank_lines
        return c

    def contexts(self) -> dict[int, dict[str, Any]]:
        """:meth:`extra` of every frame that has one (``{seq: context}``, copies)."""
        return {i: dict(e) for i, e in self._store.extra.items()}

    @property
    def version_override(self) -> str | None:
        """The ``version=`` the trace was loaded with (None: each session's own)."""
        return self._version_override

    def references(self, seqs: Any) -> tuple[np.ndarray, np.ndarray]:
        """For frames ``seqs``: the request id a ``notifications/cancelled`` names, or the
        progress token of a ``notifications/progress`` or of a request's ``_meta`` (compact
        JSON text, None where there is none); and the progress value (NaN where none)."""
        rows = np.asarray(seqs, dtype=np.int64)
        s = self._store
        return s.ref.at(rows, None), s.progress.at(rows, np.nan)

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
        from .boundary.view import boundary_of

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

    def peers(self) -> dict[Any, dict[str, str | None]]:
        """Per session, what ``initialize`` says of the two peers: ``protocol_version``,
        ``client_name``, ``client_version``, ``server_name``, ``server_version``.

        From the session's last answered ``initialize`` (a client that initializes again
        replaces what the earlier one said), else its last ``initialize`` request; the
        version is the result's, else the request's, else the one its requests name in
        ``_meta`` (2026-07-28). A value not found, or not a string, is None. Every session
        has an entry.

        >>> import mcp_notebook as mn
        >>> mn.load(mn.sample_path("demo-stdio")).peers()["demo"]["server_name"]
        'mcp-notebook-demo'
        """
        if self._peers is None:
            self._peers = peers_of(self)
        return {s: dict(info) for s, info in self._peers.items()}

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

