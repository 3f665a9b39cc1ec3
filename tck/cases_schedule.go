package tck

import (
	"fmt"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratchet-go/ratchet/sdk/spi"
)

// scheds returns the case's store as a ScheduleStore, or skips the case.
func (f *fixture) scheds() spi.ScheduleStore {
	f.t.Helper()
	return capability[spi.ScheduleStore](f, "spi.ScheduleStore")
}

// schedule builds a schedule row due at next.
func schedule(id string, next time.Time) spi.ScheduleRow {
	return spi.ScheduleRow{ID: id, TaskName: "tck.task", Definition: []byte(`{"expr":"@every 1m","n":` + fmt.Sprint(len(id)) + `}`),
		NextFireAt: next, CreatedAt: base, UpdatedAt: base}
}

// createSchedule creates r, failing the case unless it was created.
func (f *fixture) createSchedule(ss spi.ScheduleStore, r spi.ScheduleRow) {
	f.t.Helper()
	ok, err := ss.CreateSchedule(f.ctx, r)
	require.NoError(f.t, err, "CreateSchedule(%q)", r.ID)
	require.True(f.t, ok, "CreateSchedule(%q) of a new id must create it", r.ID)
}

// getSchedule returns schedule id, failing the case when it is missing.
func (f *fixture) getSchedule(ss spi.ScheduleStore, id string) spi.ScheduleRow {
	f.t.Helper()
	r, ok, err := ss.GetSchedule(f.ctx, id)
	require.NoError(f.t, err, "GetSchedule(%q)", id)
	require.True(f.t, ok, "GetSchedule(%q): the schedule must exist", id)
	return r
}

// slotKey is the idempotency key of schedule id's slot at t.
func slotKey(id string, t time.Time) string {
	return "tck-slot:" + id + "@" + t.UTC().Format(time.RFC3339Nano)
}

// slotJob builds the job of schedule id's slot at t.
func (f *fixture) slotJob(id string, t time.Time) *spi.Job {
	return f.newJob(withKey(slotKey(id, t)), withDue(t))
}

// fire fires r's slot at slot, advancing to next, and returns whether it
// applied and the insert results.
func (f *fixture) fire(ss spi.ScheduleStore, r spi.ScheduleRow, job *spi.Job, slot, next time.Time) (bool, []spi.InsertResult) {
	f.t.Helper()
	fire := spi.ScheduleFire{ID: r.ID, Version: r.Version, NextFireAt: next, Now: slot}
	if job != nil {
		fire.Jobs, fire.LastFireAt, fire.LastJobID = cloneJobs([]*spi.Job{job}), slot, job.ID
	}
	ok, res, err := ss.FireSchedule(f.ctx, fire)
	require.NoError(f.t, err, "FireSchedule(%q, version %d)", r.ID, r.Version)
	return ok, res
}

func scheduleIDs(rs []spi.ScheduleRow) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = r.ID
	}
	return out
}

