package mcpserver

// The reference memory server's data model on memctl's store (SPEC.md
// §10.4). An entity is a node: its name is the node's canonical key, its
// entityType the node's type, its observations live in the node's payload
// under "observations", each with the time and revision it was added:
//
//	{"observations":[{"text":"likes tea","added":"2026-01-02T03:04:05.123Z","rev":12}]}
//
// (other payload members are kept; the store sorts members, SPEC.md §2). A relation is an edge: from →
// to through the relation named after relationType, registered on first
// use. A relationType that is not a valid relation name is mapped to one
// (relationName) and kept verbatim in the edge payload as
// {"relationType": "..."}.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"strings"

	"github.com/memctl/memctl/lmdbstore"
	"github.com/memctl/memctl/records"
)

// Entity is an entity as the reference server's tools take it.
type Entity struct {
	Name         string   `json:"name" jsonschema:"the name of the entity (the node's key)"`
	EntityType   string   `json:"entityType" jsonschema:"the type of the entity"`
	Observations []string `json:"observations" jsonschema:"observation contents associated with the entity"`
}

// EntityRecord is an entity as the tools return it: the reference fields,
// plus when each observation was added and the node's scope and times.
type EntityRecord struct {
	Name             string   `json:"name"`
	EntityType       string   `json:"entityType"`
	Observations     []string `json:"observations"`
	ObservationTimes []string `json:"observationTimes" jsonschema:"when each observation was added (RFC 3339), parallel to observations; empty string when unknown"`
	Scope            string   `json:"scope,omitempty"`
	CreatedAt        string   `json:"createdAt" jsonschema:"commit time of the revision that created the entity"`
	UpdatedAt        string   `json:"updatedAt" jsonschema:"commit time of the revision that wrote this version"`
	Rev              uint64   `json:"rev" jsonschema:"revision that wrote this version"`

	createdRev lmdbstore.Revision // orders entities as the reference lists them
}

// GraphRelation is a relation as the reference server's tools take it.
type GraphRelation struct {
	From         string `json:"from" jsonschema:"the name of the entity where the relation starts"`
	To           string `json:"to" jsonschema:"the name of the entity where the relation ends"`
	RelationType string `json:"relationType" jsonschema:"the type of the relation, in active voice"`
}

// GraphRelationRecord is a relation as the tools return it.
type GraphRelationRecord struct {
	From         string `json:"from"`
	To           string `json:"to"`
	RelationType string `json:"relationType"`
	CreatedAt    string `json:"createdAt,omitempty" jsonschema:"commit time of the revision that created the relation"`
	Rev          uint64 `json:"rev,omitempty" jsonschema:"revision that wrote this version"`

	rel        string             // the relation name relationType maps to
	createdRev lmdbstore.Revision // orders relations as the reference lists them
}

// observation is one element of a payload's "observations".
type observation struct {
	Text  string `json:"text"`
	Added string `json:"added,omitempty"`
	Rev   uint64 `json:"rev,omitempty"`
}

// field is one member of a JSON object, in document order.
type field struct {
	name  string
	value json.RawMessage
}

// objectFields splits a payload into its members, in order. An empty or
// null payload is an empty object; any other non-object is ok=false.
func objectFields(p []byte) (fs []field, ok bool) {
	p = bytes.TrimSpace(p)
	if len(p) == 0 || string(p) == "null" {
		return nil, true
	}
	dec := json.NewDecoder(bytes.NewReader(p))
	tok, err := dec.Token()
	if err != nil || tok != json.Delim('{') {
		return nil, false
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, false
		}
		name, _ := tok.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, false
		}
		fs = append(fs, field{name, v})
	}
	return fs, true
}

// observations reads the observations of a node payload: objects with a
// "text", or plain strings (added unknown). Anything else reads as none.
func observations(p []byte) []observation {
	fs, ok := objectFields(p)
	if !ok {
		return nil
	}
	for _, f := range fs {
		if f.name != "observations" {
			continue
		}
		var raw []json.RawMessage
		if json.Unmarshal(f.value, &raw) != nil {
			return nil
		}
		obs := make([]observation, 0, len(raw))
		for _, r := range raw {
			var o observation
			var s string
			switch {
			case json.Unmarshal(r, &s) == nil:
				obs = append(obs, observation{Text: s})
			case json.Unmarshal(r, &o) == nil:
				obs = append(obs, o)
			}
		}
		return obs
	}
	return nil
}

