package tck

import (
	"fmt"
	"runtime"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratchet-go/ratchet/sdk/spi"
)

// countResource returns how many of jobs name resource r.
func countResource(jobs []*spi.Job, r string) int {
	n := 0
	for _, j := range jobs {
		if j.Resource == r {
			n++
		}
	}
	return n
}

// runningOf returns the number of RUNNING jobs of resource r as the store
// lists them.
func (f *fixture) runningOf(r string) int {
	f.t.Helper()
	return countResource(f.listAll(spi.StatusRunning), r)
}

// permitRelease is one way a RUNNING job gives its permit back: it acts on
// claim c (owned by node-dead, whose node row is missing, while node-live
// is alive) at now.
type permitRelease struct {
	name string
	act  func(f *fixture, c *spi.Job, now time.Time)
}

var permitReleases = []permitRelease{
	{"Success", func(f *fixture, c *spi.Job, now time.Time) {
		require.Equal(f.t, []bool{true}, f.complete(succeeded(c, now, nil, "")), "success of the permit holder")
	}},
	{"Retry", func(f *fixture, c *spi.Job, now time.Time) {
		// The retry is due much later, so it does not compete again.
		require.Equal(f.t, []bool{true}, f.complete(retried(c, now, now.Add(100*time.Hour), 1, "again")), "retry of the permit holder")
	}},
	{"Failure", func(f *fixture, c *spi.Job, now time.Time) {
		require.Equal(f.t, []bool{true}, f.complete(failed(c, now, 1, "boom")), "failure of the permit holder")
	}},
	{"ReleaseJobs", func(f *fixture, c *spi.Job, now time.Time) {
		require.Equal(f.t, []bool{true}, f.release(now, ref(c)), "release of the permit holder")
	}},
	{"Recovery", func(f *fixture, c *spi.Job, now time.Time) {
		rec := f.recover(spi.RecoverParams{Now: now, Grace: time.Hour, MaxCrashRedeliveries: 3, LastError: "crashed"})
		require.Equal(f.t, []uuid.UUID{c.ID}, recoveredIDs(rec), "recovery of the dead node's permit holder")
		require.Equal(f.t, spi.StatusPending, rec[0].NewStatus)
	}},
	{"RecoveryToFailed", func(f *fixture, c *spi.Job, now time.Time) {
		rec := f.recover(spi.RecoverParams{Now: now, Grace: time.Hour, MaxCrashRedeliveries: 0, LastError: "crashed"})
		require.Equal(f.t, []uuid.UUID{c.ID}, recoveredIDs(rec), "recovery of the dead node's permit holder")
		require.Equal(f.t, spi.StatusFailed, rec[0].NewStatus)
	}},
}

// permitReleaseCase returns the case checking that rel frees exactly one
// permit: 4 jobs of R with limit 2, two claimed (one by a dead node), then
// rel on that one lets exactly one more job of R be claimed.
func permitReleaseCase(rel permitRelease) testCase {
	return testCase{"FreedBy" + rel.name, func(t tb, f *fixture) {
		var jobs []*spi.Job
		for i := range 4 {
			jobs = append(jobs, f.newJob(withResource("R", 2), withDue(at(time.Duration(i)*time.Second))))
		}
		f.insert(shuffled(jobs)...)
		now := at(time.Minute)
		f.heartbeat("node-live", now)
		c0 := f.claimOne(jobs[0].ID, "node-dead", now)
		got := f.claim("node-live", 10, now, 0)
		require.Equal(t, []uuid.UUID{jobs[1].ID}, ids(got), "R (limit 2) has one permit left: the claim takes exactly the next job")
		require.Empty(t, f.claim("node-live", 10, now, 0), "R is full: nothing is claimed")

		later := now.Add(time.Second)
		f.heartbeat("node-live", later)
		rel.act(f, c0, later)
		got = f.claim("node-live", 10, later, 0)
		assert.Equal(t, []uuid.UUID{jobs[2].ID}, ids(got), "%s of a permit holder frees exactly one permit of R: the next job of R is claimed", rel.name)
		assert.Empty(t, f.claim("node-live", 10, later, 0), "R is full again")
		assert.Equal(t, 2, f.runningOf("R"), "RUNNING jobs of R")
	}}
}

