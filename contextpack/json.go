package contextpack

import (
	"encoding/json"
	"strconv"
	"time"

	"github.com/memctl/memctl/records"
)

// PackJSON is the JSON form of a pack (`memctl context --json`, the MCP
// tool): the same items as the Markdown, structured. Field order is the
// JSON order.
type PackJSON struct {
	Rev       uint64          `json:"rev"`
	TS        string          `json:"ts"`
	Budget    int             `json:"budget"`
	Tokens    int             `json:"tokens"`
	Encoding  string          `json:"encoding"`
	Targets   []TargetJSON    `json:"targets"`
	Snapshot  SnapshotJSON    `json:"snapshot"`
	Since     SinceJSON       `json:"since"`
	Applies   []PolicyJSON    `json:"applies"`
	Related   []NeighbourJSON `json:"related"`
	Changed   []ChangeJSON    `json:"changed"`
	Attempted []AttemptJSON   `json:"attempted"`
	Omitted   OmittedJSON     `json:"omitted"`
	Hidden    HiddenJSON      `json:"hidden"`
	// AsOf: set by the surface that refreshed before assembling (SPEC.md
	// §9.10); absent for a store that follows no code tree.
	AsOf *records.AsOf `json:"as_of,omitempty"`
	// Coverage: what the code graph of the pack's targets and related
	// files could not see (SPEC.md §8.7), set by the surface.
	Coverage *records.Coverage `json:"coverage,omitempty"`
}

// Keys are the keys the pack involves: its targets and related items.
func (p *Pack) Keys() []string {
	var out []string
	for _, t := range p.Targets {
		out = append(out, t.Key)
	}
	for _, n := range p.Related {
		out = append(out, n.Key)
	}
	return out
}

type TargetJSON struct {
	Query     string   `json:"query"`
	Key       string   `json:"key"`
	Match     string   `json:"match"`
	Kind      string   `json:"kind"`
	Path      string   `json:"path,omitempty"`
	LineStart int      `json:"line_start,omitempty"`
	LineEnd   int      `json:"line_end,omitempty"`
	Enclosing []string `json:"enclosing"`
}

type SnapshotJSON struct {
	Rev   uint64 `json:"rev"`
	Built bool   `json:"built"`
	File  string `json:"file,omitempty"`
}

type SinceJSON struct {
	Kind  string `json:"kind"`
	Run   string `json:"run,omitempty"`
	Task  string `json:"task,omitempty"`
	Time  string `json:"time,omitempty"`
	Rev   uint64 `json:"rev"`
	Found bool   `json:"found"`
}

// ProvJSON is the provenance every item carries.
type ProvJSON struct {
	Rev   uint64 `json:"rev"`
	TS    string `json:"ts"`
	Scope string `json:"scope"`
	Run   string `json:"run_id"`
	Task  string `json:"task_id"`
}

type PolicyJSON struct {
	Key          string          `json:"key"`
	Kind         string          `json:"kind"`
	Source       string          `json:"source"`
	Via          string          `json:"via"`
	Anchor       string          `json:"anchor,omitempty"`
	Level        string          `json:"level"`
	Text         string          `json:"text,omitempty"`
	Payload      json.RawMessage `json:"payload"`
	SupersededBy string          `json:"superseded_by,omitempty"`
	Expired      bool            `json:"expired,omitempty"`
	Pending      bool            `json:"pending,omitempty"`
	Contradicts  []string        `json:"contradicts,omitempty"`
	ProvJSON
}

type NeighbourJSON struct {
	Key       string      `json:"key"`
	Kind      string      `json:"kind"`
	Score     json.Number `json:"score"`
	Path      string      `json:"path,omitempty"`
	LineStart int         `json:"line_start,omitempty"`
	LineEnd   int         `json:"line_end,omitempty"`
	ProvJSON
}

type ChangeJSON struct {
	Op    string   `json:"op"`
	Key   string   `json:"key"`
	Rel   string   `json:"rel,omitempty"`
	Dir   string   `json:"direction,omitempty"`
	Peers []string `json:"peers,omitempty"`
	Count int      `json:"count,omitempty"`
	ProvJSON
}

