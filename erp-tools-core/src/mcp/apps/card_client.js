// The card's side of MCP Apps (SEP-1865): JSON-RPC 2.0 over postMessage with the host.
// `ui/initialize` then `ui/notifications/initialized`; the host sends
// `ui/notifications/tool-input` and `ui/notifications/tool-result`; the card may ask
// `tools/call` and `ui/open-link`, and reports its size. Text goes into the page with
// textContent only: nothing a model, a vendor or a person wrote is ever parsed as HTML.
(function () {
  "use strict";
  var nextId = 1;
  var pending = {};
  var handlers = {};
  function send(message) { window.parent.postMessage(message, "*"); }
  function request(method, params) {
    return new Promise(function (resolve, reject) {
      var id = nextId++;
      pending[id] = { resolve: resolve, reject: reject };
      send({ jsonrpc: "2.0", id: id, method: method, params: params || {} });
    });
  }
  function notify(method, params) { send({ jsonrpc: "2.0", method: method, params: params || {} }); }
  window.addEventListener("message", function (event) {
    if (event.source !== window.parent) return;
    var m = event.data;
    if (!m || m.jsonrpc !== "2.0") return;
    if (m.method === undefined && m.id !== undefined && pending[m.id]) {
      var p = pending[m.id];
      delete pending[m.id];
      if (m.error) p.reject(new Error(m.error.message || "request failed"));
      else p.resolve(m.result);
      return;
    }
    if (typeof m.method !== "string") return;
    if (m.id !== undefined) send({ jsonrpc: "2.0", id: m.id, result: {} });
    var handler = handlers[m.method];
    if (handler) handler(m.params || {});
  });
  function size() {
    var d = document.documentElement;
    notify("ui/notifications/size-changed", { width: d.scrollWidth, height: d.scrollHeight });
  }
  function el(tag, text, cls) {
    var e = document.createElement(tag);
    if (text !== undefined && text !== null) e.textContent = String(text);
    if (cls) e.className = cls;
    return e;
  }
  // A decimal amount as the review console shows it: two decimals, the integer digits
  // grouped by thousands with narrow no-break spaces ("1848000" -> "1 848 000.00"),
  // rounded on the digits themselves (never through a float), a tie to the even cent as
  // the console's `Decimal::round_dp` does. Anything that is not a plain decimal is shown
  // as it is.
  function money(v, currency) {
    if (v === undefined || v === null) return "";
    var s = String(v).trim();
    var m = /^(-?)(\d+)(?:\.(\d+))?$/.exec(s);
    if (!m) return s;
    var frac = (m[3] || "") + "000";
    var cents = BigInt(m[2] + frac.slice(0, 2));
    var rest = frac.slice(2).replace(/0+$/, "");
    var tie = rest === "5";
    if (rest[0] > "5" || (rest[0] === "5" && (!tie || cents % 2n === 1n))) cents += 1n;
    var digits = cents.toString().padStart(3, "0");
    var int = digits.slice(0, -2).replace(/\B(?=(\d{3})+$)/g, "\u202f");
    var out = (m[1] && cents !== 0n ? "-" : "") + int + "." + digits.slice(-2);
    return currency ? out + " " + currency : out;
  }
  window.McpCard = {
    money: money,
    on: function (method, fn) { handlers[method] = fn; },
    start: function (name) {
      return request("ui/initialize", {
        protocolVersion: "2026-01-26",
        appInfo: { name: name, version: "1.0.0" },
        appCapabilities: {}
      }).then(function (result) {
        notify("ui/notifications/initialized", {});
        if (window.ResizeObserver) new ResizeObserver(size).observe(document.body);
        size();
        return result;
      });
    },
    callTool: function (name, args) { return request("tools/call", { name: name, arguments: args }); },
    openLink: function (url) { return request("ui/open-link", { url: url }); },
    el: el,
    text: function (result) {
      var parts = [];
      (result && result.content || []).forEach(function (c) { if (c.type === "text") parts.push(c.text); });
      return parts.join("\n");
    },
    // A button that asks the host to open `url` (nothing opens from inside the card).
    link: function (label, url) {
      var b = el("button", label, "link");
      b.type = "button";
      b.title = url;
      b.addEventListener("click", function () { window.McpCard.openLink(url); });
      return b;
    },
    // The lines of a document (or of a proposed action's arguments) as a table.
    lines: function (lines, currency) {
      var table = el("table", null, "lines");
      var labels = ["#", "Item", "Qty", "Unit", "Unit price", "Line total"];
      var head = el("tr", null, "head");
      // Amounts and quantities are right-aligned, their headings with them.
      labels.forEach(function (h, j) { head.appendChild(el("th", h, j >= 2 && j !== 3 ? "num" : null)); });
      table.appendChild(head);
      lines.forEach(function (l, i) {
        var tr = el("tr");
        var cells = [l.line_no || i + 1, l.item_code, l.qty, l.uom];
        cells.push(l.unit_price === undefined ? "" : money(l.unit_price));
        cells.push(l.line_total === undefined ? "" : money(l.line_total));
        cells.forEach(function (v, j) {
          var td = el("td", v === undefined || v === null ? "" : v);
          // The column's name, shown beside the value when a narrow pane stacks a line.
          td.setAttribute("data-label", labels[j]);
          if (j >= 2 && j !== 3) td.className = "num";
          tr.appendChild(td);
        });
        table.appendChild(tr);
      });
      return table;
    },
    size: size
  };
})();