func permitCases() []testCase {
	cases := []testCase{
		{"RoundTrip", func(t tb, f *fixture) {
			j := f.insertOne(withResource("gpu-pool/ü 1", 7))
			plain := f.insertOne(withDue(at(time.Second)))
			got := f.get(j.ID)
			assertJob(t, j, got, "GetJob of a job with a resource")
			assert.Equal(t, "gpu-pool/ü 1", got.Resource, "Resource")
			assert.Equal(t, 7, got.ResourceLimit, "ResourceLimit")
			gp := f.get(plain.ID)
			assert.Empty(t, gp.Resource, "Resource of a job without one")
			assert.Zero(t, gp.ResourceLimit, "ResourceLimit of a job without a resource")
			c := f.claimOne(j.ID, "node-a", at(time.Second/2))
			assert.Equal(t, "gpu-pool/ü 1", c.Resource, "Resource of the claimed job")
			assert.Equal(t, 7, c.ResourceLimit, "ResourceLimit of the claimed job")
		}},
		{"InvalidLimit", func(t tb, f *fixture) {
			// Resource set with a limit below 1: an error, and nothing is
			// written, not even the idempotency key.
			for _, bad := range []*spi.Job{
				f.newJob(withResource("R", 0)),
				f.newJob(withResource("R", -1)),
				f.newJob(withResource("R", 0), withKey("bad-limit")),
			} {
				_, err := f.s.InsertJobs(f.ctx, []*spi.Job{bad.Clone()}, spi.InsertOptions{})
				assert.Error(t, err, "InsertJobs of a job with Resource %q, ResourceLimit %d and key %q must fail", bad.Resource, bad.ResourceLimit, bad.IdempotencyKey)
				_, err = f.s.GetJob(f.ctx, bad.ID)
				assert.ErrorIs(t, err, spi.ErrNotFound, "a job rejected for ResourceLimit %d must not be written", bad.ResourceLimit)
			}
			assert.Empty(t, f.listAll(""), "nothing is written")
			good := f.newJob(withKey("bad-limit"))
			res, err := f.s.InsertJobs(f.ctx, []*spi.Job{good.Clone()}, spi.InsertOptions{})
			require.NoError(t, err)
			require.Len(t, res, 1)
			assert.Equal(t, spi.InsertResult{ID: good.ID}, res[0], "the key of a rejected job must not be taken")
		}},
		{"InvalidLimitInBatch", func(t tb, f *fixture) {
			// A batch holding a job with an invalid limit fails whole.
			ok1 := f.newJob(withKey("ok-1"))
			bad := f.newJob(withResource("R", 0))
			ok2 := f.newJob(withResource("R", 1))
			_, err := f.s.InsertJobs(f.ctx, cloneJobs([]*spi.Job{ok1, bad, ok2}), spi.InsertOptions{})
			assert.Error(t, err, "InsertJobs of a batch with a job of ResourceLimit 0 must fail")
			assert.Empty(t, ids(f.listAll("")), "a rejected batch writes nothing")
			res, err := f.s.InsertJobs(f.ctx, []*spi.Job{ok1.Clone()}, spi.InsertOptions{})
			require.NoError(t, err)
			require.Len(t, res, 1)
			assert.Equal(t, spi.InsertResult{ID: ok1.ID}, res[0], "the keys of a rejected batch must not be taken")
		}},
		{"LimitInOneClaim", func(t tb, f *fixture) {
			// 10 due jobs of R (limit 2), claims of 10: two at a time, in
			// the contract's order, the others stay PENDING until the
			// holders complete.
			var jobs []*spi.Job
			for i := range 10 {
				jobs = append(jobs, f.newJob(withResource("R", 2), withPriority(spi.Priority(i%spi.NumPriorities)),
					withDue(at(time.Duration(i)*time.Second))))
			}
			f.insert(shuffled(jobs)...)
			now := at(time.Minute)
			order := claimOrder(jobs, now, 0)
			for round := range 5 {
				got := f.claim("node-a", 10, now, 0)
				require.Len(t, got, 2, "round %d: a claim of 10 takes only as many jobs of R as it has free permits (2)", round)
				assert.ElementsMatch(t, ids(order[2*round:2*round+2]), ids(got), "round %d: the first two jobs of R in the contract's order", round)
				for _, j := range order[2*round+2:] {
					assert.Equal(t, spi.StatusPending, f.get(j.ID).Status, "round %d: job %s of R beyond the limit stays PENDING", round, j.ID)
				}
				assert.Empty(t, f.claim("node-b", 10, now, 0), "round %d: R is full", round)
				require.Equal(t, []bool{true, true}, f.complete(succeeded(got[0], now, nil, ""), succeeded(got[1], now, nil, "")))
			}
			assert.Empty(t, f.claim("node-a", 10, now, 0), "every job of R ran")
		}},
		{"NoHeadOfLineBlocking", func(t tb, f *fixture) {
			// 50 old CRITICAL jobs of a full resource on top of the order
			// and 5 plain LOW jobs: a claim of 5 takes the plain jobs.
			now := at(10 * time.Hour)
			var held []*spi.Job
			for i := range 50 {
				held = append(held, f.newJob(withResource("R", 1), withPriority(spi.PriorityCritical), withDue(at(time.Duration(i)*time.Second))))
			}
			var plain []*spi.Job
			for i := range 5 {
				plain = append(plain, f.newJob(withPriority(spi.PriorityLow), withDue(now.Add(-time.Duration(i)*time.Second))))
			}
			f.insert(shuffled(append(append([]*spi.Job{}, held...), plain...))...)
			first := f.claim("node-a", 1, now, boost)
			require.Equal(t, []uuid.UUID{held[0].ID}, ids(first), "setup: the best job of R takes R's only permit")
			got := f.claim("node-a", 5, now, boost)
			assert.ElementsMatch(t, ids(plain), ids(got), "jobs of a full resource must be skipped, not block the jobs behind them")
			assert.Empty(t, f.claim("node-a", 5, now, boost), "R is full and nothing else is due")
			assertJob(t, held[1], f.get(held[1].ID), "a job of the full resource stays PENDING and unchanged")
		}},
		{"NoHeadOfLineInOneClaim", func(t tb, f *fixture) {
			// The same inside one claim: with R (limit 2) free, a claim of
			// 5 takes 2 jobs of R and the best 3 plain jobs.
			now := at(10 * time.Hour)
			var held []*spi.Job
			for i := range 50 {
				held = append(held, f.newJob(withResource("R", 2), withPriority(spi.PriorityCritical), withDue(at(time.Duration(i)*time.Second))))
			}
			var plain []*spi.Job
			for i := range 5 {
				plain = append(plain, f.newJob(withPriority(spi.PriorityLow), withDue(now.Add(-time.Duration(i)*time.Minute))))
			}
			f.insert(shuffled(append(append([]*spi.Job{}, held...), plain...))...)
			got := f.claim("node-a", 5, now, 0)
			want := append(ids(held[:2]), ids(claimOrder(plain, now, 0)[:3])...)
			assert.ElementsMatch(t, want, ids(got), "a claim of 5: the 2 best jobs of R (its limit), then the 3 best plain jobs")
			assert.ElementsMatch(t, ids(claimOrder(plain, now, 0)[3:]), ids(f.claim("node-a", 5, now, 0)), "then the last 2 plain jobs")
		}},
		{"IndependentResources", func(t tb, f *fixture) {
			var r1, r2, plain []*spi.Job
			for i := range 3 {
				r1 = append(r1, f.newJob(withResource("R1", 1), withDue(at(time.Duration(i)*time.Second))))
				r2 = append(r2, f.newJob(withResource("R2", 2), withDue(at(time.Duration(i)*time.Second))))
				plain = append(plain, f.newJob(withDue(at(time.Duration(i)*time.Second))))
			}
			f.insert(shuffled(append(append(append([]*spi.Job{}, r1...), r2...), plain...))...)
			now := at(time.Minute)
			got := f.claim("node-a", 20, now, 0)
			assert.Equal(t, 1, countResource(got, "R1"), "R1 (limit 1)")
			assert.Equal(t, 2, countResource(got, "R2"), "R2 (limit 2): a full R1 does not hold R2 back")
			assert.Equal(t, 3, countResource(got, ""), "jobs without a resource are not limited")
			require.Len(t, got, 6)
			var c1 *spi.Job
			for _, j := range got {
				if j.Resource == "R1" {
					c1 = j
				}
			}
			require.NotNil(t, c1)
			require.Equal(t, []bool{true}, f.complete(succeeded(c1, now, nil, "")))
			got = f.claim("node-a", 20, now, 0)
			assert.Equal(t, 1, countResource(got, "R1"), "R1's freed permit")
			assert.Len(t, got, 1, "R2 is still full: only the job of R1")
		}},
		{"Concurrency", func(t tb, f *fixture) {
			// 200 jobs of R (limit 3); 8 goroutines claim batches of 4 and
			// complete what they get, each holding its jobs until another
			// claim has returned. The test counts R's running jobs from the
			// claims and completions (decremented before the completion is
			// sent, so it never exceeds the store's own count): it must
			// never pass 3, and every job is claimed exactly once.
			const total, limit, workers, batch = 200, 3, 8, 4
			var jobs []*spi.Job
			for i := range total {
				jobs = append(jobs, f.newJob(withResource("R", limit), withPriority(spi.Priority(i%spi.NumPriorities)),
					withDue(at(time.Duration(i%20)*time.Second))))
			}
			for i := 0; i < total; i += 100 {
				f.insert(jobs[i : i+100]...)
			}
			now := at(time.Hour)
			hs := f.handles()
			var (
				mu       sync.Mutex
				running  int
				peak     int
				claims   = map[uuid.UUID]int{}
				done     int
				errs     []string
				calls    int
				claimed  int // ClaimJobs calls returned
				maxCalls = 100 * total
				wg       sync.WaitGroup
			)
			report := func(format string, args ...any) {
				if len(errs) < 10 {
					errs = append(errs, fmt.Sprintf(format, args...))
				}
			}
			for g := range workers {
				s := hs[g%len(hs)]
				node := fmt.Sprintf("tck-permit-%02d", g)
				wg.Add(1)
				go func() {
					defer wg.Done()
					defer func() {
						if r := recover(); r != nil {
							mu.Lock()
							report("%s: panic: %v", node, r)
							mu.Unlock()
						}
					}()
					for {
						mu.Lock()
						stop := done >= total || len(errs) > 0 || calls >= maxCalls
						calls++
						mu.Unlock()
						if stop {
							return
						}
						js, err := s.ClaimJobs(f.ctx, spi.ClaimParams{NodeID: node, Limit: batch, Now: now})
						mu.Lock()
						if err != nil {
							report("%s: ClaimJobs: %v", node, err)
						}
						running += len(js)
						peak = max(peak, running)
						if running > limit {
							report("%s: after a claim of %d jobs, %d jobs of R are RUNNING; its limit is %d", node, len(js), running, limit)
						}
						for _, j := range js {
							claims[j.ID]++
							if claims[j.ID] > 1 {
								report("job %s claimed twice", j.ID)
							}
						}
						claimed++
						mark := claimed
						mu.Unlock()
						if len(js) == 0 {
							runtime.Gosched()
							continue
						}
						// Hold the jobs until another claim has returned
						// (or a while), so that claims overlap the holding,
						// then count them as finished before the
						// completion is sent.
						for i := 0; i < 200; i++ {
							runtime.Gosched()
							mu.Lock()
							moved := claimed != mark
							mu.Unlock()
							if moved {
								break
							}
						}
						mu.Lock()
						running -= len(js)
						mu.Unlock()
						cs := make([]spi.Completion, len(js))
						for i, j := range js {
							cs[i] = succeeded(j, now, nil, "")
						}
						res, err := s.CompleteJobs(f.ctx, cs)
						mu.Lock()
						switch {
						case err != nil:
							report("%s: CompleteJobs: %v", node, err)
						case len(res) != len(cs):
							report("%s: CompleteJobs returned %d flags for %d completions", node, len(res), len(cs))
						default:
							for i, ok := range res {
								if !ok {
									report("%s: the completion of job %s, claimed and owned, was superseded", node, cs[i].JobID)
								}
							}
						}
						done += len(js)
						mu.Unlock()
					}
				}()
			}
			wg.Wait()
			for _, e := range errs {
				t.Errorf("%s", e)
			}
			if calls >= maxCalls {
				t.Errorf("gave up after %d ClaimJobs calls with %d of %d jobs done: permits are not given back", calls, done, total)
			}
			assert.Len(t, claims, total, "distinct jobs claimed")
			assert.LessOrEqual(t, peak, limit, "peak of RUNNING jobs of R")
			t.Logf("%d ClaimJobs calls over %d handle(s); peak %d RUNNING jobs of R", calls, len(hs), peak)
			assert.Len(t, f.listAll(spi.StatusSucceeded), total, "every job of R SUCCEEDED")
		}},
	}
	for _, rel := range permitReleases {
		cases = append(cases, permitReleaseCase(rel))
	}
	return cases
}
