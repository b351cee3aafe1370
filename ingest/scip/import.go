package scip

import (
	"encoding/json"

	"github.com/memctl/memctl/ingest"
	"github.com/memctl/memctl/lmdbstore"
)

// Summary is what an import read and wrote (SPEC.md §9.7, `--json`).
type Summary struct {
	Index        string  `json:"index"`
	Tool         string  `json:"tool"`
	ToolVersion  string  `json:"tool_version"`
	Documents    int     `json:"documents"`
	Symbols      int     `json:"symbols"`
	Nodes        int     `json:"nodes"`
	Edges        int     `json:"edges"`
	Rev          uint64  `json:"rev"`
	NodesPut     int     `json:"nodes_put"`
	NodesDeleted int     `json:"nodes_deleted"`
	EdgesPut     int     `json:"edges_put"`
	EdgesDeleted int     `json:"edges_deleted"`
	Seconds      float64 `json:"seconds"`
}

// Owns selects the share of an indexer's imports: the nodes whose payload
// has "indexer": tool, and the node IngestKey(tool).
func Owns(tool string) func(lmdbstore.Node) bool {
	return func(n lmdbstore.Node) bool {
		if n.Key == IngestKey(tool) {
			return true
		}
		if len(n.Payload) == 0 || n.Payload[0] != '{' {
			return false
		}
		var p struct {
			Indexer *string `json:"indexer"`
		}
		return json.Unmarshal(n.Payload, &p) == nil && p.Indexer != nil && *p.Indexer == tool
	}
}

// Import loads a SCIP index and makes the store's share of its indexer
// equal to the index's graph, as one revision (none when nothing
// differs). On any error the store is unchanged.
func Import(s *lmdbstore.Store, file string, meta lmdbstore.WriteMeta, progress func(ingest.Progress)) (Summary, ingest.WriteStats, error) {
	out := Summary{Index: file}
	ix, err := Load(file)
	if err != nil {
		return out, ingest.WriteStats{}, err
	}
	g := Graph(ix)
	out.Tool, out.ToolVersion, out.Documents = ix.Tool, ix.ToolVersion, len(ix.Documents)
	out.Nodes, out.Edges = g.NumNodes(), g.NumEdges()
	g.EachNode(func(n ingest.Node) {
		if n.Type == ingest.TypeSymbol {
			out.Symbols++
		}
	})
	stats, err := ingest.WriteShare(s, g, Owns(ix.Tool), meta, progress)
	if err != nil {
		return out, stats, err
	}
	out.Rev = uint64(stats.Commit.Rev)
	out.NodesPut, out.NodesDeleted = stats.NodesPut, stats.NodesDeleted
	out.EdgesPut, out.EdgesDeleted = stats.EdgesPut, stats.EdgesDeleted
	return out, stats, nil
}
