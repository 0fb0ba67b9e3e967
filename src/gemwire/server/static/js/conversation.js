// The conversation view: pick an agent and a workspace, start a session, chat.
// The session id lives in the tab's URL (#/chat/<id>): a reload reopens the same session
// and replays its events from seq 0, then follows live; another tab is another session.

import { get, post, query, ApiError, EnvelopeStream } from "./api.js";
import { h, clear, select, flash } from "./dom.js";
import { Conversation, diffView, meters } from "./render.js";

const PERMISSION_PRESETS = [
  ["ask", "ask me"], ["deny", "deny all"], ["reads", "allow reads"], ["edits", "allow edits"], ["all", "allow all"],
];

const pick = (obj, ...names) => {
  for (const name of names) if (obj && obj[name] !== undefined && obj[name] !== null) return obj[name];
  return null;
};

// The choices of an ACP config option, flattened out of their groups: [[value, name]].
function choices(option) {
  const out = [];
  for (const item of option.options || []) {
    if (Array.isArray(item.options)) for (const inner of item.options) out.push([String(inner.value), inner.name || String(inner.value)]);
    else out.push([String(item.value), item.name || String(item.value)]);
  }
  return out;
}

export class ChatView {
  constructor(container) {
    this.container = container;
    this.session = null;
    this.stream = null;
    this.conversation = null;
    this.asked = null;
  }

  async show(sessionId) {
    clear(this.container);
    if (this.stream) this.stream.close();
    this.stream = null;
    if (sessionId) await this.open(sessionId);
    else await this.showPicker();
  }

  leave() {
    if (this.stream) this.stream.close();
    this.stream = null;
  }

  // ---- a new session ------------------------------------------------------------
  async showPicker() {
    const form = h("form", { class: "picker" });
    this.container.append(h("h2", { text: "New conversation" }), form);
    let agents, roots;
    try {
      [agents, roots] = await Promise.all([get("/v1/agents"), get("/v1/roots")]);
    } catch (error) {
      flash(this.container, error.message);
      return;
    }
    const usable = agents.filter((a) => a.available);
    const agentSelect = select(
      agents.map((a) => [a.name, `${a.title || a.name}${a.available ? "" : " (not available)"}`]),
      usable.length ? usable[0].name : null,
      { name: "agent", id: "agent" },
    );
    for (const option of agentSelect.options) {
      const agent = agents.find((a) => a.name === option.value);
      if (!agent.available) option.disabled = true;
      if (agent.detail) option.title = agent.detail;
    }
    const rootList = roots.roots || [];
    const cwd = h("input", { name: "cwd", id: "cwd", list: "roots", value: rootList[0] || "", size: 40, spellcheck: "false" });
    const datalist = h("datalist", { id: "roots" }, rootList.map((r) => h("option", { value: r })));
    const permissions = select(PERMISSION_PRESETS, "ask", { name: "permissions", id: "permissions" });
    const start = h("button", { type: "submit", class: "primary", text: "Start" });
    form.append(
      h("label", { for: "agent", text: "Agent" }), agentSelect,
      h("label", { for: "cwd", text: "Workspace" }), cwd, datalist,
      h("label", { for: "permissions", text: "Permissions" }), permissions,
      start,
    );
    form.addEventListener("submit", async (submit) => {
      submit.preventDefault();
      start.disabled = true;
      try {
        const created = await post("/v1/sessions", { agent: agentSelect.value, cwd: cwd.value, permissions: permissions.value });
        location.hash = `#/chat/${encodeURIComponent(created.id)}`;
      } catch (error) {
        flash(this.container, error.message);
        start.disabled = false;
      }
    });
    agentSelect.focus();
  }

