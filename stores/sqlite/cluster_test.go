package sqlite

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratchet-go/ratchet/sdk/spi"
)

func claimTags(t *testing.T, s *Store, limit int, f spi.TagFilter) []*spi.Job {
	t.Helper()
	got, err := s.ClaimJobs(context.Background(), spi.ClaimParams{NodeID: "n", Limit: limit, Now: t0, Tags: f})
	require.NoError(t, err)
	return got
}

func tagged(prio spi.Priority, due time.Time, tags ...string) *spi.Job {
	j := job(prio, due)
	j.Tags = tags
	return j
}

func TestClaimTagFilter(t *testing.T) {
	cases := []struct {
		name string
		f    spi.TagFilter
		want []string // task names, in claim order
	}{
		{"empty", spi.TagFilter{}, []string{"none", "gpu", "gpu-eu", "eu", "cpu-eu"}},
		{"all", spi.TagFilter{All: []string{"gpu"}}, []string{"gpu", "gpu-eu"}},
		{"all two", spi.TagFilter{All: []string{"gpu", "eu"}}, []string{"gpu-eu"}},
		{"all repeated", spi.TagFilter{All: []string{"eu", "gpu", "eu"}}, []string{"gpu-eu"}},
		{"any", spi.TagFilter{Any: []string{"gpu", "cpu"}}, []string{"gpu", "gpu-eu", "cpu-eu"}},
		{"none", spi.TagFilter{None: []string{"gpu"}}, []string{"none", "eu", "cpu-eu"}},
		{"all and none", spi.TagFilter{All: []string{"eu"}, None: []string{"gpu"}}, []string{"eu", "cpu-eu"}},
		{"any and none", spi.TagFilter{Any: []string{"eu"}, None: []string{"cpu"}}, []string{"gpu-eu", "eu"}},
		{"every list", spi.TagFilter{All: []string{"eu"}, Any: []string{"gpu", "cpu"}, None: []string{"cpu"}}, []string{"gpu-eu"}},
		{"wildcards are literal", spi.TagFilter{Any: []string{"%", "_u"}}, nil},
		{"unknown", spi.TagFilter{All: []string{"tpu"}}, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := openStore(t)
			var jobs []*spi.Job
			for i, tags := range [][]string{nil, {"gpu"}, {"gpu", "eu"}, {"eu"}, {"cpu", "eu"}} {
				j := tagged(spi.PriorityNormal, t0.Add(-time.Duration(10-i)*time.Minute), tags...)
				j.TaskName = "none"
				if len(tags) > 0 {
					j.TaskName = tags[0]
					if len(tags) > 1 {
						j.TaskName += "-" + tags[1]
					}
				}
				jobs = append(jobs, j)
			}
			insert(t, s, jobs...)
			var names []string
			for _, j := range claimTags(t, s, 10, tc.f) {
				names = append(names, j.TaskName)
				assert.True(t, tc.f.Match(j.Tags))
			}
			assert.Equal(t, tc.want, names)
		})
	}
}

// TestClaimTagFilterDoesNotBlock: many better jobs that the node may not run
// do not hide the one it may.
func TestClaimTagFilterDoesNotBlock(t *testing.T) {
	s := openStore(t)
	var jobs []*spi.Job
	for i := range 50 {
		jobs = append(jobs, tagged(spi.PriorityCritical, t0.Add(-time.Hour+time.Duration(i)*time.Second), "cpu"))
	}
	want := tagged(spi.PriorityLowest, t0, "gpu")
	insert(t, s, append(jobs, want)...)
	got := claimTags(t, s, 1, spi.TagFilter{All: []string{"gpu"}})
	assert.Equal(t, []uuid.UUID{want.ID}, ids(got))
	got = claimTags(t, s, 100, spi.TagFilter{None: []string{"cpu"}})
	assert.Empty(t, got)
	assert.Len(t, claimTags(t, s, 100, spi.TagFilter{Any: []string{"cpu"}}), 50)
}

func permit(prio spi.Priority, due time.Time, resource string, limit int) *spi.Job {
	j := job(prio, due)
	j.Resource = resource
	j.ResourceLimit = limit
	return j
}

