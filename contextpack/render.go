package contextpack

// Budgeting and the Markdown rendering (SPEC.md §12.3, §12.4). Items are
// taken in priority order while the document fits the budget: every
// applying policy first, then the ten best related items, the ten newest
// changes, the ten newest attempted operations, then the rest of each of
// those three sections in the same order. An item that does not fit is
// left out and the next (shorter) one is tried. The sections are printed
// in a fixed order whatever was taken; the footer says what was left out
// and what is hidden. The count is checked on the whole final document,
// so the result never exceeds the budget.

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/memctl/memctl/bpe"
	"github.com/memctl/memctl/lmdbstore"
)

// Sections of a pack, in print order.
const (
	secApplies = iota
	secRelated
	secChanged
	secAttempted
	numSections
)

var sectionTitles = [numSections]string{"Applies here", "Related", "Changed since", "Attempted"}
var sectionNames = [numSections]string{"applies", "related", "changed", "attempted"}

// minLineTokens is a lower bound of an item line's o200k count ("- " and
// a key with its provenance): with less room left, no item can fit.
const minLineTokens = 4

// firstTier is how many items of Related, Changed and Attempted come
// before the rest of any of them.
const firstTier = 10

// Pack is an assembled context pack. The exported slices hold what the
// rendering shows (after budgeting); Omitted and Hidden count the rest.
type Pack struct {
	Rev       lmdbstore.Revision
	TS        time.Time
	Budget    int
	Tokens    int    // o200k_base tokens of Markdown
	Encoding  string // "o200k_base"
	Targets   []Target
	Snapshot  SnapshotInfo
	Since     SinceInfo
	Applies   []Policy
	Related   []Neighbour
	Changed   []Change
	Attempted []Attempt
	// Omitted counts the items each section left out for the budget
	// (Attempted counts operations lines).
	Omitted [numSections]int
	// Superseded, Expired and Pending (not yet valid) count the policies
	// hidden as history, by kind (empty with Request.All).
	Superseded, Expired, Pending map[string]int
	Markdown                     string

	hidden hiddenCounts
	times  map[lmdbstore.Revision]time.Time // commit time of every revision an item cites
	// compact: the budget cannot hold the full header and footer, so
	// both are cut to their essentials (title and revision; what was left
	// out, by section).
	compact bool
}

// candidate is one item line in priority order.
type candidate struct {
	sec   int
	idx   int // index in its section (attempts: flattened)
	group int // attempts: index of the Attempt
	// parts are the line and its newline: one part, or a related item's
	// three (neighbourLine).
	parts [3]string
	revs  []lmdbstore.Revision
	taken bool
	count int // the parts' o200k count, once taken (exact: it fit)
}

// cost is the o200k count of c's parts when it is at most room, and
// otherwise some number greater than room. The parts a related line
// repeats between packs are counted through memo.
func (c *candidate) cost(enc *bpe.Encoding, memo *tokenMemo, room int) int {
	if c.parts[1] == "" {
		return enc.CountUpTo(c.parts[0], room)
	}
	if enc.Separate(c.parts[0], c.parts[1]) && enc.Separate(c.parts[1], c.parts[2]) {
		return memo.count(enc, c.parts[0]) + enc.Count(c.parts[1]) + memo.count(enc, c.parts[2])
	}
	return enc.CountUpTo(c.parts[0]+c.parts[1]+c.parts[2], room)
}

