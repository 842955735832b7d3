/* The widget's shell and conversation: launcher, panel, language menu, saved state, sending and streaming turns. */

import { el, svg } from "./dom.js";
import { LANGS, hasLang, knownError, langName, money, pickLang, setLang, setStrings, t } from "./i18n.js";
import { chatStream } from "./stream.js";
import { chips, renderResult } from "./answer.js";
import { verdictCard, verdictOf } from "./verdict.js";

const MAX_TURNS = 24;
/** Failures worth sending the same message again for (the message itself was fine). */
const RETRYABLE = ["network", "not_ready", "rate_limited", "internal_error", "catalog_unavailable"];

let config = null;
let state = null;
const ui = {};
let busy = false;

function loadState(storeKey, defaultLang) {
  const initial = { lang: defaultLang, threadId: null, threadToken: null, turns: [] };
  try {
    const saved = JSON.parse(window.localStorage.getItem(storeKey) || "null");
    if (saved && typeof saved === "object") {
      if (saved.langChosen === true && hasLang(saved.lang)) { initial.lang = saved.lang; initial.langChosen = true; }
      initial.threadId = typeof saved.threadId === "string" ? saved.threadId : null;
      initial.threadToken = typeof saved.threadToken === "string" ? saved.threadToken : null;
      initial.turns = Array.isArray(saved.turns) ? saved.turns.slice(-MAX_TURNS) : [];
    }
  } catch (e) { /* storage blocked or corrupt: start fresh */ }
  return initial;
}

function saveState() {
  state.turns = state.turns.slice(-MAX_TURNS);
  try { window.localStorage.setItem(config.storeKey, JSON.stringify(state)); } catch (e) { /* full or blocked */ }
}

function bubble(role, label) {
  const node = el("div", { class: "bubble " + role });
  node.appendChild(el("span", { class: "who", text: label }));
  ui.log.appendChild(node);
  return node;
}

function errorText(error) {
  const code = error && error.code;
  return t("errors." + (knownError(code) ? code : "default"), {
    message: (error && error.message) || "", s: error && error.retryAfter, id: (error && error.error_id) || "–"
  });
}

function previousResult(index) {
  for (let i = index - 1; i >= 0; i--) {
    if (state.turns[i].role === "assistant") { return state.turns[i].result || null; }
  }
  return null;
}

function renderAssistant(node, result, index) {
  renderResult(node, result, { previous: previousResult(index), api: config.api });
}

function errorBubble(turn, index) {
  const node = bubble("error", t("advisor"));
  node.appendChild(el("p", { role: "alert", text: errorText(turn.error) }));
  if (turn.retry && index === state.turns.length - 1) {
    const button = el("button", { type: "button", class: "retry", text: t("retry") });
    button.addEventListener("click", function () { retry(index); });
    node.appendChild(el("p", { class: "retry-row" }, [button]));
  }
  return node;
}

function renderTurn(turn, index) {
  if (turn.role === "user") {
    bubble("user", t("you")).appendChild(el("p", { text: turn.text }));
    return null;
  }
  if (turn.role === "assistant") {
    const node = bubble("assistant", t("advisor"));
    renderAssistant(node, turn.result || {}, index);
    return node;
  }
  if (turn.role === "error") { errorBubble(turn, index); }
  return null;
}

/** Send the message of a failed turn again: the failure and its message leave the log, the new try takes over. */
function retry(index) {
  const failed = state.turns[index];
  if (busy || !failed || !failed.retry) { return; }
  const asked = state.turns[index - 1];
  state.turns.splice(asked && asked.role === "user" ? index - 1 : index);
  saveState();
  renderAll();
  send(failed.retry.text, failed.retry.extra || undefined);
}

/** Quick replies under the latest answer only. */
function showChips() {
  ui.log.querySelectorAll(".chips").forEach(function (node) { node.remove(); });
  const last = state.turns[state.turns.length - 1];
  if (!last || last.role !== "assistant" || busy) { return; }
  const box = chips(last.result || {}, function (text, extra) { send(text, extra); });
  const bubbles = ui.log.querySelectorAll(".bubble.assistant:not(.greeting)");
  if (box && bubbles.length) { bubbles[bubbles.length - 1].appendChild(box); }
}

