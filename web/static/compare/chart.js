/* The job's cost against hours as inline SVG (drawn here, nothing fetched): one point per duration (the cheapest
 * listing at it, from /api/compare's job.chart), the Pareto front joined by a line, budget and deadline marked. */

import { svg } from "../parts/dom.js";

const LEFT = 56, RIGHT = 12, TOP = 14, BOTTOM = 40;

/** A scale from [lo, hi] to [a, b], logarithmic when the values span more than 20x. */
function scale(lo, hi, a, b, steps) {
  const log = lo > 0 && hi / lo > 20;
  const f = log ? Math.log10 : function (v) { return v; };
  const l = f(lo), h = f(hi) === f(lo) ? f(lo) + 1 : f(hi);
  const map = function (v) { return a + (f(v) - l) / (h - l) * (b - a); };
  map.log = log;
  map.ticks = function () {
    if (log) {
      const out = [];
      for (let e = Math.floor(l); e <= Math.ceil(h); e++) {
        steps.forEach(function (m) { const v = m * Math.pow(10, e); if (v >= lo && v <= hi) { out.push(v); } });
      }
      return out.length >= 2 ? out : [lo, hi];
    }
    const step = Math.pow(10, Math.floor(Math.log10((hi - lo) || 1))) || 1;
    const out = [];
    for (let v = Math.ceil(lo / step) * step; v <= hi; v += step) { out.push(v); }
    return out.length >= 2 ? out : [lo, hi];
  };
  return map;
}

/** Draw the chart into `box`; `fmt` = {number(v, digits), money(v, currency), label(key, values)}. */
export function drawChart(box, job, fmt) {
  box.textContent = "";
  const points = (job && job.chart) || [];
  if (!points.length) { box.hidden = true; return; }
  box.hidden = false;
  const W = Math.max(300, Math.min(760, box.clientWidth || 640)), H = W < 500 ? 240 : 280;  // text keeps its size
  const steps = W < 500 ? [1, 5] : [1, 2, 5];
  const costs = points.map(function (p) { return p.cost; });
  const hours = points.map(function (p) { return p.hours; });
  const budget = job.budget, deadline = job.deadline_hours;
  let cLo = Math.min.apply(null, costs), cHi = Math.max.apply(null, costs);
  let hLo = Math.min.apply(null, hours), hHi = Math.max.apply(null, hours);
  if (budget) { cLo = Math.min(cLo, budget.usd); cHi = Math.max(cHi, budget.usd); }
  if (deadline) { hLo = Math.min(hLo, deadline); hHi = Math.max(hHi, deadline); }
  const x = scale(hLo, hHi, LEFT, W - RIGHT, steps), y = scale(cLo, cHi, H - BOTTOM, TOP, steps);
  const root = svg("svg", { viewBox: "0 0 " + W + " " + H, role: "img", "aria-labelledby": "c-chart-title c-chart-desc",
                            class: "chart" });
  x.ticks().forEach(function (v) {
    root.appendChild(svg("line", { x1: x(v), x2: x(v), y1: TOP, y2: H - BOTTOM, class: "grid" }));
    root.appendChild(svg("text", { x: x(v), y: H - BOTTOM + 14, "text-anchor": "middle", class: "tick" },
                         fmt.number(v, v < 1 ? 2 : v < 10 ? 1 : 0)));
  });
  y.ticks().forEach(function (v) {
    root.appendChild(svg("line", { x1: LEFT, x2: W - RIGHT, y1: y(v), y2: y(v), class: "grid" }));
    root.appendChild(svg("text", { x: LEFT - 6, y: y(v) + 4, "text-anchor": "end", class: "tick" },
                         fmt.number(v, v < 10 ? 1 : 0)));
  });
  root.appendChild(svg("text", { x: (LEFT + W - RIGHT) / 2, y: H - 6, "text-anchor": "middle", class: "axis" },
                       fmt.label("chart_x") + (x.log ? " (log)" : "")));
  root.appendChild(svg("text", { x: 12, y: (TOP + H - BOTTOM) / 2, "text-anchor": "middle", class: "axis",
                                 transform: "rotate(-90 12 " + (TOP + H - BOTTOM) / 2 + ")" },
                       fmt.label("chart_y") + (y.log ? " (log)" : "")));
  if (budget) {
    root.appendChild(svg("line", { x1: LEFT, x2: W - RIGHT, y1: y(budget.usd), y2: y(budget.usd), class: "budget" }));
    root.appendChild(svg("text", { x: W - RIGHT - 4, y: y(budget.usd) - 4, "text-anchor": "end", class: "limit" },
                         fmt.label("chart_budget", { budget: fmt.money(budget.amount, budget.currency) })));
  }
  if (deadline) {
    root.appendChild(svg("line", { x1: x(deadline), x2: x(deadline), y1: TOP, y2: H - BOTTOM, class: "deadline" }));
    root.appendChild(svg("text", { x: x(deadline) + 4, y: TOP + 10, class: "limit" },
                         fmt.label("chart_deadline", { hours: fmt.number(deadline, 0) })));
  }
  const front = points.filter(function (p) { return p.pareto; });
  root.appendChild(svg("polyline", { class: "front", points: front.map(function (p) { return x(p.hours) + "," + y(p.cost); }).join(" ") }));
  points.forEach(function (p) {
    const dot = svg("circle", { cx: x(p.hours), cy: y(p.cost), r: p.pareto ? 4.5 : 3, class: p.pareto ? "dot pareto" : "dot",
                                "data-hours": p.hours, "data-cost": p.cost });
    dot.appendChild(svg("title", {}, p.gpu + " ×" + p.gpu_count * p.nodes + " · " + p.provider + " · " +
                        fmt.number(p.hours, p.hours < 1 ? 2 : 1) + " h · " + fmt.money(p.cost, "USD") +
                        (p.spot ? " · spot" : "")));
    root.appendChild(dot);
  });
  box.appendChild(root);
}
