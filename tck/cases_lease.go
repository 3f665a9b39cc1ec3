package tck

import (
	"fmt"
	"sync"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratchet-go/ratchet/sdk/spi"
)

// capability returns the case's store as the optional interface C, or skips
// the case with a message naming the interface.
func capability[C any](f *fixture, name string) C {
	f.t.Helper()
	c, ok := pick[C](f.s)
	if !ok {
		f.t.Skipf("the store (%T) does not implement %s: its cases are skipped", f.s, name)
	}
	return c
}

// handleAs returns another handle of the store (from Harness.Reopen) as the
// optional interface C that the case's store implements, failing the case
// if it does not.
func handleAs[C any](f *fixture, s spi.Store, name string) C {
	f.t.Helper()
	c, ok := pick[C](s)
	if !ok {
		f.t.Fatalf("the store implements %s but the handle from Harness.Reopen (%T) does not", name, s)
	}
	return c
}

// pick returns the capability of type C that s advertises through
// spi.CapabilitiesOf (the one lookup the engine and the client use too).
func pick[C any](s spi.Store) (C, bool) {
	caps := spi.CapabilitiesOf(s)
	var v any
	switch any((*C)(nil)).(type) {
	case *spi.TxInserter:
		v = caps.Tx
	case *spi.WakeupListener:
		v = caps.Wakeups
	case *spi.ClaimChecker:
		v = caps.Claims
	case *spi.ClaimAdopter:
		v = caps.Adopter
	case *spi.LeaseStore:
		v = caps.Leases
	case *spi.JobStateStore:
		v = caps.State
	case *spi.JobPropertyStore:
		v = caps.Properties
	case *spi.NodeTaskStore:
		v = caps.Nodes
	case *spi.NodeReportStore:
		v = caps.Reports
	case *spi.StatsSampleStore:
		v = caps.Samples
	case *spi.JobCounter:
		v = caps.Counter
	case *spi.ScheduleStore:
		v = caps.Schedules
	case *spi.JobArchiver:
		v = caps.Archive
	case *spi.JobLogStore:
		v = caps.Logs
	case *spi.WorkflowStore:
		v = caps.Workflows
	case *spi.SignalStore:
		v = caps.Signals
	case *spi.BatchStore:
		v = caps.Batches
	case *spi.ValueRewriter:
		v = caps.Rewriter
	case *spi.StatsReader:
		v = caps.Stats
	case *spi.JobDeleter:
		v = caps.Deleter
	case *spi.AuditLog:
		v = caps.Audit
	case *spi.BulkManager:
		v = caps.Bulk
	case *spi.TaskPauser:
		v = caps.Pauser
	case *spi.AttemptStore:
		v = caps.Attempts
	case *spi.StartBySweeper:
		v = caps.StartBy
	case *spi.UniqueStore:
		v = caps.Unique
	case *spi.RateLimitStore:
		v = caps.Rates
	case *spi.SequenceStore:
		v = caps.Sequences
	case *spi.FairShareStore:
		v = caps.FairShare
	case *spi.WorkflowLister:
		v = caps.WorkflowList
	case *spi.BatchLister:
		v = caps.BatchList
	}
	c, ok := v.(C)
	return c, ok
}

// checkClaims runs CheckClaims, requiring one flag per ref.
func (f *fixture) checkClaims(cc spi.ClaimChecker, refs ...spi.ClaimRef) []bool {
	f.t.Helper()
	res, err := cc.CheckClaims(f.ctx, refs)
	require.NoError(f.t, err, "CheckClaims")
	require.Len(f.t, res, len(refs), "CheckClaims must return one flag per ref")
	return res
}