func TestInsertRejectsResourceWithoutLimit(t *testing.T) {
	s := openStore(t)
	for _, limit := range []int{0, -1} {
		good := job(spi.PriorityNormal, t0)
		bad := permit(spi.PriorityNormal, t0, "db", limit)
		_, err := s.InsertJobs(context.Background(), []*spi.Job{good, bad})
		require.Error(t, err)
		assert.Contains(t, err.Error(), bad.ID.String())
		_, err = s.GetJob(context.Background(), good.ID)
		require.ErrorIs(t, err, spi.ErrNotFound, "nothing of the batch is written")
	}
	all, _, err := s.ListJobs(context.Background(), spi.ListParams{})
	require.NoError(t, err)
	assert.Empty(t, all)
}

func TestResourceRoundTrips(t *testing.T) {
	s := openStore(t)
	j := permit(spi.PriorityNormal, t0, "db", 3)
	plain := job(spi.PriorityNormal, t0)
	insert(t, s, j, plain)
	assert.Equal(t, "db", get(t, s, j.ID).Resource)
	assert.Equal(t, 3, get(t, s, j.ID).ResourceLimit)
	assert.Empty(t, get(t, s, plain.ID).Resource)
	all, _, err := s.ListJobs(context.Background(), spi.ListParams{})
	require.NoError(t, err)
	require.Len(t, all, 2)
	assert.Equal(t, "db", all[0].Resource)
	assert.Equal(t, 3, all[0].ResourceLimit)
	got := claim(t, s, "n", 10, t0, 0)
	require.Len(t, got, 2)
	assert.Equal(t, "db", got[0].Resource)
	assert.Equal(t, 3, got[0].ResourceLimit)
}

// TestResourcePermits walks one resource with limit 2 through every way of
// leaving RUNNING: each gives its permit back.
func TestResourcePermits(t *testing.T) {
	ctx := context.Background()
	s := openStore(t)
	var rs []*spi.Job
	for i := range 8 {
		rs = append(rs, permit(spi.PriorityHigh, t0.Add(-time.Duration(10-i)*time.Minute), "db", 2))
	}
	plain := job(spi.PriorityLowest, t0)
	insert(t, s, append(rs, plain)...)

	// The claim counts what it takes: two permit holders, then the rest
	// is skipped and the plain job behind them is taken.
	got := claim(t, s, "a", 10, t0, 0)
	assert.Equal(t, []uuid.UUID{rs[0].ID, rs[1].ID, plain.ID}, ids(got))
	assert.Empty(t, claim(t, s, "b", 10, t0, 0), "the resource is full")

	// Success, retry and failure release.
	for _, o := range []spi.Outcome{spi.OutcomeSucceeded, spi.OutcomeRetry, spi.OutcomeFailed} {
		c := spi.Completion{ClaimRef: ref(got[0]), Outcome: o, FinishedAt: t0, RetryAt: t0.Add(time.Hour), Attempts: 1}
		ok, err := s.CompleteJobs(ctx, []spi.Completion{c})
		require.NoError(t, err)
		require.Equal(t, []bool{true}, ok)
		next := claim(t, s, "b", 10, t0, 0)
		require.Len(t, next, 1, "outcome %d gives the permit back", o)
		got[0] = next[0]
		assert.Empty(t, claim(t, s, "b", 10, t0, 0))
	}

	// A release gives it back.
	ok, err := s.ReleaseJobs(ctx, []spi.ClaimRef{ref(got[0])}, t0)
	require.NoError(t, err)
	require.Equal(t, []bool{true}, ok)
	again := claim(t, s, "c", 10, t0, 0)
	require.Len(t, again, 1)

	// Orphan recovery gives back the permits of a dead node.
	require.NoError(t, s.Heartbeat(ctx, "c", t0))
	rec, err := s.RecoverOrphans(ctx, spi.RecoverParams{Now: t0, Grace: time.Minute, MaxCrashRedeliveries: 3})
	require.NoError(t, err)
	assert.NotEmpty(t, rec)
	assert.Len(t, claim(t, s, "c", 10, t0, 0), 2)
	assert.Empty(t, claim(t, s, "c", 10, t0, 0))
}

// TestResourceAdmissionOrder: the claim admits in claim order and skips
// over-limit jobs for those behind them; each job's own limit decides.
func TestResourceAdmissionOrder(t *testing.T) {
	s := openStore(t)
	a1 := permit(spi.PriorityCritical, t0.Add(-3*time.Minute), "a", 1)
	a2 := permit(spi.PriorityCritical, t0.Add(-2*time.Minute), "a", 1)
	b1 := permit(spi.PriorityHigh, t0.Add(-3*time.Minute), "b", 1)
	b2 := permit(spi.PriorityHigh, t0.Add(-2*time.Minute), "b", 3) // a larger limit of its own
	p := job(spi.PriorityLowest, t0)
	insert(t, s, a1, a2, b1, b2, p)
	got := claim(t, s, "n", 3, t0, 0)
	assert.Equal(t, []uuid.UUID{a1.ID, b1.ID, b2.ID}, ids(got))
	got = claim(t, s, "n", 3, t0, 0)
	assert.Equal(t, []uuid.UUID{p.ID}, ids(got), "a is full")
}

