package tck

import (
	"context"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratchet-go/ratchet/sdk/spi"
)

// abortedByHand is claimed job c as CancelJob leaves it at now
// (spi.Aborted): CANCELLED, finished at now, no owner, its claim sequence
// one more, its attempts and crash count untouched.
func abortedByHand(c *spi.Job, now time.Time) *spi.Job {
	want := c.Clone()
	want.Status = spi.StatusCancelled
	want.FinishedAt = now
	want.OwnerNode = ""
	want.ClaimSeq = c.ClaimSeq + 1
	return want
}

// runningJob inserts a job and claims it by node-a at now.
func (f *fixture) runningJob(now time.Time, opts ...jobOpt) *spi.Job {
	f.t.Helper()
	j := f.insertOne(opts...)
	return f.claimOne(j.ID, "node-a", now)
}

// The cases of cancelling a RUNNING job (CancelJob, and CancelJobs in the
// Bulk group): one write makes it CANCELLED and ends its claim, so that
// its owner's later writes are superseded and its permit is free.
func cancelRunningCases() []testCase {
	return []testCase{
		{"Cancelled", func(t tb, f *fixture) {
			c := f.runningJob(at(time.Second), withTags("x"))
			now := at(time.Minute + 7*time.Microsecond)
			require.NoError(t, f.s.CancelJob(f.ctx, c.ID, now), "CancelJob of a RUNNING job")
			assertJob(t, abortedByHand(c, now), f.get(c.ID), "a RUNNING job after CancelJob: CANCELLED, finished at now, no owner, its claim sequence one more")
			if cc, ok := pick[spi.ClaimChecker](f.s); ok {
				assert.Equal(t, []bool{false}, f.checkClaims(cc, ref(c)), "the cancelled claim is no longer current")
			}
			err := f.s.CancelJob(f.ctx, c.ID, now.Add(time.Hour))
			assert.ErrorIs(t, err, spi.ErrInvalidState, "a second CancelJob of the cancelled job")
			assertJob(t, abortedByHand(c, now), f.get(c.ID), "a second CancelJob changes nothing")
		}},
		{"OwnerSuperseded", func(t tb, f *fixture) {
			// Every write of the owner's claim after the cancel is
			// superseded, and no recovery touches the cancelled job.
			now := at(time.Minute)
			for name, write := range map[string]func(c *spi.Job) []bool{
				"success": func(c *spi.Job) []bool { return f.complete(succeeded(c, now.Add(time.Second), []byte(`1`), "int")) },
				"retry": func(c *spi.Job) []bool {
					return f.complete(retried(c, now.Add(time.Second), now.Add(time.Minute), 1, "again"))
				},
				"failure": func(c *spi.Job) []bool { return f.complete(failed(c, now.Add(time.Second), 1, "boom")) },
				"release": func(c *spi.Job) []bool { return f.release(now.Add(time.Second), ref(c)) },
			} {
				c := f.runningJob(at(time.Second))
				require.NoError(t, f.s.CancelJob(f.ctx, c.ID, now), "CancelJob of a RUNNING job")
				assert.Equal(t, []bool{false}, write(c), "the owner's %s after the cancel is superseded", name)
				assertJob(t, abortedByHand(c, now), f.get(c.ID), "the owner's "+name+" after the cancel changes nothing")
			}
			rec := f.recover(spi.RecoverParams{Now: at(time.Hour), Grace: time.Second, MaxCrashRedeliveries: 3, LastError: "crashed",
				Nodes: []string{"node-a"}})
			assert.Empty(t, rec, "a cancelled job is not an orphan of its dead owner")
			assert.Empty(t, f.claim("node-b", 10, at(100*time.Hour), boost), "a cancelled job is never claimed")
		}},
		permitReleaseCase(permitRelease{"CancelJob", func(f *fixture, c *spi.Job, now time.Time) {
			require.NoError(f.t, f.s.CancelJob(f.ctx, c.ID, now), "CancelJob of the permit holder")
		}}),
	}
}

