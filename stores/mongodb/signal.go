package mongodb

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/ratchet-go/ratchet/sdk/spi"
)

// Signals (spi.SignalStore) on single-document writes.
//
// A job that waits for a signal holds the wait in its own document, in the
// sub-document sig (sigDoc): the name, the key and the deadline it was
// inserted with, and once resolved the outcome, the delivered payload and
// the time. InsertJobs writes it WAITING (a workflow root that waits is
// activated to WAITING instead of PENDING). Every resolution is one
// conditional write on that document whose filter requires it WAITING with
// its wait unresolved, so of a delivery, a timeout and a cancel racing, one
// applies and the others match nothing:
//
//   - DeliverSignal: {_id, WAITING, sig.n: name, unresolved} → PENDING due
//     at now, DELIVERED with the payload.
//   - DeliverSignalByKey: reads the unresolved waits of the key and name in
//     id order (the sparse index on sig.wk), then resolves each as
//     DeliverSignal does; only the writes that applied count.
//   - ExpireSignals: reads the unresolved waits due by now in deadline
//     order (the sparse index on sig.due), then resolves each TIMED_OUT.
//   - CancelJob and CancelWorkflow: CANCELLED, the wait CANCELLED, in the
//     write that cancels the job.
//
// The indexed copies of the key and the deadline (sig.wk, sig.due) are
// removed by the resolution, so the two sparse indexes hold the unresolved
// waits only.

var _ spi.SignalStore = (*Store)(nil)

// byKeyRounds bounds the reads of DeliverSignalByKey and ExpireSignals: a
// read is repeated only when a write it led to found the wait resolved by a
// racing call, and the jobs it read are then no longer candidates.
const byKeyRounds = 4

// sigProjection is what a resolution reads of a job.
var sigProjection = bson.M{fID: 1, fTask: 1, fSigName: 1}

// sigRef is the part of a job document that a resolution reports.
type sigRef struct {
	ID     bson.Binary `bson:"_id"`
	Task   string      `bson:"task_name"`
	Status string      `bson:"status"`
	Signal *sigDoc     `bson:"sig"`
}

// resolved is what a resolution of the job d reports.
func (d *sigRef) resolved() (spi.ResolvedSignal, error) {
	id, err := binaryID(d.ID)
	if err != nil {
		return spi.ResolvedSignal{}, err
	}
	r := spi.ResolvedSignal{JobID: id, TaskName: d.Task}
	if d.Signal != nil {
		r.Name = d.Signal.Name
	}
	return r, nil
}

// unresolved is the filter of job id WAITING with its wait unresolved.
func unresolved(id bson.Binary) bson.M {
	return bson.M{fID: id, fStatus: string(spi.StatusWaiting), fSigOutcome: bson.M{"$exists": false}}
}

// resolution is the update that ends a wait at now with outcome o (and
// payload, for a delivery): PENDING due at now for a delivery or a timeout.
// A cancel is cancelUpdate.
func resolution(o spi.SignalOutcome, payload []byte, now time.Time) bson.M {
	set := bson.M{fSigOutcome: string(o), fSigAt: timeUS(now)}
	if payload != nil {
		set[fSigPayload] = binaryOf(payload)
	}
	return updateOf(spi.Woken(o, now), set, bson.M{fSigWaitKey: "", fSigDue: ""})
}

// resolveOne applies the update to job ref when it still waits
// unresolved, and reports whether it did.
func (s *Store) resolveOne(ctx context.Context, ref bson.Binary, update bson.M) (bool, error) {
	r, err := s.jobs.UpdateOne(ctx, unresolved(ref), update)
	if err != nil {
		return false, err
	}
	return r.MatchedCount == 1, nil
}

// DeliverSignal implements [spi.SignalStore]: one findOneAndUpdate on
// {_id, WAITING, sig.n: name, unresolved}; when it matches nothing, a read
// of the job says why.
func (s *Store) DeliverSignal(ctx context.Context, id uuid.UUID, name string, payload []byte, now time.Time) (spi.ResolvedSignal, error) {
	done, err := s.enter()
	if err != nil {
		return spi.ResolvedSignal{}, err
	}
	defer done()
	f := unresolved(idValue(id))
	f[fSigName] = name
	raw, err := s.findOneAndUpdate(ctx, f, resolution(spi.SignalDelivered, payload, now), nil, false, sigProjection)
	if errors.Is(err, mongo.ErrNoDocuments) {
		return spi.ResolvedSignal{}, s.signalError(ctx, id, name)
	}
	if err != nil {
		return spi.ResolvedSignal{}, fail("deliver signal", err)
	}
	var d sigRef
	if err := bson.Unmarshal(raw, &d); err != nil {
		return spi.ResolvedSignal{}, fail("deliver signal", corrupt(id.String(), "%v", err))
	}
	r, err := d.resolved()
	if err != nil {
		return spi.ResolvedSignal{}, fail("deliver signal", corrupt(id.String(), "%v", err))
	}
	return r, nil
}

