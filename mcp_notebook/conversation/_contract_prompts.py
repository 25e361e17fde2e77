"""The contracts of ``prompts/get`` and ``resources/read``: the arguments against the
prompt's declared arguments, and a URI neither listed nor matching a listed template
(RFC 6570). One check per rule (``contracts.CHECKS``)."""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

import numpy as np

from ._contract_lists import _latest, _latest_codes, _Prompt
from ._contract_shapes import _instance
from ._view import Hit, View, unique_inverse


def _prompts(view: View) -> list[Hit]:
    lists = _latest(view, "prompts/list", "prompts", "name")
    out: list[Hit] = []
    if not lists:
        return out
    gets = view.row_array(["prompts/get"], (0,))
    l_code, l_lists = _latest_codes(view, lists, gets)  # code 0: no list yet
    n_code, names, args = view.call_codes(gets)  # -1: no name, or one that is no string
    judged = np.flatnonzero((l_code > 0) & (n_code >= 0))
    if not len(judged):
        return out
    # each get's prompt, looked up once per distinct (list, name)
    width = len(names)
    uniq, inverse = unique_inverse(l_code[judged] * width + n_code[judged])
    lookups = [(names[k % width], l_lists[k // width]) for k in uniq.tolist()]
    found = [(name, lst.get(name) if lst is not None else None) for name, lst in lookups]
    has = np.fromiter((p is not None for _, p in found), dtype=bool, count=len(found))
    at = np.flatnonzero(has[inverse])
    judged, which = judged[at], inverse[at]
    # each distinct (prompt, arguments text) judged once: the texts by content, the
    # prompts by what a finding reads of them (:func:`_prompt_key`: sessions whose servers
    # list the same arguments share one, whatever their descriptions)
    texts = args[judged].tolist()
    t_index: dict[bytes, int] = {}
    t_code = np.fromiter((t_index.setdefault(t, len(t_index)) for t in texts),
                         dtype=np.int64, count=len(texts))
    p_index: dict[Any, int] = {}
    p_code = np.fromiter((p_index.setdefault(_prompt_key(n, p), len(p_index))
                          for n, p in found), dtype=np.int64, count=len(found))
    uniq, inv = unique_inverse(p_code[which] * len(t_index) + t_code)
    first = np.full(len(uniq), len(inv), dtype=np.int64)  # where each pair is first met
    np.minimum.at(first, inv, np.arange(len(inv), dtype=np.int64))
    t_list = list(t_index)
    got = [_prompt_finding(found[k][0], found[k][1], t_list[c]) for k, c in
           zip(which[first].tolist(), t_code[first].tolist(), strict=True)]
    bad = np.fromiter((g is not None for g in got), dtype=bool, count=len(got))
    at = np.flatnonzero(bad[inv])
    out.extend(Hit(seq, None, *got[u]) for seq, u in
               zip(gets[judged][at].tolist(), inv[at].tolist(), strict=True))
    return out


def _prompt_key(name: str, prompt: Any) -> tuple[Any, ...]:
    """What :func:`_prompt_finding` reads of a listed prompt, as a key: its name and the
    text of its ``arguments`` member for a typed item (equal texts decode to equal
    arguments), else the prompt itself by identity (the lists keep their prompts)."""
    if prompt.__class__ is _Prompt:
        return (1, name, bytes(prompt.arguments))
    return (0, name, id(prompt))


def _prompt_finding(name: str, prompt: dict[str, Any], args: bytes) -> tuple[str, str] | None:
    """(detail, pointer) of a prompts/get of ``prompt`` with these arguments, or None."""
    declared = {a.get("name"): a for a in prompt.get("arguments") or []
                if isinstance(a, dict)}
    sent = _instance(args) or {}
    sent = sent if isinstance(sent, dict) else {}
    missing = [n for n, a in declared.items() if a.get("required") and n not in sent]
    extra = [n for n in sent if n not in declared]
    if missing:
        return f"{name} needs argument {missing[0]!r}", "/params/arguments"
    if extra:
        return f"{name} declares no argument {extra[0]!r}", f"/params/arguments/{extra[0]}"
    return None


@lru_cache(maxsize=1024)
def _template_regex(template: str) -> re.Pattern[str]:
    """A URI template (RFC 6570, the forms MCP servers use) as a regex."""
    out, pos = [], 0
    for m in re.finditer(r"\{([^}]*)\}", template):
        out.append(re.escape(template[pos:m.start()]))
        expr = m.group(1)
        out.append(".*" if expr[:1] in ("+", "#", "/") or expr.endswith("*") else "[^/]*")
        pos = m.end()
    out.append(re.escape(template[pos:]))
    return re.compile("".join(out) + r"\Z")


def _resources(view: View) -> list[Hit]:
    lists = _latest(view, "resources/list", "resources", "uri")
    templates = _latest(view, "resources/templates/list", "resourceTemplates", "uriTemplate")
    out: list[Hit] = []
    if not lists and not templates:
        return out
    reads = view.row_array(["resources/read"], (0,))
    u_code, u_lists = _latest_codes(view, lists, reads)
    t_code, t_lists = _latest_codes(view, templates, reads)
    judged = np.flatnonzero((u_code > 0) | (t_code > 0))
    if not len(judged):
        return out
    reads, u_code, t_code = reads[judged], u_code[judged], t_code[judged]
    uri_code, uris, _ = view.call_codes(reads, "uri")  # codes (-1: none): no tuples
    # decided once per distinct (resource list, template list, uri)
    key = (u_code * len(t_lists) + t_code) * (len(uris) + 1) + (uri_code + 1)
    uniq, inverse = unique_inverse(key)
    bad = np.zeros(len(uniq), dtype=bool)
    for g, k in enumerate(uniq.tolist()):
        pair, c = divmod(k, len(uris) + 1)
        uri = uris[c - 1] if c else None
        if not isinstance(uri, str):
            continue
        listed_uris, temps = u_lists[pair // len(t_lists)], t_lists[pair % len(t_lists)]
        bad[g] = uri not in (listed_uris or {}) and not any(
            _template_regex(t).match(uri) for t in temps or ())
    at = np.flatnonzero(bad[inverse])
    return [Hit(seq, None, f"{uris[c]} is neither listed nor matches a listed template",
                "/params/uri") for seq, c in zip(reads[at].tolist(), uri_code[at].tolist(),
                                                  strict=True)]