func claimCheckCases() []testCase {
	return []testCase{
		{"Current", func(t tb, f *fixture) {
			cc := capability[spi.ClaimChecker](f, "spi.ClaimChecker")
			jobs := f.insertN(3)
			a := f.claim("node-a", 2, at(time.Second), 0)
			b := f.claim("node-b", 2, at(time.Second), 0)
			require.Len(t, a, 2)
			require.Len(t, b, 1)
			assert.Equal(t, []bool{true, true, true, true}, f.checkClaims(cc, ref(b[0]), ref(a[1]), ref(a[0]), ref(b[0])),
				"current claims of two nodes, in any order, repeated")
			assert.Len(t, jobs, 3)
			res, err := cc.CheckClaims(f.ctx, nil)
			require.NoError(t, err, "CheckClaims of no refs")
			assert.Empty(t, res, "CheckClaims of no refs")
		}},
		{"AfterTransitions", func(t tb, f *fixture) {
			// A claim stops being current when its job completes (any
			// outcome), is released or is recovered.
			cc := capability[spi.ClaimChecker](f, "spi.ClaimChecker")
			jobs := f.insertN(6)
			now := at(time.Second)
			f.heartbeat("node-live", now)
			dead := f.claimOne(claimOrder(jobs, now, 0)[0].ID, "node-dead", now)
			cs := f.claim("node-live", 10, now, 0)
			require.Len(t, cs, 5)
			later := now.Add(time.Second)
			require.Equal(t, []bool{true, true, true}, f.complete(
				succeeded(cs[0], later, nil, ""),
				retried(cs[1], later, later, 1, "again"),
				failed(cs[2], later, 1, "boom"),
			))
			require.Equal(t, []bool{true}, f.release(later, ref(cs[3])))
			require.Len(t, f.recover(spi.RecoverParams{Now: later, Grace: time.Hour, MaxCrashRedeliveries: 3, LastError: "x"}), 1,
				"setup: the dead node's job is recovered")
			assert.Equal(t, []bool{false, true, false, false, false, true, false},
				f.checkClaims(cc, ref(cs[0]), ref(cs[4]), ref(cs[1]), ref(cs[2]), ref(cs[3]), ref(cs[4]), ref(dead)),
				"claims after success, (still running), retry, failure, release, (still running), recovery")
		}},
		{"StaleSeq", func(t tb, f *fixture) {
			cc := capability[spi.ClaimChecker](f, "spi.ClaimChecker")
			j := f.insertOne()
			first := f.claimOne(j.ID, "node-a", at(time.Second))
			require.Equal(t, []bool{true}, f.release(at(2*time.Second), ref(first)))
			cur := f.claimOne(j.ID, "node-b", at(3*time.Second))
			r := ref(cur)
			assert.Equal(t, []bool{false, true, false, false},
				f.checkClaims(cc, ref(first), r, spi.ClaimRef{JobID: j.ID, ClaimSeq: r.ClaimSeq + 1}, spi.ClaimRef{JobID: j.ID}),
				"old sequence, current sequence, a future sequence, sequence 0")
		}},
		{"Unknown", func(t tb, f *fixture) {
			cc := capability[spi.ClaimChecker](f, "spi.ClaimChecker")
			pending := f.insertOne(withDue(at(time.Hour)))
			assert.Equal(t, []bool{false, false, false},
				f.checkClaims(cc, spi.ClaimRef{JobID: id(995), ClaimSeq: 1}, ref(pending), spi.ClaimRef{JobID: pending.ID, ClaimSeq: 1}),
				"unknown job, never claimed PENDING job with its sequence 0 and with 1")
		}},
	}
}

// leaseTTL is the lease length of the lease cases.
const leaseTTL = time.Minute

// acquire runs TryAcquireLease, failing the case on an error.
func (f *fixture) acquire(ls spi.LeaseStore, name, owner string, ttl time.Duration, now time.Time) bool {
	f.t.Helper()
	ok, err := ls.TryAcquireLease(f.ctx, name, owner, ttl, now)
	require.NoError(f.t, err, "TryAcquireLease(%q, %q, %s, %s)", name, owner, ttl, now.Format(time.RFC3339Nano))
	return ok
}

// releaseLease runs ReleaseLease, failing the case on an error.
func (f *fixture) releaseLease(ls spi.LeaseStore, name, owner string) {
	f.t.Helper()
	require.NoError(f.t, ls.ReleaseLease(f.ctx, name, owner), "ReleaseLease(%q, %q)", name, owner)
}

