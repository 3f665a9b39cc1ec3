package mongodb

import (
	"bytes"
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/google/uuid"
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/ratchet-go/ratchet/sdk/spi"
)

// The value rewriter (spi.ValueRewriter). Payload, result and state all
// live on the job document (payload, job_result, st.<ns>.j), and an
// archived job's document in the archive collection is the same whole
// document, so a page is one find on _id, in the jobs or the archive
// collection, with a projection of those fields, then one find of the
// page's log lines in the logs collection (one document per line, msg a
// string). A live job's delivered signal payload (sig.p, with the wait's
// name sig.n and key sig.k) and its dependencies' condition arguments
// (deps[i].ca, with the parent deps[i].p) are on the job document too, and
// are read in the live pass only. Each rewrite is one UpdateOne guarded on
// the field still holding the bytes read (a condition's, on the parent at
// the index read first, since a dependency is never moved). Staged jobs
// (stg: a workflow or batch chunk not yet activated) are read too: a
// committed chunk whose writer died stays staged until the next call
// activates it, and its values must not stay under a key being retired.

var _ spi.ValueRewriter = (*Store)(nil)

// valuesProjection is what JobValues reads of an archived job, and
// liveValuesProjection of a live one (with its signal wait and its
// dependencies).
var (
	valuesProjection     = bson.M{fID: 1, fPayload: 1, fResult: 1, fState: 1}
	liveValuesProjection = bson.M{fID: 1, fPayload: 1, fResult: 1, fState: 1, fSig: 1, fDeps: 1}
)

// valuesCollection is the collection of a pass's (or a rewrite's) jobs:
// the live jobs, or the archive.
func (s *Store) valuesCollection(archived bool) *mongo.Collection {
	if archived {
		return s.archive
	}
	return s.jobs
}

// JobValues returns the payloads, results, states and log lines of up to
// limit jobs with ids above after, live or with archived the archived
// ones, in id order, and the id of the last job read (uuid.Nil when none
// is left); of the live jobs, the delivered signal payloads and the
// condition arguments too, after each job's log lines. It implements
// [spi.ValueRewriter].
func (s *Store) JobValues(ctx context.Context, archived bool, after uuid.UUID, limit int) ([]spi.StoredValue, uuid.UUID, error) {
	done, err := s.enter()
	if err != nil {
		return nil, uuid.Nil, err
	}
	defer done()
	limit = max(limit, 1)
	proj := liveValuesProjection
	if archived {
		proj = valuesProjection
	}
	cur, err := s.valuesCollection(archived).Find(ctx,
		bson.M{fID: bson.M{"$gt": idValue(after)}},
		options.Find().SetProjection(proj).SetSort(bson.D{{Key: fID, Value: 1}}).SetLimit(int64(limit)+1))
	if err != nil {
		return nil, uuid.Nil, fail("read job values", err)
	}
	var docs []bson.Raw
	if err := cur.All(ctx, &docs); err != nil {
		return nil, uuid.Nil, fail("read job values", err)
	}
	more := len(docs) > limit
	docs = docs[:min(len(docs), limit)]
	ids := make([]uuid.UUID, len(docs))
	heads := make([][]spi.StoredValue, len(docs)) // payload, result, states
	tails := make([][]spi.StoredValue, len(docs)) // signal, conditions
	for i, raw := range docs {
		vs, id, err := storedValues(raw, archived)
		if err != nil {
			return nil, uuid.Nil, fail("read job values", err)
		}
		ids[i], heads[i] = id, vs
		if !archived {
			if tails[i], err = liveValues(raw, id); err != nil {
				return nil, uuid.Nil, fail("read job values", err)
			}
		}
	}
	lines, err := s.logValues(ctx, ids)
	if err != nil {
		return nil, uuid.Nil, fail("read job values", err)
	}
	var out []spi.StoredValue
	for i, id := range ids { // each job's lines after its own values, before its signal and conditions
		out = append(out, heads[i]...)
		out = append(out, lines[id]...)
		out = append(out, tails[i]...)
	}
	last := uuid.Nil
	if more {
		last = ids[len(ids)-1]
	}
	return out, last, nil
}

