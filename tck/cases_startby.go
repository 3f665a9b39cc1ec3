package tck

import (
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratchet-go/ratchet/sdk/spi"
)

// The cases of start-by deadlines (ratchet.WithStartBy): the store keeps
// the deadline in the job's params and hands it to the node that claims
// the job; a node that claims it too late writes the expiry's failure,
// which ends the job FAILED with its retries unspent.
func startByCases() []testCase {
	return []testCase{
		{"ParamsReachTheClaim", func(t tb, f *fixture) {
			by := at(2 * time.Second).UTC()
			params := map[string]string{spi.StartByParam: by.Format(time.RFC3339Nano)}
			j := f.insertOne(withParams(params))
			assert.Equal(t, params, f.get(j.ID).Params, "GetJob keeps the start-by param")
			c := f.claimOne(j.ID, "node-a", at(time.Second))
			got, ok := spi.StartBy(c)
			require.True(t, ok, "the claimed job carries its start-by deadline: the node decides from it")
			assert.True(t, got.Equal(by), "the deadline %s comes back as %s", by, got)
		}},
		{"WindowReachesTheClaim", func(t tb, f *fixture) {
			// A start-within window counts from the due time the claimed
			// job carries; with a deadline too, the earlier time holds.
			params := map[string]string{spi.StartWithinParam: "3s"}
			j := f.insertOne(withParams(params))
			c := f.claimOne(j.ID, "node-a", at(time.Second))
			got, ok := spi.StartBy(c)
			require.True(t, ok, "the claimed job carries its window")
			assert.True(t, got.Equal(c.ScheduledAt.Add(3*time.Second)), "due %s + 3s, got %s", c.ScheduledAt, got)
			both := map[string]string{spi.StartWithinParam: "1h", spi.StartByParam: at(2 * time.Second).Format(time.RFC3339Nano)}
			k := f.insertOne(withParams(both))
			got, _ = spi.StartBy(f.claimOne(k.ID, "node-a", at(time.Second)))
			assert.True(t, got.Equal(at(2*time.Second)), "the earlier of deadline and window: %s", got)
		}},
		{"ExpiredEndsFailed", func(t tb, f *fixture) {
			// Claimed past its deadline with three retries left: the
			// node's expiry write ends it FAILED, not PENDING again.
			by := at(time.Second)
			j := f.insertOne(withParams(map[string]string{spi.StartByParam: by.Format(time.RFC3339Nano)}), withMaxRetries(3))
			c := f.claimOne(j.ID, "node-a", at(5*time.Second))
			expiry := "do not retry: ratchet: start-by deadline passed: not started by " + by.UTC().Format(time.RFC3339Nano)
			require.Equal(t, []bool{true}, f.complete(failed(c, at(5*time.Second), 1, expiry)), "the node's expiry write")
			got := f.get(j.ID)
			assert.Equal(t, spi.StatusFailed, got.Status)
			assert.Equal(t, expiry, got.LastError)
			assert.Equal(t, 1, got.Attempts, "one attempt charged, two retries unspent")
			assert.Empty(t, f.claim("node-b", 10, at(time.Minute), 0), "an expired job is never claimed again")
		}},
	}
}