func leaseCases() []testCase {
	return []testCase{
		{"AcquireAndConflict", func(t tb, f *fixture) {
			ls := capability[spi.LeaseStore](f, "spi.LeaseStore")
			t0 := at(time.Hour + 250*time.Microsecond)
			assert.True(t, f.acquire(ls, "migrate", "node-a", leaseTTL, t0), "a free lease is granted")
			assert.False(t, f.acquire(ls, "migrate", "node-b", leaseTTL, t0), "a held lease is refused to another owner")
			assert.False(t, f.acquire(ls, "migrate", "node-b", leaseTTL, t0.Add(30*time.Second)), "still held halfway through")
			assert.True(t, f.acquire(ls, "other", "node-b", leaseTTL, t0), "leases of other names are independent")
			assert.True(t, f.acquire(ls, "migrate", "node-a", leaseTTL, t0.Add(30*time.Second)), "the owner may renew")
		}},
		{"RenewalExtends", func(t tb, f *fixture) {
			// Renewed at t0+50s with a ttl of 1 min the lease runs to
			// t0+110s, not t0+60s.
			ls := capability[spi.LeaseStore](f, "spi.LeaseStore")
			t0 := at(time.Hour)
			require.True(t, f.acquire(ls, "singleton", "node-a", leaseTTL, t0))
			require.True(t, f.acquire(ls, "singleton", "node-a", leaseTTL, t0.Add(50*time.Second)), "renewal by the owner")
			assert.False(t, f.acquire(ls, "singleton", "node-b", leaseTTL, t0.Add(100*time.Second)), "the renewal extends the lease to renewal + ttl")
			assert.False(t, f.acquire(ls, "singleton", "node-b", leaseTTL, t0.Add(110*time.Second-time.Microsecond)), "held until renewal + ttl")
			assert.True(t, f.acquire(ls, "singleton", "node-b", leaseTTL, t0.Add(110*time.Second)), "expired at renewal + ttl")
		}},
		{"ExpiryBoundary", func(t tb, f *fixture) {
			// A lease granted at now for ttl is expired when now' >= now+ttl.
			ls := capability[spi.LeaseStore](f, "spi.LeaseStore")
			t0 := at(time.Hour + 123456*time.Microsecond)
			ttl := 90*time.Second + 7*time.Microsecond
			require.True(t, f.acquire(ls, "boundary", "node-a", ttl, t0))
			assert.False(t, f.acquire(ls, "boundary", "node-b", ttl, t0.Add(ttl-time.Microsecond)), "1 µs before now+ttl the lease is held")
			assert.True(t, f.acquire(ls, "boundary", "node-b", ttl, t0.Add(ttl)), "at exactly now+ttl the lease has expired")
			assert.False(t, f.acquire(ls, "boundary", "node-a", ttl, t0.Add(ttl)), "the old owner lost it to the new one")
		}},
		{"Takeover", func(t tb, f *fixture) {
			ls := capability[spi.LeaseStore](f, "spi.LeaseStore")
			t0 := at(time.Hour)
			require.True(t, f.acquire(ls, "job-sweeper", "node-a", leaseTTL, t0))
			exp := t0.Add(leaseTTL + time.Hour)
			assert.True(t, f.acquire(ls, "job-sweeper", "node-b", leaseTTL, exp), "an expired lease is taken over")
			assert.False(t, f.acquire(ls, "job-sweeper", "node-a", leaseTTL, exp.Add(time.Second)), "the old owner cannot renew a lease taken over")
			f.releaseLease(ls, "job-sweeper", "node-a")
			assert.False(t, f.acquire(ls, "job-sweeper", "node-c", leaseTTL, exp.Add(2*time.Second)), "the old owner's release does not free the new owner's lease")
			assert.True(t, f.acquire(ls, "job-sweeper", "node-b", leaseTTL, exp.Add(3*time.Second)), "the new owner still holds it")
		}},
		{"Release", func(t tb, f *fixture) {
			ls := capability[spi.LeaseStore](f, "spi.LeaseStore")
			t0 := at(time.Hour)
			require.True(t, f.acquire(ls, "ddl", "node-a", leaseTTL, t0))
			f.releaseLease(ls, "ddl", "node-b")
			assert.False(t, f.acquire(ls, "ddl", "node-c", leaseTTL, t0.Add(time.Second)), "a release by another owner does nothing")
			f.releaseLease(ls, "ddl", "node-a")
			assert.True(t, f.acquire(ls, "ddl", "node-b", leaseTTL, t0.Add(time.Second)), "after the owner's release another owner acquires at once")
			f.releaseLease(ls, "never-acquired", "node-a")
			f.releaseLease(ls, "ddl", "node-b")
			f.releaseLease(ls, "ddl", "node-b")
			assert.True(t, f.acquire(ls, "ddl", "node-a", leaseTTL, t0.Add(2*time.Second)), "released twice: free")
		}},
		{"Concurrency", func(t tb, f *fixture) {
			// 8 owners try the same free lease at the same now: exactly one
			// wins. Repeated over several lease names.
			ls := capability[spi.LeaseStore](f, "spi.LeaseStore")
			hs := []spi.LeaseStore{ls}
			for _, s := range f.handles()[1:] {
				hs = append(hs, handleAs[spi.LeaseStore](f, s, "spi.LeaseStore"))
			}
			const owners, rounds = 8, 10
			now := at(time.Hour)
			for round := range rounds {
				name := fmt.Sprintf("race-%d", round)
				var (
					wg      sync.WaitGroup
					mu      sync.Mutex
					winners []string
					errs    []error
				)
				start := make(chan struct{})
				for g := range owners {
					l := hs[g%len(hs)]
					owner := fmt.Sprintf("node-%d", g)
					wg.Add(1)
					go func() {
						defer wg.Done()
						<-start
						ok, err := l.TryAcquireLease(f.ctx, name, owner, leaseTTL, now)
						mu.Lock()
						defer mu.Unlock()
						if err != nil {
							errs = append(errs, err)
						}
						if ok {
							winners = append(winners, owner)
						}
					}()
				}
				close(start)
				wg.Wait()
				require.Empty(t, errs, "round %d: TryAcquireLease errors", round)
				require.Len(t, winners, 1, "round %d: %d owners racing for a free lease: exactly one wins (winners %v)", round, owners, winners)
			}
		}},
	}
}
