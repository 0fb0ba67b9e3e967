// Saved sessions of the server's agent homes (GET /v1/saved-sessions; with a search text,
// the full-text search GET /v1/saved-sessions/search), and the server's own sessions
// (GET /v1/sessions). A saved session opens in the same renderer as a live conversation,
// downloads as HTML or Markdown, and continues (POST /v1/sessions with "continue") when the
// server runs its agent.

import { get, post, query } from "./api.js";
import { h, clear, select, flash } from "./dom.js";
import { Conversation, meters } from "./render.js";

const AGENTS = [["all", "all agents"], ["gemini", "Gemini CLI"], ["claude", "Claude Code"], ["qwen", "Qwen Code"]];
const PAGE = 200;

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
  }

  leave() {}

  async show(agent, id) {
    clear(this.container);
    if (agent && id) await this.showOne(agent, id);
    else await this.showList();
  }

  async showList() {
    const f = this.filters;
    const agent = select(AGENTS, f.agent, { name: "agent", "aria-label": "Agent" });
    const project = h("input", { name: "project", value: f.project, placeholder: "project folder", "aria-label": "Project" });
    const since = h("input", { name: "since", type: "date", value: f.since, "aria-label": "Since" });
    const until = h("input", { name: "until", type: "date", value: f.until, "aria-label": "Until" });
    const q = h("input", { name: "q", type: "search", value: f.q, placeholder: "search prompts, answers, tools", "aria-label": "Search" });
    const form = h("form", { class: "filters" }, agent, project, since, until, q, h("button", { type: "submit", text: "Filter" }));
    const results = h("div", { class: "results" });
    const live = h("div", { class: "live-sessions" });
    this.container.append(h("h2", { text: "Sessions" }), form, results, h("h2", { text: "This server's sessions" }), live);
    form.addEventListener("submit", (e) => {
      e.preventDefault();
      Object.assign(this.filters, { agent: agent.value, project: project.value, since: since.value, until: until.value, q: q.value });
      this.list(results);
    });
    await Promise.all([this.list(results), this.listLive(live)]);
  }

  async list(results) {
    if (this.filters.q) return this.search(results);
    clear(results).append(h("p", { class: "muted", text: "Loading…" }));
    let found;
    try {
      const { q, ...filters } = this.filters;
      found = await get(`/v1/saved-sessions${query(filters)}`);
    } catch (error) {
      clear(results);
      flash(this.container, error.message);
      return;
    }
    const sessions = Array.isArray(found) ? found : found.sessions || [];
    clear(results);
    if (!sessions.length) {
      results.append(h("p", { class: "muted", text: "No saved session matches." }));
      return;
    }
    const rows = sessions.slice(0, PAGE).map((info) => {
      const agent = info.agent || "gemini";
      const label = info.summary || info.first_prompt || info.id || info.path;
      const link = sessionLink(agent, info.id, label);
      return h("tr", {},
        h("td", { class: "when", text: day(info.last_updated || info.start_time) }),
        h("td", { class: "agent", text: agent }),
        h("td", { class: "project", text: info.project || "" }),
        h("td", { class: "summary" }, link),
        h("td", { class: "num", text: String(info.messages ?? "") }));
    });
    results.append(h("table", { class: "list" },
      h("thead", {}, h("tr", {}, ["Updated", "Agent", "Project", "Session", "Messages"].map((t) => h("th", { text: t })))),
      h("tbody", {}, rows)));
    if (sessions.length > PAGE) results.append(h("p", { class: "muted", text: `First ${PAGE} of ${sessions.length}: narrow the filters.` }));
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
    let loaded, agents;
    try {
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
      h("div", { class: "session-bar" }, back, h("h2", { class: "session-title", text: conversation.meta.title || id }), meterBox,
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