// fit selects what fits the budget and renders the Markdown; memo keeps
// the counts of the line parts that repeat between packs (nil: none kept).
func (p *Pack) fit(enc *bpe.Encoding, memo *tokenMemo) error {
	p.Superseded, p.Expired, p.Pending = p.hidden.Superseded, p.hidden.Expired, p.hidden.Pending
	p.times = map[lmdbstore.Revision]time.Time{p.Rev: p.TS}
	cite := func(pr Provenance) {
		if _, ok := p.times[pr.Rev]; !ok {
			p.times[pr.Rev] = pr.TS
		}
	}
	for _, x := range p.Applies {
		cite(x.Prov)
	}
	for _, x := range p.Related {
		cite(x.Prov)
	}
	for _, x := range p.Changed {
		cite(x.Prov)
	}
	for _, at := range p.Attempted {
		for _, x := range at.Changes {
			cite(x.Prov)
		}
	}
	n := len(p.Applies) + len(p.Related) + len(p.Changed)
	for _, at := range p.Attempted {
		n += len(at.Changes)
	}
	cands := make([]candidate, 0, n)
	var per [numSections][]int // candidate indexes per section, in section order
	add := func(sec, idx, group int, parts [3]string, revs ...lmdbstore.Revision) {
		per[sec] = append(per[sec], len(cands))
		cands = append(cands, candidate{sec: sec, idx: idx, group: group, parts: parts, revs: revs})
	}
	line := func(s string) [3]string { return [3]string{s + "\n"} }
	for i, pol := range p.Applies {
		add(secApplies, i, 0, line(policyLine(pol)), pol.Prov.Rev)
	}
	for i, nb := range p.Related {
		add(secRelated, i, 0, neighbourLine(nb), nb.Prov.Rev)
	}
	for i, ch := range p.Changed {
		add(secChanged, i, 0, line(changeLine(ch, true)), ch.Prov.Rev)
	}
	flat := 0
	for g, at := range p.Attempted {
		for _, ch := range at.Changes {
			add(secAttempted, flat, g, line(changeLine(ch, false)), ch.Prov.Rev)
			flat++
		}
	}
	// Priority order.
	var order []int
	order = append(order, per[secApplies]...)
	for _, sec := range []int{secRelated, secChanged, secAttempted} {
		order = append(order, per[sec][:min(firstTier, len(per[sec]))]...)
	}
	for _, sec := range []int{secRelated, secChanged, secAttempted} {
		if len(per[sec]) > firstTier {
			order = append(order, per[sec][firstTier:]...)
		}
	}
	// The footer is reserved at its largest: every section left out whole.
	fixedCost := func() int {
		return enc.Count(p.header()) + enc.Count(p.footer(func(sec int) int { return len(per[sec]) }))
	}
	fixed := fixedCost()
	if fixed > p.Budget {
		p.compact = true
		fixed = fixedCost()
	}
	if fixed > p.Budget {
		return fmt.Errorf("%w: a budget of %d tokens cannot hold the header and footer (%d tokens)", ErrBadRequest, p.Budget, fixed)
	}
	used := 0
	secOpen := [numSections]bool{}
	groupOpen := map[int]bool{}
	revsCited := map[lmdbstore.Revision]bool{}
	timesOpen := false
	for _, ci := range order {
		if p.Budget-fixed-used < minLineTokens {
			break // nothing more can fit: the rest stays out uncounted
		}
		c := &cands[ci]
		// What the line brings with it first: the line itself is counted
		// only as far as the room those leave (a line that does not fit
		// is not counted to its end).
		cost := 0
		if !secOpen[c.sec] {
			cost += enc.Count(sectionHeading(c.sec, p))
		}
		if c.sec == secAttempted && !groupOpen[c.group] {
			cost += enc.Count(attemptHeading(p.Attempted[c.group]))
		}
		var newRevs []lmdbstore.Revision
		for _, r := range c.revs {
			if !revsCited[r] && r > 0 {
				newRevs = append(newRevs, r)
			}
		}
		if len(newRevs) > 0 {
			if !timesOpen {
				cost += enc.Count("\nRevision times:\n")
			}
			for _, r := range newRevs {
				cost += enc.Count(p.timeEntry(r))
			}
		}
		room := p.Budget - fixed - used - cost
		if room < 0 {
			continue
		}
		n := c.cost(enc, memo, room)
		if cost += n; fixed+used+cost > p.Budget {
			continue
		}
		used += cost
		c.taken, c.count = true, n
		secOpen[c.sec] = true
		if c.sec == secAttempted {
			groupOpen[c.group] = true
		}
		for _, r := range newRevs {
			revsCited[r] = true
			timesOpen = true
		}
	}
	// Exact count of the whole document; drop the lowest-priority items
	// until it fits (the per-line counts are close, not exact, since BPE
	// pieces may cross a line boundary).
	for {
		doc, n := p.render(cands, per, enc)
		if n <= p.Budget {
			p.Markdown, p.Tokens = doc, n
			break
		}
		dropped := false
		for i := len(order) - 1; i >= 0; i-- {
			if c := &cands[order[i]]; c.taken {
				c.taken = false
				dropped = true
				break
			}
		}
		if !dropped {
			return fmt.Errorf("%w: a budget of %d tokens cannot hold the header and footer (%d tokens)", ErrBadRequest, p.Budget, n)
		}
	}
	p.keepTaken(cands, per)
	return nil
}

