package mutant

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"time"

	"github.com/google/uuid"

	"github.com/ratchet-go/ratchet/sdk/spi"
)

// BrokenFence skips the claim-sequence check of owner writes: before
// delegating, CompleteJobs reads each job's current claim sequence and
// rewrites the completion's ClaimRef to it, so a stale owner's write lands
// on whoever holds the job now (docs/architecture.md, invariant 2).
type BrokenFence struct{ spi.Store }

// CompleteJobs implements spi.Store, wrongly.
func (b BrokenFence) CompleteJobs(ctx context.Context, cs []spi.Completion) ([]bool, error) {
	cs = slices.Clone(cs)
	for i := range cs {
		if j, err := b.GetJob(ctx, cs[i].JobID); err == nil {
			cs[i].ClaimSeq = j.ClaimSeq
		}
	}
	return b.Store.CompleteJobs(ctx, cs)
}

// NoAging ignores the boost interval of claims: waiting jobs never gain
// effective priority (invariant 5).
type NoAging struct{ spi.Store }

// ClaimJobs implements spi.Store, wrongly.
func (n NoAging) ClaimJobs(ctx context.Context, p spi.ClaimParams) ([]*spi.Job, error) {
	p.BoostInterval = 0
	return n.Store.ClaimJobs(ctx, p)
}

// LooseBudget grants one crash redelivery more than asked, so a poison job
// runs once too often (invariant 3).
type LooseBudget struct{ spi.Store }

// RecoverOrphans implements spi.Store, wrongly.
func (l LooseBudget) RecoverOrphans(ctx context.Context, p spi.RecoverParams) ([]spi.RecoveredJob, error) {
	p.MaxCrashRedeliveries++
	return l.Store.RecoverOrphans(ctx, p)
}

// NoPermits drops the resource of every job it inserts, so no limit is
// ever enforced.
type NoPermits struct{ spi.Store }

// InsertJobs implements spi.Store, wrongly.
func (n NoPermits) InsertJobs(ctx context.Context, jobs []*spi.Job, o spi.InsertOptions) ([]spi.InsertResult, error) {
	cp := make([]*spi.Job, len(jobs))
	for i, j := range jobs {
		c := j.Clone()
		c.Resource, c.ResourceLimit = "", 0
		cp[i] = c
	}
	return n.Store.InsertJobs(ctx, cp, o)
}

// IgnoresTags claims without the node's tag filter.
type IgnoresTags struct{ spi.Store }

// ClaimJobs implements spi.Store, wrongly.
func (n IgnoresTags) ClaimJobs(ctx context.Context, p spi.ClaimParams) ([]*spi.Job, error) {
	p.Tags = spi.TagFilter{}
	return n.Store.ClaimJobs(ctx, p)
}

// EarlyRelease forgets the last dependency of every workflow job that has
// two or more (and the parent's count of dependents): such a job is
// released when its other parents have finished, before the one it
// forgot (docs/architecture.md, "Workflows").
type EarlyRelease struct{ spi.Store }

// InsertJobs implements spi.Store, wrongly.
func (m EarlyRelease) InsertJobs(ctx context.Context, jobs []*spi.Job, o spi.InsertOptions) ([]spi.InsertResult, error) {
	cp, byID := cloneBatch(jobs)
	for _, j := range cp {
		if n := len(j.Dependencies); n >= 2 {
			byID[j.Dependencies[n-1].ParentID].Dependents--
			j.Dependencies = j.Dependencies[:n-1]
		}
	}
	return m.Store.InsertJobs(ctx, cp, o)
}

// Capabilities forwards the inner store's, so that the workflows it keeps
// stay reachable.
func (m EarlyRelease) Capabilities() spi.Capabilities { return spi.CapabilitiesOf(m.Store) }

// LateRelease adds to every workflow job with a dependency one more, on
// the first job of its batch that it does not wait for already: the job
// stays BLOCKED after its own parents have finished, until that one has.
type LateRelease struct{ spi.Store }

// InsertJobs implements spi.Store, wrongly.
func (m LateRelease) InsertJobs(ctx context.Context, jobs []*spi.Job, o spi.InsertOptions) ([]spi.InsertResult, error) {
	cp, _ := cloneBatch(jobs)
	for i, j := range cp {
		if len(j.Dependencies) == 0 {
			continue
		}
		for _, p := range cp[:i] {
			if !slices.ContainsFunc(j.Dependencies, func(d spi.Dependency) bool { return d.ParentID == p.ID }) {
				j.Dependencies = append(j.Dependencies, spi.Dependency{ParentID: p.ID})
				p.Dependents++
				break
			}
		}
	}
	return m.Store.InsertJobs(ctx, cp, o)
}

