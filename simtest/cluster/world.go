package cluster

import (
	"container/heap"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"github.com/ratchet-go/ratchet/internal/nodecore"
	"github.com/ratchet-go/ratchet/simtest/internal/simtime"

	"github.com/google/uuid"
	"github.com/jonboulle/clockwork"

	"github.com/ratchet-go/ratchet/sdk/spi"
	"github.com/ratchet-go/ratchet/stores/memory"
)

// The simulator is a discrete-event simulation run on one goroutine. Every
// node is a state machine (node.go) whose decisions are the engine's own
// code (engine.go): its periodic actions (poll, heartbeat, orphan scan),
// the ends of its job bodies and the steps of its stops are events in one
// queue,
// ordered by simulated time and then by a sequence number, so that a seed
// fixes the whole run. A step pops one event, moves the fake clock to its
// time, lets the node (or the workload, or the fault injector) act through
// the spi.Store, and then checks the invariants (check.go) against a model
// of what every store call must have done.

// evKind is the kind of a queued event.
type evKind int

const (
	evPoll evKind = iota + 1
	evHeartbeat
	evScan
	evBodyDone    // a job body returns
	evFlush       // a node writes its buffered completions
	evFlushRetry  // a node's completer tries a failed write again
	evClaimDone   // a node's claim in flight reaches the store
	evNodeCrash   // a poison job (or a scheduled fault) kills its node mid-execution
	evResume      // a stalled node resumes
	evRestart     // a crashed or stopped node starts again
	evDrainLimit  // a graceful stop's drain timeout expires
	evSubmit      // the workload submits jobs
	evAdmin       // the workload cancels or DLQ-retries a job
	evRecurring   // a node's recurring scheduler passes over the due schedules
	evSweep       // a node's signal sweeper times out the waits past their deadline
	evHealSignal  // the client delivers to every job still waiting (heal phase)
	evBatchFinish // a node's batch finisher ends the batches whose children all finished
	evHealBatch   // the client seals every batch still open to chunks (heal phase)
	evClaimCheck  // a cancel's wakeup starts a node's claim check at once
	evTimeout     // a run reaches its timeout
)

type event struct {
	at   time.Time
	seq  uint64
	kind evKind
	node int // index into world.nodes; -1 for workload events
	inc  int // node incarnation the event belongs to
	ref  spi.ClaimRef
	why  string
	// limit is a claim in flight's (evClaimDone).
	limit int
}

type eventQueue []*event

func (q eventQueue) Len() int { return len(q) }
func (q eventQueue) Less(i, j int) bool {
	if !q[i].at.Equal(q[j].at) {
		return q[i].at.Before(q[j].at)
	}
	return q[i].seq < q[j].seq
}
func (q eventQueue) Swap(i, j int) { q[i], q[j] = q[j], q[i] }
func (q *eventQueue) Push(x any)   { *q = append(*q, x.(*event)) }
func (q *eventQueue) Pop() any {
	old := *q
	e := old[len(old)-1]
	old[len(old)-1] = nil
	*q = old[:len(old)-1]
	return e
}

// traceEntry is one line of the event trace and what it concerns.
type traceEntry struct {
	line  string
	jobs  []int // job indexes
	nodes []int // node indexes
}

const (
	phaseMain = iota
	phaseHeal
)

// healTimeLimit bounds the heal phase in simulated time: with every node
// healthy, each job must be terminal well within it (the longest backoff
// the workload uses is 32 s, its longest delay 60 s).
const healTimeLimit = 30 * time.Minute

