package tck

import (
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratchet-go/ratchet/sdk/spi"
)

// ofTasks returns the jobs whose task is one of tasks.
func ofTasks(jobs []*spi.Job, tasks ...string) []*spi.Job {
	p := spi.ClaimParams{Tasks: tasks}
	var out []*spi.Job
	for _, j := range jobs {
		if p.AllowsTask(j.TaskName) {
			out = append(out, j)
		}
	}
	return out
}

// taskCases check ClaimParams.Tasks: a node of a mixed fleet claims only
// the jobs of the tasks it runs, in the contract's order among them, and
// leaves the others untouched for the nodes that run them.
func taskCases() []testCase {
	return []testCase{
		{"OnlyListedTasks", func(t tb, f *fixture) {
			var jobs []*spi.Job
			for i, task := range []string{"a", "b", "c", "a", "c", "b", "c", "ab"} {
				jobs = append(jobs, f.newJob(withTask(task), withPriority(spi.Priority(i%spi.NumPriorities))))
			}
			f.insert(shuffled(jobs)...)
			now := at(time.Minute)
			got := f.claimWith(spi.ClaimParams{NodeID: "node-ab", Limit: 100, Now: now, Tasks: []string{"a", "b"}})
			assert.ElementsMatch(t, ids(ofTasks(jobs, "a", "b")), ids(got), "Tasks [a b] claims exactly the jobs of a and b (not of c, nor of the task named ab)")
			for _, j := range ofTasks(jobs, "c", "ab") {
				assertJob(t, j, f.get(j.ID), "a job of a task the claim does not list stays PENDING and unchanged")
			}
			assert.Empty(t, f.claimWith(spi.ClaimParams{NodeID: "node-x", Limit: 100, Now: now, Tasks: []string{"missing"}}),
				"Tasks [missing] claims nothing")
			got = f.claimWith(spi.ClaimParams{NodeID: "node-c", Limit: 100, Now: now, Tasks: []string{"c", "c"}})
			assert.ElementsMatch(t, ids(ofTasks(jobs, "c")), ids(got), "Tasks [c c] claims the jobs of c, each once")
			got = f.claim("node-any", 100, now, 0)
			assert.ElementsMatch(t, ids(ofTasks(jobs, "ab")), ids(got), "a claim without Tasks takes the jobs of any task")
		}},
		{"NoHeadOfLineBlocking", func(t tb, f *fixture) {
			// 40 old CRITICAL jobs of a task the node lacks sit at the top
			// of the order; a claim of 5 takes the 5 LOW jobs of its task.
			now := at(10 * time.Hour)
			var other, mine []*spi.Job
			for i := range 40 {
				other = append(other, f.newJob(withTask("other"), withPriority(spi.PriorityCritical), withDue(at(time.Duration(i)*time.Second))))
			}
			for i := range 5 {
				mine = append(mine, f.newJob(withTask("mine"), withPriority(spi.PriorityLow), withDue(now.Add(-time.Duration(i)*time.Second))))
			}
			f.insert(shuffled(append(append([]*spi.Job{}, other...), mine...))...)
			got := f.claimWith(spi.ClaimParams{NodeID: "node-mine", Limit: 5, Now: now, BoostInterval: boost, Tasks: []string{"mine"}})
			assert.ElementsMatch(t, ids(mine), ids(got), "jobs of other tasks must be skipped, not block the node's jobs behind them")
			assert.Empty(t, f.claimWith(spi.ClaimParams{NodeID: "node-mine", Limit: 5, Now: now, BoostInterval: boost, Tasks: []string{"mine"}}),
				"no job of the node's task is left")
			got = f.claimWith(spi.ClaimParams{NodeID: "node-other", Limit: 100, Now: now, BoostInterval: boost, Tasks: []string{"other", "mine"}})
			assert.ElementsMatch(t, ids(other), ids(got), "the node that runs the other task claims its jobs")
		}},
		{"OrderAcrossTasks", func(t tb, f *fixture) {
			// Among the jobs of the listed tasks the claim order is the
			// contract's, aging included, whichever task a job has; better
			// jobs of other tasks do not count.
			now := at(10 * time.Hour)
			var jobs []*spi.Job
			for i := range 36 {
				p := spi.Priority((i * 3) % spi.NumPriorities)
				wait := time.Duration((i*37)%100) * time.Minute
				task := []string{"x", "y", "z"}[i%3]
				if task == "z" {
					p = spi.PriorityCritical
				}
				jobs = append(jobs, f.newJob(withID(id(700-i*5)), withTask(task), withPriority(p), withDue(now.Add(-wait))))
			}
			f.insert(shuffled(jobs)...)
			tasks := []string{"y", "x"}
			want := claimOrder(ofTasks(jobs, tasks...), now, boost)
			first := f.claimWith(spi.ClaimParams{NodeID: "node-a", Limit: 5, Now: now, BoostInterval: boost, Tasks: tasks})
			assert.ElementsMatch(t, ids(want[:5]), ids(first), "claim of limit 5: the best 5 of tasks x and y\nwant:%s\ngot:%s",
				describe(want[:5], now, boost), describe(first, now, boost))
			var rest []*spi.Job
			for range len(jobs) {
				c := f.claimWith(spi.ClaimParams{NodeID: "node-a", Limit: 1, Now: now, BoostInterval: boost, Tasks: tasks})
				if len(c) == 0 {
					break
				}
				rest = append(rest, c...)
			}
			assert.Equal(t, ids(want[5:]), ids(rest), "claims one at a time with Tasks follow the contract's order\nwant:%s\ngot:%s",
				describe(want[5:], now, boost), describe(rest, now, boost))
			left := f.claim("node-b", 100, now, boost)
			assert.ElementsMatch(t, ids(ofTasks(jobs, "z")), ids(left), "the jobs of task z remain")
		}},
		{"WithTagsAndPermits", func(t tb, f *fixture) {
			// Tasks combine with the tag filter and with permits: a job is
			// claimed when its task is listed, its tags pass and its
			// resource has a free permit.
			now := at(time.Minute)
			keep := []*spi.Job{
				f.newJob(withTask("t"), withTags("gpu")),
				f.newJob(withTask("t"), withTags("gpu"), withResource("r", 1)),
			}
			skip := []*spi.Job{
				f.newJob(withTask("t")),                                           // tags fail
				f.newJob(withTask("u"), withTags("gpu")),                          // task not listed
				f.newJob(withTask("t"), withTags("gpu"), withResource("r", 1)),    // permit taken by keep[1]
				f.newJob(withTask("u"), withTags("gpu"), withResource("free", 5)), // task not listed
			}
			f.insert(append(append([]*spi.Job{}, keep...), skip...)...)
			got := f.claimWith(spi.ClaimParams{NodeID: "n", Limit: 10, Now: now, Tags: spi.TagFilter{All: []string{"gpu"}}, Tasks: []string{"t"}})
			assert.ElementsMatch(t, ids(keep), ids(got), "Tasks, Tags and permits together")
			for _, j := range skip {
				require.Equal(t, spi.StatusPending, f.get(j.ID).Status, "job %s (task %s) stays PENDING", j.ID, j.TaskName)
			}
		}},
	}
}

