// The page: four views behind the hash (#/chat[/<session id>], #/sessions, #/usage,
// #/batches[/<batch id>]). State that must survive a reload is in the hash, so each tab
// keeps its own conversation.

import { ChatView } from "./conversation.js";
import { SessionsView } from "./sessions.js";
import { UsageView } from "./usage.js";
import { BatchesView } from "./batches.js";

const container = document.getElementById("view");
const views = {
  chat: new ChatView(container),
  sessions: new SessionsView(container),
  usage: new UsageView(container),
  batches: new BatchesView(container),
};
let current = null;

function route() {
  const [name, ...rest] = location.hash.replace(/^#\/?/, "").split("/");
  const view = views[name] ? name : "chat";
  if (current && current !== views[view]) current.leave();
  current = views[view];
  for (const link of document.querySelectorAll("nav a")) {
    if (link.dataset.view === view) link.setAttribute("aria-current", "page");
    else link.removeAttribute("aria-current");
  }
  current.show(...rest.map(decodeURIComponent));
}

window.addEventListener("hashchange", route);
route();
