/* The comparison page: filters, sortable headers and server-side pages over GET /api/compare; a job (typed here or
 * handed over in ?job=) adds fit, per-GPU memory, hours and job cost. The state lives in the URL (links can be shared). */

import { breakable, el } from "../parts/dom.js";
import { LANGS, hasLang, langName, money, number, pickLang, setLang, setStrings, t } from "../parts/i18n.js";
import { drawChart } from "./chart.js";
import { downloadCsv } from "./csv.js";

const root = document.getElementById("compare");
const API = (root.dataset.api || window.location.origin).replace(/\/+$/, "");
const ASSETS = new URL("../", import.meta.url).href;
const FILTERS = ["q", "gpu", "provider", "region", "gpu_count", "min_vram", "max_price", "interconnect", "spot"];
// What decides a choice comes first (it stays in view at 1280 px, and at 375 px the first five do); one snapshot
// date for the whole catalog is said once in the intro, not per row.
const BASE_COLUMNS = [
  ["gpu", "col_gpu", "gpu"], ["provider", "col_provider", "provider"], ["price", "col_price", "price"],
  ["spot_price", "col_spot", "spot_price"], ["region", "col_region", "region"], ["count", "col_count", "count"],
  ["vram", "col_vram", "vram"], ["interconnect", "col_interconnect", "interconnect"], ["billing", "col_billing", "billing"]
];
const JOB_COLUMNS = [["job_cost", "col_job_cost", "job_cost"], ["hours", "col_hours", "hours"],
                     ["fits", "col_fits", null], ["per_gpu", "col_per_gpu", "per_gpu_gib"]];

const params = new URLSearchParams(window.location.search);
const state = {
  lang: hasLang(params.get("lang")) ? params.get("lang") : null,
  job: params.get("job") || "",
  sort: params.get("sort") || "", order: params.get("order") === "desc" ? "desc" : "asc",
  page: Math.max(1, parseInt(params.get("page"), 10) || 1), pageSize: 50,
  fitsOnly: params.get("fits_only") !== "false",
  filters: {}
};
FILTERS.forEach(function (name) { if (params.get(name)) { state.filters[name] = params.get(name); } });
let data = null;
let request = 0;
const c = function (key, values) { return t("compare." + key, values); };
/** A catalog value's label (interconnect names), the value itself when there is no translation. */
const label = function (value) { const text = c(value); return text === "compare." + value ? value : text; };

function query() {
  const q = new URLSearchParams();
  Object.keys(state.filters).forEach(function (k) { if (state.filters[k]) { q.set(k, state.filters[k]); } });
  if (state.job) { q.set("job", state.job); if (!state.fitsOnly) { q.set("fits_only", "false"); } }
  if (state.sort) { q.set("sort", state.sort); q.set("order", state.order); }
  if (state.page > 1) { q.set("page", String(state.page)); }
  if (state.lang) { q.set("lang", state.lang); }
  return q;
}

async function load() {
  const mine = ++request;
  const q = query();
  const shown = new URLSearchParams(q);
  if (params.get("embed")) { shown.set("embed", params.get("embed")); }
  window.history.replaceState(null, "", window.location.pathname + "?" + shown.toString());
  q.set("page_size", String(state.pageSize));
  document.getElementById("c-count").textContent = c("loading");
  root.setAttribute("aria-busy", "true");
  let payload;
  try {
    const response = await fetch(API + "/api/compare?" + q.toString());
    payload = await response.json();
    if (!response.ok) { throw new Error((payload && payload.error && payload.error.message) || "HTTP " + response.status); }
  } catch (error) {
    if (mine !== request) { return; }
    root.removeAttribute("aria-busy");
    document.getElementById("c-count").textContent = c("error", { message: error.message });
    return;
  }
  if (mine !== request) { return; }
  data = payload;
  if (!state.lang && data.job && hasLang(data.job.language)) { state.lang = data.job.language; applyLanguage(); }
  root.removeAttribute("aria-busy");
  render();
}

