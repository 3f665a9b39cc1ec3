package mongodb

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/ratchet-go/ratchet/sdk/spi"
)

// The attempt records (spi.AttemptStore): one document per run in the
// attempts collection, unique by (job, claim). Without multi-document
// transactions a record is written just after the fenced write that ended
// its run applied, by an upsert that a replay repeats harmlessly: a
// process that dies between the two loses that record (the job's own
// write stands). The run's node and claim time come from the job as the
// fenced write read it.

var _ spi.AttemptStore = (*Store)(nil)

// attemptDoc is one record.
type attemptDoc struct {
	Job      bson.Binary `bson:"job"`
	Claim    int64       `bson:"claim"`
	Node     string      `bson:"node,omitempty"`
	Started  int64       `bson:"start,omitempty"`
	Finished int64       `bson:"end,omitempty"`
	Outcome  string      `bson:"outcome"`
	Error    string      `bson:"err,omitempty"`
}

// attemptIndexes returns the indexes of the attempts collection: the
// unique record key, in whose order reads go. A fresh model each time.
func attemptIndexes() []mongo.IndexModel {
	return []mongo.IndexModel{{Keys: bson.D{{Key: "job", Value: 1}, {Key: "claim", Value: 1}},
		Options: options.Index().SetName("ratchet_attempt").SetUnique(true)}}
}

// JobAttempts implements [spi.AttemptStore].
func (s *Store) JobAttempts(ctx context.Context, id uuid.UUID) ([]spi.Attempt, error) {
	done, err := s.enter()
	if err != nil {
		return nil, err
	}
	defer done()
	cur, err := s.attempts.Find(ctx, bson.M{"job": idValue(id)}, options.Find().SetSort(bson.D{{Key: "claim", Value: 1}}))
	if err != nil {
		return nil, fail("read attempts", err)
	}
	var docs []attemptDoc
	if err := cur.All(ctx, &docs); err != nil {
		return nil, fail("read attempts", err)
	}
	out := make([]spi.Attempt, len(docs))
	for i, d := range docs {
		out[i] = spi.Attempt{JobID: id, ClaimSeq: d.Claim, Node: d.Node, Outcome: spi.AttemptOutcome(d.Outcome), Error: d.Error}
		if d.Started != 0 {
			out[i].StartedAt = usTime(d.Started)
		}
		if d.Finished != 0 {
			out[i].FinishedAt = usTime(d.Finished)
		}
	}
	return out, nil
}

// record writes the attempt record a (an upsert: a replay writes it
// again) and deletes the job's records it outdates
// (spi.AttemptsPruned).
func (s *Store) record(ctx context.Context, a spi.Attempt) error {
	v := idValue(a.JobID)
	d := attemptDoc{Job: v, Claim: a.ClaimSeq, Node: a.Node, Outcome: string(a.Outcome), Error: a.Error}
	if !a.StartedAt.IsZero() {
		d.Started = timeUS(a.StartedAt)
	}
	if !a.FinishedAt.IsZero() {
		d.Finished = timeUS(a.FinishedAt)
	}
	_, err := s.attempts.ReplaceOne(ctx, bson.M{"job": v, "claim": a.ClaimSeq}, d, options.Replace().SetUpsert(true))
	if err != nil {
		return fmt.Errorf("record attempt %d of job %s: %w", a.ClaimSeq, a.JobID, err)
	}
	if cut := spi.AttemptsPruned(a.ClaimSeq); cut > 0 {
		if _, err := s.attempts.DeleteMany(ctx, bson.M{"job": v, "claim": bson.M{"$lte": cut}}); err != nil {
			return fmt.Errorf("prune the attempts of job %s: %w", a.JobID, err)
		}
	}
	return nil
}

// runDoc is what a run's record needs of its RUNNING job as read before
// the write that ends it.
type runDoc struct {
	Owner   string `bson:"owner_node"`
	Claimed int64  `bson:"claimed_time"`
}

// fill returns a with the node and start of the run as r read them,
// where a has none.
func (r runDoc) fill(a spi.Attempt) spi.Attempt {
	if a.Node == "" {
		a.Node = r.Owner
	}
	if a.StartedAt.IsZero() && r.Claimed != 0 {
		a.StartedAt = usTime(r.Claimed)
	}
	return a
}

// recordRun writes the record of the run of job id under claim seq,
// read as r, ended at now with outcome.
func (s *Store) recordRun(ctx context.Context, id uuid.UUID, seq int64, r runDoc, outcome spi.AttemptOutcome, now time.Time) error {
	return s.record(ctx, r.fill(spi.Attempt{JobID: id, ClaimSeq: seq, FinishedAt: now, Outcome: outcome}))
}
