// A real TypeScript MCP client (@modelcontextprotocol/sdk, which validates
// every tool's schemas on tools/list and each result's structuredContent
// against its outputSchema) calling every memctl tool once. Run by
// TestNodeClient when MEMCTL_TEST_NODE_MODULES names a node_modules
// directory holding the SDK (npm install @modelcontextprotocol/sdk@1.32.2).
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const transport = new StdioClientTransport({
  command: process.env.MEMCTL_BIN,
  args: ["--db", process.env.MEMCTL_DB, "mcp", "--tools", "all", "--scope", "proj"],
  env: { MEMCTL_NOSYNC: "1", PATH: process.env.PATH },
  stderr: "inherit",
});
const client = new Client({ name: "node-check", version: "1.0.0" });
await client.connect(transport);
const { tools } = await client.listTools();
console.log("tools:", tools.length, tools.map(t => t.name).join(" "));
let failures = 0;
const called = new Set();
async function call(name, args) {
  called.add(name);
  try {
    const r = await client.callTool({ name, arguments: args });
    console.log(name, r.isError ? "TOOL ERROR " + r.content[0].text : JSON.stringify(r.structuredContent).slice(0, 160));
    return r;
  } catch (e) {
    failures++;
    console.log(name, "CLIENT ERROR", e.message.slice(0, 300));
  }
}
// Every tool, with valid arguments: the TS SDK validates structuredContent against outputSchema.
await call("create_entities", { entities: [{ name: "Alice", entityType: "person", observations: ["likes Go"] }, { name: "Bob", entityType: "person", observations: [] }] });
await call("create_relations", { relations: [{ from: "Alice", to: "Bob", relationType: "mentors" }] });
await call("add_observations", { observations: [{ entityName: "Bob", contents: ["new hire"] }] });
await call("read_graph", {});
await call("search_nodes", { query: "go" });
await call("open_nodes", { names: ["Alice"] });
await call("put_node", { key: "file:a.go", payload: { lang: "go" } });
await call("put_edge", { src: "file:a.go", rel: "defines", dst: "sym:a.F", weight: 0.5 });
await call("put_kv", { namespace: "decisions", key: "errors", payload: { rule: "wrap" } });
await call("batch", { ops: [{ op: "put_node", key: "doc:x" }, { op: "put_edge", src: "doc:x", rel: "references", dst: "file:a.go" }] });
await call("get_node", { key: "file:a.go" });
await call("get_out", { key: "file:a.go" });
await call("get_in", { key: "file:a.go" });
await call("get_kv", { namespace: "decisions", key: "errors" });
await call("list_kv", { namespace: "decisions" });
await call("history", { key: "file:a.go" });
await call("diff_since", { since_rev: 0, limit: 3 });
await call("list_relations", {});
await call("add_relation", { name: "owns", role: "memory" });
await call("related", { queries: ["file:a.go"] });
await call("impact", { key: "sym:a.F" });
await call("pagerank", { top: 3 });
await call("search", { queries: ["a.go"] });
await call("resonate", { queries: ["file:a.go"], sweep: true });
await call("stats", {});
await call("check", {});
await call("delete_observations", { deletions: [{ entityName: "Bob", observations: ["new hire"] }] });
await call("delete_relations", { relations: [{ from: "Alice", to: "Bob", relationType: "mentors" }] });
await call("delete_entities", { entityNames: ["Bob"] });
await call("delete_edge", { src: "file:a.go", rel: "defines", dst: "sym:a.F" });
await call("delete_kv", { namespace: "decisions", key: "errors" });
await call("delete_node", { key: "doc:x" });
await call("get_node", { key: "nope" });
await call("put_node", { key: "decision:old", valid_until: "2030-01-01T00:00:00Z" });
await call("put_node", { key: "decision:new" });
await call("supersede", { old: "decision:old", new: "decision:new" });
await call("context", { targets: ["file:a.go"], budget: 300 });
await call("ingest", { dir: process.env.MEMCTL_TREE, languages: ["python"] });
await call("feedback", { target: "file:a.go", useful: ["sym:a.F"] });
// search by what memory says (structured hits, validated like every result)
await call("search", { query: "wrap errors" });
// Every listed tool was called once: a new tool must be added here.
for (const t of tools) {
  if (!called.has(t.name)) {
    failures++;
    console.log(t.name, "CLIENT ERROR not called by this script");
  }
}
await client.close();
console.log("client errors:", failures);
process.exit(failures === 0 ? 0 : 1);
