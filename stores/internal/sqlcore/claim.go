package sqlcore

import (
	"bytes"
	"cmp"
	"slices"
	"time"

	"github.com/google/uuid"

	"github.com/ratchet-go/ratchet/sdk/spi"
)

// Candidate is one due PENDING job that a claim considers, as the store's
// candidates statement returned it.
type Candidate struct {
	ID        uuid.UUID
	Priority  spi.Priority
	Scheduled time.Time
	// Resource is the permit the job needs, "" for none; Limit is its
	// permit limit.
	Resource string
	Limit    int64

	eff int64 // effective priority at the claim's time, set by Rank
}

// Rank sorts cands in claim order: effective priority at now (with the
// aging interval boost, see spi.EffectivePriority) descending, then
// scheduled time ascending, then id ascending. Aging is monotone inside a
// priority level, so the best n overall are among the best n of each level:
// a store reads those per level and ranks their union here.
func Rank(cands []Candidate, now time.Time, boost time.Duration) {
	for i := range cands {
		cands[i].eff = spi.EffectivePriority(cands[i].Priority, cands[i].Scheduled, now, boost)
	}
	slices.SortFunc(cands, func(a, b Candidate) int {
		if c := cmp.Compare(b.eff, a.eff); c != 0 {
			return c
		}
		if c := a.Scheduled.Compare(b.Scheduled); c != 0 {
			return c
		}
		return bytes.Compare(a.ID[:], b.ID[:])
	})
}

// Resources returns the distinct resources that the first limit of the
// ranked cands name, sorted by name (the order in which a store locks them,
// so that claimers cannot deadlock on them); nil when none of them names
// one, and the claim then needs no permit count.
func Resources(cands []Candidate, limit int) []string {
	var out []string
	for _, c := range cands[:min(limit, len(cands))] {
		if c.Resource != "" && !slices.Contains(out, c.Resource) {
			out = append(out, c.Resource)
		}
	}
	if out == nil {
		return nil
	}
	// Resources further down may be admitted in place of full ones.
	for _, c := range cands[min(limit, len(cands)):] {
		if c.Resource != "" && !slices.Contains(out, c.Resource) {
			out = append(out, c.Resource)
		}
	}
	slices.Sort(out)
	return out
}

// Admit returns, in order, the first limit of the ranked cands whose
// resource has a free permit, counting the permits taken by the candidates
// admitted before them. held is the number of RUNNING holders of each
// resource, and is updated. Jobs of a full resource are skipped, not waited
// for.
func Admit(cands []Candidate, limit int, held map[string]int64) []Candidate {
	out := make([]Candidate, 0, min(limit, len(cands)))
	for _, c := range cands {
		if len(out) == limit {
			break
		}
		if c.Resource != "" {
			if held[c.Resource] >= c.Limit {
				continue
			}
			held[c.Resource]++
		}
		out = append(out, c)
	}
	return out
}

// IDs returns the ids of cands, in order.
func IDs(cands []Candidate) []uuid.UUID {
	ids := make([]uuid.UUID, len(cands))
	for i, c := range cands {
		ids[i] = c.ID
	}
	return ids
}

// SortClaimed puts claimed jobs in claim order (see Rank), as
// spi.Store.ClaimJobs returns them.
func SortClaimed(jobs []*spi.Job, now time.Time, boost time.Duration) {
	slices.SortFunc(jobs, func(a, b *spi.Job) int {
		ea := spi.EffectivePriority(a.Priority, a.ScheduledAt, now, boost)
		eb := spi.EffectivePriority(b.Priority, b.ScheduledAt, now, boost)
		if c := cmp.Compare(eb, ea); c != 0 {
			return c
		}
		if c := a.ScheduledAt.Compare(b.ScheduledAt); c != 0 {
			return c
		}
		return bytes.Compare(a.ID[:], b.ID[:])
	})
}