function optionList(select, values, labelOf) {
  const current = select.value;
  select.textContent = "";
  select.appendChild(el("option", { value: "", text: c("any") }));
  values.forEach(function (v) { select.appendChild(el("option", { value: v, text: labelOf ? labelOf(v) : v })); });
  select.value = current;
}

function field(name, label, control) {
  control.id = "f-" + name;
  control.name = name;
  return el("div", { class: "field" }, [el("label", { for: control.id, text: label }), control]);
}

function buildFilters() {
  const form = document.getElementById("c-filters");
  form.querySelectorAll(".field, .check").forEach(function (n) { n.remove(); });
  const controls = {
    q: el("input", { type: "search", autocomplete: "off" }), gpu: el("select"), provider: el("select"),
    region: el("input", { type: "text", autocomplete: "off" }),
    gpu_count: el("input", { type: "number", min: "1", max: "1024", step: "1", inputmode: "numeric" }),
    min_vram: el("input", { type: "number", min: "0", max: "4096", step: "1", inputmode: "decimal" }),
    max_price: el("input", { type: "number", min: "0", step: "0.1", inputmode: "decimal" }),
    interconnect: el("select")
  };
  const labels = { q: c("search"), gpu: c("gpu"), provider: c("provider"), region: c("region"), gpu_count: c("count"),
                   min_vram: c("min_vram"), max_price: c("max_price"), interconnect: c("interconnect") };
  Object.keys(controls).forEach(function (name) { form.appendChild(field(name, labels[name], controls[name])); });
  const spot = el("input", { type: "checkbox", id: "f-spot", name: "spot" });
  form.appendChild(el("div", { class: "check" }, [spot, el("label", { for: "f-spot", text: c("spot_only") })]));
  const fits = el("input", { type: "checkbox", id: "f-fits", name: "fits_only" });
  form.appendChild(el("div", { class: "check job-only" }, [fits, el("label", { for: "f-fits", text: c("fits_only") })]));
  if (data) { fillFacets(); }
  Object.keys(controls).forEach(function (name) {
    controls[name].value = state.filters[name] || "";
    const kind = controls[name].tagName === "SELECT" ? "change" : "input";
    let timer = null;
    controls[name].addEventListener(kind, function () {
      window.clearTimeout(timer);
      timer = window.setTimeout(function () {
        state.filters[name] = controls[name].value.trim();
        state.page = 1;
        load();
      }, kind === "input" ? 250 : 0);
    });
  });
  spot.checked = state.filters.spot === "true";
  spot.addEventListener("change", function () { state.filters.spot = spot.checked ? "true" : ""; state.page = 1; load(); });
  fits.checked = state.fitsOnly;
  fits.addEventListener("change", function () { state.fitsOnly = fits.checked; state.page = 1; load(); });
}

function fillFacets() {
  optionList(document.getElementById("f-gpu"), data.facets.gpus);
  optionList(document.getElementById("f-provider"), data.facets.providers);
  optionList(document.getElementById("f-interconnect"), data.facets.interconnects, label);
  ["gpu", "provider", "interconnect"].forEach(function (name) {
    document.getElementById("f-" + name).value = state.filters[name] || "";
  });
}

function billingText(row) {
  const s = row.billing_s;
  const text = s === 1 ? c("per_s") : s === 60 ? c("per_min") : s === 3600 ? c("per_h") : c("per_n_s", { n: number(s, 0) });
  return row.billing_assumed ? text + " (" + c("billing_assumed") + ")" : text;
}

