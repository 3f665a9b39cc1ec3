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

var terminalStatuses = bson.A{string(spi.StatusSucceeded), string(spi.StatusFailed), string(spi.StatusCancelled), string(spi.StatusSkipped)}

// ArchiveJobs implements [spi.JobArchiver]. A job with a dependent that has
// not finished stays live (a child can always read its parents), and so
// does a child of a batch that has not ended (so that the batch's end sees
// them all): the candidates are read a page at a time in id order, so such
// jobs do not hold back the jobs after them.
func (s *Store) ArchiveJobs(ctx context.Context, before time.Time, limit int) (int, error) {
	done, err := s.enter()
	if err != nil {
		return 0, err
	}
	defer done()
	limit = max(limit, 1)
	moved := 0
	after := idValue(uuid.Nil)
	for moved < limit {
		docs, err := s.archiveCandidates(ctx, before, after, limit-moved)
		if err != nil {
			return moved, fail("archive jobs", err)
		}
		if len(docs) == 0 {
			break
		}
		sub, data := docs[len(docs)-1].Lookup(fID).Binary()
		after = bson.Binary{Subtype: sub, Data: data}
		docs, err = s.leavable(ctx, docs)
		if err != nil {
			return moved, fail("archive jobs", err)
		}
		for _, d := range docs {
			id := d.Lookup(fID)
			if _, err := s.archive.InsertOne(ctx, d); err != nil && !mongo.IsDuplicateKeyError(err) {
				return moved, fail("archive jobs", err)
			}
			gone, err := s.deleteFinished(ctx, id)
			if err != nil {
				return moved, fail("archive jobs", err)
			}
			if !gone { // retried meanwhile: it stays live
				if _, err := s.archive.DeleteOne(ctx, bson.M{fID: id}); err != nil {
					return moved, fail("archive jobs", err)
				}
				continue
			}
			moved++
		}
	}
	return moved, nil
}

// archiveCandidates reads up to n finished jobs, whole, finished before
// before, with ids above after, in id order.
func (s *Store) archiveCandidates(ctx context.Context, before time.Time, after bson.Binary, n int) ([]bson.Raw, error) {
	cur, err := s.jobs.Find(ctx, bson.M{fStatus: bson.M{"$in": terminalStatuses}, fFinished: bson.M{"$lt": timeUS(before)}, fID: bson.M{"$gt": after}},
		options.Find().SetSort(bson.D{{Key: fID, Value: 1}}).SetLimit(int64(n)))
	if err != nil {
		return nil, err
	}
	defer func() { _ = cur.Close(context.WithoutCancel(ctx)) }()
	var docs []bson.Raw
	for cur.Next(ctx) {
		docs = append(docs, append(bson.Raw(nil), cur.Current...))
	}
	return docs, cur.Err()
}

// leavable returns those of docs (finished job documents, with their id,
// kids and workflow_id at least) that may leave the live jobs, archived or
// deleted: a job with a dependent that has not finished stays (a child can
// always read its parents), and so does a child of a batch that has not
// ended (so that the batch's end sees them all).
func (s *Store) leavable(ctx context.Context, docs []bson.Raw) ([]bson.Raw, error) {
	keep, err := s.parentsOfLive(ctx, docs)
	if err != nil {
		return nil, err
	}
	inBatch, err := s.openBatchChildren(ctx, docs)
	if err != nil {
		return nil, err
	}
	var out []bson.Raw
	for _, d := range docs {
		if !keep[rawID(d)] && !inBatch[rawID(d)] {
			out = append(out, d)
		}
	}
	return out, nil
}

// deleteFinished deletes the live document of job id (which holds its
// tags, properties, state, dependencies and signal wait) if the job is
// still finished, and reports whether it did: a DLQ retry that came first
// keeps the job live.
func (s *Store) deleteFinished(ctx context.Context, id bson.RawValue) (bool, error) {
	r, err := s.jobs.DeleteOne(ctx, bson.M{fID: id, fStatus: bson.M{"$in": terminalStatuses}})
	if err != nil {
		return false, err
	}
	return r.DeletedCount == 1, nil
}

