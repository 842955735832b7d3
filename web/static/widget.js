/*
 * gpu-advisor chat widget. Embed with one tag:
 *   <script src="https://HOST/widget/widget.js" data-api="https://HOST" data-lang="it" defer></script>
 * A launcher button and a chat panel live in a Shadow DOM, so the host page's CSS cannot reach them.
 * Server text is only ever set with textContent or built from a small markdown subset with DOM APIs
 * (paragraphs, "- " bullets, **bold**, [n] citation markers): never innerHTML.
 */
(function () {
  "use strict";

  var script = document.currentScript;
  if (!script || window.__gpuAdvisorWidget) { return; }
  window.__gpuAdvisorWidget = true;

  var scriptUrl = new URL(script.src, document.baseURI);
  var API = (script.dataset.api || scriptUrl.origin).replace(/\/+$/, "");
  var ASSETS = scriptUrl.href.replace(/[^/]*$/, "");
  var LANGS = ["it", "id", "en"];
  var STORE_KEY = "gpu-advisor:v1:" + API;
  var MAX_TURNS = 24;
  var MAX_TABLE_ROWS = 8;
  var SEGMENTS = ["weights", "gradients", "optimizer", "activations", "temporary", "overhead"];
  var SVG_NS = "http://www.w3.org/2000/svg";

  var strings = {};
  var state = loadState();
  var ui = {};
  var busy = false;

  // ---------------------------------------------------------------------------------------------- state

  function loadState() {
    var initial = { lang: pickLang(script.dataset.lang), langChosen: false, threadId: null, turns: [] };
    try {
      var saved = JSON.parse(window.localStorage.getItem(STORE_KEY) || "null");
      if (saved && typeof saved === "object") {
        initial.lang = LANGS.indexOf(saved.lang) >= 0 ? saved.lang : initial.lang;
        initial.langChosen = saved.langChosen === true;
        initial.threadId = typeof saved.threadId === "string" ? saved.threadId : null;
        initial.turns = Array.isArray(saved.turns) ? saved.turns.slice(-MAX_TURNS) : [];
      }
    } catch (e) { /* storage blocked or corrupt: start fresh */ }
    return initial;
  }

  function saveState() {
    state.turns = state.turns.slice(-MAX_TURNS);
    try { window.localStorage.setItem(STORE_KEY, JSON.stringify(state)); } catch (e) { /* full or blocked */ }
  }

  function pickLang(value) {
    var lang = String(value || navigator.language || "en").slice(0, 2).toLowerCase();
    return LANGS.indexOf(lang) >= 0 ? lang : "en";
  }

  function t(key, values) {
    var table = strings[state.lang] || strings.en || {};
    var text = key.split(".").reduce(function (node, part) { return node && node[part]; }, table);
    if (typeof text !== "string") { text = key; }
    return text.replace(/\{(\w+)\}/g, function (all, name) {
      return values && values[name] !== undefined && values[name] !== null ? String(values[name]) : "";
    });
  }

  // ---------------------------------------------------------------------------------------------- DOM helpers

  function el(tag, attrs, children) {
    var node = document.createElement(tag);
    setAttrs(node, attrs);
    (children || []).forEach(function (child) {
      if (child === null || child === undefined) { return; }
      node.appendChild(typeof child === "string" ? document.createTextNode(child) : child);
    });
    return node;
  }

  function svg(tag, attrs, text) {
    var node = document.createElementNS(SVG_NS, tag);
    setAttrs(node, attrs);
    if (text !== undefined) { node.textContent = text; }
    return node;
  }

  function setAttrs(node, attrs) {
    Object.keys(attrs || {}).forEach(function (name) {
      var value = attrs[name];
      if (value === null || value === undefined || value === false) { return; }
      if (name === "text") { node.textContent = value; } else { node.setAttribute(name, String(value)); }
    });
  }

  function number(value, digits) {
    if (typeof value !== "number" || !isFinite(value)) { return "–"; }
    return new Intl.NumberFormat(t("locale"), { maximumFractionDigits: digits, minimumFractionDigits: digits })
      .format(value);
  }

  // ---------------------------------------------------------------------------------------------- markdown subset

  /** Inline text: **bold**, `code` and [n] citation markers; everything else is a text node. */
  function inline(text, citations) {
    var out = document.createDocumentFragment();
    var pattern = /\*\*([^*]+)\*\*|`([^`]+)`|\[(\d{1,2})\]/g;
    var last = 0;
    var match;
    while ((match = pattern.exec(text)) !== null) {
      out.appendChild(document.createTextNode(text.slice(last, match.index)));
      if (match[1] !== undefined) {
        out.appendChild(el("strong", { text: match[1] }));
      } else if (match[2] !== undefined) {
        out.appendChild(el("code", { text: match[2] }));
      } else {
        out.appendChild(citationMarker(Number(match[3]), citations));
      }
      last = pattern.lastIndex;
    }
    out.appendChild(document.createTextNode(text.slice(last)));
    return out;
  }

  function citationMarker(n, citations) {
    if (!citations || n < 1 || n > citations.length) { return document.createTextNode("[" + n + "]"); }
    var button = el("button", { type: "button", class: "cite", "aria-label": t("sources") + " " + n,
                                text: "[" + n + "]" });
    button.addEventListener("click", function () {
      var bubble = button.closest(".bubble");
      var target = bubble && bubble.querySelector('details[data-cite="' + n + '"]');
      if (target) { target.open = true; target.scrollIntoView({ block: "nearest" }); target.querySelector("summary").focus(); }
    });
    return el("sup", {}, [button]);
  }

  /** Paragraphs (blank-line separated, single newlines kept as line breaks) and "- " bullet lists. */
  function markdown(text, citations) {
    var root = el("div", { class: "md" });
    var list = null;
    var para = null;
    String(text || "").split(/\r?\n/).forEach(function (raw) {
      var line = raw.trim();
      var bullet = /^(?:[-*•]\s+)(.*)$/.exec(line);
      if (!line) { list = null; para = null; return; }
      if (bullet) {
        para = null;
        if (!list) { list = root.appendChild(el("ul")); }
        list.appendChild(el("li", {}, [inline(bullet[1], citations)]));
        return;
      }
      list = null;
      if (para) { para.appendChild(el("br")); } else { para = root.appendChild(el("p")); }
      para.appendChild(inline(line, citations));
    });
    return root;
  }

  // ---------------------------------------------------------------------------------------------- result views

  function offersTable(result) {
    var offers = (result.offers || []).slice(0, MAX_TABLE_ROWS);
    if (!offers.length) { return null; }
    var head = ["col_rank", "col_provider", "col_gpu", "col_cost", "col_hours", "col_price", "col_pricing"];
    var table = el("table", { class: "offers" }, [
      el("caption", { text: t("offers_caption") }),
      el("thead", {}, [el("tr", {}, head.map(function (key) { return el("th", { scope: "col", text: t(key) }); }))])
    ]);
    var body = table.appendChild(el("tbody"));
    offers.forEach(function (offer, i) {
      var gpus = (offer.total_gpus || offer.gpu_count || 1) + "× " + (offer.gpu || "?");
      var note = i === 0 ? t("recommended") : (offer.meets_budget === false ? t("over_budget") : null);
      body.appendChild(el("tr", { class: i === 0 ? "best" : null }, [
        el("td", { text: String(i + 1) }),
        el("td", { class: "provider" }, [el("span", { text: offer.provider || "" }),
                                         el("small", { text: offer.instance_type || "" }),
                                         el("small", { text: offer.region || "" })]),
        el("td", { class: "nowrap", text: gpus }),
        el("td", { class: "num", text: number(offer.est_cost, 2) }),
        el("td", { class: "num", text: number(offer.est_hours, 1) }),
        el("td", { class: "num", text: number(offer.price_per_hour, 2) }),
        el("td", {}, [el("span", { text: offer.spot ? t("spot") : t("on_demand") }),
                      note ? el("small", { class: "note", text: note }) : null])
      ]));
    });
    return el("div", { class: "scroll", tabindex: "0", role: "region", "aria-label": t("offers_caption") }, [table]);
  }

  function memoryVram(result) {
    var fit = result.estimate && result.estimate.fit;
    if (fit && typeof fit.vram_gib === "number") { return { vram: fit.vram_gib, gpu: fit.gpu || "GPU", fits: fit.fits }; }
    var best = (result.offers || [])[0];
    if (best && typeof best.vram_gib_per_gpu === "number") {
      return { vram: best.vram_gib_per_gpu, gpu: best.gpu, fits: best.fits };
    }
    return null;
  }

  function memoryChart(result) {
    var estimate = result.estimate;
    if (!estimate || !estimate.breakdown_gib) { return null; }
    var parts = [];
    var keys = SEGMENTS.concat(Object.keys(estimate.breakdown_gib).filter(function (k) { return SEGMENTS.indexOf(k) < 0; }));
    keys.forEach(function (key) {
      var value = Number(estimate.breakdown_gib[key]);
      if (isFinite(value) && value > 0) { parts.push({ key: key, value: value }); }
    });
    if (!parts.length) { return null; }
    var used = typeof estimate.per_gpu_gib === "number" ? estimate.per_gpu_gib
      : parts.reduce(function (sum, p) { return sum + p.value; }, 0);
    var card = memoryVram(result);
    var scale = Math.max(used, card ? card.vram : 0) * 1.08;
    var width = 320, left = 4, barWidth = width - 2 * left, barY = 20, barH = 26;
    var summary = card ? t("memory_summary", { used: number(used, 1), vram: number(card.vram, 0), gpu: card.gpu })
      : t("memory_summary_nofit", { used: number(used, 1) });
    var fitText = card && card.fits !== undefined && card.fits !== null ? (card.fits ? t("fits") : t("does_not_fit")) : "";
    var chart = svg("svg", { viewBox: "0 0 " + width + " 64", class: "chart memory", role: "img",
                             "aria-label": t("memory_title") + ": " + summary + (fitText ? " (" + fitText + ")" : "") });
    chart.appendChild(svg("rect", { x: left, y: barY, width: barWidth, height: barH, class: "track", rx: 3 }));
    var x = left;
    parts.forEach(function (part) {
      var w = Math.max(part.value / scale * barWidth, 0.5);
      var rect = svg("rect", { x: x.toFixed(2), y: barY, width: w.toFixed(2), height: barH,
                               class: "seg seg-" + (SEGMENTS.indexOf(part.key) >= 0 ? part.key : "other") });
      rect.appendChild(svg("title", {}, t("breakdown." + part.key) + ": " + number(part.value, 2) + " GiB"));
      chart.appendChild(rect);
      x += w;
    });
    if (card) {
      var vx = left + card.vram / scale * barWidth;
      chart.appendChild(svg("line", { x1: vx.toFixed(2), x2: vx.toFixed(2), y1: 12, y2: barY + barH + 6,
                                      class: "vram-line" + (card.fits === false ? " over" : "") }));
      chart.appendChild(svg("text", { x: Math.min(vx, width - 4).toFixed(2), y: 10, class: "vram-label",
                                      "text-anchor": vx > width * 0.6 ? "end" : "middle" },
                            t("vram") + " " + number(card.vram, 0) + " GiB"));
    }
    chart.appendChild(svg("text", { x: left, y: 62, class: "axis-label" }, "0"));
    chart.appendChild(svg("text", { x: width - left, y: 62, class: "axis-label", "text-anchor": "end" },
                          number(scale, 0) + " GiB"));
    var legend = el("ul", { class: "legend" }, parts.map(function (part) {
      return el("li", {}, [
        el("span", { class: "swatch seg-" + (SEGMENTS.indexOf(part.key) >= 0 ? part.key : "other"), "aria-hidden": "true" }),
        t("breakdown." + part.key) + " " + number(part.value, 1) + " GiB"
      ]);
    }));
    return el("figure", { class: "figure memory-figure" }, [
      el("figcaption", {}, [el("strong", { text: t("memory_title") }), " " + summary,
                            fitText ? el("span", { class: card.fits ? "ok" : "bad", text: " · " + fitText }) : null]),
      chart, legend
    ]);
  }

  /** Round tick values covering [low, high] (about `count` steps of 1, 2, 2.5 or 5 times a power of ten). */
  function niceTicks(low, high, count) {
    if (!(high > low)) { high = low + 1; }
    var raw = (high - low) / count;
    var power = Math.pow(10, Math.floor(Math.log10(raw)));
    var step = [1, 2, 2.5, 5, 10].map(function (m) { return m * power; }).filter(function (s) { return s >= raw; })[0];
    var ticks = [];
    for (var v = Math.floor(low / step) * step; v <= high + step * 0.999; v += step) { ticks.push(Number(v.toPrecision(10))); }
    return ticks;
  }

  /** Ticks for a value axis: from zero when the data starts near it, else from just below the smallest value. */
  function axisTicks(values, count) {
    var low = Math.min.apply(null, values), high = Math.max.apply(null, values);
    var spread = high - low;
    var start = low - spread * 0.15 < high * 0.25 ? 0 : Math.max(0, low - spread * 0.15);
    return niceTicks(start, high, count);
  }

  function costTimeChart(result) {
    var points = (result.offers || []).filter(function (o) {
      return o.fits !== false && typeof o.est_hours === "number" && typeof o.est_cost === "number";
    });
    if (points.length < 2) { return null; }
    var width = 320, height = 190, pad = { left: 44, right: 10, top: 10, bottom: 34 };
    var xTicks = axisTicks(points.map(function (p) { return p.est_hours; }), 4);
    var yTicks = axisTicks(points.map(function (p) { return p.est_cost; }), 4);
    var xMin = xTicks[0], xMax = xTicks[xTicks.length - 1], yMin = yTicks[0], yMax = yTicks[yTicks.length - 1];
    function px(v) { return pad.left + (v - xMin) / (xMax - xMin) * (width - pad.left - pad.right); }
    function py(v) { return height - pad.bottom - (v - yMin) / (yMax - yMin) * (height - pad.top - pad.bottom); }
    function tickText(v, ticks) { var step = ticks[1] - ticks[0]; return number(v, step < 1 ? (step < 0.1 ? 2 : 1) : 0); }
    var chart = svg("svg", { viewBox: "0 0 " + width + " " + height, class: "chart cost-time", role: "img",
                             "aria-label": t("chart_title") });
    xTicks.forEach(function (v) {
      chart.appendChild(svg("line", { x1: px(v), x2: px(v), y1: pad.top, y2: height - pad.bottom, class: "grid" }));
      chart.appendChild(svg("text", { x: px(v), y: height - pad.bottom + 13, class: "tick", "text-anchor": "middle" },
                            tickText(v, xTicks)));
    });
    yTicks.forEach(function (v) {
      chart.appendChild(svg("line", { x1: pad.left, x2: width - pad.right, y1: py(v), y2: py(v), class: "grid" }));
      chart.appendChild(svg("text", { x: pad.left - 5, y: py(v) + 3, class: "tick", "text-anchor": "end" },
                            tickText(v, yTicks)));
    });
    chart.appendChild(svg("text", { x: (pad.left + width - pad.right) / 2, y: height - 4, class: "axis-label",
                                    "text-anchor": "middle" }, t("axis_hours")));
    chart.appendChild(svg("text", { x: 10, y: (pad.top + height - pad.bottom) / 2, class: "axis-label",
                                    "text-anchor": "middle", transform: "rotate(-90 10 " + (pad.top + height - pad.bottom) / 2 + ")" },
                          t("axis_cost")));
    points.slice().reverse().forEach(function (offer) {
      var best = offer === result.offers[0];
      var dot = svg("circle", { cx: px(offer.est_hours).toFixed(2), cy: py(offer.est_cost).toFixed(2), r: best ? 6 : 4,
                                class: "dot" + (best ? " best" : "") + (offer.spot ? " spot" : "") });
      dot.appendChild(svg("title", {}, (offer.provider || "") + " " + (offer.instance_type || "") + " · " +
        number(offer.est_hours, 1) + " h · " + number(offer.est_cost, 2) + " USD" + (offer.spot ? " · " + t("spot") : "")));
      chart.appendChild(dot);
    });
    return el("figure", { class: "figure cost-figure" }, [el("figcaption", {}, [el("strong", { text: t("chart_title") })]), chart]);
  }

  function citationList(result) {
    var citations = result.citations || [];
    if (!citations.length) { return null; }
    return el("div", { class: "citations" }, [el("p", { class: "sources", text: t("sources") })].concat(
      citations.map(function (c, i) {
        return el("details", { "data-cite": i + 1 }, [
          el("summary", { text: "[" + (i + 1) + "] " + (c.title || c.id || "") }),
          markdown(c.text || "", null)
        ]);
      })));
  }

  function renderResult(bubble, result) {
    bubble.appendChild(markdown(result.answer || "", result.citations || []));
    [offersTable(result), memoryChart(result), costTimeChart(result), citationList(result)].forEach(function (node) {
      if (node) { bubble.appendChild(node); }
    });
  }

  // ---------------------------------------------------------------------------------------------- conversation

  function bubble(role, label) {
    var node = el("div", { class: "bubble " + role });
    node.appendChild(el("span", { class: "who", text: label }));
    ui.log.appendChild(node);
    return node;
  }

  function errorText(error) {
    var code = error && error.code;
    var known = code && strings.en && strings.en.errors && strings.en.errors[code];
    return t("errors." + (known ? code : "default"), {
      message: (error && error.message) || "", s: error && error.retryAfter, id: (error && error.error_id) || "–"
    });
  }

  function renderTurn(turn) {
    if (turn.role === "user") {
      bubble("user", t("you")).appendChild(el("p", { text: turn.text }));
    } else if (turn.role === "assistant") {
      renderResult(bubble("assistant", t("advisor")), turn.result || {});
    } else if (turn.role === "error") {
      bubble("error", t("advisor")).appendChild(el("p", { role: "alert", text: errorText(turn.error) }));
    }
  }

  function renderAll() {
    ui.log.textContent = "";
    bubble("assistant greeting", t("advisor")).appendChild(el("p", { text: t("greeting") }));
    state.turns.forEach(renderTurn);
    ui.thread.textContent = state.threadId ? t("thread") + ": " : "";
    if (state.threadId) { ui.thread.appendChild(el("code", { text: state.threadId })); }
    ui.log.scrollTop = ui.log.scrollHeight;
  }

  function parseSse(block) {
    var event = "message", data = [];
    block.split(/\r?\n/).forEach(function (line) {
      if (!line || line.charAt(0) === ":") { return; }
      var colon = line.indexOf(":");
      var field = colon < 0 ? line : line.slice(0, colon);
      var value = colon < 0 ? "" : line.slice(colon + 1).replace(/^ /, "");
      if (field === "event") { event = value; } else if (field === "data") { data.push(value); }
    });
    if (!data.length) { return null; }
    try { return { event: event, data: JSON.parse(data.join("\n")) }; } catch (e) { return null; }
  }

  function streamView(node) {
    var steps = el("ol", { class: "steps" });
    var details = el("details", { class: "steps-box" }, [el("summary", {}), steps]);
    var draft = el("p", { class: "draft" });
    node.appendChild(details);
    node.appendChild(draft);
    return {
      progress: function (event) {
        var last = steps.lastElementChild;
        if (last) { last.classList.remove("current"); }
        steps.appendChild(el("li", { class: "current", "data-node": event.node || "", text: event.label || event.node || "" }));
        details.querySelector("summary").textContent = t("steps", { n: steps.children.length });
        ui.status.textContent = event.label || "";
      },
      delta: function (event) { draft.textContent += event.text || ""; },
      finish: function () {
        var last = steps.lastElementChild;
        if (last) { last.classList.remove("current"); }
        draft.remove();
        if (!steps.children.length) { details.remove(); }
        ui.status.textContent = "";
      }
    };
  }

  function failTurn(node, view, error) {
    view.finish();
    node.className = "bubble error";
    node.appendChild(el("p", { role: "alert", text: errorText(error) }));
    state.turns.push({ role: "error", error: error });
    saveState();
  }

  async function send(text) {
    if (busy || !text.trim()) { return; }
    busy = true;
    ui.send.disabled = true;
    ui.log.setAttribute("aria-busy", "true");
    state.turns.push({ role: "user", text: text });
    saveState();
    renderTurn({ role: "user", text: text });
    var node = bubble("assistant", t("advisor"));
    var view = streamView(node);
    ui.status.textContent = t("working");
    ui.log.scrollTop = ui.log.scrollHeight;
    var body = { message: text };
    if (state.threadId) { body.thread_id = state.threadId; }
    if (state.langChosen) { body.language = state.lang; }
    try {
      var response = await fetch(API + "/api/chat/stream", {
        method: "POST", headers: { "Content-Type": "application/json", "Accept": "text/event-stream" },
        body: JSON.stringify(body)
      });
      if (!response.ok || !response.body) {
        var payload = await response.json().catch(function () { return {}; });
        var error = (payload && payload.error) || { code: "default", message: "HTTP " + response.status };
        error.retryAfter = response.headers.get("Retry-After");
        failTurn(node, view, error);
        return;
      }
      await readStream(response.body.getReader(), node, view);
    } catch (e) {
      failTurn(node, view, { code: "network", message: String(e && e.message || e) });
    } finally {
      busy = false;
      ui.send.disabled = false;
      ui.log.removeAttribute("aria-busy");
      ui.log.scrollTop = ui.log.scrollHeight;
    }
  }

  async function readStream(reader, node, view) {
    var decoder = new TextDecoder();
    var buffer = "";
    var done = false;
    while (!done) {
      var chunk = await reader.read();
      buffer += decoder.decode(chunk.value || new Uint8Array(), { stream: !chunk.done });
      var blocks = buffer.split(/\r?\n\r?\n/);
      buffer = chunk.done ? "" : blocks.pop();
      for (var i = 0; i < blocks.length && !done; i++) {
        var message = parseSse(blocks[i]);
        if (!message) { continue; }
        if (message.event === "progress") { view.progress(message.data); }
        else if (message.event === "delta") { view.delta(message.data); }
        else if (message.event === "final") { done = finishTurn(node, view, message.data.result || {}); }
        else if (message.event === "error") { failTurn(node, view, message.data); done = true; }
      }
      if (chunk.done && !done) { failTurn(node, view, { code: "network", message: "stream ended early" }); done = true; }
    }
    reader.cancel().catch(function () {});
  }

  function finishTurn(node, view, result) {
    view.finish();
    if (result.thread_id) { state.threadId = result.thread_id; }
    if (!state.langChosen && LANGS.indexOf(result.language) >= 0 && result.language !== state.lang) {
      state.lang = result.language;
      applyLanguage();
    }
    renderResult(node, result);
    state.turns.push({ role: "assistant", result: result });
    saveState();
    ui.thread.textContent = t("thread") + ": ";
    ui.thread.appendChild(el("code", { text: state.threadId || "" }));
    return true;
  }

  // ---------------------------------------------------------------------------------------------- shell

  function applyLanguage() {
    ui.launcher.setAttribute("aria-label", t("open"));
    ui.launcher.title = t("open");
    ui.title.textContent = t("title");
    ui.subtitle.textContent = t("subtitle");
    ui.panel.setAttribute("aria-label", t("title"));
    ui.langLabel.textContent = t("language");
    ui.lang.value = state.lang;
    ui.newButton.setAttribute("aria-label", t("new"));
    ui.newButton.title = t("new");
    ui.close.setAttribute("aria-label", t("close"));
    ui.close.title = t("close");
    ui.inputLabel.textContent = t("message_label");
    ui.input.placeholder = t("placeholder");
    ui.send.textContent = t("send");
    ui.host.setAttribute("lang", state.lang);
    if (!busy) { renderAll(); }
  }

  function setOpen(open) {
    ui.panel.hidden = !open;
    ui.launcher.setAttribute("aria-expanded", String(open));
    ui.launcher.classList.toggle("open", open);
    if (open) { ui.log.scrollTop = ui.log.scrollHeight; ui.input.focus(); } else { ui.launcher.focus(); }
  }

  function build() {
    var host = el("div", { id: "gpu-advisor-widget" });
    var root = host.attachShadow({ mode: "open" });
    root.appendChild(el("link", { rel: "stylesheet", href: ASSETS + "widget.css" }));
    ui.host = host;
    ui.launcher = el("button", { type: "button", class: "launcher", "aria-expanded": "false",
                                 "aria-controls": "ga-panel", "aria-haspopup": "dialog" });
    ui.launcher.appendChild(launcherIcon());
    ui.title = el("h2", { id: "ga-title" });
    ui.subtitle = el("p", { class: "subtitle" });
    ui.langLabel = el("label", { for: "ga-lang", class: "sr-only" });
    ui.lang = el("select", { id: "ga-lang" }, LANGS.map(function (code) {
      return el("option", { value: code, lang: code, text: (strings[code] && strings[code].lang_name) || code });
    }));
    ui.newButton = el("button", { type: "button", class: "icon new", text: "+" });
    ui.close = el("button", { type: "button", class: "icon close", text: "×" });
    ui.log = el("div", { class: "log", role: "log", "aria-live": "polite", tabindex: "0" });
    ui.status = el("div", { class: "status", role: "status", "aria-live": "polite" });
    ui.inputLabel = el("label", { for: "ga-input", class: "sr-only" });
    ui.input = el("textarea", { id: "ga-input", rows: "2", maxlength: "2000", autocomplete: "off" });
    ui.send = el("button", { type: "submit", class: "send" });
    ui.form = el("form", { class: "composer" }, [ui.inputLabel, ui.input, ui.send]);
    ui.thread = el("p", { class: "thread" });
    ui.panel = el("section", { id: "ga-panel", class: "panel", role: "dialog", "aria-modal": "false" }, [
      el("header", {}, [el("div", { class: "heading" }, [ui.title, ui.subtitle]), ui.langLabel, ui.lang,
                        ui.newButton, ui.close]),
      ui.log, ui.status, ui.form, ui.thread
    ]);
    ui.panel.hidden = true;
    root.appendChild(ui.panel);
    root.appendChild(ui.launcher);
    document.body.appendChild(host);

    ui.launcher.addEventListener("click", function () { setOpen(ui.panel.hidden); });
    ui.close.addEventListener("click", function () { setOpen(false); });
    ui.panel.addEventListener("keydown", function (event) {
      if (event.key === "Escape") { event.preventDefault(); setOpen(false); }
    });
    ui.input.addEventListener("keydown", function (event) {
      if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
        event.preventDefault();
        ui.form.requestSubmit();
      }
    });
    ui.form.addEventListener("submit", function (event) {
      event.preventDefault();
      var text = ui.input.value;
      if (!text.trim() || busy) { return; }
      ui.input.value = "";
      send(text);
    });
    ui.lang.addEventListener("change", function () {
      state.lang = pickLang(ui.lang.value);
      state.langChosen = true;
      saveState();
      applyLanguage();
    });
    ui.newButton.addEventListener("click", function () {
      if (busy) { return; }
      state.threadId = null;
      state.turns = [];
      saveState();
      renderAll();
      ui.input.focus();
    });
    applyLanguage();
  }

  function launcherIcon() {
    var icon = svg("svg", { viewBox: "0 0 24 24", width: 26, height: 26, "aria-hidden": "true", focusable: "false" });
    icon.appendChild(svg("path", { d: "M4 5h16v10H9l-5 4z", class: "icon-shape" }));
    icon.appendChild(svg("path", { d: "M8 9h8M8 12h5", class: "icon-lines" }));
    return icon;
  }

  function start() {
    fetch(ASSETS + "i18n.json").then(function (r) { return r.json(); }).then(function (data) {
      strings = data || {};
    }).catch(function () { strings = {}; }).then(build);
  }

  if (document.readyState === "loading") { document.addEventListener("DOMContentLoaded", start); } else { start(); }
})();