// keepTaken cuts the sections down to the items taken and counts the rest.
func (p *Pack) keepTaken(cands []candidate, per [numSections][]int) {
	taken := func(sec, i int) bool { return cands[per[sec][i]].taken }
	var applies []Policy
	for i, x := range p.Applies {
		if taken(secApplies, i) {
			applies = append(applies, x)
		}
	}
	var related []Neighbour
	for i, x := range p.Related {
		if taken(secRelated, i) {
			related = append(related, x)
		}
	}
	var changed []Change
	for i, x := range p.Changed {
		if taken(secChanged, i) {
			changed = append(changed, x)
		}
	}
	var attempted []Attempt
	flat := 0
	for _, at := range p.Attempted {
		var chs []Change
		for _, ch := range at.Changes {
			if taken(secAttempted, flat) {
				chs = append(chs, ch)
			}
			flat++
		}
		if len(chs) > 0 {
			attempted = append(attempted, Attempt{Run: at.Run, Task: at.Task, Changes: chs})
		}
	}
	for sec := range numSections {
		n := 0
		for _, ci := range per[sec] {
			if !cands[ci].taken {
				n++
			}
		}
		p.Omitted[sec] = n
	}
	p.Applies, p.Related, p.Changed, p.Attempted = applies, related, changed, attempted
}

// render prints the document with the taken candidates, and counts it:
// the o200k count of the whole document, added up from its segments where
// the split rules keep them apart (segmentCount).
func (p *Pack) render(cands []candidate, per [numSections][]int, enc *bpe.Encoding) (string, int) {
	var b strings.Builder
	sc := segmentCount{enc: enc}
	write := func(s string) {
		b.WriteString(s)
		sc.add(s, -1)
	}
	write(p.header())
	revs := map[lmdbstore.Revision]bool{}
	for sec := range numSections {
		any := false
		for _, ci := range per[sec] {
			if cands[ci].taken {
				any = true
			}
		}
		if !any {
			continue
		}
		write(sectionHeading(sec, p))
		lastGroup := -1
		for _, ci := range per[sec] {
			c := cands[ci]
			if !c.taken {
				continue
			}
			if sec == secAttempted && c.group != lastGroup {
				write(attemptHeading(p.Attempted[c.group]))
				lastGroup = c.group
			}
			start := b.Len()
			for _, part := range c.parts {
				b.WriteString(part)
			}
			sc.add(b.String()[start:], c.count)
			for _, r := range c.revs {
				if r > 0 {
					revs[r] = true
				}
			}
		}
	}
	if len(revs) > 0 {
		write("\nRevision times:\n")
		keys := make([]lmdbstore.Revision, 0, len(revs))
		for r := range revs {
			keys = append(keys, r)
		}
		slices.SortFunc(keys, func(x, y lmdbstore.Revision) int { return int(y - x) })
		for _, r := range keys {
			write(p.timeEntry(r))
		}
	}
	omitted := func(sec int) int {
		n := 0
		for _, ci := range per[sec] {
			if !cands[ci].taken {
				n++
			}
		}
		return n
	}
	write(p.footer(omitted))
	return b.String(), sc.total()
}

// segmentCount adds up the o200k count of a document written a segment at
// a time: where the split rules put a piece boundary between two segments
// (bpe.Separate: a line and the next one) their counts add up, so a
// segment whose count is known (a line the budget counted) costs nothing;
// where they do not (a line, then a blank line and a heading), the
// segments are counted together.
type segmentCount struct {
	enc   *bpe.Encoding
	sum   int
	run   []string // segments not yet counted, none apart from the next
	known int      // the count of run when it is one segment whose count is known, else -1
}

