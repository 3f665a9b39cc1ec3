package tck

import (
	"bytes"
	"context"
	"errors"
	"maps"
	"slices"

	"github.com/google/uuid"

	"github.com/ratchet-go/ratchet/sdk/spi"
)

// The reference store's value rewriter, over its rows and states.

// The defects of the value rewriter the self-test plants.
const (
	bugRewriteBlind       bug = "RewriteValues writes without comparing"
	bugValuesWithoutState bug = "JobValues leaves out the states"
	bugValuesPastLimit    bug = "JobValues returns one job more than its limit"
)

// JobValues implements spi.ValueRewriter.
func (s *refStore) JobValues(_ context.Context, archived bool, after uuid.UUID, limit int) ([]spi.StoredValue, uuid.UUID, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ids := slices.Clone(s.order)
	if archived {
		ids = slices.Collect(maps.Keys(s.archived))
	}
	slices.SortFunc(ids, func(a, b uuid.UUID) int { return bytes.Compare(a[:], b[:]) })
	limit = max(limit, 1)
	var out []spi.StoredValue
	n, last := 0, uuid.Nil
	for _, id := range ids {
		if bytes.Compare(id[:], after[:]) <= 0 {
			continue
		}
		if n == limit {
			return out, last, nil
		}
		n, last = n+1, id
		var j *spi.Job
		if archived {
			j = s.archived[id]
		} else {
			j = s.rows[id].job
		}
		if len(j.Payload) > 0 {
			out = append(out, spi.StoredValue{JobID: id, Column: spi.ColumnPayload, Archived: archived, Value: bytes.Clone(j.Payload)})
		}
		if len(j.Result) > 0 {
			out = append(out, spi.StoredValue{JobID: id, Column: spi.ColumnResult, Archived: archived, Value: bytes.Clone(j.Result)})
		}
		if !archived {
			var nss []string
			for k := range s.states {
				if k.id == id {
					nss = append(nss, k.ns)
				}
			}
			slices.Sort(nss)
			for _, ns := range nss {
				out = append(out, spi.StoredValue{JobID: id, Column: spi.ColumnState, Namespace: ns, Value: bytes.Clone(s.states[refStateKey{id, ns}].JSON)})
			}
		}
		for _, l := range s.logs[id] {
			out = append(out, spi.StoredValue{JobID: id, Column: spi.ColumnLog, ClaimSeq: l.ClaimSeq, Line: l.Line, Value: []byte(l.Message)})
		}
		if archived {
			continue
		}
		if w := j.Signal; w != nil && len(w.Payload) > 0 {
			out = append(out, spi.StoredValue{JobID: id, Column: spi.ColumnSignal, Namespace: w.Name, SignalKey: w.Key, Value: bytes.Clone(w.Payload)})
		}
		for _, d := range s.deps[id] {
			if len(d.ConditionArgs) > 0 {
				out = append(out, spi.StoredValue{JobID: id, Column: spi.ColumnCondition, Namespace: d.ParentID.String(), Value: bytes.Clone(d.ConditionArgs)})
			}
		}
	}
	return out, uuid.Nil, nil
}

// RewriteValues implements spi.ValueRewriter.
func (s *refStore) RewriteValues(_ context.Context, rs []spi.ValueRewrite) ([]bool, error) {
	for _, r := range rs {
		if len(r.New) == 0 {
			return nil, errors.New("ref: rewrite with an empty value")
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]bool, len(rs))
	same := bytes.Equal
	for i, r := range rs {
		if r.Column == spi.ColumnLog {
			for k, l := range s.logs[r.JobID] {
				if l.ClaimSeq == r.ClaimSeq && l.Line == r.Line && same([]byte(l.Message), r.Value) {
					s.logs[r.JobID][k].Message, out[i] = string(r.New), true
				}
			}
			continue
		}
		var j *spi.Job
		if r.Archived {
			j = s.archived[r.JobID]
		} else if row := s.rows[r.JobID]; row != nil {
			j = row.job
		}
		if j == nil {
			continue
		}
		switch r.Column {
		case spi.ColumnSignal:
			if w := j.Signal; w != nil && !r.Archived && len(w.Payload) > 0 && same(w.Payload, r.Value) {
				w.Payload, out[i] = bytes.Clone(r.New), true
			}
		case spi.ColumnCondition:
			for k, d := range s.deps[r.JobID] {
				if !r.Archived && d.ParentID.String() == r.Namespace && len(d.ConditionArgs) > 0 && same(d.ConditionArgs, r.Value) {
					s.deps[r.JobID][k].ConditionArgs, out[i] = bytes.Clone(r.New), true
				}
			}
		case spi.ColumnPayload:
			if out[i] = same(j.Payload, r.Value); out[i] {
				j.Payload = bytes.Clone(r.New)
			}
		case spi.ColumnResult:
			if out[i] = len(j.Result) > 0 && same(j.Result, r.Value); out[i] {
				j.Result = bytes.Clone(r.New)
			}
		case spi.ColumnState:
			k := refStateKey{r.JobID, r.Namespace}
			if v, ok := s.states[k]; ok && !r.Archived && same(v.JSON, r.Value) {
				v.JSON, out[i] = bytes.Clone(r.New), true
				s.states[k] = v
			}
		}
	}
	return out, nil
}
