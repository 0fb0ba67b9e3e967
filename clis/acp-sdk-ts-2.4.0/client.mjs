// The ACP TypeScript SDK 2.4.0's own client through the seven
// steps against an ACP endpoint: node client.mjs URL ws|http CWD
// Prints one JSON line per step: {"step": ..., ...what it saw} (or {"step", "error"}).
import { client } from "@agentclientprotocol/sdk";
import { createHttpStream } from "@agentclientprotocol/sdk/experimental/http-client";
import { createWebSocketStream } from "@agentclientprotocol/sdk/experimental/ws-client";

const [url, transport, cwd] = process.argv.slice(2);
const seen = { updates: [], asked: [] };

function app() {
  return client()
    .onNotification("session/update", ({ params }) => {
      const update = params.update;
      const text = update.content && update.content.type === "text" ? update.content.text : null;
      seen.updates.push([update.sessionUpdate, text]);
    })
    .onRequest("session/request_permission", ({ params }) => {
      seen.asked.push(params.toolCall.toolCallId);
      const allow = params.options.find((o) => o.kind === "allow_once") ?? params.options[0];
      return { outcome: { outcome: "selected", optionId: allow.optionId } };
    });
}

function open() {
  const stream = transport === "ws" ? createWebSocketStream(url) : createHttpStream(url);
  return app().connect(stream);
}

function out(step, fields) {
  process.stdout.write(JSON.stringify({ step, ...fields }) + "\n");
}

async function step(name, run) {
  seen.updates = [];
  seen.asked = [];
  try {
    const fields = await run();
    out(name, { ...fields, updates: seen.updates, asked: seen.asked });
  } catch (error) {
    out(name, { error: String(error && error.message ? error.message : error) });
    process.exit(1);
  }
}

const prompt = (agent, sessionId, text) =>
  agent.request("session/prompt", { sessionId, prompt: [{ type: "text", text }] });

const first = open();
let sessionId;
await step("initialize", async () => {
  const init = await first.agent.request("initialize", { protocolVersion: 1, clientCapabilities: {} });
  return { protocolVersion: init.protocolVersion, loadSession: !!init.agentCapabilities?.loadSession };
});
await step("session/new", async () => {
  sessionId = (await first.agent.request("session/new", { cwd, mcpServers: [] })).sessionId;
  return { sessionId };
});
await step("prompt", async () => ({ stopReason: (await prompt(first.agent, sessionId, "hello")).stopReason }));
await step("permission", async () => ({ stopReason: (await prompt(first.agent, sessionId, "permission")).stopReason }));
await step("cancel", async () => {
  const answer = prompt(first.agent, sessionId, "hang");
  while (!seen.updates.length) await new Promise((resolve) => setImmediate(resolve));
  await first.agent.notify("session/cancel", { sessionId });
  return { stopReason: (await answer).stopReason };
});
first.close();
const second = open();
await step("session/load", async () => {
  await second.agent.request("initialize", { protocolVersion: 1, clientCapabilities: {} });
  await second.agent.request("session/load", { sessionId, cwd, mcpServers: [] });
  return {};
});
await step("prompt after load", async () => ({ stopReason: (await prompt(second.agent, sessionId, "hello")).stopReason }));
second.close();
process.exit(0);
