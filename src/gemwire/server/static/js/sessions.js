// Saved sessions of the server's agent homes (GET /v1/saved-sessions; with a search text,
// the full-text search GET /v1/saved-sessions/search), and the server's own sessions
// (GET /v1/sessions). A saved session opens in the same renderer as a live conversation,
// downloads as HTML or Markdown, and continues (POST /v1/sessions with "continue") when the
// server runs its agent.

import { get, post, query } from "./api.js";
import { h, clear, flash, count, labelled } from "./dom.js";
import { choiceSelects, fillChoices, loadChoices, dateProblem } from "./filters.js";
import { Conversation, meters } from "./render.js";

const PAGE = 50;

const sessionLink = (agent, id, label) =>
  id ? h("a", { href: `#/sessions/${encodeURIComponent(agent)}/${encodeURIComponent(id)}`, text: label }) : label;
const savedPath = (agent, id) => `/v1/saved-sessions/${encodeURIComponent(agent)}/${encodeURIComponent(id)}`;

function day(iso) {
  return iso ? iso.slice(0, 16).replace("T", " ") : "";
}

export class SessionsView {
  constructor(container) {
    this.container = container;
    this.filters = { agent: "all", project: "", since: "", until: "", q: "" };
    this.offset = 0;
  }

  leave() {}

  async show(agent, id) {
    clear(this.container);
    if (agent && id) await this.showOne(agent, id);
    else await this.showList();
  }

  async showList() {
    const f = this.filters;
    const [agent, project] = choiceSelects(f);
    const since = h("input", { name: "since", type: "date", value: f.since });
    const until = h("input", { name: "until", type: "date", value: f.until });
    const q = h("input", { name: "q", type: "search", value: f.q, placeholder: "prompts, answers, tools" });
    this.choices = [agent, project];
    const form = h("form", { class: "filters" },
      labelled("Agent", agent), labelled("Project", project), labelled("Since", since), labelled("Until", until),
      labelled("Search", q), h("button", { type: "submit", text: "Filter" }));
    const results = h("div", { class: "results" });
    const live = h("div", { class: "live-sessions" });
    this.container.append(h("h2", { text: "Sessions" }), form, results, h("h2", { text: "This server's sessions" }), live);
    form.addEventListener("submit", (e) => {
      e.preventDefault();
      Object.assign(this.filters, { agent: agent.value, project: project.value, since: since.value, until: until.value, q: q.value });
      this.offset = 0;
      this.list(results);
    });
    // A search lists no sessions to take the choices from.
    await Promise.all([this.list(results), this.listLive(live), f.q ? loadChoices(agent, project) : null]);
  }

  async list(results) {
    const problem = dateProblem(this.filters.since, this.filters.until);
    flash(this.container, problem);
    if (problem) {
      clear(results);
      return;
    }
    if (this.filters.q) return this.search(results);
    clear(results).append(h("p", { class: "muted", text: "Loading…" }));
    let found;
    try {
      const { q, ...filters } = this.filters;
      found = await get(`/v1/saved-sessions${query({ ...filters, limit: PAGE, offset: this.offset })}`);
    } catch (error) {
      clear(results);
      flash(this.container, error.message);
      return;
    }
    fillChoices(found, ...this.choices);
    const sessions = found.sessions || [];
    clear(results);
    unreadNote(results, found.unread);
    if (!sessions.length) {
      results.append(h("p", { class: "muted", text: "No saved session matches." }));
      return;
    }
    const rows = sessions.map((info) => {
      const agent = info.agent || "gemini";
      const label = info.summary || info.first_prompt || info.id || info.path;
      return h("tr", {},
        h("td", { class: "when", text: day(info.last_updated || info.start_time) }),
        h("td", { class: "agent", text: agent }),
        h("td", { class: "project", title: info.project || "" }, h("span", { text: info.project || "" })),
        h("td", { class: "summary" }, sessionLink(agent, info.id, label)),
        h("td", { class: "num", text: String(info.messages ?? "") }));
    });
    const head = [["Updated", "when"], ["Agent", "agent"], ["Project", "project"], ["Session", "summary"], ["Messages", "num"]];
    results.append(h("table", { class: "list sessions" },
      h("thead", {}, h("tr", {}, head.map(([t, c]) => h("th", { class: c, text: t })))),
      h("tbody", {}, rows)));
    results.append(this.pager(found, sessions.length, results));
  }

  // Newest first, a page at a time: where this page is, and the way to the others.
  pager(found, shown, results) {
    const total = found.total ?? shown;
    const go = (offset) => {
      this.offset = Math.max(0, offset);
      this.list(results);
    };
    const newer = h("button", { type: "button", text: "← Newer", disabled: this.offset === 0, onclick: () => go(this.offset - PAGE) });
    const older = h("button", { type: "button", text: "Older →", disabled: this.offset + shown >= total, onclick: () => go(this.offset + PAGE) });
    const where = `${count(this.offset + 1)}–${count(this.offset + shown)} of ${count(total)}`;
    return h("nav", { class: "pager", "aria-label": "Pages" }, newer, h("span", { class: "muted", text: where }), older);
  }

