"""The traffic model of the synthetic capture generator: MCP sessions as timed events.

A :class:`Traffic` keeps a heap of future events. Every client action (``tools/call``,
``resources/read``, ``ping``...) schedules its whole exchange at once: the request now,
progress notifications, log messages and server-to-client requests (sampling,
elicitation) while it runs, an optional cancellation, and the response (or none) after a
latency drawn from a long-tailed distribution. Popping the heap in time order gives a
realistic interleaving of concurrent requests in both directions and across sessions.

Each emitted frame carries a small metadata tuple ``(kind, id_json, method, tool_error,
ref)``, the generator's own knowledge of what it wrote, from which the manifest is
counted. It is never parsed back from the text.
"""

from __future__ import annotations

import heapq
import math
import random
from collections.abc import Callable

from gen_payloads import STYLES, Catalogue, Pools, Style, make_catalogue
from gen_profiles import PROFILES, Profile

__all__ = ["Traffic", "Session", "EMIT", "C2S", "S2C"]

EMIT, ACT, SACT, START, END = 0, 1, 2, 3, 4
C2S, S2C, STDERR, META = "c2s", "s2c", "stderr", "meta"
BASE_TS = 1767225600.0  # 2026-01-01T00:00:00Z
_VERSIONS = (["2025-06-18"] * 5 + ["2025-03-26"] * 3 + ["2024-11-05", "2025-11-25", "2025-11-25"])
_FIRST_SCHEMES = ["int0", "str", "snow", "int1", "uuid"]
_CLIENTS = ["claude-ai", "cursor", "vscode", "mcp-inspector", "python-client", "goose"]

# client action weights (per action, one exchange each)
_ACTIONS = [("tools_call", 44), ("resources_read", 12), ("ping", 7), ("prompts_get", 5),
            ("complete", 3), ("resources_list", 3), ("prompts_list", 2), ("tools_list", 2),
            ("templates_list", 1), ("subscribe", 1), ("set_level", 0.5), ("unknown", 0.5),
            ("roots_changed", 1)]
_SERVER_ACTIONS = [("log_message", 50), ("ping", 14), ("stderr", 14), ("resource_updated", 7),
                   ("roots_list", 5), ("tools_changed", 1.5), ("elicit", 2), ("orphan", 0.3)]


def _cum(weights: list[tuple[str, float]]) -> tuple[list[str], list[float]]:
    total = sum(w for _, w in weights)
    names, cum, acc = [], [], 0.0
    for n, w in weights:
        acc += w / total
        names.append(n)
        cum.append(acc)
    cum[-1] = 1.0
    return names, cum


