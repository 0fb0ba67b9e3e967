// Gemini CLI's own argument parsing, for tests/e2e/test_gemini_extra_args_yargs.py: reads
// argument lists (one JSON array a line) on stdin and writes, one JSON object a line, what the
// CLI's parseArguments made of each: the keys gemwire owns that it set, or the exit status
// it asked for (help, version, a parse error). Usage: node gemini_parser.mjs MODULE, where
// MODULE exports parseArguments (dist/src/config/config.js, or 0.61's patched bundle chunk).
import readline from "node:readline";
import { pathToFileURL } from "node:url";

const { parseArguments } = await import(pathToFileURL(process.argv[2]).href);

class Exit extends Error {
  constructor(code) {
    super(`exit ${code}`);
    this.code = code ?? 0;
  }
}
process.exit = (code) => {
  throw new Exit(code);
};
// What yargs prints (help, version, errors) goes to stderr: stdout carries the answers.
const answer = process.stdout.write.bind(process.stdout);
process.stdout.write = process.stderr.write.bind(process.stderr);
console.log = console.error;
console.info = console.error;

const OWNED = [
  "query", "prompt", "promptInteractive", "outputFormat", "acp", "experimentalAcp", "help",
  "version", "listExtensions", "listSessions", "deleteSession", "resume", "sessionId",
  "sessionFile", "isCommand",
];
const SETTINGS = {
  experimental: { worktrees: true, extensionManagement: true },
  skills: { enabled: true },
  hooksConfig: { enabled: true },
};

for await (const line of readline.createInterface({ input: process.stdin })) {
  process.argv = ["node", "gemini", ...JSON.parse(line)];
  let parsed;
  try {
    const argv = await parseArguments(SETTINGS);
    parsed = Object.fromEntries(OWNED.filter((k) => argv[k] !== undefined).map((k) => [k, argv[k]]));
  } catch (error) {
    parsed = { exit: error instanceof Exit ? error.code : String(error) };
  }
  answer(JSON.stringify(parsed) + "\n");
}
