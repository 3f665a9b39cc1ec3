package mongodb

import (
	"context"
	"errors"
	"time"

	"github.com/google/uuid"
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/ratchet-go/ratchet/sdk/spi"
)

// The job logs (spi.JobLogStore): one document per line in the logs
// collection, unique by (job, claim, line). Without multi-document
// transactions an append reads the job's claim sequence, then inserts:
// a run that loses its claim in between can still land the lines it
// logged before, always under its own claim sequence (they never mix with
// the next execution's), and two appends of one job at the same instant
// may together pass the per-job bound by the lines of one append. A
// resent line is a duplicate key, skipped.

var _ spi.JobLogStore = (*Store)(nil)

// logDoc is one line.
type logDoc struct {
	Job     bson.Binary `bson:"job"`
	Claim   int64       `bson:"claim"`
	Line    int         `bson:"line"`
	Run     int         `bson:"run"`
	Time    int64       `bson:"t"`
	Level   string      `bson:"level"`
	Message string      `bson:"msg"`
}

// logIndexes returns the indexes of the logs collection: the unique line
// key (reads go in its order) and the retention sweep's time. Fresh models
// each time: the driver writes into their options.
func logIndexes() []mongo.IndexModel {
	return []mongo.IndexModel{
		{Keys: bson.D{{Key: "job", Value: 1}, {Key: "claim", Value: 1}, {Key: "line", Value: 1}},
			Options: options.Index().SetName("ratchet_log_line").SetUnique(true)},
		{Keys: bson.D{{Key: "t", Value: 1}}, Options: options.Index().SetName("ratchet_log_time")},
	}
}

// AppendJobLogs implements [spi.JobLogStore].
func (s *Store) AppendJobLogs(ctx context.Context, appends []spi.LogAppend) ([]bool, error) {
	done, err := s.enter()
	if err != nil {
		return nil, err
	}
	defer done()
	out := make([]bool, len(appends))
	for i, a := range appends {
		var j struct {
			ClaimSeq int64 `bson:"claim_seq"`
		}
		err := s.jobs.FindOne(ctx, bson.M{fID: idValue(a.JobID)}, options.FindOne().SetProjection(bson.M{fClaimSeq: 1})).Decode(&j)
		if errors.Is(err, mongo.ErrNoDocuments) || (err == nil && j.ClaimSeq != a.ClaimSeq) {
			continue
		}
		if err != nil {
			return nil, fail("append job logs", err)
		}
		out[i] = true
		job := idValue(a.JobID)
		have, err := s.logs.CountDocuments(ctx, bson.M{"job": job})
		if err != nil {
			return nil, fail("append job logs", err)
		}
		last := -1
		var top logDoc
		err = s.logs.FindOne(ctx, bson.M{"job": job, "claim": a.ClaimSeq},
			options.FindOne().SetSort(bson.D{{Key: "claim", Value: -1}, {Key: "line", Value: -1}})).Decode(&top)
		switch {
		case err == nil:
			last = top.Line
		case !errors.Is(err, mongo.ErrNoDocuments):
			return nil, fail("append job logs", err)
		}
		lines := spi.LinesToWrite(a, int(have), last)
		if len(lines) == 0 {
			continue
		}
		docs := make([]any, len(lines))
		for k, l := range lines {
			docs[k] = logDoc{Job: job, Claim: l.ClaimSeq, Line: l.Line, Run: l.Run, Time: timeUS(l.Time), Level: l.Level, Message: l.Message}
		}
		if _, err := s.logs.InsertMany(ctx, docs, options.InsertMany().SetOrdered(false)); err != nil && !onlyDuplicates(err) {
			return nil, fail("append job logs", err)
		}
	}
	return out, nil
}

// onlyDuplicates reports whether every write error of a bulk insert is a
// duplicate key.
func onlyDuplicates(err error) bool {
	var bw mongo.BulkWriteException
	if !errors.As(err, &bw) || bw.WriteConcernError != nil || len(bw.WriteErrors) == 0 {
		return false
	}
	for _, we := range bw.WriteErrors {
		if we.Code != 11000 {
			return false
		}
	}
	return true
}

// JobLogs implements [spi.JobLogStore].
func (s *Store) JobLogs(ctx context.Context, jobID uuid.UUID, after spi.LogCursor, limit int) ([]spi.LogLine, error) {
	done, err := s.enter()
	if err != nil {
		return nil, err
	}
	defer done()
	if limit <= 0 {
		limit = 100
	}
	filter := bson.M{"job": idValue(jobID), "$or": bson.A{
		bson.M{"claim": bson.M{"$gt": after.ClaimSeq}},
		bson.M{"claim": after.ClaimSeq, "line": bson.M{"$gt": after.Line}},
	}}
	cur, err := s.logs.Find(ctx, filter, options.Find().
		SetSort(bson.D{{Key: "job", Value: 1}, {Key: "claim", Value: 1}, {Key: "line", Value: 1}}).SetLimit(int64(limit)))
	if err != nil {
		return nil, fail("read the log of job "+jobID.String(), err)
	}
	var docs []logDoc
	if err := cur.All(ctx, &docs); err != nil {
		return nil, fail("read the log of job "+jobID.String(), err)
	}
	out := make([]spi.LogLine, len(docs))
	for i, d := range docs {
		out[i] = spi.LogLine{ClaimSeq: d.Claim, Run: d.Run, Line: d.Line, Time: usTime(d.Time), Level: d.Level, Message: d.Message}
	}
	return out, nil
}

// DeleteJobLogs implements [spi.JobLogStore].
func (s *Store) DeleteJobLogs(ctx context.Context, before time.Time, limit int) (int, error) {
	done, err := s.enter()
	if err != nil {
		return 0, err
	}
	defer done()
	old := bson.M{"t": bson.M{"$lt": timeUS(before)}}
	cur, err := s.logs.Find(ctx, old, options.Find().SetProjection(bson.M{"job": 1}).SetLimit(int64(max(limit, 1))))
	if err != nil {
		return 0, fail("delete old job logs", err)
	}
	var docs []logDoc
	if err := cur.All(ctx, &docs); err != nil {
		return 0, fail("delete old job logs", err)
	}
	if len(docs) == 0 {
		return 0, nil
	}
	jobs := bson.A{}
	seen := map[string]bool{}
	for _, d := range docs {
		if k := string(d.Job.Data); !seen[k] {
			seen[k] = true
			jobs = append(jobs, d.Job)
		}
	}
	r, err := s.logs.DeleteMany(ctx, bson.M{"job": bson.M{"$in": jobs}, "t": old["t"]})
	if err != nil {
		return 0, fail("delete old job logs", err)
	}
	return int(r.DeletedCount), nil
}
