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

// The sequence probes: where the store keeps sequences
// (spi.SequenceStore), the harness submits, all through the fault phase,
// every sequenceEvery, sequenceBurst sleep jobs of sequenceMillis in one
// SubmitMany into one of sequenceKeys sequences (continuing on failure,
// so that a job the crash budget fails does not hold its sequence past
// the quiet phase). Without the sequence, a burst's jobs would run at
// once on the workers' free slots.
const (
	// InvSequence: no execution of a sequence probe's job started (by
	// the database's clock, in the ledger) before the execution that
	// finalized the job submitted to its key before it ended.
	InvSequence = "sequence"
	// PlantSequence strips the sequence from the sequence probes' jobs on
	// their way to the store, which keeps its capability: a burst's jobs
	// run at once (sequence).
	PlantSequence = "sequence"

	sequenceKeys   = 4
	sequenceBurst  = 4
	sequenceEvery  = time.Second
	sequenceMillis = 25
)

// submitSequences runs the sequence probes until ctx (the fault phase)
// ends.
func (h *harness) submitSequences(ctx context.Context) error {
	client, err := h.probeClient(spi.CapabilitiesOf(h.store.Store).Sequences != nil, PlantSequence, func(j *spi.Job) { j.Sequence = nil })
	if client == nil || err != nil {
		return err
	}
	tasks := NewTasks(nil)
	rng := rand.New(rand.NewPCG(uint64(h.sc.Seed), 0x7365_7175))
	args := make([]SleepArgs, sequenceBurst)
	for i := range args {
		args[i] = SleepArgs{Millis: sequenceMillis}
	}
	return everyTick(ctx, sequenceEvery, "sequence", func() error {
		k := rng.IntN(sequenceKeys)
		ids, err := tasks.Sleep.SubmitMany(ctx, client, args,
			ratchet.WithSequenceKey(fmt.Sprint("chaos-probe-", k), ratchet.SequenceContinueOnFailure()))
		if err == nil {
			h.sequences.add(k, ids...)
			h.noteSubmitted(ids...)
		}
		return err
	})
}

// checkSequences checks the sequence probes' executions in the ledger:
// each job's runs start after the run that finalized the job before it in
// its sequence ended.
func checkSequences(q *probeRun, jobs map[uuid.UUID]*ratchet.Job, runsOf map[uuid.UUID][]Execution) []Violation {
	q.mu.Lock()
	defer q.mu.Unlock()
	var out []Violation
	for k := range sequenceKeys {
		ids := q.ids[k]
		for i := 1; i < len(ids); i++ {
			a, b := ids[i-1], ids[i]
			if jobs[a] == nil || jobs[b] == nil {
				continue // no-job-lost reports it
			}
			end := time.Time{}
			if f := final(jobs[a], runsOf[a]); f != nil {
				end = f.EndedAt
			}
			if v := passed(k, a, b, end, runsOf); v != nil {
				out = append(out, *v)
				break
			}
		}
	}
	return out
}

// passed reports a run of b, the job after a in sequence k, that started
// before end (the end of a's finalizing run; zero for none); nil when
// none did. Runs of a that did not finalize it say nothing: a run under a
// claim that a rescue ended may write its start to the ledger late (its
// node was cut off), after the rescued job finished and b started.
func passed(k int, a, b uuid.UUID, end time.Time, runsOf map[uuid.UUID][]Execution) *Violation {
	for _, rb := range runsOf[b] {
		if rb.StartedAt.Before(end) {
			return &Violation{Invariant: InvSequence, Jobs: []uuid.UUID{a, b},
				Detail: fmt.Sprintf("%s started at %s on %s, before %s, the job before it in sequence %d, finished (its finalizing run ended at %s)",
					b, stamp(rb.StartedAt), rb.Node, a, k, stamp(end))}
		}
	}
	return nil
}
