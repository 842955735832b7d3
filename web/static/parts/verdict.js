/* The verdict card (one glance: GPUs, provider, region, total cost and time, budget/deadline, spot or on-demand) and
 * the "what changed" line of a follow-up. Uses the result's `verdict` and `changed` keys when the advisor sends
 * them, else the recommended offer (offers[0]) and the spec. */

import { el } from "./dom.js";
import { hours, money, number, t } from "./i18n.js";

function first() {
  for (let i = 0; i < arguments.length; i++) {
    if (arguments[i] !== undefined && arguments[i] !== null) { return arguments[i]; }
  }
  return null;
}

/** The verdict as one flat object, or null for an answer without a recommendation. */
export function verdictOf(result) {
  const given = result && result.verdict && typeof result.verdict === "object" ? result.verdict : null;
  const best = (result && result.offers || [])[0] || null;
  if (given ? !given.gpu : !(best && best.gpu)) { return null; }  // a question, a refusal, an ask-back
  const v = given || {};
  const b = best || {};
  const spec = result.spec || {};
  const budget = spec.budget || null;
  const currency = first(v.currency, "USD");
  const cost = first(v.total_cost, v.cost, v.est_cost, v.total_cost_usd, b.est_cost);
  const costUsd = first(v.total_cost_usd, currency === "USD" ? cost : null, b.est_cost);
  const out = {
    gpu: first(v.gpu, b.gpu), count: first(v.count, v.gpu_count, v.total_gpus, b.total_gpus, b.gpu_count, 1),
    provider: first(v.provider, b.provider), region: first(v.region, b.region),
    regions: b.regions || [], instance: first(v.instance, v.instance_type, b.instance_type),
    spot: Boolean(first(v.spot, b.spot, false)), cost: cost, currency: currency, costUsd: costUsd,
    budgetCurrency: first(v.budget_currency, budget ? budget.currency : null),
    costBudget: null,
    hours: first(v.hours, v.est_hours, b.est_hours),
    fitsBudget: first(v.fits_budget, b.meets_budget), fitsDeadline: first(v.fits_deadline, b.meets_deadline),
    kind: first(v.answer_kind, null)
  };
  out.costBudget = out.budgetCurrency && out.budgetCurrency !== out.currency
    ? first(v.total_cost_budget_currency, b.est_cost_budget_currency) : null;
  return out;
}

function badge(kind, text) { return el("span", { class: "badge " + kind, text: text }); }

/** The card; `href` links to the comparison page with this job filled in. */
export function verdictCard(v, href) {
  const where = [v.provider, v.region].filter(Boolean).join(" · ");
  const costText = money(v.cost, v.currency) + (v.costBudget !== null && v.costBudget !== undefined
    ? " (≈ " + money(v.costBudget, v.budgetCurrency) + ")" : "");
  const badges = [badge(v.spot ? "spot" : "on-demand", v.spot ? t("spot_badge") : t("on_demand_badge"))];
  if (v.fitsBudget !== null) { badges.push(badge(v.fitsBudget ? "ok" : "bad", v.fitsBudget ? t("fits_budget") : t("over_budget_badge"))); }
  if (v.fitsDeadline !== null) { badges.push(badge(v.fitsDeadline ? "ok" : "bad", v.fitsDeadline ? t("fits_deadline") : t("misses_deadline"))); }
  return el("div", { class: "verdict", role: "group", "aria-label": t("verdict_label") }, [
    el("p", { class: "verdict-kicker", text: t("verdict_label") }),
    el("p", { class: "verdict-gpus" }, [el("strong", { text: v.count + "× " + v.gpu })]),
    el("p", { class: "verdict-where", text: where }),
    el("dl", { class: "verdict-figures" }, [
      el("div", {}, [el("dt", { text: t("total_cost") }), el("dd", { class: "cost", text: costText })]),
      el("div", {}, [el("dt", { text: t("time") }), el("dd", { class: "hours", text: hours(v.hours) })])
    ]),
    el("p", { class: "badges" }, badges),
    href ? el("a", { class: "compare-link", href: href, target: "_blank", rel: "noopener", text: t("compare_link") }) : null
  ]);
}

function describe(value) {
  if (value === null || value === undefined) { return "–"; }
  if (typeof value === "number") { return number(value, Number.isInteger(value) ? 0 : 2); }
  if (typeof value === "boolean") { return value ? t("yes") : t("no"); }
  if (typeof value === "object") { return value.amount !== undefined ? value.amount + " " + (value.currency || "") : JSON.stringify(value); }
  return String(value);
}

function specValue(name, value) {
  if (value === null || value === undefined) { return "–"; }
  if (name === "budget" && typeof value === "object") { return money(value.amount, value.currency); }
  if (name === "deadline_hours") { return hours(value); }
  if (Array.isArray(value)) { return value.join(", "); }
  return describe(value);
}

/** Lines saying what changed: the fields the user changed (result.changed: JobSpec field names, or ready lines),
 * then how the recommendation moved compared with the previous answer. */
export function changeLines(result, previous) {
  const lines = [];
  const changed = result && result.changed;
  const before = (previous && previous.spec) || {}, after = (result && result.spec) || {};
  if (Array.isArray(changed)) {
    changed.forEach(function (item) {
      if (typeof item === "string" && /^[a-z_]+$/.test(item)) {
        const label = t("field." + item).indexOf("field.") === 0 ? item : t("field." + item);
        lines.push(item === "prefer" ? label : label + ": " + specValue(item, before[item]) + " → " + specValue(item, after[item]));
      } else if (typeof item === "string") {
        lines.push(item);
      } else if (item && typeof item === "object") {
        lines.push((item.label || item.field || "") + ": " + describe(first(item.before, item.from)) + " → " + describe(first(item.after, item.to)));
      }
    });
  }
  const now = verdictOf(result), then = previous ? verdictOf(previous) : null;
  if (now && then) {
    const gpusNow = now.count + "× " + now.gpu, gpusThen = then.count + "× " + then.gpu;
    if (gpusNow !== gpusThen) { lines.push(t("changed_gpus", { before: gpusThen, after: gpusNow })); }
    if (now.provider !== then.provider) { lines.push(t("changed_provider", { before: then.provider, after: now.provider })); }
    if (now.spot !== then.spot) {
      lines.push(t("changed_pricing", { before: then.spot ? t("spot") : t("on_demand"), after: now.spot ? t("spot") : t("on_demand") }));
    }
    if (Math.abs((now.costUsd || 0) - (then.costUsd || 0)) >= 0.005) {
      lines.push(t("changed_cost", { before: money(then.costUsd, "USD"), after: money(now.costUsd, "USD") }));
    }
    if (Math.abs((now.hours || 0) - (then.hours || 0)) >= 0.05) {
      lines.push(t("changed_hours", { before: hours(then.hours), after: hours(now.hours) }));
    }
  }
  return lines.length || !(now && then) ? lines : [t("changed_none")];
}

/** The "what changed" box of a follow-up, or null. */
export function changeBox(result, previous) {
  const lines = changeLines(result, previous);
  if (!lines.length) { return null; }
  return el("div", { class: "changes" }, [el("p", { class: "changes-title", text: t("changed_title") }),
                                          el("ul", {}, lines.map(function (line) { return el("li", { text: line }); }))]);
}
