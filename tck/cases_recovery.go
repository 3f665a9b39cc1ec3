package tck

import (
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratchet-go/ratchet/sdk/spi"
)

// grace is the orphan grace period of the recovery cases (the default).
const grace = 60 * time.Second

// recoverAt runs RecoverOrphans at now with the default grace, a budget of
// 3 and no forced nodes.
func (f *fixture) recoverAt(now time.Time) []spi.RecoveredJob {
	f.t.Helper()
	return f.recover(spi.RecoverParams{Now: now, Grace: grace, MaxCrashRedeliveries: 3, LastError: "node crashed"})
}

// recoveredIDs returns the job ids of rs.
func recoveredIDs(rs []spi.RecoveredJob) []uuid.UUID {
	out := make([]uuid.UUID, len(rs))
	for i, r := range rs {
		out[i] = r.JobID
	}
	return out
}

// assertRecoveredPending checks that c, claimed before, was recovered at now
// back to PENDING with one more crash, and that its old owner is fenced.
func (f *fixture) assertRecoveredPending(c *spi.Job, now time.Time) {
	f.t.Helper()
	want := c.Clone()
	want.Status = spi.StatusPending
	want.ScheduledAt = now
	want.CrashCount = c.CrashCount + 1
	want.ClaimSeq = c.ClaimSeq + 1
	want.OwnerNode = ""
	got := f.get(c.ID)
	assertJob(f.t, want, got, "recovered job: PENDING, due at now, crash count + 1, ClaimSeq advanced, no owner", anyClaimedAt)
	assert.Equal(f.t, []bool{false}, f.complete(succeeded(c, now, nil, "")), "the crashed owner's write is fenced out after recovery")
}