// world is one simulation.
type world struct {
	sc    Scenario
	orig  Scenario // as given, for the reproduce line
	seed  int64
	rng   *rand.Rand
	clock *clockwork.FakeClock
	start time.Time
	store spi.Store
	ctx   context.Context
	// ioErr is a store call of an engine part that failed (not by a
	// planted fault): the part logs it and goes on, the simulation ends.
	ioErr error

	q      eventQueue
	seq    uint64
	step   int
	phase  int
	healAt time.Time

	maxCrash int
	policy   spi.RetryPolicy
	nodes    []*node
	jumps    int // clock jumps so far
	rec      *recurringModel

	model
	probe *probe
	uq    *uniqueModel // unique.go; nil until the first unique arrival
	rq    *rateModel   // ratelimit.go; nil until the first draw
	sq    *seqModel    // sequence.go; nil until the first draw

	// id generation
	lastMs int64
	idSeq  uint16

	trace   []traceEntry
	hasher  hashWriter
	report  Report
	failure *Violation
	// touched lists the jobs a step changed or claimed, checked after it.
	touched []*sjob
	stamp   int
}

type hashWriter struct {
	h interface {
		Write([]byte) (int, error)
		Sum([]byte) []byte
	}
}

// Simulate runs one deterministic simulation of the scenario with the given
// seed and returns its report. When an invariant does not hold it stops and
// returns a *Violation naming the seed, the invariant and the trace suffix
// that shows it; any other error is a store that failed a call.
func Simulate(seed int64, sc Scenario) (Report, error) {
	orig := sc
	sc = sc.withDefaults()
	w := &world{
		orig:  orig,
		sc:    sc,
		seed:  seed,
		rng:   rand.New(rand.NewPCG(uint64(seed), 0x5eed_7a7c_4e75_ba11)),
		clock: clockwork.NewFakeClockAt(sc.Start),
		start: sc.Start,
		ctx:   context.Background(),
	}
	unplant, err := plant(sc.EngineBug)
	if err != nil {
		return Report{Seed: seed}, err
	}
	defer unplant()
	w.hasher.h = sha256.New()
	w.model.init()
	w.report = Report{Seed: seed, Faults: map[string]int{}, Checks: map[string]int{}, Final: map[spi.Status]int{},
		SignalOutcomes: map[spi.SignalOutcome]int{}, BatchOutcomes: map[spi.BatchOutcome]int{}}

	var store spi.Store
	if sc.NewStore != nil {
		s, err := sc.NewStore()
		if err != nil {
			return w.report, fmt.Errorf("simtest: seed %d: open store: %w", seed, err)
		}
		store = s
	} else {
		store = memory.New()
	}
	defer store.Close()
	if sc.WrapStore != nil {
		store = sc.WrapStore(store)
	}
	w.store = store

	w.configure()
	err = w.run()
	w.finishReport()
	if err != nil {
		return w.report, err
	}
	return w.report, nil
}