// liveNodes returns LiveNodes(since), failing the case on an error.
func (f *fixture) liveNodes(ns spi.NodeTaskStore, since time.Time) []spi.NodeInfo {
	f.t.Helper()
	got, err := ns.LiveNodes(f.ctx, since)
	require.NoError(f.t, err, "LiveNodes")
	return got
}

// nodeTaskCases check spi.NodeTaskStore: what a node records with its
// heartbeat, which nodes are live, and the pending jobs per task.
func nodeTaskCases() []testCase {
	return []testCase{
		{"RecordedWithTheHeartbeat", func(t tb, f *fixture) {
			ns := capability[spi.NodeTaskStore](f, "spi.NodeTaskStore")
			t0 := at(time.Hour)
			require.NoError(t, ns.HeartbeatTasks(f.ctx, "node-b", []string{"send", "bill", "send"}, t0))
			require.NoError(t, ns.HeartbeatTasks(f.ctx, "node-a", []string{}, t0.Add(time.Second)))
			f.heartbeat("node-old", t0.Add(2*time.Second)) // a node that records no tasks
			got := f.liveNodes(ns, t0)
			require.Len(t, got, 3, "three live nodes: %+v", got)
			assert.Equal(t, "node-a", got[0].ID, "ordered by id")
			assert.NotNil(t, got[0].Tasks, "a node that records no task runs none: an empty list, not nil")
			assert.Empty(t, got[0].Tasks)
			assert.Equal(t, "node-b", got[1].ID)
			assert.Equal(t, []string{"bill", "send"}, got[1].Tasks, "sorted, without repeats")
			assert.True(t, got[1].Heartbeat.Equal(t0), "the heartbeat time: %s", got[1].Heartbeat)
			assert.Equal(t, time.UTC, got[1].Heartbeat.Location(), "times are UTC")
			assert.Equal(t, "node-old", got[2].ID)
			assert.Nil(t, got[2].Tasks, "a node registered by a plain Heartbeat recorded no tasks")

			// The next heartbeat replaces the tasks.
			require.NoError(t, ns.HeartbeatTasks(f.ctx, "node-b", []string{"ship"}, t0.Add(time.Minute)))
			got = f.liveNodes(ns, t0.Add(time.Minute))
			require.Len(t, got, 1, "only node-b beat at or after t0+1m: %+v", got)
			assert.Equal(t, []string{"ship"}, got[0].Tasks, "the tasks of the last heartbeat")
		}},
		{"ReportWithTheHeartbeat", func(t tb, f *fixture) {
			ns := capability[spi.NodeTaskStore](f, "spi.NodeTaskStore")
			rs := capability[spi.NodeReportStore](f, "spi.NodeReportStore")
			t0 := at(time.Hour)
			started := at(-time.Hour + 123456789*time.Nanosecond)
			rep := spi.NodeReport{Version: "v1.2.3", Concurrency: 10, Running: 7, StartedAt: started, Breakers: []spi.NodeBreaker{
				{Service: "node-r", Poller: true, State: "CLOSED", FailureRateThreshold: 50, SlidingWindowSize: 100, MinimumCalls: 100, WaitDuration: time.Minute, PermittedCallsInHalfOpen: 10},
				{Service: "payments", State: "OPEN", OpenFor: 42 * time.Second, FailureRateThreshold: 25.5, SlidingWindowSize: 20, MinimumCalls: 5, WaitDuration: 90 * time.Second, PermittedCallsInHalfOpen: 3},
			}}
			require.NoError(t, rs.HeartbeatReport(f.ctx, "node-r", []string{"send", "bill"}, rep, t0))
			f.heartbeat("node-old", t0) // a node that reports nothing
			got := f.liveNodes(ns, t0)
			require.Len(t, got, 2, "two live nodes: %+v", got)
			assert.Nil(t, got[0].Report, "a node registered by a plain Heartbeat reported nothing")
			r := got[1]
			require.Equal(t, "node-r", r.ID)
			assert.Equal(t, []string{"bill", "send"}, r.Tasks, "HeartbeatReport records the tasks as HeartbeatTasks does")
			require.NotNil(t, r.Report, "the report of the heartbeat")
			assert.Equal(t, "v1.2.3", r.Report.Version)
			assert.Equal(t, 10, r.Report.Concurrency)
			assert.Equal(t, 7, r.Report.Running)
			assert.True(t, r.Report.StartedAt.Equal(started), "the start time, to the nanosecond: %s", r.Report.StartedAt)
			assert.Equal(t, rep.Breakers, r.Report.Breakers, "the breakers, in order")

			// A plain Heartbeat and HeartbeatTasks keep the report; the next
			// HeartbeatReport replaces it.
			f.heartbeat("node-r", t0.Add(time.Second))
			require.NoError(t, ns.HeartbeatTasks(f.ctx, "node-r", []string{"send"}, t0.Add(2*time.Second)))
			got = f.liveNodes(ns, t0.Add(2*time.Second))
			require.Len(t, got, 1)
			require.NotNil(t, got[0].Report, "Heartbeat and HeartbeatTasks keep the report")
			assert.Equal(t, 7, got[0].Report.Running)
			later := spi.NodeReport{Version: "v1.2.4", Concurrency: 4, Running: 0, StartedAt: t0}
			require.NoError(t, rs.HeartbeatReport(f.ctx, "node-r", nil, later, t0.Add(time.Minute)))
			got = f.liveNodes(ns, t0.Add(time.Minute))
			require.Len(t, got, 1)
			require.NotNil(t, got[0].Report)
			assert.Equal(t, "v1.2.4", got[0].Report.Version, "the report of the last heartbeat")
			assert.Equal(t, 4, got[0].Report.Concurrency)
			assert.Equal(t, 0, got[0].Report.Running)
			assert.Empty(t, got[0].Report.Breakers, "the breakers of the last report: none")

			// The report goes with the node's row.
			require.NoError(t, f.s.DeregisterNode(f.ctx, "node-r"))
			f.heartbeat("node-r", t0.Add(2*time.Minute))
			got = f.liveNodes(ns, t0.Add(2*time.Minute))
			require.Len(t, got, 1)
			assert.Nil(t, got[0].Report, "the report of a deregistered node is not kept")
		}},
		{"LiveBoundary", func(t tb, f *fixture) {
			ns := capability[spi.NodeTaskStore](f, "spi.NodeTaskStore")
			hb := at(time.Hour + 250*time.Microsecond)
			require.NoError(t, ns.HeartbeatTasks(f.ctx, "n", []string{"x"}, hb))
			assert.Len(t, f.liveNodes(ns, hb), 1, "a heartbeat at since is live")
			assert.Empty(t, f.liveNodes(ns, hb.Add(time.Microsecond)), "a heartbeat before since is not")
		}},
		{"DroppedWithTheNode", func(t tb, f *fixture) {
			ns := capability[spi.NodeTaskStore](f, "spi.NodeTaskStore")
			t0 := at(time.Hour)
			require.NoError(t, ns.HeartbeatTasks(f.ctx, "gone", []string{"x"}, t0))
			require.NoError(t, ns.HeartbeatTasks(f.ctx, "stale", []string{"y"}, t0))
			require.NoError(t, f.s.DeregisterNode(f.ctx, "gone"))
			f.recover(spi.RecoverParams{Now: t0.Add(time.Hour), Grace: time.Minute, MaxCrashRedeliveries: 3, LastError: "crashed"})
			assert.Empty(t, f.liveNodes(ns, at(0)), "deregistered and recovered nodes are gone, their tasks with them")
			// A node that comes back registers afresh.
			f.heartbeat("gone", t0.Add(2*time.Hour))
			got := f.liveNodes(ns, at(0))
			require.Len(t, got, 1)
			assert.Nil(t, got[0].Tasks, "the tasks of the deregistered node are not kept")
		}},
		{"PendingPerTask", func(t tb, f *fixture) {
			ns := capability[spi.NodeTaskStore](f, "spi.NodeTaskStore")
			early := at(-time.Hour + 250*time.Microsecond)
			jobs := f.insert(
				f.newJob(withTask("b"), withDue(at(time.Minute))),
				f.newJob(withTask("b"), withDue(early)),
				f.newJob(withTask("a")),
				f.newJob(withTask("c")),
				f.newJob(withTask("d"), withDue(at(time.Hour))), // due later: still pending
			)
			now := at(time.Minute)
			claimed := f.claimWith(spi.ClaimParams{NodeID: "n", Limit: 10, Now: now, Tasks: []string{"c"}})
			require.Len(t, claimed, 1)
			require.NoError(t, f.s.CancelJob(f.ctx, jobs[2].ID, now))
			got, err := ns.PendingTasks(f.ctx)
			require.NoError(t, err)
			want := []spi.TaskBacklog{{Task: "b", Pending: 2, Earliest: early}, {Task: "d", Pending: 1, Earliest: at(time.Hour)}}
			require.Len(t, got, len(want), "only PENDING jobs count (a RUNNING and a CANCELLED job do not): %+v", got)
			for i := range want {
				assert.Equal(t, want[i].Task, got[i].Task, "ordered by task")
				assert.Equal(t, want[i].Pending, got[i].Pending, "pending jobs of %s", want[i].Task)
				assert.True(t, want[i].Earliest.Equal(got[i].Earliest), "earliest scheduled time of %s: want %s, got %s", want[i].Task, want[i].Earliest, got[i].Earliest)
				assert.Equal(t, time.UTC, got[i].Earliest.Location(), "times are UTC")
			}
		}},
	}
}
