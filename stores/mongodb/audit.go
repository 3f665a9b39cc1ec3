package mongodb

import (
	"context"
	"fmt"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/ratchet-go/ratchet/sdk/spi"
)

// The audit log (spi.AuditLog): one document per entry in the audit
// collection, its _id the entry's Seq. The Seq comes from a counter, the
// document auditCounter of the meta collection, advanced by one
// findOneAndUpdate with $inc: a single-document atomic write (FerretDB has
// no multi-document transactions), so every append gets a number of its
// own, above that of every append that returned before it, and a number
// is never given again, even after its entry is deleted. A crash between
// the counter's advance and the insert leaves a gap, never a duplicate.

var _ spi.AuditLog = (*Store)(nil)

// auditCounter is the _id of the audit log's counter in the meta
// collection; its field seq is the last Seq given.
const auditCounter = "audit_seq"

// auditDoc is one entry.
type auditDoc struct {
	Seq    int64  `bson:"_id"`
	Time   int64  `bson:"t"`
	Actor  string `bson:"actor"`
	Action string `bson:"action"`
	Target string `bson:"target,omitempty"`
	Count  int64  `bson:"count"`
	Detail string `bson:"detail,omitempty"`
}

// auditIndexes returns the indexes of the audit collection besides _id
// (the listing's, newest first): the deletion by age reads the oldest
// entries by (t, _id). A fresh model each time: the driver writes into its
// options.
func auditIndexes() []mongo.IndexModel {
	return []mongo.IndexModel{
		{Keys: bson.D{{Key: "t", Value: 1}, {Key: "_id", Value: 1}}, Options: options.Index().SetName("ratchet_audit_time")},
	}
}

// AppendAudit checks e, takes the next Seq from the counter and inserts
// the entry. An entry with a zero Time gets the wall clock's (the
// interface takes no now; the memory store does the same). It implements
// [spi.AuditLog].
func (s *Store) AppendAudit(ctx context.Context, e spi.AuditEntry) (spi.AuditEntry, error) {
	const op = "append audit entry"
	if err := e.Validate(); err != nil {
		return spi.AuditEntry{}, fail(op, err)
	}
	if e.Time.IsZero() {
		e.Time = time.Now()
	}
	e.Time = e.Time.UTC().Truncate(time.Microsecond)
	done, err := s.enter()
	if err != nil {
		return spi.AuditEntry{}, err
	}
	defer done()
	if e.Seq, err = s.nextAuditSeq(ctx); err != nil {
		return spi.AuditEntry{}, fail(op, err)
	}
	d := auditDoc{Seq: e.Seq, Time: timeUS(e.Time), Actor: e.Actor, Action: e.Action, Target: e.Target, Count: e.Count, Detail: e.Detail}
	if _, err := s.audit.InsertOne(ctx, d); err != nil {
		return spi.AuditEntry{}, fail(op, fmt.Errorf("insert entry %d: %w", e.Seq, err))
	}
	return e, nil
}

// nextAuditSeq advances the counter and returns its new value. The
// counter is created by the first append (an upsert); when two first
// appends race, the loser's upsert fails with a duplicate key and its
// second try finds the counter.
func (s *Store) nextAuditSeq(ctx context.Context) (int64, error) {
	o := options.FindOneAndUpdate().SetUpsert(true).SetReturnDocument(options.After)
	var c struct {
		Seq int64 `bson:"seq"`
	}
	var err error
	for range 2 {
		err = s.meta.FindOneAndUpdate(ctx, bson.M{"_id": auditCounter}, bson.M{"$inc": bson.M{"seq": int64(1)}}, o).Decode(&c)
		if !mongo.IsDuplicateKeyError(err) {
			break
		}
	}
	if err != nil {
		return 0, fmt.Errorf("advance the counter %s: %w", auditCounter, err)
	}
	if c.Seq <= 0 {
		return 0, fmt.Errorf("the counter %s holds %d, not a positive number", auditCounter, c.Seq)
	}
	return c.Seq, nil
}

// ListAudit returns up to limit (zero or less: spi.DefaultAuditPage)
// entries whose Seq is below before (zero or less: every entry), newest
// first, read backwards along _id. It implements [spi.AuditLog].
func (s *Store) ListAudit(ctx context.Context, before int64, limit int) ([]spi.AuditEntry, error) {
	const op = "list the audit log"
	if limit <= 0 {
		limit = spi.DefaultAuditPage
	}
	done, err := s.enter()
	if err != nil {
		return nil, err
	}
	defer done()
	filter := bson.M{}
	if before > 0 {
		filter["_id"] = bson.M{"$lt": before}
	}
	cur, err := s.audit.Find(ctx, filter, options.Find().SetSort(bson.D{{Key: "_id", Value: -1}}).SetLimit(int64(limit)))
	if err != nil {
		return nil, fail(op, err)
	}
	var docs []auditDoc
	if err := cur.All(ctx, &docs); err != nil {
		return nil, fail(op, err)
	}
	out := make([]spi.AuditEntry, len(docs))
	for i, d := range docs {
		out[i] = spi.AuditEntry{Seq: d.Seq, Time: usTime(d.Time), Actor: d.Actor, Action: d.Action, Target: d.Target, Count: d.Count, Detail: d.Detail}
	}
	return out, nil
}

// DeleteAudit deletes up to limit (zero or less: spi.DefaultAuditPage)
// entries older than before, oldest first by (Time, Seq): it reads their
// _ids through ratchet_audit_time, then deletes them with the age
// condition again, and returns how many it deleted (an entry that a
// concurrent deletion took first is not counted). It implements
// [spi.AuditLog].
func (s *Store) DeleteAudit(ctx context.Context, before time.Time, limit int) (int, error) {
	const op = "delete old audit entries"
	if limit <= 0 {
		limit = spi.DefaultAuditPage
	}
	done, err := s.enter()
	if err != nil {
		return 0, err
	}
	defer done()
	old := bson.M{"t": bson.M{"$lt": timeUS(before)}}
	cur, err := s.audit.Find(ctx, old, options.Find().SetSort(bson.D{{Key: "t", Value: 1}, {Key: "_id", Value: 1}}).
		SetLimit(int64(limit)).SetProjection(bson.M{"_id": 1}))
	if err != nil {
		return 0, fail(op, err)
	}
	var docs []struct {
		Seq int64 `bson:"_id"`
	}
	if err := cur.All(ctx, &docs); err != nil {
		return 0, fail(op, err)
	}
	if len(docs) == 0 {
		return 0, nil
	}
	seqs := make(bson.A, len(docs))
	for i, d := range docs {
		seqs[i] = d.Seq
	}
	old["_id"] = bson.M{"$in": seqs}
	r, err := s.audit.DeleteMany(ctx, old)
	if err != nil {
		return 0, fail(op, err)
	}
	return int(r.DeletedCount), nil
}