// Capabilities forwards the inner store's.
func (m LateRelease) Capabilities() spi.Capabilities { return spi.CapabilitiesOf(m.Store) }

// EarlyTimeout times signal waits out 5 s before their deadline: its
// ExpireSignals asks the store about a later instant than it is.
type EarlyTimeout struct{ spi.Store }

func (m EarlyTimeout) signals() spi.SignalStore { return spi.CapabilitiesOf(m.Store).Signals }

// ExpireSignals implements spi.SignalStore, wrongly.
func (m EarlyTimeout) ExpireSignals(ctx context.Context, now time.Time, limit int) ([]spi.ResolvedSignal, error) {
	return m.signals().ExpireSignals(ctx, now.Add(5*time.Second), limit)
}

// DeliverSignal implements spi.SignalStore.
func (m EarlyTimeout) DeliverSignal(ctx context.Context, id uuid.UUID, name string, payload []byte, now time.Time) (spi.ResolvedSignal, error) {
	return m.signals().DeliverSignal(ctx, id, name, payload, now)
}

// DeliverSignalByKey implements spi.SignalStore.
func (m EarlyTimeout) DeliverSignalByKey(ctx context.Context, key, name string, payload []byte, now time.Time, limit int) ([]spi.ResolvedSignal, error) {
	return m.signals().DeliverSignalByKey(ctx, key, name, payload, now, limit)
}

// Capabilities forwards the inner store's, with its own signals.
func (m EarlyTimeout) Capabilities() spi.Capabilities {
	c := spi.CapabilitiesOf(m.Store)
	c.Signals = m
	return c
}

// BatchTwice ends batches a second time: each FinishBatches also reports
// the batches the call before it ended, and inserts their callbacks again
// (a finisher whose end is not guarded on the batch being open).
type BatchTwice struct {
	spi.Store
	last *[]spi.FinishedBatch
}

func (m BatchTwice) batches() spi.BatchStore { return spi.CapabilitiesOf(m.Store).Batches }

// FinishBatches implements spi.BatchStore, wrongly.
func (m BatchTwice) FinishBatches(ctx context.Context, now time.Time, limit int) ([]spi.FinishedBatch, error) {
	out, err := m.batches().FinishBatches(ctx, now, limit)
	again := *m.last
	*m.last = out
	for _, b := range again {
		if b.Callback == nil {
			continue
		}
		cb := spi.BatchCallbackJob(b.Callback, now)
		cb.ID[15] ^= 0xff
		if _, err := m.Store.InsertJobs(ctx, []*spi.Job{cb}, spi.InsertOptions{}); err != nil {
			return out, err
		}
		b.Callback = cb
		out = append(out, b)
	}
	return out, err
}

// AddBatchChunk implements spi.BatchStore.
func (m BatchTwice) AddBatchChunk(ctx context.Context, c spi.BatchChunk) (int64, error) {
	return m.batches().AddBatchChunk(ctx, c)
}

// GetBatch implements spi.BatchStore.
func (m BatchTwice) GetBatch(ctx context.Context, id uuid.UUID) (*spi.Batch, error) {
	return m.batches().GetBatch(ctx, id)
}

// CountBatch implements spi.BatchStore.
func (m BatchTwice) CountBatch(ctx context.Context, id uuid.UUID) (map[spi.Status]int, error) {
	return m.batches().CountBatch(ctx, id)
}

// CancelBatch implements spi.BatchStore.
func (m BatchTwice) CancelBatch(ctx context.Context, id uuid.UUID, now time.Time) (int, error) {
	return m.batches().CancelBatch(ctx, id, now)
}

// Capabilities forwards the inner store's, with its own batches.
func (m BatchTwice) Capabilities() spi.Capabilities {
	c := spi.CapabilitiesOf(m.Store)
	c.Batches = m
	return c
}

// cloneBatch deep-copies a batch and indexes it by id.
func cloneBatch(jobs []*spi.Job) ([]*spi.Job, map[uuid.UUID]*spi.Job) {
	cp := make([]*spi.Job, len(jobs))
	byID := make(map[uuid.UUID]*spi.Job, len(jobs))
	for i, j := range jobs {
		cp[i] = j.Clone()
		byID[j.ID] = cp[i]
	}
	return cp, byID
}

// PauseIgnored records pauses but never passes them to the store: the
// claims go on taking the jobs of paused tasks.
type PauseIgnored struct{ spi.Store }