/** Scroll the log so that `node` starts at its top (the start of an answer, not its sources). */
function showStart(node) {
  if (node) { ui.log.scrollTop = Math.max(0, node.offsetTop - 8); } else { ui.log.scrollTop = ui.log.scrollHeight; }
}

function renderAll() {
  ui.log.textContent = "";
  bubble("assistant greeting", t("advisor")).appendChild(el("p", { text: t("greeting") }));
  let lastAnswer = null;
  state.turns.forEach(function (turn, i) { lastAnswer = renderTurn(turn, i) || lastAnswer; });
  showChips();
  ui.thread.textContent = state.threadId ? t("thread") + ": " : "";
  if (state.threadId) { ui.thread.appendChild(el("code", { text: state.threadId })); }
  const last = state.turns[state.turns.length - 1];
  showStart(last && last.role === "assistant" ? lastAnswer : null);
}

/** What the reply bubble shows while it waits: the step running now (a live line under a spinner), the steps so far
 * (collapsed), the verdict card as soon as the stream sends it, and the answer text as it streams. */
function streamView(node) {
  const now = el("span", { class: "wait-text", text: t("working") });
  const wait = el("p", { class: "wait" }, [el("span", { class: "spinner", "aria-hidden": "true" }), now]);
  const steps = el("ol", { class: "steps" });
  const summary = el("summary", {});
  const details = el("details", { class: "steps-box", hidden: "" }, [summary, steps]);
  const card = el("div", { class: "verdict-preview" });
  const draft = el("p", { class: "draft" });
  [wait, card, draft, details].forEach(function (part) { node.appendChild(part); });
  return {
    progress: function (event) {
      const last = steps.lastElementChild;
      if (last) { last.classList.remove("current"); }
      const label = event.label || event.node || "";
      steps.appendChild(el("li", { class: "current", "data-node": event.node || "", text: label }));
      summary.textContent = t("steps", { n: steps.children.length });
      details.hidden = false;
      now.textContent = label.replace(/…$/, "") ? label : t("working");
      ui.status.textContent = event.label || "";
    },
    verdict: function (event) {
      const v = verdictOf({ verdict: event.verdict });
      card.textContent = "";
      if (v) { card.appendChild(verdictCard(v, null)); }
    },
    delta: function (event) { draft.textContent += event.text || ""; },
    finish: function () {
      const last = steps.lastElementChild;
      if (last) { last.classList.remove("current"); }
      [wait, card, draft].forEach(function (part) { part.remove(); });
      if (!steps.children.length) { details.remove(); }
      ui.status.textContent = "";
    }
  };
}

function announce(result) {
  const v = verdictOf(result);
  ui.status.textContent = v ? t("answer_ready_verdict", { gpus: v.count + "× " + v.gpu, provider: v.provider,
                                                         cost: money(v.cost, v.currency) })
    : t("answer_ready");
}

