/* CSV of what the table shows (this page, these columns, in this order), built here from /api/compare's rows:
 * the tools' unrounded figures, '.' as decimal point, one header row in the page's language. */

/** One CSV field, quoted when it holds a comma, quote or line break. */
function field(value) {
  const text = value === null || value === undefined ? "" : String(value);
  return /[",\n\r]/.test(text) ? '"' + text.replace(/"/g, '""') + '"' : text;
}

/** The values of one row for each shown column (some columns are two fields: provider and instance). */
function values(row, col, data, fmt) {
  const job = row.job || {};
  switch (col) {
    case "gpu": return [row.gpu, row.gpu_form_factor];
    case "provider": return [row.provider, row.instance_type];
    case "price": return [row.price_per_hour];
    case "spot_price": return [row.spot_price_per_hour];
    case "region": return [(row.regions && row.regions.length ? row.regions : [row.region]).join("; ")];
    case "count": return [row.gpu_count];
    case "vram": return [row.vram_gib_per_gpu];
    case "interconnect": return [row.interconnect];
    case "billing": return [fmt.billing(row)];
    case "job_cost": {
      const budget = data.job && data.job.budget;
      return budget && budget.currency !== "USD" ? [job.est_cost, job.est_cost_budget_currency] : [job.est_cost];
    }
    case "hours": return [job.est_hours];
    case "fits": return [job.fits === undefined ? "" : job.fits ? fmt.label("yes") : fmt.label("no")];
    case "per_gpu": return [job.per_gpu_gib];
    default: return [""];
  }
}

/** The header fields of one shown column. */
function headers(col, data, fmt) {
  const budget = data.job && data.job.budget;
  const extra = { gpu: ["form factor"], provider: ["instance"],
                  job_cost: budget && budget.currency !== "USD" ? [fmt.label("csv_cost_currency", { currency: budget.currency })] : [] };
  return [fmt.label(col[1])].concat(extra[col[0]] || []);
}

/** The CSV text of the page. */
export function csvText(data, cols, fmt) {
  const lines = [cols.reduce(function (out, col) { return out.concat(headers(col, data, fmt)); }, []).map(field).join(",")];
  data.rows.forEach(function (row) {
    lines.push(cols.reduce(function (out, col) { return out.concat(values(row, col[0], data, fmt)); }, []).map(field).join(","));
  });
  return lines.join("\r\n") + "\r\n";
}

/** Download the page as gpu-offers-<snapshot>-p<page>.csv. */
export function downloadCsv(data, cols, fmt) {
  const blob = new Blob([csvText(data, cols, fmt)], { type: "text/csv;charset=utf-8" });
  const link = document.createElement("a");
  link.href = URL.createObjectURL(blob);
  link.download = "gpu-offers-" + (data.snapshot_date || "catalog") + "-p" + data.page + ".csv";
  document.body.appendChild(link);
  link.click();
  link.remove();
  window.setTimeout(function () { URL.revokeObjectURL(link.href); }, 1000);
}