// PauseTask implements spi.TaskPauser, wrongly.
func (PauseIgnored) PauseTask(context.Context, string, time.Time) (bool, error) { return true, nil }

// ResumeTask implements spi.TaskPauser.
func (m PauseIgnored) ResumeTask(ctx context.Context, task string) (bool, error) {
	return spi.CapabilitiesOf(m.Store).Pauser.ResumeTask(ctx, task)
}

// PausedTasks implements spi.TaskPauser.
func (m PauseIgnored) PausedTasks(ctx context.Context) ([]spi.PausedTask, error) {
	return spi.CapabilitiesOf(m.Store).Pauser.PausedTasks(ctx)
}

// Capabilities forwards the inner store's, with its own pauses.
func (m PauseIgnored) Capabilities() spi.Capabilities {
	c := spi.CapabilitiesOf(m.Store)
	c.Pauser = m
	return c
}

// StateUnfenced writes job state whatever the claim it names: the fenced
// writes take the job's current claim sequence, so a run that lost its
// claim records its durable steps anyway.
type StateUnfenced struct{ spi.Store }

func (m StateUnfenced) state() spi.JobStateStore { return spi.CapabilitiesOf(m.Store).State }

// current is the claim sequence of job id now.
func (m StateUnfenced) current(ctx context.Context, id uuid.UUID, seq int64) int64 {
	if j, err := m.GetJob(ctx, id); err == nil {
		return j.ClaimSeq
	}
	return seq
}

// GetState implements spi.JobStateStore.
func (m StateUnfenced) GetState(ctx context.Context, id uuid.UUID, ns string) (spi.VersionedState, bool, error) {
	return m.state().GetState(ctx, id, ns)
}

// InitState implements spi.JobStateStore, wrongly.
func (m StateUnfenced) InitState(ctx context.Context, id uuid.UUID, ns string, state []byte, seq int64) (spi.StateWriteResult, error) {
	return m.state().InitState(ctx, id, ns, state, m.current(ctx, id, seq))
}

// UpdateState implements spi.JobStateStore, wrongly.
func (m StateUnfenced) UpdateState(ctx context.Context, id uuid.UUID, ns string, state []byte, version, seq int64) (spi.StateWriteResult, error) {
	return m.state().UpdateState(ctx, id, ns, state, version, m.current(ctx, id, seq))
}

// InitStateUnfenced implements spi.JobStateStore.
func (m StateUnfenced) InitStateUnfenced(ctx context.Context, id uuid.UUID, ns string, state []byte) (spi.StateWriteResult, error) {
	return m.state().InitStateUnfenced(ctx, id, ns, state)
}

// UpdateStateUnfenced implements spi.JobStateStore.
func (m StateUnfenced) UpdateStateUnfenced(ctx context.Context, id uuid.UUID, ns string, state []byte, version int64) (spi.StateWriteResult, error) {
	return m.state().UpdateStateUnfenced(ctx, id, ns, state, version)
}

// Capabilities forwards the inner store's, with its own job state.
func (m StateUnfenced) Capabilities() spi.Capabilities {
	c := spi.CapabilitiesOf(m.Store)
	c.State = m
	return c
}

// Wrappers maps each mutant's name to its wrapper.
var Wrappers = map[string]func(spi.Store) spi.Store{
	"fence":   func(s spi.Store) spi.Store { return BrokenFence{s} },
	"aging":   func(s spi.Store) spi.Store { return NoAging{s} },
	"budget":  func(s spi.Store) spi.Store { return LooseBudget{s} },
	"permits": func(s spi.Store) spi.Store { return NoPermits{s} },
	"tags":    func(s spi.Store) spi.Store { return IgnoresTags{s} },

	"early-release": func(s spi.Store) spi.Store { return EarlyRelease{s} },
	"late-release":  func(s spi.Store) spi.Store { return LateRelease{s} },
	"early-timeout": func(s spi.Store) spi.Store { return EarlyTimeout{s} },
	"batch-twice":   func(s spi.Store) spi.Store { return BatchTwice{s, new([]spi.FinishedBatch)} },
	"pause-ignored": func(s spi.Store) spi.Store { return PauseIgnored{s} },
	"step-fence":    func(s spi.Store) spi.Store { return StateUnfenced{s} },
}

// Names lists the mutants, sorted.
func Names() []string {
	names := make([]string, 0, len(Wrappers))
	for n := range Wrappers {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Get returns the named wrapper.
func Get(name string) (func(spi.Store) spi.Store, error) {
	w, ok := Wrappers[name]
	if !ok {
		return nil, fmt.Errorf("unknown mutant %q (known: %v)", name, Names())
	}
	return w, nil
}
