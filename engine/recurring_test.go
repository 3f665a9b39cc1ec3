package engine

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratchet-go/ratchet/internal/nodecore"
	"github.com/ratchet-go/ratchet/internal/stored"
	ratchet "github.com/ratchet-go/ratchet/sdk"
	"github.com/ratchet-go/ratchet/sdk/cronexpr"
	"github.com/ratchet-go/ratchet/sdk/spi"
	"github.com/ratchet-go/ratchet/stores/memory"
)

func TestPlanFire(t *testing.T) {
	t0 := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	every5, err := cronexpr.Parse("*/5 * * * *", "")
	require.NoError(t, err)
	min := func(m int) time.Time { return t0.Add(time.Duration(m) * time.Minute) }
	slots := func(ms ...int) []time.Time {
		var out []time.Time
		for _, m := range ms {
			out = append(out, min(m))
		}
		return out
	}
	def := func(m ratchet.MisfirePolicy, catchUp int, o ratchet.OverlapPolicy) ratchet.ScheduleDefinition {
		return ratchet.ScheduleDefinition{Misfire: m, CatchUpLimit: catchUp, Overlap: o}
	}
	late := min(60) // twelve slots past the one-minute threshold, one on time
	cases := []struct {
		name string
		d    ratchet.ScheduleDefinition
		now  time.Time
		busy bool
		want nodecore.FirePlan
	}{
		{"on time", def(ratchet.MisfireSkip, 0, ratchet.OverlapAllow), t0.Add(time.Second), false, nodecore.FirePlan{Slots: slots(0), Next: min(5)}},
		{"not due", def(ratchet.MisfireSkip, 0, ratchet.OverlapAllow), t0.Add(-time.Second), false, nodecore.FirePlan{Next: min(0)}},
		{"misfires skipped", def(ratchet.MisfireSkip, 0, ratchet.OverlapAllow), late, false,
			nodecore.FirePlan{Slots: slots(60), Skipped: 12, SkippedFrom: min(0), SkippedTo: min(55), Next: min(65)}},
		{"misfires fired once", def(ratchet.MisfireFireOnce, 0, ratchet.OverlapAllow), late, false,
			nodecore.FirePlan{Slots: slots(55, 60), Skipped: 11, SkippedFrom: min(0), SkippedTo: min(50), Next: min(65)}},
		{"misfires caught up", def(ratchet.MisfireCatchUp, 3, ratchet.OverlapAllow), late, false,
			nodecore.FirePlan{Slots: slots(45, 50, 55, 60), Skipped: 9, SkippedFrom: min(0), SkippedTo: min(40), Next: min(65)}},
		{"catch-up beyond the backlog", def(ratchet.MisfireCatchUp, 50, ratchet.OverlapAllow), late, false,
			nodecore.FirePlan{Slots: slots(0, 5, 10, 15, 20, 25, 30, 35, 40, 45, 50, 55, 60), Next: min(65)}},
		{"overlap while busy", def(ratchet.MisfireSkip, 0, ratchet.OverlapSkip), t0.Add(time.Second), true,
			nodecore.FirePlan{Skipped: 1, SkippedFrom: min(0), SkippedTo: min(0), Next: min(5)}},
		{"overlap fires the latest only", def(ratchet.MisfireFireOnce, 0, ratchet.OverlapSkip), late, false,
			nodecore.FirePlan{Slots: slots(60), Skipped: 12, SkippedFrom: min(0), SkippedTo: min(55), Next: min(65)}},
	}
	for _, c := range cases {
		assert.Equal(t, c.want, nodecore.PlanFire(c.d, every5, t0, c.now, time.Minute, c.busy), c.name)
	}
	everySecond, err := cronexpr.Parse("@every 1s", "")
	require.NoError(t, err)
	p := nodecore.PlanFire(def(ratchet.MisfireSkip, 0, ratchet.OverlapAllow), everySecond, t0, t0.Add(30*24*time.Hour), time.Minute, false)
	assert.Equal(t, t0.Add(30*24*time.Hour+time.Second), p.Next, "a long outage is skipped in one pass")
	assert.Len(t, p.Slots, 61, "the last minute's slots are on time")
	assert.Positive(t, p.Skipped)
}

