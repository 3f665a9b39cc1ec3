package mongodb

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/ratchet-go/ratchet/sdk/spi"
)

var _ spi.BulkManager = (*Store)(nil)

// RetryFailedJobs implements [spi.BulkManager]. It reads the FAILED jobs
// among ids with one find; when none of them has dependents, it retries
// them with one updateMany guarded by the status (each document's update
// is atomic; there are no multi-document transactions, as on FerretDB).
// When one has dependents (whose revive may block a child that the same
// call retries), it retries each FAILED job as RetryFailedJob does, in the
// callers' order. A job that another writer changed between the find and
// the updateMany is not retried; the answer of each job is then read back
// (PENDING, due at now, no attempts: as the retry left it).
func (s *Store) RetryFailedJobs(ctx context.Context, ids []uuid.UUID, now time.Time) ([]bool, error) {
	if len(ids) > spi.MaxBulkIDs {
		return nil, fmt.Errorf("mongodb: retry %d jobs: at most %d ids a call (spi.MaxBulkIDs)", len(ids), spi.MaxBulkIDs)
	}
	done, err := s.enter()
	if err != nil {
		return nil, err
	}
	defer done()
	docs, err := s.bulkFind(ctx, ids, bson.M{fStatus: string(spi.StatusFailed)}, bson.M{fID: 1, fKids: 1})
	if err != nil {
		return nil, fail("retry jobs", err)
	}
	changed := map[string]bool{}
	var plain []bson.Binary
	flow := false
	for _, d := range docs {
		if len(kidsOf(d)) > 0 {
			flow = true
		}
		_, data, _ := d.Lookup(fID).BinaryOK()
		plain = append(plain, bson.Binary{Subtype: bson.TypeBinaryUUID, Data: data})
	}
	switch {
	case len(docs) == 0:
	case flow:
		found := map[string]bool{}
		for _, d := range docs {
			found[rawID(d)] = true
		}
		for _, id := range ids {
			if !found[string(id[:])] || changed[string(id[:])] {
				continue
			}
			err := s.retryFailed(ctx, id, now)
			if err != nil && !errors.Is(err, spi.ErrInvalidState) && !errors.Is(err, spi.ErrNotFound) {
				return nil, err
			}
			changed[string(id[:])] = err == nil
		}
	default:
		r, err := s.jobs.UpdateMany(ctx, bson.M{fID: bson.M{"$in": plain}, fStatus: string(spi.StatusFailed)}, retryUpdate(now))
		if err != nil {
			return nil, fail("retry jobs", err)
		}
		if err := s.bulkAnswers(ctx, plain, r.MatchedCount, changed,
			bson.M{fStatus: string(spi.StatusPending), fScheduled: timeUS(now), fAttempts: int64(0)}); err != nil {
			return nil, fail("retry jobs", err)
		}
	}
	return bulkOut(ids, changed), nil
}

// CancelJobs implements [spi.BulkManager]. It reads the PENDING, BLOCKED,
// WAITING and RUNNING jobs among ids with one find; the PENDING ones without
// dependents or an unresolved wait are cancelled by one updateMany guarded
// by the status (nothing else changes them, and they change nothing else),
// the others each as CancelJob does, in the callers' order (cancelling a
// parent may release a child that the same call cancels next). As for
// RetryFailedJobs, the answers of a updateMany that another writer raced
// are read back (CANCELLED, finished at now).
func (s *Store) CancelJobs(ctx context.Context, ids []uuid.UUID, now time.Time) ([]bool, error) {
	if len(ids) > spi.MaxBulkIDs {
		return nil, fmt.Errorf("mongodb: cancel %d jobs: at most %d ids a call (spi.MaxBulkIDs)", len(ids), spi.MaxBulkIDs)
	}
	done, err := s.enter()
	if err != nil {
		return nil, err
	}
	defer done()
	docs, err := s.bulkFind(ctx, ids,
		bson.M{fStatus: bson.M{"$in": bson.A{string(spi.StatusPending), string(spi.StatusBlocked), string(spi.StatusWaiting), string(spi.StatusRunning)}}},
		bson.M{fID: 1, fStatus: 1, fKids: 1, fSig: 1})
	if err != nil {
		return nil, fail("cancel jobs", err)
	}
	changed := map[string]bool{}
	var plain []bson.Binary
	other := map[string]bool{}
	for _, d := range docs {
		st, _ := d.Lookup(fStatus).StringValueOK()
		_, hasWait := d.Lookup(fSig).DocumentOK()
		_, resolved := d.Lookup(fSig, "o").StringValueOK()
		if spi.Status(st) == spi.StatusPending && len(kidsOf(d)) == 0 && (!hasWait || resolved) {
			_, data, _ := d.Lookup(fID).BinaryOK()
			plain = append(plain, bson.Binary{Subtype: bson.TypeBinaryUUID, Data: data})
		} else {
			other[rawID(d)] = true
		}
	}
	if len(plain) > 0 {
		r, err := s.jobs.UpdateMany(ctx, bson.M{fID: bson.M{"$in": plain}, fStatus: string(spi.StatusPending), "$or": noOpenWait},
			cancelUpdate(now))
		if err != nil {
			return nil, fail("cancel jobs", err)
		}
		if err := s.bulkAnswers(ctx, plain, r.MatchedCount, changed,
			bson.M{fStatus: string(spi.StatusCancelled), fFinished: timeUS(now)}); err != nil {
			return nil, fail("cancel jobs", err)
		}
	}
	for _, id := range ids {
		k := string(id[:])
		if !other[k] || changed[k] {
			continue
		}
		err := s.cancel(ctx, id, now)
		if err != nil && !errors.Is(err, spi.ErrInvalidState) && !errors.Is(err, spi.ErrNotFound) {
			return nil, err
		}
		changed[k] = err == nil
	}
	return bulkOut(ids, changed), nil
}

// bulkFind reads the documents, with projection, of the jobs among ids
// that match filter.
func (s *Store) bulkFind(ctx context.Context, ids []uuid.UUID, filter, projection bson.M) ([]bson.Raw, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	filter[fID] = bson.M{"$in": idValues(ids)}
	cur, err := s.jobs.Find(ctx, filter, options.Find().SetProjection(projection))
	if err != nil {
		return nil, err
	}
	var docs []bson.Raw
	for cur.Next(ctx) {
		docs = append(docs, append(bson.Raw(nil), cur.Current...))
	}
	err = cur.Err()
	_ = cur.Close(context.WithoutCancel(ctx))
	return docs, err
}

// bulkAnswers records in changed the jobs of plain that an updateMany
// changed: all of them when it matched as many; else (another writer came
// between the find and the update) those that now match after, the state
// the update leaves.
func (s *Store) bulkAnswers(ctx context.Context, plain []bson.Binary, matched int64, changed map[string]bool, after bson.M) error {
	if matched == int64(len(plain)) {
		for _, b := range plain {
			changed[string(b.Data)] = true
		}
		return nil
	}
	after[fID] = bson.M{"$in": plain}
	cur, err := s.jobs.Find(ctx, after, options.Find().SetProjection(bson.M{fID: 1}))
	if err != nil {
		return err
	}
	defer cur.Close(context.WithoutCancel(ctx))
	for cur.Next(ctx) {
		changed[rawID(cur.Current)] = true
	}
	return cur.Err()
}

// bulkOut is, for each of ids in order, whether changed holds it.
func bulkOut(ids []uuid.UUID, changed map[string]bool) []bool {
	out := make([]bool, len(ids))
	for i, id := range ids {
		out[i] = changed[string(id[:])]
	}
	return out
}