// The cases of the start-by sweeper (spi.StartBySweeper): its read finds
// the PENDING jobs past the deadline their property names, in pages that
// read each once; its expiry ends such a job FAILED, unrun, fenced by the
// claim sequence read.
func startBySweepCases() []testCase {
	return []testCase{
		{"Unclaimed", func(t tb, f *fixture) {
			// The sweeper's read finds a PENDING job past the deadline of
			// its property, and its expiry ends it FAILED, unrun, once.
			sw := capability[spi.StartBySweeper](f, "spi.StartBySweeper")
			by := at(2 * time.Second)
			j := f.insertOne(withDeadline(by), withMaxRetries(3))
			other := f.insertOne()
			got, next := f.unstarted(sw, by, spi.StartByCursor{}, 10)
			assert.Empty(t, got, "not before its deadline")
			assert.Equal(t, spi.StartByCursor{}, next)
			got, _ = f.unstarted(sw, by.Add(time.Microsecond), spi.StartByCursor{}, 10)
			require.Equal(t, []string{j.ID.String()}, idStrings(got), "past its deadline: the job, whole; not the job without one")
			assert.Equal(t, j.Params, got[0].Params, "read whole: its params decide its deadline")
			now := at(3 * time.Second)
			msg := "do not retry: ratchet: start-by deadline passed: not started by " + by.UTC().Format(time.RFC3339Nano)
			res, err := sw.ExpireJobs(f.ctx, []spi.Expiry{{ClaimRef: ref(got[0]), LastError: msg}}, now)
			require.NoError(t, err)
			assert.Equal(t, []bool{true}, res)
			g := f.get(j.ID)
			assert.Equal(t, [4]any{spi.StatusFailed, msg, 0, true}, [4]any{g.Status, g.LastError, g.Attempts, g.FinishedAt.Equal(now)},
				"FAILED with its error, finished at now, no attempt spent")
			res, err = sw.ExpireJobs(f.ctx, []spi.Expiry{{ClaimRef: ref(got[0]), LastError: msg}}, now)
			require.NoError(t, err)
			assert.Equal(t, []bool{false}, res, "a FAILED job is not expired twice")
			got, _ = f.unstarted(sw, at(time.Hour), spi.StartByCursor{}, 10)
			assert.Empty(t, got, "a failed job is no candidate")
			assert.Equal(t, []string{other.ID.String()}, idStrings(f.claim("node-a", 10, at(time.Hour), 0)), "the expired job is never claimed")
		}},
		{"OnlyPending", func(t tb, f *fixture) {
			// A RUNNING job past its deadline is its node's to decide, and
			// an expiry under a claim sequence no longer current (the job
			// was claimed and released since the read) applies nowhere.
			sw := capability[spi.StartBySweeper](f, "spi.StartBySweeper")
			j := f.insertOne(withDeadline(at(time.Second)))
			read, _ := f.unstarted(sw, at(time.Minute), spi.StartByCursor{}, 10)
			require.Len(t, read, 1)
			c := f.claimOne(j.ID, "node-a", at(30*time.Second))
			got, _ := f.unstarted(sw, at(time.Minute), spi.StartByCursor{}, 10)
			assert.Empty(t, got, "a RUNNING job is no candidate")
			require.Equal(t, []bool{true}, f.release(at(40*time.Second), ref(c)))
			res, err := sw.ExpireJobs(f.ctx, []spi.Expiry{{ClaimRef: ref(read[0]), LastError: "expired"}}, at(time.Minute))
			require.NoError(t, err)
			assert.Equal(t, []bool{false}, res, "the expiry of a stale read is fenced out")
			assert.Equal(t, spi.StatusPending, f.get(j.ID).Status)
		}},
		{"InPages", func(t tb, f *fixture) {
			// Pages of 2 read 5 candidates once each, then end.
			sw := capability[spi.StartBySweeper](f, "spi.StartBySweeper")
			want := map[string]bool{}
			for k := range 5 {
				want[f.insertOne(withDeadline(at(time.Duration(k%3)*time.Second))).ID.String()] = true
			}
			seen := map[string]bool{}
			var cur spi.StartByCursor
			for range 5 {
				page, next := f.unstarted(sw, at(time.Minute), cur, 2)
				for _, j := range page {
					assert.False(t, seen[j.ID.String()], "job %s read twice", j.ID)
					seen[j.ID.String()] = true
				}
				if next == (spi.StartByCursor{}) {
					break
				}
				cur = next
			}
			assert.Equal(t, want, seen, "every candidate once")
		}},
	}
}

// withDeadline gives a job the start-by deadline by, in its params and in
// the property the sweeper reads (as the client writes both).
func withDeadline(by time.Time) jobOpt {
	return func(j *spi.Job) {
		j.Params = map[string]string{spi.StartByParam: by.UTC().Format(time.RFC3339Nano)}
		j.Properties = map[string]string{spi.StartByProperty: spi.FormatStartBy(by)}
	}
}

// unstarted reads a page of the sweeper's candidates.
func (f *fixture) unstarted(sw spi.StartBySweeper, before time.Time, after spi.StartByCursor, limit int) ([]*spi.Job, spi.StartByCursor) {
	f.t.Helper()
	jobs, next, err := sw.UnstartedJobs(f.ctx, before, after, limit)
	require.NoError(f.t, err, "UnstartedJobs")
	return jobs, next
}

// idStrings is the ids of jobs as text.
func idStrings(jobs []*spi.Job) []string {
	out := make([]string, len(jobs))
	for i, j := range jobs {
		out[i] = j.ID.String()
	}
	return out
}
