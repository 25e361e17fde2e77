// Preloaded with `node --require scripts/node_loopback.cjs ...` by scripts/make_data.py:
// the npm reference servers call app.listen(PORT) without a host, which binds every
// interface. This makes such a listen bind 127.0.0.1 only, so recording never exposes
// a server beyond the machine.
"use strict";
const net = require("net");
const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (...args) {
  if (typeof args[0] === "number" || (typeof args[0] === "string" && /^\d+$/.test(args[0]))) {
    if (typeof args[1] !== "string") args.splice(1, 0, "127.0.0.1");
  } else if (args[0] && typeof args[0] === "object" && args[0].port !== undefined && !args[0].host) {
    args[0] = { ...args[0], host: "127.0.0.1" };
  }
  return listen.apply(this, args);
};
