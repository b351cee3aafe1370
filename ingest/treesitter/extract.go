package treesitter

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/memctl/memctl/ingest"
)

// Options configures Extract.
type Options struct {
	ingest.WalkOptions
	// Progress, when set, is called as work advances, possibly from
	// several goroutines at once.
	Progress func(ingest.Progress)
	// SkipIfTreeHash maps a language to the tree hash its last ingest
	// recorded (ingest.StoredLangTreeHash): a language whose tree still
	// has it is not extracted and is reported Unchanged.
	SkipIfTreeHash map[string]string
	// Workers bounds the parsing goroutines (0: GOMAXPROCS).
	Workers int
	// OmitAbsent leaves out a language that has no file in the tree and
	// no SkipIfTreeHash entry (no earlier ingest to undo): `ingest code`
	// then writes nothing for it, not even its ingest:<lang> node. A
	// language whose last file is gone is extracted empty and gets no
	// ingest:<lang> node either, so the write removes its whole share and
	// the store is the one a fresh ingest of the tree builds.
	OmitAbsent bool
	// Cache, when set, supplies the parse of every file whose content it
	// holds (that file is not parsed again) and is left holding the
	// parses of this extraction's files.
	Cache *Cache
	// Known maps files (slash paths) to their content hash when the
	// caller knows it without reading (a stat unchanged since the file
	// was hashed, SPEC.md §9.9): with Cache holding that content, the
	// file is not read at all.
	Known map[string]string
	// AllIfAny extracts every language (none Unchanged) when any of them
	// has to be: the result's graph is then the whole tree's, as a
	// refresh that compares it with the last one needs.
	AllIfAny bool
	// Previous, when set, is the graph the last extraction of this tree
	// with these options gave (whole: AllIfAny), Cache holding its
	// payloads: a Python module whose content is unchanged since, and
	// none of the modules its last resolution looked up by name, is not
	// resolved again, its edges taken from it (python_reuse.go). The
	// result is the same graph.
	Previous *ingest.Graph
	// Nodes and Edges, when known (the graph a cache last wrote), size
	// the graph built: an estimate, never a limit.
	Nodes, Edges int
}

// LangResult says what Extract did for one language.
type LangResult struct {
	Lang    string
	Files   int
	Symbols int
	// Edges counts the edges leaving the language's nodes.
	Edges int
	// Unresolved counts the calls that named something this front-end
	// could not resolve from syntax (a method of a value of unknown type,
	// a local name…): they were dropped, not guessed.
	Unresolved int
	// ParseErrors counts files with syntax errors (still extracted:
	// tree-sitter recovers).
	ParseErrors int
	TreeHash    string
	// Unchanged: the tree hash equals Options.SkipIfTreeHash; nothing of
	// the language is in the graph.
	Unchanged bool
}

// Result is what Extract found.
type Result struct {
	// Graph holds the nodes and edges of the languages extracted (not
	// Unchanged), ready for ingest.WriteCode with Extracted.
	Graph     *ingest.Graph
	Langs     []LangResult // in ingest.Languages order
	Extracted []string     // the languages in Graph
	Elapsed   time.Duration
	// Reused counts the Python modules whose resolution Options.Previous
	// gave (not resolved again).
	Reused int
	bytes  int // bytes parsed (for the benchmark)
}

// Lang returns the result of one language.
func (r *Result) Lang(lang string) *LangResult {
	for i := range r.Langs {
		if r.Langs[i].Lang == lang {
			return &r.Langs[i]
		}
	}
	return nil
}

// parsedFile is one file read, hashed and (in the second pass) parsed.
type parsedFile struct {
	walkFile
	Hash     string
	Bytes    int
	Lines    int
	Terms    map[string]int // ingest.FileTerms of the text
	ParseErr string
	facts    any  // *pyFile, *tsFile or *rsFile
	parsed   bool // facts are set (parsed now or taken from Options.Cache)
}

