package ratchet

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"strconv"

	"github.com/google/uuid"

	"github.com/ratchet-go/ratchet/sdk/spi"
)

// MaxSequenceKeyBytes is the longest key of WithSequenceKey.
const MaxSequenceKeyBytes = 200

// SequenceOption changes how WithSequenceKey orders a job.
type SequenceOption func(*sequence)

// sequence is a submission's WithSequenceKey or, fair, WithFairnessKey.
type sequence struct {
	key               string
	continueOnFailure bool
	fair              bool
	weight            int // lanes of a fairness key, 1 or more
}

// option names the option that made q, for errors.
func (q *sequence) option() string {
	if q.fair {
		return "WithFairnessKey"
	}
	return "WithSequenceKey"
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
		c.setSequence(q)
	}
}

// setSequence sets the submission's sequence or fairness key q, refusing
// a second one.
func (c *submitConfig) setSequence(q *sequence) {
	if c.sequence != nil && c.sequence.fair != q.fair {
		c.errs = append(c.errs, invalidArg("WithSequenceKey and WithFairnessKey: give one (a sequence already runs its jobs one at a time)"))
		return
	}
	c.sequence = q
}

// MaxFairnessKeyBytes is the longest key of WithFairnessKey, and
// MaxFairnessWeight the largest FairnessWeight.
const (
	MaxFairnessKeyBytes = 200
	MaxFairnessWeight   = 100
)

// FairnessOption changes how WithFairnessKey shares a task.
type FairnessOption func(*sequence)

// FairnessWeight gives the key w places in the line instead of one (1 to
// MaxFairnessWeight): it starts about w jobs for every one of a key of
// weight 1. Each job takes one of the key's w lanes, drawn from its id;
// give the same weight to every job of a key.
func FairnessWeight(w int) FairnessOption {
	return func(q *sequence) { q.weight = w }
}

// WithFairnessKey shares the job's task fairly among the keys of its jobs
// (tenants, accounts, customers): within a task and a priority level,
// claims take the keys with due jobs in turn, so that a key that
// submitted a million jobs delays a key that submitted ten by about ten
// turns, not by a million jobs.
//
// Each key holds one place in the line of due jobs (FairnessWeight
// places). Its next job waits BLOCKED (JobDetail says for which job) and
// costs no claim until the key's job in the line is claimed, by any node;
// then it joins the back of the line, due at the later of its due time
// and that claim. The turns live in the database, so they hold across
// nodes and processes. Within a key, jobs join the line in the order
// their submissions committed. The effective priority (aging included)
// still comes first: a key's job of a higher level passes every job of a
// lower one. A job without a fairness key holds a place of its own, so
// give every job of a task a key to share it. A job whose run fails, or
// whose node died, goes back to the line as a place of its own: its key
// holds one place more until it runs. Cancelling a waiting job takes it
// out: the one after it waits for the one before it.
//
// A job with a fairness key carries no unique key, is not debounced, has
// no callbacks and awaits no signal from its submission; a workflow step,
// a batch child or a schedule's job cannot have one, and it goes with no
// WithSequenceKey. The store must pass turns in its claims
// (spi.FairShareStore; not MongoDB).
func WithFairnessKey(key string, opts ...FairnessOption) SubmitOption {
	return func(c *submitConfig) {
		if key == "" || len(key) > MaxFairnessKeyBytes {
			c.errs = append(c.errs, invalidArg("WithFairnessKey: the key must have 1 to %d bytes (got %d)", MaxFairnessKeyBytes, len(key)))
			return
		}
		q := &sequence{key: key, fair: true, weight: 1}
		for _, o := range opts {
			o(q)
		}
		if q.weight < 1 || q.weight > MaxFairnessWeight {
			c.errs = append(c.errs, invalidArg("FairnessWeight: the weight must be 1 to %d (got %d)", MaxFairnessWeight, q.weight))
			return
		}
		c.setSequence(q)
	}
}

// spiSequence is the sequence of job id with the serialized arguments
// args: its key is a digest of the caller's key, under
// spi.SequenceKeyPrefix; a fairness key's, of the key and the job's lane
// (drawn from the random bits of its id), under spi.FairKeyPrefix.
func (q *sequence) spiSequence(id uuid.UUID, args []byte) *spi.Sequence {
	h := sha256.New()
	if q.fair {
		lane := binary.BigEndian.Uint64(id[8:]) % uint64(q.weight)
		h.Write([]byte("ratchet/fairness/v1\x00"))
		h.Write([]byte(q.key))
		h.Write([]byte("\x00" + strconv.FormatUint(lane, 10)))
		if bug("fair-key-by-args") {
			h.Write(args)
		}
		return &spi.Sequence{Key: spi.FairKeyPrefix + hex.EncodeToString(h.Sum(nil)), Fair: true}
	}
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
		return invalidArg("%s goes with neither WithUnique nor WithDebounce: it orders every job submitted", cfg.sequence.option())
	case len(cfg.callbacks) > 0:
		return invalidArg("a job with OnSuccess or OnFailure callbacks cannot have %s", cfg.sequence.option())
	case cfg.signal != "" || cfg.signalKey != "":
		return invalidArg("AwaitSignal and %s: the job cannot wait for a signal from its submission", cfg.sequence.option())
	case spi.CapabilitiesOf(c.store).Sequences == nil || spi.CapabilitiesOf(c.store).Workflows == nil:
		return fmt.Errorf("%s: %w: store %T keeps no sequences", cfg.sequence.option(), ErrUnsupported, c.store)
	case cfg.sequence.fair && !fairShares(c.store):
		return fmt.Errorf("WithFairnessKey: %w: the claims of store %T pass no fair turns", ErrUnsupported, c.store)
	}
	return nil
}

// fairShares reports whether the claims of store pass fair turns.
func fairShares(store spi.Store) bool {
	f := spi.CapabilitiesOf(store).FairShare
	return f != nil && f.FairTurns()
}
