package mongodb

import (
	"context"

	"github.com/google/uuid"
	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/ratchet-go/ratchet/sdk/spi"
)

var _ spi.JobDeleter = (*Store)(nil)

// DeleteJobs implements [spi.JobDeleter]: the finished jobs among ids that
// the archive would move (see parentsOfLive and openBatchChildren) are
// deleted, each by a delete guarded by its status (a DLQ retry that wins
// the race keeps the job), then their log lines. A job document holds its
// tags, properties, state and signal wait, which go with it.
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
	cur, err := s.jobs.Find(ctx, bson.M{fID: bson.M{"$in": idValues(ids)}, fStatus: bson.M{"$in": terminalStatuses}})
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
	keep, err := s.parentsOfLive(ctx, docs)
	if err != nil {
		return nil, fail("delete jobs", err)
	}
	inBatch, err := s.openBatchChildren(ctx, docs)
	if err != nil {
		return nil, fail("delete jobs", err)
	}
	gone := map[string]bool{}
	for _, d := range docs {
		if keep[rawID(d)] || inBatch[rawID(d)] {
			continue
		}
		id := d.Lookup(fID)
		r, err := s.jobs.DeleteOne(ctx, bson.M{fID: id, fStatus: bson.M{"$in": terminalStatuses}})
		if err != nil {
			return nil, fail("delete jobs", err)
		}
		if r.DeletedCount == 0 {
			continue // retried meanwhile: it stays
		}
		if _, err := s.logs.DeleteMany(ctx, bson.M{"job": id}); err != nil {
			return nil, fail("delete jobs", err)
		}
		gone[rawID(d)] = true
	}
	for i, id := range ids {
		out[i] = gone[string(id[:])]
	}
	return out, nil
}