// schedulerHost builds the scheduler pass of one node over store.
func schedulerHost(t *testing.T, store *memory.Store, clock clockwork.Clock, node string) (nodecore.Recurring, ServiceHost, *ratchet.Client) {
	t.Helper()
	c, err := ratchet.NewClient(store, ratchet.ClientOptions{Clock: clock})
	require.NoError(t, err)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	s := nodecore.Recurring{Store: store, Jobs: store, Threshold: DefaultMisfireThreshold, NewID: c.NewJobID, Logger: log}
	return s, ServiceHost{NodeID: node, Store: store, Client: c, Clock: clock, Logger: log}, c
}

// A day of a */5 schedule on a fake clock across three nodes that crash
// and come back: 288 fires, each once, none missed.
func TestRecurringDayAcrossThreeNodes(t *testing.T) {
	ctx := context.Background()
	start := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	clock := clockwork.NewFakeClockAt(start.Add(-time.Second))
	store := memory.New()
	task := ratchet.NewVoidTask("report", func(context.Context, string) error { return nil })
	type node struct {
		s    nodecore.Recurring
		h    ServiceHost
		down int // minutes left down
	}
	var nodes []*node
	for i := range 3 {
		s, h, c := schedulerHost(t, store, clock, fmt.Sprintf("n%d", i+1))
		changed, err := c.PutSchedule(ctx, task.Recurring("report-5m", "*/5 * * * *", "daily"))
		require.NoError(t, err)
		assert.Equal(t, i == 0, changed, "registering the same definition again changes nothing")
		nodes = append(nodes, &node{s: s, h: h})
	}
	rng := rand.New(rand.NewPCG(7, 7))
	for minute := range 24 * 60 {
		clock.Advance(time.Minute)
		var alive []*node
		for _, n := range nodes {
			if n.down > 0 {
				n.down--
				continue
			}
			alive = append(alive, n)
		}
		for len(alive) > 1 && rng.IntN(10) == 0 { // a crash: down for up to 20 minutes; one node stays up
			i := rng.IntN(len(alive))
			alive[i].down = 1 + rng.IntN(20)
			alive = append(alive[:i], alive[i+1:]...)
		}
		var wg sync.WaitGroup
		for _, n := range alive {
			wg.Add(1)
			go func() { // the nodes' passes race
				defer wg.Done()
				assert.NoError(t, nodecore.RecurringPass(ctx, n.s, n.h.Clock.Now()), "minute %d", minute)
			}()
		}
		wg.Wait()
	}
	jobs, _, err := store.ListJobs(ctx, spi.ListParams{Limit: 1000})
	require.NoError(t, err)
	seen := map[time.Time]int{}
	for _, j := range jobs {
		seen[j.ScheduledAt]++
		assert.Equal(t, stored.SlotKey("report-5m", j.ScheduledAt), j.IdempotencyKey)
	}
	assert.Len(t, jobs, 288, "a day of */5: 288 fires")
	for i := range 288 {
		slot := start.Add(time.Duration(i) * 5 * time.Minute)
		assert.Equal(t, 1, seen[slot], "slot %s fired once", slot.Format(time.TimeOnly))
	}
	info, err := nodes[0].h.Client.GetSchedule(ctx, "report-5m")
	require.NoError(t, err)
	assert.Zero(t, info.Skipped, "none missed")
	assert.Equal(t, start.Add(24*time.Hour), info.NextFireAt)
}

