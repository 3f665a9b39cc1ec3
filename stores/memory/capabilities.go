package memory

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/ratchet-go/ratchet/sdk/spi"
)

// CheckClaims implements spi.ClaimChecker.
func (s *Store) CheckClaims(_ context.Context, refs []spi.ClaimRef) ([]bool, error) {
	if err := s.lock(); err != nil {
		return nil, err
	}
	defer s.unlock()
	out := make([]bool, len(refs))
	for i, r := range refs {
		j, ok := s.jobs[r.JobID]
		out[i] = ok && (j.Status == spi.StatusRunning || s.bug("CheckClaims ignores the status")) &&
			(j.ClaimSeq == r.ClaimSeq || s.bug("CheckClaims ignores the claim sequence"))
	}
	return out, nil
}

// TryAcquireLease implements spi.LeaseStore.
func (s *Store) TryAcquireLease(_ context.Context, name, owner string, ttl time.Duration, now time.Time) (bool, error) {
	if name == "" || owner == "" || ttl <= 0 {
		return false, fmt.Errorf("memory: lease %q for %q: name, owner and a positive ttl are required", name, owner)
	}
	if err := s.lock(); err != nil {
		return false, err
	}
	defer s.unlock()
	if s.bug("TryAcquireLease checks and writes in two steps") {
		defer s.enterLease()()
	}
	l, held := s.leases[name]
	live := now.Before(l.expires) || s.bug("a lease never expires") || (s.bug("a lease is held through now = expiry") && now.Equal(l.expires))
	if held && l.owner != owner && live {
		return false, nil
	}
	if s.bug("TryAcquireLease checks and writes in two steps") {
		s.leaseRace()
	}
	exp := now.Add(ttl)
	if held && l.owner == owner && s.bug("a lease renewal keeps the old expiry") {
		exp = l.expires
	}
	s.leases[name] = lease{owner: owner, expires: exp}
	return true, nil
}

// ReleaseLease implements spi.LeaseStore.
func (s *Store) ReleaseLease(_ context.Context, name, owner string) error {
	if err := s.lock(); err != nil {
		return err
	}
	defer s.unlock()
	if l, ok := s.leases[name]; ok && (l.owner == owner || s.bug("ReleaseLease frees another owner's lease")) {
		delete(s.leases, name)
	}
	return nil
}

func (s *Store) job(id uuid.UUID) (*spi.Job, error) {
	j, ok := s.jobs[id]
	if !ok {
		return nil, fmt.Errorf("%w: %s", spi.ErrNotFound, id)
	}
	return j, nil
}

// GetState implements spi.JobStateStore.
func (s *Store) GetState(_ context.Context, id uuid.UUID, ns string) (spi.VersionedState, bool, error) {
	if err := s.lock(); err != nil {
		return spi.VersionedState{}, false, err
	}
	defer s.unlock()
	if _, err := s.job(id); err != nil {
		return spi.VersionedState{}, false, err
	}
	v, ok := s.states[stateKey{id, ns}]
	v.JSON = append([]byte(nil), v.JSON...)
	return v, ok, nil
}

// writeState applies one state write; fenced writes pass fence >= 0.
func (s *Store) writeState(id uuid.UUID, ns string, state []byte, expected int64, init bool, fence int64) (spi.StateWriteResult, error) {
	if err := s.lock(); err != nil {
		return 0, err
	}
	defer s.unlock()
	j, err := s.job(id)
	if err != nil {
		return 0, err
	}
	if fence >= 0 && ((j.Status != spi.StatusRunning && !s.bug("fenced state write ignores the status")) ||
		(j.ClaimSeq != fence && !s.bug("fenced state write ignores the claim sequence"))) {
		return spi.StateSuperseded, nil
	}
	k := stateKey{id, ns}
	cur, exists := s.states[k]
	switch {
	case init && exists, !init && !exists, !init && cur.Version != expected && !s.bug("state update ignores the expected version"):
		return spi.StateVersionConflict, nil
	}
	next := int64(0)
	if !init {
		next = cur.Version + 1
	}
	data := append([]byte(nil), state...)
	if s.bug("state JSON is compacted") {
		var b bytes.Buffer
		if json.Compact(&b, state) == nil {
			data = b.Bytes()
		}
	}
	s.states[k] = spi.VersionedState{JSON: data, Version: next}
	return spi.StateUpdated, nil
}

// InitState implements spi.JobStateStore.
func (s *Store) InitState(_ context.Context, id uuid.UUID, ns string, state []byte, claimSeq int64) (spi.StateWriteResult, error) {
	return s.writeState(id, ns, state, 0, true, claimSeq)
}

