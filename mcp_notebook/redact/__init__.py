"""Redact secrets from a capture before sharing it: ``trace.redact()``, ``mcp-notebook redact``.

Every secret the :class:`Policy` finds -- bearer tokens and ``Authorization`` headers,
vendor key shapes (``sk-…``, ``ghp_…``, ``glpat-…``, ``npm_…``, ``hf_…``, SendGrid,
Discord, Twilio, Slack, Stripe, AWS ``AKIA…`` and secret keys, Sentry DSN keys, JWTs),
``?key=`` and ``X-Amz-Signature=`` in URLs, ``--password=X`` / ``--api-key X`` on command
lines, values under names like ``password``, ``token``, ``secret``, ``apiKey``,
``client_secret``, cookies, and any of these inside a base64 blob of text -- is replaced with
``«redacted:sha256:<16 hex>»``, a salted hash: equal secrets stay equal (joins still
work), and the salt is random per run unless one is given. Ids, methods and sessions
are never changed, so the redacted capture loads and pairs exactly like the original.
A report says what was replaced where. Values are judged by shape and context: a
``tools/list`` parameter named ``password`` keeps its schema, and ``password_policy``,
``pageToken`` or "a basic introduction" stay as they are.

>>> import mcp_notebook as mn
>>> t = mn.load(mn.sample_path())                       # doctest: +SKIP
>>> clean, report = t.redact()                          # doctest: +SKIP
>>> report.columns.tolist()                             # doctest: +SKIP
['seq', 'source', 'where', 'kind', 'replacement']

Output files: a HAR stays a HAR (headers, cookies, URLs and bodies redacted in place);
any other capture is written as tap JSONL (``mcp_notebook.export``), which loads back
to the same frames.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd

from ..protocol.envelope import bounded_recursion
from .engines import ENGINES
from .frames import REPORT_COLUMNS, Redacted, redact_columns, report_frame
from .har import redact_har
from .policy import DEFAULT_KEYS, DEFAULT_VALUES, TOKEN_RE, Hit, Policy
from .redactor import Redactor

__all__ = ["Policy", "Redactor", "Redacted", "REPORT_COLUMNS", "DEFAULT_KEYS",
           "DEFAULT_VALUES", "TOKEN_RE", "redact_trace", "redact_file", "register"]


def redact_trace(trace: Any, policy: Policy | None = None, *,
                 salt: str | bytes | None = None) -> Redacted:
    """A redacted copy of ``trace`` and the report (see :meth:`Trace.redact`)."""
    with bounded_recursion():  # JSON decoders recurse in C: keep a nesting bomb harmless
        cols, hits = redact_columns(trace.to_columns(), Redactor(policy, salt))
    new = type(trace)(cols, version=trace.version_override, notes=list(trace.notes),
                paths=list(trace.paths))
    src = trace.column("source")
    return Redacted(new, report_frame([(seq, src[seq], h) for seq, h in hits]))


def redact_file(path: str | os.PathLike[str], out: str | os.PathLike[str],
                policy: Policy | None = None, *, salt: str | bytes | None = None,
                format: str = "auto") -> pd.DataFrame:
    """Write a redacted copy of the capture ``path`` to ``out``; return the report.

    A HAR is written as a HAR; any other format as tap JSONL.
    """
    from .. import readers
    from ..export import write
    from ..load import load

    src, dst = Path(path), Path(out)
    if dst.exists() and dst.resolve() == src.resolve():
        raise ValueError(f"{dst}: the output would overwrite the input; name another file")
    fmt = readers.sniff(src) if format == "auto" and src.is_file() else format
    trace = load(src, format=fmt)
    if fmt == "har":
        with bounded_recursion():
            doc = _har_doc(src)
            rows = redact_har(doc, Redactor(policy, salt), src.name) if doc is not None else []
        if doc is not None:
            dst.write_text(json.dumps(doc, ensure_ascii=False, indent=1), "utf-8",
                           errors="surrogateescape")
            return _har_report(trace, rows)
    red = redact_trace(trace, policy, salt=salt)
    write(red.trace, dst, "jsonl")
    return red.report


def _har_doc(path: Path) -> Any:
    from ..readers.base import open_text

    try:
        with open_text(path) as f:
            doc = json.load(f)
    except (ValueError, RecursionError):
        return None
    return doc if isinstance(doc, dict) and isinstance(doc.get("log"), dict) else None


def _har_report(trace: Any, rows: list[tuple[str, Hit]]) -> pd.DataFrame:
    """Name each HAR finding's frame (its part's, else its entry's); drop the copies a
    proxy's ``_sseEvents`` hold of the SSE body."""
    first: dict[str, int] = {}
    for i, src in enumerate(trace.column("source")):
        first.setdefault(src, i)
    out: list[tuple[int | None, str, Hit]] = []
    seen: set[tuple[str, Hit]] = set()
    for source, hit in rows:
        if (source, hit) in seen:
            continue
        seen.add((source, hit))
        seq = first.get(source)
        if seq is None and "/" in source.rsplit("#", 1)[-1]:
            seq = first.get(source.rsplit("/", 1)[0])
        out.append((seq, source, hit))
    return report_frame(out)