// configure lets the seed pick what the scenario leaves open.
func (w *world) configure() {
	sc := w.sc
	n := sc.Nodes
	if n <= 0 {
		n = 2 + w.rng.IntN(3)
	}
	switch {
	case sc.MaxCrashRedeliveries > 0:
		w.maxCrash = sc.MaxCrashRedeliveries
	case sc.MaxCrashRedeliveries < 0:
		w.maxCrash = 0
	default:
		w.maxCrash = w.rng.IntN(4)
	}
	w.policy = sc.RetryPolicy
	w.report.RetryPolicy = "custom"
	if w.policy == nil {
		switch r := w.rng.IntN(10); {
		case r < 8:
			w.policy, w.report.RetryPolicy = nodecore.DefaultRetryPolicy{}, "default"
		case r == 8:
			k := 1 + w.rng.IntN(3)
			w.policy, w.report.RetryPolicy = refusePolicy{from: k}, fmt.Sprintf("refuse-from-attempt-%d", k)
		default:
			d := time.Duration(100+w.rng.IntN(900)) * time.Millisecond
			w.policy, w.report.RetryPolicy = delayPolicy{d: d}, fmt.Sprintf("fixed-delay-%s", d)
		}
	}
	for i := range n {
		slots := sc.Slots
		if slots <= 0 {
			slots = 1 + w.rng.IntN(4)
			if w.rng.IntN(5) == 0 {
				slots = 8 // a pool large enough to gather free slots
			}
		}
		var gather time.Duration
		if w.rng.IntN(2) == 0 {
			gather = w.randDur(10*time.Millisecond, 200*time.Millisecond)
		}
		nd := &node{idx: i, id: fmt.Sprintf("n%d", i+1), slots: slots, execs: map[spi.ClaimRef]*exec{},
			policy: nodecore.PollPolicy{Slots: slots, Batch: 1 + w.rng.IntN(slots), Gather: gather, HeartbeatInterval: sc.HeartbeatInterval},
			batch:  1 + w.rng.IntN(8)}
		if i > 0 && !sc.NoTags {
			nd.tags = tagFilters[w.rng.IntN(len(tagFilters))]
		}
		nd.claimers = 1
		if !sc.NoTaskLimits && slots >= 2 && w.rng.IntN(3) == 0 {
			// A per-task limit below the slots: claims take more of the
			// task than it has room for, and give the rest back.
			nd.limits = map[string]int{"work": 1 + w.rng.IntN(slots-1)}
			w.report.TaskLimits = append(w.report.TaskLimits, fmt.Sprintf("%s work<=%d", nd.id, nd.limits["work"]))
		} else if w.rng.IntN(2) == 0 {
			// Two claims in flight while there is a backlog, as on a
			// store that serves concurrent claims (the per-task room
			// counts no claim in flight: a node with limits has one).
			nd.claimers = 2
		}
		w.nodes = append(w.nodes, nd)
		w.report.Slots = append(w.report.Slots, slots)
	}
	w.report.Nodes = n
	w.report.MaxCrashRedeliveries = w.maxCrash
	if w.sc.BoostInterval > 0 && (sc.Aging == AgingOn || (sc.Aging == AgingAuto && w.rng.IntN(3) == 0)) {
		lo := sc.Steps / 4
		w.probe = &probe{atStep: lo + w.rng.IntN(max(1, sc.Steps/4))}
	}
	w.tracef(nil, nil, "start: %d nodes (slots %v), max crash redeliveries %d, retry policy %s, boost %s, grace %s",
		n, w.report.Slots, w.maxCrash, w.report.RetryPolicy, sc.BoostInterval, sc.OrphanGrace)
	for _, nd := range w.nodes {
		w.tracef(nil, []*node{nd}, "%s: %d slots, claims of at most %d, gathers for %s, completes in batches of %d",
			nd.id, nd.slots, nd.policy.Batch, nd.policy.Gather, nd.batch)
		if !nd.tags.Empty() {
			w.tracef(nil, []*node{nd}, "%s claims only jobs passing %+v", nd.id, nd.tags)
		}
	}
}

// tagFilters are the affinities the seed gives nodes other than n1.
var tagFilters = []spi.TagFilter{
	{},
	{All: []string{"gpu"}},
	{None: []string{"gpu"}},
	{Any: []string{"eu", "us"}},
	{All: []string{"eu"}, None: []string{"gpu"}},
}

// jobTags are the tag sets the workload gives jobs.
var jobTags = [][]string{{"gpu"}, {"eu"}, {"us"}, {"eu", "gpu"}}

// resources are the permits of the workload, with their limits.
var resources = []struct {
	name  string
	limit int
}{{"db", 1}, {"api", 2}}

// refusePolicy refuses retries from attempt `from` on.
type refusePolicy struct{ from int }

func (p refusePolicy) ShouldRetry(attempt int, _ error) bool { return attempt < p.from }
func (p refusePolicy) Delay(int) time.Duration               { return 0 }

// delayPolicy overrides every job's backoff with a fixed delay.
type delayPolicy struct{ d time.Duration }

func (p delayPolicy) ShouldRetry(int, error) bool { return true }
func (p delayPolicy) Delay(int) time.Duration     { return p.d }