class Session:
    """One client-server connection: id schemes, styles, catalogue, liveness."""

    def __init__(self, index: int, rng: random.Random, pools: Pools, clean: bool,
                 rates: dict[str, float], lifetime: int | None,
                 profile: Profile = PROFILES["default"], prefix: bool = False) -> None:
        name = f"s{index + 1}"
        self.name = name
        self.long_ids, self.prefix = profile.long_ids, prefix
        self.rng, self.clean, self.rates = rng, clean, rates
        self.cst: Style = STYLES[rng.choice(["ts", "ts", "py", "dumps"])]
        self.sst: Style = STYLES[rng.choice(["py", "py", "ts", "dumps"])]
        # the first sessions cover every id scheme; later ones draw (SDK default most often)
        self.c_scheme = (_FIRST_SCHEMES[index] if index < len(_FIRST_SCHEMES)
                         else rng.choice(["int0", "int0", "int0", "int1", "str", "uuid", "snow"]))
        self.s_scheme = rng.choice(["int0", "int0", "int0", "str"])
        self.version = rng.choice(_VERSIONS)
        self.client = rng.choice(_CLIENTS)
        self.cat: Catalogue = make_catalogue(rng, pools)
        self.cn = 1 if self.c_scheme == "int1" else 0
        self.sn = 0
        self.pt = 0
        self.used_digit_str: set[str] = set()
        self.worker = rng.getrandbits(10)
        self.actions_left = lifetime if lifetime is not None else -1
        self.dead = False
        self.subscribed: list[str] = []
        self.orphan_n = 0

    def _uuid(self) -> str:
        h = f"{self.rng.getrandbits(128):032x}"
        return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"

    def cid(self, t: float) -> str:
        """The JSON text of the next client request id (unique in this session)."""
        if self.long_ids:  # the long_ids profile: ~90 characters
            self.cn += 1
            return f'"{self.client}-{self.name}-req-{self.cn}-{self._uuid()}-{self._uuid()}"'
        if self.prefix:  # many sessions in one stream: ids unique across them
            self.cn += 1
            return f'"{self.name}-{self.cn}"'
        rng, r = self.rng, self.rng.random()
        rates = self.rates
        if r < rates["id_over_2_64"]:
            if not self.clean:
                return str(2**64 + rng.getrandbits(48))
            return str(2**63 + rng.getrandbits(62))
        r -= rates["id_over_2_64"]
        if r < rates["id_uint64"]:
            return str(2**63 + rng.getrandbits(62))
        r -= rates["id_uint64"]
        if r < rates["id_snowflake"]:
            return self._snow(t)
        r -= rates["id_snowflake"]
        if r < rates["id_digit_str"] and self.c_scheme.startswith("int") and self.cn > 2:
            digits = str(rng.randrange(self.cn))
            if digits not in self.used_digit_str:
                self.used_digit_str.add(digits)
                return f'"{digits}"'
        scheme = self.c_scheme
        if scheme.startswith("int"):
            self.cn += 1
            return str(self.cn - 1)
        if scheme == "str":
            self.cn += 1
            return f'"req-{self.cn}"'
        if scheme == "uuid":
            return f'"{rng.getrandbits(128):032x}"'
        return self._snow(t)

    def _snow(self, t: float) -> str:
        self.cn += 1
        ms = int((t - 1288834974.657) * 1000)  # twitter-style epoch
        return str((ms << 22) | (self.worker << 12) | (self.cn & 0xFFF))

    def sid(self) -> str:
        """The JSON text of the next server request id."""
        self.sn += 1
        if self.long_ids:
            return f'"server-{self.name}-{self.sn}-{self._uuid()}-{self._uuid()}"'
        if self.prefix:
            return f'"{self.name}-srv-{self.sn}"'
        return str(self.sn - 1) if self.s_scheme == "int0" else f'"srv-{self.sn}"'

    def token(self) -> str:
        self.pt += 1
        return str(self.pt) if self.pt % 3 == 0 and not self.prefix else f'"{self.name}-p{self.pt}"'


Emit = Callable[[float, Session, str, str, tuple], None]