  // The sessions whose prompts, answers or tool calls hold the text, each with its quotes.
  async search(results) {
    clear(results).append(h("p", { class: "muted", text: "Searching…" }));
    const { q, ...filters } = this.filters;
    let found;
    try {
      found = await get(`/v1/saved-sessions/search${query({ text: q, ...filters })}`);
    } catch (error) {
      clear(results);
      flash(this.container, error.message);
      return;
    }
    clear(results);
    unreadNote(results, found.unread);
    const hits = found.hits || [];
    if (!hits.length) {
      results.append(h("p", { class: "muted", text: "No saved session matches." }));
      return;
    }
    results.append(h("ol", { class: "search-hits" }, hits.map((hit) => {
      const label = hit.title || hit.id || hit.path;
      const matches = hit.matches === 1 ? "1 match" : `${hit.matches} matches`;
      const about = [hit.agent, day(hit.last_updated || hit.start_time), hit.project, matches].filter(Boolean).join(" · ");
      return h("li", { class: "hit" },
        h("div", { class: "hit-head" }, sessionLink(hit.agent, hit.id, label), h("span", { class: "muted", text: ` ${about}` })),
        h("ul", { class: "quotes" }, (hit.quotes || []).map((quote) => h("li", { class: "quote" },
          h("span", { class: "field", text: quote.field }), h("span", { class: "quote-text", text: quote.text })))));
    })));
    if (found.more) results.append(h("p", { class: "muted", text: `First ${hits.length} sessions: narrow the search.` }));
  }

  async listLive(box) {
    let found;
    try {
      found = await get("/v1/sessions");
    } catch (error) {
      box.append(h("p", { class: "muted", text: error.message }));
      return;
    }
    const sessions = found.sessions || [];
    if (!sessions.length) {
      box.append(h("p", { class: "muted", text: "None yet." }));
      return;
    }
    box.append(h("ul", { class: "server-sessions" }, sessions.map((s) => h("li", {},
      h("a", { href: `#/chat/${encodeURIComponent(s.id)}`, text: s.title || `${s.agent} · ${s.cwd}` }),
      h("span", { class: "muted", text: ` ${s.status} · ${day(s.created)}` })))));
  }

  async showOne(agent, id) {
    const back = h("a", { href: "#/sessions", text: "← Sessions" });
    let loaded, agents, info;
    try {
      // Found in the listing first: an unknown session is a message, not a 404.
      const found = await get(`/v1/saved-sessions${query({ agent: "all", q: id })}`);
      info = (found.sessions || []).find((s) => s.agent === agent && s.id === id);
      if (!info) throw new Error(`No saved ${agent} session ${id}.`);
      [loaded, agents] = await Promise.all([
        get(`${savedPath(agent, id)}${query({ format: "events" })}`),
        get("/v1/agents").catch(() => []),
      ]);
    } catch (error) {
      this.container.append(back);
      flash(this.container, error.message);
      return;
    }
    const conversation = new Conversation();
    for (const event of loaded.events || []) conversation.add(event.event || event, false);
    conversation.flush();
    const meterBox = h("div", { class: "meters" }, meters(conversation.meta));
    const download = (format, label) => h("a", {
      class: "button", href: `${savedPath(agent, id)}?format=${format}`, download: `${id}.${format === "markdown" ? "md" : format}`, text: label,
    });
    const runs = agents.some((a) => a.name === agent && a.available);
    const events = (loaded.events || []).map((event) => event.event || event);
    const started = events.find((event) => event.type === "session_started" && event.cwd);
    const resume = runs ? h("button", {
      type: "button", class: "primary continue-saved", text: "Continue",
      onclick: () => this.continueSaved(agent, id, started ? started.cwd : null, resume),
    }) : null;
    this.container.append(
      h("div", { class: "session-bar" }, back, h("h2", { class: "session-title", title: id, text: conversation.meta.title || info.summary || info.first_prompt || id }), meterBox,
        h("div", { class: "controls" }, resume, download("html", "Download HTML"), download("markdown", "Download Markdown"))),
      conversation.el,
    );
  }

  // A new server session of the same agent continuing this one, in its own folder; the
  // conversation view then shows its history (the agent's replay) and takes prompts.
  async continueSaved(agent, id, cwd, button) {
    button.disabled = true;
    try {
      const body = { agent, continue: id };
      if (cwd) body.cwd = cwd;
      const created = await post("/v1/sessions", body);
      location.hash = `#/chat/${encodeURIComponent(created.id)}`;
    } catch (error) {
      flash(this.container, error.message);
      button.disabled = false;
    }
  }
}

// What of the agents' homes the server could not read (its sessions are missing), as text.
function unreadNote(results, unread) {
  const entries = Object.entries(unread || {});
  if (!entries.length) return;
  results.append(h("div", { class: "unread", role: "status" },
    h("p", { text: "Could not read (the sessions there are not listed):" }),
    h("ul", {}, entries.map(([path, why]) => h("li", { text: `${path}: ${why}` })))));
}
