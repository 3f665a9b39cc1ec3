package engine_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratchet-go/ratchet/engine"
	ratchet "github.com/ratchet-go/ratchet/sdk"
	"github.com/ratchet-go/ratchet/sdk/spi"
	"github.com/ratchet-go/ratchet/stores/memory"
)

// TestRecurringScheduleRunsItsJobs registers a schedule through the
// engine's options and runs the jobs it fires; the client pauses, resumes,
// triggers and deletes it.
func TestRecurringScheduleRunsItsJobs(t *testing.T) {
	ctx := context.Background()
	ran := make(chan time.Time, 10)
	task := ratchet.NewVoidTask("tick", func(ctx context.Context, n int) error {
		jc, _ := ratchet.JobFromContext(ctx)
		ran <- jc.ScheduledAt
		return nil
	})
	every := task.Recurring("tick-10s", "*/10 * * * * ?", 1, ratchet.WithJobOptions(ratchet.WithPriority(ratchet.PriorityHigh)))
	r := start(t, engine.Options{Schedules: []ratchet.Recurring{every}}, task)
	info, err := r.client.GetSchedule(ctx, "tick-10s")
	require.NoError(t, err)
	assert.Equal(t, t0.Add(10*time.Second), info.NextFireAt, "the first slot after the registration")
	assert.False(t, info.Unregistered, "this node runs the task")
	for _, slot := range []time.Time{t0.Add(10 * time.Second), t0.Add(20 * time.Second)} {
		r.advanceTo(slot)
		assert.Equal(t, slot, <-ran, "each slot's job is due at its slot")
	}
	page, err := r.client.ListJobs(ctx, ratchet.ListOptions{PropertyKey: ratchet.ScheduleProperty, PropertyValue: "tick-10s"})
	require.NoError(t, err)
	require.Len(t, page.Jobs, 2, "the schedule's jobs are listed by its property")
	assert.Equal(t, ratchet.PriorityHigh, page.Jobs[0].Priority, "with the schedule's job options")

	require.NoError(t, r.client.PauseSchedule(ctx, "tick-10s"))
	id, err := r.client.TriggerSchedule(ctx, "tick-10s")
	require.NoError(t, err)
	assert.Equal(t, r.clock.Now().UTC().Truncate(time.Microsecond), <-ran, "a trigger fires now, paused or not")
	assert.Equal(t, engine.EventSucceeded, r.next(id).Kind)
	require.NoError(t, r.client.ResumeSchedule(ctx, "tick-10s"))
	info, err = r.client.GetSchedule(ctx, "tick-10s")
	require.NoError(t, err)
	assert.False(t, info.Paused)
	require.NoError(t, r.client.DeleteSchedule(ctx, "tick-10s"))
	_, err = r.client.GetSchedule(ctx, "tick-10s")
	assert.ErrorIs(t, err, ratchet.ErrNotFound)
	assert.ErrorIs(t, r.client.DeleteSchedule(ctx, "tick-10s"), ratchet.ErrNotFound)
}

