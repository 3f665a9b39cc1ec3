package simtest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ratchet-go/ratchet/internal/nodecore"
	"github.com/ratchet-go/ratchet/simtest/internal/simtime"

	"github.com/google/uuid"
	"github.com/jonboulle/clockwork"

	"github.com/ratchet-go/ratchet/engine"
	ratchet "github.com/ratchet-go/ratchet/sdk"
	"github.com/ratchet-go/ratchet/sdk/spi"
	"github.com/ratchet-go/ratchet/stores/memory"
)

// DefaultStart is the simulated start time of an Env, of RunTask's jobs and
// of a simulation when none is set: 2030-01-01T00:00:00Z.
var DefaultStart = time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)

// TB is the part of testing.TB an Env uses; *testing.T and *testing.B
// satisfy it. Errorf may be called from the engine's goroutines.
type TB interface {
	Helper()
	Errorf(format string, args ...any)
	Fatalf(format string, args ...any)
	Cleanup(func())
}

// EnvOptions configure an Env. The zero value is ready to use.
type EnvOptions struct {
	// Start is the fake clock's start time; default DefaultStart.
	Start time.Time
	// Engine configures the engine. Clock is always the Env's fake clock.
	// Defaults that differ from the engine's own, chosen for deterministic
	// tests: NodeID "simtest", Concurrency 1 (jobs run one at a time in
	// claim order; with more, jobs due at the same instant run
	// concurrently and their relative order is not defined),
	// GatherTimeout negative (the engine claims whatever slots are free at
	// once instead of waiting, on the fake clock, for more to free up),
	// HeartbeatInterval 1 h, and no orphan scans (OrphanScanInterval 100
	// years): the Env runs one healthy node, and crash recovery is the
	// simulator's subject. The Logger defaults to discarding.
	Engine engine.Options
	// Store is the store the Env runs on; nil means a new memory store.
	Store spi.Store
	// SettleTimeout bounds, in real time, how long Advance and RunUntilIdle
	// wait for the engine to finish the work due at one simulated instant
	// before failing the test; default 30 s.
	SettleTimeout time.Duration
	// MaxJumps bounds the clock jumps of one Advance or RunUntilIdle, to
	// stop a test whose jobs reschedule forever; default 1,000,000.
	MaxJumps int
}

// Env is a test environment: a memory store, a fake clock and a real
// engine.Engine on that clock, with task mocks, simulated time that jumps
// straight to the next thing due, and a record of what ran when.
//
// The engine only makes progress inside Advance and RunUntilIdle (claims
// wait until then), so a test reads a stable state between those calls and
// the same test always produces the same event log. Create it with NewEnv;
// its engine is started at the first Advance, RunUntilIdle or Engine call
// and stopped when the test ends.
type Env struct {
	t      TB
	opts   EnvOptions
	start  time.Time
	clock  *clockwork.FakeClock
	inner  spi.Store
	store  *envStore
	client *ratchet.Client
	ser    spi.PayloadSerializer
	tasks  map[string]ratchet.Definition
	eng    atomic.Pointer[engine.Engine]
	unsub  func()
	inRun  bool // on the test goroutine only

	mu        sync.Mutex
	changed   chan struct{}
	gen       uint64
	running   bool
	closed    bool
	busy      int               // store calls in progress that may change jobs (claims, recoveries)
	emptyGen  uint64            // gen right after the last claim that took no job
	inflight  map[uuid.UUID]int // claims not yet ended by an engine event, per job
	nInflight int
	finished  map[uuid.UUID]int // executions returned, completion not yet written
	sleepers  []*sleeper
	callbacks []*callback
	cbSeq     int
	mocks     map[string][]*Mock
	known     map[string]bool // task names the engine dispatches
	calls     []*Call
	events    []Event
	labels    map[uuid.UUID]int
	taskOf    map[uuid.UUID]string
	reported  map[uuid.UUID]bool
}

type sleeper struct {
	until   time.Time
	ch      chan struct{}
	aborted bool
}

type callback struct {
	at  time.Time
	seq int
	fn  func()
}

