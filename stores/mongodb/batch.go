package mongodb

import (
	"bytes"
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

// Batches (spi.BatchStore) without multi-document transactions.
//
// A batch is one document of the batches collection (batchDoc); its
// children are jobs whose workflow_id is the batch's id, and nothing on
// the batch document changes when one of them finishes. A chunk is three
// steps, each one single-document atomic write or a repeatable many-write:
//
//   - Stage: the children are inserted BLOCKED with the staging mark of
//     workflows (stg) and the chunk's token (bc: the id of its first
//     child). A staged child is never claimed, cancelled with its batch,
//     counted, nor waited for by the batch's end.
//   - Commit: one conditional update of the batch document, {persisted:
//     offset, sealed: false, no outcome} → persisted + n, sealed as the
//     chunk says, act: the token (a creating chunk inserts the document
//     instead, the unique _id refusing a second create). Of two writers of
//     one offset exactly one commits; the other deletes what it staged and
//     gets ErrBatchOffset.
//   - Activate: the chunk's children become PENDING (WAITING, one that
//     waits for a signal) and lose the marks, then act is removed.
//
// So the count advances in one write with the chunk becoming the batch's:
// a child staged by a writer whose commit failed, or that died before it,
// is no child of the batch (it stays BLOCKED and staged, invisible to the
// batch, and is deleted when the batch ends, when no commit can follow), and a
// committed chunk whose writer died before activating it is named by act,
// which every later chunk, FinishBatches, CancelBatch and CountBatch
// activate first: each commit requires the chunk committed before it
// activated, so only the latest can be committed and still staged.
//
// The end of a batch is one conditional update too, {sealed, no outcome} →
// outcome, finished, callback_id and, when there is a callback, the mark
// cbo (callback owed); the callback job is inserted after that update
// (its fixed id makes a second insert a duplicate-key error, which is
// fine), then the mark goes. The callback is inserted only by the writer
// that won the end, never before: inserting it first would leave a
// callback for an end that a cancel (or a finisher deciding otherwise
// after a DLQ retry) won, and a claimer could run it before it was
// deleted. A finisher that dies between the end and the insert leaves cbo
// on the batch, and the next FinishBatches inserts the callback (without
// reporting the batch again). A batch ends once: only the end's write that
// matched reports it.

var _ spi.BatchStore = (*Store)(nil)

// Field names of a batch document (batchDoc).
const (
	bOutcome   = "outcome"
	bPersisted = "persisted"
	bSealed    = "sealed"
	bFinished  = "finished"
	bCallback  = "callback_id"
	bActivate  = "act" // the token of the chunk committed last, while its children may be staged
	bOwed      = "cbo" // true while the callback of the end may not be inserted yet
)

// owedPage bounds the batches whose activation or callback one
// FinishBatches repairs.
const owedPage = 100

// batchPage is how many candidates FinishBatches reads at once.
const batchPage = 100

// unfinished are the statuses of a child that keeps its batch open.
var unfinished = bson.A{string(spi.StatusPending), string(spi.StatusRunning), string(spi.StatusBlocked), string(spi.StatusWaiting)}

// failedChildren are the statuses of a finished child that make its batch
// FAILED.
var failedChildren = bson.A{string(spi.StatusFailed), string(spi.StatusCancelled), string(spi.StatusSkipped)}

// batchIndexes are the indexes of the batches collection: the finisher's
// candidates (sealed, open) in id order, and the two repair marks. New
// models each call: the driver reads their option builders while it
// creates them, so stores opening at once must not share them.
func batchIndexes() []mongo.IndexModel {
	return []mongo.IndexModel{
		{Keys: bson.D{{Key: bSealed, Value: 1}, {Key: bOutcome, Value: 1}, {Key: fID, Value: 1}}, Options: options.Index().SetName("ratchet_batch_open")},
		{Keys: bson.D{{Key: bActivate, Value: 1}}, Options: options.Index().SetName("ratchet_batch_act").SetSparse(true)},
		{Keys: bson.D{{Key: bOwed, Value: 1}}, Options: options.Index().SetName("ratchet_batch_owed").SetSparse(true)},
	}
}

// batchDoc is the stored form of a batch. Times are µs (timeUS); the
// callbacks are the bytes of spi.EncodeBatchCallback.
type batchDoc struct {
	ID        bson.Binary  `bson:"_id"`
	Name      string       `bson:"name,omitempty"`
	Created   int64        `bson:"created"`
	OnSuccess *bson.Binary `bson:"on_success,omitempty"`
	OnFailure *bson.Binary `bson:"on_failure,omitempty"`
	Persisted int64        `bson:"persisted"`
	Sealed    bool         `bson:"sealed"`
	Outcome   string       `bson:"outcome,omitempty"`
	Finished  *int64       `bson:"finished,omitempty"`
	Callback  *bson.Binary `bson:"callback_id,omitempty"`
	Activate  *bson.Binary `bson:"act,omitempty"`
	Owed      bool         `bson:"cbo,omitempty"`
}

// batch decodes d, or returns an error wrapping spi.ErrCorruptJob.
func (d *batchDoc) batch() (*spi.Batch, error) {
	id, err := binaryID(d.ID)
	if err != nil {
		return nil, fmt.Errorf("%w: batch: %v", spi.ErrCorruptJob, err)
	}
	b := &spi.Batch{ID: id, Name: d.Name, CreatedAt: usTime(d.Created), Persisted: d.Persisted, Sealed: d.Sealed,
		Outcome: spi.BatchOutcome(d.Outcome)}
	if d.Finished != nil {
		b.FinishedAt = usTime(*d.Finished)
	}
	if d.Callback != nil {
		if b.CallbackID, err = binaryID(*d.Callback); err != nil {
			return nil, fmt.Errorf("%w: batch %s: callback_id: %v", spi.ErrCorruptJob, id, err)
		}
	}
	if b.OnSuccess, err = spi.DecodeBatchCallback(bytesOf(d.OnSuccess)); err == nil {
		b.OnFailure, err = spi.DecodeBatchCallback(bytesOf(d.OnFailure))
	}
	if err != nil {
		return nil, fmt.Errorf("batch %s: %w", id, err)
	}
	return b, nil
}

// callbackOf decodes the callback of outcome o of d (nil for none).
func (d *batchDoc) callbackOf(o spi.BatchOutcome) (*spi.Job, error) {
	switch o {
	case spi.BatchSucceeded:
		return spi.DecodeBatchCallback(bytesOf(d.OnSuccess))
	case spi.BatchFailed:
		return spi.DecodeBatchCallback(bytesOf(d.OnFailure))
	}
	return nil, nil
}

// newBatchDoc is the document that creates batch b with count n, sealed
// when sealed.
func newBatchDoc(b *spi.Batch, n int64, sealed bool) (*batchDoc, error) {
	onSuccess, err := spi.EncodeBatchCallback(b.OnSuccess)
	if err != nil {
		return nil, err
	}
	onFailure, err := spi.EncodeBatchCallback(b.OnFailure)
	if err != nil {
		return nil, err
	}
	return &batchDoc{ID: idValue(b.ID), Name: b.Name, Created: timeUS(b.CreatedAt),
		OnSuccess: binaryOf(onSuccess), OnFailure: binaryOf(onFailure), Persisted: n, Sealed: sealed}, nil
}

// readBatch reads batch id; an unknown one wraps spi.ErrNotFound.
func (s *Store) readBatch(ctx context.Context, id uuid.UUID) (*batchDoc, error) {
	var d batchDoc
	err := s.batches.FindOne(ctx, bson.M{fID: idValue(id)}).Decode(&d)
	if errors.Is(err, mongo.ErrNoDocuments) {
		return nil, fmt.Errorf("batch %s: %w", id, spi.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("read batch %s: %w", id, err)
	}
	return &d, nil
}

// refusal is why a chunk at offset cannot be committed to d, nil when it
// can.
func refusal(d *batchDoc, id uuid.UUID, offset int64) error {
	switch {
	case d.Outcome != "":
		return fmt.Errorf("batch %s: %w: it ended %s", id, spi.ErrInvalidState, d.Outcome)
	case d.Sealed:
		return fmt.Errorf("batch %s: %w: it is sealed", id, spi.ErrInvalidState)
	case d.Persisted != offset:
		return fmt.Errorf("batch %s at offset %d, persisted %d: %w", id, offset, d.Persisted, spi.ErrBatchOffset)
	}
	return nil
}

// AddBatchChunk stages the chunk's children, commits them with one
// conditional write of the batch document and activates them (see the
// comment at the top of this file). It implements [spi.BatchStore].
func (s *Store) AddBatchChunk(ctx context.Context, c spi.BatchChunk) (int64, error) {
	op := "add batch chunk"
	if err := spi.ValidateBatchChunk(c); err != nil {
		return 0, fail(op, err)
	}
	if err := spi.ValidateJobs(c.Children); err != nil {
		return 0, fail(op, err)
	}
	done, err := s.enter()
	if err != nil {
		return 0, err
	}
	defer done()
	n := c.Offset + int64(len(c.Children))
	if err := s.addChunk(ctx, c, n); err != nil {
		return 0, fail(op, err)
	}
	return n, nil
}

// addChunk writes chunk c, which brings the batch's count to n.
func (s *Store) addChunk(ctx context.Context, c spi.BatchChunk, n int64) error {
	id := c.BatchID
	var create *batchDoc
	if c.Create != nil {
		var err error
		if create, err = newBatchDoc(c.Create, n, c.Seal); err != nil {
			return err
		}
	}
	// Read the batch first: to refuse a chunk before staging anything, and
	// to finish the activation of the chunk committed last when its writer
	// died before it (every commit requires that, see the top of the file).
	d, err := s.readBatch(ctx, id)
	switch {
	case err == nil && d.Activate != nil:
		if err := s.activateChunk(ctx, id, *d.Activate, -1, true); err != nil {
			return err
		}
	case errors.Is(err, spi.ErrNotFound) && create != nil:
	case err != nil:
		return err
	}
	if create != nil && d != nil {
		return fmt.Errorf("batch %s: %w: it exists already", id, spi.ErrInvalidState)
	}
	if d != nil {
		if err := refusal(d, id, c.Offset); err != nil {
			return err
		}
	}
	if len(c.Children) == 0 {
		if create != nil {
			_, err := s.batches.InsertOne(ctx, create)
			if mongo.IsDuplicateKeyError(err) {
				return fmt.Errorf("batch %s: %w: it exists already", id, spi.ErrInvalidState)
			}
			return err
		}
		r, err := s.batches.UpdateOne(ctx, openAt(id, c.Offset), bson.M{"$set": bson.M{bSealed: c.Seal}})
		if err != nil {
			return err
		}
		if r.MatchedCount == 1 {
			return nil
		}
		return s.chunkRefused(ctx, id, c.Offset)
	}
	token := idValue(c.Children[0].ID)
	signals := false
	for _, j := range c.Children {
		signals = signals || j.Signal != nil
	}
	if err := s.stage(ctx, id, token, c.Children); err != nil {
		return err
	}
	// The commit. An error here leaves the staged children: the commit may
	// have applied (act then names them), or not (they are no children).
	var committed bool
	if create != nil {
		create.Activate = &token
		_, err := s.batches.InsertOne(ctx, create)
		switch {
		case mongo.IsDuplicateKeyError(err):
		case err != nil:
			return err
		default:
			committed = true
		}
	} else {
		r, err := s.batches.UpdateOne(ctx, openAt(id, c.Offset),
			bson.M{"$set": bson.M{bPersisted: n, bSealed: c.Seal, bActivate: token}})
		if err != nil {
			return err
		}
		committed = r.MatchedCount == 1
	}
	if !committed {
		d, err := s.readBatch(ctx, id)
		if err != nil {
			return err
		}
		if d.Activate == nil || !bytes.Equal(d.Activate.Data, token.Data) { // not committed by an identical call either
			s.unstage(ctx, id, token)
		}
		if create != nil {
			return fmt.Errorf("batch %s: %w: it exists already", id, spi.ErrInvalidState)
		}
		if err := refusal(d, id, c.Offset); err != nil {
			return err
		}
		return fmt.Errorf("batch %s: changed while the chunk at offset %d was written; try again", id, c.Offset)
	}
	return s.activateChunk(ctx, id, token, len(c.Children), signals)
}

// openAt selects batch id while it is open, not sealed, at count offset.
func openAt(id uuid.UUID, offset int64) bson.M {
	return bson.M{fID: idValue(id), bPersisted: offset, bSealed: false, bOutcome: bson.M{"$exists": false}}
}

// chunkRefused is the error of a chunk at offset whose commit matched
// nothing.
func (s *Store) chunkRefused(ctx context.Context, id uuid.UUID, offset int64) error {
	d, err := s.readBatch(ctx, id)
	if err != nil {
		return err
	}
	if err := refusal(d, id, offset); err != nil {
		return err
	}
	return fmt.Errorf("batch %s: changed while the chunk at offset %d was written; try again", id, offset)
}

// stage inserts children of batch id staged with the chunk's token. A
// child whose id exists already staged with the same token is what an
// earlier try of this chunk left (its commit never applied: a chunk
// committed is refused before staging): it is replaced. Any other clash
// fails the chunk, with what it staged deleted.
func (s *Store) stage(ctx context.Context, id uuid.UUID, token bson.Binary, children []*spi.Job) error {
	at := timeUS(time.Now())
	docs := make([]any, len(children))
	for i, j := range children {
		d := encodeJob(j)
		d.Status = string(spi.StatusBlocked)
		d.Staged = &at
		d.Chunk = &token
		docs[i] = d
	}
	for round := 0; ; round++ {
		_, err := s.jobs.InsertMany(ctx, docs, options.InsertMany().SetOrdered(false))
		if err == nil {
			return nil
		}
		var bwe mongo.BulkWriteException
		if !errors.As(err, &bwe) || bwe.WriteConcernError != nil || len(bwe.WriteErrors) == 0 {
			s.unstage(ctx, id, token)
			return fmt.Errorf("stage the children: %w", err)
		}
		var again []any
		var ids bson.A
		for _, we := range bwe.WriteErrors {
			if we.Code != 11000 && we.Code != 11001 || we.Index < 0 || we.Index >= len(docs) {
				s.unstage(ctx, id, token)
				return fmt.Errorf("stage the children: %w", err)
			}
			again = append(again, docs[we.Index])
			ids = append(ids, docs[we.Index].(*jobDoc).ID)
		}
		if round == 0 {
			r, derr := s.jobs.DeleteMany(ctx, bson.M{fID: bson.M{"$in": ids}, fWorkflow: idValue(id), fChunk: token, fStaged: bson.M{"$exists": true}})
			if derr == nil && r.DeletedCount == int64(len(ids)) {
				docs = again
				continue
			}
		}
		s.unstage(ctx, id, token)
		return fmt.Errorf("stage the children: a job id of the chunk exists already: %w", err)
	}
}

// unstage deletes, as far as it can, the staged children of a chunk that
// was not committed.
func (s *Store) unstage(ctx context.Context, id uuid.UUID, token bson.Binary) {
	_, _ = s.jobs.DeleteMany(context.WithoutCancel(ctx),
		bson.M{fWorkflow: idValue(id), fChunk: token, fStaged: bson.M{"$exists": true}})
}

// dropStaged deletes the staged children of chunks of batch id that never
// committed: called once the batch ended, when no commit can follow.
func (s *Store) dropStaged(ctx context.Context, id uuid.UUID) error {
	_, err := s.jobs.DeleteMany(ctx, bson.M{fWorkflow: idValue(id), fChunk: bson.M{"$exists": true}, fStaged: bson.M{"$exists": true}})
	if err != nil {
		return fmt.Errorf("delete the uncommitted children of batch %s: %w", id, err)
	}
	return nil
}

// activateChunk makes the staged children of the committed chunk token of
// batch id PENDING (WAITING, those that wait for a signal), drops their
// marks, then the batch's act. want is how many children the chunk has
// (-1: not known) and signals whether one may wait for a signal. Every step
// is repeatable.
func (s *Store) activateChunk(ctx context.Context, id uuid.UUID, token bson.Binary, want int, signals bool) error {
	of := func(extra bson.M) bson.M {
		f := bson.M{fWorkflow: idValue(id), fChunk: token, fStaged: bson.M{"$exists": true}}
		for k, v := range extra {
			f[k] = v
		}
		return f
	}
	unmark := bson.M{fStaged: "", fChunk: ""}
	var moved int64
	if signals {
		r, err := s.jobs.UpdateMany(ctx, of(bson.M{fStatus: string(spi.StatusBlocked), fSigName: bson.M{"$exists": true}, fSigOutcome: bson.M{"$exists": false}}),
			bson.M{"$set": bson.M{fStatus: string(spi.StatusWaiting)}, "$unset": unmark})
		if err != nil {
			return fmt.Errorf("activate a chunk of batch %s: %w", id, err)
		}
		moved += r.ModifiedCount
	}
	r, err := s.jobs.UpdateMany(ctx, of(bson.M{fStatus: string(spi.StatusBlocked), fSig: bson.M{"$exists": false}}),
		bson.M{"$set": bson.M{fStatus: string(spi.StatusPending)}, "$unset": unmark})
	if err != nil {
		return fmt.Errorf("activate a chunk of batch %s: %w", id, err)
	}
	moved += r.ModifiedCount
	if want < 0 || moved < int64(want) {
		// A child changed while staged (cancelled by its id): it keeps
		// its state and loses the marks.
		if _, err := s.jobs.UpdateMany(ctx, of(nil), bson.M{"$unset": unmark}); err != nil {
			return fmt.Errorf("activate a chunk of batch %s: %w", id, err)
		}
	}
	if _, err := s.batches.UpdateOne(ctx, bson.M{fID: idValue(id), bActivate: token}, bson.M{"$unset": bson.M{bActivate: ""}}); err != nil {
		return fmt.Errorf("activate a chunk of batch %s: %w", id, err)
	}
	return nil
}

// GetBatch returns batch id. It implements [spi.BatchStore].
func (s *Store) GetBatch(ctx context.Context, id uuid.UUID) (*spi.Batch, error) {
	done, err := s.enter()
	if err != nil {
		return nil, err
	}
	defer done()
	d, err := s.readBatch(ctx, id)
	if err != nil {
		return nil, fail("get batch", err)
	}
	b, err := d.batch()
	if err != nil {
		return nil, fail("get batch", err)
	}
	return b, nil
}

// CountBatch counts the live children of batch id by status, with one
// aggregation over the jobs of its id (the staged children of uncommitted
// chunks left out), after activating a chunk whose writer died between its
// commit and its activation. It implements [spi.BatchStore].
func (s *Store) CountBatch(ctx context.Context, id uuid.UUID) (map[spi.Status]int, error) {
	done, err := s.enter()
	if err != nil {
		return nil, err
	}
	defer done()
	d, err := s.readBatch(ctx, id)
	if err != nil {
		return nil, fail("count batch", err)
	}
	if d.Activate != nil {
		if err := s.activateChunk(ctx, id, *d.Activate, -1, true); err != nil {
			return nil, fail("count batch", err)
		}
	}
	cur, err := s.jobs.Aggregate(ctx, bson.A{
		bson.M{"$match": bson.M{fWorkflow: idValue(id), fStaged: bson.M{"$exists": false}}},
		bson.M{"$group": bson.M{"_id": "$" + fStatus, "n": bson.M{"$sum": 1}}},
	})
	if err != nil {
		return nil, fail("count batch", err)
	}
	var rows []struct {
		Status string `bson:"_id"`
		N      int64  `bson:"n"`
	}
	if err := cur.All(ctx, &rows); err != nil {
		return nil, fail("count batch", err)
	}
	out := make(map[spi.Status]int, len(rows))
	for _, r := range rows {
		out[spi.Status(r.Status)] += int(r.N)
	}
	return out, nil
}

// CancelBatch ends open batch id CANCELLED at now, sealed (one
// conditional write), then activates its chunk committed last if that is
// still staged, deletes the children of chunks that never committed, and
// cancels its unfinished children as CancelWorkflow does. On a batch
// already cancelled it does the steps after the first again. It implements
// [spi.BatchStore].
func (s *Store) CancelBatch(ctx context.Context, id uuid.UUID, now time.Time) (int, error) {
	done, err := s.enter()
	if err != nil {
		return 0, err
	}
	defer done()
	var d batchDoc
	err = s.batches.FindOneAndUpdate(ctx, bson.M{fID: idValue(id), bOutcome: bson.M{"$exists": false}},
		bson.M{"$set": bson.M{bOutcome: string(spi.BatchCancelled), bFinished: timeUS(now), bSealed: true}},
		options.FindOneAndUpdate().SetReturnDocument(options.After)).Decode(&d)
	if errors.Is(err, mongo.ErrNoDocuments) {
		got, rerr := s.readBatch(ctx, id)
		switch {
		case rerr != nil:
			return 0, fail("cancel batch", rerr)
		case got.Outcome != string(spi.BatchCancelled):
			return 0, fail("cancel batch", fmt.Errorf("batch %s: %w: it ended %s", id, spi.ErrInvalidState, got.Outcome))
		}
		d, err = *got, nil
	}
	if err != nil {
		return 0, fail("cancel batch", err)
	}
	// Ended: no chunk commits from here on, and the act read now is the
	// last there will be.
	if d.Activate != nil {
		if err := s.activateChunk(ctx, id, *d.Activate, -1, true); err != nil {
			return 0, fail("cancel batch", err)
		}
	}
	if err := s.dropStaged(ctx, id); err != nil {
		return 0, fail("cancel batch", err)
	}
	n, err := s.cancelFlow(ctx, id, now)
	if err != nil {
		return n, fail("cancel batch", err)
	}
	return n, nil
}

// FinishBatches ends at now up to limit sealed open batches none of whose
// children is unfinished, each with its own guarded write (see the comment
// at the top of this file), and returns those it ended. It first repairs
// what dead writers left: the callbacks owed by ends whose finisher died
// before inserting them, and the committed chunks left staged. A batch
// whose stored callback is unreadable is not ended, and named in the
// error, after the others are. It implements [spi.BatchStore].
func (s *Store) FinishBatches(ctx context.Context, now time.Time, limit int) ([]spi.FinishedBatch, error) {
	out := []spi.FinishedBatch{}
	if limit <= 0 {
		return out, nil
	}
	done, err := s.enter()
	if err != nil {
		return nil, err
	}
	defer done()
	if err := s.repairBatches(ctx); err != nil {
		return out, fail("finish batches", err)
	}
	var bad []error
	after := idValue(uuid.Nil)
	for len(out) < limit {
		cur, err := s.batches.Find(ctx, bson.M{bSealed: true, bOutcome: bson.M{"$exists": false}, fID: bson.M{"$gt": after}},
			options.Find().SetSort(bson.D{{Key: fID, Value: 1}}).SetLimit(batchPage))
		if err != nil {
			return out, fail("finish batches", err)
		}
		var docs []batchDoc
		if err := cur.All(ctx, &docs); err != nil {
			return out, fail("finish batches", err)
		}
		for i := range docs {
			if len(out) >= limit {
				break
			}
			fb, ok, err := s.finishBatch(ctx, &docs[i], now)
			switch {
			case errors.Is(err, spi.ErrCorruptJob):
				bad = append(bad, err)
			case err != nil:
				if ok {
					out = append(out, fb)
				}
				return out, fail("finish batches", err)
			case ok:
				out = append(out, fb)
			}
		}
		if len(docs) < batchPage {
			break
		}
		after = docs[len(docs)-1].ID
	}
	if len(bad) > 0 {
		return out, fail("finish batches", errors.Join(bad...))
	}
	return out, nil
}

// finishBatch ends the sealed batch d at now if it is still open and none
// of its children is unfinished; it reports whether it did. An error after
// the end (the callback's insert) comes with ok set: the end is this
// call's, and the next FinishBatches inserts the callback.
func (s *Store) finishBatch(ctx context.Context, d *batchDoc, now time.Time) (spi.FinishedBatch, bool, error) {
	id, err := binaryID(d.ID)
	if err != nil {
		return spi.FinishedBatch{}, false, fmt.Errorf("%w: batch: %v", spi.ErrCorruptJob, err)
	}
	// Sealed: no chunk commits any more, so d's act is the last.
	if d.Activate != nil {
		if err := s.activateChunk(ctx, id, *d.Activate, -1, true); err != nil {
			return spi.FinishedBatch{}, false, err
		}
	}
	if open, err := s.anyChild(ctx, id, unfinished); err != nil || open {
		return spi.FinishedBatch{}, false, err
	}
	failed, err := s.anyChild(ctx, id, failedChildren)
	if err != nil {
		return spi.FinishedBatch{}, false, err
	}
	fb := spi.FinishedBatch{ID: id, Name: d.Name, Outcome: spi.BatchOutcomeOf(!failed)}
	cb, err := d.callbackOf(fb.Outcome)
	if err != nil {
		return fb, false, fmt.Errorf("batch %s: %w", id, err)
	}
	set := bson.M{bOutcome: string(fb.Outcome), bFinished: timeUS(now)}
	if cb != nil {
		fb.Callback = spi.BatchCallbackJob(cb, now)
		if err := spi.ValidateJobs([]*spi.Job{fb.Callback}); err != nil {
			return fb, false, fmt.Errorf("%w: batch %s: callback: %v", spi.ErrCorruptJob, id, err)
		}
		set[bCallback], set[bOwed] = idValue(cb.ID), true
	}
	r, err := s.batches.UpdateOne(ctx, bson.M{fID: d.ID, bSealed: true, bOutcome: bson.M{"$exists": false}}, bson.M{"$set": set})
	if err != nil {
		return fb, false, err
	}
	if r.MatchedCount == 0 {
		return fb, false, nil // another finisher, or a cancel, ended it first
	}
	if fb.Callback != nil {
		if err := s.payCallback(ctx, id, fb.Callback); err != nil {
			return fb, true, err
		}
	}
	_ = s.dropStaged(ctx, id) // best effort: what is left is no child, and stays staged
	return fb, true, nil
}

// payCallback inserts the callback cb of the ended batch id (a duplicate
// key: an earlier try inserted it) and drops the batch's mark.
func (s *Store) payCallback(ctx context.Context, id uuid.UUID, cb *spi.Job) error {
	if _, err := s.jobs.InsertOne(ctx, encodeJob(cb)); err != nil && !mongo.IsDuplicateKeyError(err) {
		return fmt.Errorf("insert callback %s of batch %s: %w", cb.ID, id, err)
	}
	if _, err := s.batches.UpdateOne(ctx, bson.M{fID: idValue(id)}, bson.M{"$unset": bson.M{bOwed: ""}}); err != nil {
		return fmt.Errorf("batch %s: %w", id, err)
	}
	return nil
}

// anyChild reports whether batch id has a live, committed child in one
// of statuses.
func (s *Store) anyChild(ctx context.Context, id uuid.UUID, statuses bson.A) (bool, error) {
	err := s.jobs.FindOne(ctx, bson.M{fWorkflow: idValue(id), fStaged: bson.M{"$exists": false}, fStatus: bson.M{"$in": statuses}},
		options.FindOne().SetProjection(bson.M{fID: 1})).Err()
	if errors.Is(err, mongo.ErrNoDocuments) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("read the children of batch %s: %w", id, err)
	}
	return true, nil
}

// repairBatches finishes what writers that died left: the callbacks
// owed by ends (cbo) and the committed chunks still staged (act), up to
// owedPage of each.
func (s *Store) repairBatches(ctx context.Context) error {
	var owed []batchDoc
	cur, err := s.batches.Find(ctx, bson.M{bOwed: true}, options.Find().SetLimit(owedPage))
	if err == nil {
		err = cur.All(ctx, &owed)
	}
	if err != nil {
		return fmt.Errorf("read the batches that owe a callback: %w", err)
	}
	for i := range owed {
		d := &owed[i]
		id, err := binaryID(d.ID)
		if err != nil {
			continue
		}
		cb, err := d.callbackOf(spi.BatchOutcome(d.Outcome))
		if err != nil || cb == nil || d.Finished == nil {
			continue // unreadable: FinishBatches could not have ended it
		}
		if err := s.payCallback(ctx, id, spi.BatchCallbackJob(cb, usTime(*d.Finished))); err != nil {
			return err
		}
	}
	var staged []batchDoc
	cur, err = s.batches.Find(ctx, bson.M{bActivate: bson.M{"$exists": true}},
		options.Find().SetLimit(owedPage).SetProjection(bson.M{fID: 1, bActivate: 1}))
	if err == nil {
		err = cur.All(ctx, &staged)
	}
	if err != nil {
		return fmt.Errorf("read the batches with a chunk to activate: %w", err)
	}
	for _, d := range staged {
		id, err := binaryID(d.ID)
		if err != nil || d.Activate == nil {
			continue
		}
		if err := s.activateChunk(ctx, id, *d.Activate, -1, true); err != nil {
			return err
		}
	}
	return nil
}

// openBatchChildren returns the raw ids of the jobs among docs (whole job
// documents) that are children of a batch that has not ended: the archive
// leaves them live, so that the batch's end sees them all.
func (s *Store) openBatchChildren(ctx context.Context, docs []bson.Raw) (map[string]bool, error) {
	byFlow := map[string][]string{} // raw batch id -> raw job ids
	var flows bson.A
	for _, d := range docs {
		sub, data, ok := d.Lookup(fWorkflow).BinaryOK()
		if !ok {
			continue
		}
		key := string(data)
		if _, seen := byFlow[key]; !seen {
			flows = append(flows, bson.Binary{Subtype: sub, Data: data})
		}
		byFlow[key] = append(byFlow[key], rawID(d))
	}
	return keepOwners(ctx, s.batches, flows, bson.M{bOutcome: bson.M{"$exists": false}}, byFlow, "the open batches of finished jobs")
}