func (w *world) now() time.Time { return w.clock.Now().UTC() }

// schedule queues an event d after now.
func (w *world) schedule(d time.Duration, e *event) {
	if d < 0 {
		d = 0
	}
	w.scheduleAt(w.now().Add(d), e)
}

func (w *world) scheduleAt(at time.Time, e *event) {
	w.seq++
	e.at, e.seq = at, w.seq
	heap.Push(&w.q, e)
}

// randDur returns a duration in [lo, hi] with millisecond granularity.
func (w *world) randDur(lo, hi time.Duration) time.Duration {
	if hi <= lo {
		return lo
	}
	span := int64((hi - lo) / time.Millisecond)
	return lo + time.Duration(w.rng.Int64N(span+1))*time.Millisecond
}

func (w *world) chance(p float64) bool { return p > 0 && w.rng.Float64() < p }

// newID returns a UUIDv7 made from the simulated clock and the seeded RNG,
// so ids, and the claim order among equal jobs, are reproducible.
func (w *world) newID() uuid.UUID {
	ms := w.now().UnixMilli()
	if ms <= w.lastMs {
		ms = w.lastMs
		w.idSeq++
		if w.idSeq > 0x0fff {
			ms++
			w.idSeq = 0
		}
	} else {
		w.idSeq = 0
	}
	w.lastMs = ms
	var u uuid.UUID
	binary.BigEndian.PutUint64(u[8:], w.rng.Uint64())
	var ts [8]byte
	binary.BigEndian.PutUint64(ts[:], uint64(ms))
	copy(u[0:6], ts[2:8])
	u[6] = 0x70 | byte(w.idSeq>>8)
	u[7] = byte(w.idSeq)
	u[8] = (u[8] & 0x3f) | 0x80
	return u
}

// tracef appends one line to the trace, tagged with the jobs and nodes it
// concerns.
func (w *world) tracef(jobs []*sjob, nodes []*node, format string, args ...any) {
	line := fmt.Sprintf("#%06d %10s %s", w.step, simtime.Offset(w.now().Sub(w.start)), fmt.Sprintf(format, args...))
	e := traceEntry{line: line}
	for _, j := range jobs {
		e.jobs = append(e.jobs, j.idx)
	}
	for _, n := range nodes {
		e.nodes = append(e.nodes, n.idx)
	}
	w.trace = append(w.trace, e)
	_, _ = w.hasher.h.Write([]byte(line))
	_, _ = w.hasher.h.Write([]byte{'\n'})
}

// fail records a violation; the run stops after the current step.
func (w *world) fail(invariant string, jobs []*sjob, nodes []*node, format string, args ...any) {
	if w.failure != nil {
		return
	}
	v := &Violation{
		Seed: w.seed, Step: w.step, At: w.now().Sub(w.start), Invariant: invariant,
		Detail: fmt.Sprintf(format, args...), Reproduce: w.orig.reproduce(w.seed),
	}
	for _, j := range jobs {
		v.Jobs = append(v.Jobs, j.label)
	}
	for _, n := range nodes {
		v.Nodes = append(v.Nodes, n.id)
	}
	v.Trace = w.traceSuffix(jobs, nodes)
	w.tracef(jobs, nodes, "VIOLATION %s: %s", invariant, v.Detail)
	w.failure = v
}