func scheduleCases() []testCase {
	return []testCase{
		{"CreateGet", func(t tb, f *fixture) {
			ss := f.scheds()
			r := schedule("nightly/report ü", at(time.Hour).Add(123*time.Microsecond))
			r.Paused = true
			f.createSchedule(ss, r)
			got := f.getSchedule(ss, r.ID)
			assert.Equal(t, int64(1), got.Version, "a new schedule is at version 1")
			assert.Equal(t, r.TaskName, got.TaskName)
			assert.Equal(t, r.Definition, got.Definition, "the definition is kept byte for byte")
			assert.True(t, got.Paused)
			assert.True(t, r.NextFireAt.Equal(got.NextFireAt), "next fire time to the microsecond: %s, want %s", got.NextFireAt, r.NextFireAt)
			assert.True(t, got.LastFireAt.IsZero(), "never fired")
			assert.Equal(t, uuid.Nil, got.LastJobID)
			assert.Zero(t, got.Skipped)

			again := schedule(r.ID, at(2*time.Hour))
			again.TaskName = "tck.other"
			ok, err := ss.CreateSchedule(f.ctx, again)
			require.NoError(t, err)
			assert.False(t, ok, "creating an existing id reports false")
			assert.Equal(t, r.TaskName, f.getSchedule(ss, r.ID).TaskName, "and writes nothing")

			_, ok, err = ss.GetSchedule(f.ctx, "missing")
			require.NoError(t, err)
			assert.False(t, ok, "GetSchedule of an unknown id")
			_, err = ss.CreateSchedule(f.ctx, schedule("", at(0)))
			assert.Error(t, err, "an empty id is refused")
		}},
		{"List", func(t tb, f *fixture) {
			ss := f.scheds()
			for _, id := range []string{"b", "a", "c/1", "C", "ab"} {
				f.createSchedule(ss, schedule(id, at(time.Minute)))
			}
			all, err := ss.ListSchedules(f.ctx, "", 10)
			require.NoError(t, err)
			assert.Equal(t, []string{"C", "a", "ab", "b", "c/1"}, scheduleIDs(all), "in byte order of the ids")
			page, err := ss.ListSchedules(f.ctx, "a", 2)
			require.NoError(t, err)
			assert.Equal(t, []string{"ab", "b"}, scheduleIDs(page), "a page after an id")
		}},
		{"UpdateCompareAndSet", func(t tb, f *fixture) {
			ss := f.scheds()
			r := schedule("s", at(time.Hour))
			f.createSchedule(ss, r)
			u := r
			u.TaskName, u.Definition, u.Paused, u.NextFireAt, u.UpdatedAt = "tck.other", []byte(`{"v":2}`), true, at(3*time.Hour), at(time.Second)
			ok, err := ss.UpdateSchedule(f.ctx, u, 1)
			require.NoError(t, err)
			require.True(t, ok, "an update at the current version applies")
			got := f.getSchedule(ss, "s")
			assert.Equal(t, int64(2), got.Version, "an update advances the version")
			assert.Equal(t, "tck.other", got.TaskName)
			assert.Equal(t, []byte(`{"v":2}`), got.Definition)
			assert.True(t, got.Paused)
			assert.True(t, got.NextFireAt.Equal(at(3*time.Hour)))

			stale := u
			stale.TaskName = "tck.stale"
			ok, err = ss.UpdateSchedule(f.ctx, stale, 1)
			require.NoError(t, err)
			assert.False(t, ok, "an update at a stale version does not apply")
			assert.Equal(t, "tck.other", f.getSchedule(ss, "s").TaskName, "and writes nothing")
			ok, err = ss.UpdateSchedule(f.ctx, schedule("missing", at(0)), 1)
			require.NoError(t, err)
			assert.False(t, ok, "an update of an unknown id")
		}},
		{"Due", func(t tb, f *fixture) {
			ss := f.scheds()
			now := at(time.Hour)
			f.createSchedule(ss, schedule("late", now.Add(-time.Minute)))
			f.createSchedule(ss, schedule("exact", now))
			f.createSchedule(ss, schedule("b-tie", now.Add(-time.Minute)))
			f.createSchedule(ss, schedule("future", now.Add(time.Microsecond)))
			paused := schedule("paused", now.Add(-time.Hour))
			paused.Paused = true
			f.createSchedule(ss, paused)
			due, err := ss.DueSchedules(f.ctx, now, 10)
			require.NoError(t, err)
			assert.Equal(t, []string{"b-tie", "late", "exact"}, scheduleIDs(due), "due at or before now, not paused, earliest first, ties by id")
			due, err = ss.DueSchedules(f.ctx, now, 1)
			require.NoError(t, err)
			assert.Equal(t, []string{"b-tie"}, scheduleIDs(due), "the limit")
		}},
		{"FireAdvances", func(t tb, f *fixture) {
			ss := f.scheds()
			slot := at(time.Hour)
			r := schedule("hourly", slot)
			f.createSchedule(ss, r)
			r = f.getSchedule(ss, r.ID)
			job := f.slotJob(r.ID, slot)
			ok, res := f.fire(ss, r, job, slot, slot.Add(time.Hour))
			require.True(t, ok, "a fire at the current version applies")
			require.Equal(t, []spi.InsertResult{{ID: job.ID}}, res)
			got := f.get(job.ID)
			assert.Equal(t, spi.StatusPending, got.Status, "the slot's job is written, PENDING")
			assert.Equal(t, slotKey(r.ID, slot), got.IdempotencyKey)
			after := f.getSchedule(ss, r.ID)
			assert.Equal(t, r.Version+1, after.Version, "a fire advances the version")
			assert.True(t, after.NextFireAt.Equal(slot.Add(time.Hour)), "to the next slot")
			assert.True(t, after.LastFireAt.Equal(slot))
			assert.Equal(t, job.ID, after.LastJobID)

			// A second firer that read the schedule before the first fire
			// loses: nothing of its fire is written.
			late := f.slotJob(r.ID, slot)
			late.IdempotencyKey = slotKey(r.ID, slot) + "-late"
			ok, _ = f.fire(ss, r, late, slot, slot.Add(time.Hour))
			assert.False(t, ok, "a fire at a stale version does not apply")
			_, err := f.s.GetJob(f.ctx, late.ID)
			assert.ErrorIs(t, err, spi.ErrNotFound, "a stale fire inserts no job")
			assert.Equal(t, after.Version, f.getSchedule(ss, r.ID).Version, "nor advances the schedule")

			// A fire that skips slots inserts nothing and counts them.
			ok, _ = f.fire(ss, after, nil, slot, slot.Add(5*time.Hour))
			require.True(t, ok)
			skipped := spi.ScheduleFire{ID: r.ID, Version: after.Version + 1, NextFireAt: slot.Add(6 * time.Hour), Skipped: 3,
				SkippedFrom: slot.Add(3 * time.Hour), SkippedTo: slot.Add(5 * time.Hour), Now: slot.Add(5*time.Hour + time.Minute)}
			ok, _, err = ss.FireSchedule(f.ctx, skipped)
			require.NoError(t, err)
			require.True(t, ok)
			final := f.getSchedule(ss, r.ID)
			assert.Equal(t, int64(3), final.Skipped, "skipped slots are counted")
			assert.True(t, final.LastFireAt.Equal(slot), "a fire without jobs keeps the last fire")
			assert.Equal(t, job.ID, final.LastJobID)

			// Each skipped run is recorded, the latest first.
			more := spi.ScheduleFire{ID: r.ID, Version: final.Version, NextFireAt: slot.Add(9 * time.Hour), Skipped: 2,
				SkippedFrom: slot.Add(7 * time.Hour), SkippedTo: slot.Add(8 * time.Hour), Now: slot.Add(8*time.Hour + time.Minute)}
			ok, _, err = ss.FireSchedule(f.ctx, more)
			require.NoError(t, err)
			require.True(t, ok)
			skips, err := ss.ScheduleSkips(f.ctx, r.ID, 10)
			require.NoError(t, err)
			if assert.Len(t, skips, 2, "one record per fire that skipped") {
				for i, want := range []spi.ScheduleFire{more, skipped} {
					got := skips[i]
					assert.True(t, got.From.Equal(want.SkippedFrom) && got.To.Equal(want.SkippedTo), "record %d: %s..%s, want %s..%s", i, got.From, got.To, want.SkippedFrom, want.SkippedTo)
					assert.Equal(t, want.Skipped, got.Slots)
					assert.True(t, got.At.Equal(want.Now), "record %d recorded at %s, want %s", i, got.At, want.Now)
					assert.Equal(t, time.UTC, got.From.Location())
				}
			}
			one, err := ss.ScheduleSkips(f.ctx, r.ID, 1)
			require.NoError(t, err)
			assert.Len(t, one, 1, "the limit applies")
			none, err := ss.ScheduleSkips(f.ctx, "no-such-schedule", 10)
			require.NoError(t, err)
			assert.Empty(t, none)
			gone, err := ss.DeleteSchedule(f.ctx, r.ID)
			require.NoError(t, err)
			require.True(t, gone)
			skips, err = ss.ScheduleSkips(f.ctx, r.ID, 10)
			require.NoError(t, err)
			assert.Empty(t, skips, "a deleted schedule's records go with it")
		}},
		{"SlotFiresOnce", func(t tb, f *fixture) {
			// The same slot fired twice (by a node that missed the first
			// fire's advance and re-read) is one job: the second is a
			// duplicate of the first.
			ss := f.scheds()
			slot := at(time.Hour)
			f.createSchedule(ss, schedule("once", slot))
			r := f.getSchedule(ss, "once")
			first := f.slotJob("once", slot)
			ok, _ := f.fire(ss, r, first, slot, slot) // the advance left next at the slot
			require.True(t, ok)
			r = f.getSchedule(ss, "once")
			second := f.slotJob("once", slot)
			ok, res := f.fire(ss, r, second, slot, slot.Add(time.Hour))
			require.True(t, ok)
			assert.Equal(t, []spi.InsertResult{{ID: first.ID, Duplicate: true}}, res, "the slot's key is taken: a duplicate of the first job")
			_, err := f.s.GetJob(f.ctx, second.ID)
			assert.ErrorIs(t, err, spi.ErrNotFound, "the second job of a slot is not written")
		}},
		{"ConcurrentFirers", func(t tb, f *fixture) {
			// 8 schedulers fire the same schedule at once, round after
			// round: each slot gets exactly one job, and one firer wins.
			ss := f.scheds()
			hs := []spi.ScheduleStore{ss}
			for _, s := range f.handles()[1:] {
				hs = append(hs, handleAs[spi.ScheduleStore](f, s, "spi.ScheduleStore"))
			}
			const firers, rounds = 8, 10
			f.createSchedule(ss, schedule("race", at(0)))
			for round := range rounds {
				slot := at(time.Duration(round) * time.Minute)
				var (
					wg   sync.WaitGroup
					mu   sync.Mutex
					wins int
					errs []error
				)
				start := make(chan struct{})
				for g := range firers {
					h := hs[g%len(hs)]
					job := f.slotJob("race", slot)
					wg.Add(1)
					go func() {
						defer wg.Done()
						<-start
						r, _, err := h.GetSchedule(f.ctx, "race")
						if err == nil {
							var ok bool
							ok, _, err = h.FireSchedule(f.ctx, spi.ScheduleFire{ID: "race", Version: r.Version, Jobs: []*spi.Job{job},
								NextFireAt: slot.Add(time.Minute), LastFireAt: slot, LastJobID: job.ID, Now: slot})
							if ok {
								mu.Lock()
								wins++
								mu.Unlock()
							}
						}
						if err != nil {
							mu.Lock()
							errs = append(errs, err)
							mu.Unlock()
						}
					}()
				}
				close(start)
				wg.Wait()
				require.Empty(t, errs, "round %d: errors", round)
				require.GreaterOrEqual(t, wins, 1, "round %d: some firer wins", round)
				got, _ := f.list(spi.ListParams{Limit: 1000})
				n := 0
				for _, j := range got {
					if j.IdempotencyKey == slotKey("race", slot) {
						n++
					}
				}
				require.Equal(t, 1, n, "round %d: the slot has exactly one job", round)
				require.True(t, f.getSchedule(ss, "race").NextFireAt.Equal(slot.Add(time.Minute)), "round %d: advanced once", round)
			}
		}},
		{"Delete", func(t tb, f *fixture) {
			ss := f.scheds()
			slot := at(time.Hour)
			f.createSchedule(ss, schedule("gone", slot))
			job := f.slotJob("gone", slot)
			ok, _ := f.fire(ss, f.getSchedule(ss, "gone"), job, slot, slot.Add(time.Hour))
			require.True(t, ok)
			ok, err := ss.DeleteSchedule(f.ctx, "gone")
			require.NoError(t, err)
			assert.True(t, ok, "deleting an existing schedule")
			_, ok, err = ss.GetSchedule(f.ctx, "gone")
			require.NoError(t, err)
			assert.False(t, ok, "a deleted schedule is gone")
			ok, err = ss.DeleteSchedule(f.ctx, "gone")
			require.NoError(t, err)
			assert.False(t, ok, "deleting it again")
			assert.Equal(t, spi.StatusPending, f.get(job.ID).Status, "the jobs it fired stay")
			ok, _, err = ss.FireSchedule(f.ctx, spi.ScheduleFire{ID: "gone", Version: 2, NextFireAt: slot, Now: slot})
			require.NoError(t, err)
			assert.False(t, ok, "a deleted schedule does not fire")
		}},
		{"FireInvalidJob", func(t tb, f *fixture) {
			ss := f.scheds()
			slot := at(time.Hour)
			f.createSchedule(ss, schedule("bad", slot))
			r := f.getSchedule(ss, "bad")
			bad := f.slotJob("bad", slot)
			bad.Priority = 9
			_, _, err := ss.FireSchedule(f.ctx, spi.ScheduleFire{ID: "bad", Version: r.Version, Jobs: []*spi.Job{bad},
				NextFireAt: slot.Add(time.Hour), LastFireAt: slot, LastJobID: bad.ID, Now: slot})
			assert.Error(t, err, "a fire with an invalid job fails")
			assert.Equal(t, r.Version, f.getSchedule(ss, "bad").Version, "and does not advance the schedule")
			_, err = f.s.GetJob(f.ctx, bad.ID)
			assert.ErrorIs(t, err, spi.ErrNotFound)
		}},
	}
}
