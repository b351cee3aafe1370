package contextpack

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/memctl/memctl/freshness"
	"github.com/memctl/memctl/ingest"
	"github.com/memctl/memctl/lmdbstore"
	"github.com/memctl/memctl/records"
	"github.com/memctl/memctl/roles"
)

// policyNamespaces map the kv namespaces whose entries are policies to
// the kind of item they hold.
var policyNamespaces = map[string]string{
	"constraints": "constraint", "constraint": "constraint",
	"decisions": "decision", "decision": "decision",
	"procedures": "procedure", "procedure": "procedure",
}

// kindOrder ranks policy kinds: what binds first.
func kindOrder(kind string) int {
	switch kind {
	case "constraint":
		return 0
	case "decision":
		return 1
	case "procedure":
		return 2
	}
	return 3
}

// nodePolicyKind is the kind of a policy node: its type when that is a
// policy kind, else "policy".
func nodePolicyKind(typ string) string {
	switch typ {
	case "constraint", "decision", "procedure":
		return typ
	}
	return "policy"
}

// appliesResult is the Applies-here section before budgeting.
type appliesResult struct {
	items  []Policy
	hidden hiddenCounts
}

// hiddenCounts counts history left out by default.
type hiddenCounts struct {
	Superseded map[string]int // by kind
	Expired    map[string]int // valid time over
	Pending    map[string]int // valid time not begun
}

func (h *hiddenCounts) add(p Policy) {
	m := &h.Expired
	switch {
	case p.Status.SupersededBy != "":
		m = &h.Superseded
	case p.Status.Pending:
		m = &h.Pending
	}
	if *m == nil {
		*m = map[string]int{}
	}
	(*m)[p.Kind]++
}

// applies gathers the policies that apply to the targets; orphans are the
// store's orphans at the view (freshness.Orphans).
func applies(r *lmdbstore.ReadTxn, targets []Target, at lmdbstore.At, validAt time.Time, all bool, orphans []freshness.Orphan) (appliesResult, error) {
	found := map[string]*Policy{}
	offer := func(p Policy) {
		if old, ok := found[p.Key]; ok && old.Rank <= p.Rank {
			return
		}
		found[p.Key] = &p
	}
	// Policy nodes linked to an anchor.
	for _, t := range targets {
		for _, a := range t.Enclosing {
			for _, rel := range roles.PolicyRelations() {
				es, err := edgesOf(r, a.Key, rel, false, at)
				if err != nil {
					return appliesResult{}, err
				}
				for _, e := range es {
					n, err := r.GetNodeByID(e.Peer, at)
					if isNotFound(err) {
						continue // a deleted node's edge
					}
					if err != nil {
						return appliesResult{}, err
					}
					offer(Policy{
						Key: n.Key, Kind: nodePolicyKind(n.Type), Source: "edge", Via: rel,
						Anchor: a.Key, Level: a.Level, Rank: a.Rank,
						Text: payloadText(n.Payload), Payload: n.Payload,
						Prov: Provenance{Rev: n.Rev, TS: n.UpdatedTS, Scope: n.Scope, Run: n.RunID, Task: n.TaskID},
					})
				}
			}
		}
	}
	// Orphaned memory (SPEC.md §9.8, §12.2): an item whose target was
	// deleted is listed under the nearest enclosing target that still
	// exists, never silently dropped.
	if err := offerOrphans(r, orphans, targets, at, offer); err != nil {
		return appliesResult{}, err
	}
	// kv policies.
	dirScopes := map[string]bool{} // scope → names a live directory
	err := r.ScanKV(at, func(kv lmdbstore.KV) error {
		kind, isPolicy := policyNamespaces[kv.Namespace]
		globs, hasApplies := appliesTo(kv.Payload)
		if !isPolicy && !hasApplies {
			return nil
		}
		if !isPolicy {
			kind = "policy"
		}
		base := Policy{
			Key: KVAddress(kv.Scope, kv.Namespace, kv.Key), Kind: kind, Source: "kv",
			Text: payloadText(kv.Payload), Payload: kv.Payload,
			Prov:  Provenance{Rev: kv.Rev, TS: kv.TS, Scope: kv.Scope, Run: kv.RunID, Task: kv.TaskID},
			Scope: kv.Scope, Namespace: kv.Namespace, KVKey: kv.Key,
		}
		for _, t := range targets {
			if hasApplies {
				for _, g := range globs {
					if a, ok := appliesToMatch(t, g); ok {
						p := base
						p.Via, p.Anchor, p.Level, p.Rank = "applies_to", g, a.Level, a.Rank
						offer(p)
					}
				}
				continue
			}
			d, ok := dirScopes[kv.Scope]
			if !ok {
				if kv.Scope != "" {
					_, live, err := liveNode(r, ingest.DirKey(cleanPath(kv.Scope)), at)
					if err != nil {
						return err
					}
					d = live
				}
				dirScopes[kv.Scope] = d
			}
			p := base
			if d {
				dirKey := ingest.DirKey(cleanPath(kv.Scope))
				a, ok := anchorOf(t, dirKey)
				if !ok {
					continue // a directory that does not enclose the target
				}
				p.Via, p.Anchor, p.Level, p.Rank = "scope", dirKey, a.Level, a.Rank
			} else {
				a := t.Enclosing[len(t.Enclosing)-1]
				p.Via, p.Level, p.Rank = "repository", a.Level, a.Rank
			}
			offer(p)
		}
		return nil
	})
	if err != nil {
		return appliesResult{}, err
	}
	var res appliesResult
	for _, p := range found {
		st, err := itemStatus(r, p.Key, at, validAt)
		if err != nil {
			return appliesResult{}, err
		}
		p.Status = st
		if st.Hidden() && !all {
			res.hidden.add(*p)
			continue
		}
		res.items = append(res.items, *p)
	}
	slices.SortFunc(res.items, func(a, b Policy) int {
		switch {
		case kindOrder(a.Kind) != kindOrder(b.Kind):
			return kindOrder(a.Kind) - kindOrder(b.Kind)
		case a.Rank != b.Rank:
			return a.Rank - b.Rank
		case a.Prov.Rev != b.Prov.Rev:
			if a.Prov.Rev > b.Prov.Rev {
				return -1
			}
			return 1
		}
		return strings.Compare(a.Key, b.Key)
	})
	return res, nil
}

