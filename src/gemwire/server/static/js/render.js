// One renderer for every conversation the page shows: a live session's envelopes, a saved
// session's events, a batch task's events. It speaks the --json event vocabulary
// (docs/events.md) and nothing else; every text from an event is inserted as text.

import { h, clear, money, count, duration } from "./dom.js";
import { markdown, settled } from "./markdown.js";

const KIND_LABELS = {
  read: "read", edit: "edit", delete: "delete", move: "move", search: "search",
  execute: "run", think: "think", fetch: "fetch", switch_mode: "mode", other: "tool",
};
const STATUS_LABELS = { asking: "waiting for permission" };
const PLAN_MARKS = { completed: "done", in_progress: "doing", pending: "to do" };

// Paths as the page shows them: under the session's folder, relative to it ("app.py", not
// "/home/me/project/app.py"); anything else as it is. The whole path stays in a tooltip.
export class Paths {
  constructor(cwd = null) {
    this.cwd = cwd ? cwd.replace(/\/+$/, "") : null;
  }

  short(text) {
    if (!this.cwd || typeof text !== "string") return text;
    return text.split(`${this.cwd}/`).join("");
  }

  // The folder itself: its last name.
  folder(path) {
    return path ? path.replace(/\/+$/, "").split("/").pop() || path : "";
  }
}

const ANYWHERE = new Paths();

// A unified diff as coloured lines (added, removed, hunk headers, file headers).
export function diffView(text, paths = ANYWHERE) {
  const pre = h("pre", { class: "diff" });
  for (let line of text.replace(/\n$/, "").split("\n")) {
    let kind = "ctx";
    if (line.startsWith("+++") || line.startsWith("---")) {
      kind = "file";
      line = paths.short(line);
    }
    else if (line.startsWith("@@")) kind = "hunk";
    else if (line.startsWith("+")) kind = "add";
    else if (line.startsWith("-")) kind = "del";
    pre.append(h("span", { class: `line ${kind}`, text: line }), "\n");
  }
  return pre;
}

function json(value) {
  try {
    return JSON.stringify(value, null, 2);
  } catch {
    return String(value);
  }
}

// Answer or reasoning text: shown as it streams in (a text node each delta appends to),
// then drawn as Markdown once a frame (`Conversation.flush`), never once per delta. What is
// settled (`settled`: before a paragraph that later text cannot join) is drawn once; each
// frame draws again only what came after it.
class Prose {
  constructor(el) {
    this.el = el;
    this.raw = "";
    this.done = 0;
    this.drawn = [];
    this.tail = el.appendChild(document.createTextNode(""));
    this.quietUntil = 0;
  }

  append(text) {
    this.raw += text;
    if (!this.tail) this.tail = this.el.appendChild(document.createTextNode(""));
    this.tail.appendData(text);
  }

  render() {
    for (const node of this.drawn) node.remove();
    if (this.tail) this.tail.remove();
    const end = settled(this.raw, this.done);
    if (end > this.done) {
      this.el.append(markdown(this.raw.slice(this.done, end)));
      this.done = end;
    }
    const rest = markdown(this.raw.slice(this.done));
    this.drawn = [...rest.childNodes];
    this.el.append(rest);
    this.el.classList.add("md");
    this.tail = null;
  }
}

// Where a stream of events lands: the conversation itself, a subagent's box in a card, the
// agent's replay of a loaded session, or a saved session's history above the live part.
class Place {
  constructor(el) {
    this.el = el;
    this.answer = null;
    this.thought = null;
  }

  block(el) {
    this.answer = null;
    this.thought = null;
    this.el.append(el);
    return el;
  }
}

class Card {
  constructor(event, live, paths = ANYWHERE) {
    this.paths = paths;
    this.callId = event.call_id;
    this.input = event.input || {};
    this.kind = event.kind || "other";
    this.started = live ? performance.now() : null;
    this.status = h("span", { class: "status", text: "running" });
    this.time = h("span", { class: "time", text: live ? new Date().toLocaleTimeString("en-GB") : "" });
    this.title = h("span", { class: "title", text: paths.short(event.title || event.name || "tool call") });
    this.output = h("pre", { class: "output", hidden: true });
    this.diffBox = h("div", { class: "diffs" });
    this.notes = h("div", { class: "notes" });
    this.subagent = null;
    this.diff = null;
    const kind = event.kind || "other";
    const head = h(
      "div", { class: "head" },
      h("span", { class: `kind kind-${kind}`, text: KIND_LABELS[kind] || kind }),
      this.title,
      h("span", { class: "name", text: event.name || "" }),
      this.status,
      this.time,
    );
    const where = (event.locations || []).map((loc) =>
      h("span", { class: "location", title: loc.path, text: paths.short(loc.line ? `${loc.path}:${loc.line}` : loc.path) }));
    const input = event.input && Object.keys(event.input).length
      ? h("details", { class: "input" }, h("summary", { text: "Input" }), h("pre", { text: json(event.input) }))
      : null;
    const server = event.mcp_server
      ? h("span", { class: "mcp", text: `MCP ${event.mcp_server}${event.mcp_tool ? ` · ${event.mcp_tool}` : ""}` })
      : null;
    this.el = h(
      "div", { class: `card status-running kind-${kind}`, "data-call-id": event.call_id },
      head,
      where.length || server ? h("div", { class: "where" }, server, where) : null,
      input, this.output, this.diffBox, this.notes,
    );
  }

