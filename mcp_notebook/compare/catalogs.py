"""Tools, prompts, resources and templates from each side's latest complete listing, and
the server's protocol version, info and capabilities from ``initialize``: what changed."""

from __future__ import annotations

import json
from typing import Any

from .sessions import Side, as_dict, pairs_of, result_of

#: listing method -> (kind, result key, item key, fields compared, severity of a change)
CATALOGS: dict[str, tuple[str, str, str, dict[str, str]]] = {
    "tools/list": ("tool", "tools", "name",
                   {"inputSchema": "warning", "outputSchema": "warning",
                    "description": "info", "title": "info", "annotations": "info"}),
    "prompts/list": ("prompt", "prompts", "name",
                     {"arguments": "warning", "description": "info", "title": "info"}),
    "resources/list": ("resource", "resources", "uri",
                       {"mimeType": "warning", "name": "info", "description": "info",
                        "title": "info"}),
    "resources/templates/list": ("resource template", "resourceTemplates", "uriTemplate",
                                 {"mimeType": "warning", "name": "info",
                                  "description": "info", "title": "info"}),
}


def catalog(t: Any, session: Any, method: str) -> dict[str, dict[str, Any]] | None:
    """The items of the latest complete listing of ``method`` in a session, by key.

    A listing starts with a request without ``cursor`` and goes on over the pages asked
    for with one. None when the session never listed.
    """
    _, key_name, key, _ = CATALOGS[method]
    p = pairs_of(t, session)
    p = p[(p["method"] == method) & (p["requester"] == "c2s") & (p["outcome"] == "result")]
    if p.empty:
        return None
    pages: list[list[Any]] = []
    for req, resp in zip(p["request_seq"], p["response_seq"], strict=True):
        msg = t.message(int(req)) or {}
        params = msg.get("params") if isinstance(msg, dict) else None
        cursor = params.get("cursor") if isinstance(params, dict) else None
        items = result_of(t, resp).get(key_name)
        if cursor is None or not pages:
            pages.append([])
        pages[-1].extend(items if isinstance(items, list) else [])
    return {str(item.get(key)): item for item in pages[-1] if isinstance(item, dict)}


def _text(value: Any) -> str:
    return "" if value is None else json.dumps(value, sort_keys=True, ensure_ascii=False)


def _json_changes(a: Any, b: Any, path: str = "") -> list[str]:
    """Where two JSON values differ: ``"properties.x added"``, ``"required: +y -z"``..."""
    if isinstance(a, dict) and isinstance(b, dict):
        out = []
        for k in sorted(set(a) | set(b), key=str):
            here = f"{path}.{k}" if path else str(k)
            if k not in b:
                out.append(f"{here} removed")
            elif k not in a:
                out.append(f"{here} added")
            else:
                out.extend(_json_changes(a[k], b[k], here))
        return out
    if (isinstance(a, list) and isinstance(b, list) and path.endswith("required")
            and all(isinstance(x, str) for x in a + b)):
        plus, minus = sorted(set(b) - set(a)), sorted(set(a) - set(b))
        if not plus and not minus:
            return []
        return [f"{path}: " + " ".join([*(f"+{x}" for x in plus), *(f"-{x}" for x in minus)])]
    return [] if _text(a) == _text(b) else [f"{path or 'value'} changed"]


def _schema_detail(a: Any, b: Any, limit: int = 6) -> str:
    """The paths where two JSON Schemas differ, the first ``limit`` of them."""
    parts = _json_changes(a if a is not None else {}, b if b is not None else {})
    more = f" (+{len(parts) - limit} more)" if len(parts) > limit else ""
    return "; ".join(parts[:limit]) + more or "schema changed"


def _short(value: Any, width: int = 60) -> str:
    text = "none" if value is None else _text(value)
    return text if len(text) <= width else text[: width - 1] + "…"


def catalog_rows(a: Side, b: Side) -> list[dict[str, Any]]:
    rows = []
    for method, (kind, _, _, fields) in CATALOGS.items():
        ca, cb = catalog(a.trace, a.session, method), catalog(b.trace, b.session, method)
        if ca is None or cb is None:  # not listed on one side: nothing to compare
            continue
        for name in sorted(set(ca) | set(cb)):
            if name not in cb:
                rows.append(dict(area=kind, item=name, change="removed", detail=f"{kind} removed",
                                 a=_text(ca[name]), b="", severity="error"))
            elif name not in ca:
                rows.append(dict(area=kind, item=name, change="added", detail=f"{kind} added",
                                 a="", b=_text(cb[name]), severity="info"))
            else:
                for f, severity in fields.items():
                    va, vb = ca[name].get(f), cb[name].get(f)
                    if _text(va) == _text(vb):
                        continue
                    detail = (_schema_detail(va, vb) if f.endswith("Schema")
                              else f"{_short(va)} -> {_short(vb)}")
                    rows.append(dict(area=kind, item=name, change=f"{f} changed",
                                     detail=detail, a=_text(va), b=_text(vb),
                                     severity=severity))
    return rows


def server_rows(a: Side, b: Side) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    ia, ib = a.init, b.init
    if not ia or not ib:
        return rows
    va, vb = ia.get("protocolVersion"), ib.get("protocolVersion")
    if va != vb:
        rows.append(dict(area="protocol", item="protocolVersion", change="changed",
                         detail=f"{va} -> {vb}", a=_text(va), b=_text(vb), severity="warning"))
    sa, sb = as_dict(ia.get("serverInfo")), as_dict(ib.get("serverInfo"))
    for k in sorted(set(sa) | set(sb)):
        if _text(sa.get(k)) != _text(sb.get(k)):
            rows.append(dict(area="server", item=k, change="changed",
                             detail=f"{sa.get(k)} -> {sb.get(k)}", a=_text(sa.get(k)),
                             b=_text(sb.get(k)), severity="info"))
    ca, cb = as_dict(ia.get("capabilities")), as_dict(ib.get("capabilities"))
    for k in sorted(set(ca) | set(cb)):
        if k not in cb:
            change, severity = "removed", "warning"
        elif k not in ca:
            change, severity = "added", "info"
        elif _text(ca[k]) != _text(cb[k]):
            change, severity = "changed", "info"
        else:
            continue
        rows.append(dict(area="capability", item=k, change=change,
                         detail=f"capability {k} {change}", a=_text(ca.get(k)),
                         b=_text(cb.get(k)), severity=severity))
    return rows