// signalError explains why a delivery of name to job id matched nothing:
// an error wrapping spi.ErrNotFound or spi.ErrInvalidState.
func (s *Store) signalError(ctx context.Context, id uuid.UUID, name string) error {
	var d sigRef
	err := s.jobs.FindOne(ctx, bson.M{fID: idValue(id)},
		options.FindOne().SetProjection(bson.M{fStatus: 1, fSigName: 1, fSigOutcome: 1})).Decode(&d)
	switch {
	case errors.Is(err, mongo.ErrNoDocuments):
		return fmt.Errorf("%w: %s", spi.ErrNotFound, id)
	case err != nil:
		return fail("deliver signal", err)
	case spi.Status(d.Status) != spi.StatusWaiting:
		return fmt.Errorf("%w: job %s is %s, not WAITING for a signal", spi.ErrInvalidState, id, d.Status)
	case d.Signal == nil:
		return fmt.Errorf("%w: job %s is WAITING but holds no signal wait", spi.ErrInvalidState, id)
	case d.Signal.Name != name:
		return fmt.Errorf("%w: job %s waits for signal %q, not %q", spi.ErrInvalidState, id, d.Signal.Name, name)
	default:
		return fmt.Errorf("%w: job %s: its wait for signal %q is resolved", spi.ErrInvalidState, id, name)
	}
}

// DeliverSignalByKey implements [spi.SignalStore]: a read of the
// unresolved waits of the key and name in id order, then one conditional
// write per job ([Options.Parallelism] in flight). When a write finds its
// wait resolved by a racing call, the read is repeated for the rest.
func (s *Store) DeliverSignalByKey(ctx context.Context, key, name string, payload []byte, now time.Time, limit int) ([]spi.ResolvedSignal, error) {
	done, err := s.enter()
	if err != nil {
		return nil, err
	}
	defer done()
	out := []spi.ResolvedSignal{}
	if key == "" || limit <= 0 {
		return out, nil
	}
	filter := bson.M{fSigWaitKey: sigWaitKey(key, name), fStatus: string(spi.StatusWaiting), fSigOutcome: bson.M{"$exists": false}}
	out, err = s.resolveMany(ctx, filter, bson.D{{Key: fID, Value: 1}}, resolution(spi.SignalDelivered, payload, now), limit)
	if err != nil {
		return out, fail("deliver signal by key", err)
	}
	return out, nil
}

// ExpireSignals implements [spi.SignalStore]: a read of the unresolved
// waits whose deadline is not after now, in (deadline, id) order, then one
// conditional write per job, as DeliverSignalByKey.
func (s *Store) ExpireSignals(ctx context.Context, now time.Time, limit int) ([]spi.ResolvedSignal, error) {
	done, err := s.enter()
	if err != nil {
		return nil, err
	}
	defer done()
	if limit <= 0 {
		return []spi.ResolvedSignal{}, nil
	}
	filter := bson.M{fSigDue: bson.M{"$lte": timeUS(now)}, fStatus: string(spi.StatusWaiting), fSigOutcome: bson.M{"$exists": false}}
	out, err := s.resolveMany(ctx, filter, bson.D{{Key: fSigDue, Value: 1}, {Key: fID, Value: 1}}, resolution(spi.SignalTimedOut, nil, now), limit)
	if err != nil {
		return out, fail("expire signals", err)
	}
	return out, nil
}

// resolveMany applies update to up to limit jobs that filter selects, in
// sort order, each with one write that requires its wait unresolved, and
// returns those it resolved, in that order.
func (s *Store) resolveMany(ctx context.Context, filter bson.M, sort bson.D, update bson.M, limit int) ([]spi.ResolvedSignal, error) {
	out := []spi.ResolvedSignal{}
	for round := 0; round < byKeyRounds && len(out) < limit; round++ {
		want := limit - len(out)
		cur, err := s.jobs.Find(ctx, filter, options.Find().SetSort(sort).SetLimit(int64(want)).SetProjection(sigProjection))
		if err != nil {
			return out, err
		}
		var docs []sigRef
		if err := cur.All(ctx, &docs); err != nil {
			return out, err
		}
		if len(docs) == 0 {
			break
		}
		applied := make([]bool, len(docs))
		err = s.fanOut(ctx, len(docs), func(ctx context.Context, i int) error {
			ok, err := s.resolveOne(ctx, docs[i].ID, update)
			applied[i] = ok
			return err
		})
		missed := false
		for i := range docs {
			if !applied[i] {
				missed = true
				continue
			}
			r, rerr := docs[i].resolved()
			if rerr != nil {
				return out, rerr
			}
			out = append(out, r)
		}
		if err != nil {
			return out, err
		}
		if !missed || len(docs) < want {
			break // every wait read was resolved here, or there are no more
		}
	}
	return out, nil
}

// cancelWaitUpdate is the update that cancels a job at now whose wait is
// unresolved, resolving the wait CANCELLED in the same write.
func cancelWaitUpdate(now time.Time) bson.M {
	return updateOf(spi.Woken(spi.SignalCancelled, now), bson.M{fSigOutcome: string(spi.SignalCancelled), fSigAt: timeUS(now)},
		bson.M{fSigWaitKey: "", fSigDue: ""})
}