// withObservations is payload p with its "observations" replaced by obs
// (appended when absent); the other members keep their order and bytes.
func withObservations(key string, p []byte, obs []observation) (json.RawMessage, error) {
	fs, ok := objectFields(p)
	if !ok {
		return nil, fmt.Errorf("%w: entity %q has a payload that is not a JSON object, so it holds no observations", ErrInvalidArgument, key)
	}
	enc, err := json.Marshal(obs)
	if err != nil {
		return nil, err
	}
	replaced := false
	for i := range fs {
		if fs[i].name == "observations" {
			fs[i].value, replaced = enc, true
		}
	}
	if !replaced {
		fs = append(fs, field{"observations", enc})
	}
	var b bytes.Buffer
	b.WriteByte('{')
	for i, f := range fs {
		if i > 0 {
			b.WriteByte(',')
		}
		name, _ := json.Marshal(f.name)
		b.Write(name)
		b.WriteByte(':')
		b.Write(f.value)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// entityRecord is node n as an entity.
func entityRecord(n lmdbstore.Node) EntityRecord {
	obs := observations(n.Payload)
	e := EntityRecord{
		Name: n.Key, EntityType: n.Type, Scope: n.Scope,
		Observations: make([]string, len(obs)), ObservationTimes: make([]string, len(obs)),
		CreatedAt: records.Time(n.CreatedTS), UpdatedAt: records.Time(n.UpdatedTS), Rev: uint64(n.Rev),
		createdRev: n.CreatedRev,
	}
	for i, o := range obs {
		e.Observations[i], e.ObservationTimes[i] = o.Text, o.Added
	}
	return e
}

// maxRelNameLen is the store's limit on relation names (SPEC.md §1).
const maxRelNameLen = 64

// relationName maps a relationType to a relation name (SPEC.md §10.4): a
// valid name ([A-Za-z0-9_.-], 1–64 bytes) is itself; otherwise every run of
// other characters becomes "_", and when that loses more than spacing and
// punctuation (non-ASCII text, an empty result, or more than 64 bytes) the
// name ends in "_" and 8 hex digits of the FNV-1a 32 hash of relationType,
// so different relationTypes stay different relations.
func relationName(t string) (string, error) { // an empty relationType maps to "_811c9dc5"
	var b strings.Builder
	ascii, under := true, false
	for _, r := range t {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '_', r == '.', r == '-':
			b.WriteRune(r)
			under = false
		default:
			if r >= 0x80 {
				ascii = false
			}
			if !under {
				b.WriteByte('_')
				under = true
			}
		}
	}
	name := b.String()
	if name == t && name != "" && len(name) <= maxRelNameLen {
		return name, nil
	}
	if ascii && strings.Trim(name, "_") != "" && len(name) <= maxRelNameLen {
		return name, nil
	}
	h := fnv.New32a()
	h.Write([]byte(t))
	suffix := fmt.Sprintf("_%08x", h.Sum32())
	name = strings.TrimRight(name, "_")
	if len(name) > maxRelNameLen-len(suffix) {
		name = name[:maxRelNameLen-len(suffix)]
	}
	return name + suffix, nil
}

// relationPayload is the edge payload that keeps a relationType the
// relation name does not spell (nil when it does).
func relationPayload(t, name string) json.RawMessage {
	if t == name {
		return nil
	}
	b, _ := json.Marshal(struct {
		RelationType string `json:"relationType"`
	}{t})
	return b
}

// relationType is the relationType an edge stands for: its payload's
// "relationType" when there is one, else the relation name.
func relationType(rel string, payload []byte) string {
	var p struct {
		RelationType *string `json:"relationType"`
	}
	if len(payload) > 0 && json.Unmarshal(payload, &p) == nil && p.RelationType != nil {
		return *p.RelationType
	}
	return rel
}
