package mongodb

import (
	"context"
	"errors"
	"fmt"

	"github.com/google/uuid"
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/ratchet-go/ratchet/sdk/spi"
)

// The lists of workflows and batches (spi.WorkflowLister,
// spi.BatchLister). A workflow has no document of its own: its ids are
// found by a loose scan of the workflow index (ratchet_workflow), one
// probe per workflow, so that a batch of a million children costs one
// probe; the batches among them are dropped. Each listed workflow's first
// job is one more probe, and the page's counts one aggregation. The jobs
// of an insert not yet committed (staged) are not counted; a workflow of
// staged jobs only is not listed.

var (
	_ spi.WorkflowLister = (*Store)(nil)
	_ spi.BatchLister    = (*Store)(nil)
)

// live is the filter of the committed jobs of the workflows ids.
func live(ids []uuid.UUID) bson.M {
	return bson.M{fWorkflow: bson.M{"$in": idValues(ids)}, fStaged: bson.M{"$exists": false}}
}

// ListWorkflows returns a page of workflows, newest first. It implements
// [spi.WorkflowLister].
func (s *Store) ListWorkflows(ctx context.Context, p spi.SummaryParams) ([]spi.WorkflowSummary, uuid.UUID, error) {
	done, err := s.enter()
	if err != nil {
		return nil, uuid.Nil, err
	}
	defer done()
	limit := p.PageSize()
	ids, err := s.workflowIDs(ctx, p.Before, limit+1)
	if err != nil {
		return nil, uuid.Nil, fail("list workflows", err)
	}
	next := uuid.Nil
	if len(ids) > limit {
		ids, next = ids[:limit], ids[limit-1]
	}
	if len(ids) == 0 {
		return nil, uuid.Nil, nil
	}
	counts, err := s.flowCounts(ctx, ids)
	if err != nil {
		return nil, uuid.Nil, fail("list workflows", err)
	}
	out := make([]spi.WorkflowSummary, 0, len(ids))
	for _, id := range ids {
		if len(counts[id]) == 0 {
			continue
		}
		var root struct {
			Task    string `bson:"task_name"`
			Created int64  `bson:"created_time"`
		}
		err := s.jobs.FindOne(ctx, live([]uuid.UUID{id}), options.FindOne().
			SetSort(bson.D{{Key: fID, Value: 1}}).SetProjection(bson.M{fTask: 1, fCreated: 1})).Decode(&root)
		if errors.Is(err, mongo.ErrNoDocuments) {
			continue
		}
		if err != nil {
			return nil, uuid.Nil, fail("list workflows", fmt.Errorf("first job of workflow %s: %w", id, err))
		}
		out = append(out, spi.WorkflowSummary{ID: id, RootTask: root.Task, CreatedAt: usTime(root.Created), Counts: counts[id]})
	}
	return out, next, nil
}

// workflowIDs returns up to n ids of workflows below before (the zero id:
// every one) in descending order, the batches left out.
func (s *Store) workflowIDs(ctx context.Context, before uuid.UUID, n int) ([]uuid.UUID, error) {
	if before == uuid.Nil {
		before = uuid.Max
	}
	var ids []uuid.UUID
	for exhausted := false; !exhausted && len(ids) < n; {
		var cand []uuid.UUID
		for len(cand) < n-len(ids) {
			var d struct {
				Workflow bson.Binary `bson:"workflow_id"`
			}
			err := s.jobs.FindOne(ctx, bson.M{fWorkflow: bson.M{"$lt": idValue(before)}}, options.FindOne().
				SetSort(bson.D{{Key: fWorkflow, Value: -1}}).SetProjection(bson.M{fWorkflow: 1})).Decode(&d)
			if errors.Is(err, mongo.ErrNoDocuments) {
				exhausted = true
				break
			}
			if err != nil {
				return nil, err
			}
			id, err := binaryID(d.Workflow)
			if err != nil {
				return nil, fmt.Errorf("%w: workflow_id: %v", spi.ErrCorruptJob, err)
			}
			cand, before = append(cand, id), id
		}
		if len(cand) == 0 {
			break
		}
		cur, err := s.batches.Find(ctx, bson.M{fID: bson.M{"$in": idValues(cand)}}, options.Find().SetProjection(bson.M{fID: 1}))
		if err != nil {
			return nil, err
		}
		var found []struct {
			ID bson.Binary `bson:"_id"`
		}
		if err := cur.All(ctx, &found); err != nil {
			return nil, err
		}
		batch := make(map[uuid.UUID]bool, len(found))
		for _, f := range found {
			if id, err := binaryID(f.ID); err == nil {
				batch[id] = true
			}
		}
		for _, id := range cand {
			if !batch[id] {
				ids = append(ids, id)
			}
		}
	}
	return ids, nil
}

