package mongodb

import (
	"context"
	"errors"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/ratchet-go/ratchet/sdk/spi"
)

var _ spi.StatsReader = (*Store)(nil)

// statsSort is the order of the counting pipeline: a prefix of the claim
// index (ratchet_claim_task), so that MongoDB answers the $group from that
// index alone (a covered scan, no document read) rather than from a
// collection scan.
var statsSort = bson.D{{Key: fStatus, Value: 1}, {Key: fTask, Value: 1}, {Key: fPriority, Value: 1}}

// JobStats implements [spi.StatsReader]. It counts exactly (Estimated is
// never set) in two reads of the jobs collection, which holds the live jobs
// only (archived jobs are in the archive collection):
//
//   - one aggregation, $sort on (status, task_name, priority) then $group
//     on the three with $sum, which MongoDB serves as a covered scan of the
//     claim index;
//   - one find of the PENDING jobs with scheduled_time at or before now,
//     sorted by scheduled_time, limit 1, projected to scheduled_time: a
//     covered scan of the claim index's PENDING range with a top-1 sort.
//
// Like ListJobs and CountJobs, it sees the jobs of a workflow or batch
// insert still staged (BLOCKED, field stg) as BLOCKED jobs; they are never
// PENDING, so OldestDue does not see them.
func (s *Store) JobStats(ctx context.Context, now time.Time) (spi.JobStats, error) {
	done, err := s.enter()
	if err != nil {
		return spi.JobStats{}, err
	}
	defer done()
	cur, err := s.jobs.Aggregate(ctx, bson.A{
		bson.M{"$sort": statsSort},
		bson.M{"$group": bson.M{
			"_id": bson.M{"s": "$" + fStatus, "t": "$" + fTask, "p": "$" + fPriority},
			"n":   bson.M{"$sum": 1},
		}},
	})
	if err != nil {
		return spi.JobStats{}, fail("job stats", err)
	}
	var rows []struct {
		Key struct {
			Status   string `bson:"s"`
			Task     string `bson:"t"`
			Priority int32  `bson:"p"`
		} `bson:"_id"`
		N int64 `bson:"n"`
	}
	if err := cur.All(ctx, &rows); err != nil {
		return spi.JobStats{}, fail("job stats", err)
	}
	var st spi.JobStats
	for _, r := range rows {
		if r.N <= 0 {
			continue
		}
		st.Counts = append(st.Counts, spi.JobCount{
			Status:   spi.Status(r.Key.Status),
			Task:     r.Key.Task,
			Priority: spi.Priority(r.Key.Priority),
			N:        r.N,
		})
	}
	var due struct {
		Scheduled int64 `bson:"scheduled_time"`
	}
	err = s.jobs.FindOne(ctx,
		bson.M{fStatus: string(spi.StatusPending), fScheduled: bson.M{"$lte": timeUS(now)}},
		options.FindOne().
			SetSort(bson.D{{Key: fScheduled, Value: 1}}).
			SetProjection(bson.M{fID: 0, fScheduled: 1})).Decode(&due)
	switch {
	case errors.Is(err, mongo.ErrNoDocuments):
	case err != nil:
		return spi.JobStats{}, fail("job stats", err)
	default:
		st.OldestDue = usTime(due.Scheduled)
	}
	return st, nil
}
