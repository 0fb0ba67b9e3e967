// The ACP TypeScript SDK 2.4.0's own AcpServer (Streamable HTTP and WebSocket at /acp) serving
// a trivial agent built with the SDK, on 127.0.0.1: node server.mjs
// Prints {"port": N} once it listens. The agent: "hello" says hello; "permission" asks the
// client and says the option chosen; "hang" says "Thinking" and waits for session/cancel;
// session/load replays the session's first exchange.
import http from "node:http";
import { agent } from "@agentclientprotocol/sdk";
import { AcpServer } from "@agentclientprotocol/sdk/experimental/server";
import { createNodeHttpHandler, createNodeWebSocketUpgradeHandler } from "@agentclientprotocol/sdk/experimental/node";
import { WebSocketServer } from "ws";

let sessions = 0;
const cancels = new Map();
const say = (client, sessionId, kind, text) =>
  client.notify("session/update", { sessionId, update: { sessionUpdate: kind, content: { type: "text", text } } });

const app = agent()
  .onRequest("initialize", () => ({
    protocolVersion: 1,
    agentCapabilities: { loadSession: true },
    agentInfo: { name: "ts-sdk-agent", version: "2.4.0" },
  }))
  .onRequest("session/new", () => ({ sessionId: `ts${sessions++}` }))
  .onRequest("session/load", async ({ params, client }) => {
    await say(client, params.sessionId, "user_message_chunk", "hello");
    await say(client, params.sessionId, "agent_message_chunk", "Hello there.");
    return {};
  })
  .onRequest("session/prompt", async ({ params, client }) => {
    const text = params.prompt[0].text;
    const sessionId = params.sessionId;
    if (text === "permission") {
      const answer = await client.request("session/request_permission", {
        sessionId,
        toolCall: { toolCallId: "t1", title: "write a", kind: "edit" },
        options: [
          { optionId: "yes", name: "Allow", kind: "allow_once" },
          { optionId: "no", name: "Reject", kind: "reject_once" },
        ],
      });
      await say(client, sessionId, "agent_message_chunk", answer.outcome.optionId ?? answer.outcome.outcome);
      return { stopReason: "end_turn" };
    }
    if (text === "hang") {
      const cancelled = new Promise((resolve) => cancels.set(sessionId, resolve));
      await say(client, sessionId, "agent_message_chunk", "Thinking");
      await cancelled;
      return { stopReason: "cancelled" };
    }
    await say(client, sessionId, "agent_message_chunk", "Hello there.");
    return { stopReason: "end_turn" };
  })
  .onNotification("session/cancel", ({ params }) => {
    cancels.get(params.sessionId)?.();
  });

const server = new AcpServer({ agent: app });
const handle = createNodeHttpHandler(server);
const httpServer = http.createServer((req, res) => {
  if (new URL(req.url, "http://x").pathname !== "/acp") {
    res.writeHead(404).end();
    return;
  }
  handle(req, res);
});
httpServer.on("upgrade", createNodeWebSocketUpgradeHandler(server, new WebSocketServer({ noServer: true })));
httpServer.listen(0, "127.0.0.1", () => {
  process.stdout.write(JSON.stringify({ port: httpServer.address().port }) + "\n");
});
process.stdin.on("end", () => process.exit(0));
process.stdin.resume();