  setStatus(status) {
    const key = status === "in_progress" ? "running" : status;
    this.status.textContent = STATUS_LABELS[key] || key;
    this.el.className = this.el.className.replace(/status-\S+/, `status-${key.replace(/\W/g, "_")}`);
  }

  setOutput(text) {
    if (text === null || text === undefined || text === "") return;
    this.outputText = text;
    this.output.hidden = false;
    this.output.textContent = text;
  }

  finish(event) {
    this.setStatus(event.status);
    this.setOutput(event.output);
    if (event.error && event.error.message && event.error.message !== event.output) {
      this.notes.append(h("div", { class: "error", text: event.error.message }));
    }
    if (event.diff) {
      this.diff = event.diff;
      this.diffBox.append(diffView(event.diff, this.paths));
    }
    if (this.started !== null) {
      this.time.textContent = duration(performance.now() - this.started);
    }
  }

  subagentPlace() {
    if (!this.subagent) {
      const box = h("div", { class: "subagent" });
      this.el.append(h("details", { class: "subagent-box", open: true }, h("summary", { text: "Subagent" }), box));
      this.subagent = new Place(box);
    }
    return this.subagent;
  }
}

// The token counts and cost of `usage` objects, totalled (`TokenUsage` of docs/events.md).
class Totals {
  constructor() {
    this.inputTokens = 0;
    this.outputTokens = 0;
    this.cachedTokens = 0;
    this.reports = 0;
    this.cost = null;
  }

  add(usage, { tokens = true, cost = true } = {}) {
    if (tokens) {
      this.inputTokens += usage.input_tokens || 0;
      this.outputTokens += usage.output_tokens || 0;
      this.cachedTokens += usage.cached_tokens || 0;
      this.reports += 1;
    }
    if (cost && typeof usage.cost_usd === "number") this.cost = (this.cost || 0) + usage.cost_usd;
  }
}

// Conversation: `add(event, live)` for each event in order. `live` is whether it happens
// now (a tool card then shows its clock time and duration). Hooks:
// onPermissions(pending requests), onChange(meta), both optional.
//
// Events an agent replayed from a loaded session (`replay`) go into a box of their own,
// collapsed; `history(events)` puts a saved session's own events above everything else.
export class Conversation {
  constructor({ onPermissions = null, onChange = null, cwd = null } = {}) {
    this.paths = new Paths(cwd);
    this.onPermissions = onPermissions;
    this.onChange = onChange;
    this.stream = h("div", { class: "stream", role: "log" });
    this.planList = h("ul", { class: "plan" });
    this.fileList = h("ul", { class: "files" });
    this.planBox = h("section", { class: "plan-box", hidden: true }, h("h3", { text: "Plan" }), this.planList);
    this.filesBox = h("section", { class: "files-box", hidden: true }, h("h3", { text: "Files changed" }), this.fileList);
    this.el = h("div", { class: "conversation" }, this.stream, h("aside", { class: "side" }, this.planBox, this.filesBox));
    this.root = new Place(this.stream);
    this.scope = { root: this.root, cards: new Map(), orphans: new Map(), history: false };
    this.live = this.scope;
    this.replayBox = null;
    this.pending = new Map();
    this.prompts = [];
    this.dirty = new Set();
    this.frame = null;
    this.totals = new Totals();
    this.turnTotals = new Totals();
    this.meta = {
      title: null, mode: null, commands: null, configOptions: null, running: false,
      costEstimate: null, costReported: null, currency: "USD", contextUsed: null, contextWindow: null,
      inputTokens: 0, outputTokens: 0, cachedTokens: 0, usageReports: 0, lastStop: null, turns: 0,
    };
  }

