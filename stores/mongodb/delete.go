package mongodb

import (
	"context"

	"github.com/google/uuid"
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/ratchet-go/ratchet/sdk/spi"
)

var _ spi.JobDeleter = (*Store)(nil)

// DeleteJobs implements [spi.JobDeleter]: the finished jobs among ids that
// may leave the live jobs as the archive's do (see leavable) are deleted,
// each by a delete guarded by its status (deleteFinished: a DLQ retry that
// wins the race keeps the job), then their log lines. A job document holds
// its tags, properties, state, dependencies and signal wait, which go with
// it. A crash between a job's delete and its lines' leaves lines of no job,
// which the log retention removes.
func (s *Store) DeleteJobs(ctx context.Context, ids []uuid.UUID) ([]bool, error) {
	done, err := s.enter()
	if err != nil {
		return nil, err
	}
	defer done()
	out := make([]bool, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	cur, err := s.jobs.Find(ctx, bson.M{fID: bson.M{"$in": idValues(ids)}, fStatus: bson.M{"$in": terminalStatuses}},
		options.Find().SetProjection(bson.M{fID: 1, fKids: 1, fWorkflow: 1}))
	if err != nil {
		return nil, fail("delete jobs", err)
	}
	var docs []bson.Raw
	for cur.Next(ctx) {
		docs = append(docs, append(bson.Raw(nil), cur.Current...))
	}
	err = cur.Err()
	_ = cur.Close(context.WithoutCancel(ctx))
	if err != nil {
		return nil, fail("delete jobs", err)
	}
	docs, err = s.leavable(ctx, docs)
	if err != nil {
		return nil, fail("delete jobs", err)
	}
	gone := map[string]bool{}
	for _, d := range docs {
		id := d.Lookup(fID)
		ok, err := s.deleteFinished(ctx, id)
		if err != nil {
			return nil, fail("delete jobs", err)
		}
		if !ok {
			continue // retried meanwhile: it stays
		}
		if _, err := s.logs.DeleteMany(ctx, bson.M{"job": id}); err != nil {
			return nil, fail("delete jobs", err)
		}
		if _, err := s.attempts.DeleteMany(ctx, bson.M{"job": id}); err != nil {
			return nil, fail("delete jobs", err)
		}
		gone[rawID(d)] = true
	}
	for i, id := range ids {
		out[i] = gone[string(id[:])]
	}
	return out, nil
}
