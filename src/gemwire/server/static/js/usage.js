// Cost and tokens (GET /v1/usage, as `gemwire usage --json`), with the same filters, and
// a bar chart of cost per row drawn as SVG through DOM calls.

import { get, query } from "./api.js";
import { h, s, clear, select, flash, money, count, labelled } from "./dom.js";
import { choiceSelects, loadChoices, dateProblem } from "./filters.js";

// `gemwire usage --by`'s groupings (GET /v1/usage's `by`).
const BY = [["day", "per day"], ["week", "per week"], ["month", "per month"], ["model", "per model"],
  ["project", "per project"], ["session", "per session"]];

// Bars of `rows`' cost_usd (unknown costs as empty bars), labelled with their keys.
export function costChart(rows) {
  const width = 640;
  const height = 220;
  const pad = { left: 56, right: 8, top: 12, bottom: 40 };
  const top = Math.max(0, ...rows.map((r) => r.cost_usd || 0));
  const scale = top > 0 ? (height - pad.top - pad.bottom) / top : 0;
  const band = rows.length ? (width - pad.left - pad.right) / rows.length : 0;
  const svg = s("svg", { class: "chart", viewBox: `0 0 ${width} ${height}`, role: "img", "aria-label": "Cost per row (estimate)" });
  const base = height - pad.bottom;
  svg.append(s("line", { x1: pad.left, y1: base, x2: width - pad.right, y2: base, class: "axis" }));
  svg.append(s("text", { x: pad.left - 6, y: pad.top + 4, class: "tick", "text-anchor": "end", text: money(top) }));
  svg.append(s("text", { x: pad.left - 6, y: base, class: "tick", "text-anchor": "end", text: "$0" }));
  rows.forEach((row, i) => {
    const value = row.cost_usd || 0;
    const barHeight = value * scale;
    const x = pad.left + i * band + band * 0.1;
    const bar = s("rect", {
      x, y: base - barHeight, width: Math.max(1, band * 0.8), height: barHeight,
      class: row.cost_usd === null || row.cost_usd === undefined ? "bar unknown" : "bar",
      "data-key": row.key,
    });
    bar.append(s("title", { text: `${row.key}: ${money(row.cost_usd)}` }));
    svg.append(bar);
    if (rows.length <= 16 || i % Math.ceil(rows.length / 16) === 0) {
      svg.append(s("text", { x: x + band * 0.4, y: base + 14, class: "label", "text-anchor": "middle", text: row.key.slice(-10) }));
    }
  });
  return svg;
}

export class UsageView {
  constructor(container) {
    this.container = container;
    this.filters = { by: "day", agent: "all", project: "", since: "", until: "" };
  }

  leave() {}

  async show() {
    clear(this.container);
    const f = this.filters;
    const by = select(BY, f.by, { name: "by" });
    const [agent, project] = choiceSelects(f);
    const since = h("input", { name: "since", type: "date", value: f.since });
    const until = h("input", { name: "until", type: "date", value: f.until });
    const form = h("form", { class: "filters" }, labelled("Group by", by), labelled("Agent", agent),
      labelled("Project", project), labelled("Since", since), labelled("Until", until), h("button", { type: "submit", text: "Show" }));
    this.report = h("div", { class: "report" });
    this.container.append(h("h2", { text: "Usage" }), form, this.report);
    form.addEventListener("submit", (e) => {
      e.preventDefault();
      Object.assign(this.filters, { by: by.value, agent: agent.value, project: project.value, since: since.value, until: until.value });
      this.load();
    });
    await Promise.all([this.load(), loadChoices(agent, project)]);
  }

  async load() {
    clear(this.report);
    const problem = dateProblem(this.filters.since, this.filters.until);
    flash(this.container, problem);
    if (problem) return;
    let report;
    try {
      report = await get(`/v1/usage${query(this.filters)}`);
    } catch (error) {
      flash(this.container, error.message);
      return;
    }
    flash(this.container, "");
    const rows = report.rows || [];
    const total = report.total || {};
    const unpriced = new Set(rows.flatMap((r) => r.unpriced_models || []));
    // Bars of cost need a price: tokens of models without one draw nothing.
    const priced = rows.some((r) => typeof r.cost_usd === "number" && r.cost_usd > 0);
    let chart = h("p", { class: "muted", text: "No usage in this range." });
    if (rows.length) chart = priced ? costChart(rows) : h("p", { class: "muted no-priced", text: "No priced usage in this range: the tokens are counted below, the cost is not known." });
    this.report.append(
      h("p", { class: "summary" },
        total.cost_usd === null || total.cost_usd === undefined
          ? h("span", { class: "badge tokens", text: `${count((total.input_tokens || 0) + (total.output_tokens || 0))} tokens` })
          : h("span", { class: "badge cost", text: `${money(total.cost_usd)} (estimate)` }),
        ` · ${count(total.input_tokens)} input, ${count(total.output_tokens)} output, ${count(total.cached_tokens)} cached tokens`,
        ` · ${count(report.sessions)} sessions`),
      chart,
      h("table", { class: "list usage" },
        h("thead", {}, h("tr", {}, [this.filters.by, "Requests", "Input", "Output", "Cached", "Cost (estimate)"].map((t) => h("th", { text: t })))),
        h("tbody", {}, rows.map((r) => h("tr", {},
          h("td", { text: r.key }), h("td", { class: "num", text: count(r.requests) }),
          h("td", { class: "num", text: count(r.input_tokens) }), h("td", { class: "num", text: count(r.output_tokens) }),
          h("td", { class: "num", text: count(r.cached_tokens) }), h("td", { class: "num", text: money(r.cost_usd) }))))),
    );
    if (unpriced.size) {
      this.report.append(h("p", { class: "muted", text: `No price known for: ${[...unpriced].join(", ")} (tokens counted, cost not).` }));
    }
  }
}