  get cards() {
    return this.scope.cards;
  }

  // The card of a call of the live part (the permission dialog shows what it knows).
  liveCard(callId) {
    return this.live.cards.get(callId) || null;
  }

  place(event) {
    const parent = event.parent_call_id;
    if (!parent) return event.replay && !this.scope.history ? this.replayPlace() : this.scope.root;
    const card = this.cards.get(parent);
    if (card) return card.subagentPlace();
    // A subagent whose call is not (yet) on the page: its own box, never lost.
    const orphans = this.scope.orphans;
    if (!orphans.has(parent)) {
      const box = h("div", { class: "subagent" });
      this.scope.root.block(h("details", { class: "subagent-box orphan", open: true },
        h("summary", { text: `Subagent of ${parent}` }), box));
      orphans.set(parent, new Place(box));
    }
    return orphans.get(parent);
  }

  replayPlace() {
    if (!this.replayBox) {
      const box = h("div", { class: "replayed" });
      this.replaySummary = h("summary", { text: "The history as the agent replayed it" });
      this.replayBox = h("details", { class: "replay" }, this.replaySummary, box);
      this.root.block(this.replayBox);
      this.replayPlace_ = new Place(box);
    }
    return this.replayPlace_;
  }

  add(event, live = false) {
    const handler = this[`on_${event.type}`];
    if (handler) handler.call(this, event, this.place(event), live);
    else this.place(event).block(h("div", { class: "unknown", text: `(${event.type})` }));
  }

  // A saved session's own events, shown above the rest (its cards are its own: a call id
  // may come again in the agent's replay). Its plan and files do not replace newer ones.
  history(events, label) {
    const box = h("div", { class: "history-events" });
    const section = h("section", { class: "history" }, h("h3", { class: "history-title", text: label }), box);
    this.stream.prepend(section);
    const saved = this.scope;
    this.scope = { root: new Place(box), cards: new Map(), orphans: new Map(), history: true };
    try {
      for (const event of events) this.add(event, false);
    } finally {
      this.scope = saved;
    }
    this.flush();
    this.changed();
    return section;
  }

  changed() {
    if (this.onChange) this.onChange(this.meta);
  }

  // Draws the text that streamed in since the last frame as Markdown.
  // (`all`: even text drawn a moment ago, which a frame leaves for later.)
  flush(all = true) {
    if (this.frame !== null) cancelAnimationFrame(this.frame);
    this.frame = null;
    const started = performance.now();
    const drawn = [];
    for (const prose of this.dirty) {
      if (!all && prose.quietUntil > started) continue;
      prose.render();
      drawn.push(prose);
      this.dirty.delete(prose);
    }
    if (this.dirty.size) this.frame = requestAnimationFrame(() => this.flush(false));
    if (all || !drawn.length) return;
    // A long unsettled stretch (a paragraph of 100 KB) costs more each time, its layout most
    // (new text is shaped anew): drawn again only after some frames, so that it takes a tenth
    // of the time at most; the text shows meanwhile, as it came.
    void this.stream.offsetHeight;
    const rest = performance.now() + 9 * (performance.now() - started);
    for (const prose of drawn) prose.quietUntil = rest;
  }

  touched(prose) {
    this.dirty.add(prose);
    if (this.frame === null) this.frame = requestAnimationFrame(() => this.flush(false));
  }

  on_session_started(event, place) {
    if (event.cwd && !this.paths.cwd && !this.scope.history) this.paths = new Paths(event.cwd);
    const folder = event.cwd ? `in ${this.paths.folder(event.cwd)}` : null;
    const parts = [event.agent, event.model, folder, event.agent_version].filter(Boolean);
    place.block(h("div", { class: "started", title: event.cwd || null, text: `Session started · ${parts.join(" · ")}` }));
  }

  on_user_message(event, place) {
    if (event.replay && place.el.lastElementChild && place.el.lastElementChild.classList.contains("user")
        && place.el.lastElementChild.dataset.replay) {
      place.el.lastElementChild.querySelector(".text").append(event.text);
      return;
    }
    const el = place.block(h("div", { class: "user" }, h("div", { class: "text", text: event.text })));
    if (event.replay) el.dataset.replay = "1";
    if (place === this.root) {
      this.prompts.push(event.text);
      if (!this.meta.running) {
        this.meta.running = true;
        this.changed();
      }
    }
  }

  on_message_delta(event, place) {
    if (!place.answer) {
      const text = h("div", { class: "text" });
      place.block(h("div", { class: "answer" }, text));
      place.answer = new Prose(text);
    }
    place.answer.append(event.text);
    this.touched(place.answer);
  }

