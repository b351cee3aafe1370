// The differential test's driver (TestReferenceDifferential): one scripted
// session, run through the TypeScript SDK's client against the reference
// memory server (@modelcontextprotocol/server-memory) and against `memctl
// mcp --tools reference`. It prints what each answered, as JSON; the Go
// test compares them field by field.
//
// Environment: STEPS (a JSON file: [{tool, args, follow}] or
// {resource: uri}), REFERENCE_JS (the reference's dist/index.js),
// MEMORY_FILE (its store), MEMCTL_BIN, MEMCTL_DB.
import { readFileSync } from "node:fs";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

async function connect(command, args, env) {
  const transport = new StdioClientTransport({ command, args, env: { PATH: process.env.PATH, ...env }, stderr: "pipe" });
  const client = new Client({ name: "memctl-differential", version: "1.0.0" });
  await client.connect(transport);
  return client;
}

async function call(client, tool, args) {
  try {
    const r = await client.callTool({ name: tool, arguments: args });
    return { isError: !!r.isError, text: r.content?.[0]?.text ?? null, blocks: r.content?.length ?? 0, structured: r.structuredContent ?? null };
  } catch (e) {
    return { protocolError: e.message };
  }
}

// follow calls a read tool again with each nextCursor until the answer is
// whole, and merges the parts (the reference never cuts an answer).
async function follow(client, tool, args) {
  const first = await call(client, tool, args);
  const parts = [first];
  let last = first;
  while (last.structured && last.structured.nextCursor && parts.length < 100) {
    last = await call(client, tool, { ...args, cursor: last.structured.nextCursor });
    parts.push(last);
  }
  if (parts.length === 1) return first;
  const merged = { entities: [], relations: [] };
  for (const p of parts) {
    merged.entities.push(...(p.structured?.entities ?? []));
    merged.relations.push(...(p.structured?.relations ?? []));
  }
  return { isError: parts.some(p => p.isError), text: null, blocks: 1, structured: merged, pages: parts.length, texts: parts.map(p => p.text) };
}

const steps = JSON.parse(readFileSync(process.env.STEPS, "utf8"));
const ref = await connect("node", [process.env.REFERENCE_JS], { MEMORY_FILE_PATH: process.env.MEMORY_FILE });
const mem = await connect(process.env.MEMCTL_BIN, ["--db", process.env.MEMCTL_DB, "mcp", "--tools", "reference"], { MEMCTL_NOSYNC: "1" });
const out = { server: { ref: ref.getServerVersion(), mem: mem.getServerVersion() }, tools: {}, resources: {}, results: [] };
out.tools.ref = (await ref.listTools()).tools;
out.tools.mem = (await mem.listTools()).tools;
out.resources.ref = (await ref.listResources()).resources;
out.resources.mem = (await mem.listResources()).resources;
for (const s of steps) {
  if (s.resource) {
    const read = async c => {
      try {
        const r = await c.readResource({ uri: s.resource });
        return { text: r.contents[0].text, mimeType: r.contents[0].mimeType, uri: r.contents[0].uri };
      } catch (e) {
        return { protocolError: e.message };
      }
    };
    out.results.push({ ref: await read(ref), mem: await read(mem) });
    continue;
  }
  const run = s.follow ? follow : call;
  out.results.push({ ref: await call(ref, s.tool, s.args), mem: await run(mem, s.tool, s.args) });
}
await ref.close();
await mem.close();
console.log(JSON.stringify(out));