  // ---- an open session -------------------------------------------------------------
  async open(sessionId) {
    let session;
    try {
      // Asked of the list first: an unknown id is a message, not a 404 in the console.
      const listed = await get("/v1/sessions");
      if (!(listed.sessions || []).some((s) => s.id === sessionId)) {
        throw new ApiError(404, "not_found", `No session ${sessionId} on this server.`);
      }
      session = await get(`/v1/sessions/${encodeURIComponent(sessionId)}`);
    } catch (error) {
      flash(this.container, error.message);
      this.container.append(h("p", {}, h("a", { href: "#/chat", text: "Start a new conversation" })));
      return;
    }
    this.session = session;
    this.savedTitle = null;
    this.historyAsked = false;
    this.pendingHistory = null;
    // The controls are new elements: whatever the last session's showed is not here.
    this.selectorSignature = null;
    this.title = h("h2", { class: "session-title" });
    this.statusEl = h("span", { class: "session-status" });
    this.controls = h("div", { class: "controls" });
    this.meterBox = h("div", { class: "meters" });
    this.conversation = new Conversation({
      onPermissions: (pending) => this.permissions(pending),
      onChange: () => this.refresh(),
      cwd: session.cwd,
    });
    this.seedMeta(session);
    this.composer = this.buildComposer();
    this.dialog = h("dialog", { class: "permission-dialog", "aria-labelledby": "permission-title" });
    this.dialog.addEventListener("cancel", (e) => {
      // Esc (or closing) is no answer, and no answer is deny.
      e.preventDefault();
      this.answer(null);
    });
    this.container.append(
      h("div", { class: "session-bar" }, this.title, this.statusEl, this.meterBox, this.controls),
      this.conversation.el,
      this.composer,
      this.dialog,
    );
    this.refresh();
    const liveAfter = session.last_seq || 0;
    this.caughtUp = liveAfter === 0;
    const path = `/v1/sessions/${encodeURIComponent(session.id)}/events`;
    this.stream = new EnvelopeStream(path, 0, (envelope) => this.receive(envelope, liveAfter),
      (status) => this.connection(status));
  }

  seedMeta(session) {
    const meta = this.conversation.meta;
    meta.mode = session.current_mode;
    meta.commands = session.commands;
    meta.configOptions = session.config_options;
    meta.running = session.status === "running";
    this.status = session.status;
  }

  receive(envelope, liveAfter) {
    this.showEnvelope(envelope, liveAfter);
    if (envelope.seq >= liveAfter && !this.caughtUp) {
      this.caughtUp = true;
      if (this.pendingHistory) this.pendingHistory();
    }
  }

  showEnvelope(envelope, liveAfter) {
    if (envelope.event) {
      // The agent replayed a saved session (a continued one): its own record is better.
      if (envelope.event.replay && !this.historyAsked) this.showSavedHistory(this.conversation, this.session);
      this.conversation.add(envelope.event, envelope.seq > liveAfter);
      this.follow();
    } else if (envelope.state) {
      this.status = envelope.state.status;
      this.conversation.meta.running = this.status === "running";
      this.refresh();
      // A closed session has nothing more to say: no reconnecting to it.
      if (this.status === "closed") this.stream.close();
    }
  }

  // A continued session's history as its saved session holds it (GET /v1/saved-sessions/
  // {agent}/{id}: tool cards, diffs, no injected context), above the live part; the agent's
  // replay stays, collapsed. The saved session also holds this server session's own turns
  // (the agent goes on writing it): those are cut, matched by their prompts.
  async showSavedHistory(conversation, session) {
    this.historyAsked = true;
    const id = session.agent_session_id;
    if (!id) return;
    let info, saved;
    try {
      const found = await get(`/v1/saved-sessions${query({ agent: "all", q: id })}`);
      info = (found.sessions || []).find((s) => s.agent === session.agent && s.id === id);
      if (!info) throw new ApiError(404, "not_found", "not saved");
      saved = await get(`/v1/saved-sessions/${encodeURIComponent(info.agent)}/${encodeURIComponent(id)}`);
    } catch {
      if (conversation.replayBox) conversation.replayBox.open = true; // the replay is all there is
      return;
    }
    if (conversation !== this.conversation) return; // another session is shown by now
    this.savedTitle = info.summary || info.first_prompt || null;
    this.pendingHistory = () => {
      this.pendingHistory = null;
      const events = historyBefore((saved.events || []).map((e) => e.event || e), conversation.prompts);
      conversation.history(events, "Saved session");
      if (conversation.replaySummary) conversation.replaySummary.textContent = "The same history as the agent replayed it";
      this.refresh();
    };
    if (this.caughtUp) this.pendingHistory();
  }