// UpdateState implements spi.JobStateStore.
func (s *Store) UpdateState(_ context.Context, id uuid.UUID, ns string, state []byte, expected, claimSeq int64) (spi.StateWriteResult, error) {
	return s.writeState(id, ns, state, expected, false, claimSeq)
}

// InitStateUnfenced implements spi.JobStateStore.
func (s *Store) InitStateUnfenced(_ context.Context, id uuid.UUID, ns string, state []byte) (spi.StateWriteResult, error) {
	return s.writeState(id, ns, state, 0, true, -1)
}

// UpdateStateUnfenced implements spi.JobStateStore.
func (s *Store) UpdateStateUnfenced(_ context.Context, id uuid.UUID, ns string, state []byte, expected int64) (spi.StateWriteResult, error) {
	return s.writeState(id, ns, state, expected, false, -1)
}

// PutProperty implements spi.JobPropertyStore.
func (s *Store) PutProperty(_ context.Context, id uuid.UUID, key, value string) error {
	if key == "" {
		return fmt.Errorf("memory: property of job %s: empty key", id)
	}
	if err := s.lock(); err != nil {
		return err
	}
	defer s.unlock()
	if _, err := s.job(id); err != nil {
		return err
	}
	p := s.props[id]
	if p == nil {
		p = map[string]string{}
		s.props[id] = p
	}
	if old, ok := p[key]; ok && old != value && !s.bug("properties are not write-once") {
		return fmt.Errorf("%w: job %s property %q", spi.ErrPropertyExists, id, key)
	}
	p[key] = value
	return nil
}

// GetProperty implements spi.JobPropertyStore.
func (s *Store) GetProperty(_ context.Context, id uuid.UUID, key string) (string, bool, error) {
	if err := s.lock(); err != nil {
		return "", false, err
	}
	defer s.unlock()
	if _, err := s.job(id); err != nil {
		return "", false, err
	}
	v, ok := s.props[id][key]
	return v, ok, nil
}

// GetPropertiesByPrefix implements spi.JobPropertyStore.
func (s *Store) GetPropertiesByPrefix(_ context.Context, id uuid.UUID, prefix string) (map[string]string, error) {
	if err := s.lock(); err != nil {
		return nil, err
	}
	defer s.unlock()
	if _, err := s.job(id); err != nil {
		return nil, err
	}
	out := map[string]string{}
	for k, v := range s.props[id] {
		if strings.HasPrefix(k, prefix) || (s.bug("property prefix matched with LIKE") && likePrefix(k, prefix)) {
			out[k] = v
		}
	}
	return out, nil
}

// FindJobsByProperty implements spi.JobPropertyStore. It scans every job's
// properties: fine for tests and simulations.
func (s *Store) FindJobsByProperty(_ context.Context, key, value string, limit int) ([]uuid.UUID, error) {
	if err := s.lock(); err != nil {
		return nil, err
	}
	defer s.unlock()
	var out []uuid.UUID
	for id, p := range s.props {
		if v, ok := p[key]; ok && v == value {
			out = append(out, id)
		}
	}
	sort.Slice(out, func(a, b int) bool { return out[a].String() < out[b].String() })
	if s.bug("FindJobsByProperty lists ids in descending order") {
		slices.Reverse(out)
	}
	if limit > 0 && len(out) > limit {
		out = out[:limit]
	}
	return out, nil
}

// AdoptClaims returns the jobs RUNNING under node claimed at one of
// claimedAt. It implements spi.ClaimAdopter.
func (s *Store) AdoptClaims(_ context.Context, node string, claimedAt []time.Time) ([]*spi.Job, error) {
	if err := s.lock(); err != nil {
		return nil, err
	}
	defer s.unlock()
	var out []*spi.Job
	ids := maps.Keys(s.running)
	if s.bug("AdoptClaims ignores the status") {
		ids = maps.Keys(s.jobs)
	}
	for id := range ids {
		j := s.jobs[id]
		if s.decodeErr(id) == nil && (j.OwnerNode == node || s.bug("AdoptClaims ignores the node")) &&
			(slices.ContainsFunc(claimedAt, j.ClaimedAt.Equal) || s.bug("AdoptClaims ignores the claim time")) {
			out = append(out, j.Clone())
		}
	}
	// In id order, as the SQL stores read them: not a map's order, so
	// that a simulator's run of one seed is always the same.
	slices.SortFunc(out, func(a, b *spi.Job) int { return bytes.Compare(a.ID[:], b.ID[:]) })
	return out, nil
}