type AttemptJSON struct {
	Run     string       `json:"run_id"`
	Task    string       `json:"task_id"`
	Changes []ChangeJSON `json:"ops"`
}

type OmittedJSON struct {
	Applies   int `json:"applies"`
	Related   int `json:"related"`
	Changed   int `json:"changed"`
	Attempted int `json:"attempted"`
}

type HiddenJSON struct {
	Superseded map[string]int `json:"superseded"`
	Expired    map[string]int `json:"expired"`
	Pending    map[string]int `json:"pending"`
}

func jsonTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339Nano)
}

func provJSON(p Provenance) ProvJSON {
	return ProvJSON{Rev: uint64(p.Rev), TS: jsonTime(p.TS), Scope: p.Scope, Run: p.Run, Task: p.Task}
}

func changeJSON(c Change) ChangeJSON {
	return ChangeJSON{Op: c.Op, Key: c.Key, Rel: c.Rel, Dir: c.Dir, Peers: c.Peers, Count: c.Count, ProvJSON: provJSON(c.Prov)}
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// JSON returns the pack's JSON form.
func (p *Pack) JSON() PackJSON {
	out := PackJSON{
		Rev: uint64(p.Rev), TS: jsonTime(p.TS), Budget: p.Budget, Tokens: p.Tokens, Encoding: p.Encoding,
		Snapshot: SnapshotJSON{Rev: uint64(p.Snapshot.Rev), Built: p.Snapshot.Built, File: p.Snapshot.Path},
		Since: SinceJSON{Kind: p.Since.Kind.kindName(), Run: p.Since.Run, Task: p.Since.Task,
			Rev: uint64(p.Since.Rev), Found: p.Since.Found},
		Omitted: OmittedJSON{p.Omitted[secApplies], p.Omitted[secRelated], p.Omitted[secChanged], p.Omitted[secAttempted]},
		Hidden:  HiddenJSON{Superseded: nonNilMap(p.Superseded), Expired: nonNilMap(p.Expired), Pending: nonNilMap(p.Pending)},
	}
	if p.Since.Kind == SinceTime {
		out.Since.Time = jsonTime(p.Since.Time)
	}
	for _, t := range p.Targets {
		tj := TargetJSON{Query: t.Query, Key: t.Key, Match: t.Match, Kind: t.Kind, Path: t.Path, LineStart: t.LineStart, LineEnd: t.LineEnd}
		for _, a := range t.Enclosing {
			tj.Enclosing = append(tj.Enclosing, a.Key)
		}
		out.Targets = append(out.Targets, tj)
	}
	out.Targets = nonNil(out.Targets)
	for _, x := range p.Applies {
		payload := x.Payload
		if len(payload) == 0 {
			payload = json.RawMessage("null")
		}
		out.Applies = append(out.Applies, PolicyJSON{Key: x.Key, Kind: x.Kind, Source: x.Source, Via: x.Via, Anchor: x.Anchor,
			Level: x.Level, Text: x.Text, Payload: payload, SupersededBy: x.Status.SupersededBy, Expired: x.Status.Expired, Pending: x.Status.Pending,
			Contradicts: x.Status.Contradicts, ProvJSON: provJSON(x.Prov)})
	}
	out.Applies = nonNil(out.Applies)
	for _, x := range p.Related {
		out.Related = append(out.Related, NeighbourJSON{Key: x.Key, Kind: x.Kind, Score: json.Number(strconv.FormatFloat(x.Score, 'g', -1, 64)),
			Path: x.Path, LineStart: x.LineStart, LineEnd: x.LineEnd, ProvJSON: provJSON(x.Prov)})
	}
	out.Related = nonNil(out.Related)
	for _, x := range p.Changed {
		out.Changed = append(out.Changed, changeJSON(x))
	}
	out.Changed = nonNil(out.Changed)
	for _, at := range p.Attempted {
		aj := AttemptJSON{Run: at.Run, Task: at.Task}
		for _, x := range at.Changes {
			aj.Changes = append(aj.Changes, changeJSON(x))
		}
		out.Attempted = append(out.Attempted, aj)
	}
	out.Attempted = nonNil(out.Attempted)
	return out
}

func nonNilMap(m map[string]int) map[string]int {
	if m == nil {
		return map[string]int{}
	}
	return m
}