// offerOrphans offers every orphan whose nearest live enclosing key is an
// anchor of a target, as "orphaned": what it applied to and when that was
// deleted.
func offerOrphans(r *lmdbstore.ReadTxn, orphans []freshness.Orphan, targets []Target, at lmdbstore.At, offer func(Policy)) error {
	for _, o := range orphans {
		if o.DeletedRev == 0 || o.Nearest == "" {
			continue // never existed: a missing node, not an orphan
		}
		for _, t := range targets {
			a, ok := anchorOf(t, o.Nearest)
			if !ok {
				continue
			}
			p := Policy{Key: o.Item, Via: "orphaned", Level: a.Level, Rank: a.Rank,
				Anchor: fmt.Sprintf("%s %s, deleted at rev %d", o.Via, o.Target, o.DeletedRev)}
			if scope, ns, key, isKV := lmdbstore.ParseKVAddress(o.Item); isKV {
				kv, err := r.GetKV(scope, ns, key, at)
				if isNotFound(err) {
					continue
				}
				if err != nil {
					return err
				}
				kind, ok := policyNamespaces[ns]
				if !ok {
					kind = "policy"
				}
				p.Kind, p.Source, p.Text, p.Payload = kind, "kv", payloadText(kv.Payload), kv.Payload
				p.Prov = Provenance{Rev: kv.Rev, TS: kv.TS, Scope: kv.Scope, Run: kv.RunID, Task: kv.TaskID}
				p.Scope, p.Namespace, p.KVKey = scope, ns, key
			} else {
				n, err := r.GetNode(o.Item, at)
				if isNotFound(err) {
					continue
				}
				if err != nil {
					return err
				}
				p.Kind, p.Source, p.Text, p.Payload = nodePolicyKind(n.Type), "edge", payloadText(n.Payload), n.Payload
				p.Prov = Provenance{Rev: n.Rev, TS: n.UpdatedTS, Scope: n.Scope, Run: n.RunID, Task: n.TaskID}
			}
			offer(p)
		}
	}
	return nil
}