  follow() {
    if (this.scrollQueued) return;
    this.scrollQueued = true;
    requestAnimationFrame(() => {
      this.scrollQueued = false;
      const el = document.scrollingElement;
      if (el.scrollHeight - el.scrollTop - el.clientHeight < 400) el.scrollTop = el.scrollHeight;
    });
  }

  connection(status) {
    const el = document.getElementById("connection");
    if (el) el.textContent = status === "live" ? "" : "reconnecting…";
  }

  buildComposer() {
    this.input = h("textarea", {
      class: "prompt", rows: 2, placeholder: "Message (Enter sends, Shift+Enter new line, Esc cancels)",
      "aria-label": "Message", "aria-controls": "commands", "aria-autocomplete": "list",
    });
    this.send = h("button", { type: "submit", class: "primary", text: "Send" });
    this.cancel = h("button", { type: "button", class: "cancel", text: "Cancel", onclick: () => this.cancelTurn() });
    this.continue = h("button", { type: "button", class: "continue", text: "Continue", onclick: () => this.prompt("Continue.") });
    this.commandList = h("ul", { class: "commands", id: "commands", role: "listbox", "aria-label": "Slash commands", hidden: true });
    this.commandHint = h("div", { class: "command-hint", role: "status", hidden: true });
    this.offered = [];
    this.active = -1;
    const form = h("form", { class: "composer" }, this.commandList, this.commandHint,
      h("div", { class: "compose" }, this.input, h("div", { class: "buttons" }, this.send, this.cancel, this.continue)));
    form.addEventListener("submit", (e) => {
      e.preventDefault();
      this.prompt(this.input.value);
    });
    this.input.addEventListener("keydown", (e) => this.key(e));
    this.input.addEventListener("input", () => this.showCommands());
    return form;
  }

  // Enter sends and Esc cancels; while commands are offered, the arrows move through them,
  // Tab (or Enter, once one is chosen with the arrows) takes it and Esc closes the list.
  key(e) {
    const offering = !this.commandList.hidden && this.offered.length > 0;
    if (offering && (e.key === "ArrowDown" || e.key === "ArrowUp")) {
      e.preventDefault();
      const step = e.key === "ArrowDown" ? 1 : -1;
      const n = this.offered.length;
      this.highlight(this.active < 0 ? (step > 0 ? 0 : n - 1) : (this.active + step + n) % n);
    } else if (offering && (e.key === "Tab" || (e.key === "Enter" && this.active >= 0)) && !e.shiftKey && !e.isComposing) {
      e.preventDefault();
      this.take(this.offered[Math.max(0, this.active)]);
    } else if (e.key === "Enter" && !e.shiftKey && !e.isComposing) {
      e.preventDefault();
      this.prompt(this.input.value);
    } else if (e.key === "Escape") {
      e.preventDefault();
      if (offering) this.hideCommands();
      else this.cancelTurn();
    }
  }

  take(command) {
    this.input.value = `/${command.name} `;
    this.showCommands();
    this.input.focus();
  }

  highlight(index) {
    this.active = index;
    [...this.commandList.children].forEach((li, i) => li.setAttribute("aria-selected", String(i === index)));
    const chosen = this.commandList.children[index];
    if (chosen) {
      this.input.setAttribute("aria-activedescendant", chosen.id);
      chosen.scrollIntoView({ block: "nearest" });
    } else this.input.removeAttribute("aria-activedescendant");
  }

  hideCommands() {
    this.commandList.hidden = true;
    this.offered = [];
    this.highlight(-1);
  }