// TestScheduleRegistration checks idempotent registration, updates, and
// the errors of bad definitions, which write nothing.
func TestScheduleRegistration(t *testing.T) {
	ctx := context.Background()
	task := ratchet.NewVoidTask("report", func(context.Context, string) error { return nil })
	other := ratchet.NewVoidTask("other", func(context.Context, string) error { return nil })
	r := start(t, engine.Options{}, task, other)
	put := func(rec ratchet.Recurring) (bool, error) { return r.client.PutSchedule(ctx, rec) }

	changed, err := put(task.Recurring("daily", "0 0 1 * * ?", "eu", ratchet.InZone("Europe/Berlin")))
	require.NoError(t, err)
	assert.True(t, changed)
	info, err := r.client.GetSchedule(ctx, "daily")
	require.NoError(t, err)
	assert.Equal(t, time.Date(2030, 1, 2, 0, 0, 0, 0, time.UTC), info.NextFireAt, "1 AM in Berlin is midnight UTC in winter")
	changed, err = put(task.Recurring("daily", "0 0 1 * * ?", "eu", ratchet.InZone("Europe/Berlin")))
	require.NoError(t, err)
	assert.False(t, changed, "the same definition changes nothing")
	changed, err = put(task.Recurring("daily", "0 0 1 * * ?", "us", ratchet.InZone("Europe/Berlin")))
	require.NoError(t, err)
	assert.True(t, changed, "other arguments update the schedule")
	info2, err := r.client.GetSchedule(ctx, "daily")
	require.NoError(t, err)
	assert.Equal(t, info.NextFireAt, info2.NextFireAt, "an edit that keeps the expression keeps the next slot")
	changed, err = put(task.Recurring("daily", "0 0 2 * * ?", "us", ratchet.InZone("Europe/Berlin")))
	require.NoError(t, err)
	assert.True(t, changed)
	info3, err := r.client.GetSchedule(ctx, "daily")
	require.NoError(t, err)
	assert.Equal(t, time.Date(2030, 1, 1, 1, 0, 0, 0, time.UTC), info3.NextFireAt, "a new expression starts from the first slot after now")

	for _, c := range []struct {
		rec  ratchet.Recurring
		says string
	}{
		{other.Recurring("daily", "0 0 1 * * ?", "x"), `fires task "report"`},
		{task.Recurring("bad", "0 0 1 * * 8", "x"), `day-of-week field "8"`},
		{task.Recurring("bad", "0 9 * * *", "x", ratchet.InZone("Mars/Olympus")), "unknown time zone"},
		{task.Recurring("bad", "@hourly", "x", ratchet.WithJobOptions(ratchet.WithDelay(time.Minute))), "WithDelay"},
		{task.Recurring("bad", "@hourly", "x", ratchet.WithJobOptions(ratchet.WithStartBy(t0.Add(time.Hour)))), "give WithStartWithin a window"},
		{task.Recurring("bad", "@hourly", "x", ratchet.OnMisfire(ratchet.MisfireCatchUp, 0)), "catch-up limit"},
		{task.Recurring("", "@hourly", "x"), "empty id"},
	} {
		_, err := put(c.rec)
		require.ErrorIs(t, err, ratchet.ErrInvalidArgument, c.says)
		assert.ErrorContains(t, err, c.says)
	}
	all, err := r.client.ListSchedules(ctx)
	require.NoError(t, err)
	require.Len(t, all, 1, "the refused definitions wrote nothing")
	assert.Equal(t, "report", all[0].Task)

	orphan := ratchet.NewVoidTask("nobody-runs-this", func(context.Context, string) error { return nil })
	_, err = put(orphan.Recurring("orphan", "@hourly", "x"))
	require.NoError(t, err, "a schedule of a task no live node registers is accepted")
	got, err := r.client.GetSchedule(ctx, "orphan")
	require.NoError(t, err)
	assert.True(t, got.Unregistered, "and flagged")
}

// TestSchedulesNeedAStoreThatKeepsThem checks the error of an engine given
// schedules over a store without them.
func TestSchedulesNeedAStoreThatKeepsThem(t *testing.T) {
	task := ratchet.NewVoidTask("t", func(context.Context, int) error { return nil })
	_, err := engine.New(noLeases{memory.New()}, engine.Options{Schedules: []ratchet.Recurring{task.Recurring("s", "@hourly", 1)}}, task)
	require.ErrorIs(t, err, ratchet.ErrUnsupported)
	c, err := ratchet.NewClient(struct{ spi.Store }{memory.New()}, ratchet.ClientOptions{})
	require.NoError(t, err)
	_, err = c.PutSchedule(context.Background(), task.Recurring("s", "@hourly", 1))
	require.ErrorIs(t, err, ratchet.ErrUnsupported)
}