  on_thought_delta(event, place) {
    if (!place.thought) {
      const text = h("div", { class: "text" });
      place.block(h("details", { class: "thought" }, h("summary", { text: "Reasoning" }), text));
      place.thought = new Prose(text);
    }
    place.thought.append(event.text);
    this.touched(place.thought);
  }

  on_tool_call_started(event, place, live) {
    const existing = this.cards.get(event.call_id);
    if (existing) return;
    const card = new Card(event, live, this.paths);
    this.cards.set(event.call_id, card);
    place.block(card.el);
  }

  card(event, place) {
    let card = this.cards.get(event.call_id);
    if (!card) {
      card = new Card({ call_id: event.call_id, title: event.call_id }, false, this.paths);
      this.cards.set(event.call_id, card);
      place.block(card.el);
    }
    return card;
  }

  on_tool_call_updated(event, place) {
    const card = this.card(event, place);
    card.setStatus(event.status);
    card.setOutput(event.content);
  }

  on_tool_call_finished(event, place) {
    this.card(event, place).finish(event);
    place.answer = null;
    place.thought = null;
  }

  on_file_changed(event) {
    const card = event.call_id ? this.cards.get(event.call_id) : null;
    const prior = [...this.fileList.children].find((li) => li.dataset.path === event.path);
    if (prior && this.scope.history) return; // what the live part changed is newer
    this.filesBox.hidden = false;
    const item = h("li", { class: `file change-${event.change}` },
      h("span", { class: "change", text: event.change }), " ", h("span", { class: "path", title: event.path, text: this.paths.short(event.path) }));
    item.dataset.path = event.path;
    if (card && card.diff) {
      item.append(h("details", {}, h("summary", { text: "diff" }), diffView(card.diff, this.paths)));
    }
    if (prior) prior.replaceWith(item);
    else this.fileList.append(item);
  }

  on_plan_updated(event) {
    if (this.scope.history && !this.planBox.hidden) return;
    this.planBox.hidden = false;
    clear(this.planList);
    for (const entry of event.entries) {
      const box = h("input", { type: "checkbox", disabled: true, "aria-label": PLAN_MARKS[entry.status] || entry.status });
      box.checked = entry.status === "completed";
      box.indeterminate = entry.status === "in_progress";
      this.planList.append(h("li", { class: `plan-${entry.status}` }, box, " ", h("span", { text: entry.content })));
    }
    // An ACP plan by id may come as Markdown (Codex's plan mode) or a file, not entries.
    const whole = event.markdown ?? event.uri;
    if (whole) this.planList.append(h("li", { class: "plan-text" }, h("pre", { text: whole })));
  }

  on_permission_requested(event, place) {
    const card = this.cards.get(event.call_id);
    const names = event.options.map((o) => o.name).join(" / ");
    const note = h("div", { class: "permission", "data-request-id": event.request_id, text: `Permission asked: ${names}` });
    if (card) {
      card.notes.append(note);
      card.setStatus("asking");
    } else place.block(note);
    if (this.scope.history || event.replay) return; // asked long ago: nobody answers it now
    const title = event.title ? this.paths.short(event.title) : card ? card.title.textContent : event.call_id;
    this.pending.set(event.request_id, { event, title, card, paths: this.paths });
    if (this.onPermissions) this.onPermissions([...this.pending.values()]);
  }

  on_permission_resolved(event, place) {
    const asked = this.pending.get(event.request_id);
    this.pending.delete(event.request_id);
    const option = asked ? asked.event.options.find((o) => o.option_id === event.option_id) : null;
    const answer = event.outcome === "denied_no_client" ? "denied: no client answered"
      : event.option_id === null ? "no answer: denied" : `answered: ${option ? option.name : event.option_id}`;
    const card = this.cards.get(event.call_id);
    const note = h("div", { class: `permission resolved ${option ? option.kind : "denied"}`, text: `Permission ${answer}` });
    if (card) {
      card.notes.append(note);
      if (card.status.textContent === STATUS_LABELS.asking) card.setStatus("running");
    } else place.block(note);
    if (this.onPermissions) this.onPermissions([...this.pending.values()]);
  }

  // Token counts come as `usage` events (a saved session has only those, one a model
  // answer); a live turn's `turn_completed` repeats its turn's, and adds what they lacked.
  on_usage(event) {
    if (event.parent_call_id || event.replay) return; // a subagent's: in its parent's figures
    this.totals.add(event.usage);
    this.turnTotals.add(event.usage);
    this.context(event.usage);
    this.tally();
  }

