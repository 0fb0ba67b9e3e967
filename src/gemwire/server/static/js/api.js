// The public API of `gemwire serve` (docs/server.md), and nothing else: JSON over fetch,
// and the sequence-numbered event streams over SSE. The cookie set by the `/?token=` login
// authenticates every request (fetch and EventSource send it on the same origin).

export class ApiError extends Error {
  constructor(status, kind, message) {
    super(message);
    this.status = status;
    this.kind = kind;
  }
}

export async function api(method, path, body) {
  const init = { method, headers: { Accept: "application/json" }, credentials: "same-origin" };
  if (body !== undefined) {
    init.headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  let response;
  try {
    response = await fetch(path, init);
  } catch (error) {
    throw new ApiError(0, "network", `the server cannot be reached (${error.message})`);
  }
  const text = await response.text();
  let data = null;
  try {
    data = text ? JSON.parse(text) : null;
  } catch {
    data = null;
  }
  if (!response.ok) {
    const error = data && data.error ? data.error : {};
    throw new ApiError(response.status, error.kind || "http", error.message || `HTTP ${response.status}`);
  }
  return data;
}

export const get = (path) => api("GET", path);
export const post = (path, body) => api("POST", path, body === undefined ? {} : body);

// A query string of the set values: query({a: 1, b: ""}) -> "?a=1".
export function query(params) {
  const search = new URLSearchParams();
  for (const [key, value] of Object.entries(params)) {
    if (value !== null && value !== undefined && value !== "") search.set(key, String(value));
  }
  const text = search.toString();
  return text ? `?${text}` : "";
}

// Follows an SSE stream of envelopes ({"seq", "event"} or {"seq", "state"}) from `after`.
// Each seq reaches `onEnvelope` once: the browser's own reconnection resumes with
// Last-Event-ID, and when the stream fails for good (the server restarted, a 5xx), it is
// opened again with ?after= the last seq seen. `onStatus` hears "live", "reconnecting".
export class EnvelopeStream {
  constructor(path, after, onEnvelope, onStatus = () => {}) {
    this.path = path;
    this.last = after;
    this.onEnvelope = onEnvelope;
    this.onStatus = onStatus;
    this.closed = false;
    this.retry = 500;
    this.source = null;
    this.open();
  }

  open() {
    if (this.closed) return;
    const sep = this.path.includes("?") ? "&" : "?";
    const source = new EventSource(`${this.path}${sep}after=${this.last}`);
    this.source = source;
    source.addEventListener("open", () => {
      this.retry = 500;
      this.onStatus("live");
    });
    source.addEventListener("gemwire", (message) => this.receive(message.data));
    source.addEventListener("error", () => {
      if (this.closed) return;
      this.onStatus("reconnecting");
      if (source.readyState === EventSource.CLOSED) {
        setTimeout(() => this.open(), this.retry);
        this.retry = Math.min(this.retry * 2, 10000);
      }
    });
  }

  receive(data) {
    let envelope;
    try {
      envelope = JSON.parse(data);
    } catch {
      return;
    }
    if (typeof envelope.seq === "number") {
      if (envelope.seq <= this.last) return;
      this.last = envelope.seq;
    }
    this.onEnvelope(envelope);
  }

  close() {
    this.closed = true;
    if (this.source) this.source.close();
  }
}
