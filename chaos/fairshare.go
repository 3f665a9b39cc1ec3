package chaos

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/google/uuid"

	ratchet "github.com/ratchet-go/ratchet/sdk"
	"github.com/ratchet-go/ratchet/sdk/spi"
)

// The fair-share probes: where the store's claims pass fair turns
// (spi.FairShareStore), the harness submits, all through the fault phase,
// every fairEvery, fairBurst sleep jobs of fairMillis in one SubmitMany
// with one of fairKeys fairness keys. Each job of a burst waits for the
// claim of the one before it, and joins the line due at that claim's
// time; without the key, a burst's jobs are due at once.
const (
	// InvFairShare: a fair-share probe's job was due (at the end) before
	// the job before it in its burst was claimed, for one claimed once:
	// it did not wait for its key's turn.
	InvFairShare = "fair-share"
	// PlantFairShare strips the fairness key from the fair-share probes'
	// jobs on their way to the store, which keeps its capability: a
	// burst's jobs are due at once (fair-share).
	PlantFairShare = "fair-share"

	fairKeys   = 3
	fairBurst  = 3
	fairEvery  = time.Second
	fairMillis = 25
)

// submitFair runs the fair-share probes until ctx (the fault phase)
// ends. Each burst is recorded under its own number.
func (h *harness) submitFair(ctx context.Context) error {
	fs := spi.CapabilitiesOf(h.store.Store).FairShare
	client, err := h.probeClient(fs != nil && fs.FairTurns(), PlantFairShare, func(j *spi.Job) { j.Sequence = nil })
	if client == nil || err != nil {
		return err
	}
	tasks := NewTasks(nil)
	rng := rand.New(rand.NewPCG(uint64(h.sc.Seed), 0x6661_6972))
	args := make([]SleepArgs, fairBurst)
	for i := range args {
		args[i] = SleepArgs{Millis: fairMillis}
	}
	burst := 0
	return everyTick(ctx, fairEvery, "fair-share", func() error {
		ids, err := tasks.Sleep.SubmitMany(ctx, client, args, ratchet.WithFairnessKey(fmt.Sprint("chaos-probe-", rng.IntN(fairKeys))))
		if err == nil {
			h.fairs.add(burst, ids...)
			h.noteSubmitted(ids...)
			burst++
		}
		return err
	})
}

// checkFair checks the fair-share probes' jobs at the end: in each burst,
// a job whose predecessor was claimed once (one run in the ledger, no
// crash) is due no earlier than that claim (both times come from the one
// claim's clock).
func checkFair(q *probeRun, jobs map[uuid.UUID]*ratchet.Job, runsOf map[uuid.UUID][]Execution) []Violation {
	q.mu.Lock()
	defer q.mu.Unlock()
	var out []Violation
	for n, ids := range q.ids {
		for i := 1; i < len(ids); i++ {
			a, b := jobs[ids[i-1]], jobs[ids[i]]
			switch {
			case a == nil || b == nil: // no-job-lost reports it
			case a.ClaimedAt.IsZero() || a.CrashCount > 0 || len(runsOf[a.ID]) != 1:
			case b.ScheduledAt.Before(a.ClaimedAt):
				out = append(out, Violation{Invariant: InvFairShare, Jobs: []uuid.UUID{a.ID, b.ID},
					Detail: fmt.Sprintf("%s was due at %s, before %s, the job before it in fair-share burst %d, was claimed at %s: it did not wait for its key's turn",
						b.ID, stamp(b.ScheduledAt), a.ID, n, stamp(a.ClaimedAt))})
				i = len(ids)
			}
		}
	}
	return out
}
