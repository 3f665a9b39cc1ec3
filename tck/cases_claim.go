package tck

import (
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratchet-go/ratchet/sdk/spi"
)

// boost is the default aging interval of docs/architecture.md (15 minutes).
const boost = 15 * time.Minute

// assertClaimOrder inserts jobs (shuffled), claims them one at a time at now
// with interval b and checks that they come in the contract's order.
func (f *fixture) assertClaimOrder(jobs []*spi.Job, now time.Time, b time.Duration) {
	f.t.Helper()
	f.insert(shuffled(jobs)...)
	want := claimOrder(jobs, now, b)
	var got []*spi.Job
	for range jobs {
		c := f.claim("node-order", 1, now, b)
		if len(c) == 0 {
			break
		}
		got = append(got, c...)
	}
	assert.Equal(f.t, ids(want), ids(got), "claims one at a time (now %s, boost %s) must follow the order\nwant:%s\ngot:%s",
		now.Format(time.RFC3339), b, describe(want, now, b), describe(got, now, b))
	assert.Empty(f.t, f.claim("node-order", 10, now, b), "nothing is left to claim")
}

// assertBestN inserts jobs (shuffled) and checks that one claim of limit n
// at now with interval b takes exactly the first n of the contract's order.
func (f *fixture) assertBestN(jobs []*spi.Job, n int, now time.Time, b time.Duration) {
	f.t.Helper()
	f.insert(shuffled(jobs)...)
	want := claimOrder(jobs, now, b)[:n]
	got := f.claim("node-best", n, now, b)
	assert.ElementsMatch(f.t, ids(want), ids(got), "one claim of limit %d must take the best %d due jobs overall\nwant:%s\ngot:%s",
		n, n, describe(want, now, b), describe(claimOrder(got, now, b), now, b))
}

