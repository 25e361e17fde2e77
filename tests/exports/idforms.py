"""Request ids that are alike as strings: a session that sends both ``9`` and ``"9"``.

The conventions' ``jsonrpc.request.id`` is the id's string form, which cannot tell them
apart; the OTLP round trip keeps them apart with the id's type beside it. The tests of
both round trips (``test_otlp.py``, ``test_payload_free_load.py``) ask this one predicate.
"""

from __future__ import annotations

import json

import mcp_notebook as mn


def string_form(id_key: str) -> str:
    """The id as ``jsonrpc.request.id`` writes it: a string id without its quotes, any
    other id as its JSON text."""
    value = json.loads(id_key)
    return value if isinstance(value, str) else id_key


def ids_alike_as_strings(trace: mn.Trace) -> bool:
    """Some session of ``trace`` sends two request ids of one string form (``9``, ``"9"``)."""
    p = trace.pairs
    p = p[p["id_key"].notna() & p["request_seq"].notna()]
    alike = p.groupby("session", observed=True)["id_key"].agg(
        lambda keys: len(set(keys)) != len({string_form(k) for k in keys}))
    return bool(alike.any())