function cells(row) {
  const job = row.job || null;
  const out = {
    gpu: el("th", { scope: "row" }, [row.gpu, el("small", { text: [row.gpu_form_factor, row.gpu_count + "×",
      number(row.vram_gib_per_gpu, 0) + " GiB"].filter(Boolean).join(" · ") })]),
    count: el("td", { class: "num", text: String(row.gpu_count) }),
    vram: el("td", { class: "num", text: number(row.vram_gib_per_gpu, 0) }),
    interconnect: el("td", { text: label(row.interconnect) }),
    provider: el("td", { title: row.instance_type }, [row.provider, el("small", { class: "instance", text: row.instance_type })]),
    region: regionCell(row),
    price: el("td", { class: "num", text: number(row.price_per_hour, 2) }),
    spot_price: el("td", { class: "num", text: number(row.spot_price_per_hour, 2) }),
    billing: el("td", { text: billingText(row) }),
  };
  if (job) {
    const budget = data.job && data.job.budget;
    const converted = budget && budget.currency !== "USD" && typeof job.est_cost_budget_currency === "number"
      ? el("small", { class: "fx", text: c("in_currency", { value: money(job.est_cost_budget_currency, budget.currency) }) }) : null;
    out.fits = el("td", { class: job.fits ? "ok" : "bad", text: job.fits ? c("yes") : c("no") });
    out.per_gpu = el("td", { class: "num", text: number(job.per_gpu_gib, 1) });
    out.hours = el("td", { class: "num", text: number(job.est_hours, job.est_hours < 0.1 ? 2 : 1) });
    out.job_cost = el("td", { class: "num" }, [number(job.est_cost, 2), converted,
      job.spot ? el("small", { text: c("spot_used") }) : null,
      job.meets_budget === false ? el("small", { class: "bad", text: t("over_budget") }) : null]);
  }
  return out;
}

/** The region cell: one region, or the first with "N regions" that opens the list (one instance, one price). */
function regionCell(row) {
  const regions = row.regions && row.regions.length ? row.regions : [row.region || "–"];
  const zones = row.zones.length ? " (" + row.zones.join(", ") + ")" : "";
  if (regions.length === 1) {
    return el("td", { title: row.zones.join(", ") || null }, [regions[0],
      row.zones.length > 1 ? el("small", { text: c("zones", { n: row.zones.length }) }) : null]);
  }
  const list = el("ul", { class: "regions", "aria-label": c("regions_list") },
                  regions.map(function (r) { return el("li", { text: r }); }));
  return el("td", { class: "grouped", title: regions.join(", ") + zones }, [
    el("details", {}, [el("summary", {}, [regions[0], el("small", { text: c("regions", { n: regions.length }) })]), list])]);
}

function columns() {
  if (!data || !data.job) { return BASE_COLUMNS; }
  return BASE_COLUMNS.slice(0, 1).concat(JOB_COLUMNS, BASE_COLUMNS.slice(1));  // the job's figures next to the GPU
}

function render() {
  const cols = columns();
  const head = document.querySelector("#c-table thead");
  head.textContent = "";
  head.appendChild(el("tr", {}, cols.map(function (col) {
    const sorted = data.sort === col[2];
    const th = el("th", { scope: "col", class: col[0], "data-col": col[0],
                          "aria-sort": sorted ? (data.order === "desc" ? "descending" : "ascending") : null });
    if (!col[2]) { th.appendChild(breakable(c(col[1]))); return th; }
    const button = el("button", { type: "button", class: "sort", "aria-label": c("sort_by", { col: c(col[1]) }) },
                      [breakable(c(col[1])), el("span", { "aria-hidden": "true", class: "arrow", text: sorted ? (data.order === "desc" ? " ▼" : " ▲") : "" })]);
    button.addEventListener("click", function () {
      state.order = data.sort === col[2] && data.order === "asc" ? "desc" : "asc";
      state.sort = col[2];
      state.page = 1;
      load().then(function () { const again = document.querySelector('th[data-col="' + col[0] + '"] button'); if (again) { again.focus(); } });
    });
    th.appendChild(button);
    return th;
  })));
  const body = document.querySelector("#c-table tbody");
  body.textContent = "";
  data.rows.forEach(function (row) {
    const made = cells(row);
    body.appendChild(el("tr", { class: row.job && !row.job.fits ? "nofit" : null }, cols.map(function (col) { made[col[0]].setAttribute("data-col", col[0]); return made[col[0]]; })));
  });
  document.getElementById("c-count").textContent = c("rows", { total: number(data.total, 0), offers: number(data.offers, 0) });
  document.getElementById("c-page").textContent = c("page", { page: data.page, pages: data.pages });
  document.getElementById("c-prev").disabled = data.page <= 1;
  document.getElementById("c-next").disabled = data.page >= data.pages;
  document.getElementById("c-intro").textContent = c("intro", { date: data.snapshot_date || "–" });
  root.classList.toggle("has-job", Boolean(data.job));
  const summary = document.getElementById("c-job-summary");
  summary.textContent = "";
  if (data.job) {
    const budget = data.job.budget;
    summary.textContent = c("job_summary", { model: data.job.model_id, method: data.job.method, runs: number(data.job.runs_on, 0) }) +
      (budget ? " " + (budget.currency === "USD" ? c("job_budget_plain", { budget: money(budget.amount, "USD") })
                                                 : c("job_budget", { budget: money(budget.amount, budget.currency), usd: money(budget.usd, "USD") })) : "");
  }
  document.getElementById("c-chart").hidden = !(data.job && data.job.chart && data.job.chart.length);
  drawChart(document.getElementById("c-chart-plot"), data.job, { number: number, money: money, label: c });
  document.getElementById("c-csv").hidden = !data.rows.length;
  if (document.getElementById("f-gpu")) { fillFacets(); }
}

