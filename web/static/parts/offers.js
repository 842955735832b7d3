/* The offers table: one row per instance (the same instance at the same price in several zones/regions is one row),
 * the recommended offer first and the others by expected total cost (what the caption says), GPU in a sticky first
 * column, instance ids and regions breaking only at separators. */

import { breakable, el } from "./dom.js";
import { hours, number, t } from "./i18n.js";

export const MAX_TABLE_ROWS = 10;

/** Offers with duplicates merged: same provider, instance, GPUs, pricing, price and cost -> one, regions joined. */
export function collapseOffers(offers) {
  const out = [];
  const seen = {};
  (offers || []).forEach(function (offer) {
    const key = [offer.provider, offer.instance_type, offer.total_gpus || offer.gpu_count, offer.spot ? 1 : 0,
                 Number(offer.price_per_hour).toFixed(4), Number(offer.est_cost).toFixed(4)].join("|");
    const regions = (offer.regions && offer.regions.length ? offer.regions : [offer.region]).filter(Boolean);
    if (seen[key]) {
      regions.forEach(function (r) { if (seen[key].regions.indexOf(r) < 0) { seen[key].regions.push(r); } });
      return;
    }
    seen[key] = Object.assign({}, offer, { regions: regions.slice() });
    out.push(seen[key]);
  });
  return out;
}

/** The rows the table shows, in its order: the recommended offer (the answer's first), then the others by expected
 * total cost, then hours. The advisor lists more than cost order (its headline rules, an on-demand plan beside a spot
 * headline, a "faster" preference): sorting here keeps the caption true whatever the list's order. */
export function tableRows(offers) {
  const list = offers || [];
  const rest = list.slice(1).sort(function (a, b) {
    return (Number(a.est_cost) - Number(b.est_cost)) || (Number(a.est_hours) - Number(b.est_hours));
  });
  return list.slice(0, 1).concat(rest).slice(0, MAX_TABLE_ROWS);
}

function regionCell(regions) {
  const first = regions[0] || "–";
  const cell = el("td", { class: "region", title: regions.join(", ") || null }, [el("span", {}, [breakable(first)])]);
  if (regions.length > 1) {
    cell.appendChild(el("small", { class: "more", text: t("more_regions", { n: regions.length - 1 }) }));
  }
  return cell;
}

/** The table of `shown` (tableRows' order), in a horizontally scrollable region (the GPU column stays in view). */
export function offersTable(shown) {
  if (!shown.length) { return null; }
  const head = [["col_gpu", ""], ["col_provider", ""], ["col_region", "region"], ["col_cost", "num"], ["col_hours", "num"],
                ["col_price", "num"]];
  const table = el("table", { class: "offers" }, [
    el("caption", { class: "table-note", text: t("offers_caption") }),
    el("thead", {}, [el("tr", {}, head.map(function (h) { return el("th", { scope: "col", class: h[1] || null, text: t(h[0]) }); }))])
  ]);
  const body = table.appendChild(el("tbody"));
  shown.forEach(function (offer, i) {
    const best = i === 0;
    const note = offer.meets_budget === false ? t("over_budget") : offer.meets_deadline === false ? t("misses_deadline") : null;
    body.appendChild(el("tr", { class: best ? "best" : null, "aria-current": best ? "true" : null }, [
      el("th", { scope: "row", class: "gpu" }, [
        el("span", { class: "gpus" }, [(offer.total_gpus || offer.gpu_count || 1) + "× ", breakable(offer.gpu || "?")]),
        best ? el("small", { class: "badge-best" }, [el("span", { "aria-hidden": "true", text: "★ " }),
                                                     el("span", { class: "best-text", text: t("recommended") })]) : null
      ]),
      el("td", { class: "provider" }, [el("span", { text: offer.provider || "" }),
                                       el("small", { class: "instance" }, [breakable(offer.instance_type || "")]),
                                       el("small", { class: "region-inline" },
                                          [breakable((offer.regions || [])[0] || "")])]),
      regionCell(offer.regions || []),
      el("td", { class: "num" }, [el("span", { text: number(offer.est_cost, 2) }),
                                  note ? el("small", { class: "note", text: note }) : null]),
      el("td", { class: "num", text: hours(offer.est_hours).replace(" h", "") }),
      el("td", { class: "num" }, [el("span", { text: number(offer.price_per_hour, 2) }),
                                  el("small", { class: offer.spot ? "pricing spot" : "pricing", text: offer.spot ? t("spot") : t("on_demand") })])
    ]));
  });
  return el("div", { class: "scroll", tabindex: "0", role: "region", "aria-label": t("offers_caption") }, [table]);
}
