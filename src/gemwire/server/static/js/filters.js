// The filters the Sessions and Usage views share with `gemwire sessions list` and
// `gemwire usage`: agent, project, since and until.

import { get, query } from "./api.js";
import { h, select } from "./dom.js";

// The agent and project selects, holding `filters`' values until the choices come.
export function choiceSelects(filters) {
  const agent = select([["all", "all agents"]], "all", { name: "agent" });
  const project = select([["", "every project"]], "", { name: "project" });
  for (const [el, value] of [[agent, filters.agent], [project, filters.project]]) {
    if (value && ![...el.options].some((o) => o.value === value)) el.append(h("option", { value, text: value }));
    el.value = value;
  }
  // Another agent's sessions are in other projects: its choices, when it is chosen.
  agent.addEventListener("change", () => loadChoices(agent, project));
  return [agent, project];
}

// The choices of the agent chosen now, from an empty page of the listing (a search, or the
// Usage view, lists no sessions to take them from).
export async function loadChoices(agent, project) {
  try {
    fillChoices(await get(`/v1/saved-sessions${query({ agent: agent.value, limit: 0 })}`), agent, project);
  } catch {
    // The view says what went wrong when it asks; the choices stay as they are.
  }
}

// The agents and projects the saved sessions have (the listing says them), as the options
// of `agentSelect` and `projectSelect`; each keeps its value.
export function fillChoices(found, agentSelect, projectSelect) {
  const agents = [["all", "all agents"], ...(found.agents || []).map((a) => [a.name, a.title || a.name])];
  const projects = [["", "every project"], ...(found.projects || []).map((p) => [p, p])];
  for (const [el, options] of [[agentSelect, agents], [projectSelect, projects]]) {
    const value = el.value;
    el.replaceChildren(...select(options, value).children);
    if (!options.some(([v]) => v === value)) el.append(h("option", { value, text: value }));
    el.value = value;
  }
}

// "since" after "until": said before anything is asked (the server refuses it too).
export function dateProblem(since, until) {
  return since && until && since > until ? `“Since” (${since}) is after “Until” (${until}): no session can match.` : "";
}

