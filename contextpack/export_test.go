package contextpack

// SetRankSlack sets how many places past the limit and the skipped nodes
// the first rankings of a's packs reach (negative: fewer).
func SetRankSlack(a *Assembler, n int) { a.rankSlack = n }

// SetRankFull makes a rank the full top-k at once.
func SetRankFull(a *Assembler) { a.rankFull = true }

// RankRetries is how many of a's packs ranked again to the full top-k.
func RankRetries(a *Assembler) int { return int(a.rankRetries.Load()) }
