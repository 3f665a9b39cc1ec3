package tck

import (
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratchet-go/ratchet/sdk/spi"
)

// insertN inserts n jobs due at base, in a shuffled order, and returns them
// sorted by id.
func (f *fixture) insertN(n int) []*spi.Job {
	f.t.Helper()
	jobs := make([]*spi.Job, n)
	for i := range jobs {
		jobs[i] = f.newJob()
	}
	f.insert(shuffled(jobs)...)
	return jobs
}

// insertTasks inserts n jobs created a minute apart from base, in a
// shuffled order: each every-th of them (the last of every group of every)
// of task tck.b, the others of tck.a. It returns them in id order.
func (f *fixture) insertTasks(n, every int) []*spi.Job {
	f.t.Helper()
	jobs := make([]*spi.Job, n)
	for i := range jobs {
		task := "tck.a"
		if i%every == every-1 {
			task = "tck.b"
		}
		jobs[i] = f.newJob(withTask(task), withCreated(base.Add(time.Duration(i)*time.Minute)))
	}
	f.insert(shuffled(jobs)...)
	return jobs
}

func listCases() []testCase {
	return []testCase{
		{"Empty", func(t tb, f *fixture) {
			jobs, next := f.list(spi.ListParams{})
			assert.Empty(t, jobs, "ListJobs of an empty store")
			assert.Equal(t, uuid.UUID{}, next, "ListJobs of an empty store: next cursor")
		}},
		{"OrderByID", func(t tb, f *fixture) {
			jobs := f.insertN(30)
			got, next := f.list(spi.ListParams{})
			assert.Equal(t, ids(jobs), ids(got), "ListJobs must order by id whatever the insertion order")
			assert.Equal(t, uuid.UUID{}, next, "ListJobs of everything in one page: next cursor")
		}},
		{"FullJobs", func(t tb, f *fixture) {
			j := f.insertOne(withTags("x", "y"), withParams(map[string]string{"p": "q"}), withKey("listed"))
			got, _ := f.list(spi.ListParams{})
			require.Len(t, got, 1)
			assertJob(t, j, got[0], "ListJobs must return whole jobs")
		}},
		{"StatusFilter", func(t tb, f *fixture) {
			jobs := f.insertN(8)
			// jobs[0..2] claimed, then jobs[0] SUCCEEDED and jobs[1] FAILED;
			// jobs[3] CANCELLED; jobs[4..7] stay PENDING.
			claimed := f.claim("node-a", 3, at(0), 0)
			require.Len(t, claimed, 3)
			byID := map[uuid.UUID]*spi.Job{}
			for _, c := range claimed {
				byID[c.ID] = c
			}
			// Which three were claimed follows the claim order: all due at
			// base with equal priority, so the three smallest ids.
			require.ElementsMatch(t, ids(jobs[:3]), ids(claimed), "claim of equal jobs takes the smallest ids")
			require.Equal(t, []bool{true, true}, f.complete(
				succeeded(byID[jobs[0].ID], at(time.Second), nil, ""),
				failed(byID[jobs[1].ID], at(time.Second), 1, "boom"),
			))
			require.NoError(t, f.s.CancelJob(f.ctx, jobs[3].ID, at(time.Second)))
			want := map[spi.Status][]uuid.UUID{
				spi.StatusSucceeded: {jobs[0].ID},
				spi.StatusFailed:    {jobs[1].ID},
				spi.StatusRunning:   {jobs[2].ID},
				spi.StatusCancelled: {jobs[3].ID},
				spi.StatusPending:   ids(jobs[4:]),
				"":                  ids(jobs),
			}
			for st, w := range want {
				got, next := f.list(spi.ListParams{Status: st})
				assert.Equal(t, w, ids(got), "ListJobs(Status %q)", st)
				assert.Equal(t, uuid.UUID{}, next, "ListJobs(Status %q): next cursor", st)
				for _, g := range got {
					if st != "" {
						assert.Equal(t, st, g.Status, "ListJobs(Status %q) returned job %s", st, g.ID)
					}
				}
			}
		}},
		{"Paging", func(t tb, f *fixture) {
			jobs := f.insertN(25)
			var got []uuid.UUID
			var after uuid.UUID
			for page, want := range []int{10, 10, 5} {
				p, next := f.list(spi.ListParams{After: after, Limit: 10})
				require.Len(t, p, want, "page %d of 25 jobs in pages of 10", page+1)
				got = append(got, ids(p)...)
				if page < 2 {
					require.NotEqual(t, uuid.UUID{}, next, "page %d: next cursor must be set while jobs remain", page+1)
				} else {
					assert.Equal(t, uuid.UUID{}, next, "last page: next cursor must be the zero UUID")
				}
				after = next
			}
			assert.Equal(t, ids(jobs), got, "pages must list every job once, in id order")
		}},
		{"PagingExactMultiple", func(t tb, f *fixture) {
			// 20 jobs in pages of 10: after the second page the cursor is
			// either zero or leads to an empty last page with a zero cursor.
			jobs := f.insertN(20)
			p1, next := f.list(spi.ListParams{Limit: 10})
			require.Len(t, p1, 10)
			require.NotEqual(t, uuid.UUID{}, next)
			p2, next := f.list(spi.ListParams{After: next, Limit: 10})
			require.Len(t, p2, 10)
			assert.Equal(t, ids(jobs), append(ids(p1), ids(p2)...), "pages in id order")
			if next != (uuid.UUID{}) {
				p3, next3 := f.list(spi.ListParams{After: next, Limit: 10})
				assert.Empty(t, p3, "page after the last job")
				assert.Equal(t, uuid.UUID{}, next3, "cursor of the page after the last job")
			}
		}},
		{"PagingWithStatus", func(t tb, f *fixture) {
			// 24 jobs, every other one CANCELLED: paging over the 12 PENDING
			// ones in pages of 5 gives 5, 5, 2 (filter before limit).
			jobs := f.insertN(24)
			var pending []uuid.UUID
			for i, j := range jobs {
				if i%2 == 1 {
					pending = append(pending, j.ID)
					continue
				}
				require.NoError(t, f.s.CancelJob(f.ctx, j.ID, at(0)))
			}
			var got []uuid.UUID
			var after uuid.UUID
			for page, want := range []int{5, 5, 2} {
				p, next := f.list(spi.ListParams{Status: spi.StatusPending, After: after, Limit: 5})
				require.Len(t, p, want, "page %d of 12 PENDING jobs in pages of 5", page+1)
				got = append(got, ids(p)...)
				if page < 2 {
					require.NotEqual(t, uuid.UUID{}, next, "page %d: next cursor", page+1)
				} else {
					assert.Equal(t, uuid.UUID{}, next, "last page: next cursor must be the zero UUID")
				}
				after = next
			}
			assert.Equal(t, pending, got, "pages of PENDING jobs")
		}},
		{"AfterCursor", func(t tb, f *fixture) {
			// After is exclusive and need not be the id of a listed job.
			jobs := f.insertN(6)
			got, _ := f.list(spi.ListParams{After: jobs[2].ID})
			assert.Equal(t, ids(jobs[3:]), ids(got), "ListJobs after the third id")
			between := jobs[2].ID // made larger than jobs[2], smaller than jobs[3]
			for i := 6; i < 16; i++ {
				between[i] = 0xff
			}
			got, _ = f.list(spi.ListParams{After: between})
			assert.Equal(t, ids(jobs[3:]), ids(got), "ListJobs after an id that is no job's")
		}},
		{"Limit", func(t tb, f *fixture) {
			jobs := f.insertN(7)
			got, next := f.list(spi.ListParams{Limit: 3})
			assert.Equal(t, ids(jobs[:3]), ids(got), "ListJobs(Limit 3)")
			assert.NotEqual(t, uuid.UUID{}, next, "ListJobs(Limit 3) of 7 jobs: next cursor")
		}},
		{"DefaultLimit", func(t tb, f *fixture) {
			jobs := f.insertN(105)
			for _, limit := range []int{0, -1} {
				got, next := f.list(spi.ListParams{Limit: limit})
				assert.Equal(t, ids(jobs[:100]), ids(got), "ListJobs(Limit %d) lists 100 jobs", limit)
				assert.NotEqual(t, uuid.UUID{}, next, "ListJobs(Limit %d) of 105 jobs: next cursor", limit)
			}
		}},
		{"TaskAndCreatedFilters", func(t tb, f *fixture) {
			// Six jobs, created a minute apart, of tasks a and b in turn.
			jobs := f.insertTasks(6, 2)
			sorted := func(js ...*spi.Job) []uuid.UUID { return ids(js) }
			got, _ := f.list(spi.ListParams{TaskName: "tck.a"})
			assert.Equal(t, sorted(jobs[0], jobs[2], jobs[4]), ids(got), "ListJobs(TaskName tck.a)")
			got, _ = f.list(spi.ListParams{TaskName: "tck.none"})
			assert.Empty(t, got, "ListJobs of a task without jobs")
			got, _ = f.list(spi.ListParams{CreatedFrom: base.Add(time.Minute), CreatedBefore: base.Add(4 * time.Minute)})
			assert.Equal(t, sorted(jobs[1], jobs[2], jobs[3]), ids(got), "ListJobs(CreatedFrom +1m inclusive, CreatedBefore +4m exclusive)")
			got, _ = f.list(spi.ListParams{CreatedFrom: base.Add(4 * time.Minute)})
			assert.Equal(t, sorted(jobs[4], jobs[5]), ids(got), "ListJobs(CreatedFrom +4m)")
			got, _ = f.list(spi.ListParams{CreatedBefore: base.Add(time.Minute)})
			assert.Equal(t, sorted(jobs[0]), ids(got), "ListJobs(CreatedBefore +1m)")
			// Filters combine with each other, with the status and with the
			// cursor: pages of one job of task b created from +1m on.
			var paged []uuid.UUID
			after := uuid.UUID{}
			for range 4 {
				page, next := f.list(spi.ListParams{TaskName: "tck.b", Status: spi.StatusPending, CreatedFrom: base.Add(time.Minute), After: after, Limit: 1})
				paged = append(paged, ids(page)...)
				if next == (uuid.UUID{}) {
					break
				}
				after = next
			}
			assert.Equal(t, sorted(jobs[1], jobs[3], jobs[5]), paged, "pages of filtered jobs")
			got, _ = f.list(spi.ListParams{TaskName: "tck.b", Status: spi.StatusFailed})
			assert.Empty(t, got, "ListJobs(TaskName, Status FAILED) of pending jobs")
		}},
		{"DueFilters", func(t tb, f *fixture) {
			// Four jobs due a minute apart: DueBy is inclusive, DueAfter
			// exclusive, and they combine with the status and the count.
			var jobs []*spi.Job
			for i := range 4 {
				jobs = append(jobs, f.newJob(withDue(base.Add(time.Duration(i)*time.Minute))))
			}
			f.insert(shuffled(jobs)...)
			got, _ := f.list(spi.ListParams{DueBy: base.Add(time.Minute)})
			assert.Equal(t, ids(jobs[:2]), ids(got), "ListJobs(DueBy +1m) includes the job due at +1m")
			got, _ = f.list(spi.ListParams{DueAfter: base.Add(time.Minute), Status: spi.StatusPending})
			assert.Equal(t, ids(jobs[2:]), ids(got), "ListJobs(DueAfter +1m) excludes the job due at +1m")
			got, _ = f.list(spi.ListParams{DueAfter: base, DueBy: base.Add(2 * time.Minute)})
			assert.Equal(t, ids(jobs[1:3]), ids(got), "ListJobs(DueAfter +0, DueBy +2m)")
			got, _ = f.list(spi.ListParams{DueBy: base.Add(3 * time.Minute), Status: spi.StatusFailed})
			assert.Empty(t, got, "ListJobs(DueBy, Status FAILED) of pending jobs")
			if counter, ok := pick[spi.JobCounter](f.s); ok {
				n, err := counter.CountJobs(f.ctx, spi.ListParams{Status: spi.StatusPending, DueAfter: base.Add(30 * time.Second)}, 100)
				require.NoError(t, err)
				assert.Equal(t, 3, n, "CountJobs(DueAfter +30s)")
			}
		}},
		{"TagPriorityAndErrorFilters", func(t tb, f *fixture) {
			// The first two fail, with errors that differ in case and carry
			// the LIKE wildcards as text (each inserted, claimed and failed
			// before the next is inserted).
			now := at(0)
			var jobs []*spi.Job
			for i, msg := range []string{"SMTP Timeout after 30s", "quota 100%_used"} {
				opts := [][]jobOpt{{withTags("eu", "vip")}, {withTags("us"), withPriority(spi.PriorityHigh)}}[i]
				j := f.insertOne(opts...)
				c := f.claimOne(j.ID, "n1", now)
				require.Equal(t, []bool{true}, f.complete(failed(c, now, 1, msg)))
				jobs = append(jobs, j)
			}
			jobs = append(jobs, f.insert(f.newJob(withPriority(spi.PriorityCritical)), f.newJob(withTags("eu")))...)
			got, _ := f.list(spi.ListParams{Tag: "eu"})
			assert.Equal(t, ids([]*spi.Job{jobs[0], jobs[3]}), ids(got), "ListJobs(Tag eu)")
			got, _ = f.list(spi.ListParams{Tag: "none"})
			assert.Empty(t, got, "ListJobs of a tag no job carries")
			got, _ = f.list(spi.ListParams{Priorities: []spi.Priority{spi.PriorityHigh, spi.PriorityCritical}})
			assert.Equal(t, ids([]*spi.Job{jobs[1], jobs[2]}), ids(got), "ListJobs(Priorities HIGH, CRITICAL)")
			got, _ = f.list(spi.ListParams{ErrorContains: "timeout"})
			require.Len(t, got, 1, "ListJobs(ErrorContains timeout) ignores case")
			got, _ = f.list(spi.ListParams{ErrorContains: "0%_u"})
			require.Len(t, got, 1, "ListJobs(ErrorContains) takes % and _ as text")
			got, _ = f.list(spi.ListParams{ErrorContains: "0__u"})
			assert.Empty(t, got, "_ is no wildcard")
			got, _ = f.list(spi.ListParams{ErrorContains: "quota", Tag: "eu", Status: spi.StatusFailed})
			assert.Empty(t, got, "filters combine: the quota error is not on a job tagged eu")
			got, _ = f.list(spi.ListParams{ErrorContains: "smtp", Priorities: []spi.Priority{spi.PriorityNormal}, Tag: "eu"})
			assert.Equal(t, ids([]*spi.Job{jobs[0]}), ids(got), "filters combine")
			// The archive lists by the same filters, over its own tags.
			a, ok := pick[spi.JobArchiver](f.s)
			if !ok {
				return
			}
			require.Equal(t, 2, f.archive(a, at(time.Hour), 10))
			arch, _, err := a.ListArchivedJobs(f.ctx, spi.ListParams{Tag: "vip", ErrorContains: "TIMEOUT"})
			require.NoError(t, err)
			assert.Equal(t, ids([]*spi.Job{jobs[0]}), ids(arch), "ListArchivedJobs(Tag vip, ErrorContains TIMEOUT)")
			arch, _, err = a.ListArchivedJobs(f.ctx, spi.ListParams{Tag: "us", Priorities: []spi.Priority{spi.PriorityLow}})
			require.NoError(t, err)
			assert.Empty(t, arch, "ListArchivedJobs(Tag us, Priorities LOW)")
		}},
	}
}

