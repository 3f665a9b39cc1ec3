package memory

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"slices"
	"sort"

	"github.com/google/uuid"

	"github.com/ratchet-go/ratchet/sdk/spi"
)

var _ spi.ValueRewriter = (*Store)(nil)

// rewritable are the columns RewriteValues takes.
var rewritable = map[spi.ValueColumn]bool{spi.ColumnPayload: true, spi.ColumnResult: true, spi.ColumnState: true,
	spi.ColumnLog: true, spi.ColumnSignal: true, spi.ColumnCondition: true}

// JobValues implements spi.ValueRewriter.
func (s *Store) JobValues(_ context.Context, archived bool, after uuid.UUID, limit int) ([]spi.StoredValue, uuid.UUID, error) {
	if err := s.lock(); err != nil {
		return nil, uuid.Nil, err
	}
	defer s.unlock()
	if limit = max(limit, 1); s.bug("JobValues returns one job more than its limit") {
		limit++
	}
	ids := s.order
	if archived {
		ids = s.arcIDs
	}
	start := sort.Search(len(ids), func(i int) bool { return bytes.Compare(ids[i][:], after[:]) > 0 })
	var nss map[uuid.UUID][]string
	if !archived && !s.bug("JobValues leaves out the states") {
		nss = map[uuid.UUID][]string{}
		for k := range s.states {
			nss[k.id] = append(nss[k.id], k.ns)
		}
	}
	var out []spi.StoredValue
	last, n := uuid.Nil, 0
	for _, id := range ids[start:] {
		j, states := s.jobs[id], map[string]spi.VersionedState(nil)
		if archived {
			a, ok := s.archive[id]
			if !ok {
				continue
			}
			j, states = a.job, a.states
		} else {
			if j == nil {
				continue
			}
			states = map[string]spi.VersionedState{}
			for _, ns := range nss[id] {
				states[ns] = s.states[stateKey{id, ns}]
			}
		}
		if n == limit {
			return out, last, nil
		}
		n, last = n+1, id
		v := func(c spi.ValueColumn, ns string, b []byte) {
			if len(b) > 0 {
				out = append(out, spi.StoredValue{JobID: id, Column: c, Namespace: ns, Archived: archived, Value: bytes.Clone(b)})
			}
		}
		v(spi.ColumnPayload, "", j.Payload)
		v(spi.ColumnResult, "", j.Result)
		for _, ns := range slices.Sorted(maps.Keys(states)) {
			v(spi.ColumnState, ns, states[ns].JSON)
		}
		for _, l := range s.logs[id] {
			if l.Message != "" {
				out = append(out, spi.StoredValue{JobID: id, Column: spi.ColumnLog, ClaimSeq: l.ClaimSeq, Line: l.Line, Value: []byte(l.Message)})
			}
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
func (s *Store) RewriteValues(_ context.Context, rs []spi.ValueRewrite) ([]bool, error) {
	for _, r := range rs {
		switch {
		case len(r.New) == 0:
			return nil, fmt.Errorf("memory: rewrite of %s of job %s: empty value", r.Column, r.JobID)
		case !rewritable[r.Column]:
			return nil, fmt.Errorf("memory: rewrite of unknown column %q", r.Column)
		}
	}
	if err := s.lock(); err != nil {
		return nil, err
	}
	defer s.unlock()
	out := make([]bool, len(rs))
	if s.bug("RewriteValues writes without comparing") {
		s.rewriteBlind(rs, out)
		return out, nil
	}
	for i, r := range rs {
		if r.Column == spi.ColumnLog {
			for k, l := range s.logs[r.JobID] {
				if l.ClaimSeq == r.ClaimSeq && l.Line == r.Line && l.Message == string(r.Value) {
					s.logs[r.JobID][k].Message, out[i] = string(r.New), true
				}
			}
			continue
		}
		j, states := s.jobs[r.JobID], map[string]spi.VersionedState(nil)
		if r.Archived {
			a, ok := s.archive[r.JobID]
			if !ok {
				continue
			}
			j, states = a.job, a.states
		}
		if j == nil {
			continue
		}
		switch r.Column {
		case spi.ColumnSignal:
			if w := j.Signal; w != nil && !r.Archived && bytes.Equal(w.Payload, r.Value) {
				w.Payload, out[i] = bytes.Clone(r.New), true
			}
		case spi.ColumnCondition:
			for k, d := range s.deps[r.JobID] {
				if !r.Archived && d.ParentID.String() == r.Namespace && len(d.ConditionArgs) > 0 && bytes.Equal(d.ConditionArgs, r.Value) {
					s.deps[r.JobID][k].ConditionArgs, out[i] = bytes.Clone(r.New), true
				}
			}
		case spi.ColumnPayload:
			if out[i] = bytes.Equal(j.Payload, r.Value); out[i] {
				j.Payload = bytes.Clone(r.New)
			}
		case spi.ColumnResult:
			if out[i] = len(j.Result) > 0 && bytes.Equal(j.Result, r.Value); out[i] {
				j.Result = bytes.Clone(r.New)
			}
		case spi.ColumnState:
			if r.Archived {
				v, ok := states[r.Namespace]
				if out[i] = ok && bytes.Equal(v.JSON, r.Value); out[i] {
					v.JSON = bytes.Clone(r.New)
					states[r.Namespace] = v
				}
				continue
			}
			k := stateKey{r.JobID, r.Namespace}
			v, ok := s.states[k]
			if out[i] = ok && bytes.Equal(v.JSON, r.Value); out[i] {
				v.JSON = bytes.Clone(r.New)
				s.states[k] = v
			}
		}
	}
	return out, nil
}
