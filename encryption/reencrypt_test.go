package encryption_test

import (
	"bytes"
	"context"
	"slices"
	"sync"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratchet-go/ratchet/encryption"
	"github.com/ratchet-go/ratchet/internal/stored"
	ratchet "github.com/ratchet-go/ratchet/sdk"
	"github.com/ratchet-go/ratchet/sdk/spi"
)

// rows is a ValueRewriter over values in memory; before, when set, runs
// before each rewrite batch (a concurrent writer).
type rows struct {
	mu     sync.Mutex
	vals   []spi.StoredValue // in job id order, the live jobs' then the archived ones'
	before func(*rows)
}

func (r *rows) JobValues(_ context.Context, archived bool, after uuid.UUID, limit int) ([]spi.StoredValue, uuid.UUID, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []spi.StoredValue
	jobs := 0
	for _, v := range r.vals {
		if v.Archived != archived {
			continue
		}
		if bytes.Compare(v.JobID[:], after[:]) <= 0 {
			continue
		}
		if len(out) == 0 || out[len(out)-1].JobID != v.JobID {
			if jobs == limit {
				return out, out[len(out)-1].JobID, nil
			}
			jobs++
		}
		v.Value = bytes.Clone(v.Value)
		out = append(out, v)
	}
	return out, uuid.Nil, nil
}

func (r *rows) RewriteValues(_ context.Context, rs []spi.ValueRewrite) ([]bool, error) {
	if r.before != nil {
		r.before(r)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]bool, len(rs))
	for i, w := range rs {
		for k := range r.vals {
			v := &r.vals[k]
			if v.JobID == w.JobID && v.Column == w.Column && v.Namespace == w.Namespace && v.Archived == w.Archived && bytes.Equal(v.Value, w.Value) {
				v.Value, out[i] = bytes.Clone(w.New), true
			}
		}
	}
	return out, nil
}

