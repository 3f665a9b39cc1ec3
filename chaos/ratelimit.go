package chaos

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/google/uuid"

	ratchet "github.com/ratchet-go/ratchet/sdk"
	"github.com/ratchet-go/ratchet/sdk/spi"
)

// The rate-limit probes: where the store keeps rate limits
// (spi.RateLimitStore), the harness submits, all through the fault phase,
// every rateProbeEvery, rateProbeBurst sleep jobs under one rate limit of
// rateProbeN starts per rateProbePeriod, having read the database's time
// just before.
const (
	// InvRateLimit: no more than the limit of the probes' starts fell in
	// one window of the period, by the database's clock, as far as the
	// ledger proves it. A run's claim came after its job's submission
	// began (the database's time read before it) and before the run's
	// start in the ledger; runs whose claims must all lie within one
	// period (the latest start less the earliest such time is under the
	// period), more of them than the limit, are a violation whatever the
	// claims' exact times. Nodes' clocks play no part: a skewed node
	// cannot hide one.
	InvRateLimit = "rate-limit"
	// PlantRateLimit strips the rate limit from the rate-limit probes'
	// jobs on their way to the store, which keeps its capability: a
	// burst starts at once (rate-limit).
	PlantRateLimit = "rate-limit"

	rateProbeKey    = "chaos-probe"
	rateProbeN      = 2
	rateProbePeriod = time.Second
	rateProbeBurst  = 3
	rateProbeEvery  = 2 * time.Second
)

// rateBurst is one submission of the rate-limit probes: the database's
// time read before it, and its jobs.
type rateBurst struct {
	at  time.Time
	ids []uuid.UUID
}

// rateRun is what the rate-limit probes submitted.
type rateRun struct {
	mu     sync.Mutex
	bursts []rateBurst
}

// submitRated runs the rate-limit probes until ctx (the fault phase)
// ends.
func (h *harness) submitRated(ctx context.Context) error {
	client, err := h.probeClient(spi.CapabilitiesOf(h.store.Store).Rates != nil, PlantRateLimit, func(j *spi.Job) {
		if spi.IsRateResource(j.Resource) {
			j.Resource, j.ResourceLimit = "", 0
		}
	})
	if client == nil || err != nil {
		return err
	}
	tasks := NewTasks(nil)
	args := make([]SleepArgs, rateProbeBurst)
	for i := range args {
		args[i] = SleepArgs{Millis: 5}
	}
	limit := ratchet.WithRateLimit(rateProbeKey, rateProbeN, rateProbePeriod)
	return everyTick(ctx, rateProbeEvery, "rate-limit", func() error {
		at, err := h.ledger.Now(ctx)
		if err != nil {
			return err
		}
		ids, err := tasks.Sleep.SubmitMany(ctx, client, args, limit)
		if err != nil {
			return err
		}
		h.rates.mu.Lock()
		h.rates.bursts = append(h.rates.bursts, rateBurst{at, ids})
		h.rates.mu.Unlock()
		h.noteSubmitted(ids...)
		return nil
	})
}

// rateStart is one run of a rate-limit probe's job: its claim came after
// after (its submission began) and before the run's start.
type rateStart struct {
	after time.Time
	run   Execution
}

// checkRated checks the rate-limit probes' runs in the ledger (see
// InvRateLimit): for each run, the runs that started no later whose
// claims came after the period before its start began; more than the
// limit of them, itself included, is a violation.
func checkRated(r *rateRun, runsOf map[uuid.UUID][]Execution) []Violation {
	r.mu.Lock()
	defer r.mu.Unlock()
	var starts []rateStart
	for _, b := range r.bursts {
		for _, id := range b.ids {
			for _, x := range runsOf[id] {
				starts = append(starts, rateStart{b.at, x})
			}
		}
	}
	slices.SortFunc(starts, func(a, b rateStart) int { return a.run.StartedAt.Compare(b.run.StartedAt) })
	for i, last := range starts {
		from := last.run.StartedAt.Add(-rateProbePeriod) // every claim of the group after it: within one period
		if !last.after.After(from) {
			continue
		}
		in := []rateStart{last}
		for _, s := range starts[:i] {
			if s.after.After(from) {
				in = append(in, s)
			}
		}
		if len(in) <= rateProbeN {
			continue
		}
		ids := make([]uuid.UUID, len(in))
		earliest := last.after
		for k, s := range in {
			ids[k] = s.run.JobID
			if s.after.Before(earliest) {
				earliest = s.after
			}
		}
		return []Violation{{Invariant: InvRateLimit, Jobs: sortIDs(ids),
			Detail: fmt.Sprintf("%d runs of rate limit %q (%d per %s) were claimed within one period: each after %s (its submission began) and before %s (the last one's start, on %s)",
				len(in), rateProbeKey, rateProbeN, rateProbePeriod, stamp(earliest), stamp(last.run.StartedAt), last.run.Node)}}
	}
	return nil
}
