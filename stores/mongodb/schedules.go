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

// The recurring schedules (spi.ScheduleStore): one document per schedule in
// the schedules collection, _id its id, every write a compare-and-set on
// its version. A fire cannot insert jobs and advance the schedule in one
// atomic write here (no multi-document transactions), so it inserts the
// slots' jobs first, under their unique idempotency keys, then advances
// the schedule if its version has not moved: a fire that loses the race
// afterwards leaves only jobs of slots that are either its winner's
// duplicates or not yet fired, whose later fire is then their duplicate.
// Each slot has one job either way.

var _ spi.ScheduleStore = (*Store)(nil)

// schedDoc is a schedule's document.
type schedDoc struct {
	ID         string       `bson:"_id"`
	Task       string       `bson:"task"`
	Definition bson.Binary  `bson:"def"`
	Paused     bool         `bson:"paused"`
	Next       int64        `bson:"next"`
	Last       *int64       `bson:"last,omitempty"`
	LastJob    *bson.Binary `bson:"last_job,omitempty"`
	Skipped    int64        `bson:"skipped"`
	Version    int64        `bson:"version"`
	Created    int64        `bson:"created"`
	Updated    int64        `bson:"updated"`
}

var schedDueIndex = bson.D{{Key: "paused", Value: 1}, {Key: "next", Value: 1}, {Key: "_id", Value: 1}}

func (d schedDoc) row() (spi.ScheduleRow, error) {
	r := spi.ScheduleRow{ID: d.ID, TaskName: d.Task, Definition: append([]byte(nil), d.Definition.Data...), Paused: d.Paused,
		NextFireAt: usTime(d.Next), Skipped: d.Skipped, Version: d.Version, CreatedAt: usTime(d.Created), UpdatedAt: usTime(d.Updated)}
	if d.Last != nil {
		r.LastFireAt = usTime(*d.Last)
	}
	if d.LastJob != nil {
		id, err := binaryID(*d.LastJob)
		if err != nil {
			return r, fmt.Errorf("schedule %q: last job: %w", d.ID, err)
		}
		r.LastJobID = id
	}
	return r, nil
}

// CreateSchedule writes a new schedule at version 1; false when the id
// exists. It implements [spi.ScheduleStore].
func (s *Store) CreateSchedule(ctx context.Context, r spi.ScheduleRow) (bool, error) {
	if err := spi.ValidateScheduleRow(r); err != nil {
		return false, fail("create schedule", err)
	}
	done, err := s.enter()
	if err != nil {
		return false, err
	}
	defer done()
	_, err = s.scheds.InsertOne(ctx, schedDoc{ID: r.ID, Task: r.TaskName, Definition: bson.Binary{Data: r.Definition}, Paused: r.Paused,
		Next: timeUS(r.NextFireAt), Version: 1, Created: timeUS(r.CreatedAt), Updated: timeUS(r.UpdatedAt)})
	switch {
	case mongo.IsDuplicateKeyError(err):
		return false, nil
	case err != nil:
		return false, fail("create schedule", err)
	}
	return true, nil
}

// UpdateSchedule replaces the schedule's task, definition, pause flag and
// next fire time if its version is still expected. It implements
// [spi.ScheduleStore].
func (s *Store) UpdateSchedule(ctx context.Context, r spi.ScheduleRow, expected int64) (bool, error) {
	if err := spi.ValidateScheduleRow(r); err != nil {
		return false, fail("update schedule", err)
	}
	done, err := s.enter()
	if err != nil {
		return false, err
	}
	defer done()
	res, err := s.scheds.UpdateOne(ctx, bson.M{"_id": r.ID, "version": expected}, bson.M{
		"$set": bson.M{"task": r.TaskName, "def": bson.Binary{Data: r.Definition}, "paused": r.Paused,
			"next": timeUS(r.NextFireAt), "updated": timeUS(r.UpdatedAt)},
		"$inc": bson.M{"version": int64(1)}})
	if err != nil {
		return false, fail("update schedule", err)
	}
	return res.MatchedCount == 1, nil
}