// A rotation seals under the new key every value under an old one and
// every plaintext value, leaves values a concurrent write changed to it,
// counts what does not open, and resumes where it stopped.
func TestReencrypt(t *testing.T) {
	keys := map[string][]byte{"k1": secret(1), "k2": secret(2)}
	old := codec(t, "k1", encryption.Options{}, keys)
	next := codec(t, "k2", encryption.Options{}, keys)
	r := &rows{}
	var ids []uuid.UUID
	for range 7 {
		ids = append(ids, uuid.Must(uuid.NewV7()))
	}
	slices.SortFunc(ids, func(a, b uuid.UUID) int { return bytes.Compare(a[:], b[:]) })
	seal := func(c *encryption.Codec, surface string, id uuid.UUID, s string) []byte {
		b, err := c.Seal(ctx, encryption.Binding{Surface: surface, JobID: id}, []byte(s))
		require.NoError(t, err)
		return b
	}
	for i, id := range ids {
		r.vals = append(r.vals, spi.StoredValue{JobID: id, Column: spi.ColumnPayload, Value: seal(old, "task", id, "p")})
		if i%2 == 0 {
			r.vals = append(r.vals, spi.StoredValue{JobID: id, Column: spi.ColumnResult, Value: seal(old, "result", id, "r")})
		}
	}
	r.vals = append(r.vals, spi.StoredValue{JobID: ids[6], Column: spi.ColumnState, Namespace: "s", Value: []byte(`{"plain":1}`)})
	arch := uuid.Must(uuid.NewV7())
	r.vals = append(r.vals, spi.StoredValue{JobID: arch, Column: spi.ColumnPayload, Archived: true, Value: seal(old, "task", arch, "a")},
		spi.StoredValue{JobID: arch, Column: spi.ColumnLog, Archived: true, Value: []byte(stored.SealText(seal(old, "log", arch, "line")))})
	r.vals[1].Value = seal(next, "result", ids[0], "r")                                // already under k2
	r.vals[2].Value = append(bytes.Clone(r.vals[2].Value[:len(r.vals[2].Value)-1]), 0) // tampered
	slices.SortStableFunc(r.vals, func(a, b spi.StoredValue) int { return bytes.Compare(a.JobID[:], b.JobID[:]) })
	logOf := func() []byte {
		for _, v := range r.vals {
			if v.Column == spi.ColumnLog {
				return v.Value
			}
		}
		return nil
	}

	// The first pass stops after two batches of two jobs.
	cctx, cancel := context.WithCancel(ctx)
	batches := 0
	st, err := next.Reencrypt(cctx, r, encryption.ReencryptOptions{BatchSize: 2, Progress: func(encryption.ReencryptStats) {
		if batches++; batches == 2 {
			cancel()
		}
	}})
	require.ErrorIs(t, err, context.Canceled)
	assert.ErrorIs(t, err, encryption.ErrIntegrity, "the tampered value it read is reported")
	assert.Equal(t, 1, st.Unreadable)
	assert.Equal(t, 4, st.Jobs)
	assert.Equal(t, ids[3], st.Last)

	// A node rewrites job 5's payload under k2 between the read and the
	// rewrite: the pass leaves it.
	r.before = func(r *rows) {
		r.mu.Lock()
		defer r.mu.Unlock()
		for k := range r.vals {
			if r.vals[k].JobID == ids[5] && r.vals[k].Column == spi.ColumnPayload {
				b, _ := next.Seal(ctx, encryption.Binding{Surface: "task", JobID: ids[5]}, []byte("node"))
				r.vals[k].Value = b
			}
		}
		r.before = nil
	}
	rest, err := next.Reencrypt(ctx, r, encryption.ReencryptOptions{BatchSize: 2, After: st.Last})
	require.NoError(t, err)
	assert.Equal(t, 4, rest.Jobs, "the three live jobs left, then the archived one")
	assert.True(t, rest.InArchive)
	assert.Equal(t, 1, rest.Changed)
	assert.Equal(t, 1, rest.Plaintext, "the plaintext state is sealed")

	// Every value opens under k2 now, but the tampered one; the log line
	// is sealed text again.
	text, ok, err := stored.SealedText(string(logOf()))
	require.NoError(t, err)
	require.True(t, ok, "the log line stays sealed text")
	plain, err := next.Open(ctx, encryption.Binding{Surface: "log", JobID: arch}, text)
	require.NoError(t, err)
	assert.Equal(t, "line", string(plain))
	for _, v := range r.vals {
		if v.Column == spi.ColumnLog {
			v.Value = text
		}
		id, ok := encryption.KeyID(v.Value)
		require.True(t, ok, "job %s %s is sealed", v.JobID, v.Column)
		if v.JobID == ids[1] && v.Column == spi.ColumnPayload {
			continue // the tampered one (the second job's payload)
		}
		assert.Equal(t, "k2", id, "job %s %s", v.JobID, v.Column)
	}
	again, err := next.Reencrypt(ctx, r, encryption.ReencryptOptions{})
	require.ErrorIs(t, err, encryption.ErrIntegrity, "a full pass reports the tampered value again")
	assert.Zero(t, again.Rewritten, "a second full pass has nothing left to do")
	assert.Equal(t, 1, again.Unreadable)
}

// A step log is sealed for its own surface ("steps"): a rotation opens one
// sealed before that surface existed (for the job's state) and seals it
// again for "steps"; another namespace of the job's state stays "state".
func TestReencryptStepLogs(t *testing.T) {
	keys := map[string][]byte{"k1": secret(1), "k2": secret(2)}
	old := codec(t, "k1", encryption.Options{}, keys)
	next := codec(t, "k2", encryption.Options{}, keys)
	id := uuid.Must(uuid.NewV7())
	seal := func(surface, s string) []byte {
		b, err := old.Seal(ctx, encryption.Binding{Surface: surface, JobID: id}, []byte(s))
		require.NoError(t, err)
		return b
	}
	r := &rows{vals: []spi.StoredValue{
		{JobID: id, Column: spi.ColumnState, Namespace: ratchet.StepsNamespace, Value: seal("state", `{"steps":[]}`)},
		{JobID: id, Column: spi.ColumnState, Namespace: "progress", Value: seal("state", `{"n":1}`)},
	}}
	st, err := next.Reencrypt(ctx, r, encryption.ReencryptOptions{})
	require.NoError(t, err)
	assert.Equal(t, 2, st.Rewritten)
	open := func(v spi.StoredValue, surface string) string {
		b, err := next.Open(ctx, encryption.Binding{Surface: surface, JobID: id}, v.Value)
		if err != nil {
			return err.Error()
		}
		return string(b)
	}
	assert.Equal(t, `{"steps":[]}`, open(r.vals[0], "steps"), "the step log, sealed again for its surface")
	assert.Equal(t, `{"n":1}`, open(r.vals[1], "state"))
}
