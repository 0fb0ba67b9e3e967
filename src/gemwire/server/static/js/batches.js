// Batches (POST/GET /v1/batches): start one from a tasks file, or open an output folder;
// its tasks (GET /v1/batches/{id}/tasks), live progress over SSE, failed tasks by error kind, each task's events in the
// conversation renderer, and a retry of the failed ones. An eval's folder shows its report
// too (eval.js), and each attempt its verdict.

import { get, post, query, EnvelopeStream } from "./api.js";
import { h, clear, select, flash, duration, labelled } from "./dom.js";
import { Conversation } from "./render.js";
import { evalReport, evalSection, verdict } from "./eval.js";

const batchPath = (id) => `/v1/batches/${encodeURIComponent(id)}`;
// The batch's counts as the page words them: `done` (a result, good or bad) is "finished",
// of which "ok" and "failed"; a task is "ok" or "failed" the same way (`TaskRow.status`
// says "done" for ok).
const FIGURES = [
  ["finished", (b) => b.done || 0], ["ok", (b) => (b.done || 0) - (b.failed || 0)], ["failed", (b) => b.failed || 0],
  ["running", (b) => b.running || 0], ["pending", (b) => b.pending || 0],
];
const TASK_LABELS = { done: "ok" };
const taskLabel = (status) => TASK_LABELS[status] || status;
const PERMISSIONS = [["deny", "deny requests"], ["reads", "allow reads"], ["edits", "allow edits"], ["all", "allow all"]];

function eta(seconds) {
  return seconds === null || seconds === undefined ? "" : `ETA ${duration(seconds * 1000)}`;
}

export class BatchesView {
  constructor(container) {
    this.container = container;
    this.stream = null;
  }

  leave() {
    if (this.stream) this.stream.close();
    this.stream = null;
  }

  async show(id, task) {
    this.leave();
    clear(this.container);
    if (id && task) await this.showTask(id, task);
    else if (id) await this.showOne(id);
    else await this.showList();
  }

  async showList() {
    let agents = [];
    let roots = [];
    try {
      [agents, roots] = await Promise.all([get("/v1/agents"), get("/v1/roots").then((r) => r.roots || [])]);
    } catch (error) {
      flash(this.container, error.message);
    }
    const tasks = h("input", { name: "tasks", placeholder: "a .jsonl file under a root", value: roots[0] ? `${roots[0]}/tasks.jsonl` : "", size: 40 });
    const output = h("input", { name: "output", placeholder: "a folder under a root", value: roots[0] ? `${roots[0]}/batch-out` : "", size: 40 });
    const agent = select(agents.filter((a) => a.available).map((a) => [a.name, a.title || a.name]), null, { name: "agent" });
    const concurrency = h("input", { name: "concurrency", type: "number", min: 1, value: 4, size: 4 });
    // Nobody is there to ask during a batch: the agent's requests get a preset answer.
    const permissions = select(PERMISSIONS, "deny", { name: "permissions" });
    const start = h("form", { class: "filters start-batch" }, h("h3", { text: "Start a batch" }),
      labelled("Tasks file", tasks), labelled("Agent", agent), labelled("Output folder", output),
      labelled("Concurrency", concurrency), labelled("Permissions", permissions),
      h("button", { type: "submit", class: "primary", text: "Start" }));
    const folder = h("input", { name: "open", placeholder: "an existing output folder", size: 40 });
    const open = h("form", { class: "filters open-batch" }, h("h3", { text: "Open an output folder" }),
      labelled("Output folder to open", folder), h("button", { type: "submit", text: "Open" }));
    const list = h("div", { class: "batches" });
    this.container.append(h("h2", { text: "Batches" }), start, open, list);
    const create = async (body) => {
      try {
        const batch = await post("/v1/batches", body);
        location.hash = `#/batches/${encodeURIComponent(batch.id)}`;
      } catch (error) {
        flash(this.container, error.message);
      }
    };
    start.addEventListener("submit", (e) => {
      e.preventDefault();
      create({
        tasks: tasks.value, agent: agent.value, output: output.value,
        concurrency: Number(concurrency.value) || 1, permissions: permissions.value,
      });
    });
    open.addEventListener("submit", (e) => {
      e.preventDefault();
      create({ open: folder.value });
    });
    try {
      const found = await get("/v1/batches");
      const batches = Array.isArray(found) ? found : found.batches || [];
      list.append(batches.length
        ? h("ul", {}, batches.map((b) => h("li", {}, h("a", { href: `#/batches/${encodeURIComponent(b.id)}`, text: b.output || b.id }),
          h("span", { class: "muted", text: ` ${b.status} · ${b.done ?? 0} of ${b.tasks ?? 0} finished: ${(b.done ?? 0) - (b.failed ?? 0)} ok, ${b.failed ?? 0} failed` }))))
        : h("p", { class: "muted", text: "No batch yet." }));
    } catch (error) {
      list.append(h("p", { class: "muted", text: error.message }));
    }
  }