func TestCheckClaims(t *testing.T) {
	ctx := context.Background()
	s := openStore(t)
	a, b, c := job(spi.PriorityNormal, t0), job(spi.PriorityNormal, t0), job(spi.PriorityNormal, t0)
	insert(t, s, a, b, c)
	got := claim(t, s, "n", 2, t0, 0)
	require.Len(t, got, 2)
	_, err := s.CompleteJobs(ctx, []spi.Completion{{ClaimRef: ref(got[1]), Outcome: spi.OutcomeSucceeded, FinishedAt: t0}})
	require.NoError(t, err)
	refs := []spi.ClaimRef{
		ref(got[0]),                      // current
		ref(got[1]),                      // finished
		{JobID: got[0].ID, ClaimSeq: 7},  // another sequence
		{JobID: c.ID},                    // PENDING
		{JobID: uuid.New(), ClaimSeq: 1}, // unknown
		ref(got[0]),                      // a repeat
	}
	ok, err := s.CheckClaims(ctx, refs)
	require.NoError(t, err)
	assert.Equal(t, []bool{true, false, false, false, false, true}, ok)
	ok, err = s.CheckClaims(ctx, nil)
	require.NoError(t, err)
	assert.Empty(t, ok)
}

func TestLeases(t *testing.T) {
	ctx := context.Background()
	s := openStore(t)
	acquire := func(name, owner string, ttl time.Duration, now time.Time) bool {
		t.Helper()
		ok, err := s.TryAcquireLease(ctx, name, owner, ttl, now)
		require.NoError(t, err)
		return ok
	}
	assert.True(t, acquire("cleanup", "a", time.Minute, t0))
	assert.False(t, acquire("cleanup", "b", time.Minute, t0.Add(59*time.Second)))
	assert.True(t, acquire("other", "b", time.Minute, t0), "leases are independent")
	assert.True(t, acquire("cleanup", "a", time.Minute, t0.Add(30*time.Second)), "renewal")
	assert.False(t, acquire("cleanup", "b", time.Minute, t0.Add(89*time.Second)), "the renewal extended the lease")
	assert.True(t, acquire("cleanup", "b", time.Minute, t0.Add(90*time.Second)), "expired when now reaches the expiry")
	assert.False(t, acquire("cleanup", "a", time.Minute, t0.Add(91*time.Second)))

	require.NoError(t, s.ReleaseLease(ctx, "cleanup", "a"), "not the owner: nothing happens")
	assert.False(t, acquire("cleanup", "a", time.Minute, t0.Add(92*time.Second)))
	require.NoError(t, s.ReleaseLease(ctx, "cleanup", "b"))
	assert.True(t, acquire("cleanup", "a", time.Minute, t0.Add(93*time.Second)))
	require.NoError(t, s.ReleaseLease(ctx, "never", "a"))

	for _, bad := range []struct {
		name, owner string
		ttl         time.Duration
	}{{"", "a", time.Minute}, {"x", "", time.Minute}, {"x", "a", 0}, {"x", "a", -time.Second}} {
		_, err := s.TryAcquireLease(ctx, bad.name, bad.owner, bad.ttl, t0)
		require.Error(t, err)
	}
}

