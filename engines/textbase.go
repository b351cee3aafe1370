package engines

// The text index built from an earlier one (BuildTextIndexFrom): the
// documents a TextIndexBase names keep their lengths and postings,
// renumbered; the others are tokenized. Both lists of a term's postings
// are in document order (the base's documents keep their order: both
// graphs order nodes by id), so a term's postings are one merge.

import (
	"strings"

	"github.com/memctl/memctl/snapshot"
)

// takeDocs checks b against a graph of n nodes, copies the lengths of the
// documents it names into x and returns the base's document → new
// document map (NoBaseDoc: dropped); nil when b is nil.
func takeDocs(x *snapshot.TextIndex, n int, b *TextIndexBase) ([]uint32, error) {
	if b == nil {
		return nil, nil
	}
	if len(b.Same) != n || b.Index == nil {
		return nil, invalidf("text index base names %d nodes, the graph has %d", len(b.Same), n)
	}
	renumber := make([]uint32, len(b.Index.DocLens))
	for i := range renumber {
		renumber[i] = NoBaseDoc
	}
	last := -1
	for v, u := range b.Same {
		if u == NoBaseDoc {
			continue
		}
		if int(u) >= len(renumber) || int(u) <= last {
			return nil, invalidf("text index base: node %d takes document %d (of %d, after %d)", v, u, len(renumber), last)
		}
		last = int(u)
		renumber[u] = uint32(v)
		x.DocLens[v] = b.Index.DocLens[u]
	}
	return renumber, nil
}

// mergeTerms writes x's terms and postings: the new documents' (list,
// sorted, with their postings in post) merged with base's terms and their
// postings renumbered (documents renumber drops are left out, and so is
// a term left with none).
func mergeTerms(x *snapshot.TextIndex, list []string, post map[string][]posting, base *snapshot.TextIndex, renumber []uint32) error {
	nb := 0
	if base != nil {
		nb = base.NumTerms()
	}
	x.TermOffsets = make([]uint64, 0, max(len(list), nb)+1)
	x.PostOffsets = make([]uint64, 0, max(len(list), nb)+1)
	if base != nil { // about the base's sizes, with room for the new documents': one allocation each
		fresh := 0
		for _, ps := range post {
			fresh += len(ps)
		}
		x.TermBytes = make([]byte, 0, len(base.TermBytes)+len(base.TermBytes)/16+64)
		x.PostDocs = make([]uint32, 0, len(base.PostDocs)+fresh)
		x.PostTFs = make([]uint32, 0, len(base.PostDocs)+fresh)
	}
	var docs, tfs []uint32 // the base term's postings, renumbered
	i, bt := 0, 0
	for i < len(list) || bt < nb {
		var term string
		var fresh []posting
		docs, tfs = docs[:0], tfs[:0]
		c := 1 // which list's term comes first: <0 the new one's, >0 the base's, 0 both
		var bterm string
		if bt < nb {
			var err error
			if bterm, err = base.Term(uint32(bt)); err != nil {
				return err
			}
		}
		switch {
		case bt >= nb:
			c = -1
		case i < len(list):
			c = strings.Compare(list[i], bterm)
		}
		if c <= 0 {
			term, fresh = list[i], post[list[i]]
			i++
		}
		if c >= 0 {
			term = bterm
			bd, btf, err := base.Postings(uint32(bt))
			if err != nil {
				return err
			}
			for k, d := range bd {
				if int(d) < len(renumber) && renumber[d] != NoBaseDoc {
					docs, tfs = append(docs, renumber[d]), append(tfs, btf[k])
				}
			}
			bt++
		}
		if len(fresh) == 0 && len(docs) == 0 {
			continue
		}
		x.TermOffsets = append(x.TermOffsets, uint64(len(x.TermBytes)))
		x.TermBytes = append(x.TermBytes, term...)
		x.PostOffsets = append(x.PostOffsets, uint64(len(x.PostDocs)))
		k := 0
		for _, p := range fresh { // both in document order: merged
			for k < len(docs) && docs[k] < p.doc {
				x.PostDocs, x.PostTFs = append(x.PostDocs, docs[k]), append(x.PostTFs, tfs[k])
				k++
			}
			x.PostDocs, x.PostTFs = append(x.PostDocs, p.doc), append(x.PostTFs, p.tf)
		}
		x.PostDocs, x.PostTFs = append(x.PostDocs, docs[k:]...), append(x.PostTFs, tfs[k:]...)
	}
	x.TermOffsets = append(x.TermOffsets, uint64(len(x.TermBytes)))
	x.PostOffsets = append(x.PostOffsets, uint64(len(x.PostDocs)))
	return nil
}