// logValues reads the non-empty log lines of the jobs ids, by job, in
// (claim, line) order.
func (s *Store) logValues(ctx context.Context, ids []uuid.UUID) (map[uuid.UUID][]spi.StoredValue, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	cur, err := s.logs.Find(ctx, bson.M{"job": bson.M{"$in": idValues(ids)}},
		options.Find().SetProjection(bson.M{"job": 1, "claim": 1, "line": 1, "msg": 1}).
			SetSort(bson.D{{Key: "job", Value: 1}, {Key: "claim", Value: 1}, {Key: "line", Value: 1}}))
	if err != nil {
		return nil, fmt.Errorf("read log lines: %w", err)
	}
	var docs []logDoc
	if err := cur.All(ctx, &docs); err != nil {
		return nil, fmt.Errorf("read log lines: %w", err)
	}
	out := map[uuid.UUID][]spi.StoredValue{}
	for _, d := range docs {
		if d.Message == "" {
			continue
		}
		id, err := binaryID(d.Job)
		if err != nil {
			return nil, fmt.Errorf("log line: %w", err)
		}
		out[id] = append(out[id], spi.StoredValue{JobID: id, Column: spi.ColumnLog, ClaimSeq: d.Claim, Line: d.Line, Value: []byte(d.Message)})
	}
	return out, nil
}

// storedValues reads the non-empty payload, result and states of one job
// document (Archived set as archived), and its id. A field of another type
// than binary holds no sealed value and is left out; an _id that is no
// UUID is an error.
func storedValues(raw bson.Raw, archived bool) ([]spi.StoredValue, uuid.UUID, error) {
	v, err := raw.LookupErr(fID)
	if err != nil {
		return nil, uuid.Nil, fmt.Errorf("job without _id: %w", err)
	}
	id, err := valueID(v)
	if err != nil {
		return nil, uuid.Nil, fmt.Errorf("_id: %w", err)
	}
	var out []spi.StoredValue
	for _, c := range []struct {
		field string
		col   spi.ValueColumn
	}{{fPayload, spi.ColumnPayload}, {fResult, spi.ColumnResult}} {
		if b := binaryField(raw, c.field); len(b) > 0 {
			out = append(out, spi.StoredValue{JobID: id, Column: c.col, Archived: archived, Value: b})
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
			states = append(states, spi.StoredValue{JobID: id, Column: spi.ColumnState, Namespace: ns, Archived: archived, Value: b})
		}
	}
	slices.SortFunc(states, func(a, b spi.StoredValue) int { return strings.Compare(a.Namespace, b.Namespace) })
	return append(out, states...), id, nil
}

// liveValues reads the delivered signal payload (sig.p, its name and key
// as Namespace and SignalKey) and the non-empty condition arguments of the
// dependencies (deps[i].ca, the parent's id as Namespace, in insert order)
// of the live job document raw, of id. Empty or non-binary values are left
// out; a dependency whose parent is no UUID is an error.
func liveValues(raw bson.Raw, id uuid.UUID) ([]spi.StoredValue, error) {
	var out []spi.StoredValue
	if sig, ok := raw.Lookup(fSig).DocumentOK(); ok {
		if b := binaryField(sig, "p"); len(b) > 0 {
			name, _ := sig.Lookup("n").StringValueOK()
			key, _ := sig.Lookup("k").StringValueOK()
			out = append(out, spi.StoredValue{JobID: id, Column: spi.ColumnSignal, Namespace: name, SignalKey: key, Value: b})
		}
	}
	deps, ok := raw.Lookup(fDeps).ArrayOK()
	if !ok {
		return out, nil
	}
	vals, err := deps.Values()
	if err != nil {
		return nil, fmt.Errorf("job %s: deps: %w", id, err)
	}
	for _, v := range vals {
		d, ok := v.DocumentOK()
		if !ok {
			continue
		}
		b := binaryField(d, "ca")
		if len(b) == 0 {
			continue
		}
		parent, err := valueID(d.Lookup("p"))
		if err != nil {
			return nil, fmt.Errorf("job %s: dependency: %w", id, err)
		}
		out = append(out, spi.StoredValue{JobID: id, Column: spi.ColumnCondition, Namespace: parent.String(), Value: b})
	}
	return out, nil
}