class Traffic:
    """The event heap and the MCP behaviour that fills it."""

    def __init__(self, rng: random.Random, pools: Pools, *, clean: bool, tap: bool,
                 slots: int, rates: dict[str, float],
                 profile: Profile = PROFILES["default"]) -> None:
        self.rng, self.pools, self.clean, self.tap = rng, pools, clean, tap
        self.prof = profile
        self.prefix = not tap and slots > 1  # sessions share one stream: prefixed ids
        self.rates = rates
        self.heap: list[tuple] = []
        self.n = 0
        self.n_sessions = 0
        self._act = _cum(_ACTIONS)
        self._sact = _cum(_SERVER_ACTIONS)
        for i in range(slots):
            self.at(BASE_TS + i * rng.uniform(0.5, 30.0), START, None, slots > 1)

    # -- heap -------------------------------------------------------------------------
    def at(self, t: float, typ: int, sess: Session | None, data: object = None) -> None:
        self.n += 1
        heapq.heappush(self.heap, (t, self.n, typ, sess, data))

    def frame(self, t: float, s: Session, d: str, line: str, meta: tuple) -> None:
        self.n += 1
        heapq.heappush(self.heap, (t, self.n, EMIT, s, (d, line, meta)))

    def pop(self) -> tuple:
        return heapq.heappop(self.heap)

    # -- distributions ----------------------------------------------------------------
    def lat(self, median: float, sigma: float) -> float:
        return median * math.exp(self.rng.gauss(0.0, sigma))

    def size(self, median: float, sigma: float, cap: int = 1_000_000) -> int:
        return min(cap, int(median * math.exp(self.rng.gauss(0.0, sigma))) + 1)

    def text(self, n: int) -> str:
        return self.pools.text_of(self.rng, n)

    def result_text(self, n: int) -> str:
        """A large payload's text: the dense corpus under the escapes profile."""
        if self.prof.dense_escapes:
            return self.pools.dense_of(self.rng, n)
        return self.pools.text_of(self.rng, n)

    def params(self, s: Session, params: str | None, token: str | None = None) -> str | None:
        """A client request's params, with the meta2026 profile's ``_meta`` added."""
        if not self.prof.meta2026:
            return params
        tok = f'"progressToken":{token},' if token else ""
        meta = (f'"_meta":{{{tok}"io.modelcontextprotocol/protocolVersion":"2026-07-28",'
                '"io.modelcontextprotocol/clientCapabilities":{"roots":{"listChanged":true},'
                '"sampling":{},"elicitation":{"form":{}}},'
                f'"io.modelcontextprotocol/clientInfo":{{"name":"{s.client}","version":"1.4.0"}},'
                f'"traceparent":"00-{self.rng.getrandbits(128):032x}-'
                f'{self.rng.getrandbits(64):016x}-01"}}')
        if params is None or params == "{}":
            return f"{{{meta}}}"
        return f"{{{meta},{params[1:]}"

    # -- lifecycle --------------------------------------------------------------------
    def start(self, t: float, restarting: bool) -> None:
        rng = self.rng
        self.n_sessions += 1
        life = (max(1, int(math.exp(rng.gauss(math.log(self.prof.life_median), 0.8))))
                if restarting else None)
        s = Session(self.n_sessions - 1, rng, self.pools, self.clean, self.rates, life,
                    self.prof, self.prefix)
        if self.tap:
            self.frame(t, s, META, "start", ("log",))
        c, sv = s.cst, s.sst
        idj = s.cid(t)
        p = (f'{{"protocolVersion":"{s.version}","capabilities":{{"roots":{{"listChanged":true}},'
             f'"sampling":{{}},"elicitation":{{}}}},"clientInfo":{{"name":"{s.client}",'
             f'"version":"1.{rng.randint(0, 40)}.{rng.randint(0, 9)}"}}}}')
        self.frame(t, s, C2S, c.request(idj, "initialize", self.params(s, p)),
                   ("request", idj, "initialize"))
        t += self.lat(0.05, 0.8)
        r = (f'{{"protocolVersion":"{s.version}","capabilities":{{"tools":{{"listChanged":true}},'
             f'"resources":{{"subscribe":true,"listChanged":true}},"prompts":{{}},"logging":{{}}}},'
             f'"serverInfo":{{"name":"server-{s.name}","version":"0.{rng.randint(1, 20)}.0"}},'
             f'"instructions":"{self.text(rng.randint(0, 300))}"}}')
        self.frame(t, s, S2C, sv.result(idj, r), ("result", idj))
        t += 0.001
        self.frame(t, s, C2S, c.notification("notifications/initialized", None),
                   ("notification", None, "notifications/initialized"))
        for m, res in (("tools/list", s.cat.tools_list), ("resources/list", s.cat.resources_list),
                       ("prompts/list", s.cat.prompts_list)):
            t += self.lat(0.004, 0.5)
            self.simple(s, t, m, None, res, 0.01)
        if rng.random() < 0.4:
            self.server_request(s, t + 0.002, "roots/list", None,
                                '{"roots":[{"uri":"file:///project","name":"project"}]}')
        self.at(t + rng.expovariate(1.0), ACT, s)
        self.at(t + rng.expovariate(self.prof.server_rate), SACT, s)

    def end(self, t: float, s: Session) -> None:
        """The process exits: nothing more from this session; a new one takes the slot."""
        if self.tap:
            self.frame(t, s, META, "exit", ("log",))
        self.at(t + 0.0005, END, s)  # after the exit line
        self.at(t + self.rng.uniform(0.5, 20.0), START, None, True)

    # -- exchanges --------------------------------------------------------------------
    def simple(self, s: Session, t: float, method: str, params: str | None, result: str,
               lat_median: float, err: tuple[int, str] | None = None) -> float:
        """A client request and its response; returns the response time."""
        idj = s.cid(t)
        self.frame(t, s, C2S, s.cst.request(idj, method, self.params(s, params)),
                   ("request", idj, method))
        tr = t + self.lat(lat_median, 1.0)
        if self.rng.random() < self.rates["no_response"]:
            return tr
        if err is not None:
            self.frame(tr, s, S2C, s.sst.error(idj, err[0], err[1]), ("error", idj))
        else:
            self.respond(tr, s, idj, s.sst.result(idj, result), ("result", idj))
        return tr

    def respond(self, t: float, s: Session, idj: str, line: str, meta: tuple) -> None:
        """Emit a server response, sometimes twice (a duplicate response)."""
        self.frame(t, s, S2C, line, meta)
        if self.rng.random() < self.rates["duplicate"]:
            self.frame(t + self.lat(0.01, 1.0), s, S2C, line, meta)

    def server_request(self, s: Session, t: float, method: str, params: str | None,
                       result: str) -> float:
        sid = s.sid()
        self.frame(t, s, S2C, s.sst.request(sid, method, params), ("request", sid, method))
        tr = t + self.lat(0.3 if method != "ping" else 0.002, 1.0)
        self.frame(tr, s, C2S, s.cst.result(sid, result), ("result", sid))
        return tr

    def notify(self, s: Session, t: float, d: str, method: str, params: str,
               ref: str | None = None) -> None:
        st = s.cst if d == C2S else s.sst
        self.frame(t, s, d, st.notification(method, params), ("notification", None, method, ref))

    def log_message(self, s: Session, t: float) -> None:
        level = self.rng.choice(["debug", "info", "info", "info", "warning", "error"])
        data = self.text(self.size(self.prof.log_size, 1.3, 60_000))
        self.notify(s, t, S2C, "notifications/message",
                    f'{{"level":"{level}","logger":"{s.name}","data":"{data}"}}')

    def tools_call(self, s: Session, t: float) -> None:
        rng, rates = self.rng, self.rates
        idj = s.cid(t)
        tool = rng.choice(s.cat.tools)
        alen = self.size(3000, 1.0) if rng.random() < 0.04 else self.size(110, 1.0)
        tok = s.token() if rng.random() < self.prof.progress_share else None
        meta = f',"_meta":{{"progressToken":{tok}}}' if tok and not self.prof.meta2026 else ""
        p = f'{{"name":"{tool}","arguments":{{"query":"{self.text(alen)}"}}{meta}}}'
        if self.prof.meta2026:
            p = self.params(s, p, tok)
        self.frame(t, s, C2S, s.cst.request(idj, "tools/call", p), ("request", idj, "tools/call"))
        lat = self.lat(0.15, 1.2)
        if rng.random() < 0.03:  # the tool asks the client's model for a completion
            ts = t + lat * 0.3
            prompt = self.text(self.size(500, 1.0))
            sp = (f'{{"messages":[{{"role":"user","content":{{"type":"text","text":"{prompt}"}}}}],'
                  f'"maxTokens":{rng.choice([256, 1024, 4096])}}}')
            answer = self.text(self.size(300, 1.2))
            sr = (f'{{"role":"assistant","content":{{"type":"text","text":"{answer}"}},'
                  f'"model":"claude-sonnet-4","stopReason":"endTurn"}}')
            lat = self.server_request(s, ts, "sampling/createMessage", sp, sr) - t + \
                self.lat(0.05, 1.0)
        if tok:
            k = rng.randint(*self.prof.progress_count)
            for i in range(k):
                self.notify(s, t + lat * (i + 1) / (k + 1), S2C, "notifications/progress",
                            f'{{"progressToken":{tok},"progress":{i + 1},"total":{k},'
                            f'"message":"step {i + 1} of {k}"}}')
        if rng.random() < 0.06:
            for _ in range(rng.randint(1, 3)):
                self.log_message(s, t + lat * rng.random())
        tr = t + lat
        if tok and rng.random() < rates["late_progress"]:  # progress after completion
            self.notify(s, tr + 0.01, S2C, "notifications/progress",
                        f'{{"progressToken":{tok},"progress":99}}')
        r = rng.random()
        if r < rates["cancel"]:
            tc = t + lat * rng.uniform(0.3, 0.95)
            self.notify(s, tc, C2S, "notifications/cancelled",
                        f'{{"requestId":{idj},"reason":"User requested cancellation"}}', ref=idj)
            if rng.random() < 0.7:
                return  # no response after the cancel (the usual case)
        elif r < rates["cancel"] + rates["no_response"]:
            return  # the server never answers
        rid = idj
        if idj[0] != '"' and rng.random() < rates["wrong_id_type"]:
            rid = f'"{idj}"'  # a buggy server mirrors the id as a string
        r = rng.random()
        if r < 0.012:
            code, msg = rng.choice([(-32602, "Invalid params"), (-32603, "Internal error"),
                                    (-32000, "Tool execution failed")])
            self.respond(tr, s, rid, s.sst.error(rid, code, msg), ("error", rid))
            return
        if r < 0.045:
            body = (f'{{"content":[{{"type":"text","text":"Error: {self.text(self.size(80, 1.0))}"}}],'
                    f'"isError":true}}')
            self.respond(tr, s, rid, s.sst.result(rid, body), ("result", rid, None, True))
            return
        if rng.random() < rates["huge"]:
            n = rng.randint(150_000, 1_000_000)
        else:
            n = self.size(*self.prof.result_size)
        flag = ',"isError":false' if rng.random() < 0.5 else ""
        if self.prof.image_share and rng.random() < self.prof.image_share:
            blob = self.pools.blob_of(rng, self.size(*self.prof.blob_size))
            body = (f'{{"content":[{{"type":"image","data":"{blob}","mimeType":"image/png"}}]'
                    f'{flag}}}')
        else:
            body = f'{{"content":[{{"type":"text","text":"{self.result_text(n)}"}}]{flag}}}'
        self.respond(tr, s, rid, s.sst.result(rid, body), ("result", rid))

    def resources_read(self, s: Session, t: float) -> None:
        rng = self.rng
        uri = rng.choice(s.cat.resources)
        p = f'{{"uri":"{uri}"}}'
        if rng.random() < 0.03:
            self.simple(s, t, "resources/read", p, "", 0.02, (-32002, "Resource not found"))
        elif rng.random() < self.prof.blob_share:
            blob = self.pools.blob_of(rng, self.size(*self.prof.blob_size))
            body = (f'{{"contents":[{{"uri":"{uri}","mimeType":"image/png",'
                    f'"blob":"{blob}"}}]}}')
            self.simple(s, t, "resources/read", p, body, 0.03)
        else:
            body = (f'{{"contents":[{{"uri":"{uri}","mimeType":"text/x-python",'
                    f'"text":"{self.result_text(self.size(1200, 1.6, 900_000))}"}}]}}')
            self.simple(s, t, "resources/read", p, body, 0.02)

    def client_action(self, s: Session, t: float) -> None:
        rng = self.rng
        names, cum = self._act
        r = rng.random()
        i = 0
        while cum[i] < r:
            i += 1
        a = names[i]
        if a == "tools_call":
            self.tools_call(s, t)
        elif a == "resources_read":
            self.resources_read(s, t)
        elif a == "ping":
            self.simple(s, t, "ping", None, "{}", 0.002)
        elif a == "prompts_get":
            name = rng.choice(s.cat.prompts)
            text = self.text(self.size(700, 1.0))
            self.simple(s, t, "prompts/get", f'{{"name":"{name}","arguments":{{"topic":"mcp"}}}}',
                        f'{{"description":"{name}","messages":[{{"role":"user","content":'
                        f'{{"type":"text","text":"{text}"}}}}]}}', 0.01)
        elif a == "complete":
            vals = ",".join(f'"{w}"' for w in ("paris", "parse", "partial")[:rng.randint(0, 3)])
            self.simple(s, t, "completion/complete",
                        f'{{"ref":{{"type":"ref/prompt","name":"{rng.choice(s.cat.prompts)}"}},'
                        f'"argument":{{"name":"topic","value":"pa"}}}}',
                        f'{{"completion":{{"values":[{vals}],"hasMore":false}}}}', 0.005)
        elif a == "resources_list":
            self.simple(s, t, "resources/list", None, s.cat.resources_list, 0.01)
        elif a == "prompts_list":
            self.simple(s, t, "prompts/list", None, s.cat.prompts_list, 0.01)
        elif a == "tools_list":
            self.simple(s, t, "tools/list", None, s.cat.tools_list, 0.01)
        elif a == "templates_list":
            self.simple(s, t, "resources/templates/list", None, s.cat.templates_list, 0.01)
        elif a == "subscribe":
            uri = rng.choice(s.cat.resources)
            s.subscribed.append(uri)
            self.simple(s, t, "resources/subscribe", f'{{"uri":"{uri}"}}', "{}", 0.005)
        elif a == "set_level":
            self.simple(s, t, "logging/setLevel", '{"level":"debug"}', "{}", 0.003)
        elif a == "unknown":
            self.simple(s, t, rng.choice(["tools/execute", "resources/watch", "models/list"]),
                        "{}", "", 0.003, (-32601, "Method not found"))
        else:  # roots_changed
            self.notify(s, t, C2S, "notifications/roots/list_changed", "{}")
        if s.actions_left > 0:
            s.actions_left -= 1
            if s.actions_left == 0:
                self.end(t + rng.expovariate(1.0), s)
                return
        self.at(t + rng.expovariate(1.0), ACT, s)

    def server_action(self, s: Session, t: float) -> None:
        rng = self.rng
        names, cum = self._sact
        r = rng.random()
        i = 0
        while cum[i] < r:
            i += 1
        a = names[i]
        if a == "log_message" or (a == "stderr" and not self.tap):
            self.log_message(s, t)
        elif a == "stderr":
            self.frame(t, s, STDERR, f"[{rng.choice(['INFO', 'DEBUG', 'WARN'])}] "
                       f"{self.text(self.size(60, 1.0, 2000))}", ("stderr",))
        elif a == "ping":
            self.server_request(s, t, "ping", None, "{}")
        elif a == "resource_updated" and s.subscribed:
            self.notify(s, t, S2C, "notifications/resources/updated",
                        f'{{"uri":"{rng.choice(s.subscribed)}"}}')
        elif a == "roots_list":
            self.server_request(s, t, "roots/list", None,
                                '{"roots":[{"uri":"file:///project","name":"project"}]}')
        elif a == "tools_changed":
            self.notify(s, t, S2C, "notifications/tools/list_changed", "{}")
            self.simple(s, t + self.lat(0.01, 0.5), "tools/list", None, s.cat.tools_list, 0.01)
        elif a == "elicit" and s.version >= "2025-06-18":
            self.server_request(
                s, t, "elicitation/create",
                '{"message":"Which branch?","requestedSchema":{"type":"object","properties":'
                '{"branch":{"type":"string"}}}}',
                rng.choice(['{"action":"accept","content":{"branch":"main"}}',
                            '{"action":"decline"}']))
        elif a == "orphan":  # a response to a request that was never sent
            s.orphan_n += 1
            rid = (str(9_000_000_000 + s.orphan_n) if s.c_scheme.startswith("int")
                   else f'"stale-{s.orphan_n}"')
            self.frame(t, s, S2C, s.sst.result(rid, "{}"), ("result", rid))
        self.at(t + rng.expovariate(self.prof.server_rate), SACT, s)
