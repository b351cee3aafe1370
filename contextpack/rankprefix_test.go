package contextpack_test

import (
	"encoding/json"
	"math/rand/v2"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/memctl/memctl/bpe"
	"github.com/memctl/memctl/contextpack"
	"github.com/memctl/memctl/enginesnap"
	"github.com/memctl/memctl/lmdbstore"
)

// TestRankPrefixPlacesAsFullTopK: on random repositories, packs whose
// Related section was placed from the shorter rankings ranked first (cut
// short of the limit, so that placing often runs past the end of either
// ranking and ranks again, and with the default slack) equal those placed
// from the full top-k ranked at once, for every file and symbol target at
// a small and the default budget: Related, what was left out and the
// Markdown, byte for byte; and each pack's token count is the Markdown's.
func TestRankPrefixPlacesAsFullTopK(t *testing.T) {
	compared := 0
	enc := bpe.O200kBase()
	var tight *contextpack.Assembler
	retries := 0
	for seed := range uint64(10) {
		rng := rand.New(rand.NewPCG(seed, 29))
		s, files, syms, _ := randomRepo(t, rng)
		snaps := enginesnap.New(s, enginesnap.Options{})
		full := contextpack.New(s, contextpack.Options{Snapshots: snaps})
		contextpack.SetRankFull(full)
		tight = contextpack.New(s, contextpack.Options{Snapshots: snaps})
		contextpack.SetRankSlack(tight, -int(seed%4)*6)
		def := contextpack.New(s, contextpack.Options{Snapshots: snaps})
		targets := append([]string(nil), files...)
		targets = append(targets, syms...)
		check := func(stage string) {
			t.Helper()
			for _, target := range targets {
				for _, budget := range []int{240, 0} {
					req := contextpack.Request{Targets: []string{target}, Budget: budget, ValidAt: now}
					want := assemble(t, full, req)
					for name, a := range map[string]*contextpack.Assembler{"short": tight, "default": def} {
						got := assemble(t, a, req)
						if d := cmp.Diff(want.Related, got.Related); d != "" {
							t.Fatalf("seed %d %s, %s, budget %d, %s: Related differs (-full top-k +prefix first):\n%s", seed, stage, target, budget, name, d)
						}
						if n := enc.Count(got.Markdown); n != got.Tokens || got.Tokens > want.Budget {
							t.Fatalf("seed %d %s, %s, budget %d, %s: %d tokens, the pack says %d", seed, stage, target, budget, name, n, got.Tokens)
						}
						if want.Omitted != got.Omitted || want.Markdown != got.Markdown {
							t.Fatalf("seed %d %s, %s, budget %d, %s: Markdown differs:\n%s\n---\n%s", seed, stage, target, budget, name, want.Markdown, got.Markdown)
						}
					}
					compared += len(want.Related)
				}
			}
		}
		check("as written")
		// Supersede most files: they stay in the engine snapshot (§12.5)
		// and in the files-only ranking, but place nothing, so placing
		// reads that ranking further than the mixed one.
		_, err := s.Update(lmdbstore.WriteMeta{RunID: "r2"}, func(tx *lmdbstore.WriteTxn) error {
			for i, f := range files {
				if i%4 == 0 {
					continue
				}
				if err := tx.PutNode(lmdbstore.NodePut{Key: "file:" + f + ".v2", Payload: json.RawMessage(`{}`)}); err != nil {
					return err
				}
				if err := tx.Supersede("file:"+f, "file:"+f+".v2"); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		check("after supersedes")
		retries += contextpack.RankRetries(tight)
		full.Close()
		tight.Close()
		def.Close()
		snaps.Close()
	}
	t.Logf("%d related items compared; %d packs ranked again to the full top-k", compared, retries)
	if compared < 1000 || retries == 0 {
		t.Errorf("%d related items compared and %d packs ranked again: too few to show the prefix places as the full top-k", compared, retries)
	}
}