async function send(text, extra) {
  if (busy || (!text.trim() && !(extra && extra.changes))) { return; }
  busy = true;
  ui.send.disabled = true;
  ui.log.setAttribute("aria-busy", "true");
  showChips();
  state.turns.push({ role: "user", text: text });
  saveState();
  renderTurn({ role: "user", text: text });
  let node = bubble("assistant", t("advisor"));
  const view = streamView(node);
  ui.status.textContent = t("working");
  ui.status.classList.add("quiet");  // the bubble shows the step; the status line only announces it
  ui.log.scrollTop = ui.log.scrollHeight;
  const body = Object.assign({ message: text }, extra || {});
  if (state.threadId) { body.thread_id = state.threadId; }
  if (state.threadId && state.threadToken) { body.thread_token = state.threadToken; }  // the thread's capability
  if (state.langChosen) { body.language = state.lang; }  // the menu's choice is the answer's language too
  const outcome = await chatStream(config.api, body, view);
  view.finish();
  ui.status.classList.remove("quiet");
  busy = false;
  ui.send.disabled = false;
  if (outcome.result) {
    const result = outcome.result;
    if (result.thread_id) { state.threadId = result.thread_id; }
    if (result.thread_token) { state.threadToken = result.thread_token; }
    state.turns.push({ role: "assistant", result: result });
    saveState();
    renderAssistant(node, result, state.turns.length - 1);
    ui.thread.textContent = t("thread") + ": ";
    ui.thread.appendChild(el("code", { text: state.threadId || "" }));
    announce(result);
    if (ui.input.value === text) { ui.input.value = ""; }  // a retried message kept in the box is sent now
  } else {
    const code = outcome.error && outcome.error.code;
    const turn = { role: "error", error: outcome.error };
    if (RETRYABLE.indexOf(code) >= 0) {  // the message was fine: keep it, in the box and behind a retry button
      turn.retry = { text: text, extra: extra || null };
      if (!extra && !ui.input.value.trim()) { ui.input.value = text; }  // a typed message, back in its box
    }
    state.turns.push(turn);
    if (code === "thread_not_found") {  // gone (pruned) or never ours: start anew
      state.threadId = null;
      state.threadToken = null;
    }
    saveState();
    node.remove();
    node = errorBubble(turn, state.turns.length - 1);
  }
  ui.log.removeAttribute("aria-busy");
  showChips();
  showStart(node);
}

function applyLanguage() {
  setLang(state.lang);
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
  ui.log.setAttribute("aria-label", t("log_label"));
  if (!busy) { renderAll(); }
}

function setOpen(open) {
  ui.panel.hidden = !open;
  ui.launcher.setAttribute("aria-expanded", String(open));
  ui.launcher.classList.toggle("open", open);
  if (open) { renderAll(); ui.input.focus(); } else { ui.launcher.focus(); }
}

function launcherIcon() {
  const icon = svg("svg", { viewBox: "0 0 24 24", width: 26, height: 26, "aria-hidden": "true", focusable: "false" });
  icon.appendChild(svg("path", { d: "M4 5h16v10H9l-5 4z", class: "icon-shape" }));
  icon.appendChild(svg("path", { d: "M8 9h8M8 12h5", class: "icon-lines" }));
  return icon;
}

function build() {
  const host = el("div", { id: "gpu-advisor-widget" });
  const root = host.attachShadow({ mode: "open" });
  root.appendChild(el("link", { rel: "stylesheet", href: config.assets + "widget.css" }));
  ui.host = host;
  ui.launcher = el("button", { type: "button", class: "launcher", "aria-expanded": "false",
                               "aria-controls": "ga-panel", "aria-haspopup": "dialog" });
  ui.launcher.appendChild(launcherIcon());
  ui.title = el("h2", { id: "ga-title" });
  ui.subtitle = el("p", { class: "subtitle" });
  ui.langLabel = el("label", { for: "ga-lang", class: "sr-only" });
  ui.lang = el("select", { id: "ga-lang" }, LANGS.map(function (code) {
    return el("option", { value: code, lang: code, text: langName(code) });
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
  ui.panel = el("section", { id: "ga-panel", class: "panel", role: "dialog", "aria-modal": "false",
                             "aria-labelledby": "ga-title" }, [
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
    const text = ui.input.value;
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
    state.threadToken = null;
    state.turns = [];
    saveState();
    renderAll();
    ui.input.focus();
  });
  applyLanguage();
}

/** Start the widget: {api, assets, lang} from the embed tag; strings from i18n.json next to the script. */
export async function start(options) {
  config = { api: options.api, assets: options.assets, storeKey: "gpu-advisor:v2:" + options.api };
  state = loadState(config.storeKey, pickLang(options.lang));
  try {
    const response = await fetch(config.assets + "i18n.json");
    setStrings(await response.json());
  } catch (e) {
    setStrings({});
  }
  build();
}