func claimCases() []testCase {
	return []testCase{
		{"NothingDue", func(t tb, f *fixture) {
			assert.Empty(t, f.claim("node-a", 10, at(0), boost), "claim on an empty store")
			f.insertOne(withDue(at(time.Hour)))
			assert.Empty(t, f.claim("node-a", 10, at(0), boost), "claim when the only job is due later")
		}},
		{"DueTime", func(t tb, f *fixture) {
			due := at(time.Hour + 500*time.Microsecond)
			j := f.insertOne(withDue(due))
			assert.Empty(t, f.claim("node-a", 10, due.Add(-time.Millisecond), boost), "job due at T claimed at T-1ms")
			assert.Empty(t, f.claim("node-a", 10, due.Add(-time.Microsecond), boost), "job due at T claimed at T-1µs")
			got := f.claim("node-a", 10, due, boost)
			require.Len(t, got, 1, "job due at T must be claimable at T")
			assert.Equal(t, j.ID, got[0].ID)
		}},
		{"OnlyDueJobs", func(t tb, f *fixture) {
			now := at(time.Hour)
			var due []*spi.Job
			for i := range 5 {
				due = append(due, f.newJob(withDue(now.Add(-time.Duration(i)*time.Minute))))
			}
			var later []*spi.Job
			for i := range 5 {
				later = append(later, f.newJob(withDue(now.Add(time.Duration(i+1)*time.Millisecond)), withPriority(spi.PriorityCritical)))
			}
			f.insert(shuffled(append(append([]*spi.Job{}, due...), later...))...)
			got := f.claim("node-a", 100, now, boost)
			assert.ElementsMatch(t, ids(due), ids(got), "claim must take exactly the due jobs")
		}},
		{"Limit", func(t tb, f *fixture) {
			var jobs []*spi.Job
			for i := range 5 {
				jobs = append(jobs, f.newJob(withDue(at(time.Duration(i)*time.Second))))
			}
			f.insert(shuffled(jobs)...)
			now := at(time.Minute)
			assert.ElementsMatch(t, ids(jobs[:3]), ids(f.claim("node-a", 3, now, 0)), "first claim of limit 3")
			assert.ElementsMatch(t, ids(jobs[3:]), ids(f.claim("node-a", 3, now, 0)), "second claim of limit 3")
			assert.Empty(t, f.claim("node-a", 3, now, 0), "third claim of limit 3")
		}},
		{"ClaimedFields", func(t tb, f *fixture) {
			j := f.insertOne(withTags("t1"), withParams(map[string]string{"k": "v"}), withKey("claimed"))
			now := at(3*time.Second + 250*time.Microsecond)
			got := f.claim("node-🐝", 1, now, boost)
			require.Len(t, got, 1)
			want := running(j, "node-🐝", now)
			assertJob(t, want, got[0], "job returned by ClaimJobs")
			assert.Equal(t, spi.StatusRunning, got[0].Status)
			assert.Equal(t, int64(1), got[0].ClaimSeq, "first claim: ClaimSeq 0 → 1")
			assertJob(t, want, f.get(j.ID), "GetJob after the claim")
		}},
		{"NoDoubleClaim", func(t tb, f *fixture) {
			a := f.insertOne()
			b := f.insertOne()
			first := f.claim("node-a", 10, at(time.Second), boost)
			assert.ElementsMatch(t, []uuid.UUID{a.ID, b.ID}, ids(first))
			assert.Empty(t, f.claim("node-b", 10, at(time.Hour), boost), "RUNNING jobs must not be claimed again")
			assert.Empty(t, f.claim("node-a", 10, at(2*time.Hour), boost), "RUNNING jobs must not be claimed again by their owner")
			for _, j := range []*spi.Job{a, b} {
				assertJob(t, running(j, "node-a", at(time.Second)), f.get(j.ID), "job after a second claim attempt")
			}
		}},
		{"FinishedNotClaimed", func(t tb, f *fixture) {
			f.insertN(2)
			cs := f.claim("node-a", 10, at(time.Second), 0)
			require.Len(t, cs, 2)
			require.Equal(t, []bool{true, true}, f.complete(
				succeeded(cs[0], at(2*time.Second), nil, ""),
				failed(cs[1], at(2*time.Second), 1, "boom"),
			))
			assert.Empty(t, f.claim("node-a", 10, at(time.Hour), 0), "SUCCEEDED and FAILED jobs must not be claimed")
		}},
		{"OrderByPriority", func(t tb, f *fixture) {
			// Aging off: stored priority decides, whatever the due time; the
			// most urgent job is the one due last.
			var jobs []*spi.Job
			for p := range spi.NumPriorities {
				jobs = append(jobs, f.newJob(withID(id(50-p)), withPriority(spi.Priority(p)), withDue(at(time.Duration(p)*time.Minute))))
			}
			f.assertClaimOrder(jobs, at(time.Hour), 0)
		}},
		{"OrderByDueTime", func(t tb, f *fixture) {
			// Same priority: earlier due first; ids run the other way.
			var jobs []*spi.Job
			for i := range 6 {
				jobs = append(jobs, f.newJob(withID(id(100-i)), withDue(at(time.Duration(i)*time.Second))))
			}
			f.assertClaimOrder(jobs, at(time.Minute), 0)
		}},
		{"OrderByID", func(t tb, f *fixture) {
			// Same priority and due time: smaller id first.
			var jobs []*spi.Job
			for i := range 6 {
				jobs = append(jobs, f.newJob(withID(id(10+i*7)), withDue(at(0))))
			}
			f.assertClaimOrder(jobs, at(time.Minute), boost)
		}},
		{"OrderMixed", func(t tb, f *fixture) {
			// 40 jobs mixing priorities, waits and ties, with aging on; first
			// one claim of 4, then one at a time.
			now := at(10 * time.Hour)
			var jobs []*spi.Job
			for i := range 40 {
				p := spi.Priority((i * 3) % spi.NumPriorities)
				wait := time.Duration((i*37)%90) * time.Minute / 2
				jobs = append(jobs, f.newJob(withID(id(500-i*3)), withPriority(p), withDue(now.Add(-wait))))
			}
			f.insert(shuffled(jobs)...)
			want := claimOrder(jobs, now, boost)
			first := f.claim("node-a", 4, now, boost)
			assert.ElementsMatch(t, ids(want[:4]), ids(first), "claim of limit 4\nwant:%s\ngot:%s",
				describe(want[:4], now, boost), describe(first, now, boost))
			var rest []*spi.Job
			for range len(jobs) {
				c := f.claim("node-a", 1, now, boost)
				if len(c) == 0 {
					break
				}
				rest = append(rest, c...)
			}
			assert.Equal(t, ids(want[4:]), ids(rest), "claims one at a time\nwant:%s\ngot:%s",
				describe(want[4:], now, boost), describe(rest, now, boost))
		}},
		{"AgingOvertakes", func(t tb, f *fixture) {
			// LOWEST waiting 75 min with a 15 min interval: 0+5 = 5 beats a
			// fresh CRITICAL (4).
			now := at(2 * time.Hour)
			critical := f.newJob(withPriority(spi.PriorityCritical), withDue(now))
			lowest := f.newJob(withPriority(spi.PriorityLowest), withDue(now.Add(-75*time.Minute)))
			f.insert(critical, lowest)
			got := f.claim("node-a", 1, now, boost)
			require.Len(t, got, 1)
			assert.Equal(t, lowest.ID, got[0].ID, "a LOWEST job waiting 75 min must overtake a fresh CRITICAL one (boost 15 min)")
		}},
		{"AgingTieByDueTime", func(t tb, f *fixture) {
			// LOWEST waiting exactly 60 min: 0+4 = 4 ties with a CRITICAL
			// job due a minute ago; the earlier due time wins.
			now := at(2 * time.Hour)
			critical := f.newJob(withID(id(1)), withPriority(spi.PriorityCritical), withDue(now.Add(-time.Minute)))
			lowest := f.newJob(withID(id(2)), withPriority(spi.PriorityLowest), withDue(now.Add(-60*time.Minute)))
			f.insert(critical, lowest)
			got := f.claim("node-a", 1, now, boost)
			require.Len(t, got, 1)
			assert.Equal(t, lowest.ID, got[0].ID, "equal effective priority (4): the job due earlier must be claimed first")
		}},
		{"AgingFloor", func(t tb, f *fixture) {
			// LOWEST waiting 59m59.999s: floor gives 0+3 = 3 < 4.
			now := at(2 * time.Hour)
			critical := f.newJob(withID(id(2)), withPriority(spi.PriorityCritical), withDue(now))
			lowest := f.newJob(withID(id(1)), withPriority(spi.PriorityLowest), withDue(now.Add(-60*time.Minute+time.Millisecond)))
			f.insert(critical, lowest)
			got := f.claim("node-a", 1, now, boost)
			require.Len(t, got, 1)
			assert.Equal(t, critical.ID, got[0].ID, "a LOWEST job waiting 1 ms less than 4 intervals gets +3, not +4")
		}},
		{"AgingDisabled", func(t tb, f *fixture) {
			// Interval 0 (and negative) disables aging: CRITICAL first
			// however long LOWEST has waited.
			now := at(100 * time.Hour)
			critical := f.newJob(withPriority(spi.PriorityCritical), withDue(now))
			lowest := f.newJob(withPriority(spi.PriorityLowest), withDue(at(0)))
			f.insert(lowest, critical)
			got := f.claim("node-a", 1, now, 0)
			require.Len(t, got, 1)
			assert.Equal(t, critical.ID, got[0].ID, "BoostInterval 0: stored priority only")
			other := f.insertOne(withPriority(spi.PriorityHigh), withDue(now))
			got = f.claim("node-a", 1, now, -time.Minute)
			require.Len(t, got, 1)
			assert.Equal(t, other.ID, got[0].ID, "negative BoostInterval: stored priority only")
		}},
		{"AgingOrder", func(t tb, f *fixture) {
			// One job per level, the lower the level the longer the wait, so
			// that aging turns the stored order around.
			now := at(10 * time.Hour)
			var jobs []*spi.Job
			for p := range spi.NumPriorities {
				wait := time.Duration(spi.NumPriorities-p)*20*time.Minute + time.Duration(p)*time.Second
				jobs = append(jobs, f.newJob(withPriority(spi.Priority(p)), withDue(now.Add(-wait))))
			}
			f.assertClaimOrder(jobs, now, boost)
		}},
		{"BestNOverall", func(t tb, f *fixture) {
			// 50 NORMAL jobs waiting 30..79 min (effective 4..7) and 50 fresh
			// HIGH ones (3): a claim of 10 takes the 10 oldest NORMAL jobs.
			now := at(5 * time.Hour)
			var jobs []*spi.Job
			for i := range 50 {
				jobs = append(jobs, f.newJob(withPriority(spi.PriorityNormal), withDue(now.Add(-30*time.Minute-time.Duration(i)*time.Minute))))
				jobs = append(jobs, f.newJob(withPriority(spi.PriorityHigh), withDue(now.Add(-time.Duration(i)*time.Second))))
			}
			for _, j := range claimOrder(jobs, now, boost)[:10] {
				require.Equal(t, spi.PriorityNormal, j.Priority, "test data: the best 10 are NORMAL")
			}
			f.assertBestN(jobs, 10, now, boost)
		}},
		{"BestNInterleaved", func(t tb, f *fixture) {
			// Two crowded levels whose effective priorities interleave: the
			// best 10 mix both levels and both tie-breaks.
			now := at(5 * time.Hour)
			var jobs []*spi.Job
			for i := range 50 {
				jobs = append(jobs, f.newJob(withPriority(spi.PriorityNormal), withDue(now.Add(-15*time.Minute-time.Duration(i)*time.Minute))))
				jobs = append(jobs, f.newJob(withPriority(spi.PriorityHigh), withDue(now.Add(-time.Duration(i)*time.Minute-30*time.Second))))
				jobs = append(jobs, f.newJob(withPriority(spi.PriorityLow), withDue(now.Add(-time.Duration(i)*time.Second))))
			}
			best := claimOrder(jobs, now, boost)[:10]
			levels := map[spi.Priority]int{}
			for _, j := range best {
				levels[j.Priority]++
			}
			require.Positive(t, levels[spi.PriorityNormal], "test data: NORMAL among the best 10")
			require.Positive(t, levels[spi.PriorityHigh], "test data: HIGH among the best 10")
			f.assertBestN(jobs, 10, now, boost)
		}},
		{"OrderInRandomBatches", func(t tb, f *fixture) {
			// A random backlog of 60 jobs per aging interval and number of
			// tasks (the claim lists them all), due from three hours ago to
			// ten minutes ahead on a minute grid so that due times tie,
			// claimed in batches of 1 to 8: the claims follow the contract's
			// order from first to last, and each batch comes back in that
			// order. A day's interval ages no job (a store may take a path
			// of its own then), the others age some.
			r := rand.New(rand.NewPCG(7, 11))
			now := at(5 * time.Hour)
			round := 0
			for _, b := range []time.Duration{boost, 0, 7*time.Second + 500*time.Microsecond, 24 * time.Hour} {
				for _, ntasks := range []int{1, 3} {
					round++
					var tasks []string
					for k := range ntasks {
						tasks = append(tasks, fmt.Sprintf("order-%d-%d", round, k))
					}
					var jobs []*spi.Job
					for range 60 {
						due := now.Add(time.Duration(r.IntN(190)-180) * time.Minute)
						jobs = append(jobs, f.newJob(withTask(tasks[r.IntN(ntasks)]), withPriority(spi.Priority(r.IntN(spi.NumPriorities))), withDue(due)))
					}
					f.insert(shuffled(jobs)...)
					var due []*spi.Job
					for _, j := range jobs {
						if !j.ScheduledAt.After(now) {
							due = append(due, j)
						}
					}
					var got []uuid.UUID
					for range len(jobs) + 1 { // a store that claims a job twice must not loop forever
						batch := f.claimWith(spi.ClaimParams{Tasks: tasks, NodeID: "node-order", Limit: 1 + r.IntN(8), Now: now, BoostInterval: b})
						if len(batch) == 0 {
							break
						}
						assert.Equal(t, ids(claimOrder(batch, now, b)), ids(batch), "a claim returns its jobs in claim order (boost %s, %d tasks)", b, ntasks)
						got = append(got, ids(batch)...)
					}
					assert.Equal(t, ids(claimOrder(due, now, b)), got, "boost %s, %d tasks: the claims, batch after batch, follow the contract's order", b, ntasks)
				}
			}
		}},
	}
}
