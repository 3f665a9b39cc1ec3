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

// The archive of finished jobs (spi.JobArchiver): the archive collection
// holds the jobs' whole documents, properties and state included. Without
// multi-document transactions a move is an insert into the archive, then
// a delete of the live document guarded by its status: a crash between
// the two leaves the job in both, and the next run finds the archive copy
// (a duplicate key) and deletes the live one; a DLQ retry that wins the
// race keeps the job live, and its archive copy is removed.

var _ spi.JobArchiver = (*Store)(nil)

var terminalStatuses = bson.A{string(spi.StatusSucceeded), string(spi.StatusFailed), string(spi.StatusCancelled)}

// ArchiveJobs implements [spi.JobArchiver].
func (s *Store) ArchiveJobs(ctx context.Context, before time.Time, limit int) (int, error) {
	done, err := s.enter()
	if err != nil {
		return 0, err
	}
	defer done()
	cur, err := s.jobs.Find(ctx, bson.M{fStatus: bson.M{"$in": terminalStatuses}, fFinished: bson.M{"$lt": timeUS(before)}},
		options.Find().SetSort(bson.D{{Key: fID, Value: 1}}).SetLimit(int64(max(limit, 1))))
	if err != nil {
		return 0, fail("archive jobs", err)
	}
	var docs []bson.Raw
	for cur.Next(ctx) {
		docs = append(docs, append(bson.Raw(nil), cur.Current...))
	}
	_ = cur.Close(context.WithoutCancel(ctx))
	if err := cur.Err(); err != nil {
		return 0, fail("archive jobs", err)
	}
	moved := 0
	for _, d := range docs {
		id := d.Lookup(fID)
		if _, err := s.archive.InsertOne(ctx, d); err != nil && !mongo.IsDuplicateKeyError(err) {
			return moved, fail("archive jobs", err)
		}
		r, err := s.jobs.DeleteOne(ctx, bson.M{fID: id, fStatus: bson.M{"$in": terminalStatuses}})
		if err != nil {
			return moved, fail("archive jobs", err)
		}
		if r.DeletedCount == 0 { // retried meanwhile: it stays live
			if _, err := s.archive.DeleteOne(ctx, bson.M{fID: id}); err != nil {
				return moved, fail("archive jobs", err)
			}
			continue
		}
		moved++
	}
	return moved, nil
}

// GetArchivedJob implements [spi.JobArchiver].
func (s *Store) GetArchivedJob(ctx context.Context, id uuid.UUID) (*spi.Job, error) {
	done, err := s.enter()
	if err != nil {
		return nil, err
	}
	defer done()
	raw, err := s.archive.FindOne(ctx, bson.M{fID: idValue(id)}).Raw()
	if errors.Is(err, mongo.ErrNoDocuments) {
		return nil, fmt.Errorf("%w: %s (not archived)", spi.ErrNotFound, id)
	}
	if err != nil {
		return nil, fail("get archived job", err)
	}
	j, err := decodeJob(raw)
	if err != nil {
		return nil, fail("get archived job", err)
	}
	var props struct {
		Entries []string `bson:"pv"`
	}
	if err := bson.Unmarshal(raw, &props); err != nil {
		return nil, fail("get archived job", err)
	}
	for _, e := range props.Entries {
		if k, v, ok := parsePropEntry(e); ok {
			if j.Properties == nil {
				j.Properties = map[string]string{}
			}
			j.Properties[k] = v
		}
	}
	return j, nil
}

// ListArchivedJobs implements [spi.JobArchiver].
func (s *Store) ListArchivedJobs(ctx context.Context, p spi.ListParams) ([]*spi.Job, uuid.UUID, error) {
	done, err := s.enter()
	if err != nil {
		return nil, uuid.Nil, err
	}
	defer done()
	return listPage(ctx, s.archive, "list archived jobs", p)
}
