/* SVG charts: the per-GPU memory bar (each part labelled) and offers' cost against time (legend, recommended
 * point marked). Tick labels carry as many decimals as their step needs (2.5 is "2,5", 3.25 is "3,25"). */

import { el, svg } from "./dom.js";
import { money, number, t } from "./i18n.js";

export const SEGMENTS = ["weights", "gradients", "optimizer", "activations", "temporary", "overhead"];

/** Round tick values covering [low, high]: steps of 1, 2, 2.5 or 5 times a power of ten, about `count` of them. */
export function niceTicks(low, high, count) {
  if (!(high > low)) { high = low + 1; }
  const raw = (high - low) / count;
  const power = Math.pow(10, Math.floor(Math.log10(raw)));
  const step = [1, 2, 2.5, 5, 10].map(function (m) { return m * power; }).filter(function (s) { return s >= raw; })[0];
  const ticks = [];
  for (let i = Math.floor(low / step); i * step <= high + step * 0.999; i++) { ticks.push(Number((i * step).toPrecision(12))); }
  return ticks;
}

/** Decimals needed to write every tick exactly (at most 6). */
export function tickDecimals(ticks) {
  let most = 0;
  ticks.forEach(function (v) {
    let d = 0;
    while (d < 6 && Math.abs(Math.round(v * Math.pow(10, d)) - v * Math.pow(10, d)) > 1e-6) { d++; }
    most = Math.max(most, d);
  });
  return most;
}

/** Tick labels in the interface locale, each with the decimals the set needs. */
export function tickLabels(ticks) {
  const digits = tickDecimals(ticks);
  return ticks.map(function (v) { return number(v, digits); });
}

/** Ticks for a value axis: from zero when the data starts near it, else from just below the smallest value. */
export function axisTicks(values, count) {
  const low = Math.min.apply(null, values), high = Math.max.apply(null, values);
  const spread = high - low;
  const start = low - spread * 0.15 < high * 0.25 ? 0 : Math.max(0, low - spread * 0.15);
  return niceTicks(start, high, count);
}

function segmentClass(key) { return "seg-" + (SEGMENTS.indexOf(key) >= 0 ? key : "other"); }

function memoryCard(result) {
  const fit = result.estimate && result.estimate.fit;
  if (fit && typeof fit.vram_gib === "number") { return { vram: fit.vram_gib, gpu: fit.gpu || "GPU", fits: fit.fits }; }
  const best = (result.offers || [])[0];
  if (best && typeof best.vram_gib_per_gpu === "number") {
    const used = typeof best.per_gpu_gib === "number" ? best.per_gpu_gib : null;
    return { vram: best.vram_gib_per_gpu, gpu: best.gpu, fits: used === null ? best.fits : used <= best.vram_gib_per_gpu };
  }
  return null;
}

/** {used, card, parts, summary, fitText} of the result's memory estimate, or null. */
export function memoryFacts(result) {
  const estimate = result.estimate;
  if (!estimate || !estimate.breakdown_gib) { return null; }
  const keys = SEGMENTS.concat(Object.keys(estimate.breakdown_gib).filter(function (k) { return SEGMENTS.indexOf(k) < 0; }));
  const parts = [];
  keys.forEach(function (key) {
    const value = Number(estimate.breakdown_gib[key]);
    if (isFinite(value) && value > 0) { parts.push({ key: key, value: value }); }
  });
  if (!parts.length) { return null; }
  const best = (result.offers || [])[0];
  const used = best && typeof best.per_gpu_gib === "number" ? best.per_gpu_gib
    : typeof estimate.per_gpu_gib === "number" ? estimate.per_gpu_gib
      : parts.reduce(function (sum, p) { return sum + p.value; }, 0);
  const card = memoryCard(result);
  const summary = card ? t("memory_summary", { used: number(used, 1), vram: number(card.vram, 0), gpu: card.gpu })
    : t("memory_summary_nofit", { used: number(used, 1) });
  const fitText = card && card.fits !== undefined && card.fits !== null ? (card.fits ? t("fits") : t("does_not_fit")) : "";
  return { used: used, card: card, parts: parts, summary: summary, fitText: fitText };
}