func TestJobState(t *testing.T) {
	ctx := context.Background()
	s := openStore(t)
	j := job(spi.PriorityNormal, t0)
	insert(t, s, j)
	unknown := uuid.New()

	_, _, err := s.GetState(ctx, unknown, "ns")
	require.ErrorIs(t, err, spi.ErrNotFound)
	_, err = s.InitState(ctx, unknown, "ns", []byte(`{}`), 1)
	require.ErrorIs(t, err, spi.ErrNotFound)
	_, err = s.UpdateStateUnfenced(ctx, unknown, "ns", []byte(`{}`), 0)
	require.ErrorIs(t, err, spi.ErrNotFound)

	_, ok, err := s.GetState(ctx, j.ID, "ns")
	require.NoError(t, err)
	assert.False(t, ok)

	// Fenced writes need the current claim.
	res, err := s.InitState(ctx, j.ID, "ns", []byte(`{}`), 0)
	require.NoError(t, err)
	assert.Equal(t, spi.StateSuperseded, res, "a PENDING job")
	c := claim(t, s, "n", 1, t0, 0)[0]
	res, err = s.InitState(ctx, j.ID, "ns", []byte(`{}`), c.ClaimSeq+1)
	require.NoError(t, err)
	assert.Equal(t, spi.StateSuperseded, res, "another claim")

	raw := []byte("{ \"b\":1,  \"a\" : [\"\\u00e9\"] }\n")
	res, err = s.InitState(ctx, j.ID, "ns", raw, c.ClaimSeq)
	require.NoError(t, err)
	assert.Equal(t, spi.StateUpdated, res)
	res, err = s.InitState(ctx, j.ID, "ns", []byte(`{}`), c.ClaimSeq)
	require.NoError(t, err)
	assert.Equal(t, spi.StateVersionConflict, res, "init of an existing state")
	st, ok, err := s.GetState(ctx, j.ID, "ns")
	require.NoError(t, err)
	require.True(t, ok)
	assert.Equal(t, spi.VersionedState{JSON: raw, Version: 0}, st, "byte for byte")

	res, err = s.UpdateState(ctx, j.ID, "ns", []byte(`{"v":1}`), 1, c.ClaimSeq)
	require.NoError(t, err)
	assert.Equal(t, spi.StateVersionConflict, res)
	res, err = s.UpdateState(ctx, j.ID, "ns", []byte(`{"v":1}`), 0, c.ClaimSeq)
	require.NoError(t, err)
	assert.Equal(t, spi.StateUpdated, res)
	res, err = s.UpdateState(ctx, j.ID, "other", []byte(`{}`), 0, c.ClaimSeq)
	require.NoError(t, err)
	assert.Equal(t, spi.StateVersionConflict, res, "update of a missing state")
	res, err = s.UpdateStateUnfenced(ctx, j.ID, "ns", []byte(`{"v":2}`), 1)
	require.NoError(t, err)
	assert.Equal(t, spi.StateUpdated, res)
	st, _, err = s.GetState(ctx, j.ID, "ns")
	require.NoError(t, err)
	assert.Equal(t, spi.VersionedState{JSON: []byte(`{"v":2}`), Version: 2}, st)

	// Once the claim ends, fenced writes are superseded; unfenced ones
	// still apply.
	_, err = s.CompleteJobs(ctx, []spi.Completion{{ClaimRef: ref(c), Outcome: spi.OutcomeSucceeded, FinishedAt: t0}})
	require.NoError(t, err)
	res, err = s.UpdateState(ctx, j.ID, "ns", []byte(`{"v":3}`), 2, c.ClaimSeq)
	require.NoError(t, err)
	assert.Equal(t, spi.StateSuperseded, res)
	res, err = s.InitStateUnfenced(ctx, j.ID, "audit", []byte(`[]`))
	require.NoError(t, err)
	assert.Equal(t, spi.StateUpdated, res)
	res, err = s.InitStateUnfenced(ctx, j.ID, "audit", []byte(`[]`))
	require.NoError(t, err)
	assert.Equal(t, spi.StateVersionConflict, res)
	st, _, err = s.GetState(ctx, j.ID, "ns")
	require.NoError(t, err)
	assert.Equal(t, int64(2), st.Version)
}

