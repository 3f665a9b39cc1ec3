package spi

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/google/uuid"
)

// Unique is a job's uniqueness (a UniqueStore): the insert writes the job
// only when no job holds Key (see Holds). Otherwise the insert writes
// nothing and answers the holder's id with Duplicate. A job written so
// becomes Key's holder, whatever the state of the job that held it before,
// and its Until becomes the key's. Reads leave Job.Unique nil
// (UniqueStore.UniqueHolder reads a key's holder).
//
// A debounce (ratchet.WithDebounce) is a uniqueness with a window: Until
// ends it, and Replace hands a duplicate's payload to the holder.
type Unique struct {
	// Key is the uniqueness key, 1 to MaxUniqueKeyBytes bytes: the client
	// derives it from the task and, as its options say, the arguments and
	// the period (ratchet.WithUnique).
	Key string
	// States are the states in which the holder makes a new job a
	// duplicate; at least one.
	States []Status
	// Until, when not zero, is the end of the window that the job opens
	// when it is written: the key's holder holds it only for new jobs
	// created (Job.CreatedAt) before the holder's Until.
	Until time.Time
	// Replace makes a duplicate write its payload over its holder's, when
	// the holder is PENDING, in the insert's transaction: the holder then
	// runs with the last arguments.
	Replace bool
}

// MaxUniqueKeyBytes is the longest Unique.Key that every store keeps.
const MaxUniqueKeyBytes = 255

// Holds reports whether the key's holder, in state s and with the window's
// end until (zero: none), makes j, a new job with j.Unique == u, a
// duplicate.
func (u *Unique) Holds(j *Job, s Status, until time.Time) bool {
	return slices.Contains(u.States, s) && (until.IsZero() || j.CreatedAt.Before(until))
}

// UniqueStore is implemented by a store whose InsertJobs (and
// InsertJobsTx) honour Job.Unique in the database: the key's row is locked
// for the rest of the insert's transaction, so that two inserts of one key
// at once, from any processes or transactions, take turns, and the second
// sees the first's job once it commits. A store without it cannot take
// unique jobs, and the client refuses them with an error.
type UniqueStore interface {
	// UniqueHolder returns the job that holds key, whatever its state, or
	// the zero id when none does (a deleted or archived holder lets go
	// of its key).
	UniqueHolder(ctx context.Context, key string) (uuid.UUID, error)
}

// validateUnique checks the uniqueness a job is inserted with.
func validateUnique(j *Job) error {
	u := j.Unique
	switch {
	case u == nil:
		return nil
	case u.Key == "":
		return fmt.Errorf("job %s: empty unique key", j.ID)
	case len(u.Key) > MaxUniqueKeyBytes:
		return fmt.Errorf("job %s: unique key of %d bytes, over the limit of %d", j.ID, len(u.Key), MaxUniqueKeyBytes)
	case len(u.States) == 0:
		return fmt.Errorf("job %s: unique key %q names no states", j.ID, u.Key)
	case j.IdempotencyKey != "":
		return fmt.Errorf("job %s has both a unique key and an idempotency key; give one", j.ID)
	case len(j.Dependencies) > 0 || j.Dependents > 0 || j.WorkflowID != uuid.Nil:
		return fmt.Errorf("job %s is part of a workflow and has a unique key; workflow jobs cannot", j.ID)
	}
	for _, s := range u.States {
		if !s.Valid() {
			return fmt.Errorf("job %s: unique key %q names state %q, which is not a job state", j.ID, u.Key, s)
		}
	}
	return nil
}

// UniqueOrder returns the indexes of the jobs of a batch that carry a
// unique key, the first job of each key only, in the order of their keys:
// the order in which an insert locks the keys' rows, the same in every
// insert, so that two inserts of the same keys cannot deadlock. dupOf maps
// the index of each later job of a key to the index of the first.
func UniqueOrder(jobs []*Job) (first []int, dupOf map[int]int) {
	var seen map[string]int
	for i, j := range jobs {
		if j.Unique == nil {
			continue
		}
		if seen == nil {
			seen, dupOf = map[string]int{}, map[int]int{}
		}
		if f, ok := seen[j.Unique.Key]; ok {
			dupOf[i] = f
			continue
		}
		seen[j.Unique.Key] = i
		first = append(first, i)
	}
	slices.SortFunc(first, func(a, b int) int {
		if jobs[a].Unique.Key < jobs[b].Unique.Key {
			return -1
		}
		return 1
	})
	return first, dupOf
}

// The reasons a submission joined an earlier job (JoinMetrics).
const (
	JoinedIdempotency = "idempotency" // its idempotency key existed
	JoinedUnique      = "unique"      // its unique key was held (ratchet.WithUnique)
	JoinedDebounce    = "debounce"    // its debounce window was open (ratchet.WithDebounce)
)

// JoinMetrics is implemented by a MetricsCollector that also counts
// the submissions that wrote no job of their own and joined an earlier
// one: the client reports each, with its task and the reason
// (JoinedIdempotency, JoinedUnique, JoinedDebounce). NoOpMetrics
// implements it.
type JoinMetrics interface {
	SubmissionJoined(ctx context.Context, task, reason string)
}

// SubmissionJoined does nothing.
func (NoOpMetrics) SubmissionJoined(context.Context, string, string) {}

// JoinReason is why j, a job an insert answered as a duplicate, joined an
// earlier job.
func JoinReason(j *Job) string {
	switch {
	case j.Unique != nil && j.Unique.Until.IsZero():
		return JoinedUnique
	case j.Unique != nil:
		return JoinedDebounce
	}
	return JoinedIdempotency
}