// After everything was down, a schedule fires as its misfire policy says,
// once, even with several nodes passing at once.
func TestRecurringMisfireAfterRestart(t *testing.T) {
	ctx := context.Background()
	start := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	task := ratchet.NewVoidTask("sync", func(context.Context, int) error { return nil })
	for _, c := range []struct {
		policy  ratchet.ScheduleOption
		fires   int
		skipped int64
	}{
		// 00:00 .. 00:55 missed; 01:00 on time.
		{ratchet.OnMisfire(ratchet.MisfireSkip, 0), 1, 12},
		{ratchet.OnMisfire(ratchet.MisfireFireOnce, 0), 2, 11},
		{ratchet.OnMisfire(ratchet.MisfireCatchUp, 5), 6, 7},
	} {
		clock := clockwork.NewFakeClockAt(start.Add(-time.Second))
		store := memory.New()
		a, ha, client := schedulerHost(t, store, clock, "a")
		b, hb, _ := schedulerHost(t, store, clock, "b")
		_, err := client.PutSchedule(ctx, task.Recurring("sync", "*/5 * * * *", 1, c.policy))
		require.NoError(t, err)
		clock.Advance(time.Hour + 30*time.Second) // down for an hour: it is 01:00:29
		var wg sync.WaitGroup
		for _, n := range []struct {
			s nodecore.Recurring
			h ServiceHost
		}{{a, ha}, {b, hb}} {
			wg.Add(1)
			go func() { defer wg.Done(); assert.NoError(t, nodecore.RecurringPass(ctx, n.s, n.h.Clock.Now())) }()
		}
		wg.Wait()
		n, err := store.CountJobs(ctx, spi.ListParams{}, 100)
		require.NoError(t, err)
		assert.Equal(t, c.fires, n, "fires")
		info, err := client.GetSchedule(ctx, "sync")
		require.NoError(t, err)
		assert.Equal(t, c.skipped, info.Skipped, "skipped")
		assert.Equal(t, start.Add(65*time.Minute), info.NextFireAt)
		skips, err := client.ScheduleSkips(ctx, "sync", 10)
		require.NoError(t, err)
		if assert.Len(t, skips, 1, "the skipped slots are recorded, once") {
			assert.Equal(t, c.skipped, skips[0].Slots)
			assert.Equal(t, start, skips[0].From, "from the first missed slot")
			assert.Equal(t, start.Add(time.Duration(c.skipped-1)*5*time.Minute), skips[0].To, "to the last skipped one")
		}
	}
}

// Overlap SKIP: a slot does not fire while the previous fire's job has not
// finished.
func TestRecurringOverlapSkip(t *testing.T) {
	ctx := context.Background()
	start := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	clock := clockwork.NewFakeClockAt(start.Add(-time.Second))
	store := memory.New()
	s, h, client := schedulerHost(t, store, clock, "a")
	task := ratchet.NewVoidTask("slow", func(context.Context, int) error { return nil })
	_, err := client.PutSchedule(ctx, task.Recurring("slow", "@every 1m", 1, ratchet.OnOverlap(ratchet.OverlapSkip)))
	require.NoError(t, err)
	for range 3 {
		clock.Advance(time.Minute)
		require.NoError(t, nodecore.RecurringPass(ctx, s, h.Clock.Now()))
	}
	n, err := store.CountJobs(ctx, spi.ListParams{}, 100)
	require.NoError(t, err)
	assert.Equal(t, 1, n, "the first job is still PENDING: the next slots are skipped")
	info, err := client.GetSchedule(ctx, "slow")
	require.NoError(t, err)
	assert.Equal(t, int64(2), info.Skipped)
	skips, err := client.ScheduleSkips(ctx, "slow", 10)
	require.NoError(t, err)
	require.Len(t, skips, 2, "each overlapped slot is recorded")
	assert.Equal(t, start.Add(3*time.Minute-time.Second), skips[0].From, "the latest first (slots every minute from the schedule's creation, a second before start)")
	assert.Equal(t, start.Add(2*time.Minute-time.Second), skips[1].From)
}