  // Commands whose name (sub-commands included: "memory show") starts with what is typed;
  // once a whole command and a space are typed, what it takes (its input hint).
  showCommands() {
    const commands = this.conversation.meta.commands || [];
    const text = this.input.value;
    clear(this.commandList);
    this.commandHint.hidden = true;
    const typing = commands.length && text.startsWith("/") && !text.includes("\n");
    this.offered = typing ? commands.filter((c) => `/${c.name}`.startsWith(text) && `/${c.name}` !== text.trimEnd()) : [];
    if (typing) {
      const chosen = commands.filter((c) => text.startsWith(`/${c.name} `) || text === `/${c.name}`)
        .sort((a, b) => b.name.length - a.name.length)[0];
      if (chosen) {
        const hint = chosen.input && chosen.input.hint ? chosen.input.hint : "";
        this.commandHint.replaceChildren(h("span", { class: "command", text: `/${chosen.name}` }),
          hint ? h("span", { class: "input-hint", text: ` ${hint}` }) : "",
          h("span", { class: "description", text: chosen.description ? ` — ${chosen.description}` : "" }));
        this.commandHint.hidden = false;
      }
    }
    this.offered.forEach((command, i) => {
      const item = h("li", { role: "option", id: `command-${i}`, "aria-selected": "false",
        onmousedown: (e) => e.preventDefault(), onclick: () => this.take(command) },
      h("span", { class: "command", text: `/${command.name}` }), " ", h("span", { class: "description", text: command.description || "" }));
      this.commandList.append(item);
    });
    this.commandList.hidden = !this.offered.length;
    this.highlight(-1);
  }

  async prompt(text) {
    if (!text.trim() || this.conversation.meta.running) return;
    this.conversation.meta.running = true;
    this.refresh();
    try {
      await post(`/v1/sessions/${encodeURIComponent(this.session.id)}/prompt`, { text });
      this.input.value = "";
      this.showCommands();
      flash(this.container, "");
    } catch (error) {
      this.conversation.meta.running = false;
      this.refresh();
      flash(this.container, error.message);
    }
  }

  async cancelTurn() {
    if (!this.conversation.meta.running) return;
    try {
      await post(`/v1/sessions/${encodeURIComponent(this.session.id)}/cancel`);
    } catch (error) {
      if (!(error instanceof ApiError && error.status === 409)) flash(this.container, error.message);
    }
  }

  // ---- the session bar: title, status, meters, selectors ------------------------------
  refresh() {
    const meta = this.conversation.meta;
    const session = this.session;
    // The agent's title, else the saved session's, else the first prompt (as the server
    // titles it), else the agent and the folder.
    const named = meta.title || this.savedTitle || session.title || this.conversation.prompts[0];
    this.title.textContent = named || `${session.agent} in ${this.conversation.paths.folder(session.cwd)}`;
    this.title.title = session.cwd;
    this.statusEl.textContent = meta.running ? "running" : (this.status === "running" ? "idle" : this.status || "");
    this.statusEl.className = `session-status ${meta.running ? "running" : ""}`;
    this.meterBox.replaceChildren(...meters(meta));
    this.send.disabled = meta.running;
    this.cancel.hidden = !meta.running;
    this.continue.hidden = meta.running || !meta.lastStop || meta.lastStop === "end_turn";
    this.renderSelectors();
  }

  renderSelectors() {
    const meta = this.conversation.meta;
    const session = this.session;
    const controls = [];
    const modes = session.modes || [];
    if (modes.length) {
      const modeSelect = select(modes.map((m) => [m.id, m.name || m.id]), meta.mode, { "aria-label": "Mode", class: "mode" });
      modeSelect.addEventListener("change", () => this.set("mode", { mode_id: modeSelect.value }));
      controls.push(h("label", { class: "control" }, "Mode ", modeSelect));
    }
    const models = session.models || [];
    if (models.length) {
      const ids = models.map((m) => [pick(m, "modelId", "model_id", "id"), m.name || pick(m, "modelId", "model_id", "id")]);
      const current = pick(session, "current_model");
      // An agent need not say which model runs: then none is shown as chosen.
      const choicesShown = current === null ? [["", "(the agent's choice)"], ...ids] : ids;
      const modelSelect = select(choicesShown, current === null ? "" : current, { "aria-label": "Model", class: "model" });
      modelSelect.addEventListener("change", () => this.set("model", { model_id: modelSelect.value }));
      controls.push(h("label", { class: "control" }, "Model ", modelSelect));
    }
    for (const option of meta.configOptions || []) {
      const id = option.id;
      const current = pick(option, "currentValue", "current_value");
      let input;
      if (option.type === "boolean") {
        input = h("input", { type: "checkbox", "aria-label": option.name || id });
        input.checked = Boolean(current);
        input.addEventListener("change", () => this.set("config", { config_id: id, value: input.checked }));
      } else {
        input = select(choices(option), current === null ? null : String(current), { "aria-label": option.name || id });
        input.addEventListener("change", () => this.set("config", { config_id: id, value: input.value }));
      }
      controls.push(h("label", { class: "control" }, `${option.name || id} `, input));
    }
    // Rebuilt only when what it shows changed: a select being used keeps its focus.
    const signature = JSON.stringify([modes, models, session.current_model, meta.mode, meta.configOptions]);
    if (signature !== this.selectorSignature) {
      this.selectorSignature = signature;
      this.controls.replaceChildren(...controls);
    }
  }