// valueID is the UUID that the binary v holds.
func valueID(v bson.RawValue) (uuid.UUID, error) {
	sub, data, ok := v.BinaryOK()
	if !ok {
		return uuid.Nil, fmt.Errorf("id of type %s, not a UUID", v.Type)
	}
	return binaryID(bson.Binary{Subtype: sub, Data: data})
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

// rewriteField is the field that r rewrites: of the job document (in the
// jobs or the archive collection), or the msg of a log line; for a
// condition, the ca of a dependency (its index is read by rewriteOne).
func rewriteField(r spi.ValueRewrite) (string, error) {
	switch r.Column {
	case spi.ColumnPayload:
		return fPayload, nil
	case spi.ColumnResult:
		return fResult, nil
	case spi.ColumnState:
		return fState + "." + stateKey(r.Namespace) + ".j", nil
	case spi.ColumnLog:
		return "msg", nil
	case spi.ColumnSignal:
		return fSigPayload, nil
	case spi.ColumnCondition:
		if _, err := uuid.Parse(r.Namespace); err != nil {
			return "", fmt.Errorf("rewrite of a condition of job %s: parent %q: %w", r.JobID, r.Namespace, err)
		}
		return "ca", nil
	default:
		return "", fmt.Errorf("rewrite of unknown column %q of job %s", r.Column, r.JobID)
	}
}

// rewriteOne applies r, whose field is field, where it still holds
// r.Value, and reports whether it did.
func (s *Store) rewriteOne(ctx context.Context, r spi.ValueRewrite, field string) (bool, error) {
	var coll *mongo.Collection
	var filter, update bson.M
	switch r.Column {
	case spi.ColumnLog: // a text, the same line live or archived
		coll = s.logs
		filter = bson.M{"job": idValue(r.JobID), "claim": r.ClaimSeq, "line": r.Line, field: string(r.Value)}
		update = bson.M{"$set": bson.M{field: string(r.New)}}
	case spi.ColumnSignal: // a live job's wait only
		if r.Archived {
			return false, nil
		}
		coll = s.jobs
		filter = bson.M{fID: idValue(r.JobID), fSigName: r.Namespace, field: binaryOf(r.Value)}
		update = bson.M{"$set": bson.M{field: binaryOf(r.New)}}
	case spi.ColumnCondition: // a live job's dependency only
		if r.Archived {
			return false, nil
		}
		return s.rewriteCondition(ctx, r)
	default:
		coll = s.valuesCollection(r.Archived)
		filter = bson.M{fID: idValue(r.JobID), field: binaryOf(r.Value)}
		update = bson.M{"$set": bson.M{field: binaryOf(r.New)}}
	}
	res, err := coll.UpdateOne(ctx, filter, update)
	if err != nil {
		return false, err
	}
	return res.MatchedCount == 1, nil
}

// rewriteCondition applies the condition rewrite r where the dependency on
// parent r.Namespace still holds r.Value: a read of the job's dependencies
// finds the parent's index i (a dependency is never moved: they are
// written with the job only), then one UpdateOne {_id, deps.i.p: parent,
// deps.i.ca: old} → $set deps.i.ca: new. It reports whether it applied.
func (s *Store) rewriteCondition(ctx context.Context, r spi.ValueRewrite) (bool, error) {
	parent, err := uuid.Parse(r.Namespace)
	if err != nil { // checked by rewriteField
		return false, err
	}
	var d struct {
		Deps []depDoc `bson:"deps"`
	}
	err = s.jobs.FindOne(ctx, bson.M{fID: idValue(r.JobID)}, options.FindOne().SetProjection(bson.M{fDeps: 1})).Decode(&d)
	if errors.Is(err, mongo.ErrNoDocuments) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	for i, dep := range d.Deps {
		if p, err := binaryID(dep.Parent); err != nil || p != parent || !bytes.Equal(bytesOf(dep.ConditionArgs), r.Value) {
			continue
		}
		at := fmt.Sprintf("%s.%d.", fDeps, i)
		res, err := s.jobs.UpdateOne(ctx,
			bson.M{fID: idValue(r.JobID), at + "p": idValue(parent), at + "ca": binaryOf(r.Value)},
			bson.M{"$set": bson.M{at + "ca": binaryOf(r.New)}})
		if err != nil {
			return false, err
		}
		return res.MatchedCount == 1, nil
	}
	return false, nil
}

// RewriteValues applies each rewrite where its field still holds the value
// read: one UpdateOne {_id, field: old} → $set field: new each, on the
// jobs collection or with Archived the archive, and for a log line
// {job, claim, line, msg: old} → $set msg: new on the logs collection;
// for a signal payload {_id, sig.n: name, sig.p: old} → $set sig.p: new,
// and for a condition's arguments the same on deps.i.ca, at the index i
// of the parent read first, both on the jobs collection only (with
// Archived set they never apply: an archived job keeps no signal or
// condition to read); each applies or not on its own (a state keeps its
// version). The rewrites of one job are applied in their order, those of
// different jobs concurrently, up to [Options.Parallelism]. An empty New,
// an unknown column or a condition whose Namespace is no UUID fails the
// call before anything is written; a rewrite of an empty Value never
// applies. It implements [spi.ValueRewriter].
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
			ok, err := s.rewriteOne(ctx, r, fields[i])
			if err != nil {
				return fmt.Errorf("job %s %s: %w", r.JobID, r.Column, err)
			}
			out[i] = ok
		}
		return nil
	})
	if err != nil {
		return nil, fail("rewrite values", err)
	}
	return out, nil
}