// NewEnv returns an environment that runs the given tasks, as production
// registers them. It fails the test on invalid options.
func NewEnv(t TB, opts EnvOptions, tasks ...ratchet.Definition) *Env {
	t.Helper()
	if opts.Start.IsZero() {
		opts.Start = DefaultStart
	}
	if opts.SettleTimeout <= 0 {
		opts.SettleTimeout = 30 * time.Second
	}
	if opts.MaxJumps <= 0 {
		opts.MaxJumps = 1_000_000
	}
	eo := &opts.Engine
	if eo.NodeID == "" {
		eo.NodeID = "simtest"
	}
	if eo.Concurrency == 0 {
		eo.Concurrency = 1
	}
	if eo.GatherTimeout == 0 {
		// Waiting for more slots to free up would wait on the fake clock,
		// which only moves when the Env moves it.
		eo.GatherTimeout = -1
	}
	if eo.HeartbeatInterval == 0 {
		eo.HeartbeatInterval = time.Hour
	}
	if eo.OrphanScanInterval == 0 {
		eo.OrphanScanInterval = 100 * 365 * 24 * time.Hour
	}
	if eo.Client.Logger == nil {
		eo.Client.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if eo.Client.Serializer == nil {
		eo.Client.Serializer = ratchet.JSONSerializer{}
	}
	e := &Env{
		t:        t,
		opts:     opts,
		start:    opts.Start.UTC(),
		clock:    clockwork.NewFakeClockAt(opts.Start.UTC()),
		ser:      eo.Client.Serializer,
		tasks:    map[string]ratchet.Definition{},
		changed:  make(chan struct{}),
		inflight: map[uuid.UUID]int{},
		finished: map[uuid.UUID]int{},
		mocks:    map[string][]*Mock{},
		known:    map[string]bool{},
		labels:   map[uuid.UUID]int{},
		taskOf:   map[uuid.UUID]string{},
		reported: map[uuid.UUID]bool{},
	}
	e.opts.Engine.Client.Clock = e.clock
	// The Env runs the recurring scheduler's passes itself, at each
	// simulated instant, so that Advance steps through the slots in order.
	e.opts.Engine.NoScheduler = true
	// Archiving runs on the engine's own timer, which the Env does not
	// step: it is off in an Env.
	e.opts.Engine.Archive.Disabled = true
	e.inner = opts.Store
	if e.inner == nil {
		e.inner = memory.New()
	}
	e.store = &envStore{Store: e.inner, env: e}
	for i, d := range tasks {
		if d == nil || d.Name() == "" {
			t.Fatalf("simtest: NewEnv: task %d is nil or has no name", i)
		}
		if _, dup := e.tasks[d.Name()]; dup {
			t.Fatalf("simtest: NewEnv: task %q registered twice", d.Name())
		}
		e.tasks[d.Name()] = d
	}
	c, err := ratchet.NewClient(e.store, ratchet.ClientOptions{
		Clock: e.clock, Serializer: e.ser, MaxPayloadBytes: eo.Client.MaxPayloadBytes, Notifier: e, Logger: eo.Client.Logger,
	})
	if err != nil {
		t.Fatalf("simtest: NewEnv: %v", err)
	}
	e.client = c
	t.Cleanup(e.shutdown)
	return e
}

// Client returns a client over the environment's store and fake clock. Jobs
// it submits run at the next Advance or RunUntilIdle.
func (e *Env) Client() *ratchet.Client { return e.client }

// Store returns the environment's store, as the engine sees it.
func (e *Env) Store() spi.Store { return e.store }

// Now returns the simulated time.
func (e *Env) Now() time.Time { return e.clock.Now().UTC() }

// Engine returns the environment's engine, starting it if it has not
// started yet. Its task set is fixed from then on: the registered tasks
// plus every task name mocked so far.
func (e *Env) Engine() *engine.Engine {
	e.t.Helper()
	e.startEngine()
	return e.eng.Load()
}

// NotifyNewWork implements ratchet.WorkNotifier: it wakes the engine's
// poller once the engine runs.
func (e *Env) NotifyNewWork(p ratchet.Priority) {
	if eng := e.eng.Load(); eng != nil {
		eng.NotifyNewWork(p)
	}
}

// bumpLocked records a change and wakes everything waiting for one.
func (e *Env) bumpLocked() {
	e.gen++
	close(e.changed)
	e.changed = make(chan struct{})
}

func (e *Env) startEngine() {
	if e.eng.Load() != nil {
		return
	}
	e.mu.Lock()
	names := make([]string, 0, len(e.tasks)+len(e.mocks))
	for n := range e.tasks {
		names = append(names, n)
	}
	for n := range e.mocks {
		if _, ok := e.tasks[n]; !ok {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	defs := make([]ratchet.Definition, len(names))
	for i, n := range names {
		defs[i] = &envTask{env: e, name: n, real: e.tasks[n]}
		e.known[n] = true
	}
	e.mu.Unlock()
	eng, err := engine.New(e.store, e.opts.Engine, defs...)
	if err != nil {
		e.t.Fatalf("simtest: start the engine: %v", err)
	}
	events, unsub := eng.Subscribe(1 << 16)
	e.unsub = unsub
	go e.pump(events)
	e.eng.Store(eng)
	if err := eng.Start(context.Background()); err != nil {
		e.t.Fatalf("simtest: start the engine: %v", err)
	}
}

// pump ends in-flight claims as the engine publishes their outcomes.
func (e *Env) pump(events <-chan engine.Event) {
	for ev := range events {
		e.mu.Lock()
		if e.inflight[ev.JobID] > 0 {
			e.inflight[ev.JobID]--
			e.nInflight--
			if e.inflight[ev.JobID] == 0 {
				delete(e.inflight, ev.JobID)
			}
		}
		e.bumpLocked()
		e.mu.Unlock()
	}
}

func (e *Env) shutdown() {
	e.mu.Lock()
	e.closed = true
	for _, s := range e.sleepers {
		s.aborted = true
		close(s.ch)
	}
	e.sleepers = nil
	e.bumpLocked()
	e.mu.Unlock()
	if eng := e.eng.Load(); eng != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = eng.Stop(ctx)
		e.unsub()
	}
}

// RegisterDelayedCallback runs fn when the simulated time reaches now + d,
// on the test's goroutine, between the engine's actions: to submit, cancel
// or inspect jobs at a simulated time. Callbacks due at the same time run
// in registration order. fn must not call Advance or RunUntilIdle.
func (e *Env) RegisterDelayedCallback(d time.Duration, fn func()) {
	if d < 0 {
		d = 0
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	e.cbSeq++
	e.callbacks = append(e.callbacks, &callback{at: e.clock.Now().Add(d), seq: e.cbSeq, fn: fn})
	e.bumpLocked()
}

// Advance runs everything due within the next d of simulated time, in
// time order — jobs, retries, simulated delays and callbacks, each at its
// own time — and leaves the clock at now + d with the work due then done.
// Advance(0) runs what is due now.
func (e *Env) Advance(d time.Duration) {
	e.t.Helper()
	if d < 0 {
		e.t.Fatalf("simtest: Advance(%s): negative duration", d)
	}
	e.run(e.Now().Add(d), true)
}

// RunUntilIdle runs until nothing is left to do: it skips the clock
// straight to the next due job, retry, simulated delay or callback each
// time the engine is idle, and returns when there is none. A job retrying
// with backoff for a simulated day finishes in milliseconds.
func (e *Env) RunUntilIdle() {
	e.t.Helper()
	e.run(time.Time{}, false)
}

func (e *Env) run(limit time.Time, bounded bool) {
	e.t.Helper()
	if e.inRun {
		e.t.Fatalf("simtest: Advance or RunUntilIdle called from a delayed callback")
	}
	e.inRun = true
	defer func() { e.inRun = false }()
	e.mu.Lock()
	e.running = true
	e.bumpLocked()
	e.mu.Unlock()
	defer func() {
		e.mu.Lock()
		e.running = false
		e.bumpLocked()
		e.mu.Unlock()
	}()
	e.startEngine()
	for jumps := 0; ; jumps++ {
		if jumps > e.opts.MaxJumps {
			e.t.Fatalf("simtest: more than %d clock jumps without becoming idle (simulated time %s); jobs that reschedule forever?",
				e.opts.MaxJumps, e.offset(e.Now()))
		}
		e.settle()
		if e.fireCallbacks() {
			continue
		}
		if e.fireSchedules() {
			continue
		}
		next, ok := e.nextWake()
		if bounded {
			if slot, due := e.nextSlot(limit); due && (!ok || slot.Before(next)) {
				next, ok = slot, true
			}
		}
		if bounded && (!ok || next.After(limit)) {
			if e.Now().Before(limit) {
				e.advanceTo(limit)
				continue
			}
			e.reportUnrunnable()
			return
		}
		if !ok {
			e.reportUnrunnable()
			return
		}
		e.advanceTo(next)
	}
}

// reportUnrunnable fails the test once for each due PENDING job whose task
// no registered task and no mock has: the engine claims only the jobs of
// its tasks (as a node of a mixed fleet does), so such a job would wait
// for a node that does not exist.
func (e *Env) reportUnrunnable() {
	e.t.Helper()
	now := e.Now()
	var after uuid.UUID
	for {
		page, next, err := e.inner.ListJobs(context.Background(), spi.ListParams{Status: spi.StatusPending, After: after, Limit: 500})
		if err != nil {
			e.t.Errorf("simtest: list the pending jobs: %v", err)
			return
		}
		e.mu.Lock()
		for _, j := range page {
			if j.ScheduledAt.After(now) || e.known[j.TaskName] || e.reported[j.ID] {
				continue
			}
			e.reported[j.ID] = true
			e.t.Errorf("simtest: job #%d (%s) of task %q is due, but no task of that name is registered and no mock matches it, so the engine does not claim it; "+
				"register the task in NewEnv or mock it with env.Mock(%q) before the first Advance or RunUntilIdle",
				e.labelLocked(j.ID), j.ID, j.TaskName, j.TaskName)
		}
		e.mu.Unlock()
		if next == uuid.Nil {
			return
		}
		after = next
	}
}

// settle waits until the engine is idle at the current simulated time: no
// claim or recovery in progress, every claimed job either ended (its event
// published) or asleep in a simulated delay, and no due PENDING job while
// a slot is free.
func (e *Env) settle() {
	e.t.Helper()
	timeout := time.NewTimer(e.opts.SettleTimeout)
	defer timeout.Stop()
	for {
		e.mu.Lock()
		gen, ch := e.gen, e.changed
		active := e.nInflight - len(e.sleepers)
		busy := e.busy
		free := e.opts.Engine.Concurrency - e.nInflight
		// The last change was a claim that took nothing: what looks due
		// cannot be claimed now (a full resource, a tag the node does not
		// take), and only a later change can alter that.
		idleClaim := e.emptyGen == gen
		e.mu.Unlock()
		// While a claim is in progress or a body runs, the engine acts on
		// its own (a finished body wakes its poller); waking it then would
		// only make it claim again and again.
		if active == 0 && busy == 0 {
			due := false
			if free > 0 && !idleClaim {
				var err error
				due, err = e.dueWork()
				if err != nil {
					e.t.Fatalf("simtest: read the store: %v", err)
				}
			}
			if !due {
				e.mu.Lock()
				same := e.gen == gen
				e.mu.Unlock()
				if same {
					return
				}
				continue
			}
			// Work is due and a slot is free, but the engine is idle: wake it.
			e.NotifyNewWork(ratchet.PriorityNormal)
		}
		select {
		case <-ch:
		case <-timeout.C:
			e.t.Fatalf("simtest: the engine did not settle within %s of real time at simulated %s: %s",
				e.opts.SettleTimeout, e.offset(e.Now()), e.diagnose())
		}
	}
}

func (e *Env) diagnose() string {
	e.mu.Lock()
	defer e.mu.Unlock()
	var b strings.Builder
	fmt.Fprintf(&b, "%d claims in flight (%d asleep in simulated delays), %d store calls in progress, %d completions unwritten",
		e.nInflight, len(e.sleepers), e.busy, len(e.finished))
	ids := make([]uuid.UUID, 0, len(e.inflight))
	for id := range e.inflight {
		ids = append(ids, id)
	}
	slices.SortFunc(ids, func(a, b uuid.UUID) int { return e.labels[a] - e.labels[b] })
	for _, id := range ids {
		fmt.Fprintf(&b, "; job #%d (%s) in flight", e.labels[id], id)
	}
	if e.nInflight == len(e.sleepers) && e.nInflight < e.opts.Engine.Concurrency {
		fmt.Fprintf(&b, "; the engine is not claiming due work although %d slots are free (a positive GatherTimeout makes it wait, on the fake clock, for more slots)",
			e.opts.Engine.Concurrency-e.nInflight)
	}
	return b.String()
}

// dueWork reports whether a PENDING job is due now.
func (e *Env) dueWork() (bool, error) {
	_, due, err := e.scanPending()
	return due, err
}

// scanPending returns the earliest due time of the PENDING jobs due later
// than now, and whether one is due now.
func (e *Env) scanPending() (time.Time, bool, error) {
	now := e.Now()
	var next time.Time
	due := false
	var after uuid.UUID
	for {
		page, cursor, err := e.inner.ListJobs(context.Background(), spi.ListParams{Status: spi.StatusPending, After: after, Limit: 1000})
		if err != nil {
			return next, false, err
		}
		for _, j := range page {
			if !j.ScheduledAt.After(now) {
				due = true
			} else if next.IsZero() || j.ScheduledAt.Before(next) {
				next = j.ScheduledAt
			}
		}
		if cursor == uuid.Nil {
			return next, due, nil
		}
		after = cursor
	}
}

// fireCallbacks runs the callbacks due now; it reports whether any ran.
func (e *Env) fireCallbacks() bool {
	now := e.Now()
	e.mu.Lock()
	var due []*callback
	rest := e.callbacks[:0]
	for _, c := range e.callbacks {
		if !c.at.After(now) {
			due = append(due, c)
		} else {
			rest = append(rest, c)
		}
	}
	e.callbacks = rest
	e.mu.Unlock()
	slices.SortFunc(due, func(a, b *callback) int {
		if c := a.at.Compare(b.at); c != 0 {
			return c
		}
		return a.seq - b.seq
	})
	for _, c := range due {
		e.record(Event{At: now, Kind: EventCallback, Detail: fmt.Sprintf("delayed callback %d", c.seq)})
		c.fn()
	}
	return len(due) > 0
}

// nextWake returns the next simulated time at which something happens: a
// PENDING job falls due (while a slot is free), a simulated delay ends, or
// a callback is due.
func (e *Env) nextWake() (time.Time, bool) {
	e.mu.Lock()
	var next time.Time
	consider := func(t time.Time) {
		if next.IsZero() || t.Before(next) {
			next = t
		}
	}
	for _, s := range e.sleepers {
		consider(s.until)
	}
	for _, c := range e.callbacks {
		consider(c.at)
	}
	free := e.opts.Engine.Concurrency - e.nInflight
	e.mu.Unlock()
	if free > 0 {
		p, _, err := e.scanPending()
		if err != nil {
			e.t.Fatalf("simtest: read the store: %v", err)
		}
		if !p.IsZero() {
			consider(p)
		}
	}
	return next, !next.IsZero()
}

// fireSchedules runs one pass of the recurring scheduler at the current
// simulated time (the engine's RecurringPass) and reports whether it
// wrote jobs.
func (e *Env) fireSchedules() bool {
	ss := spi.CapabilitiesOf(e.store).Schedules
	if ss == nil {
		return false
	}
	threshold := e.opts.Engine.MisfireThreshold
	if threshold <= 0 {
		threshold = engine.DefaultMisfireThreshold
	}
	fired := false
	d := nodecore.Recurring{Store: ss, Jobs: e.inner, Threshold: threshold, NewID: e.client.NewJobID,
		Inserts: e.opts.Engine.Client.InsertMiddleware, Logger: e.opts.Engine.Client.Logger,
		Woke: func(p ratchet.Priority) { fired = true; e.NotifyNewWork(p) }}
	if err := nodecore.RecurringPass(context.Background(), d, e.Now()); err != nil {
		e.t.Fatalf("simtest: recurring schedules: %v", err)
	}
	if fired { // new work: the engine's last empty claim no longer holds
		e.mu.Lock()
		e.bumpLocked()
		e.mu.Unlock()
	}
	return fired
}

// nextSlot returns the earliest next slot of an unpaused schedule up to
// limit: Advance steps to it; RunUntilIdle does not wait for slots (a
// schedule is never done).
func (e *Env) nextSlot(limit time.Time) (time.Time, bool) {
	ss := spi.CapabilitiesOf(e.store).Schedules
	if ss == nil {
		return time.Time{}, false
	}
	due, err := ss.DueSchedules(context.Background(), limit, 1)
	if err != nil {
		e.t.Fatalf("simtest: recurring schedules: %v", err)
	}
	if len(due) == 0 || !due[0].NextFireAt.After(e.Now()) {
		return time.Time{}, false
	}
	return due[0].NextFireAt, true
}

// advanceTo moves the clock to t, wakes the simulated delays that end by
// then and the engine's poller.
func (e *Env) advanceTo(t time.Time) {
	if d := t.Sub(e.clock.Now()); d > 0 {
		e.clock.Advance(d)
	}
	e.mu.Lock()
	rest := e.sleepers[:0]
	for _, s := range e.sleepers {
		if !s.until.After(t) {
			close(s.ch)
		} else {
			rest = append(rest, s)
		}
	}
	e.sleepers = rest
	e.bumpLocked()
	e.mu.Unlock()
	e.NotifyNewWork(ratchet.PriorityNormal)
}

// sleep blocks a job body for d of simulated time.
func (e *Env) sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	e.mu.Lock()
	if e.closed {
		e.mu.Unlock()
		return context.Canceled
	}
	s := &sleeper{until: e.clock.Now().Add(d), ch: make(chan struct{})}
	e.sleepers = append(e.sleepers, s)
	e.bumpLocked()
	e.mu.Unlock()
	select {
	case <-s.ch:
		if s.aborted {
			return context.Canceled
		}
		return nil
	case <-ctx.Done():
		e.mu.Lock()
		if i := slices.Index(e.sleepers, s); i >= 0 {
			e.sleepers = slices.Delete(e.sleepers, i, i+1)
			e.bumpLocked()
		}
		e.mu.Unlock()
		return ctx.Err()
	}
}

// --- the store wrapper that observes the engine ---

// envStore passes every call to the Env's store and records what it did;
// claims wait until the Env runs and every finished execution has been
// written, so that claim order never depends on goroutine timing.
type envStore struct {
	spi.Store
	env *Env
}

func (s *envStore) InsertJobs(ctx context.Context, jobs []*spi.Job, o spi.InsertOptions) ([]spi.InsertResult, error) {
	res, err := s.Store.InsertJobs(ctx, jobs, o)
	if err == nil {
		s.env.onInsert(jobs, res)
	}
	return res, err
}

// Capabilities forwards every optional feature of the Env's store, so the
// engine under the Env uses what it would use in production (claim checks in
// its heartbeat, leases, a database's wakeups). Transactional inserts are
// recorded in the event log like plain ones.
func (s *envStore) Capabilities() spi.Capabilities {
	c := spi.CapabilitiesOf(s.Store)
	if c.Tx != nil {
		c.Tx = envTxInserter{inner: c.Tx, env: s.env}
	}
	if c.Schedules != nil {
		c.Schedules = envSchedules{ScheduleStore: c.Schedules, env: s.env}
	}
	return c
}

// envSchedules records the jobs that recurring fires write.
type envSchedules struct {
	spi.ScheduleStore
	env *Env
}

func (s envSchedules) FireSchedule(ctx context.Context, f spi.ScheduleFire) (bool, []spi.InsertResult, error) {
	ok, res, err := s.ScheduleStore.FireSchedule(ctx, f)
	if err == nil && ok {
		s.env.onInsert(f.Jobs, res)
	}
	return ok, res, err
}

// envTxInserter records the jobs written inside an application's
// transaction (at the insert: the Env cannot see the commit).
type envTxInserter struct {
	inner spi.TxInserter
	env   *Env
}

func (t envTxInserter) InsertJobsTx(ctx context.Context, tx any, jobs []*spi.Job, o spi.InsertOptions) ([]spi.InsertResult, error) {
	res, err := t.inner.InsertJobsTx(ctx, tx, jobs, o)
	if err == nil {
		t.env.onInsert(jobs, res)
	}
	return res, err
}

func (s *envStore) ClaimJobs(ctx context.Context, p spi.ClaimParams) ([]*spi.Job, error) {
	e := s.env
	for {
		e.mu.Lock()
		if e.running && len(e.finished) == 0 {
			e.busy++
			e.bumpLocked()
			e.mu.Unlock()
			break
		}
		ch := e.changed
		e.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	jobs, err := s.Store.ClaimJobs(ctx, p)
	e.onClaim(jobs, p.Now)
	return jobs, err
}

func (s *envStore) CompleteJobs(ctx context.Context, cs []spi.Completion) ([]bool, error) {
	applied, err := s.Store.CompleteJobs(ctx, cs)
	s.env.onComplete(cs, applied, err)
	return applied, err
}

func (s *envStore) ReleaseJobs(ctx context.Context, refs []spi.ClaimRef, now time.Time) ([]bool, error) {
	applied, err := s.Store.ReleaseJobs(ctx, refs, now)
	if err == nil {
		for i, r := range refs {
			if i < len(applied) && applied[i] {
				s.env.record(Event{At: now, Kind: EventReleased, JobID: r.JobID})
			}
		}
	}
	return applied, err
}

func (s *envStore) RecoverOrphans(ctx context.Context, p spi.RecoverParams) ([]spi.RecoveredJob, error) {
	e := s.env
	e.mu.Lock()
	e.busy++
	e.bumpLocked()
	e.mu.Unlock()
	got, err := s.Store.RecoverOrphans(ctx, p)
	e.mu.Lock()
	e.busy--
	for _, r := range got {
		e.recordLocked(Event{At: p.Now, Kind: EventRecovered, JobID: r.JobID, Task: r.TaskName,
			Detail: fmt.Sprintf("from %s: %s, crash count %d", r.FromNode, r.NewStatus, r.CrashCount)})
	}
	e.bumpLocked()
	e.mu.Unlock()
	return got, err
}

func (s *envStore) CancelJob(ctx context.Context, id uuid.UUID, now time.Time) error {
	err := s.Store.CancelJob(ctx, id, now)
	if err == nil {
		s.env.record(Event{At: now, Kind: EventCancelled, JobID: id})
	}
	return err
}

func (s *envStore) RetryFailedJob(ctx context.Context, id uuid.UUID, now time.Time) error {
	err := s.Store.RetryFailedJob(ctx, id, now)
	if err == nil {
		s.env.record(Event{At: now, Kind: EventRetriedFromDLQ, JobID: id})
	}
	return err
}

func (e *Env) onInsert(jobs []*spi.Job, res []spi.InsertResult) {
	e.mu.Lock()
	defer e.mu.Unlock()
	for i, r := range res {
		if r.Duplicate || i >= len(jobs) {
			continue
		}
		j := jobs[i]
		detail := fmt.Sprintf("%s, due %s", j.Priority, e.offset(j.ScheduledAt))
		e.recordLocked(Event{At: j.CreatedAt, Kind: EventSubmitted, JobID: j.ID, Task: j.TaskName, Detail: detail})
	}
}

func (e *Env) onClaim(jobs []*spi.Job, now time.Time) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.busy--
	for _, j := range jobs {
		e.inflight[j.ID]++
		e.nInflight++
		e.recordLocked(Event{At: j.ClaimedAt, Kind: EventClaimed, JobID: j.ID, Task: j.TaskName, Run: j.Attempts + 1,
			Detail: fmt.Sprintf("claim %d", j.ClaimSeq)})
		if !e.known[j.TaskName] && !e.reported[j.ID] {
			e.reported[j.ID] = true
			e.t.Errorf("simtest: job #%d (%s) of task %q was claimed, but no task of that name is registered and no mock matches it; "+
				"register the task in NewEnv or mock it with env.Mock(%q) before the first Advance or RunUntilIdle",
				e.labelLocked(j.ID), j.ID, j.TaskName, j.TaskName)
		}
	}
	e.bumpLocked()
	// A claim that took nothing shows that what looks due cannot be
	// claimed, but only when it claimed at the current simulated time: a
	// claim the engine began before the clock moved on missed the jobs
	// that came due since, and must not stop settle from waking it.
	if len(jobs) == 0 && !now.Before(e.clock.Now().Truncate(time.Microsecond)) {
		e.emptyGen = e.gen
	}
}

func (e *Env) onComplete(cs []spi.Completion, applied []bool, err error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	for i, c := range cs {
		if e.finished[c.JobID] > 0 {
			e.finished[c.JobID]--
			if e.finished[c.JobID] == 0 {
				delete(e.finished, c.JobID)
			}
		}
		if err != nil || i >= len(applied) {
			continue
		}
		ev := Event{At: c.FinishedAt, JobID: c.JobID, Run: c.Attempts, Detail: c.LastError}
		switch {
		case !applied[i]:
			ev.Kind = EventSuperseded
		case c.Outcome == spi.OutcomeSucceeded:
			ev.Kind = EventSucceeded
		case c.Outcome == spi.OutcomeRetry:
			ev.Kind = EventRetrying
			ev.Detail = fmt.Sprintf("%s; retry at %s", c.LastError, e.offset(c.RetryAt))
		case c.Outcome == spi.OutcomeSnoozed:
			ev.Kind = EventSnoozed
			ev.Detail = fmt.Sprintf("snooze %d; due at %s", c.Snoozes, e.offset(c.RetryAt))
		default:
			ev.Kind = EventFailed
		}
		e.recordLocked(ev)
	}
	e.bumpLocked()
}

// --- the task wrapper that applies mocks ---

// envTask is the definition the engine dispatches for one task name: it
// applies the first matching mock, or runs the registered task. It carries
// every option of the registered task that the engine reads of a
// definition (its circuit breaker's service and filter, its validation),
// so that a task behaves in an Env as on a node; a test checks that it has
// every such method of ratchet.Task.
type envTask struct {
	env  *Env
	name string
	real ratchet.Definition
}

func (d *envTask) Name() string { return d.name }

// Protection is the registered task's (Task.ProtectedBy): its jobs go
// through the circuit breaker of its service, mocked or not.
func (d *envTask) Protection() (service string, filter spi.ErrorFilter) {
	if p, ok := d.real.(interface {
		Protection() (string, spi.ErrorFilter)
	}); ok {
		return p.Protection()
	}
	return "", spi.ErrorFilter{}
}

// Jitter is the registered task's (Task.RetryJitter).
func (d *envTask) Jitter() (fraction float64, set bool) {
	if j, ok := d.real.(interface{ Jitter() (float64, bool) }); ok {
		return j.Jitter()
	}
	return 0, false
}

// Validate is the registered task's.
func (d *envTask) Validate() error {
	if v, ok := d.real.(interface{ Validate() error }); ok {
		return v.Validate()
	}
	return nil
}

// UnhandledCallError is the error of a job that no mock matched and no
// registered task handles. It is wrapped in DoNotRetry.
type UnhandledCallError struct {
	// Task is the name of the task called.
	Task string
}

// Error names the task that nothing handled.
func (e *UnhandledCallError) Error() string {
	return fmt.Sprintf("simtest: no mock matched task %q and no task of that name is registered", e.Task)
}

func (d *envTask) Execute(ctx context.Context, payload []byte, ser spi.PayloadSerializer) (res any, err error) {
	e := d.env
	call := &Call{Task: d.name, Args: slices.Clone(payload), Start: e.Now(), ser: ser}
	if jc, ok := ratchet.JobFromContext(ctx); ok {
		call.JobID, call.Run, call.Params = jc.ID, jc.Run, jc.Params()
	}
	m := e.beginCall(call)
	returned := false
	defer func() {
		if !returned {
			err = errors.New("task panicked")
		}
		e.endCall(call, err)
	}()
	ctx = context.WithValue(ctx, envKey{}, e)
	switch {
	case m != nil:
		call.Mocked = true
		res, err = m.invoke(ctx, *call)
	case d.real != nil:
		res, err = d.real.Execute(ctx, payload, ser)
	default:
		e.t.Errorf("simtest: job #%d (%s) of task %q ran with args %s, but no mock matched it (all exhausted or not matching) and no task of that name is registered",
			e.label(call.JobID), call.JobID, d.name, call.Args)
		err = ratchet.DoNotRetry(&UnhandledCallError{Task: d.name})
	}
	returned = true
	return res, err
}

type envKey struct{}

func (e *Env) beginCall(c *Call) *Mock {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.calls = append(e.calls, c)
	e.recordLocked(Event{At: c.Start, Kind: EventStarted, JobID: c.JobID, Task: c.Task, Run: c.Run})
	for _, m := range e.mocks[c.Task] {
		if m.times > 0 && m.used >= m.times {
			continue
		}
		if m.match != nil && !m.match(*c) {
			continue
		}
		m.used++
		return m
	}
	return nil
}

func (e *Env) endCall(c *Call, err error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	c.End = e.Now()
	if err != nil {
		c.Err = err.Error()
	}
	c.done = true
	e.finished[c.JobID]++
	e.bumpLocked()
}

// --- inspection ---

// Job returns the stored job, failing the test when it does not exist.
func (e *Env) Job(id uuid.UUID) *ratchet.Job {
	e.t.Helper()
	j, err := e.inner.GetJob(context.Background(), id)
	if err != nil {
		e.t.Fatalf("simtest: job %s: %v", id, err)
	}
	return j
}

// Status returns the job's state.
func (e *Env) Status(id uuid.UUID) ratchet.Status {
	e.t.Helper()
	return e.Job(id).Status
}

// Jobs returns every job in the given state (every job for ""), in
// submission order.
func (e *Env) Jobs(status ratchet.Status) []*ratchet.Job {
	e.t.Helper()
	var out []*ratchet.Job
	var after uuid.UUID
	for {
		page, next, err := e.inner.ListJobs(context.Background(), spi.ListParams{Status: status, After: after, Limit: 1000})
		if err != nil {
			e.t.Fatalf("simtest: list jobs: %v", err)
		}
		out = append(out, page...)
		if next == uuid.Nil {
			return out
		}
		after = next
	}
}

// DLQ returns the dead-letter queue: every FAILED job.
func (e *Env) DLQ() []*ratchet.Job {
	e.t.Helper()
	return e.Jobs(ratchet.StatusFailed)
}

// Executions returns every job body run so far, mocked or real, in the
// order they started: which job ran when, with which attempt, args and
// outcome.
func (e *Env) Executions() []Call {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := make([]Call, len(e.calls))
	for i, c := range e.calls {
		out[i] = *c
	}
	return out
}

// Events returns the event log: what happened to which job at which
// simulated time, in order.
func (e *Env) Events() []Event {
	e.mu.Lock()
	defer e.mu.Unlock()
	return slices.Clone(e.events)
}

// EventLog renders the event log, one line per event, with times as
// offsets from the start and jobs numbered in submission order (#1, #2...).
func (e *Env) EventLog() string {
	var b strings.Builder
	for _, ev := range e.Events() {
		b.WriteString(ev.String())
		b.WriteString("\n")
	}
	return b.String()
}

func (e *Env) record(ev Event) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.recordLocked(ev)
	e.bumpLocked()
}

func (e *Env) recordLocked(ev Event) {
	ev.At = ev.At.UTC()
	ev.Offset = ev.At.Sub(e.start)
	if ev.JobID != uuid.Nil {
		ev.Job = e.labelLocked(ev.JobID)
		if ev.Task == "" {
			ev.Task = e.taskOf[ev.JobID]
		} else {
			e.taskOf[ev.JobID] = ev.Task
		}
	}
	e.events = append(e.events, ev)
}

func (e *Env) label(id uuid.UUID) int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.labelLocked(id)
}