// Extract reads the source files of langs (a subset of
// TreeSitterLanguages) under root and returns their graph.
func Extract(root string, langs []string, opts Options) (*Result, error) {
	start := time.Now()
	for _, l := range langs {
		if !slices.Contains(TreeSitterLanguages, l) {
			return nil, fmt.Errorf("unknown language %q", l)
		}
	}
	report := func(p ingest.Progress) {
		if opts.Progress != nil {
			opts.Progress(p)
		}
	}
	gs, err := loadGrammars()
	if err != nil {
		return nil, err
	}
	report(ingest.Progress{Phase: "reading"})
	wk, err := walk(root, langs, opts.WalkOptions)
	if err != nil {
		return nil, err
	}
	files := make([]*parsedFile, len(wk.Files))
	for i, f := range wk.Files {
		files[i] = &parsedFile{walkFile: f}
	}
	// Pass 1: hash every file (the contents are not kept: a large tree
	// must not sit in memory while it is parsed).
	workers := opts.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	errs := make([]error, len(files))
	for _, f := range files {
		if h, ok := opts.Known[f.Rel]; ok {
			if cf := opts.Cache.get(cacheKey{gramOf(gs, f).name, h}); cf != nil {
				f.Hash = h
				cf.fill(f)
			}
		}
	}
	parallel(workers, len(files), func(_ int, i int) {
		if files[i].parsed {
			return // known content, parse cached
		}
		b, err := os.ReadFile(files[i].Abs)
		if err != nil {
			errs[i] = err
			return
		}
		files[i].Hash, files[i].Bytes, files[i].Lines = contentHash(b), len(b), countLines(b)
		files[i].Terms = ingest.FileTerms(b)
	})
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	if opts.Cache.tooLarge(files) {
		// Not kept: the extraction goes as without a cache (every language
		// at once would cost more than it saves), the cache left empty.
		opts.Cache.replace(files, gs)
		opts.Cache, opts.AllIfAny = nil, false
	}
	configs := make(map[string][]byte, len(wk.Config))
	for _, c := range wk.Config {
		if b, err := os.ReadFile(c.Abs); err == nil {
			configs[c.Rel] = b
		}
	}
	run := &runCtx{root: wk.Root, dirs: wk.Dirs, configs: configs, langs: langs, opts: opts}
	res := &Result{Graph: ingest.NewGraphSized(opts.Nodes, opts.Edges)}
	byLang := make(map[string][]*parsedFile)
	for _, f := range files {
		byLang[f.Lang] = append(byLang[f.Lang], f)
	}
	for _, l := range languages {
		if l.prepare != nil {
			l.prepare(run, byLang[l.name])
		}
	}
	extract := make(map[string]bool)
	for _, lang := range ingest.Languages {
		if !slices.Contains(langs, lang) {
			continue
		}
		if opts.OmitAbsent && len(byLang[lang]) == 0 && opts.SkipIfTreeHash[lang] == "" {
			continue
		}
		lr := LangResult{Lang: lang, Files: len(byLang[lang]), TreeHash: run.treeHash(lang, byLang, wk.Config)}
		lr.Unchanged = opts.SkipIfTreeHash[lang] != "" && opts.SkipIfTreeHash[lang] == lr.TreeHash
		if !lr.Unchanged {
			extract[lang] = true
		}
		res.Langs = append(res.Langs, lr)
	}
	if opts.AllIfAny && len(extract) > 0 {
		for i := range res.Langs {
			extract[res.Langs[i].Lang], res.Langs[i].Unchanged = true, false
		}
	}
	// The languages of a family resolve into each other: of those in the
	// result, all or none are extracted.
	for _, l := range languages {
		if !extract[l.name] {
			continue
		}
		for _, o := range languages {
			if lr := res.Lang(o.name); lr != nil && l.kin(o) {
				extract[o.name], lr.Unchanged = true, false
			}
		}
	}
	var todo []*parsedFile
	for _, f := range files {
		if !extract[f.Lang] {
			continue
		}
		if !f.parsed {
			if cf := opts.Cache.get(cacheKey{gramOf(gs, f).name, f.Hash}); cf != nil {
				cf.fill(f)
			}
		}
		if !f.parsed {
			todo = append(todo, f)
			res.bytes += f.Bytes
		}
	}
	// Pass 2: parse on a bounded pool; each worker owns its parsers.
	report(ingest.Progress{Phase: "parsing", Total: len(todo)})
	pool := make([]*worker, workers)
	var mu sync.Mutex
	done := 0
	parallel(workers, len(todo), func(wi, i int) {
		if pool[wi] == nil {
			pool[wi] = newWorker()
		}
		f := todo[i]
		if err := gramOf(gs, f).load(); err != nil {
			errs[i] = err
			return
		}
		b, err := os.ReadFile(f.Abs)
		if err != nil {
			errs[i] = err
			return
		}
		f.Hash, f.Bytes, f.Lines = contentHash(b), len(b), countLines(b)
		f.Terms = ingest.FileTerms(b)
		parseFile(pool[wi], gs, f, b)
		mu.Lock()
		done++
		if done%256 == 0 || done == len(todo) {
			report(ingest.Progress{Phase: "parsing", Done: done, Total: len(todo)})
		}
		mu.Unlock()
	})
	for _, w := range pool {
		if w != nil {
			w.close()
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	opts.Cache.replace(files, gs)
	report(ingest.Progress{Phase: "resolving"})
	b := newBuilder(res.Graph)
	b.cache = opts.Cache
	b.pending = make([]pendingNode, 0, opts.Nodes) // about the files and symbols: one allocation
	for _, lang := range ingest.Languages {
		if extract[lang] {
			res.Extracted = append(res.Extracted, lang)
		}
	}
	// Each family resolves once, over its members' files in registry
	// order, when any member is extracted.
	for i, l := range languages {
		if slices.ContainsFunc(languages[:i], l.kin) {
			continue // resolved with the first of its family
		}
		var family []*parsedFile
		some := false
		for _, o := range languages[i:] {
			if l.kin(o) {
				family = append(family, byLang[o.name]...)
				some = some || extract[o.name]
			}
		}
		if some {
			l.resolve(b, run, family)
		}
	}
	for _, lang := range res.Extracted {
		lr := res.Lang(lang)
		lr.Unresolved = b.unresolved[lang]
		for _, f := range byLang[lang] {
			if f.ParseErr != "" {
				lr.ParseErrors++
			}
		}
		if opts.OmitAbsent && lr.Files == 0 {
			continue
		}
		res.Graph.AddNode(ingest.Node{Key: ingest.IngestKey(lang), Type: ingest.TypeIngest,
			Payload: ingest.MustJSON(ingest.LangIngestPayload{Lang: lang, Files: lr.Files, TreeHash: lr.TreeHash})})
	}
	b.finish()
	res.Graph.EachEdge(func(e ingest.Edge) {
		if lr := res.Lang(b.ownerOf(e.Src)); lr != nil {
			lr.Edges++
		}
	})
	res.Graph.EachNode(func(n ingest.Node) {
		if n.Type == ingest.TypeSymbol {
			if lr := res.Lang(b.ownerOf(n.Key)); lr != nil {
				lr.Symbols++
			}
		}
	})
	res.Reused = run.pyReused
	res.Elapsed = time.Since(start)
	return res, nil
}

// runCtx is what resolution needs to know about the whole run.
type runCtx struct {
	root    string
	dirs    map[string]bool
	configs map[string][]byte // rel path → content
	langs   []string
	opts    Options
	// pyReused counts the Python modules whose resolution Previous gave.
	pyReused int
	// pyPrefix is the dotted package path above root when root itself is
	// a Python package ("requests." for …/dist-packages/requests).
	pyPrefix string
}

// treeHash is the hash of everything a language's extraction depends on.
func (r *runCtx) treeHash(lang string, byLang map[string][]*parsedFile, config []walkFile) string {
	h := sha256.New()
	o := r.opts
	l := languageNamed(lang)
	fmt.Fprintf(h, "ingest-%s %d\nroot %s\nvendor %t testdata %t hidden %t\n", lang, l.rules, filepath.Base(r.root),
		o.IncludeVendor, o.IncludeTestdata, o.IncludeHidden)
	if l.hashNote != nil {
		fmt.Fprintf(h, "%s\n", l.hashNote(r))
	}
	// The family: the language and its kin among those requested, in
	// registry order.
	var family []string
	for _, o := range languages {
		if l.kin(o) && (o == l || slices.Contains(r.langs, o.name)) {
			family = append(family, o.name)
		}
	}
	fmt.Fprintf(h, "family %s\n", strings.Join(family, " "))
	for _, c := range config {
		if l.kin(languageNamed(c.Lang)) {
			fmt.Fprintf(h, "%s\x00%s\n", c.Rel, contentHash(r.configs[c.Rel]))
		}
	}
	var all []*parsedFile
	for _, l := range family {
		all = append(all, byLang[l]...)
	}
	slices.SortFunc(all, func(a, b *parsedFile) int { return strings.Compare(a.Rel, b.Rel) })
	for _, f := range all {
		fmt.Fprintf(h, "%s\x00%s\n", f.Rel, f.Hash)
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil))
}

// parseFile parses one file with its language's grammar and extracts its
// facts.
func parseFile(w *worker, gs map[string]*gram, f *parsedFile, b []byte) {
	g := gramOf(gs, f)
	tree, err := w.parse(g, b)
	if err != nil {
		f.ParseErr = err.Error()
		return
	}
	defer tree.Close()
	s := &src{g: g, b: b}
	root := tree.RootNode()
	f.ParseErr = firstError(s, root)
	f.facts = languageNamed(f.Lang).parse(w, s, root)
	f.parsed = true
}

// parallel runs fn(worker, i) for i in [0, n) on workers goroutines.
func parallel(workers, n int, fn func(w, i int)) {
	var wg sync.WaitGroup
	next := make(chan int)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				fn(w, i)
			}
		}()
	}
	for i := 0; i < n; i++ {
		next <- i
	}
	close(next)
	wg.Wait()
}

func contentHash(b []byte) string {
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}

func countLines(b []byte) int {
	n := bytes.Count(b, []byte{'\n'})
	if len(b) > 0 && b[len(b)-1] != '\n' {
		n++
	}
	return n
}
