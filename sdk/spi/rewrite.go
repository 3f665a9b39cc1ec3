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
	// ColumnLog is the message of one job log line (JobLogStore), a text:
	// sealed, it is the codecs' bytes as ratchet.Pipeline.EncodeText
	// writes them. ClaimSeq and Line name the line.
	ColumnLog ValueColumn = "log"
	// ColumnSignal is the payload a job's signal wait was delivered;
	// Namespace is the signal's name and SignalKey the wait's key (a
	// delivery by key seals the payload for the key, not the job).
	ColumnSignal ValueColumn = "signal"
	// ColumnCondition is the arguments of a workflow condition on one of
	// a job's dependencies; Namespace is the parent's id, as text.
	ColumnCondition ValueColumn = "condition"
)

// StoredValue is one stored value of a job, as a ValueRewriter read it.
type StoredValue struct {
	JobID  uuid.UUID
	Column ValueColumn
	// Namespace is the state namespace of a ColumnState value.
	Namespace string
	// ClaimSeq and Line name the line of a ColumnLog value.
	ClaimSeq int64
	Line     int
	// SignalKey is the key of a ColumnSignal value's wait.
	SignalKey string
	// Archived says the value is of an archived job: its payload, result
	// or state in the archive (a log line is the same line either way).
	Archived bool
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
// job's values, live and archived, opens those under an old key and seals
// them under the current one, each written back only where the row still
// holds the value it read, so that a concurrent write (a completion's
// result, a state update) always wins.
type ValueRewriter interface {
	// JobValues returns the payloads, results, states, log lines, signal
	// payloads and condition arguments of up to limit jobs with ids above
	// after, in id order: the live jobs, or with archived the archived
	// ones (Archived set on their payloads, results and states; signal
	// payloads and condition arguments are read with the live jobs only:
	// an archived job has run, and reads them no more). It returns the id
	// of the last job read (zero when none is left).
	JobValues(ctx context.Context, archived bool, after uuid.UUID, limit int) ([]StoredValue, uuid.UUID, error)
	// RewriteValues applies each rewrite where its column still holds its
	// Value (compare and set, each on its own) and reports which did. A
	// rewrite of a job that is gone, or whose value changed, does not
	// apply; New must not be empty.
	RewriteValues(ctx context.Context, rs []ValueRewrite) ([]bool, error)
}