  // Whether the server has the batch (asked of the list: an unknown id is a message, not a
  // 404 in the console); when not, says so with the way back.
  async known(id) {
    let found;
    try {
      found = await get("/v1/batches");
    } catch (error) {
      flash(this.container, error.message);
      return false;
    }
    const batches = Array.isArray(found) ? found : found.batches || [];
    if (batches.some((b) => b.id === id)) return true;
    this.container.append(h("div", { class: "session-bar" }, h("a", { href: "#/batches", text: "← Batches" })));
    flash(this.container, `No batch ${id} on this server.`);
    return false;
  }

  async showOne(id) {
    if (!(await this.known(id))) return;
    let batch, listed;
    // Asked beside the batch; a report that cannot be read is said, the batch shown all the same.
    const report = evalReport(id).catch((error) => error);
    try {
      [batch, listed] = await Promise.all([get(batchPath(id)), get(`${batchPath(id)}/tasks`)]);
    } catch (error) {
      this.container.append(h("a", { href: "#/batches", text: "← Batches" }));
      flash(this.container, error.message);
      return;
    }
    this.id = id;
    // Every task as it stands now (a folder opened read-only has no progress to replay);
    // the progress stream then moves them on.
    this.tasks = new Map((listed.tasks || []).map((t) => [t.id, { status: t.status, attempt: t.attempts, kind: t.error_kind || "" }]));
    this.figures = h("div", { class: "figures" });
    this.kinds = h("div", { class: "failed-kinds" });
    this.taskBox = h("div", { class: "tasks" });
    this.bar = h("progress", { max: 1, value: 0 });
    this.status = h("span", { class: "session-status" });
    this.retry = h("button", { type: "button", class: "retry", text: "Retry failed", onclick: () => this.retryFailed() });
    this.container.append(
      h("div", { class: "session-bar" }, h("a", { href: "#/batches", text: "← Batches" }),
        h("h2", { class: "session-title", text: batch.output || id }), this.status, this.retry),
      this.bar, this.figures, this.kinds, this.taskBox,
    );
    this.update(batch);
    const found = await report;
    if (found instanceof Error) flash(this.container, found.message);
    else if (found) this.taskBox.before(evalSection(id, found));
    if (this.tasks.size) this.renderTasks();
    this.follow(0);
  }

  // Progress envelopes ({"seq", "progress"}: a line of `gemwire batch --json`) name the
  // tasks as they start and finish; the batch object's counts are fetched again after each.
  follow(after) {
    if (this.stream) this.stream.close();
    this.stream = new EnvelopeStream(`${batchPath(this.id)}/events`, after, (envelope) => {
      const progress = envelope.progress;
      if (!progress) return;
      if (progress.type === "task_started") {
        this.tasks.set(progress.task_id, { status: "running", attempt: progress.attempt, kind: "" });
      } else if (progress.type === "task_finished") {
        const result = progress.result;
        this.tasks.set(result.task_id, {
          status: result.ok ? "done" : "failed", attempt: result.attempts,
          kind: result.error ? result.error.kind : "",
        });
      }
      this.renderTasks();
      if (progress.type === "batch_finished" || progress.type === "batch_stopped") {
        this.settle(envelope.seq);
      } else {
        this.refresh();
      }
    });
  }

  // The server ends the stream with the run: once the last run has ended (not an earlier
  // run replayed before a retry's envelopes), the stream is not reconnected.
  async settle(seq) {
    const stream = this.stream;
    try {
      this.update(await get(batchPath(this.id)));
    } catch {
      return;
    }
    if (this.batch.status !== "running" && seq >= this.batch.last_seq && stream === this.stream) {
      stream.close();
    }
  }

  refresh() {
    if (this.refreshing) {
      this.again = true;
      return;
    }
    this.refreshing = get(batchPath(this.id)).then((batch) => this.update(batch), () => {}).finally(() => {
      this.refreshing = null;
      if (this.again) {
        this.again = false;
        this.refresh();
      }
    });
  }

  async retryFailed() {
    this.retry.disabled = true;
    try {
      await post(`${batchPath(this.id)}/retry-failed`);
      const batch = await get(batchPath(this.id));
      this.update(batch);
      this.follow(this.stream ? this.stream.last : 0);
    } catch (error) {
      flash(this.container, error.message);
    }
    this.retry.disabled = false;
  }

