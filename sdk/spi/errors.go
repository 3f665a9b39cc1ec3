package spi

import "errors"

// Sentinel errors shared by stores, the client and the engine. Test them with
// errors.Is; stores wrap them with detail.
var (
	// ErrNotFound reports that no job has the given id.
	ErrNotFound = errors.New("ratchet: job not found")
	// ErrInvalidState reports an operation that the job's current state does
	// not allow, such as cancelling a running job.
	ErrInvalidState = errors.New("ratchet: invalid job state for this operation")
	// ErrCorruptJob reports a stored row that cannot be read back as a job.
	ErrCorruptJob = errors.New("ratchet: corrupt job row")
	// ErrSchema reports a database whose schema is missing, partial, foreign
	// or newer than this code.
	ErrSchema = errors.New("ratchet: schema mismatch")
	// ErrPropertyExists reports a write-once property written again with
	// another value.
	ErrPropertyExists = errors.New("ratchet: property already set to another value")
	// ErrClosed reports use of a closed store.
	ErrClosed = errors.New("ratchet: store closed")
)

// SchemaWarner is implemented by stores that open a schema newer than
// their code when every later migration is marked compatible (ddl's
// CompatibleMark): the code works with it, and should be upgraded.
type SchemaWarner interface {
	// SchemaWarning says so, naming both versions; "" for a schema at the
	// code's own version.
	SchemaWarning() string
}