// anchorOf finds key among t's enclosing anchors.
func anchorOf(t Target, key string) (Anchor, bool) {
	for _, a := range t.Enclosing {
		if a.Key == key {
			return a, true
		}
	}
	return Anchor{}, false
}

// appliesTo reads the applies_to member of a payload object: a string or
// an array of strings (SPEC.md §12.2). ok is false when there is none.
func appliesTo(payload json.RawMessage) ([]string, bool) {
	if len(payload) == 0 || payload[0] != '{' || !bytes.Contains(payload, []byte(`"applies_to"`)) {
		return nil, false
	}
	var v struct {
		AppliesTo json.RawMessage `json:"applies_to"`
	}
	if json.Unmarshal(payload, &v) != nil || len(v.AppliesTo) == 0 {
		return nil, false
	}
	var one string
	if json.Unmarshal(v.AppliesTo, &one) == nil {
		return []string{one}, true
	}
	var many []string
	if json.Unmarshal(v.AppliesTo, &many) == nil {
		return many, true
	}
	return nil, false
}

// appliesToMatch reports whether one applies_to element covers target t,
// and at which anchor: a canonical key (it has a ':') covers t when it is
// one of t's anchors; a path glob covers t when it matches t's path, and
// ranks at the deepest anchor whose path is the glob's literal prefix (the
// segments before the first wildcard).
func appliesToMatch(t Target, g string) (Anchor, bool) {
	if strings.Contains(g, ":") {
		return anchorOf(t, g)
	}
	if t.Path == "" || !matchGlob(g, t.Path) {
		return Anchor{}, false
	}
	var lit []string
	for _, seg := range strings.Split(strings.Trim(g, "/"), "/") {
		if strings.ContainsAny(seg, "*?[\\") {
			break
		}
		lit = append(lit, seg)
	}
	prefix := strings.Join(lit, "/")
	if prefix == t.Path {
		return t.Enclosing[0], true
	}
	best := t.Enclosing[len(t.Enclosing)-1]
	for _, a := range t.Enclosing {
		if a.Level == LevelDirectory && strings.TrimPrefix(a.Key, "dir:") == prefix && a.Rank < best.Rank {
			best = a
		}
	}
	return best, true
}

// textFields are the payload members a policy's short text is taken from,
// in order.
var textFields = []string{"text", "rule", "summary", "decision", "constraint", "procedure", "description", "note", "title"}

// maxText bounds an item's text in bytes (cut at a character boundary,
// with "…").
const maxText = 240

// payloadText is a short text for an item: the first text field of its
// payload object, else the compact payload without applies_to.
func payloadText(p json.RawMessage) string {
	if len(p) == 0 {
		return ""
	}
	var m map[string]json.RawMessage
	if p[0] == '{' && json.Unmarshal(p, &m) == nil {
		for _, f := range textFields {
			var s string
			if raw, ok := m[f]; ok && json.Unmarshal(raw, &s) == nil && s != "" {
				return cut(s, maxText)
			}
		}
		if _, ok := m["applies_to"]; ok {
			delete(m, "applies_to")
			b, _ := records.Marshal(m)
			return cut(string(b), maxText)
		}
	}
	return cut(string(p), maxText)
}

// cut shortens s to at most n bytes at a character boundary, marking the
// cut with "…"; newlines and tabs become spaces.
func cut(s string, n int) string {
	s = strings.Map(func(r rune) rune {
		switch {
		case r == '\n' || r == '\r' || r == '\t':
			return ' '
		case r < 0x20 || r == 0x7f:
			return -1
		}
		return r
	}, s)
	if len(s) <= n {
		return s
	}
	i := n - len("…")
	for i > 0 && !utf8RuneStart(s[i]) {
		i--
	}
	return s[:i] + "…"
}

func utf8RuneStart(b byte) bool { return b&0xC0 != 0x80 }