  context(usage) {
    if (usage.context_tokens) this.meta.contextUsed = usage.context_tokens;
    if (usage.context_window) this.meta.contextWindow = usage.context_window;
  }

  tally() {
    const meta = this.meta;
    meta.inputTokens = this.totals.inputTokens;
    meta.outputTokens = this.totals.outputTokens;
    meta.cachedTokens = this.totals.cachedTokens;
    meta.usageReports = this.totals.reports;
    meta.costEstimate = this.totals.cost;
    this.changed();
  }

  on_notice(event, place) {
    place.block(h("div", { class: `notice ${event.severity}`, text: event.message }));
  }

  on_turn_completed(event, place, live) {
    const parts = [event.ok ? "Done" : "Stopped", event.stop_reason];
    if (event.duration_ms !== null && event.duration_ms !== undefined) parts.push(duration(event.duration_ms));
    const line = h("div", { class: `turn ${event.ok ? "ok" : "failed"}`, text: parts.join(" · ") });
    // A cancelled turn says so already; any other error is shown with its kind.
    if (event.error && event.stop_reason !== "cancelled") {
      line.append(h("div", { class: "error", text: `${event.error.kind}: ${event.error.message}` }));
    }
    place.block(line);
    if (place !== this.scope.root) return;
    const usage = event.usage;
    if (usage) {
      const turn = this.turnTotals;
      this.totals.add(usage, { tokens: turn.reports === 0, cost: turn.cost === null });
      this.context(usage);
    }
    this.turnTotals = new Totals();
    if (this.scope.history) {
      this.tally();
      return;
    }
    // Cards still running when the turn ended stopped with it.
    for (const card of this.cards.values()) {
      if (["running", "pending", STATUS_LABELS.asking].includes(card.status.textContent)) card.setStatus("cancelled");
    }
    this.meta.running = false;
    this.meta.lastStop = event.stop_reason;
    this.meta.turns += 1;
    this.tally();
  }

  on_session_updated(event, place) {
    if (this.scope.history || event.replay) return; // the state of then, not of now
    const data = event.data || {};
    switch (event.update) {
      case "current_mode_update": this.meta.mode = data.currentModeId; break;
      case "available_commands_update": this.meta.commands = data.availableCommands || []; break;
      case "config_option_update": this.meta.configOptions = data.configOptions || []; break;
      case "session_info_update": if (data.title) this.meta.title = data.title; break;
      case "usage_update":
        this.meta.contextUsed = data.used;
        this.meta.contextWindow = data.size;
        if (data.cost) {
          this.meta.costReported = data.cost.amount;
          this.meta.currency = data.cost.currency;
        }
        break;
      case "compaction_update":
      case "compaction_summary_chunk":
        place.block(h("div", { class: "notice info", text: "The agent compacted its context." }));
        break;
      default:
        return;
    }
    this.changed();
  }

  on_unknown(event, place) {
    place.block(h("details", { class: "unknown" },
      h("summary", { text: `Unknown upstream message${event.upstream_type ? ` (${event.upstream_type})` : ""}` }),
      h("pre", { text: event.raw })));
  }
}

// The cost badge (or, where no cost is known, the tokens badge) and the context meter of
// `meta`, or nothing where they are unknown.
export function meters(meta) {
  const out = [];
  const tokens = `${count(meta.inputTokens)} input, ${count(meta.outputTokens)} output, ${count(meta.cachedTokens)} cached tokens`;
  const cost = meta.costReported !== null ? meta.costReported : meta.costEstimate;
  if (cost !== null) {
    const label = meta.costReported !== null && meta.currency !== "USD"
      ? `${cost.toFixed(4)} ${meta.currency}` : money(cost);
    out.push(h("span", { class: "badge cost", title: tokens, text: `≈ ${label} (estimate)` }));
  } else if (meta.usageReports) {
    const total = meta.inputTokens + meta.outputTokens;
    out.push(h("span", { class: "badge tokens", title: `${tokens}; no price known`, text: `${count(total)} tokens` }));
  }
  if (meta.contextUsed && meta.contextWindow) {
    const share = Math.min(1, meta.contextUsed / meta.contextWindow);
    const meter = h("meter", { min: 0, max: 1, low: 0.6, high: 0.85, optimum: 0, value: share });
    out.push(h("span", { class: "context", title: `${count(meta.contextUsed)} of ${count(meta.contextWindow)} tokens` },
      "context ", meter, ` ${Math.round(share * 100)}% (estimate)`));
  }
  return out;
}