// counterCases check spi.JobCounter: the count of a listing, up to a cap.
func counterCases() []testCase {
	return []testCase{
		{"Filters", func(t tb, f *fixture) {
			counter := capability[spi.JobCounter](f, "spi.JobCounter")
			jobs := f.insertTasks(9, 3) // every third of task b
			count := func(p spi.ListParams, limit int) int {
				n, err := counter.CountJobs(f.ctx, p, limit)
				require.NoError(t, err, "CountJobs(%+v, %d)", p, limit)
				return n
			}
			assert.Equal(t, 9, count(spi.ListParams{}, 100), "CountJobs of every job")
			assert.Equal(t, 4, count(spi.ListParams{}, 4), "CountJobs stops at its limit")
			assert.Equal(t, 3, count(spi.ListParams{TaskName: "tck.b"}, 100), "CountJobs(TaskName)")
			assert.Equal(t, 2, count(spi.ListParams{TaskName: "tck.a", CreatedFrom: base.Add(5 * time.Minute)}, 100), "CountJobs(TaskName, CreatedFrom)")
			assert.Equal(t, 0, count(spi.ListParams{Status: spi.StatusRunning}, 100), "CountJobs(Status RUNNING) of pending jobs")
			assert.Equal(t, 9, count(spi.ListParams{Status: spi.StatusPending}, 100), "CountJobs(Status PENDING)")
			assert.Equal(t, 6, count(spi.ListParams{After: jobs[2].ID}, 100), "CountJobs after a cursor")
			assert.Equal(t, 0, count(spi.ListParams{Status: "NOPE"}, 100), "CountJobs of an unknown status")
		}},
	}
}
