package ratchet

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"slices"
	"time"

	"github.com/ratchet-go/ratchet/sdk/spi"
)

// UniqueOpts says when a submission is a duplicate of an earlier job
// (WithUnique). Two jobs share a unique key when they are of the same task
// and, as the options say, have the same arguments and were submitted in
// the same period. A submission whose key is held by a job in one of
// ByState writes nothing and returns that job's id; otherwise its job is
// written and holds the key from then on.
//
// The zero value makes a task unique by its name alone, in the default
// states: at most one job of the task that has not failed or been
// cancelled.
type UniqueOpts struct {
	// ByArgs makes jobs with other arguments distinct: the key covers the
	// arguments as serialized (before any codec; the JSON serializer
	// writes a struct's fields in order and a map's keys sorted).
	ByArgs bool
	// ByPeriod, when positive, makes jobs submitted in different periods
	// distinct: the key covers the period the submission falls in, the
	// submitting client's clock truncated to a multiple of ByPeriod since
	// the Unix epoch (an hour: from each full hour, UTC).
	ByPeriod time.Duration
	// ByState are the states in which the key's holder makes a submission
	// a duplicate; empty means DefaultUniqueStates. The holder's state is
	// read when the submission is written: with {StatusPending}, a job
	// submitted while the holder runs is written and becomes the holder.
	ByState []Status
}

// DefaultUniqueStates are the states in which a unique key's holder makes
// a submission a duplicate when UniqueOpts.ByState is empty: every state
// but FAILED, CANCELLED and SKIPPED, so a job that succeeded still holds
// its key (give ByPeriod, or ByState without StatusSucceeded, to submit
// again after a success).
var DefaultUniqueStates = []Status{StatusPending, StatusRunning, StatusWaiting, StatusBlocked, StatusSucceeded}

// WithUnique makes the submission unique as o says: when a job of the
// same key is in one of o's states, the submission writes nothing and
// returns that job's id, as WithIdempotencyKey does. The database decides,
// in the insert's transaction: submissions of one key at once, from any
// processes, InTx included, take turns on the key's row, and the second
// sees the first's job once it commits. The store must keep unique keys
// (spi.UniqueStore; not MongoDB, whose two writes could not be made one);
// a workflow step, a batch child, a callback or a schedule's job cannot be
// unique, and a unique job carries no idempotency key.
func WithUnique(o UniqueOpts) SubmitOption {
	// The option is checked and copied once, here: the returned func runs
	// for every submission, from any goroutine, and changes nothing it
	// shares.
	var err error
	switch {
	case o.ByPeriod < 0:
		err = invalidArg("WithUnique: negative ByPeriod %s", o.ByPeriod)
	default:
		for _, s := range o.ByState {
			if !s.Valid() {
				err = invalidArg("WithUnique: ByState names %q, which is not a job state", s)
				break
			}
		}
	}
	o.ByState = slices.Clone(o.ByState)
	if len(o.ByState) == 0 {
		o.ByState = slices.Clone(DefaultUniqueStates)
	}
	return func(c *submitConfig) {
		if err != nil {
			c.errs = append(c.errs, err)
			return
		}
		c.unique = &o
	}
}

// uniqueFor returns the uniqueness of a job of task with the serialized
// arguments args, submitted at now: its key is a digest of what o covers.
func (o *UniqueOpts) uniqueFor(task string, args []byte, now time.Time) *spi.Unique {
	h := sha256.New()
	var n [8]byte
	h.Write([]byte("ratchet/unique/v1\x00"))
	h.Write([]byte(task))
	h.Write([]byte{0})
	if o.ByArgs {
		binary.BigEndian.PutUint64(n[:], uint64(len(args)))
		h.Write(n[:])
		h.Write(args)
	} else {
		h.Write([]byte("-"))
	}
	h.Write([]byte{0})
	if o.ByPeriod > 0 && !bug("unique-key-ignores-period") {
		binary.BigEndian.PutUint64(n[:], uint64(o.ByPeriod))
		h.Write(n[:])
		binary.BigEndian.PutUint64(n[:], uint64(now.UnixNano()-now.UnixNano()%int64(o.ByPeriod)))
		h.Write(n[:])
	} else {
		h.Write([]byte("-"))
	}
	return &spi.Unique{Key: "u1:" + hex.EncodeToString(h.Sum(nil)), States: o.ByState}
}

// checkUnique refuses a unique submission that cannot be one.
func (c *Client) checkUnique(cfg *submitConfig) error {
	switch {
	case cfg.unique == nil:
		return nil
	case cfg.idempotencyKey != "":
		return invalidArg("WithUnique and WithIdempotencyKey both say when a submission is a duplicate; give one")
	case len(cfg.callbacks) > 0:
		return invalidArg("a job with OnSuccess or OnFailure callbacks cannot be unique (WithUnique)")
	case spi.CapabilitiesOf(c.store).Unique == nil:
		return fmt.Errorf("WithUnique: %w: store %T keeps no unique keys", ErrUnsupported, c.store)
	}
	return nil
}
