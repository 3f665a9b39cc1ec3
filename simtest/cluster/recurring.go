package cluster

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"time"

	"github.com/ratchet-go/ratchet/internal/nodecore"
	"github.com/ratchet-go/ratchet/simtest/internal/simtime"

	ratchet "github.com/ratchet-go/ratchet/sdk"
	"github.com/ratchet-go/ratchet/sdk/cronexpr"
	"github.com/ratchet-go/ratchet/sdk/spi"
)

// The recurring workload. Unless Scenario.NoRecurring, one seed in two
// registers a schedule (an @every or a 6-field cron expression, a misfire
// and an overlap policy, the task "work"); every node runs the engine's own
// RecurringPass each second of simulated time while it is up. The model
// learns every job a fire writes (so claims, completions and recoveries
// of those jobs are checked like any other), and checks that no slot ever
// gets a second job; at the heal phase the schedule is paused, and the
// final check accounts for every slot from the first to the next one:
// fired exactly once, or counted skipped by its policy. None is missed.

// recurringThreshold is the simulated nodes' misfire threshold: short, so
// that outages and clock jumps make misfires.
const recurringThreshold = 5 * time.Second

const invRecurring = "recurring" // every slot fires once, or is counted skipped; none missed

type recurringModel struct {
	id      string
	expr    string
	misfire ratchet.MisfirePolicy
	overlap ratchet.OverlapPolicy
	sched   *cronexpr.Schedule
	first   time.Time         // the first slot
	fired   map[time.Time]int // jobs per slot
	skipped int64
	client  *ratchet.Client
	err     error // a store error inside a pass
}

var recurringTask = ratchet.NewVoidTask("work", func(context.Context, int) error { return nil })

// setupRecurring lets the seed register a schedule.
func (w *world) setupRecurring() error {
	if w.sc.NoRecurring || spi.CapabilitiesOf(w.store).Schedules == nil || w.rng.IntN(2) == 0 {
		return nil
	}
	r := &recurringModel{id: "sched-1", fired: map[time.Time]int{}}
	switch w.rng.IntN(3) {
	case 0:
		r.expr = fmt.Sprintf("@every %ds", 2+w.rng.IntN(9))
	case 1:
		r.expr = "*/5 * * * * ?"
	default:
		r.expr = "0/3 * * ? * *"
	}
	opts := []ratchet.ScheduleOption{}
	switch w.rng.IntN(3) {
	case 0:
		r.misfire = ratchet.MisfireSkip
	case 1:
		r.misfire = ratchet.MisfireFireOnce
	default:
		r.misfire = ratchet.MisfireCatchUp
	}
	opts = append(opts, ratchet.OnMisfire(r.misfire, 3))
	r.overlap = ratchet.OverlapAllow
	if w.rng.IntN(4) == 0 {
		r.overlap = ratchet.OverlapSkip
	}
	opts = append(opts, ratchet.OnOverlap(r.overlap))
	sched, err := cronexpr.Parse(r.expr, "")
	if err != nil {
		return err
	}
	r.sched = sched
	c, err := ratchet.NewClient(w.store, ratchet.ClientOptions{Clock: w.clock})
	if err != nil {
		return err
	}
	r.client = c
	if _, err := c.PutSchedule(w.ctx, recurringTask.Recurring(r.id, r.expr, 1, opts...)); err != nil {
		return w.storeErr("PutSchedule", err)
	}
	info, err := c.GetSchedule(w.ctx, r.id)
	if err != nil {
		return w.storeErr("GetSchedule", err)
	}
	r.first = info.NextFireAt
	w.rec = r
	w.report.Recurring = fmt.Sprintf("%s misfire=%s overlap=%s", r.expr, r.misfire, r.overlap)
	w.tracef(nil, nil, "client registers schedule %s %q (misfire %s, overlap %s): first slot %s",
		r.id, r.expr, r.misfire, r.overlap, simtime.Offset(r.first.Sub(w.start)))
	return nil
}