// rawID is the bytes of a job document's id, as a map key.
func rawID(d bson.Raw) string {
	_, data, _ := d.Lookup(fID).BinaryOK()
	return string(data)
}

// parentsOfLive returns the raw ids of the jobs among docs that have a
// dependent that has not finished.
func (s *Store) parentsOfLive(ctx context.Context, docs []bson.Raw) (map[string]bool, error) {
	parentOf := map[string][]string{} // raw kid id -> raw parent ids
	var kids bson.A
	for _, d := range docs {
		for _, k := range kidsOf(d) {
			key := string(k.Data)
			if _, ok := parentOf[key]; !ok {
				kids = append(kids, k)
			}
			parentOf[key] = append(parentOf[key], rawID(d))
		}
	}
	return keepOwners(ctx, s.jobs, kids, bson.M{fStatus: bson.M{"$nin": terminalStatuses}}, parentOf, "the dependents of finished jobs")
}

// keepOwners reads which documents of coll among ids also match cond,
// and returns the raw ids that owners maps each found one to: the jobs
// the archive keeps because of them (what names the read in errors).
func keepOwners(ctx context.Context, coll *mongo.Collection, ids bson.A, cond bson.M, owners map[string][]string, what string) (map[string]bool, error) {
	keep := map[string]bool{}
	if len(ids) == 0 {
		return keep, nil
	}
	filter := bson.M{fID: bson.M{"$in": ids}}
	for k, v := range cond {
		filter[k] = v
	}
	cur, err := coll.Find(ctx, filter, options.Find().SetProjection(bson.M{fID: 1}))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", what, err)
	}
	defer func() { _ = cur.Close(context.WithoutCancel(ctx)) }()
	for cur.Next(ctx) {
		for _, o := range owners[rawID(cur.Current)] {
			keep[o] = true
		}
	}
	return keep, cur.Err()
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

// PurgeArchivedJobs implements [spi.JobArchiver]: it reads the ids of the
// archived jobs that finished first, deletes their log lines, then their
// documents (which hold their tags, properties and state). A crash between
// the two leaves the jobs archived without their lines, and the next run
// deletes them.
func (s *Store) PurgeArchivedJobs(ctx context.Context, before time.Time, limit int) (int, error) {
	done, err := s.enter()
	if err != nil {
		return 0, err
	}
	defer done()
	cur, err := s.archive.Find(ctx, bson.M{fFinished: bson.M{"$lt": timeUS(before)}}, options.Find().
		SetSort(bson.D{{Key: fFinished, Value: 1}, {Key: fID, Value: 1}}).SetLimit(int64(max(limit, 1))).SetProjection(bson.M{fID: 1}))
	if err != nil {
		return 0, fail("purge archived jobs", err)
	}
	var docs []struct {
		ID bson.Binary `bson:"_id"`
	}
	if err := cur.All(ctx, &docs); err != nil {
		return 0, fail("purge archived jobs", err)
	}
	if len(docs) == 0 {
		return 0, nil
	}
	ids := make(bson.A, len(docs))
	for i, d := range docs {
		ids[i] = d.ID
	}
	if _, err := s.logs.DeleteMany(ctx, bson.M{"job": bson.M{"$in": ids}}); err != nil {
		return 0, fail("purge archived jobs", err)
	}
	if _, err := s.attempts.DeleteMany(ctx, bson.M{"job": bson.M{"$in": ids}}); err != nil {
		return 0, fail("purge archived jobs", err)
	}
	r, err := s.archive.DeleteMany(ctx, bson.M{fID: bson.M{"$in": ids}})
	if err != nil {
		return 0, fail("purge archived jobs", err)
	}
	return int(r.DeletedCount), nil
}