// traceSuffix returns the shortest trace suffix that shows a violation: the
// last TraceTail lines concerning the given jobs, plus the faults of the
// given nodes (and clock jumps) since the first of those lines; with no job
// given, the last lines of the run.
func (w *world) traceSuffix(jobs []*sjob, nodes []*node) []string {
	tail := w.sc.TraceTail
	if len(jobs) == 0 {
		out := make([]string, 0, tail)
		for _, e := range w.trace[max(0, len(w.trace)-tail):] {
			out = append(out, e.line)
		}
		return out
	}
	want := map[int]bool{}
	for _, j := range jobs {
		want[j.idx] = true
	}
	wantNode := map[int]bool{}
	for _, n := range nodes {
		wantNode[n.idx] = true
	}
	concerns := func(e traceEntry) bool {
		for _, j := range e.jobs {
			if want[j] {
				return true
			}
		}
		return false
	}
	from, found := len(w.trace), 0
	for i := len(w.trace) - 1; i >= 0 && found < tail; i-- {
		if concerns(w.trace[i]) {
			from, found = i, found+1
		}
	}
	var out []string
	for _, e := range w.trace[from:] {
		keep := concerns(e)
		if !keep && strings.Contains(e.line, "FAULT") {
			keep = len(e.nodes) == 0 // a clock jump concerns everyone
			for _, n := range e.nodes {
				keep = keep || wantNode[n]
			}
		}
		if keep {
			out = append(out, e.line)
		}
	}
	return out
}

// storeErr turns a store error into the run's error.
// errCaught ends a pass of the engine's that the simulator runs through a
// checking store, once a check has failed: the failure is recorded, and
// the pass need not go on.
var errCaught = errors.New("an invariant failed")

func (w *world) storeErr(op string, err error) error {
	return fmt.Errorf("simtest: seed %d: step %d: store %s failed: %w", w.seed, w.step, op, err)
}

// run is the main loop.
func (w *world) run() error {
	if err := w.setupRecurring(); err != nil {
		return err
	}
	for _, n := range w.nodes {
		if err := w.startNode(n); err != nil {
			return err
		}
	}
	w.schedule(0, &event{kind: evSubmit, node: -1})
	w.schedule(w.randDur(time.Second, 5*time.Second), &event{kind: evAdmin, node: -1})

	for {
		if w.phase == phaseMain && w.step >= w.sc.Steps {
			w.enterHeal()
			if err := w.pauseRecurring(); err != nil {
				return err
			}
		}
		if w.phase == phaseHeal {
			w.releaseHeld()
		}
		if w.phase == phaseHeal && w.nonTerminal == 0 && w.unendedBatches() == 0 {
			break
		}
		if w.phase == phaseHeal && w.now().Sub(w.healAt) > healTimeLimit {
			stuck := w.stuckJobs(5)
			w.fail("nothing-lost", stuck, nil, "%d jobs still not terminal after %s with every node healthy (first: %s)",
				w.nonTerminal, healTimeLimit, describeJobs(stuck))
			break
		}
		if w.q.Len() == 0 {
			stuck := w.stuckJobs(5)
			w.fail("nothing-lost", stuck, nil, "nothing left to happen but %d jobs are not terminal (first: %s)", w.nonTerminal, describeJobs(stuck))
			break
		}
		ev := heap.Pop(&w.q).(*event)
		if !w.live(ev) {
			continue // an event of an earlier incarnation, or a forgotten poll
		}
		if ev.node >= 0 {
			n := w.nodes[ev.node]
			if n.stalled() && ev.kind != evResume {
				w.scheduleAt(n.stallUntil, ev) // frozen: it happens on resume
				continue
			}
		}
		if d := ev.at.Sub(w.now()); d > 0 {
			w.clock.Advance(d)
		}
		w.step++
		w.stamp++
		w.touched = w.touched[:0]
		if err := w.handle(ev); err != nil {
			return err
		}
		if w.phase == phaseMain && w.failure == nil {
			if err := w.injectFaults(); err != nil {
				return err
			}
		}
		if w.failure == nil {
			if err := w.checkStep(); err != nil {
				return err
			}
		}
		if w.failure != nil {
			return w.failure
		}
	}
	if w.failure != nil {
		return w.failure
	}
	return w.checkFinal()
}

