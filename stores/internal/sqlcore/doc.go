// Package sqlcore holds the job state machine logic that every SQL store
// shares, written once: the ranking and permit admission of a claim with
// exact aging, the fencing and dedupe of owner writes, the recognition of a
// completion that an earlier call already applied (Recognize, over
// spi.Completion.AlreadyApplied: a batch sent again after its answer was
// lost counts as applied, not superseded), the crash-budget
// decision of orphan recovery, the decoding and validation of a job row
// (corrupt rows named as such), and the retry loop of transactions with
// backoff.
//
// A store supplies what differs between databases: the SQL text, the
// placeholders, the lock primitive, error classification and type codecs.
// It calls these functions from its own statements. The package is
// internal to the stores: users never import it.
//
// This is the first step of the shared SQL core: the stores still hold
// their own statements and transactions; the pure decisions live here.
package sqlcore