func (e *Env) labelLocked(id uuid.UUID) int {
	n, ok := e.labels[id]
	if !ok {
		n = len(e.labels) + 1
		e.labels[id] = n
	}
	return n
}

func (e *Env) offset(t time.Time) string { return simtime.Offset(t.Sub(e.start)) }

// EventKind says what an Event records.
type EventKind string

// The kinds of Event.
const (
	EventSubmitted      EventKind = "submitted"
	EventClaimed        EventKind = "claimed"
	EventStarted        EventKind = "started"
	EventSucceeded      EventKind = "succeeded"
	EventRetrying       EventKind = "retrying"
	EventSnoozed        EventKind = "snoozed"
	EventFailed         EventKind = "failed"
	EventSuperseded     EventKind = "superseded"
	EventReleased       EventKind = "released"
	EventRecovered      EventKind = "recovered"
	EventCancelled      EventKind = "cancelled"
	EventRetriedFromDLQ EventKind = "dlq-retry"
	EventCallback       EventKind = "callback"
)

// Event is one entry of an Env's event log.
type Event struct {
	// At is the simulated time; Offset the same as a duration from the
	// Env's start.
	At     time.Time
	Offset time.Duration
	// Kind says what happened.
	Kind EventKind
	// JobID is the job concerned (zero for callbacks) and Job its number in
	// submission order, from 1.
	JobID uuid.UUID
	Job   int
	// Task is set where the event knows it.
	Task string
	// Run is the run that was claimed, started or ended
	// (ratchet.JobContext.Run: 1 for the first execution).
	Run int
	// Detail carries the error, the retry time and the like.
	Detail string
}

// String renders the event as one line of EventLog.
func (ev Event) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%10s %-11s", simtime.Offset(ev.Offset), ev.Kind)
	if ev.Job > 0 {
		fmt.Fprintf(&b, " #%d", ev.Job)
	}
	if ev.Task != "" {
		fmt.Fprintf(&b, " %s", ev.Task)
	}
	if ev.Run > 0 {
		fmt.Fprintf(&b, " run %d", ev.Run)
	}
	if ev.Detail != "" {
		fmt.Fprintf(&b, ": %s", ev.Detail)
	}
	return b.String()
}