// add appends segment s, whose count is n (-1: not known).
func (c *segmentCount) add(s string, n int) {
	if s == "" {
		return
	}
	if len(c.run) > 0 && !c.enc.Separate(c.run[len(c.run)-1], s) {
		c.run, c.known = append(c.run, s), -1
		return
	}
	c.flush()
	c.run, c.known = append(c.run, s), n
}

func (c *segmentCount) flush() {
	switch {
	case len(c.run) == 0:
	case c.known >= 0:
		c.sum += c.known
	default:
		c.sum += c.enc.Count(strings.Join(c.run, ""))
	}
	c.run, c.known = c.run[:0], -1
}

func (c *segmentCount) total() int {
	c.flush()
	return c.sum
}

func (p *Pack) timeEntry(r lmdbstore.Revision) string {
	return "- rev " + strconv.FormatUint(uint64(r), 10) + ": " + p.times[r].UTC().Format(time.RFC3339) + "\n"
}

// header is the title, the view, what "since" means and how targets
// resolved.
func (p *Pack) header() string {
	var b strings.Builder
	b.WriteString("# Context: ")
	for i, t := range p.Targets {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(t.Key)
	}
	b.WriteString("\n")
	fmt.Fprintf(&b, "rev %d", p.Rev)
	if p.compact {
		b.WriteString("\n")
		return b.String()
	}
	if !p.TS.IsZero() {
		b.WriteString(" (" + p.TS.UTC().Format(time.RFC3339) + ")")
	}
	b.WriteString(" · " + p.sinceText() + "\n")
	var via []string
	for _, t := range p.Targets {
		if t.Match != "key" {
			via = append(via, "`"+cut(t.Query, 80)+"` → "+t.Key+" ("+t.Match+")")
		}
	}
	if len(via) > 0 {
		b.WriteString("Targets: " + strings.Join(via, "; ") + "\n")
	}
	return b.String()
}

// sinceText says what "Changed since" compared with.
func (p *Pack) sinceText() string {
	s := p.Since
	switch s.Kind {
	case SinceRun:
		return fmt.Sprintf("changes since run %s (rev %d)", s.Run, s.Rev)
	case SinceTask:
		return fmt.Sprintf("changes since task %s (rev %d)", s.Task, s.Rev)
	case SinceRevision:
		return fmt.Sprintf("changes since rev %d", s.Rev)
	case SinceTime:
		return fmt.Sprintf("changes since %s (rev %d)", s.Time.UTC().Format(time.RFC3339), s.Rev)
	}
	if !s.Found {
		return "no previous run (use --since)"
	}
	return fmt.Sprintf("changes since the previous run, %s (rev %d)", s.Run, s.Rev)
}

func sectionHeading(sec int, p *Pack) string {
	title := sectionTitles[sec]
	if sec == secChanged {
		title += " rev " + strconv.FormatUint(uint64(p.Since.Rev), 10)
	}
	return "\n## " + title + "\n"
}

func attemptHeading(a Attempt) string {
	return "### run " + orDash(a.Run) + " · task " + orDash(a.Task) + "\n"
}

// footer says what the budget left out and what is hidden as history.
func (p *Pack) footer(omitted func(sec int) int) string {
	var left []string
	for sec := range numSections {
		if n := omitted(sec); n > 0 {
			left = append(left, fmt.Sprintf("%d %s", n, sectionNames[sec]))
		}
	}
	var hidden []string
	for _, h := range []struct {
		what string
		m    map[string]int
	}{{"superseded", p.Superseded}, {"expired", p.Expired}, {"not yet valid", p.Pending}} {
		for _, kind := range sortedKeys(h.m) {
			n := h.m[kind]
			hidden = append(hidden, fmt.Sprintf("%d %s %s", n, h.what, plural(kind, n)))
		}
	}
	if len(left) == 0 && len(hidden) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("\n---\n")
	if p.compact {
		if len(left) > 0 {
			fmt.Fprintf(&b, "Left out: %s.", strings.Join(left, ", "))
		}
		if n := len(hidden); n > 0 {
			if len(left) > 0 {
				b.WriteString(" ")
			}
			b.WriteString("Hidden: some history.")
		}
		b.WriteString("\n")
		return b.String()
	}
	if len(left) > 0 {
		fmt.Fprintf(&b, "Left out (budget %d tokens): %s.", p.Budget, strings.Join(left, ", "))
	}
	if len(hidden) > 0 {
		if len(left) > 0 {
			b.WriteString(" ")
		}
		fmt.Fprintf(&b, "Hidden: %s (--all shows them).", strings.Join(hidden, ", "))
	}
	b.WriteString("\n")
	return b.String()
}

