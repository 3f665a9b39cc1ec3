package mongodb

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/ratchet-go/ratchet/sdk/spi"
)

// The start-by sweeper's reads and writes (spi.StartBySweeper): the
// candidates are a range of the property entries' index over
// spi.StartByProperty, of PENDING jobs, in id order (a multikey field
// cannot order them by the one entry); each expiry is one write fenced by
// the status and claim sequence read, its dependents released after it.

var _ spi.StartBySweeper = (*Store)(nil)

// UnstartedJobs implements [spi.StartBySweeper], in id order: the cursor
// carries the last id alone.
func (s *Store) UnstartedJobs(ctx context.Context, before time.Time, after spi.StartByCursor, limit int) ([]*spi.Job, spi.StartByCursor, error) {
	done, err := s.enter()
	if err != nil {
		return nil, spi.StartByCursor{}, err
	}
	defer done()
	limit = max(limit, 1)
	f := bson.M{
		fPropEntries: bson.M{"$gte": propEntry(spi.StartByProperty, ""), "$lt": propEntry(spi.StartByProperty, spi.FormatStartBy(before))},
		fStatus:      string(spi.StatusPending),
	}
	if after.ID != [16]byte{} {
		f[fID] = bson.M{"$gt": idValue(after.ID)}
	}
	cur, err := s.jobs.Find(ctx, f, options.Find().SetProjection(jobProjection).SetSort(bson.D{{Key: fID, Value: 1}}).SetLimit(int64(limit)))
	if err != nil {
		return nil, spi.StartByCursor{}, fail("read unstarted jobs", err)
	}
	defer cur.Close(context.WithoutCancel(ctx))
	var out []*spi.Job
	n := 0
	var last spi.StartByCursor
	for cur.Next(ctx) {
		n++
		if sub, data, ok := cur.Current.Lookup(fID).BinaryOK(); ok {
			if id, err := binaryID(bson.Binary{Subtype: sub, Data: data}); err == nil {
				last = spi.StartByCursor{ID: id}
			}
		}
		j, err := decodeJob(cur.Current)
		if err != nil {
			continue // a corrupt document: a claim fails it
		}
		out = append(out, j)
	}
	if err := cur.Err(); err != nil {
		return nil, spi.StartByCursor{}, fail("read unstarted jobs", err)
	}
	var next spi.StartByCursor
	if n == limit {
		next = last
	}
	return out, next, nil
}

// ExpireJobs implements [spi.StartBySweeper].
func (s *Store) ExpireJobs(ctx context.Context, es []spi.Expiry, now time.Time) ([]bool, error) {
	done, err := s.enter()
	if err != nil {
		return nil, err
	}
	defer done()
	out := make([]bool, len(es))
	for i, e := range es {
		update := updateOf(spi.Failed(spi.StatusPending, e.LastError, now), nil, nil)
		raw, err := s.findOneAndUpdate(ctx, bson.M{fID: idValue(e.JobID), fStatus: string(spi.StatusPending), fClaimSeq: e.ClaimSeq}, update, nil, false, resourceProjection)
		if errors.Is(err, mongo.ErrNoDocuments) {
			continue
		}
		if err != nil {
			return nil, fail("expire jobs", fmt.Errorf("job %s: %w", e.JobID, err))
		}
		out[i] = true
		if kids := kidsOf(raw); len(kids) > 0 {
			if _, err := s.releaseKids(ctx, e.JobID, spi.StatusFailed, kids, now); err != nil {
				return nil, fail("expire jobs", fmt.Errorf("job %s: %w", e.JobID, err))
			}
		}
	}
	return out, nil
}
