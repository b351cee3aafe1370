// A real TypeScript MCP client (@modelcontextprotocol/sdk) starting the
// server exactly as the configuration `memctl setup` wrote says: command
// and args read from the file ($MEMCTL_CONFIG, member $MEMCTL_CONFIG_KEY).
// Run by TestSetupNodeClient; prints "client errors: N" last.
import { readFileSync } from "node:fs";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const config = JSON.parse(readFileSync(process.env.MEMCTL_CONFIG, "utf8"));
const server = config[process.env.MEMCTL_CONFIG_KEY].memctl;
const transport = new StdioClientTransport({
  command: server.command,
  args: server.args,
  env: { MEMCTL_NOSYNC: "1", PATH: process.env.PATH },
  stderr: "inherit",
});
const client = new Client({ name: "setup-check", version: "1.0.0" });
await client.connect(transport);
let failures = 0;
const { tools } = await client.listTools();
const names = tools.map(t => t.name);
console.log("tools:", names.join(" "));
for (const want of ["context", "ingest"]) {
  if (!names.includes(want)) {
    failures++;
    console.log("CLIENT ERROR tools/list lacks", want);
  }
}
async function call(name, args) {
  try {
    const r = await client.callTool({ name, arguments: args });
    const text = r.content.map(c => c.text).join("\n");
    if (r.isError) {
      failures++;
      console.log(name, "CLIENT ERROR tool error:", text.slice(0, 300));
    } else {
      console.log(name, "->", text.slice(0, 2000));
    }
  } catch (e) {
    failures++;
    console.log(name, "CLIENT ERROR", e.message.slice(0, 300));
  }
}
await call("ingest", { dir: process.env.MEMCTL_TREE });
await call("context", { targets: [process.env.MEMCTL_TARGET], budget: 400 });
await client.close();
console.log("client errors:", failures);
process.exit(failures === 0 ? 0 : 1);