  update(batch) {
    this.batch = batch;
    this.bar.max = Math.max(1, batch.tasks || 0);
    this.bar.value = batch.done || 0;
    this.status.textContent = batch.read_only ? `${batch.status} (read-only)` : batch.status;
    this.figures.replaceChildren(...FIGURES.map(([key, value]) => h("span", { class: `figure ${key}` },
      h("strong", { text: String(value(batch)) }), ` ${key}`)), h("span", { class: "eta", text: eta(batch.eta_s) }));
    const kinds = Object.entries(batch.failed_by_kind || {});
    this.kinds.replaceChildren(...(kinds.length ? [h("h3", { text: "Failed by kind" }),
      h("ul", {}, kinds.map(([kind, n]) => h("li", {}, h("span", { class: "kind", text: kind }), `: ${n}`)))] : []));
    if (batch.error) flash(this.container, `${batch.error.kind}: ${batch.error.message}`);
    this.retry.hidden = batch.read_only || batch.status === "running" || !(batch.failed > 0 || batch.pending > 0);
  }

  renderTasks() {
    const ids = [...this.tasks.keys()].sort();
    this.taskBox.replaceChildren(h("h3", { text: "Tasks" }), h("table", { class: "list" },
      h("thead", {}, h("tr", {}, [["Task", ""], ["Status", ""], ["Attempts", "num"], ["Error", ""]].map(([t, c]) => h("th", { class: c || null, text: t })))),
      h("tbody", {}, ids.map((task) => {
        const t = this.tasks.get(task);
        return h("tr", { class: `task ${t.status}` },
          h("td", {}, h("a", { href: `#/batches/${encodeURIComponent(this.id)}/${encodeURIComponent(task)}`, text: task })),
          h("td", { class: "status", text: taskLabel(t.status) }), h("td", { class: "num", text: String(t.attempt || "") }),
          h("td", { class: "kind", text: t.kind }));
      }))));
  }

  async showTask(id, task) {
    const back = h("a", { href: `#/batches/${encodeURIComponent(id)}`, text: "← Batch" });
    if (!(await this.known(id))) return;
    this.container.append(h("div", { class: "session-bar" }, back, h("h2", { class: "session-title", text: task })));
    let loaded, row, result, report;
    try {
      const listed = await get(`${batchPath(id)}/tasks`);
      row = (listed.tasks || []).find((t) => t.id === task);
      if (!row) throw new Error(`Batch ${id} has no task ${task}.`);
      [loaded, result, report] = await Promise.all([
        get(`${batchPath(id)}/tasks/${encodeURIComponent(task)}/events`),
        this.result(id, task),
        evalReport(id).catch(() => null), // a damaged eval's report: said on the batch's view
      ]);
    } catch (error) {
      flash(this.container, error.message);
      return;
    }
    this.container.append(taskSummary(row, result));
    const graded = report && verdict(report, task);
    if (graded) this.container.append(graded);
    const conversation = new Conversation();
    for (const item of loaded.events || []) if (item.event || item.type) conversation.add(item.event || item, false);
    conversation.flush();
    if (!conversation.stream.children.length) conversation.stream.append(h("p", { class: "muted", text: "The task logged no event." }));
    this.container.append(conversation.el);
  }

  // The task's last result in the batch's progress (`task_finished`: its error's message
  // too), read as JSON; null for a folder opened read-only, which has no progress.
  async result(id, task) {
    let found = null;
    let after = 0;
    for (;;) {
      const page = await get(`${batchPath(id)}/events${query({ after })}`);
      const envelopes = page.events || [];
      for (const envelope of envelopes) {
        const progress = envelope.progress;
        if (progress && progress.type === "task_finished" && progress.result.task_id === task) found = progress.result;
      }
      if (!envelopes.length || envelopes[envelopes.length - 1].seq >= page.last_seq) return found;
      after = envelopes[envelopes.length - 1].seq;
    }
  }
}

// How a task ended: ok or failed, with the error's kind, message and the time it took.
function taskSummary(row, result) {
  const status = taskLabel(row.status);
  const facts = [h("span", { class: `task-status ${row.status}`, text: status })];
  const attempts = result ? result.attempts : row.attempts;
  if (attempts) facts.push(h("span", { text: attempts === 1 ? "1 attempt" : `${attempts} attempts` }));
  const seconds = result ? result.duration_s : row.duration_s;
  if (seconds !== null && seconds !== undefined) facts.push(h("span", { text: duration(seconds * 1000) }));
  const box = h("div", { class: `task-result ${row.status}` }, h("p", { class: "facts" }, facts));
  const error = result && result.error ? result.error : row.error_kind ? { kind: row.error_kind, message: row.error_message || "" } : null;
  if (error) {
    box.append(h("p", { class: "error" }, h("span", { class: "kind", text: error.kind }), error.message ? `: ${error.message}` : ""));
  }
  return box;
}