// flowCounts counts the committed jobs of each workflow (or batch) of ids
// by status, in one aggregation.
func (s *Store) flowCounts(ctx context.Context, ids []uuid.UUID) (map[uuid.UUID]map[spi.Status]int, error) {
	cur, err := s.jobs.Aggregate(ctx, bson.A{
		bson.M{"$match": live(ids)},
		bson.M{"$group": bson.M{"_id": bson.M{"w": "$" + fWorkflow, "s": "$" + fStatus}, "n": bson.M{"$sum": 1}}},
	})
	if err != nil {
		return nil, err
	}
	var rows []struct {
		Key struct {
			Workflow bson.Binary `bson:"w"`
			Status   string      `bson:"s"`
		} `bson:"_id"`
		N int64 `bson:"n"`
	}
	if err := cur.All(ctx, &rows); err != nil {
		return nil, err
	}
	out := make(map[uuid.UUID]map[spi.Status]int, len(ids))
	for _, id := range ids {
		out[id] = map[spi.Status]int{}
	}
	for _, r := range rows {
		id, err := binaryID(r.Key.Workflow)
		if err != nil {
			return nil, fmt.Errorf("%w: workflow_id: %v", spi.ErrCorruptJob, err)
		}
		if m := out[id]; m != nil {
			m[spi.Status(r.Key.Status)] += int(r.N)
		}
	}
	return out, nil
}

// ListBatches returns a page of batches, newest first, with the counts of
// their committed children (a chunk committed but not yet activated is
// counted once CountBatch or the finisher activates it). It implements
// [spi.BatchLister].
func (s *Store) ListBatches(ctx context.Context, p spi.SummaryParams) ([]spi.BatchSummary, uuid.UUID, error) {
	done, err := s.enter()
	if err != nil {
		return nil, uuid.Nil, err
	}
	defer done()
	limit := p.PageSize()
	before := p.Before
	if before == uuid.Nil {
		before = uuid.Max
	}
	cur, err := s.batches.Find(ctx, bson.M{fID: bson.M{"$lt": idValue(before)}},
		options.Find().SetSort(bson.D{{Key: fID, Value: -1}}).SetLimit(int64(limit+1)))
	if err != nil {
		return nil, uuid.Nil, fail("list batches", err)
	}
	var docs []batchDoc
	if err := cur.All(ctx, &docs); err != nil {
		return nil, uuid.Nil, fail("list batches", err)
	}
	more := len(docs) > limit
	if more {
		docs = docs[:limit]
	}
	out := make([]spi.BatchSummary, 0, len(docs))
	ids := make([]uuid.UUID, 0, len(docs))
	for i := range docs {
		b, err := docs[i].batch()
		if err != nil {
			return nil, uuid.Nil, fail("list batches", err)
		}
		out = append(out, spi.BatchSummary{Batch: b})
		ids = append(ids, b.ID)
	}
	if len(out) == 0 {
		return nil, uuid.Nil, nil
	}
	next := uuid.Nil
	if more {
		next = ids[limit-1]
	}
	counts, err := s.flowCounts(ctx, ids)
	if err != nil {
		return nil, uuid.Nil, fail("list batches", err)
	}
	for i := range out {
		out[i].Counts = counts[ids[i]]
	}
	return out, next, nil
}