func recoveryCases() []testCase {
	return []testCase{
		{"FreshHeartbeat", func(t tb, f *fixture) {
			f.heartbeat("node-a", at(0))
			j := f.insertOne()
			c := f.claimOne(j.ID, "node-a", at(time.Second))
			assert.Empty(t, f.recoverAt(at(30*time.Second)), "a node with a fresh heartbeat has no orphans")
			assertJob(t, c, f.get(j.ID), "the job of a live node is untouched")
		}},
		{"StaleHeartbeat", func(t tb, f *fixture) {
			f.heartbeat("node-a", at(0))
			j := f.insertOne(withTask("tck.recover"))
			c := f.claimOne(j.ID, "node-a", at(time.Second))
			now := at(61*time.Second + 5*time.Microsecond)
			rec := f.recoverAt(now)
			assert.Equal(t, []spi.RecoveredJob{{JobID: j.ID, TaskName: "tck.recover", FromNode: "node-a", NewStatus: spi.StatusPending, CrashCount: 1}},
				rec, "RecoverOrphans report")
			f.assertRecoveredPending(c, now)
			assert.Empty(t, f.claim("node-b", 10, now.Add(-time.Millisecond), 0), "a recovered job is due at the recovery time, not before")
			f.heartbeat("node-b", now)
			c2 := f.claim("node-b", 10, now, 0)
			require.Len(t, c2, 1, "a recovered job is claimable again")
			assert.Equal(t, c.ClaimSeq+2, c2[0].ClaimSeq, "claim after recovery advances ClaimSeq again")
			assert.Empty(t, f.recoverAt(now.Add(time.Second)), "nothing more to recover: the new owner is alive")
		}},
		{"GraceBoundary", func(t tb, f *fixture) {
			// Orphan only when the heartbeat is strictly older than now - grace.
			f.heartbeat("node-a", at(0))
			j := f.insertOne()
			f.claimOne(j.ID, "node-a", at(time.Second))
			assert.Empty(t, f.recoverAt(at(grace)), "heartbeat exactly grace old is not stale")
			assert.Equal(t, []uuid.UUID{j.ID}, recoveredIDs(f.recoverAt(at(grace+time.Millisecond))), "heartbeat grace + 1ms old is stale")
		}},
		{"HeartbeatRefresh", func(t tb, f *fixture) {
			f.heartbeat("node-a", at(0))
			f.heartbeat("node-a", at(50*time.Second))
			j := f.insertOne()
			f.claimOne(j.ID, "node-a", at(time.Second))
			assert.Empty(t, f.recoverAt(at(70*time.Second)), "a refreshed heartbeat counts from the refresh")
			assert.Equal(t, []uuid.UUID{j.ID}, recoveredIDs(f.recoverAt(at(111*time.Second))), "stale after the refresh + grace")
		}},
		{"NoNodeRow", func(t tb, f *fixture) {
			j := f.insertOne()
			c := f.claimOne(j.ID, "node-never-registered", at(time.Second))
			now := at(2 * time.Second)
			rec := f.recover(spi.RecoverParams{Now: now, Grace: time.Hour, MaxCrashRedeliveries: 3, LastError: "x"})
			assert.Equal(t, []uuid.UUID{j.ID}, recoveredIDs(rec), "a job owned by a node without a node row is an orphan")
			f.assertRecoveredPending(c, now)
		}},
		{"NodeRowDeleted", func(t tb, f *fixture) {
			// After a recovery the stale node row is gone: a job the same
			// node claims next is an orphan at once, even under a grace
			// period that the old heartbeat would still satisfy.
			f.heartbeat("node-a", at(0))
			j := f.insertOne()
			f.claimOne(j.ID, "node-a", at(time.Second))
			require.Equal(t, []uuid.UUID{j.ID}, recoveredIDs(f.recoverAt(at(2*time.Minute))))
			f.claimOne(j.ID, "node-a", at(2*time.Minute))
			rec := f.recover(spi.RecoverParams{Now: at(2 * time.Minute), Grace: time.Hour, MaxCrashRedeliveries: 3, LastError: "x"})
			assert.Equal(t, []uuid.UUID{j.ID}, recoveredIDs(rec), "the stale node row must have been deleted by the first recovery")
		}},
		{"OnlyRunningJobs", func(t tb, f *fixture) {
			// The dead node's finished, retried and cancelled jobs stay as
			// they are; only its RUNNING job is recovered.
			jobs := f.insertN(4)
			cs := f.claimSet("node-dead", at(time.Second), jobs...)
			require.Equal(t, []bool{true, true, true}, f.complete(
				succeeded(cs[jobs[0].ID], at(2*time.Second), nil, ""),
				failed(cs[jobs[1].ID], at(2*time.Second), 1, "x"),
				retried(cs[jobs[2].ID], at(2*time.Second), at(time.Hour), 1, "y"),
			))
			other := f.insertOne(withDue(at(2 * time.Hour)))
			require.NoError(t, f.s.CancelJob(f.ctx, other.ID, at(3*time.Second)))
			before := map[uuid.UUID]*spi.Job{}
			for _, j := range append(jobs[:3:3], other) {
				before[j.ID] = f.get(j.ID)
			}
			rec := f.recoverAt(at(10 * time.Minute))
			assert.Equal(t, []uuid.UUID{jobs[3].ID}, recoveredIDs(rec), "only the RUNNING job is an orphan")
			for u, b := range before {
				assertJob(t, b, f.get(u), "a "+string(b.Status)+" job of a dead node is not touched by recovery")
			}
		}},
		{"OtherNodesUntouched", func(t tb, f *fixture) {
			f.heartbeat("node-dead", at(0))
			f.heartbeat("node-live", at(0))
			dead := f.insertOne()
			live := f.insertOne(withDue(at(time.Second)))
			f.claimOne(dead.ID, "node-dead", at(time.Second))
			cl := f.claimOne(live.ID, "node-live", at(time.Second))
			f.heartbeat("node-live", at(90*time.Second))
			assert.Equal(t, []uuid.UUID{dead.ID}, recoveredIDs(f.recoverAt(at(100*time.Second))), "only the stale node's job")
			assertJob(t, cl, f.get(live.ID), "the live node's job is untouched")
			// The live node's row survives: its job is still safe later.
			assert.Empty(t, f.recoverAt(at(140*time.Second)), "the live node's row must not be deleted")
		}},
		{"AllJobsOfNode", func(t tb, f *fixture) {
			jobs := f.insertN(3)
			f.heartbeat("node-a", at(0))
			require.Len(t, f.claim("node-a", 10, at(time.Second), 0), 3)
			rec := f.recoverAt(at(5 * time.Minute))
			assert.ElementsMatch(t, ids(jobs), recoveredIDs(rec), "every RUNNING job of the dead node")
			for _, r := range rec {
				assert.Equal(t, "node-a", r.FromNode)
				assert.Equal(t, spi.StatusPending, r.NewStatus)
				assert.Equal(t, 1, r.CrashCount)
				assert.Equal(t, "tck.task", r.TaskName)
			}
		}},
		{"CrashBudget", func(t tb, f *fixture) {
			// MaxCrashRedeliveries 3: three recoveries redeliver, the fourth
			// fails the job into the DLQ with p.LastError.
			j := f.insertOne(withTask("tck.poison"))
			now := at(0)
			for crash := 1; crash <= 3; crash++ {
				now = now.Add(time.Minute)
				c := f.claimOne(j.ID, "node-x", now)
				now = now.Add(time.Minute)
				rec := f.recover(spi.RecoverParams{Now: now, Grace: grace, MaxCrashRedeliveries: 3, LastError: "poison"})
				require.Equal(t, []spi.RecoveredJob{{JobID: j.ID, TaskName: "tck.poison", FromNode: "node-x", NewStatus: spi.StatusPending, CrashCount: crash}},
					rec, "recovery %d of budget 3", crash)
				f.assertRecoveredPending(c, now)
			}
			now = now.Add(time.Minute)
			c := f.claimOne(j.ID, "node-x", now)
			now = now.Add(time.Minute)
			rec := f.recover(spi.RecoverParams{Now: now, Grace: grace, MaxCrashRedeliveries: 3, LastError: "poison: crash budget exhausted"})
			require.Len(t, rec, 1, "fourth recovery")
			assert.Equal(t, j.ID, rec[0].JobID)
			assert.Equal(t, spi.StatusFailed, rec[0].NewStatus, "the fourth crash of budget 3 fails the job")
			assert.Equal(t, "node-x", rec[0].FromNode)
			want := c.Clone()
			want.Status = spi.StatusFailed
			want.LastError = "poison: crash budget exhausted"
			want.ClaimSeq = c.ClaimSeq + 1
			assertJob(t, want, f.get(j.ID), "job failed by the crash budget: FAILED with p.LastError, ClaimSeq advanced",
				anyOwner, anyCrashCount, anyFinishedAt, anyClaimedAt, anySchedule)
			assert.Equal(t, []bool{false}, f.complete(succeeded(c, now, nil, "")), "the crashed owner's write is fenced out")
			assert.Empty(t, f.claim("node-y", 10, now.Add(time.Hour), 0), "a job failed by the crash budget is not claimed")
			assert.Empty(t, f.recoverAt(now.Add(time.Hour)), "a FAILED job is not recovered again")
		}},
		{"BudgetZero", func(t tb, f *fixture) {
			j := f.insertOne()
			c := f.claimOne(j.ID, "node-x", at(time.Second))
			rec := f.recover(spi.RecoverParams{Now: at(time.Hour), Grace: grace, MaxCrashRedeliveries: 0, LastError: "crashed, no budget"})
			require.Len(t, rec, 1)
			assert.Equal(t, spi.StatusFailed, rec[0].NewStatus, "budget 0 fails on the first crash")
			got := f.get(j.ID)
			assert.Equal(t, spi.StatusFailed, got.Status, "budget 0 fails on the first crash")
			assert.Equal(t, "crashed, no budget", got.LastError)
			assert.Equal(t, c.ClaimSeq+1, got.ClaimSeq, "recovery advances ClaimSeq")
		}},
		{"ForcedNodes", func(t tb, f *fixture) {
			// p.Nodes recovers a node's jobs whatever its heartbeat.
			f.heartbeat("node-restarted", at(0))
			f.heartbeat("node-other", at(0))
			a := f.insertOne()
			b := f.insertOne(withDue(at(time.Second)))
			ca := f.claimOne(a.ID, "node-restarted", at(time.Second))
			cb := f.claimOne(b.ID, "node-other", at(time.Second))
			now := at(2 * time.Second)
			rec := f.recover(spi.RecoverParams{Now: now, Grace: grace, MaxCrashRedeliveries: 3, Nodes: []string{"node-restarted"}, LastError: "x"})
			assert.Equal(t, []spi.RecoveredJob{{JobID: a.ID, TaskName: "tck.task", FromNode: "node-restarted", NewStatus: spi.StatusPending, CrashCount: 1}},
				rec, "jobs of a node named in p.Nodes are orphans despite a fresh heartbeat")
			f.assertRecoveredPending(ca, now)
			assertJob(t, cb, f.get(b.ID), "a live node not named is untouched")
		}},
		{"FailedFields", func(t tb, f *fixture) {
			// A job the budget fails: FAILED with p.LastError, FinishedAt =
			// p.Now, no owner, ClaimSeq advanced, attempts kept.
			j := f.insertOne(withTask("tck.fail-fields"))
			c := f.claimOne(j.ID, "node-x", at(time.Second))
			require.Equal(t, []bool{true}, f.complete(retried(c, at(2*time.Second), at(time.Minute), 1, "first try")))
			c = f.claimOne(j.ID, "node-x", at(time.Minute))
			now := at(time.Hour + 321*time.Microsecond)
			rec := f.recover(spi.RecoverParams{Now: now, Grace: grace, MaxCrashRedeliveries: 0, LastError: "crashed: no budget"})
			require.Len(t, rec, 1)
			assert.Equal(t, spi.RecoveredJob{JobID: j.ID, TaskName: "tck.fail-fields", FromNode: "node-x", NewStatus: spi.StatusFailed, CrashCount: rec[0].CrashCount},
				rec[0], "report of a job failed by the budget")
			want := c.Clone()
			want.Status = spi.StatusFailed
			want.LastError = "crashed: no budget"
			want.FinishedAt = now
			want.OwnerNode = ""
			want.ClaimSeq = c.ClaimSeq + 1
			got := f.get(j.ID)
			assertJob(t, want, got, "job failed by the crash budget: FinishedAt = p.Now, owner cleared, attempts kept", anyCrashCount, anySchedule, anyClaimedAt)
			assert.Equal(t, 1, got.Attempts, "attempts are kept")
		}},
		{"ReportOrder", func(t tb, f *fixture) {
			// Results are ordered by job id, whatever the order of insertion
			// and claims.
			var jobs []*spi.Job
			for i := range 12 {
				jobs = append(jobs, f.newJob(withID(id(300-i*7)), withDue(at(time.Duration(i)*time.Second)), withPriority(spi.Priority(i%spi.NumPriorities))))
			}
			f.insert(shuffled(jobs)...)
			require.Len(t, f.claim("node-a", 6, at(time.Minute), 0), 6)
			require.Len(t, f.claim("node-b", 6, at(time.Minute), 0), 6)
			rec := f.recover(spi.RecoverParams{Now: at(time.Hour), Grace: grace, MaxCrashRedeliveries: 3, LastError: "x"})
			want := ids(jobs)
			sortUUIDs(want)
			assert.Equal(t, want, recoveredIDs(rec), "RecoverOrphans results are ordered by job id")
		}},
		{"ForcedNodeRowDeleted", func(t tb, f *fixture) {
			// The rows of the nodes named in p.Nodes are deleted, with or
			// without jobs, however fresh their heartbeat.
			f.heartbeat("node-restarted", at(0))
			f.heartbeat("node-idle", at(0))
			a := f.insertOne()
			f.claimOne(a.ID, "node-restarted", at(time.Second))
			rec := f.recover(spi.RecoverParams{Now: at(2 * time.Second), Grace: time.Hour, MaxCrashRedeliveries: 3,
				Nodes: []string{"node-restarted", "node-idle"}, LastError: "x"})
			require.Equal(t, []uuid.UUID{a.ID}, recoveredIDs(rec))
			b := f.insertOne(withDue(at(3 * time.Second)))
			cb := f.claim("node-restarted", 10, at(3*time.Second), 0)
			require.ElementsMatch(t, []uuid.UUID{a.ID, b.ID}, ids(cb))
			d := f.insertOne(withDue(at(3 * time.Second)))
			f.claimOne(d.ID, "node-idle", at(3*time.Second))
			rec = f.recover(spi.RecoverParams{Now: at(4 * time.Second), Grace: time.Hour, MaxCrashRedeliveries: 3, LastError: "x"})
			assert.ElementsMatch(t, []uuid.UUID{a.ID, b.ID, d.ID}, recoveredIDs(rec),
				"the rows of the nodes named in p.Nodes must have been deleted: their new jobs are orphans under a long grace")
		}},
		{"StaleRowWithoutJobs", func(t tb, f *fixture) {
			// A stale node row is deleted even when the node runs nothing.
			f.heartbeat("node-a", at(0))
			f.heartbeat("node-b", at(90*time.Second))
			assert.Empty(t, f.recoverAt(at(2*time.Minute)), "no RUNNING jobs: nothing to recover")
			j := f.insertOne(withDue(at(2 * time.Minute)))
			k := f.insertOne(withDue(at(2 * time.Minute)))
			f.claimOne(j.ID, "node-a", at(2*time.Minute))
			f.claimOne(k.ID, "node-b", at(2*time.Minute))
			rec := f.recover(spi.RecoverParams{Now: at(2 * time.Minute), Grace: time.Hour, MaxCrashRedeliveries: 3, LastError: "x"})
			assert.Equal(t, []uuid.UUID{j.ID}, recoveredIDs(rec), "node-a's stale row was deleted by the first recovery; node-b's fresh one was kept")
		}},
		{"DeregisterNode", func(t tb, f *fixture) {
			f.heartbeat("node-a", at(0))
			f.heartbeat("node-b", at(0))
			require.NoError(t, f.s.DeregisterNode(f.ctx, "node-a"), "DeregisterNode")
			a := f.insertOne()
			b := f.insertOne(withDue(at(time.Second)))
			f.claimOne(a.ID, "node-a", at(time.Second))
			cb := f.claimOne(b.ID, "node-b", at(time.Second))
			rec := f.recover(spi.RecoverParams{Now: at(2 * time.Second), Grace: time.Hour, MaxCrashRedeliveries: 3, LastError: "x"})
			assert.Equal(t, []uuid.UUID{a.ID}, recoveredIDs(rec), "a deregistered node has no row: its jobs are orphans; other nodes keep theirs")
			assertJob(t, cb, f.get(b.ID), "the other node's job is untouched")
		}},
	}
}
