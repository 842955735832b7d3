/* One answer in the chat: the verdict card first, "what changed" for a follow-up, the short lead of the answer text,
 * then collapsible sections (memory, offers and the cost/time chart, the answer's own titled blocks such as layout,
 * spot, alternatives and assumptions, and the sources). An answer without a recommendation is shown as text. */

import { el, section } from "./dom.js";
import { t, number } from "./i18n.js";
import { markdown, splitAnswer } from "./markdown.js";
import { costTimeChart, memoryChart, memoryFacts } from "./charts.js";
import { collapseOffers, offersTable, tableRows } from "./offers.js";
import { changeBox, verdictCard, verdictOf } from "./verdict.js";
import { skypilotButton } from "./export.js";

/** The comparison page for the result's job (spec as JSON), in the answer's language. */
export function compareHref(api, result) {
  const spec = result.spec || null;
  if (!spec || !(spec.model || spec.params_b)) { return null; }
  const compact = {};
  Object.keys(spec).forEach(function (k) { if (spec[k] !== null && spec[k] !== undefined) { compact[k] = spec[k]; } });
  return api + "/compare?job=" + encodeURIComponent(JSON.stringify(compact)) + "&lang=" + encodeURIComponent(result.language || "en");
}

function citationList(citations) {
  return el("div", { class: "citations" }, citations.map(function (c, i) {
    return el("details", { "data-cite": i + 1 }, [
      el("summary", { text: "[" + (i + 1) + "] " + (c.title || c.id || "") }),
      markdown(c.text || "", null)
    ]);
  }));
}

function memoryTitle(facts) {
  return [t("memory_title"), el("span", { class: "summary-extra" }, [
    " · " + number(facts.used, 1) + (facts.card ? " / " + number(facts.card.vram, 0) : "") + " GiB",
    facts.fitText ? el("span", { class: facts.card.fits ? "ok" : "bad", text: " · " + facts.fitText }) : null])];
}

/** Sections of a job answer, in order. */
function sections(result, blocks, href) {
  const citations = result.citations || [];
  const out = [];
  const facts = memoryFacts(result);
  const memoryBlock = facts ? blocks.findIndex(function (b) {
    const title = b.title.toLowerCase();
    return t("memory_title").toLowerCase().indexOf(title) === 0 || title.indexOf(t("memory_word", null, result.language).toLowerCase()) === 0;
  }) : -1;
  if (facts) {
    const text = memoryBlock >= 0 ? markdown(blocks[memoryBlock].text, citations) : null;
    out.push(section("memory", memoryTitle(facts), [memoryChart(result), text]));
  }
  const offers = tableRows(collapseOffers(result.offers || []));  // the count, the table and the chart: the same rows
  if (offers.length) {
    out.push(section("offers", [t("offers_title"), el("span", { class: "summary-extra", text: " · " + offers.length })],
                     [offersTable(offers), costTimeChart(result, offers),
                      href ? el("a", { class: "compare-link", href: href, target: "_blank", rel: "noopener",
                                       text: t("compare_link") }) : null]));
  }
  blocks.forEach(function (block, i) {
    if (i === memoryBlock) { return; }
    out.push(section("text", block.title, [markdown(block.text, citations)]));
  });
  if (citations.length) {
    out.push(section("sources", [t("sources"), el("span", { class: "summary-extra", text: " · " + citations.length })],
                     [citationList(citations)]));
  }
  return out;
}

/** Fill `bubble` with the rendering of `result`; `previous` is the conversation's earlier answer (or null). */
export function renderResult(bubble, result, options) {
  const opts = options || {};
  const verdict = verdictOf(result);
  const citations = result.citations || [];
  if (!verdict) {
    bubble.appendChild(markdown(result.answer || "", citations));
    if (citations.length) {
      bubble.appendChild(section("sources", [t("sources"), el("span", { class: "summary-extra", text: " · " + citations.length })],
                                 [citationList(citations)]));
    }
    return;
  }
  const parts = splitAnswer(result.answer || "");
  const href = opts.api ? compareHref(opts.api, result) : null;
  bubble.appendChild(verdictCard(verdict, href));
  if (opts.api) { bubble.appendChild(skypilotButton(opts.api, result)); }
  if (opts.previous && verdictOf(opts.previous)) {
    const box = changeBox(result, opts.previous);
    if (box) { bubble.appendChild(box); }
  }
  bubble.appendChild(markdown(parts.lead, citations));
  sections(result, parts.blocks, href).forEach(function (node) { bubble.appendChild(node); });
}

/** Quick replies the advisor understands, in the answer's language; `send(text, extra)` sends one. */
export function chips(result, send) {
  const v = verdictOf(result);
  if (!v) { return null; }
  const lang = result.language;
  const spec = result.spec || {};
  const items = [["chip_cheaper", { prefer: "cost" }], ["chip_faster", { prefer: "speed" }]];
  if (spec.interruptible_ok !== true) { items.push(["chip_spot", { changes: { interruptible_ok: true } }]); }
  if (v.count !== 1) { items.push(["chip_one_gpu", { changes: { num_gpus: 1 } }]); }
  const box = el("div", { class: "chips", role: "group", "aria-label": t("chips_label") });
  items.forEach(function (item) {
    const label = t(item[0], null, lang);
    const button = el("button", { type: "button", class: "chip", lang: lang, "data-chip": item[0], text: label });
    button.addEventListener("click", function () {
      send(t(item[0] + "_message", null, lang), Object.assign({ language: lang }, item[1]));
    });
    box.appendChild(button);
  });
  return box;
}
