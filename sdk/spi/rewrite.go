package spi

import (
	"context"

	"github.com/google/uuid"
)

// ValueColumn names a kind of stored value that an encrypting codec seals
// and a key rotation rewrites.
type ValueColumn string

// The columns a ValueRewriter reads and rewrites.
const (
	// ColumnPayload is a job's arguments (Job.Payload).
	ColumnPayload ValueColumn = "payload"
	// ColumnResult is a succeeded job's result (Job.Result).
	ColumnResult ValueColumn = "result"
	// ColumnState is one namespace of a job's state (JobStateStore).
	ColumnState ValueColumn = "state"
)

// StoredValue is one stored value of a live job, as a ValueRewriter read
// it.
type StoredValue struct {
	JobID  uuid.UUID
	Column ValueColumn
	// Namespace is the state namespace of a ColumnState value.
	Namespace string
	// Value is the stored bytes (never empty: a job without a result has
	// no ColumnResult value).
	Value []byte
}

// ValueRewrite replaces a stored value: New where the column still holds
// exactly Value.
type ValueRewrite struct {
	StoredValue
	New []byte
}

// ValueRewriter is implemented by stores whose sealed values can be
// rewritten in place: a key rotation (ratchet keys reencrypt) reads every
// live job's values, opens those under an old key and seals them under the
// current one, each written back only where the row still holds the value
// it read, so that a concurrent write (a completion's result, a state
// update) always wins. Archived jobs are not read.
type ValueRewriter interface {
	// JobValues returns the payloads, results and states of up to limit
	// live jobs with ids above after, in id order, and the id of the last
	// job read (zero when none is left).
	JobValues(ctx context.Context, after uuid.UUID, limit int) ([]StoredValue, uuid.UUID, error)
	// RewriteValues applies each rewrite where its column still holds its
	// Value (compare and set, each on its own) and reports which did. A
	// rewrite of a job that is gone, or whose value changed, does not
	// apply; New must not be empty.
	RewriteValues(ctx context.Context, rs []ValueRewrite) ([]bool, error)
}
