// A safe subset of Markdown, built with DOM calls only: paragraphs, headings, emphasis,
// inline code, fenced code blocks, lists, quotes and rules. A link or an image is shown as
// its text and its address, both as text: nothing here makes an <a>, an <img> or any
// attribute from the text, so a `javascript:` address or raw HTML stays visible text.

import { h } from "./dom.js";

const FENCE = /^ {0,3}(`{3,}|~{3,})(.*)$/;
const HEADING = /^ {0,3}(#{1,6})(?:[ \t]+(.*))?$/;
const RULE = /^ {0,3}([-*_])(?:[ \t]*\1){2,}[ \t]*$/;
const QUOTE = /^ {0,3}> ?(.*)$/;
const ITEM = /^( *)([-*+]|\d{1,9}[.)])( +|$)(.*)$/;
const ESCAPABLE = "\\`*_{}[]()#+-.!>~|<\"'";
// Quotes, lists and emphasis nest at most this deep: deeper is text (no stack to exhaust).
const DEEPEST = 12;
// Bounded, so that text of many "[" or "<" costs a little per character, never a scan of
// the rest of the line from each.
const LINK = /!?\[([^\]\n]{0,500})\]\([ \t]*<?((?:[^()<>\s]|\([^()<>\s]{0,200}\)){0,2000})>?(?:[ \t]+"[^"\n]{0,500}")?[ \t]*\)/y;
const AUTOLINK = /<([a-zA-Z][a-zA-Z0-9+.-]{1,31}:[^<>\s]{0,2000})>/y;

// The Markdown `text` as a fragment of elements and text nodes.
export function markdown(text) {
  const fragment = document.createDocumentFragment();
  blocks(text.replace(/\r\n?/g, "\n").replace(/\t/g, "    ").split("\n"), fragment);
  return fragment;
}

// Where the Markdown of `text` from `from` (a point where no block is open) is settled: the
// start of its last complete line that follows a blank line outside a code fence, is not
// indented and starts no list item. Text added later cannot change how what comes before it
// is drawn, so a streaming answer is drawn again only from there.
export function settled(text, from) {
  let end = from;
  let fence = null;
  let afterBlank = false;
  let at = from;
  for (;;) {
    const next = text.indexOf("\n", at);
    if (next < 0) return end; // the last line may be cut: it settles nothing
    const line = text.slice(at, next);
    if (fence) {
      if (closes(line, fence)) fence = null;
    } else if (blank(line)) {
      afterBlank = true;
    } else {
      if (afterBlank && indent(line) === 0 && !ITEM.test(line)) end = at;
      afterBlank = false;
      const opened = FENCE.exec(line);
      if (opened) fence = opened[1];
    }
    at = next + 1;
  }
}

const blank = (line) => line.trim() === "";
const indent = (line) => line.length - line.trimStart().length;

// A line that ends a paragraph by starting another block.
function interrupts(line) {
  return FENCE.test(line) || HEADING.test(line) || RULE.test(line) || QUOTE.test(line) || ITEM.test(line);
}

function blocks(lines, parent, depth = 0) {
  let i = 0;
  while (i < lines.length) {
    const line = lines[i];
    let m;
    if (blank(line)) {
      i += 1;
    } else if ((m = FENCE.exec(line))) {
      const fence = m[1];
      const body = [];
      i += 1;
      while (i < lines.length && !closes(lines[i], fence)) body.push(lines[i++]);
      i += 1; // the closing fence (an answer still streaming may have none yet)
      const language = m[2].trim().split(/\s/)[0];
      parent.append(h("pre", { class: "code", "data-language": language || null }, h("code", { text: body.join("\n") })));
    } else if ((m = HEADING.exec(line))) {
      parent.append(h(`h${Math.min(6, m[1].length + 2)}`, { class: "md-heading" }, inline(unclosed(m[2] || ""))));
      i += 1;
    } else if (RULE.test(line)) {
      parent.append(h("hr"));
      i += 1;
    } else if (QUOTE.test(line) && depth < DEEPEST) {
      const inner = [];
      while (i < lines.length && !blank(lines[i])) {
        const quoted = QUOTE.exec(lines[i]);
        if (quoted) inner.push(quoted[1]);
        else if (!interrupts(lines[i])) inner.push(lines[i].trim()); // a lazy continuation
        else break;
        i += 1;
      }
      const quote = h("blockquote");
      blocks(inner, quote, depth + 1);
      parent.append(quote);
    } else if (ITEM.test(line) && depth < DEEPEST) {
      i = list(lines, i, parent, depth);
    } else {
      const text = [line.trim()];
      i += 1;
      while (i < lines.length && !blank(lines[i]) && !interrupts(lines[i])) text.push(lines[i++].trim());
      parent.append(h("p", {}, inline(text.join("\n"))));
    }
  }
}

// A heading's text without the closing run of "#" it may end with ("## Title ##").
function unclosed(text) {
  const trimmed = text.trimEnd();
  let end = trimmed.length;
  while (end > 0 && trimmed[end - 1] === "#") end -= 1;
  if (end === trimmed.length || (end > 0 && trimmed[end - 1] !== " ")) return trimmed;
  return trimmed.slice(0, end).trimEnd();
}

function closes(line, fence) {
  const trimmed = line.trim();
  return indent(line) < 4 && trimmed.length >= fence.length && trimmed === fence[0].repeat(trimmed.length);
}

// The list starting at lines[start]; returns the index after it.
function list(lines, start, parent, depth) {
  const first = ITEM.exec(lines[start]);
  const base = first[1].length;
  const ordered = /\d/.test(first[2]);
  const number = ordered ? parseInt(first[2], 10) : 1;
  const el = h(ordered ? "ol" : "ul", { start: number === 1 ? null : number });
  let i = start;
  while (i < lines.length) {
    const m = ITEM.exec(lines[i]);
    if (!m || m[1].length !== base || /\d/.test(m[2]) !== ordered) break;
    const width = m[1].length + m[2].length + Math.max(1, Math.min(m[3].length, 4));
    const body = [m[4]];
    i += 1;
    while (i < lines.length) {
      const line = lines[i];
      if (blank(line)) {
        // Blank lines continue the item only when more of it (indented) follows them.
        let next = i + 1;
        while (next < lines.length && blank(lines[next])) next += 1;
        if (next === lines.length || indent(lines[next]) < width) break;
        while (i < next) {
          body.push("");
          i += 1;
        }
        continue;
      } else if (indent(line) >= width) {
        body.push(line.slice(width));
      } else if (ITEM.test(line) || (body.length && blank(body[body.length - 1])) || interrupts(line)) {
        break;
      } else {
        body.push(line.trim()); // a lazy continuation of the item's paragraph
      }
      i += 1;
    }
    const item = h("li");
    blocks(body, item, depth + 1);
    // A tight item (no blank line in it) has its text as the item's own, not paragraphs.
    if (!body.some(blank)) for (const p of [...item.children]) if (p.nodeName === "P") p.replaceWith(...p.childNodes);
    el.append(item);
  }
  parent.append(el);
  return i;
}

// Inline Markdown of one paragraph: an array of nodes and strings.
export function inline(text, depth = 0) {
  if (depth > DEEPEST) return [text];
  // Where a search for a closing mark (a "**", a run of 3 backticks) found none, no later
  // search for it can: each is tried once, and hostile text stays linear.
  const none = new Map();
  const out = [];
  let plain = "";
  const flush = () => {
    if (plain) out.push(plain);
    plain = "";
  };
  let i = 0;
  while (i < text.length) {
    const c = text[i];
    if (c === "\\" && i + 1 < text.length && ESCAPABLE.includes(text[i + 1])) {
      plain += text[i + 1];
      i += 2;
      continue;
    }
    if (c === "`") {
      let run = 1;
      while (text[i + run] === "`") run += 1;
      const end = none.has(`${run}`) ? -1 : closingTicks(text, i + run, run);
      if (end < 0) none.set(`${run}`, true);
      if (end < 0) {
        plain += "`".repeat(run);
        i += run;
        continue;
      }
      flush();
      let code = text.slice(i + run, end).replace(/\n/g, " ");
      if (code.length > 2 && code.startsWith(" ") && code.endsWith(" ") && code.trim()) code = code.slice(1, -1);
      out.push(h("code", { text: code }));
      i = end + run;
      continue;
    }
    if (c === "[" || (c === "!" && text[i + 1] === "[")) {
      LINK.lastIndex = i;
      const m = LINK.exec(text);
      if (m) {
        flush();
        out.push(link(m[1], m[2], c === "!", depth));
        i = LINK.lastIndex;
        continue;
      }
    }
    if (c === "<") {
      AUTOLINK.lastIndex = i;
      const m = AUTOLINK.exec(text);
      if (m) {
        flush();
        out.push(h("span", { class: "url", text: m[1] }));
        i = AUTOLINK.lastIndex;
        continue;
      }
    }
    if (c === "*" || c === "_" || c === "~") {
      const span = emphasis(text, i, none, depth);
      if (span) {
        flush();
        out.push(span.el);
        i = span.end;
        continue;
      }
    }
    plain += c;
    i += 1;
  }
  flush();
  return out;
}

function closingTicks(text, from, run) {
  let at = text.indexOf("`".repeat(run), from);
  while (at >= 0) {
    let end = at + run;
    if (text[end] !== "`") return at;
    while (text[end] === "`") end += 1;
    at = text.indexOf("`".repeat(run), end);
  }
  return -1;
}

const word = (ch) => ch !== undefined && /[\p{L}\p{N}]/u.test(ch);
const space = (ch) => ch === undefined || /\s/.test(ch);

// `**strong**`, `__strong__`, `*em*`, `_em_` or `~~struck~~` starting at text[i], or null.
function emphasis(text, i, none, depth) {
  const c = text[i];
  const double = text[i + 1] === c;
  if (c === "~" && !double) return null;
  const mark = double ? c + c : c;
  const open = i + mark.length;
  if (space(text[open]) || text[open] === c) return null;
  if (c === "_" && word(text[i - 1])) return null; // snake_case is not emphasis
  if (none.has(mark)) return null;
  let at = text.indexOf(mark, open + 1);
  while (at >= 0) {
    const closes = !space(text[at - 1]) && text[at + mark.length] !== c && text[at - 1] !== c
      && !(c === "_" && word(text[at + mark.length]));
    if (closes) {
      const tag = c === "~" ? "del" : double ? "strong" : "em";
      return { el: h(tag, {}, inline(text.slice(open, at), depth + 1)), end: at + mark.length };
    }
    at = text.indexOf(mark, at + 1);
  }
  none.set(mark, true);
  return null;
}

// A link or image as text: its label, then its address in brackets (never followed).
function link(label, address, image, depth) {
  const shown = label || (image ? "image" : "");
  const el = h("span", { class: image ? "link image" : "link" }, inline(shown, depth + 1));
  if (address && address !== label) el.append(" ", h("span", { class: "url", text: `(${address})` }));
  return el;
}