// GetSchedule returns the schedule of id. It implements
// [spi.ScheduleStore].
func (s *Store) GetSchedule(ctx context.Context, id string) (spi.ScheduleRow, bool, error) {
	done, err := s.enter()
	if err != nil {
		return spi.ScheduleRow{}, false, err
	}
	defer done()
	var d schedDoc
	err = s.scheds.FindOne(ctx, bson.M{"_id": id}).Decode(&d)
	switch {
	case errors.Is(err, mongo.ErrNoDocuments):
		return spi.ScheduleRow{}, false, nil
	case err != nil:
		return spi.ScheduleRow{}, false, fail("get schedule", err)
	}
	r, err := d.row()
	if err != nil {
		return spi.ScheduleRow{}, false, fail("get schedule", err)
	}
	return r, true, nil
}

// ListSchedules returns up to limit schedules with ids above after, in id
// order. It implements [spi.ScheduleStore].
func (s *Store) ListSchedules(ctx context.Context, after string, limit int) ([]spi.ScheduleRow, error) {
	return s.findSchedules(ctx, "list schedules", bson.M{"_id": bson.M{"$gt": after}}, bson.D{{Key: "_id", Value: 1}}, limit)
}

// DueSchedules returns up to limit unpaused schedules due at now, earliest
// first. It implements [spi.ScheduleStore].
func (s *Store) DueSchedules(ctx context.Context, now time.Time, limit int) ([]spi.ScheduleRow, error) {
	return s.findSchedules(ctx, "due schedules", bson.M{"paused": false, "next": bson.M{"$lte": timeUS(now)}},
		bson.D{{Key: "next", Value: 1}, {Key: "_id", Value: 1}}, limit)
}

func (s *Store) findSchedules(ctx context.Context, op string, filter bson.M, sort bson.D, limit int) ([]spi.ScheduleRow, error) {
	done, err := s.enter()
	if err != nil {
		return nil, err
	}
	defer done()
	cur, err := s.scheds.Find(ctx, filter, options.Find().SetSort(sort).SetLimit(int64(max(limit, 1))))
	if err != nil {
		return nil, fail(op, err)
	}
	var docs []schedDoc
	if err := cur.All(ctx, &docs); err != nil {
		return nil, fail(op, err)
	}
	out := make([]spi.ScheduleRow, 0, len(docs))
	for _, d := range docs {
		r, err := d.row()
		if err != nil {
			return nil, fail(op, err)
		}
		out = append(out, r)
	}
	return out, nil
}

// DeleteSchedule deletes the schedule and its skip records. It implements
// [spi.ScheduleStore].
func (s *Store) DeleteSchedule(ctx context.Context, id string) (bool, error) {
	done, err := s.enter()
	if err != nil {
		return false, err
	}
	defer done()
	res, err := s.scheds.DeleteOne(ctx, bson.M{"_id": id})
	if err != nil {
		return false, fail("delete schedule", err)
	}
	if _, err := s.skips.DeleteMany(ctx, bson.M{"sched": id}); err != nil {
		return false, fail("delete schedule", err)
	}
	return res.DeletedCount == 1, nil
}

// skipDoc is a skip record in the skips collection.
type skipDoc struct {
	Sched string `bson:"sched"`
	From  int64  `bson:"from"`
	To    int64  `bson:"to"`
	Slots int64  `bson:"slots"`
	At    int64  `bson:"at"`
}

// skipOrder reads a schedule's records, the latest first.
var skipOrder = bson.D{{Key: "sched", Value: 1}, {Key: "from", Value: -1}}

