package cli

import (
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/memctl/memctl/ingest"
)

// progressBar draws ingest progress on a terminal's stderr, at most ten
// times a second, and erases itself when done. Off a terminal it does
// nothing.
type progressBar struct {
	env   Env
	mu    sync.Mutex
	last  time.Time
	shown bool
}

func newProgressBar(env Env) *progressBar { return &progressBar{env: env} }

const barWidth = 30

func (b *progressBar) update(p ingest.Progress) {
	if !b.env.StderrIsTerminal || b.env.Stderr == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	now := time.Now()
	if now.Sub(b.last) < 100*time.Millisecond && p.Done != p.Total {
		return
	}
	b.last = now
	line := p.Phase + "..."
	if p.Total > 0 {
		filled := barWidth * p.Done / p.Total
		line = fmt.Sprintf("[%s%s] %3d%% %s %d/%d", strings.Repeat("=", filled), strings.Repeat(" ", barWidth-filled),
			100*p.Done/p.Total, p.Phase, p.Done, p.Total)
	} else if p.Done > 0 {
		line = fmt.Sprintf("%s... %d", p.Phase, p.Done)
	}
	fmt.Fprintf(b.env.Stderr, "\r\033[K%s", line)
	b.shown = true
}

// done erases the bar.
func (b *progressBar) done() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.shown {
		fmt.Fprint(b.env.Stderr, "\r\033[K")
		b.shown = false
	}
}
