package sqlcore

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"slices"

	"github.com/google/uuid"

	"github.com/ratchet-go/ratchet/sdk/spi"
)

// FirstOfEach returns the indexes of the first ref of each distinct claim
// among refs, sorted by job id (stable), so that concurrent batch writers
// lock rows in one order. When one claim appears more than once in a batch,
// only its first write can apply, as if the writes ran one after the other.
func FirstOfEach(refs []spi.ClaimRef) []int {
	pos := make([]int, 0, len(refs))
	seen := make(map[spi.ClaimRef]bool, len(refs))
	for i, r := range refs {
		if !seen[r] {
			seen[r] = true
			pos = append(pos, i)
		}
	}
	slices.SortStableFunc(pos, func(a, b int) int { return bytes.Compare(refs[a].JobID[:], refs[b].JobID[:]) })
	return pos
}

// Fenced returns the indexes of refs that apply, given cur, the claim
// sequence of each job that is RUNNING (as a locking read found them): the
// first ref of each job whose claim sequence is its current one. Later refs
// of the same claim do not apply.
func Fenced(refs []spi.ClaimRef, cur map[uuid.UUID]int64) []int {
	var out []int
	taken := make(map[uuid.UUID]bool, len(refs))
	for i, r := range refs {
		if seq, ok := cur[r.JobID]; ok && seq == r.ClaimSeq && !taken[r.JobID] {
			taken[r.JobID] = true
			out = append(out, i)
		}
	}
	return out
}

// DistinctIDs returns the job ids of refs without repeats, sorted.
func DistinctIDs(refs []spi.ClaimRef) []uuid.UUID {
	ids := make([]uuid.UUID, 0, len(refs))
	for _, r := range refs {
		ids = append(ids, r.JobID)
	}
	return sortedIDs(ids)
}

// sortedIDs sorts ids in byte order and drops the repeats, in place.
func sortedIDs(ids []uuid.UUID) []uuid.UUID {
	slices.SortFunc(ids, func(a, b uuid.UUID) int { return bytes.Compare(a[:], b[:]) })
	return slices.Compact(ids)
}

// Refs returns the claims that the completions name, in order.
func Refs(cs []spi.Completion) []spi.ClaimRef {
	refs := make([]spi.ClaimRef, len(cs))
	for i, c := range cs {
		refs[i] = c.ClaimRef
	}
	return refs
}

// ValidOutcomes returns an error naming the first completion whose outcome
// is unknown: such a batch fails before anything is written.
func ValidOutcomes(cs []spi.Completion) error {
	for _, c := range cs {
		switch c.Outcome {
		case spi.OutcomeSucceeded, spi.OutcomeRetry, spi.OutcomeFailed, spi.OutcomeSkipped, spi.OutcomeCancelled, spi.OutcomeSnoozed, spi.OutcomeWaiting:
		default:
			return &OutcomeError{JobID: c.JobID, Outcome: c.Outcome}
		}
	}
	return nil
}

// OutcomeError is a completion with an outcome no store knows.
type OutcomeError struct {
	JobID   uuid.UUID
	Outcome spi.Outcome
}

// Error names the job and the outcome.
func (e *OutcomeError) Error() string {
	return fmt.Sprintf("job %s: unknown outcome %d", e.JobID, e.Outcome)
}

// Recognize marks as applied (in out) the completions at pos, the first of
// each claim in the batch, that did not apply but whose job already shows
// exactly what they write (spi.Completion.AlreadyApplied): the write of an
// earlier call whose commit succeeded but whose answer was lost. load reads
// the jobs of ids (missing ones left out); it runs only when some entry at
// pos did not apply, which is rare, so a store may use its plain reads. A
// nil pos stands for FirstOfEach(Refs(cs)), computed only then.
func Recognize(cs []spi.Completion, pos []int, out []bool, load func(ids []uuid.UUID) ([]*spi.Job, error)) error {
	if !slices.Contains(out, false) {
		return nil // the hot path: everything applied
	}
	if pos == nil {
		pos = FirstOfEach(Refs(cs))
	}
	var ids []uuid.UUID
	for _, i := range pos {
		if !out[i] {
			ids = append(ids, cs[i].JobID)
		}
	}
	if len(ids) == 0 {
		return nil
	}
	jobs, err := load(ids)
	if err != nil {
		return fmt.Errorf("recognise applied completions: %w", err)
	}
	byID := make(map[uuid.UUID]*spi.Job, len(jobs))
	for _, j := range jobs {
		byID[j.ID] = j
	}
	for _, i := range pos {
		if !out[i] && cs[i].AlreadyApplied(byID[cs[i].JobID]) {
			out[i] = true
		}
	}
	return nil
}

// Applying locks, with the dialect's Running, the RUNNING jobs of the
// completions of cs at pos (the first of each claim) and returns, in the
// order of pos, those whose claim sequence is the completion's: the owner
// writes that apply, for a WriteCompletions that checks the fence first.
func (d Dialect[T]) Applying(ctx context.Context, tx *sql.Tx, cs []spi.Completion, pos []int) ([]int, error) {
	sub := make([]spi.ClaimRef, len(pos))
	for k, i := range pos {
		sub[k] = cs[i].ClaimRef
	}
	seqs, err := d.Running(ctx, tx, DistinctIDs(sub), true)
	if err != nil {
		return nil, err
	}
	fenced := Fenced(sub, seqs)
	out := make([]int, len(fenced))
	for k, f := range fenced {
		out[k] = pos[f]
	}
	return out, nil
}