func (w *world) handle(ev *event) error {
	if ev.node < 0 {
		switch ev.kind {
		case evSubmit:
			return w.submitTick()
		case evAdmin:
			return w.adminTick()
		case evHealSignal:
			w.healSignals()
		case evHealBatch:
			return w.sealBatches()
		}
		return nil
	}
	n := w.nodes[ev.node]
	switch ev.kind {
	case evPoll:
		return w.poll(n)
	case evHeartbeat:
		return w.heartbeat(n)
	case evScan:
		return w.scan(n)
	case evBodyDone:
		return w.bodyDone(n, ev.ref)
	case evFlush:
		return w.flush(n)
	case evFlushRetry:
		return w.retryWrite(n)
	case evClaimDone:
		return w.claim(n, ev.limit, true)
	case evNodeCrash:
		return w.poisonCrash(n, ev.ref)
	case evResume:
		n.stallUntil = time.Time{}
		w.tracef(nil, []*node{n}, "%s resumes, believing it owns %s", n.id, w.refsOf(w.beliefs(n)))
		return nil
	case evRestart:
		return w.startNode(n)
	case evDrainLimit:
		return w.drainLimit(n)
	case evRecurring:
		return w.recurringPass(n)
	case evSweep:
		return w.sweepPass(n)
	case evBatchFinish:
		return w.finishPass(n)
	case evClaimCheck:
		return w.wakeCheck(n)
	case evTimeout:
		return w.expire(n, ev.ref)
	}
	return nil
}

// enterHeal ends fault injection and submissions, and brings every node
// back so that everything submitted can reach a terminal state.
func (w *world) enterHeal() {
	w.phase = phaseHeal
	w.healAt = w.now()
	w.report.MainSteps = w.step
	w.tracef(nil, nil, "heal: no more faults or submissions; every node comes back")
	for _, task := range slices.Sorted(maps.Keys(w.paused)) {
		if err := w.resumeTask(spi.CapabilitiesOf(w.store).Pauser, task); err != nil {
			w.ioErr = err
		}
	}
	for _, n := range w.nodes {
		switch {
		case n.stalled():
			// its resume is queued
		case n.state == nodeCrashed || n.state == nodeStopped:
			if !n.restartQueued {
				n.restartQueued = true
				w.schedule(0, &event{kind: evRestart, node: n.idx, inc: n.inc})
			}
		}
	}
	if w.probe != nil && w.probe.active {
		w.probe.active = false // the flood ends with the main phase
	}
	w.schedule(0, &event{kind: evHealSignal, node: -1})
	w.schedule(0, &event{kind: evHealBatch, node: -1})
}

func (w *world) finishReport() {
	r := &w.report
	r.Steps = w.step
	if w.phase == phaseMain {
		r.MainSteps = w.step
	}
	r.HealSteps = r.Steps - r.MainSteps
	r.SimulatedTime = w.now().Sub(w.start)
	for _, j := range w.jobs {
		r.Final[j.status]++
		switch {
		case j.poison:
			r.PoisonJobs++
		case j.flood:
			r.FloodJobs++
		}
	}
	r.Jobs = len(w.jobs)
	r.Workflows = len(w.flows)
	r.SignalWaits = w.waits
	r.Batches = len(w.batches)
	for _, b := range w.batches {
		r.BatchChildren += len(b.kids)
		if b.outcome != "" {
			r.BatchOutcomes[b.outcome]++
		}
	}
	for _, j := range w.jobs {
		if j.sig != nil && j.sig.outcome != "" {
			r.SignalOutcomes[j.sig.outcome]++
		}
	}
	for _, f := range w.flows {
		r.WorkflowJobs += len(f.jobs)
		for _, j := range f.jobs {
			if j.callback {
				r.Callbacks++
			}
		}
	}
	r.TraceHash = hex.EncodeToString(w.hasher.h.Sum(nil))
	if w.sc.KeepTrace {
		r.Trace = make([]string, len(w.trace))
		for i, e := range w.trace {
			r.Trace[i] = e.line
		}
	}
}
