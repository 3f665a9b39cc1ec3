package chaos

import (
	"context"
	"errors"
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

// probeRun is what one kind of admission probe submitted: per key, the
// ids its submissions returned, in order.
type probeRun struct {
	mu  sync.Mutex
	ids map[int][]uuid.UUID
}

// probe is one kind of admission probe.
type probe struct {
	name  string
	plant string // the plant that strips its admission on the way to the store
	every time.Duration
	keys  int // each submission's key is drawn from 0..keys-1
	at    int // submissions at once
	seed  uint64
	opt   func(key int) ratchet.SubmitOption
	run   *probeRun
}

// probeClient returns the client of one kind of admission probe, whose
// store has the capability (has): over a store that takes the option off
// each job with strip when the run plants plant. Nil when the run submits
// no probes or the store lacks the capability.
func (h *harness) probeClient(has bool, plant string, strip func(*spi.Job)) (*ratchet.Client, error) {
	if h.sc.Workload.NoProbes || !has {
		return nil, nil
	}
	store := h.store.Store
	if h.sc.Plant == plant {
		store = stripped{store, strip}
	}
	return ratchet.NewClient(store, ratchet.ClientOptions{Logger: slog.New(slog.DiscardHandler)})
}

// everyTick runs submit every period until ctx (the fault phase) ends; an
// error of submit ends it, named as a probe of kind's, unless ctx ended.
func everyTick(ctx context.Context, period time.Duration, kind string, submit func() error) error {
	ticker := time.NewTicker(period)
	defer ticker.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-ticker.C:
		}
		if err := submit(); err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("chaos: a %s probe's submission: %w", kind, err)
		}
	}
}

// noteSubmitted records ids as sleep jobs the harness submitted.
func (h *harness) noteSubmitted(ids ...uuid.UUID) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, id := range ids {
		h.submitted[id] = SleepTask
	}
}

// add records ids, submitted under key k.
func (r *probeRun) add(k int, ids ...uuid.UUID) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.ids == nil {
		r.ids = map[int][]uuid.UUID{}
	}
	r.ids[k] = append(r.ids[k], ids...)
}

// submitProbes runs p until ctx (the fault phase) ends, on a store that
// keeps unique keys (unless Workload.NoProbes): every p.every, p.at
// submissions at once, each of a sleep job under the option of its key.
func (h *harness) submitProbes(ctx context.Context, p probe) error {
	client, err := h.probeClient(spi.CapabilitiesOf(h.store.Store).Unique != nil, p.plant, func(j *spi.Job) { j.Unique = nil })
	if client == nil || err != nil {
		return err
	}
	tasks := NewTasks(nil)
	rng := rand.New(rand.NewPCG(uint64(h.sc.Seed), p.seed))
	return everyTick(ctx, p.every, p.name, func() error {
		keys := make([]int, p.at)
		for i := range keys {
			keys[i] = rng.IntN(p.keys)
		}
		var wg sync.WaitGroup
		errs := make([]error, len(keys))
		for i, k := range keys {
			wg.Add(1)
			go func() {
				defer wg.Done()
				id, err := tasks.Sleep.Submit(ctx, client, SleepArgs{Millis: uniqueMillisFirst + k}, p.opt(k))
				if err != nil {
					errs[i] = err
					return
				}
				p.run.add(k, id)
				h.noteSubmitted(id)
			}()
		}
		wg.Wait()
		return errors.Join(errs...)
	})
}

// submitUnique runs the unique probes until ctx (the fault phase) ends.
func (h *harness) submitUnique(ctx context.Context) error {
	once := ratchet.WithUnique(ratchet.UniqueOpts{ByArgs: true})
	return h.submitProbes(ctx, probe{name: "unique", plant: PlantUnique, every: uniqueEvery, keys: uniqueKeys, at: uniqueSubmitters,
		seed: 0x756e_6971, opt: func(int) ratchet.SubmitOption { return once }, run: &h.uniques})
}

// checkUnique checks the unique probes against the jobs at the end.
func checkUnique(u *probeRun, jobs map[uuid.UUID]*ratchet.Job) []Violation {
	u.mu.Lock()
	defer u.mu.Unlock()
	var out []Violation
	for k := range uniqueKeys {
		ids := u.ids[k]
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

// stripped is the store of a probe's plant: it keeps the inner store's
// capabilities, and strip takes the admission option off each job on
// insert.
type stripped struct {
	spi.Store
	strip func(*spi.Job)
}

// Capabilities forwards the inner store's.
func (s stripped) Capabilities() spi.Capabilities { return spi.CapabilitiesOf(s.Store) }

// InsertJobs inserts jobs stripped.
func (s stripped) InsertJobs(ctx context.Context, jobs []*spi.Job, o spi.InsertOptions) ([]spi.InsertResult, error) {
	for _, j := range jobs {
		s.strip(j)
	}
	return s.Store.InsertJobs(ctx, jobs, o)
}

// The debounce probes: where the store keeps unique keys, the harness
// also submits, all through the fault phase, sleep jobs debounced with a
// leading window of debounceWindow over debounceKeys keys, two at once
// every debounceEvery.
const (
	// InvDebounce: of the jobs the debounce probes' submissions returned,
	// two of one key were created at least the window apart (a
	// submission joins the job of an open window, whatever its state),
	// and every submission returned a job of its key.
	InvDebounce = "debounce"
	// PlantDebounce strips the debounce from the debounce probes' jobs on
	// their way to the store: every submission writes a job of its own
	// (debounce).
	PlantDebounce = "debounce"

	debounceKeys   = 4
	debounceWindow = time.Second
	debounceEvery  = 250 * time.Millisecond
)

// submitDebounced runs the debounce probes until ctx (the fault phase)
// ends.
func (h *harness) submitDebounced(ctx context.Context) error {
	return h.submitProbes(ctx, probe{name: "debounce", plant: PlantDebounce, every: debounceEvery, keys: debounceKeys, at: 2,
		seed: 0x6465_626f, run: &h.debounces, opt: func(k int) ratchet.SubmitOption {
			return ratchet.WithDebounce(fmt.Sprint("chaos-probe-", k), debounceWindow, ratchet.DebounceLeading())
		}})
}

// checkDebounced checks the debounce probes against the jobs at the end.
func checkDebounced(d *probeRun, jobs map[uuid.UUID]*ratchet.Job) []Violation {
	d.mu.Lock()
	defer d.mu.Unlock()
	var out []Violation
	for k := range debounceKeys {
		ids := d.ids[k]
		var mine []*ratchet.Job
		for _, id := range ids {
			if j := jobs[id]; j != nil && !slices.Contains(mine, j) {
				mine = append(mine, j)
			}
		}
		slices.SortFunc(mine, func(a, b *ratchet.Job) int { return a.CreatedAt.Compare(b.CreatedAt) })
		for i := 1; i < len(mine); i++ {
			if gap := mine[i].CreatedAt.Sub(mine[i-1].CreatedAt); gap < debounceWindow {
				out = append(out, Violation{Invariant: InvDebounce, Jobs: []uuid.UUID{mine[i-1].ID, mine[i].ID},
					Detail: fmt.Sprintf("two jobs of debounce key %d were created %s apart, within the window of %s (%d submissions of the key)", k, gap, debounceWindow, len(ids))})
				break
			}
		}
	}
	return out
}
