package mongodb

import (
	"context"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"

	"github.com/google/uuid"
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/ratchet-go/ratchet/sdk/spi"
)

// The value rewriter (spi.ValueRewriter). Payload, result and state all
// live on the job document (payload, job_result, st.<ns>.j), so a page is
// one find on _id with a projection of those fields, and each rewrite is
// one UpdateOne guarded on the field still holding the bytes read. Staged
// jobs (stg: a workflow or batch chunk not yet activated) are read too: a
// committed chunk whose writer died stays staged until the next call
// activates it, and its values must not stay under a key being retired.
// The archive is not read.

var _ spi.ValueRewriter = (*Store)(nil)

// valuesProjection is what JobValues reads of a job.
var valuesProjection = bson.M{fID: 1, fPayload: 1, fResult: 1, fState: 1}

// JobValues returns the payloads, results and states of up to limit live
// jobs with ids above after, in id order, and the id of the last job read
// (uuid.Nil when none is left). It implements [spi.ValueRewriter].
func (s *Store) JobValues(ctx context.Context, after uuid.UUID, limit int) ([]spi.StoredValue, uuid.UUID, error) {
	done, err := s.enter()
	if err != nil {
		return nil, uuid.Nil, err
	}
	defer done()
	limit = max(limit, 1)
	cur, err := s.jobs.Find(ctx,
		bson.M{fID: bson.M{"$gt": idValue(after)}},
		options.Find().SetProjection(valuesProjection).SetSort(bson.D{{Key: fID, Value: 1}}).SetLimit(int64(limit)+1))
	if err != nil {
		return nil, uuid.Nil, fail("read job values", err)
	}
	var docs []bson.Raw
	if err := cur.All(ctx, &docs); err != nil {
		return nil, uuid.Nil, fail("read job values", err)
	}
	more := len(docs) > limit
	docs = docs[:min(len(docs), limit)]
	var out []spi.StoredValue
	last := uuid.Nil
	for _, raw := range docs {
		vs, id, err := storedValues(raw)
		if err != nil {
			return nil, uuid.Nil, fail("read job values", err)
		}
		out = append(out, vs...)
		last = id
	}
	if !more {
		last = uuid.Nil
	}
	return out, last, nil
}

// storedValues reads the non-empty payload, result and states of one job
// document, and its id. A field of another type than binary holds no
// sealed value and is left out; an _id that is no UUID is an error.
func storedValues(raw bson.Raw) ([]spi.StoredValue, uuid.UUID, error) {
	v, err := raw.LookupErr(fID)
	if err != nil {
		return nil, uuid.Nil, fmt.Errorf("job without _id: %w", err)
	}
	sub, data, ok := v.BinaryOK()
	if !ok {
		return nil, uuid.Nil, fmt.Errorf("_id of type %s, not a UUID", v.Type)
	}
	id, err := binaryID(bson.Binary{Subtype: sub, Data: data})
	if err != nil {
		return nil, uuid.Nil, err
	}
	var out []spi.StoredValue
	for _, c := range []struct {
		field string
		col   spi.ValueColumn
	}{{fPayload, spi.ColumnPayload}, {fResult, spi.ColumnResult}} {
		if b := binaryField(raw, c.field); len(b) > 0 {
			out = append(out, spi.StoredValue{JobID: id, Column: c.col, Value: b})
		}
	}
	st, ok := raw.Lookup(fState).DocumentOK()
	if !ok {
		return out, id, nil
	}
	elems, err := st.Elements()
	if err != nil {
		return nil, uuid.Nil, fmt.Errorf("job %s: st: %w", id, err)
	}
	var states []spi.StoredValue
	for _, e := range elems {
		ns, ok := stateNamespace(e.Key())
		if !ok {
			continue // not written by this store: GetState cannot reach it either
		}
		d, ok := e.Value().DocumentOK()
		if !ok {
			continue
		}
		if b := binaryField(d, "j"); len(b) > 0 {
			states = append(states, spi.StoredValue{JobID: id, Column: spi.ColumnState, Namespace: ns, Value: b})
		}
	}
	slices.SortFunc(states, func(a, b spi.StoredValue) int { return strings.Compare(a.Namespace, b.Namespace) })
	return append(out, states...), id, nil
}

// binaryField returns a copy of the bytes of the binary field key of d, or
// nil when it is absent, null or not a binary.
func binaryField(d bson.Raw, key string) []byte {
	_, data, ok := d.Lookup(key).BinaryOK()
	if !ok {
		return nil
	}
	return append([]byte(nil), data...)
}

// stateNamespace is the inverse of stateKey.
func stateNamespace(key string) (string, bool) {
	h, ok := strings.CutPrefix(key, "n")
	if !ok {
		return "", false
	}
	b, err := hex.DecodeString(h)
	if err != nil {
		return "", false
	}
	return string(b), true
}

// rewriteField is the field of the job document that r rewrites.
func rewriteField(r spi.ValueRewrite) (string, error) {
	switch r.Column {
	case spi.ColumnPayload:
		return fPayload, nil
	case spi.ColumnResult:
		return fResult, nil
	case spi.ColumnState:
		return fState + "." + stateKey(r.Namespace) + ".j", nil
	default:
		return "", fmt.Errorf("rewrite of unknown column %q of job %s", r.Column, r.JobID)
	}
}

// RewriteValues applies each rewrite where its field still holds the value
// read: one UpdateOne {_id, field: old} → $set field: new each, which
// applies or not on its own (a state keeps its version). The rewrites of
// one job are applied in their order, those of different jobs
// concurrently, up to [Options.Parallelism]. An empty New or an unknown
// column fails the call before anything is written; a rewrite of an empty
// Value never applies. It implements
// [spi.ValueRewriter].
func (s *Store) RewriteValues(ctx context.Context, rs []spi.ValueRewrite) ([]bool, error) {
	fields := make([]string, len(rs))
	for i, r := range rs {
		if len(r.New) == 0 {
			return nil, fail("rewrite values", fmt.Errorf("rewrite of %s of job %s: empty value", r.Column, r.JobID))
		}
		f, err := rewriteField(r)
		if err != nil {
			return nil, fail("rewrite values", err)
		}
		fields[i] = f
	}
	done, err := s.enter()
	if err != nil {
		return nil, err
	}
	defer done()
	out := make([]bool, len(rs))
	if len(rs) == 0 {
		return out, nil
	}
	// Group by job, in first-seen order, keeping the order within a job:
	// two rewrites of one value must apply in turn (the second finds the
	// first's value).
	var groups [][]int
	at := map[uuid.UUID]int{}
	for i, r := range rs {
		g, ok := at[r.JobID]
		if !ok {
			g = len(groups)
			at[r.JobID] = g
			groups = append(groups, nil)
		}
		groups[g] = append(groups[g], i)
	}
	err = s.fanOut(ctx, len(groups), func(ctx context.Context, g int) error {
		for _, i := range groups[g] {
			r := rs[i]
			if len(r.Value) == 0 {
				continue // no stored value is empty (and a nil filter would match an absent field)
			}
			res, err := s.jobs.UpdateOne(ctx,
				bson.M{fID: idValue(r.JobID), fields[i]: binaryOf(r.Value)},
				bson.M{"$set": bson.M{fields[i]: binaryOf(r.New)}})
			if err != nil {
				return fmt.Errorf("job %s %s: %w", r.JobID, r.Column, err)
			}
			out[i] = res.MatchedCount == 1
		}
		return nil
	})
	if err != nil {
		return nil, fail("rewrite values", err)
	}
	return out, nil
}
