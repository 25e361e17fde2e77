"""``initialize-in-batch``: the initialize request is never a member of a batch array.

2025-03-26 is the one version with JSON-RPC batches (every other version reports any batch
as ``batch-not-allowed``); there, a client that batches ``initialize`` sends requests
before the session exists.
"""

from __future__ import annotations

import numpy as np

from ...protocol.rules import Rule
from ..checks import REQUEST, Hits, VecInput, check, hits

RULE = Rule(
    "initialize-in-batch", "error", "initialize is not sent in a batch",
    "The initialize request MUST NOT be part of a JSON-RPC batch",
    "MCP 2025-03-26, basic/lifecycle.mdx §Initialization",
    "Send initialize alone, as the session's first message; batch other messages only "
    "once it is answered.",
    versions=("2025-03-26",), topic="lifecycle")


@check(RULE)
def initialize_in_batch(vi: VecInput) -> Hits:
    init = vi.method_codes(lambda m: m == "initialize")
    rows = np.flatnonzero((vi.kind == REQUEST) & (vi.batch >= 0) & vi.method_in(init))
    return hits(rows, None, ["initialize inside a batch array"] * len(rows))
