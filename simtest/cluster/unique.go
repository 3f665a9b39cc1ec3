package cluster

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/google/uuid"

	ratchet "github.com/ratchet-go/ratchet/sdk"
	"github.com/ratchet-go/ratchet/sdk/spi"
)

// Unique submissions (ratchet.WithUnique). Where the store keeps unique
// keys, about one arrival in four is a unique or debounced submission of task "work",
// made through the SDK's own client (its options, checks and key
// derivation) over the world's store, with one of three arguments and one
// of the presets below. The draws come from a stream of their own, so that
// the rest of the workload draws what it drew before.
//
// The invariant, unique: the model keeps each key's holder, with keys as
// the options define them (the task; the arguments with ByArgs; the
// period's index with ByPeriod), not as the SDK derives them. A
// submission whose key's holder is, in the model, in one of its states
// returns the holder's id and writes nothing; any other is written, as a
// job of its own, and holds the key from then on.
const invUnique = "unique"

// uniquePresets are the options of the unique workload. Presets 0 and 2
// share their keys (the states are not part of a key): a job submitted
// under one is a duplicate, or not, of a job submitted under the other.
var uniquePresets = []ratchet.UniqueOpts{
	{ByArgs: true},
	{ByArgs: true, ByPeriod: 3 * time.Second},
	{ByArgs: true, ByState: []spi.Status{spi.StatusPending}},
	{ByPeriod: 5 * time.Second, ByState: []spi.Status{spi.StatusPending, spi.StatusRunning}},
}

// ukey is a unique key as the model sees it.
type ukey struct {
	args   int // -1 without ByArgs
	period time.Duration
	index  int64 // the period's index since the Unix epoch; 0 without ByPeriod
}

// uniqueModel is the unique workload's state.
type uniqueModel struct {
	rng     *rand.Rand
	client  *ratchet.Client
	holders map[ukey]*sjob
	next    uuid.UUID // the id the client's next insert gives its job
	// debounced holds each debounce key's holder and the end of its
	// window (debounce.go).
	debounced map[int]dwindow
}

// uniqueOn reports whether the unique workload runs: on a store that keeps
// unique keys, unless the scenario turns it off.
func (w *world) uniqueOn() bool {
	return !w.sc.NoUnique && spi.CapabilitiesOf(w.store).Unique != nil
}

// uniqueTick draws whether this arrival is a unique submission.
func (w *world) uniqueTick() bool {
	if !w.uniqueOn() {
		return false
	}
	if w.uq == nil {
		w.uq = &uniqueModel{rng: rand.New(rand.NewPCG(uint64(w.seed), 0x756e_6971_7565_6b65)), holders: map[ukey]*sjob{}, debounced: map[int]dwindow{}}
	}
	return w.uq.rng.IntN(4) == 0
}

// uniqueClient returns the workload's client, made on first use.
func (w *world) uniqueClient() (*ratchet.Client, error) {
	u := w.uq
	if u.client != nil {
		return u.client, nil
	}
	c, err := ratchet.NewClient(w.store, ratchet.ClientOptions{
		Clock:  simClock{w},
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		// The simulation's ids are its own (deterministic, in its clock's
		// order): the client's job takes the next one.
		InsertMiddleware: []ratchet.InsertMiddleware{func(ctx context.Context, jobs []*ratchet.Job, next ratchet.InsertFunc) ([]spi.InsertResult, error) {
			for _, j := range jobs {
				j.ID = w.newID()
				u.next = j.ID
			}
			return next(ctx, jobs)
		}},
	})
	if err != nil {
		return nil, fmt.Errorf("simtest: unique workload's client: %w", err)
	}
	u.client = c
	return c, nil
}

// addSubmitted adds to the model the job the client just wrote, due at
// due, and returns it.
func (w *world) addSubmitted(id uuid.UUID, due time.Time) *sjob {
	j := &sjob{
		idx: len(w.jobs), id: id, task: "work", prio: ratchet.PriorityNormal, due: due,
		maxRetries: ratchet.DefaultMaxRetries, backoff: ratchet.DefaultBackoff, param: ratchet.DefaultBackoffBase,
		pendPos: -1, runPos: -1,
	}
	j.label = fmt.Sprintf("j%d", j.idx+1)
	w.jobs = append(w.jobs, j)
	w.byID[id] = j
	w.nonTerminal++
	w.setStatus(j, spi.StatusPending)
	w.touch(j)
	return j
}

// submitUnique makes one unique submission through the SDK's client and
// checks what it returns against the model.
func (w *world) submitUnique() error {
	u := w.uq
	client, err := w.uniqueClient()
	if err != nil {
		return err
	}
	if u.rng.IntN(2) == 0 {
		return w.submitDebounced(client)
	}
	preset := u.rng.IntN(len(uniquePresets))
	o := uniquePresets[preset]
	args := u.rng.IntN(3)
	now := w.now().Truncate(time.Microsecond) // the client's clock, as it stamps a job
	k := ukey{args: -1, period: o.ByPeriod}
	if o.ByArgs {
		k.args = args
	}
	if o.ByPeriod > 0 {
		k.index = now.UnixNano() / int64(o.ByPeriod)
	}
	states := o.ByState
	if len(states) == 0 {
		states = ratchet.DefaultUniqueStates
	}
	holder := u.holders[k]
	dup := holder != nil && slices.Contains(states, holder.status)
	id, err := client.SubmitRaw(w.ctx, "work", fmt.Appendf(nil, `{"u":%d}`, args), ratchet.WithUnique(o))
	if err != nil {
		return w.storeErr("InsertJobs (a unique submission)", err)
	}
	w.check(invUnique)
	desc := fmt.Sprintf("preset %d args %d", preset, args)
	if dup {
		if id != holder.id {
			w.fail(invUnique, []*sjob{holder}, nil, "a unique submission (%s) whose key %s holds (%s) returned id %s, not the holder's", desc, holder.label, holder.status, id)
			return nil
		}
		w.tracef([]*sjob{holder}, nil, "client submit unique %s: duplicate of %s (%s)", desc, holder.label, holder.status)
		return nil
	}
	if id != u.next || w.byID[id] != nil {
		var was []*sjob
		what := "held by no job"
		if holder != nil {
			was, what = []*sjob{holder}, fmt.Sprintf("held by %s, %s, not in %v", holder.label, holder.status, states)
		}
		if old := w.byID[id]; old != nil {
			was = append(was, old)
		}
		w.fail(invUnique, was, nil, "a unique submission (%s) whose key is %s returned id %s: no new job was written", desc, what, id)
		return nil
	}
	j := w.addSubmitted(id, now)
	u.holders[k] = j
	w.tracef([]*sjob{j}, nil, "client submit unique %s: %s(work) holds the key", desc, j.label)
	return nil
}