func TestJobProperties(t *testing.T) {
	ctx := context.Background()
	s := openStore(t)
	a, b, c := job(spi.PriorityNormal, t0), job(spi.PriorityNormal, t0), job(spi.PriorityNormal, t0)
	insert(t, s, a, b, c)
	unknown := uuid.New()

	require.ErrorIs(t, s.PutProperty(ctx, unknown, "k", "v"), spi.ErrNotFound)
	_, _, err := s.GetProperty(ctx, unknown, "k")
	require.ErrorIs(t, err, spi.ErrNotFound)
	_, err = s.GetPropertiesByPrefix(ctx, unknown, "")
	require.ErrorIs(t, err, spi.ErrNotFound)
	require.Error(t, s.PutProperty(ctx, a.ID, "", "v"))

	for _, kv := range [][2]string{{"tenant", "acme"}, {"tenant.region", "eu"}, {"tenant_x", "1"}, {"Tenant", "2"}, {"t%", "3"}, {"order", "42"}} {
		require.NoError(t, s.PutProperty(ctx, a.ID, kv[0], kv[1]))
	}
	require.NoError(t, s.PutProperty(ctx, a.ID, "tenant", "acme"), "the same value again")
	err = s.PutProperty(ctx, a.ID, "tenant", "other")
	require.ErrorIs(t, err, spi.ErrPropertyExists)
	require.NoError(t, s.PutProperty(ctx, b.ID, "tenant", "acme"))
	require.NoError(t, s.PutProperty(ctx, c.ID, "tenant", "globex"))

	v, ok, err := s.GetProperty(ctx, a.ID, "tenant")
	require.NoError(t, err)
	assert.True(t, ok)
	assert.Equal(t, "acme", v)
	_, ok, err = s.GetProperty(ctx, a.ID, "missing")
	require.NoError(t, err)
	assert.False(t, ok)

	props, err := s.GetPropertiesByPrefix(ctx, a.ID, "tenant")
	require.NoError(t, err)
	assert.Equal(t, map[string]string{"tenant": "acme", "tenant.region": "eu", "tenant_x": "1"}, props)
	props, err = s.GetPropertiesByPrefix(ctx, a.ID, "t%")
	require.NoError(t, err)
	assert.Equal(t, map[string]string{"t%": "3"}, props, "% is no wildcard")
	props, err = s.GetPropertiesByPrefix(ctx, a.ID, "tenant_")
	require.NoError(t, err)
	assert.Equal(t, map[string]string{"tenant_x": "1"}, props, "_ is no wildcard")
	props, err = s.GetPropertiesByPrefix(ctx, a.ID, "")
	require.NoError(t, err)
	assert.Len(t, props, 6)
	props, err = s.GetPropertiesByPrefix(ctx, b.ID, "x")
	require.NoError(t, err)
	assert.Empty(t, props)

	found, err := s.FindJobsByProperty(ctx, "tenant", "acme", 10)
	require.NoError(t, err)
	assert.Equal(t, []uuid.UUID{a.ID, b.ID}, found)
	found, err = s.FindJobsByProperty(ctx, "tenant", "acme", 1)
	require.NoError(t, err)
	assert.Equal(t, []uuid.UUID{a.ID}, found)
	found, err = s.FindJobsByProperty(ctx, "tenant", "acme", 0)
	require.NoError(t, err)
	assert.Equal(t, []uuid.UUID{a.ID, b.ID}, found, "no limit")
	found, err = s.FindJobsByProperty(ctx, "tenant", "nobody", 10)
	require.NoError(t, err)
	assert.Empty(t, found)
}

// TestClusterRowsFollowTheirJob: deleting a job (archiving, later) deletes
// its state and properties.
func TestClusterRowsFollowTheirJob(t *testing.T) {
	ctx := context.Background()
	s := openStore(t)
	j := job(spi.PriorityNormal, t0)
	insert(t, s, j)
	require.NoError(t, s.PutProperty(ctx, j.ID, "k", "v"))
	_, err := s.InitStateUnfenced(ctx, j.ID, "ns", []byte(`{}`))
	require.NoError(t, err)
	exec(t, s, `DELETE FROM scheduler_job WHERE job_id = ?`, j.ID.String())
	for _, table := range []string{"scheduler_job_state", "scheduler_job_property", "scheduler_job_tag"} {
		var n int
		require.NoError(t, s.db.QueryRow(fmt.Sprintf(`SELECT COUNT(*) FROM %s`, table)).Scan(&n))
		assert.Zero(t, n, table)
	}
}

func TestCapabilitiesAfterClose(t *testing.T) {
	ctx := context.Background()
	s := openStore(t)
	require.NoError(t, s.Close())
	_, err := s.CheckClaims(ctx, nil)
	require.ErrorIs(t, err, spi.ErrClosed)
	_, err = s.TryAcquireLease(ctx, "l", "o", time.Minute, t0)
	require.ErrorIs(t, err, spi.ErrClosed)
	require.ErrorIs(t, s.ReleaseLease(ctx, "l", "o"), spi.ErrClosed)
	_, _, err = s.GetState(ctx, uuid.New(), "ns")
	require.ErrorIs(t, err, spi.ErrClosed)
	_, err = s.InitStateUnfenced(ctx, uuid.New(), "ns", nil)
	require.ErrorIs(t, err, spi.ErrClosed)
	require.ErrorIs(t, s.PutProperty(ctx, uuid.New(), "k", "v"), spi.ErrClosed)
	_, err = s.FindJobsByProperty(ctx, "k", "v", 1)
	require.ErrorIs(t, err, spi.ErrClosed)
}