// recurringPass is one pass of a node's recurring scheduler.
func (w *world) recurringPass(n *node) error {
	if w.rec == nil || n.state != nodeUp || !n.claiming {
		return nil // the stop's first step ended the services
	}
	d := nodecore.Recurring{Store: recCapture{ScheduleStore: spi.CapabilitiesOf(w.store).Schedules, w: w, n: n}, Jobs: w.store,
		Threshold: recurringThreshold, NewID: w.newID, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
	if err := nodecore.RecurringPass(w.ctx, d, w.now()); err != nil {
		return w.storeErr("DueSchedules", err)
	}
	if err := w.rec.err; err != nil {
		return w.storeErr("FireSchedule", err)
	}
	w.schedule(time.Second, w.nodeEvent(n, evRecurring))
	return nil
}

// recCapture is the store as a node's scheduler sees it: each fire that
// applies is applied to the model too.
type recCapture struct {
	spi.ScheduleStore
	w *world
	n *node
}

func (c recCapture) FireSchedule(ctx context.Context, f spi.ScheduleFire) (bool, []spi.InsertResult, error) {
	ok, res, err := c.ScheduleStore.FireSchedule(ctx, f)
	switch {
	case err != nil:
		c.w.rec.err = err
	case ok:
		c.w.fired(c.n, f, res)
	default:
		c.w.tracef(nil, []*node{c.n}, "%s fire of schedule %s lost the race: the schedule moved on", c.n.id, f.ID)
	}
	return ok, res, err
}

// fired applies one fire to the model and checks it.
func (w *world) fired(n *node, f spi.ScheduleFire, res []spi.InsertResult) {
	r := w.rec
	w.check(invRecurring)
	if len(res) != len(f.Jobs) {
		w.fail(invRecurring, nil, []*node{n}, "FireSchedule returned %d results for %d jobs", len(res), len(f.Jobs))
		return
	}
	r.skipped += f.Skipped
	var added []*sjob
	var parts []string
	for i, j := range f.Jobs {
		slot := j.ScheduledAt
		if res[i].Duplicate {
			if w.keys[j.IdempotencyKey] == nil {
				w.fail(invRecurring, nil, []*node{n}, "the fire of slot %s was a duplicate of a job the model never saw", simtime.Offset(slot.Sub(w.start)))
			}
			parts = append(parts, "dup "+simtime.Offset(slot.Sub(w.start)))
			continue
		}
		if r.fired[slot]++; r.fired[slot] > 1 {
			w.fail(invRecurring, []*sjob{w.keys[j.IdempotencyKey]}, []*node{n}, "slot %s of schedule %s fired a second job", simtime.Offset(slot.Sub(w.start)), r.id)
			return
		}
		s := &sjob{idx: len(w.jobs), id: j.ID, task: j.TaskName, prio: j.Priority, due: slot, maxRetries: j.MaxRetries,
			backoff: j.Backoff, param: j.BackoffParam, idemKey: j.IdempotencyKey, pendPos: -1, runPos: -1}
		s.label = fmt.Sprintf("j%d", s.idx+1)
		w.jobs = append(w.jobs, s)
		w.byID[s.id] = s
		w.keys[s.idemKey] = s
		w.nonTerminal++
		w.setStatus(s, spi.StatusPending)
		w.touch(s)
		added = append(added, s)
		parts = append(parts, s.label+"@"+simtime.Offset(slot.Sub(w.start)))
	}
	w.report.RecurringFires += len(added)
	w.tracef(added, []*node{n}, "%s fires schedule %s: [%s], skipped %d, next %s", n.id, f.ID, strings.Join(parts, " "), f.Skipped,
		simtime.Offset(f.NextFireAt.Sub(w.start)))
}

// pauseRecurring stops the schedule for the heal phase.
func (w *world) pauseRecurring() error {
	if w.rec == nil {
		return nil
	}
	if err := w.rec.client.PauseSchedule(w.ctx, w.rec.id); err != nil {
		return w.storeErr("PauseSchedule", err)
	}
	w.tracef(nil, nil, "client pauses schedule %s", w.rec.id)
	return nil
}

// checkRecurring accounts for every slot from the first to the next.
func (w *world) checkRecurring() {
	r := w.rec
	if r == nil {
		return
	}
	w.check(invRecurring)
	info, err := r.client.GetSchedule(w.ctx, r.id)
	if err != nil {
		w.fail(invRecurring, nil, nil, "GetSchedule: %v", err)
		return
	}
	if info.Skipped != r.skipped {
		w.fail(invRecurring, nil, nil, "schedule %s counts %d skipped slots; its fires skipped %d", r.id, info.Skipped, r.skipped)
		return
	}
	var missed []time.Time
	slots := map[time.Time]bool{}
	total := 0
	for t := r.first; t.Before(info.NextFireAt); t = r.sched.Next(t) {
		total++
		slots[t] = true
		if r.fired[t] == 0 {
			missed = append(missed, t)
		}
	}
	fired := total - len(missed)
	if int64(len(missed)) != info.Skipped {
		shown := make([]string, 0, 5)
		for _, t := range missed[:min(5, len(missed))] {
			shown = append(shown, simtime.Offset(t.Sub(w.start)))
		}
		w.fail(invRecurring, nil, nil, "schedule %s (%s, misfire %s, overlap %s): %d slots from %s to %s, %d fired, %d counted skipped, %d without a job (first: %s)",
			r.id, r.expr, r.misfire, r.overlap, total, simtime.Offset(r.first.Sub(w.start)), simtime.Offset(info.NextFireAt.Sub(w.start)),
			fired, info.Skipped, len(missed), strings.Join(shown, " "))
		return
	}
	for slot := range r.fired {
		if !slots[slot] {
			w.fail(invRecurring, nil, nil, "schedule %s fired a job for %s, which is not one of its slots", r.id, simtime.Offset(slot.Sub(w.start)))
			return
		}
	}
}