/** The memory bar: one labelled segment per part, the card's VRAM marked, and a legend with every part's GiB. */
export function memoryChart(result) {
  const facts = memoryFacts(result);
  if (!facts) { return null; }
  const parts = facts.parts, card = facts.card;
  const total = parts.reduce(function (sum, p) { return sum + p.value; }, 0);
  const scale = Math.max(total, facts.used, card ? card.vram : 0) * 1.08;
  const width = 320, left = 4, barWidth = width - 2 * left, barY = 20, barH = 26;
  const chart = svg("svg", { viewBox: "0 0 " + width + " 64", class: "chart memory", role: "img",
                             "aria-label": t("memory_title") + ": " + facts.summary +
                               (facts.fitText ? " (" + facts.fitText + ")" : "") + ". " +
                               parts.map(function (p) { return t("breakdown." + p.key) + " " + number(p.value, 1) + " GiB"; }).join(", ") });
  chart.appendChild(svg("rect", { x: left, y: barY, width: barWidth, height: barH, class: "track", rx: 3 }));
  let x = left;
  parts.forEach(function (part) {
    const w = Math.max(part.value / scale * barWidth, 0.5);
    const rect = svg("rect", { x: x.toFixed(2), y: barY, width: w.toFixed(2), height: barH, class: "seg " + segmentClass(part.key),
                               "data-part": part.key });
    rect.appendChild(svg("title", {}, t("breakdown." + part.key) + ": " + number(part.value, 2) + " GiB"));
    chart.appendChild(rect);
    if (w >= 28) {
      chart.appendChild(svg("text", { x: (x + w / 2).toFixed(2), y: barY + barH / 2 + 3.5, class: "seg-label",
                                      "text-anchor": "middle", "aria-hidden": "true" }, number(part.value, 1)));
    }
    x += w;
  });
  if (card) {
    const vx = left + card.vram / scale * barWidth;
    chart.appendChild(svg("line", { x1: vx.toFixed(2), x2: vx.toFixed(2), y1: 12, y2: barY + barH + 6,
                                    class: "vram-line" + (card.fits === false ? " over" : "") }));
    chart.appendChild(svg("text", { x: Math.min(vx, width - 4).toFixed(2), y: 10, class: "vram-label",
                                    "text-anchor": vx > width * 0.6 ? "end" : "middle" },
                          t("vram") + " " + number(card.vram, 0) + " GiB"));
  }
  chart.appendChild(svg("text", { x: left, y: 62, class: "axis-label" }, "0"));
  chart.appendChild(svg("text", { x: width - left, y: 62, class: "axis-label", "text-anchor": "end" },
                        number(scale, 0) + " GiB"));
  const legend = el("ul", { class: "legend memory-legend" }, parts.map(function (part) {
    return el("li", { "data-part": part.key }, [
      el("span", { class: "swatch " + segmentClass(part.key), "aria-hidden": "true" }),
      t("breakdown." + part.key) + " " + number(part.value, 1) + " GiB"
    ]);
  }));
  return el("figure", { class: "figure memory-figure" }, [
    el("figcaption", {}, [facts.summary,
                          facts.fitText ? el("span", { class: card.fits ? "ok" : "bad", text: " · " + facts.fitText }) : null]),
    chart, legend
  ]);
}