function applyLanguage() {
  setLang(state.lang || pickLang(root.dataset.lang || navigator.language));
  const lang = state.lang || pickLang(root.dataset.lang || navigator.language);
  document.documentElement.lang = lang;
  document.title = c("title") + " — gpu-advisor";
  document.getElementById("c-title").textContent = c("title");
  document.getElementById("c-lang-label").textContent = c("language");
  document.getElementById("c-lang").value = lang;
  document.getElementById("c-job-label").textContent = c("job_label");
  document.getElementById("c-job-text").placeholder = c("job_placeholder");
  document.getElementById("c-job-submit").textContent = c("job_submit");
  document.getElementById("c-job-clear").textContent = c("job_clear");
  document.getElementById("c-filters-title").textContent = c("filters");
  document.getElementById("c-prev").textContent = c("prev");
  document.getElementById("c-next").textContent = c("next");
  document.getElementById("c-csv").textContent = c("csv");
  document.getElementById("c-chart-title").textContent = c("chart_title");
  document.getElementById("c-chart-desc").textContent = c("chart_desc");
  document.getElementById("c-legend-pareto").textContent = c("chart_pareto");
  document.getElementById("c-legend-other").textContent = c("chart_other");
  buildFilters();
  if (data) { render(); }
}

async function start() {
  try {
    setStrings(await (await fetch(ASSETS + "i18n.json")).json());
  } catch (e) { setStrings({}); }
  const select = document.getElementById("c-lang");
  LANGS.forEach(function (code) { select.appendChild(el("option", { value: code, lang: code, text: langName(code) })); });
  if (!state.lang && hasLang(root.dataset.lang)) { state.lang = root.dataset.lang; }
  select.addEventListener("change", function () { state.lang = select.value; applyLanguage(); load(); });
  document.getElementById("c-job-text").value = state.job;
  document.getElementById("c-job").addEventListener("submit", function (event) {
    event.preventDefault();
    state.job = document.getElementById("c-job-text").value.trim();
    state.sort = "";
    state.page = 1;
    load();
  });
  document.getElementById("c-job-text").addEventListener("keydown", function (event) {
    if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
      event.preventDefault();
      document.getElementById("c-job").requestSubmit();
    }
  });
  document.getElementById("c-job-clear").addEventListener("click", function () {
    state.job = "";
    document.getElementById("c-job-text").value = "";
    state.sort = "";
    state.page = 1;
    load();
  });
  document.getElementById("c-csv").addEventListener("click", function () {
    if (data) { downloadCsv(data, columns(), { label: c, billing: billingText }); }
  });
  document.getElementById("c-prev").addEventListener("click", function () { state.page = Math.max(1, state.page - 1); load(); });
  document.getElementById("c-next").addEventListener("click", function () { state.page += 1; load(); });
  if (window.matchMedia("(max-width: 600px)").matches) { document.getElementById("c-filters-box").open = false; }
  applyLanguage();
  await load();
}

start();