// cancelRunningBulkCase is the Bulk group's case of RUNNING jobs:
// CancelJobs cancels them as CancelJob does.
func cancelRunningBulkCase() testCase {
	return testCase{"CancelRunning", func(t tb, f *fixture) {
		b := f.bulkManager()
		a := f.runningJob(at(time.Second))
		c := f.runningJob(at(2*time.Second), withResource("R", 1))
		waiting := f.insertOne(withResource("R", 1), withDue(at(3*time.Second)))
		now := at(time.Minute)
		assert.Equal(t, []bool{true, true, true}, f.bulkCancel(b, now, a.ID, c.ID, a.ID), "CancelJobs of RUNNING jobs; an id named twice answers as it first did")
		assertJob(t, abortedByHand(a, now), f.get(a.ID), "a RUNNING job after CancelJobs, as after CancelJob")
		assertJob(t, abortedByHand(c, now), f.get(c.ID), "a RUNNING job after CancelJobs, as after CancelJob")
		assert.Equal(t, []bool{false, false}, f.complete(succeeded(a, now, nil, ""), succeeded(c, now, nil, "")), "the owners' completions are superseded")
		got := f.claim("node-b", 10, now, 0)
		assert.Equal(t, []uuid.UUID{waiting.ID}, ids(got), "the cancelled holder's permit of R is free")
	}}
}

// cancelRunningParentCase is the Workflows group's case of a RUNNING
// parent cancelled by CancelJob: its dependents follow their cancel
// policy, as for a BLOCKED parent.
func cancelRunningParentCase() testCase {
	return testCase{"CancelRunningParent", func(t tb, f *fixture) {
		ws := f.workflows()
		w := f.newFlow()
		a := w.add(nil)
		child := w.after(a)
		w.insert()
		c := f.claimOne(a.ID, "node-a", at(time.Second))
		require.NoError(t, f.s.CancelJob(f.ctx, c.ID, at(time.Minute)), "CancelJob of a RUNNING workflow job")
		st, _ := f.waiting(child)
		assert.NotEqual(t, spi.StatusBlocked, st, "the child of a parent cancelled while running is no longer BLOCKED")
		assert.Equal(t, []spi.Status{spi.StatusCancelled}, f.parentStates(ws, child), "the dependency records the parent's cancel")
	}}
}

// checkClaimsWakeupCase is the Wakeup group's case of a cancelled RUNNING
// job: a listener hears a wakeup with CheckClaims.
func checkClaimsWakeupCase() testCase {
	return testCase{"CheckClaims", func(t tb, f *fixture) {
		wl := capability[spi.WakeupListener](f, "spi.WakeupListener")
		if o := f.reopen(); o != nil {
			wl = handleAs[spi.WakeupListener](f, o, "spi.WakeupListener")
		}
		ctx, cancel := context.WithCancel(f.ctx)
		defer cancel()
		hints, done := listen(ctx, wl)
		// The listener may start late: cancel one more RUNNING job at
		// each growing wait until a hint with CheckClaims arrives.
		deadline := time.NewTimer(wakeupDeadline)
		defer deadline.Stop()
		wait, cancels := wakeupFirstWait, 0
		for {
			c := f.runningJob(at(time.Second))
			require.NoError(t, f.s.CancelJob(f.ctx, c.ID, at(time.Minute)))
			cancels++
			tick := time.NewTimer(wait)
			for got := false; !got; {
				select {
				case h := <-hints:
					if h.CheckClaims {
						t.Logf("a wakeup with CheckClaims after %d cancel(s) of RUNNING jobs", cancels)
						tick.Stop()
						return
					}
				case err := <-done:
					t.Fatalf("ListenWakeups returned before its context ended: %v", err)
				case <-tick.C:
					got = true
				case <-deadline.C:
					t.Fatalf("no wakeup with CheckClaims arrived within %s (%d RUNNING jobs cancelled)", wakeupDeadline, cancels)
				}
			}
			wait = min(2*wait, wakeupMaxWait)
		}
	}}
}