  async set(what, body) {
    try {
      this.session = await post(`/v1/sessions/${encodeURIComponent(this.session.id)}/${what}`, body);
      const meta = this.conversation.meta;
      meta.mode = this.session.current_mode;
      if (this.session.config_options) meta.configOptions = this.session.config_options;
      this.refresh();
    } catch (error) {
      flash(this.container, error.message);
    }
  }

  // ---- permissions: a dialog with exactly the options the agent offered ----------------
  permissions(pending) {
    const first = pending[0] || null;
    if (!first) {
      this.asked = null;
      if (this.dialog.open) this.dialog.close();
      return;
    }
    if (this.asked && this.asked.event.request_id === first.event.request_id) return;
    this.asked = first;
    const event = first.event;
    const buttons = event.options.map((option) => h("button", {
      type: "button", class: `option ${option.kind}`, "data-option-id": option.option_id,
      onclick: () => this.answer(option.option_id),
    }, option.name));
    clear(this.dialog).append(
      h("h3", { id: "permission-title", text: "The agent asks for permission" }),
      h("p", { class: "tool", text: first.title }),
      ...permissionDetails(event, first.card, first.paths),
      h("div", { class: "options" }, buttons),
      h("p", { class: "hint", text: "Esc or no answer denies." }),
    );
    if (!this.dialog.open) this.dialog.showModal();
    if (buttons.length) buttons[0].focus();
  }

  async answer(optionId) {
    const asked = this.asked;
    if (!asked) return;
    const requestId = asked.event.request_id;
    for (const button of this.dialog.querySelectorAll("button")) button.disabled = true;
    try {
      await post(`/v1/sessions/${encodeURIComponent(this.session.id)}/permissions/${encodeURIComponent(requestId)}`, { option_id: optionId });
    } catch (error) {
      // Already answered (by the timeout, another tab): permission_resolved closes it.
      if (!(error instanceof ApiError && (error.status === 404 || error.status === 409))) flash(this.container, error.message);
    }
    if (this.asked === asked && this.dialog.open) this.dialog.close();
  }
}

// What a permission is asked for: the request's own diff and text (`permission_requested`
// may carry them), else what the page already has of the call (its input, output, diff).
export function permissionDetails(event, card, paths) {
  const out = [];
  const diff = event.diff || (card && card.diff) || null;
  if (diff) out.push(h("div", { class: "change" }, h("h4", { text: "The change" }), diffView(diff, paths)));
  if (event.content) out.push(h("pre", { class: "content", text: event.content }));
  if (card && Object.keys(card.input).length) {
    const input = h("pre", { text: JSON.stringify(card.input, null, 2) });
    out.push(h("details", { class: "input", open: !diff && !event.content }, h("summary", { text: "Input" }), input));
  }
  if (card && card.outputText && !event.content) out.push(h("pre", { class: "content", text: card.outputText }));
  return out;
}

// The saved events before this server session's own turns. The saved session goes on with
// them (the agent writes it): its last m turns are those whose prompts are the first m sent
// here (m as large as matches, so a saved session a turn behind is cut right too).
export function historyBefore(events, prompts) {
  const starts = [];
  events.forEach((event, i) => {
    if (event.type === "user_message" && !event.parent_call_id) starts.push(i);
  });
  const said = starts.map((i) => events[i].text.trim());
  for (let m = Math.min(prompts.length, starts.length); m > 0; m -= 1) {
    const tail = said.slice(said.length - m);
    if (tail.every((text, k) => text === prompts[k].trim())) return events.slice(0, starts[starts.length - m]);
  }
  return events;
}
