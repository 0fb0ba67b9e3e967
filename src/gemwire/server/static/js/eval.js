// An eval's report in the Batches view (GET /v1/batches/{id}/report), drawn as
// `gemwire eval report --format html` draws it: per agent the pass rate with its 95 % Wilson
// interval, pass@k, reward, errors by kind, tokens, cost and time; then a task × agent
// matrix whose badges open each attempt's events in the batch's own task view. Every text
// comes from the results (hostile: an agent wrote it) and goes in as text only (dom.js).

import { get } from "./api.js";
import { h, duration } from "./dom.js";

const reportPath = (id) => `/v1/batches/${encodeURIComponent(id)}/report`;
const share = (value) => (value === null || value === undefined ? "-" : `${Math.round(value * 100)}%`);
const usd = (value) => (value === null || value === undefined ? "-" : `$${value.toFixed(4)}`);
const seconds = (value) => `${value.toFixed(1)} s`;

// The batch's report; null when it is not an eval.
export async function evalReport(id) {
  const report = await get(reportPath(id));
  return report && report.is_eval ? report : null;
}

function rate(pass) {
  if (pass.rate === null) return "-";
  return [share(pass.rate), " ", h("span", { class: "ci", text: `(${share(pass.low)} to ${share(pass.high)})` })];
}

function agentsTable(report) {
  const names = Object.keys(report.agents);
  const most = Math.max(0, ...names.map((name) => Object.keys(report.agents[name].pass_at).length));
  const ks = Array.from({ length: most }, (_, i) => String(i + 1));
  const head = ["Agent", "Attempts", "Pass rate (95 % CI)", ...ks.map((k) => `pass@${k}`), "Reward", "Errors",
    "Tokens", "Cost", "Agent's cost", "Time", "Per attempt"];
  return h("table", { class: "list eval-agents" },
    // Numbers' headers sit over them, right-aligned; the agent's name and errors are words.
    h("thead", {}, h("tr", {}, head.map((text) => h("th", { class: ["Agent", "Errors"].includes(text) ? null : "num", text })))),
    h("tbody", {}, names.map((name) => {
      const a = report.agents[name];
      const errors = Object.entries(a.errors).map(([kind, n]) => `${kind} ${n}`).join(", ") || "-";
      const per = a.attempts ? a.seconds / a.attempts : 0;
      return h("tr", { class: "eval-agent" },
        h("td", { text: name }),
        h("td", { class: "num", text: a.graded === a.attempts ? String(a.attempts) : `${a.graded}/${a.attempts}` }),
        h("td", { class: "num" }, rate(report.pass_rates[name])),
        ks.map((k) => h("td", { class: "num", text: share(a.pass_at[k]) })),
        h("td", { class: "num", text: a.reward_mean === null ? "-" : a.reward_mean.toFixed(2) }),
        h("td", { class: "kind", text: errors }),
        h("td", { class: "num", text: a.tokens.toLocaleString("en") }),
        h("td", { class: "num", text: usd(a.cost_usd) }), h("td", { class: "num", text: usd(a.agent_cost_usd) }),
        h("td", { class: "num", text: seconds(a.seconds) }), h("td", { class: "num", text: seconds(per) }));
    })));
}

function badge(id, attempt) {
  let why = attempt.outcome === "error" ? `verifier ${attempt.verify_status}` : attempt.outcome;
  if (attempt.error_kind) why += `; agent ${attempt.error_kind}`;
  return h("a", {
    class: `attempt ${attempt.outcome}`,
    href: `#/batches/${encodeURIComponent(id)}/${encodeURIComponent(attempt.id)}`,
    title: `attempt ${attempt.attempt}: ${why}, ${seconds(attempt.duration_s)}`,
    text: String(attempt.attempt),
  });
}

function matrix(id, report) {
  const agents = Object.keys(report.agents);
  const tasks = [...new Set(report.tasks.map((row) => row.task))].sort();
  const rows = new Map(report.tasks.map((row) => [`${row.task}\u0000${row.agent}`, row]));
  const attempts = new Map();
  for (const attempt of report.attempts) {
    const key = `${attempt.task}\u0000${attempt.agent}`;
    if (!attempts.has(key)) attempts.set(key, []);
    attempts.get(key).push(attempt);
  }
  return h("table", { class: "list eval-matrix" },
    h("thead", {}, h("tr", {}, h("th", { text: "Task" }), agents.map((agent) => h("th", { text: `${agent} (passed/graded)` })))),
    h("tbody", {}, tasks.map((task) => h("tr", {}, h("td", { text: task }), agents.map((agent) => {
      const row = rows.get(`${task}\u0000${agent}`);
      if (!row) return h("td", { text: "-" });
      return h("td", {}, `${row.passed}/${row.graded} `, (attempts.get(`${task}\u0000${agent}`) || []).map((a) => badge(id, a)));
    })))));
}

// The report's section of a batch's view.
export function evalSection(id, report) {
  return h("section", { class: "eval" },
    h("h3", { text: "Agents" }), agentsTable(report),
    h("h3", { text: "Tasks × agents" }), matrix(id, report),
    h("p", { class: "muted", text: "pass@k: the unbiased estimator of Chen et al. 2021, averaged over the tasks with k graded "
      + "attempts or more. The pass rate's interval is Wilson's, over the graded attempts. An attempt whose verifier "
      + "crashed or timed out has no grade: it is an error, not a fail. Costs are gemwire's estimates; the agents' own "
      + "are beside them where they reported one." }));
}

// An attempt's verdict on its task view: outcome, reward, and what the verifier wrote.
export function verdict(report, taskId) {
  const attempt = report.attempts.find((a) => a.id === taskId);
  if (!attempt) return null;
  const facts = [h("span", { class: `task-status ${attempt.outcome}`, text: attempt.outcome }),
    h("span", { text: `${attempt.agent}, attempt ${attempt.attempt} of ${attempt.task}` })];
  if (attempt.reward !== null) facts.push(h("span", { text: `reward ${attempt.reward}` }));
  if (attempt.verify_status) facts.push(h("span", { text: `verifier ${attempt.verify_status}` }));
  facts.push(h("span", { text: duration(attempt.duration_s * 1000) }));
  const box = h("div", { class: `verdict ${attempt.outcome}` }, h("p", { class: "facts" }, facts));
  if (attempt.verify_output) box.append(h("pre", { class: "verify-output", text: attempt.verify_output }));
  return box;
}