/** Offers' total cost against hours; the recommended offer is a larger ringed dot with a label. */
export function costTimeChart(result, offers) {
  const points = offers.filter(function (o) {
    return o.fits !== false && typeof o.est_hours === "number" && typeof o.est_cost === "number";
  });
  if (points.length < 2) { return null; }
  const best = offers[0];
  const width = 320, height = 200, pad = { left: 46, right: 12, top: 16, bottom: 34 };
  const xTicks = axisTicks(points.map(function (p) { return p.est_hours; }), 4);
  const yTicks = axisTicks(points.map(function (p) { return p.est_cost; }), 4);
  const xLabels = tickLabels(xTicks), yLabels = tickLabels(yTicks);
  const xMin = xTicks[0], xMax = xTicks[xTicks.length - 1], yMin = yTicks[0], yMax = yTicks[yTicks.length - 1];
  function px(v) { return pad.left + (v - xMin) / (xMax - xMin) * (width - pad.left - pad.right); }
  function py(v) { return height - pad.bottom - (v - yMin) / (yMax - yMin) * (height - pad.top - pad.bottom); }
  const chart = svg("svg", { viewBox: "0 0 " + width + " " + height, class: "chart cost-time", role: "img",
                             "aria-label": t("chart_title") + ". " + t("chart_best", {
                               offer: (best.total_gpus || best.gpu_count || 1) + "× " + best.gpu + " " + best.provider,
                               hours: number(best.est_hours, 1), cost: money(best.est_cost, "USD") }) });
  xTicks.forEach(function (v, i) {
    chart.appendChild(svg("line", { x1: px(v), x2: px(v), y1: pad.top, y2: height - pad.bottom, class: "grid" }));
    chart.appendChild(svg("text", { x: px(v), y: height - pad.bottom + 13, class: "tick x-tick", "text-anchor": "middle",
                                    "data-value": v }, xLabels[i]));
  });
  yTicks.forEach(function (v, i) {
    chart.appendChild(svg("line", { x1: pad.left, x2: width - pad.right, y1: py(v), y2: py(v), class: "grid" }));
    chart.appendChild(svg("text", { x: pad.left - 5, y: py(v) + 3, class: "tick y-tick", "text-anchor": "end",
                                    "data-value": v }, yLabels[i]));
  });
  chart.appendChild(svg("text", { x: (pad.left + width - pad.right) / 2, y: height - 4, class: "axis-label",
                                  "text-anchor": "middle" }, t("axis_hours")));
  chart.appendChild(svg("text", { x: 10, y: (pad.top + height - pad.bottom) / 2, class: "axis-label",
                                  "text-anchor": "middle", transform: "rotate(-90 10 " + (pad.top + height - pad.bottom) / 2 + ")" },
                        t("axis_cost")));
  points.slice().reverse().forEach(function (offer) {
    const isBest = offer === best;
    const dot = svg("circle", { cx: px(offer.est_hours).toFixed(2), cy: py(offer.est_cost).toFixed(2), r: isBest ? 7 : 4,
                                class: "dot" + (isBest ? " best" : "") + (offer.spot ? " spot" : " on-demand") });
    dot.appendChild(svg("title", {}, (offer.provider || "") + " " + (offer.instance_type || "") + " · " +
      number(offer.est_hours, 1) + " h · " + money(offer.est_cost, "USD") + " · " + (offer.spot ? t("spot") : t("on_demand"))));
    chart.appendChild(dot);
  });
  if (points.indexOf(best) >= 0) {
    const bx = px(best.est_hours), by = py(best.est_cost);
    chart.appendChild(svg("text", { x: (bx > width * 0.6 ? bx - 10 : bx + 10).toFixed(2), y: Math.max(by - 9, 11).toFixed(2),
                                    class: "best-label", "text-anchor": bx > width * 0.6 ? "end" : "start" },
                          "★ " + t("recommended")));
  }
  const legend = el("ul", { class: "legend cost-legend" }, [
    el("li", {}, [el("span", { class: "swatch dot-best", "aria-hidden": "true" }), t("recommended")]),
    el("li", {}, [el("span", { class: "swatch dot-on-demand", "aria-hidden": "true" }), t("on_demand")]),
    el("li", {}, [el("span", { class: "swatch dot-spot", "aria-hidden": "true" }), t("spot")])
  ]);
  return el("figure", { class: "figure cost-figure" }, [el("figcaption", {}, [t("chart_title")]), chart, legend]);
}
