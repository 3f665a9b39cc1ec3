package ratchet

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"

	"github.com/ratchet-go/ratchet/sdk/spi"
)

// MaxSequenceKeyBytes is the longest key of WithSequenceKey.
const MaxSequenceKeyBytes = 200

// SequenceOption changes how WithSequenceKey orders a job.
type SequenceOption func(*sequence)

// sequence is a submission's WithSequenceKey.
type sequence struct {
	key               string
	continueOnFailure bool
}

// SequenceContinueOnFailure lets the job run once the job before it in its
// sequence has finished however it ended. Without it, a failure (FAILED,
// in the dead-letter queue) holds the job, and so the rest of the
// sequence, until the failed job is retried (Client.RetryFailedJob) and
// finishes otherwise; cancelling the held job lets the ones after it go
// on.
func SequenceContinueOnFailure() SequenceOption {
	return func(q *sequence) { q.continueOnFailure = true }
}

// WithSequenceKey puts the job in the FIFO sequence of key: the jobs of one
// key, of any tasks, start one at a time, in the order their submissions
// committed, each once the one before it has finished (succeeded, been
// cancelled or skipped; a failure holds the sequence unless
// SequenceContinueOnFailure). Until then the job waits BLOCKED (JobDetail
// says on which job) and costs no claim. The order holds across nodes and
// processes, InTx submissions included (a submission joins its sequence
// when its transaction commits), and through crashes: a job whose node
// died runs again before the next one starts. A SubmitMany of several
// jobs puts them in the sequence in the order given.
//
// With WithIdempotencyKey, a duplicate submission joins nothing: it
// returns the job of the key, in the place of the sequence it took then
// (a sender's retries of one event are applied once, in order).
//
// Cancelling a waiting job takes it out of its sequence: the job after it
// then waits for the one before it. A sequenced job carries no unique
// key, is not debounced, has no callbacks and awaits no signal from its
// submission; a workflow step, a batch child or a schedule's job cannot
// have one. The store must keep sequences (spi.SequenceStore; not
// MongoDB).
func WithSequenceKey(key string, opts ...SequenceOption) SubmitOption {
	return func(c *submitConfig) {
		if key == "" || len(key) > MaxSequenceKeyBytes {
			c.errs = append(c.errs, invalidArg("WithSequenceKey: the key must have 1 to %d bytes (got %d)", MaxSequenceKeyBytes, len(key)))
			return
		}
		q := &sequence{key: key}
		for _, o := range opts {
			o(q)
		}
		c.sequence = q
	}
}

// spiSequence is the sequence of a job with the serialized arguments args:
// its key is a digest of the caller's key, under spi.SequenceKeyPrefix.
func (q *sequence) spiSequence(args []byte) *spi.Sequence {
	h := sha256.New()
	h.Write([]byte("ratchet/sequence/v1\x00"))
	h.Write([]byte(q.key))
	if bug("sequence-key-by-args") {
		h.Write(args)
	}
	return &spi.Sequence{Key: spi.SequenceKeyPrefix + hex.EncodeToString(h.Sum(nil)), Hold: !q.continueOnFailure}
}

// checkSequence refuses a sequenced submission that cannot be one.
func (c *Client) checkSequence(cfg *submitConfig) error {
	switch {
	case cfg.sequence == nil:
		return nil
	case cfg.unique != nil || cfg.debounce != nil:
		return invalidArg("WithSequenceKey goes with neither WithUnique nor WithDebounce: a sequence orders every job submitted")
	case len(cfg.callbacks) > 0:
		return invalidArg("a job with OnSuccess or OnFailure callbacks cannot be in a sequence (WithSequenceKey)")
	case cfg.signal != "" || cfg.signalKey != "":
		return invalidArg("AwaitSignal and WithSequenceKey: a sequenced job cannot wait for a signal from its submission")
	case spi.CapabilitiesOf(c.store).Sequences == nil || spi.CapabilitiesOf(c.store).Workflows == nil:
		return fmt.Errorf("WithSequenceKey: %w: store %T keeps no sequences", ErrUnsupported, c.store)
	}
	return nil
}