func plural(kind string, n int) string {
	if n == 1 {
		return kind
	}
	return kind + "s"
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// provText is the provenance suffix of an item line.
func provText(pr Provenance) string {
	s := " · rev " + strconv.FormatUint(uint64(pr.Rev), 10)
	if pr.Run != "" {
		s += " · run " + cut(pr.Run, 64)
	}
	if pr.Task != "" {
		s += " · task " + cut(pr.Task, 64)
	}
	return s
}

func policyLine(p Policy) string {
	var b strings.Builder
	b.WriteString("- **" + p.Kind + "** ")
	if p.Text != "" {
		b.WriteString(p.Text + " — ")
	}
	b.WriteString(cut(p.Key, 200))
	switch p.Via {
	case "repository":
		b.WriteString(" · repository-wide")
	case "scope":
		b.WriteString(" · scope " + p.Anchor)
	default:
		b.WriteString(" · " + p.Via + " " + cut(p.Anchor, 200))
	}
	b.WriteString(provText(p.Prov))
	if p.Status.SupersededBy != "" {
		b.WriteString(" · superseded by " + cut(p.Status.SupersededBy, 200))
	}
	switch {
	case p.Status.Pending:
		b.WriteString(" · not yet valid")
	case p.Status.Expired:
		b.WriteString(" · expired")
	}
	for _, k := range p.Status.Contradicts {
		b.WriteString(" · conflicts with " + cut(k, 200))
	}
	return b.String()
}

// neighbourLine is a related item's line and its newline, in three parts
// that budgeting counts apart (bpe.Separate): the head (key, path, lines)
// and the provenance repeat from pack to pack, the score does not.
func neighbourLine(n Neighbour) [3]string {
	var b strings.Builder
	b.WriteString("- " + cut(n.Key, 200))
	if n.Kind == "symbol" && n.Path != "" {
		b.WriteString(" · " + cut(n.Path, 200))
		if n.LineStart > 0 {
			fmt.Fprintf(&b, ":%d-%d", n.LineStart, n.LineEnd)
		}
	}
	return [3]string{b.String(), " · " + strconv.FormatFloat(n.Score, 'g', 3, 64), provText(n.Prov) + "\n"}
}

// changeLine prints one change; withRev false leaves the revision to the
// provenance suffix alone (Attempted groups by run and task already).
func changeLine(c Change, withRev bool) string {
	var b strings.Builder
	b.WriteString("- ")
	if withRev {
		fmt.Fprintf(&b, "rev %d ", c.Prov.Rev)
	}
	b.WriteString(c.Op + " ")
	if c.Rel == "" {
		b.WriteString(cut(c.Key, 200))
	} else {
		peers := make([]string, len(c.Peers))
		for i, p := range c.Peers {
			peers[i] = cut(p, 200)
		}
		others := strings.Join(peers, ", ")
		if c.Count > len(c.Peers) {
			others += fmt.Sprintf(" (+%d more)", c.Count-len(c.Peers))
		}
		if c.Dir == "out" {
			b.WriteString(cut(c.Key, 200) + " -" + c.Rel + "-> " + others)
		} else {
			b.WriteString(others + " -" + c.Rel + "-> " + cut(c.Key, 200))
		}
	}
	if withRev {
		pr := c.Prov
		if pr.Run != "" {
			b.WriteString(" · run " + cut(pr.Run, 64))
		}
		if pr.Task != "" {
			b.WriteString(" · task " + cut(pr.Task, 64))
		}
	} else {
		b.WriteString(provText(Provenance{Rev: c.Prov.Rev}))
	}
	return b.String()
}
