package lmdbstore

import (
	"encoding/json"
	"errors"
	"testing"
)

// TestCanonicalPayload pins the stored form (SPEC §2 "Payloads") on inputs
// whose canonical form is written out by hand.
func TestCanonicalPayload(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`{"k": "v"}`, `{"k":"v"}`},
		{` { "b" : 1 , "a" : [ 1 , 2.50 , -0 , 1e3 ] } `, `{"a":[1,2.50,-0,1e3],"b":1}`},
		{`{"b":{"d":null,"c":true},"a":false}`, `{"a":false,"b":{"c":true,"d":null}}`},
		{`"a\u0041\/<&>"`, `"aA/<&>"`},
		{`"line\u2028sep"`, `"line\u2028sep"`},
		{`{"é":1,"z":2,"Z":3}`, `{"Z":3,"z":2,"é":1}`},
		{`[]`, `[]`},
		{`{}`, `{}`},
		{`null`, ``},
		{`  null `, ``},
		{``, ``},
	} {
		got, err := canonicalPayload(json.RawMessage(tc.in), false)
		if err != nil || string(got) != tc.want {
			t.Errorf("canonicalPayload(%s) = %s, %v; want %s", tc.in, got, err, tc.want)
		}
	}
	for _, bad := range []string{`{"a":1,"a":2}`, `{"a":1} x`, `[1,]`, `{`, `nul`, `{"a":1}{}`} {
		if _, err := canonicalPayload(json.RawMessage(bad), false); !errors.Is(err, ErrInvalid) {
			t.Errorf("canonicalPayload(%s): %v, want ErrInvalid", bad, err)
		}
	}
	if _, err := canonicalPayload(json.RawMessage(`null`), true); !errors.Is(err, ErrInvalid) {
		t.Errorf("a required payload of null: %v, want ErrInvalid", err)
	}
}

// TestNoChangeNoRevision: a put that leaves its record as it is commits no
// revision, for each kind of record, whatever the spelling of the payload
// and whatever the provenance; a transaction mixing no-op puts with one
// change commits one revision holding only the change.
func TestNoChangeNoRevision(t *testing.T) {
	s := newStore(t, Options{})
	mustUpdate(t, s, WriteMeta{RunID: "r1"}, func(tx *WriteTxn) error {
		if err := tx.PutNode(NodePut{Key: "file:a", Payload: json.RawMessage(`{"x":1,"y":2}`)}); err != nil {
			return err
		}
		if err := tx.PutEdge(EdgePut{Src: "file:a", Rel: "calls", Dst: "file:b", Weight: 0.5, Payload: json.RawMessage(`[1]`)}); err != nil {
			return err
		}
		return tx.PutKV(KVPut{Scope: "repo", Namespace: "d", Key: "k", Payload: json.RawMessage(`"v"`)})
	})
	for name, op := range map[string]func(tx *WriteTxn) error{
		"node": func(tx *WriteTxn) error {
			return tx.PutNode(NodePut{Key: "file:a", Payload: json.RawMessage(`{ "y":2, "x":1 }`), RunID: "other"})
		},
		"edge": func(tx *WriteTxn) error {
			return tx.PutEdge(EdgePut{Src: "file:a", Rel: "calls", Dst: "file:b", Weight: 0.5, Payload: json.RawMessage(` [ 1 ] `)})
		},
		"kv": func(tx *WriteTxn) error {
			return tx.PutKV(KVPut{Scope: "repo", Namespace: "d", Key: "k", Payload: json.RawMessage(` "v" `), TaskID: "t9"})
		},
	} {
		c, err := s.Update(WriteMeta{RunID: "r2"}, op)
		if err != nil || c.Rev != 0 {
			t.Errorf("%s put unchanged: rev %d, %v; want rev 0 (no change)", name, c.Rev, err)
		}
	}
	c, err := s.Update(WriteMeta{RunID: "r3"}, func(tx *WriteTxn) error {
		if err := tx.PutNode(NodePut{Key: "file:a", Payload: json.RawMessage(`{"x":1,"y":2}`)}); err != nil {
			return err
		}
		if err := tx.PutEdge(EdgePut{Src: "file:a", Rel: "calls", Dst: "file:b", Weight: 0.75, Payload: json.RawMessage(`[1]`)}); err != nil {
			return err
		}
		return tx.PutKV(KVPut{Scope: "repo", Namespace: "d", Key: "k", Payload: json.RawMessage(`"v"`)})
	})
	if err != nil || c.Rev != 2 || c.Ops != 1 {
		t.Fatalf("mixed transaction: %+v, %v; want rev 2 with 1 operation", c, err)
	}
	var ops []Op
	if err := s.View(func(r *ReadTxn) error {
		return r.DiffSince(AtRevision(1), DiffFilter{}, func(op Op) error { ops = append(ops, op); return nil })
	}); err != nil {
		t.Fatal(err)
	}
	if len(ops) != 1 || ops[0].Kind != OpPutEdge || ops[0].Weight != 0.75 {
		t.Errorf("diff since 1: %+v; want the one edge change", ops)
	}
	// A delete then the same put is a change (the record comes back).
	c, err = s.Update(WriteMeta{}, func(tx *WriteTxn) error {
		if err := tx.DeleteKV("repo", "d", "k"); err != nil {
			return err
		}
		return tx.PutKV(KVPut{Scope: "repo", Namespace: "d", Key: "k", Payload: json.RawMessage(`"v"`)})
	})
	if err != nil || c.Rev != 3 {
		t.Errorf("delete then put: %+v, %v; want rev 3", c, err)
	}
}
