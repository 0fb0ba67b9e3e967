// DOM building with text only: nothing here ever parses a string as HTML.
// Agent, session and task text goes in through `text` or as a child string, both of
// which become text nodes; attributes are set only by the page's own code.

export const SVG = "http://www.w3.org/2000/svg";

// An element: h("div", {class: "card", text: "hi", onclick: f}, child, "text", ...).
export function h(tag, props = {}, ...children) {
  const el = document.createElement(tag);
  setProps(el, props);
  append(el, children);
  return el;
}

// An SVG element, built the same way.
export function s(tag, props = {}, ...children) {
  const el = document.createElementNS(SVG, tag);
  setProps(el, props);
  append(el, children);
  return el;
}

function setProps(el, props) {
  for (const [key, value] of Object.entries(props)) {
    if (value === null || value === undefined || value === false) continue;
    if (key === "text") el.textContent = String(value);
    else if (key === "class") el.setAttribute("class", value);
    else if (key.startsWith("on")) el.addEventListener(key.slice(2), value);
    else if (key === "value") el.value = value;
    else el.setAttribute(key, value === true ? "" : String(value));
  }
}

export function append(el, children) {
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return el;
}

export function clear(el) {
  el.replaceChildren();
  return el;
}

// A control with its visible label (its accessible name too: a <select> inside a <label>
// would otherwise be named by its options' text as well).
export function labelled(text, control) {
  control.setAttribute("aria-label", text);
  return h("label", { class: "field" }, h("span", { class: "label", text }), control);
}

// A <select> of [value, label] pairs (or plain strings), `current` selected.
export function select(options, current, props = {}) {
  const el = h("select", props);
  for (const option of options) {
    const [value, label] = Array.isArray(option) ? option : [option, option];
    const item = h("option", { value, text: label });
    if (value === current) item.selected = true;
    el.append(item);
  }
  return el;
}

export function money(value) {
  if (value === null || value === undefined) return "?";
  if (value === 0 || value >= 0.01) return `$${value.toFixed(2)}`;
  return value >= 0.0001 ? `$${value.toFixed(4)}` : "<$0.0001";
}

export function count(value) {
  return value === null || value === undefined ? "?" : Number(value).toLocaleString("en");
}

export function duration(ms) {
  if (ms === null || ms === undefined) return "";
  if (ms < 1000) return `${Math.round(ms)} ms`;
  const secs = ms / 1000;
  return secs < 60 ? `${secs.toFixed(1)} s` : `${Math.floor(secs / 60)} min ${Math.round(secs % 60)} s`;
}

// An error shown at the top of a view; replaced, never stacked ("" hides it).
export function flash(container, message) {
  let bar = container.querySelector(":scope > .flash");
  if (!bar) {
    bar = h("div", { class: "flash error", role: "alert" });
    container.prepend(bar);
  }
  bar.textContent = message;
  bar.hidden = !message;
}
