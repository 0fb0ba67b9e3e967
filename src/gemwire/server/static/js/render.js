// One renderer for every conversation the page shows: a live session's envelopes, a saved
// session's events, a batch task's events. It speaks the --json event vocabulary
// (docs/events.md) and nothing else; every text from an event is inserted as text.

import { h, clear, money, count, duration } from "./dom.js";

const KIND_LABELS = {
  read: "read", edit: "edit", delete: "delete", move: "move", search: "search",
  execute: "run", think: "think", fetch: "fetch", switch_mode: "mode", other: "tool",
};
const STATUS_LABELS = { asking: "waiting for permission" };
const PLAN_MARKS = { completed: "done", in_progress: "doing", pending: "to do" };

// A unified diff as coloured lines (added, removed, hunk headers, file headers).
export function diffView(text) {
  const pre = h("pre", { class: "diff" });
  for (const line of text.replace(/\n$/, "").split("\n")) {
    let kind = "ctx";
    if (line.startsWith("+++") || line.startsWith("---")) kind = "file";
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

// Where a stream of events lands: the conversation itself, or a subagent's box in a card.
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
  constructor(event, live) {
    this.callId = event.call_id;
    this.started = live ? performance.now() : null;
    this.status = h("span", { class: "status", text: "running" });
    this.time = h("span", { class: "time", text: live ? new Date().toLocaleTimeString("en-GB") : "" });
    this.title = h("span", { class: "title", text: event.title || event.name || "tool call" });
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
      h("span", { class: "location", text: loc.line ? `${loc.path}:${loc.line}` : loc.path }));
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
      this.diffBox.append(diffView(event.diff));
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

// Conversation: `add(event, live)` for each event in order. `live` is whether it happens
// now (a tool card then shows its clock time and duration). Hooks:
// onPermissions(pending requests), onChange(meta), both optional.
export class Conversation {
  constructor({ onPermissions = null, onChange = null } = {}) {
    this.onPermissions = onPermissions;
    this.onChange = onChange;
    this.stream = h("div", { class: "stream", role: "log" });
    this.planList = h("ul", { class: "plan" });
    this.fileList = h("ul", { class: "files" });
    this.planBox = h("section", { class: "plan-box", hidden: true }, h("h3", { text: "Plan" }), this.planList);
    this.filesBox = h("section", { class: "files-box", hidden: true }, h("h3", { text: "Files changed" }), this.fileList);
    this.el = h("div", { class: "conversation" }, this.stream, h("aside", { class: "side" }, this.planBox, this.filesBox));
    this.root = new Place(this.stream);
    this.cards = new Map();
    this.orphans = new Map();
    this.pending = new Map();
    this.meta = {
      title: null, mode: null, commands: null, configOptions: null, running: false,
      costEstimate: null, costReported: null, currency: "USD", contextUsed: null, contextWindow: null,
      inputTokens: 0, outputTokens: 0, lastStop: null, turns: 0,
    };
  }

  place(event) {
    const parent = event.parent_call_id;
    if (!parent) return this.root;
    const card = this.cards.get(parent);
    if (card) return card.subagentPlace();
    // A subagent whose call is not (yet) on the page: its own box, never lost.
    if (!this.orphans.has(parent)) {
      const box = h("div", { class: "subagent" });
      this.root.block(h("details", { class: "subagent-box orphan", open: true },
        h("summary", { text: `Subagent of ${parent}` }), box));
      this.orphans.set(parent, new Place(box));
    }
    return this.orphans.get(parent);
  }

  add(event, live = false) {
    const handler = this[`on_${event.type}`];
    if (handler) handler.call(this, event, this.place(event), live);
    else this.place(event).block(h("div", { class: "unknown", text: `(${event.type})` }));
  }

  changed() {
    if (this.onChange) this.onChange(this.meta);
  }

  on_session_started(event, place) {
    const parts = [event.agent, event.model, event.cwd, event.agent_version].filter(Boolean);
    place.block(h("div", { class: "started", text: `Session started · ${parts.join(" · ")}` }));
  }

  on_user_message(event, place) {
    if (event.replay && place.el.lastElementChild && place.el.lastElementChild.classList.contains("user")
        && place.el.lastElementChild.dataset.replay) {
      place.el.lastElementChild.querySelector(".text").append(event.text);
      return;
    }
    const el = place.block(h("div", { class: "user" }, h("div", { class: "text", text: event.text })));
    if (event.replay) el.dataset.replay = "1";
    if (place === this.root && !this.meta.running) {
      this.meta.running = true;
      this.changed();
    }
  }

  on_message_delta(event, place) {
    if (!place.answer) {
      const text = h("div", { class: "text" });
      const block = h("div", { class: "answer" }, text);
      place.block(block);
      place.answer = text.appendChild(document.createTextNode(""));
    }
    place.answer.appendData(event.text);
  }

  on_thought_delta(event, place) {
    if (!place.thought) {
      const text = h("div", { class: "text" });
      place.block(h("details", { class: "thought" }, h("summary", { text: "Reasoning" }), text));
      place.thought = text.appendChild(document.createTextNode(""));
    }
    place.thought.appendData(event.text);
  }

  on_tool_call_started(event, place, live) {
    const existing = this.cards.get(event.call_id);
    if (existing) return;
    const card = new Card(event, live);
    this.cards.set(event.call_id, card);
    place.block(card.el);
  }

  card(event, place) {
    let card = this.cards.get(event.call_id);
    if (!card) {
      card = new Card({ call_id: event.call_id, title: event.call_id }, false);
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
    this.filesBox.hidden = false;
    const card = event.call_id ? this.cards.get(event.call_id) : null;
    const item = h("li", { class: `file change-${event.change}` },
      h("span", { class: "change", text: event.change }), " ", h("span", { class: "path", text: event.path }));
    const prior = [...this.fileList.children].find((li) => li.dataset.path === event.path);
    item.dataset.path = event.path;
    if (card && card.diff) {
      item.append(h("details", {}, h("summary", { text: "diff" }), diffView(card.diff)));
    }
    if (prior) prior.replaceWith(item);
    else this.fileList.append(item);
  }

  on_plan_updated(event) {
    this.planBox.hidden = false;
    clear(this.planList);
    for (const entry of event.entries) {
      const box = h("input", { type: "checkbox", disabled: true, "aria-label": PLAN_MARKS[entry.status] || entry.status });
      box.checked = entry.status === "completed";
      box.indeterminate = entry.status === "in_progress";
      this.planList.append(h("li", { class: `plan-${entry.status}` }, box, " ", h("span", { text: entry.content })));
    }
  }

  on_permission_requested(event, place) {
    const card = this.cards.get(event.call_id);
    const names = event.options.map((o) => o.name).join(" / ");
    const note = h("div", { class: "permission", "data-request-id": event.request_id, text: `Permission asked: ${names}` });
    if (card) {
      card.notes.append(note);
      card.setStatus("asking");
    } else place.block(note);
    this.pending.set(event.request_id, { event, title: card ? card.title.textContent : event.call_id });
    if (this.onPermissions) this.onPermissions([...this.pending.values()]);
  }

  on_permission_resolved(event, place) {
    const asked = this.pending.get(event.request_id);
    this.pending.delete(event.request_id);
    const option = asked ? asked.event.options.find((o) => o.option_id === event.option_id) : null;
    const answer = event.option_id === null ? "no answer: denied" : `answered: ${option ? option.name : event.option_id}`;
    const card = this.cards.get(event.call_id);
    const note = h("div", { class: `permission resolved ${option ? option.kind : "denied"}`, text: `Permission ${answer}` });
    if (card) {
      card.notes.append(note);
      if (card.status.textContent === STATUS_LABELS.asking) card.setStatus("running");
    } else place.block(note);
    if (this.onPermissions) this.onPermissions([...this.pending.values()]);
  }

  on_usage() {
    // The same counts come again on turn_completed, which is what is totalled.
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
    if (place !== this.root) return;
    // Cards still running when the turn ended stopped with it.
    for (const card of this.cards.values()) {
      if (["running", "pending", STATUS_LABELS.asking].includes(card.status.textContent)) card.setStatus("cancelled");
    }
    const usage = event.usage;
    if (usage) {
      this.meta.inputTokens += usage.input_tokens || 0;
      this.meta.outputTokens += usage.output_tokens || 0;
      if (typeof usage.cost_usd === "number") this.meta.costEstimate = (this.meta.costEstimate || 0) + usage.cost_usd;
      if (usage.context_tokens) this.meta.contextUsed = usage.context_tokens;
      if (usage.context_window) this.meta.contextWindow = usage.context_window;
    }
    this.meta.running = false;
    this.meta.lastStop = event.stop_reason;
    this.meta.turns += 1;
    this.changed();
  }

  on_session_updated(event, place) {
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

// The cost badge and the context meter of `meta`, or nothing where they are unknown.
export function meters(meta) {
  const out = [];
  const cost = meta.costReported !== null ? meta.costReported : meta.costEstimate;
  if (cost !== null) {
    const label = meta.costReported !== null && meta.currency !== "USD"
      ? `${cost.toFixed(4)} ${meta.currency}` : money(cost);
    out.push(h("span", {
      class: "badge cost",
      title: `${count(meta.inputTokens)} input, ${count(meta.outputTokens)} output tokens`,
      text: `≈ ${label} (estimate)`,
    }));
  }
  if (meta.contextUsed && meta.contextWindow) {
    const share = Math.min(1, meta.contextUsed / meta.contextWindow);
    const meter = h("meter", { min: 0, max: 1, low: 0.6, high: 0.85, optimum: 0, value: share });
    out.push(h("span", { class: "context", title: `${count(meta.contextUsed)} of ${count(meta.contextWindow)} tokens` },
      "context ", meter, ` ${Math.round(share * 100)}% (estimate)`));
  }
  return out;
}