// recordSkip writes a fire's skip record once its advance applied (a
// crash in between loses the record, never the count) and, when
// spi.ShedSkipRecords says so, drops those past the latest MaxSkipRecords.
func (s *Store) recordSkip(ctx context.Context, id string, rec spi.SkipRecord) error {
	if _, err := s.skips.InsertOne(ctx, skipDoc{Sched: id, From: timeUS(rec.From), To: timeUS(rec.To), Slots: rec.Slots, At: timeUS(rec.At)}); err != nil {
		return err
	}
	n, err := s.skips.CountDocuments(ctx, bson.M{"sched": id})
	if err != nil || !spi.ShedSkipRecords(n) {
		return err
	}
	var oldest skipDoc
	err = s.skips.FindOne(ctx, bson.M{"sched": id}, options.FindOne().SetSort(skipOrder).SetSkip(spi.MaxSkipRecords-1)).Decode(&oldest)
	if err != nil {
		return err
	}
	_, err = s.skips.DeleteMany(ctx, bson.M{"sched": id, "from": bson.M{"$lt": oldest.From}})
	return err
}

// ScheduleSkips implements [spi.ScheduleStore].
func (s *Store) ScheduleSkips(ctx context.Context, id string, limit int) ([]spi.SkipRecord, error) {
	done, err := s.enter()
	if err != nil {
		return nil, err
	}
	defer done()
	if limit <= 0 {
		limit = 100
	}
	cur, err := s.skips.Find(ctx, bson.M{"sched": id}, options.Find().SetSort(skipOrder).SetLimit(int64(limit)))
	if err != nil {
		return nil, fail("read the skips of schedule "+id, err)
	}
	var docs []skipDoc
	if err := cur.All(ctx, &docs); err != nil {
		return nil, fail("read the skips of schedule "+id, err)
	}
	out := make([]spi.SkipRecord, len(docs))
	for i, d := range docs {
		out[i] = spi.SkipRecord{From: usTime(d.From), To: usTime(d.To), Slots: d.Slots, At: usTime(d.At)}
	}
	return out, nil
}

// FireSchedule inserts f.Jobs and then advances the schedule if it is
// still at f.Version (see the comment at the top of this file). It
// implements [spi.ScheduleStore].
func (s *Store) FireSchedule(ctx context.Context, f spi.ScheduleFire) (bool, []spi.InsertResult, error) {
	if err := spi.ValidateJobs(f.Jobs); err != nil {
		return false, nil, fail("fire schedule "+f.ID, err)
	}
	done, err := s.enter()
	if err != nil {
		return false, nil, err
	}
	defer done()
	var cur schedDoc
	err = s.scheds.FindOne(ctx, bson.M{"_id": f.ID}, options.FindOne().SetProjection(bson.M{"version": 1})).Decode(&cur)
	switch {
	case errors.Is(err, mongo.ErrNoDocuments):
		return false, nil, nil
	case err != nil:
		return false, nil, fail("fire schedule "+f.ID, err)
	case cur.Version != f.Version:
		return false, nil, nil // fired or edited meanwhile: insert nothing
	}
	var res []spi.InsertResult
	if len(f.Jobs) > 0 {
		if res, err = s.insertJobs(ctx, f.Jobs); err != nil {
			return false, nil, err
		}
	}
	set := bson.M{"next": timeUS(f.NextFireAt), "updated": timeUS(f.Now)}
	if len(f.Jobs) > 0 {
		set["last"], set["last_job"] = timeUS(f.LastFireAt), idValue(f.LastJobID)
	}
	u, err := s.scheds.UpdateOne(ctx, bson.M{"_id": f.ID, "version": f.Version},
		bson.M{"$set": set, "$inc": bson.M{"version": int64(1), "skipped": f.Skipped}})
	if err != nil {
		return false, nil, fail("fire schedule "+f.ID, err)
	}
	if u.MatchedCount != 1 {
		return false, nil, nil
	}
	if rec, skipped := f.SkipRecord(); skipped {
		if err := s.recordSkip(ctx, f.ID, rec); err != nil {
			return true, res, fail("fire schedule "+f.ID+": record its skipped slots", err)
		}
	}
	return true, res, nil
}
