// A call to execute_go_code from the TypeScript SDK's own client (the one Claude Desktop, VS Code
// and MCP Inspector are built on), for tests/test_serve_timeouts.py.
//   node tests/ts_client.mjs SDK_DIR URL TOKEN CODE TIMEOUT_MS PROGRESS(0|1)
// Prints one JSON line: {"ok": true, "text": ..., "progress": [...]} or {"ok": false, "code": ..., "error": ...}.
import { pathToFileURL } from "node:url";

const [sdk, url, token, code, timeoutMs, withProgress] = process.argv.slice(2);
const load = (p) => import(pathToFileURL(`${sdk}/dist/esm/${p}`).href);
const { Client } = await load("client/index.js");
const { StreamableHTTPClientTransport } = await load("client/streamableHttp.js");

const client = new Client({ name: "gocode-test-ts-client", version: "1.0.0" });
const transport = new StreamableHTTPClientTransport(new URL(url), {
  requestInit: { headers: { Authorization: `Bearer ${token}` } },
});
await client.connect(transport);
const progress = [];
const options = { timeout: Number(timeoutMs) };
if (withProgress === "1") {
  options.onprogress = (p) => progress.push({ progress: p.progress, message: p.message });
  options.resetTimeoutOnProgress = true;
}
let out;
try {
  const r = await client.callTool({ name: "execute_go_code", arguments: { code } }, undefined, options);
  out = { ok: !r.isError, text: r.content.map((c) => c.text ?? "").join(""), progress };
} catch (e) {
  out = { ok: false, code: e.code ?? null, error: String(e.message ?? e), progress };
}
console.log(JSON.stringify(out));
await client.close();
process.exit(0);
