package chaos

import (
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"slices"
	"sync"
	"time"

	"github.com/google/uuid"

	ratchet "github.com/ratchet-go/ratchet/sdk"
	"github.com/ratchet-go/ratchet/sdk/spi"
)

// The unique probes: where the store keeps unique keys
// (spi.UniqueStore), the harness submits, all through the fault phase,
// sleep jobs unique by their arguments (ratchet.WithUnique with ByArgs, in
// the default states) over uniqueKeys keys, from uniqueSubmitters
// goroutines at once, every uniqueEvery.
const (
	// InvUnique: of the jobs the unique probes' submissions returned, at
	// most one per key is, at the end of the quiet phase, in a state that
	// holds its key (ratchet.DefaultUniqueStates); every submission of a
	// key returned a job of that key; and a key's earlier jobs, each
	// replaced by a later one, ended FAILED or CANCELLED.
	InvUnique = "unique"
	// PlantUnique strips the uniqueness from the unique probes' jobs on
	// their way to the store, which keeps its capability: every
	// submission writes a job of its own (unique).
	PlantUnique = "unique"

	uniqueKeys        = 8
	uniqueSubmitters  = 3
	uniqueEvery       = 200 * time.Millisecond
	uniqueMillisFirst = 3 // the sleep of key k is uniqueMillisFirst+k ms
)

// uniqueRun is what the unique probes submitted: per key, the ids the
// submissions returned, in order.
type uniqueRun struct {
	mu  sync.Mutex
	ids [uniqueKeys][]uuid.UUID
	n   int
}

// submitUnique runs the unique probes until ctx (the fault phase) ends.
func (h *harness) submitUnique(ctx context.Context) error {
	if spi.CapabilitiesOf(h.store.Store).Unique == nil {
		return nil
	}
	store := h.store.Store
	if h.sc.Plant == PlantUnique {
		store = stripUnique{store}
	}
	client, err := ratchet.NewClient(store, ratchet.ClientOptions{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		return err
	}
	tasks := NewTasks(nil)
	once := ratchet.WithUnique(ratchet.UniqueOpts{ByArgs: true})
	rng := rand.New(rand.NewPCG(uint64(h.sc.Seed), 0x756e_6971))
	ticker := time.NewTicker(uniqueEvery)
	defer ticker.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-ticker.C:
		}
		var keys [uniqueSubmitters]int
		for i := range keys {
			keys[i] = rng.IntN(uniqueKeys)
		}
		var wg sync.WaitGroup
		errs := make([]error, uniqueSubmitters)
		for i, k := range keys {
			wg.Add(1)
			go func() {
				defer wg.Done()
				id, err := tasks.Sleep.Submit(ctx, client, SleepArgs{Millis: uniqueMillisFirst + k}, once)
				if err != nil {
					errs[i] = err
					return
				}
				h.uniques.mu.Lock()
				h.uniques.ids[k] = append(h.uniques.ids[k], id)
				h.uniques.n++
				h.uniques.mu.Unlock()
				h.mu.Lock()
				h.submitted[id] = SleepTask
				h.mu.Unlock()
			}()
		}
		wg.Wait()
		for _, err := range errs {
			if err != nil && ctx.Err() == nil {
				return fmt.Errorf("chaos: a unique probe's submission: %w", err)
			}
		}
	}
}

// checkUnique checks the unique probes against the jobs at the end.
func checkUnique(u *uniqueRun, jobs map[uuid.UUID]*ratchet.Job) []Violation {
	u.mu.Lock()
	defer u.mu.Unlock()
	var out []Violation
	for k, ids := range u.ids {
		var order []uuid.UUID // the key's jobs, in the order submissions first returned them
		for _, id := range ids {
			if !slices.Contains(order, id) {
				order = append(order, id)
			}
		}
		var holding, early []uuid.UUID
		for i, id := range order {
			j := jobs[id]
			switch {
			case j == nil:
				continue // no-job-lost reports it
			case j.TaskName != SleepTask:
				out = append(out, Violation{Invariant: InvUnique, Detail: fmt.Sprintf("a unique probe of key %d returned job %s of task %s", k, id, j.TaskName), Jobs: []uuid.UUID{id}})
			case slices.Contains(ratchet.DefaultUniqueStates, j.Status):
				holding = append(holding, id)
				if i < len(order)-1 {
					early = append(early, id)
				}
			}
		}
		if len(holding) > 1 {
			out = append(out, Violation{Invariant: InvUnique, Jobs: holding,
				Detail: fmt.Sprintf("%d jobs of unique key %d hold it at once (%d submissions of the key)", len(holding), k, len(ids))})
		} else if len(early) > 0 {
			out = append(out, Violation{Invariant: InvUnique, Jobs: early,
				Detail: fmt.Sprintf("job %s of unique key %d was replaced by a later one while it held the key", early[0], k)})
		}
	}
	return out
}

// stripUnique is the store of PlantUnique: it keeps its capabilities,
// and drops the jobs' uniqueness on insert.
type stripUnique struct{ spi.Store }

// Capabilities forwards the inner store's.
func (s stripUnique) Capabilities() spi.Capabilities { return spi.CapabilitiesOf(s.Store) }

// InsertJobs inserts jobs without their uniqueness.
func (s stripUnique) InsertJobs(ctx context.Context, jobs []*spi.Job, o spi.InsertOptions) ([]spi.InsertResult, error) {
	for _, j := range jobs {
		j.Unique = nil
	}
	return s.Store.InsertJobs(ctx, jobs, o)
}
