package memory

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"sort"

	"github.com/google/uuid"

	"github.com/ratchet-go/ratchet/sdk/spi"
)

var _ spi.ValueRewriter = (*Store)(nil)

// JobValues implements spi.ValueRewriter.
func (s *Store) JobValues(_ context.Context, after uuid.UUID, limit int) ([]spi.StoredValue, uuid.UUID, error) {
	if err := s.lock(); err != nil {
		return nil, uuid.Nil, err
	}
	defer s.mu.Unlock()
	limit = max(limit, 1)
	start := sort.Search(len(s.order), func(i int) bool { return bytes.Compare(s.order[i][:], after[:]) > 0 })
	nss := map[uuid.UUID][]string{}
	for k := range s.states {
		nss[k.id] = append(nss[k.id], k.ns)
	}
	var out []spi.StoredValue
	last, n := uuid.Nil, 0
	for _, id := range s.order[start:] {
		j := s.jobs[id]
		if j == nil {
			continue
		}
		if n == limit {
			return out, last, nil
		}
		n, last = n+1, id
		if len(j.Payload) > 0 {
			out = append(out, spi.StoredValue{JobID: id, Column: spi.ColumnPayload, Value: bytes.Clone(j.Payload)})
		}
		if len(j.Result) > 0 {
			out = append(out, spi.StoredValue{JobID: id, Column: spi.ColumnResult, Value: bytes.Clone(j.Result)})
		}
		ns := nss[id]
		slices.Sort(ns)
		for _, n := range ns {
			if v := s.states[stateKey{id, n}]; len(v.JSON) > 0 {
				out = append(out, spi.StoredValue{JobID: id, Column: spi.ColumnState, Namespace: n, Value: bytes.Clone(v.JSON)})
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
		case r.Column != spi.ColumnPayload && r.Column != spi.ColumnResult && r.Column != spi.ColumnState:
			return nil, fmt.Errorf("memory: rewrite of unknown column %q", r.Column)
		}
	}
	if err := s.lock(); err != nil {
		return nil, err
	}
	defer s.mu.Unlock()
	out := make([]bool, len(rs))
	for i, r := range rs {
		j := s.jobs[r.JobID]
		if j == nil {
			continue
		}
		switch r.Column {
		case spi.ColumnPayload:
			if out[i] = bytes.Equal(j.Payload, r.Value); out[i] {
				j.Payload = bytes.Clone(r.New)
			}
		case spi.ColumnResult:
			if out[i] = bytes.Equal(j.Result, r.Value); out[i] {
				j.Result = bytes.Clone(r.New)
			}
		case spi.ColumnState:
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