# -- the command line -------------------------------------------------------------------------

def register(subparsers: Any, handlers: dict[str, Callable[..., int]]) -> None:
    """Add ``mcp-notebook redact`` (called by :mod:`mcp_notebook.cli`)."""
    p = subparsers.add_parser(
        "redact", help="replace secrets in a capture with salted hashes before sharing it",
        description="Replace bearer tokens, Authorization headers, API keys (sk-, ghp_, "
                    "glpat-, npm_, hf_, SG., AKIA..., Discord, Twilio, Sentry DSN keys), JWTs, "
                    "cookies, ?key= and X-Amz-Signature= in URLs, --password=X and "
                    "--api-key X on command lines and values under names like password, "
                    "token, secret or apiKey with «redacted:sha256:...». Equal secrets get equal "
                    "replacements; ids and sessions are kept, so the copy pairs like the "
                    "original. A HAR is written as a HAR, anything else as tap JSONL.")
    p.add_argument("file", metavar="FILE", help="the capture to redact")
    p.add_argument("--out", "-o", help="output file (default: FILE.redacted.jsonl / .har)")
    p.add_argument("--format", default="auto", help="capture format (default: sniff it)")
    p.add_argument("--salt", help="key of the replacement hashes (default: random per run; "
                                  "give the same salt to keep replacements equal across runs)")
    p.add_argument("--policy", metavar="JSON",
                   help='a JSON file extending the default policy: {"keys": [regex...], '
                        '"values": {"kind": regex}, "keep_keys": [...], "query_keys": [...], '
                        '"engines": [...], "replace": false}')
    p.add_argument("--engine", action="append", default=[], choices=sorted(ENGINES),
                   help="add an optional engine's secret shapes to the default policy's "
                        "(detect-secrets: pip install 'mcp_notebook[redact]')")
    p.add_argument("--report", metavar="FILE",
                   help="also write what was redacted where (.csv, or .json)")
    handlers["redact"] = cmd_redact


def cmd_redact(args: argparse.Namespace) -> int:
    src = Path(args.file)
    try:
        policy = _policy(args.policy) if args.policy else None
    except (OSError, ValueError, ImportError, re.error) as exc:
        print(f"mcp-notebook redact: bad --policy {args.policy}: {exc}", file=sys.stderr)
        return 2
    if args.engine:
        policy = (policy or Policy()).extend(engines=args.engine)
        try:
            Redactor(policy, salt=b"check")
        except ImportError as exc:
            print(f"mcp-notebook redact: {exc}", file=sys.stderr)
            return 2
    out = Path(args.out) if args.out else _default_out(src, args.format)
    try:
        report = redact_file(src, out, policy, salt=args.salt, format=args.format)
    except ValueError as exc:
        print(f"mcp-notebook redact: {exc}", file=sys.stderr)
        return 2
    if args.report:
        dest = Path(args.report)
        if dest.suffix == ".json":
            dest.write_text(report.astype(object).where(report.notna(), None)
                            .to_json(orient="records", force_ascii=False), "utf-8")
        else:
            report.to_csv(dest, index=False)
    kinds = report["kind"].str.split(":").str[0].value_counts()
    what = ", ".join(f"{n} {k}" for k, n in kinds.items())
    print(f"redacted {len(report)} secret(s) in {report['seq'].nunique()} frame(s)"
          + (f" ({what})" if what else "") + f"; wrote {out}")
    return 0


def _policy(path: str) -> Policy:
    data = json.loads(Path(path).read_text("utf-8"))
    if not isinstance(data, dict):
        raise ValueError("expected a JSON object")
    policy = Policy.from_dict(data)
    Redactor(policy, salt=b"check")  # compile the regexes now: a bad one is a clear error
    return policy


def _default_out(src: Path, fmt: str) -> Path:
    from .. import readers

    try:
        har = (readers.sniff(src) if fmt == "auto" else fmt) == "har"
    except (readers.CaptureError, OSError):
        har = False
    return src.with_name(src.name + (".redacted.har" if har else ".redacted.jsonl"))
