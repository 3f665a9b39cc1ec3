package cluster

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/ratchet-go/ratchet/simtest/internal/simtime"

	"github.com/ratchet-go/ratchet/simtest"

	"github.com/ratchet-go/ratchet/sdk/spi"
)

// AgingMode selects whether a simulation runs the aging probe: a LOWEST job
// submitted into a continuous flood of CRITICAL jobs, which must be claimed
// within the bound that the aging formula implies.
type AgingMode int

// The aging modes.
const (
	// AgingAuto lets the seed decide: about one run in three has a probe.
	AgingAuto AgingMode = iota
	// AgingOn runs the probe in every simulation (when aging is enabled).
	AgingOn
	// AgingOff never runs the probe.
	AgingOff
)

// FaultRates are the probabilities, per simulation step of the main phase,
// of each kind of injected fault. A zero rate disables that kind.
type FaultRates struct {
	// Crash kills a random node at whatever point it is: idle, with jobs
	// mid-execution, or with finished jobs whose completions are not yet
	// written. Its in-memory state is lost; its node row goes stale.
	Crash float64
	// CrashAtHook is the probability, at each of a node's hook points, that
	// the node dies exactly there: before a claim call, right after a claim
	// returned (jobs owned but never started), and between the end of an
	// execution and its completion write.
	CrashAtHook float64
	// Stall freezes a node (a GC pause, a frozen VM) for a random time, half
	// the time longer than the orphan grace period; on resume its buffered
	// actions run with what it still believes it owns, and every write
	// about a job recovered meanwhile must be superseded.
	Stall float64
	// Stop begins a graceful stop of a node with a drain timeout; whatever
	// is still running at the deadline is released. The node restarts later.
	Stop float64
	// ClockJump moves the shared clock forward by up to 30 s at once (an
	// NTP step, a suspended host), which can make healthy heartbeats stale.
	ClockJump float64
	// HeartbeatOutage makes a node's heartbeat writes fail for half the
	// orphan grace to three times it (a broken connection that its claims
	// do not use): peers recover its running jobs, and its poller must not
	// claim under the stale row.
	HeartbeatOutage float64
	// CompletionOutage makes a node's completion writes fail for up to
	// 20 s: its completer holds the batch and tries it again after its
	// backoff (Report.CompleterRetries).
	CompletionOutage float64
	// ClaimOutage makes a node's claims fail for up to 10 s, half of them
	// after the store applied them (the answer lost; only on a store with
	// spi.ClaimAdopter, which nodes adopt such claims through): the poller breaker
	// may open and probe, and the next claim that succeeds adopts the
	// jobs of the lost ones (Report.ClaimFailures, Adopted).
	ClaimOutage float64
}

// DefaultFaultRates returns the fault rates used when Scenario.Faults is nil.
func DefaultFaultRates() FaultRates {
	return FaultRates{Crash: 0.002, CrashAtHook: 0.003, Stall: 0.002, Stop: 0.001, ClockJump: 0.0005, HeartbeatOutage: 0.001, CompletionOutage: 0.001, ClaimOutage: 0.001}
}

// Scenario configures a simulation. The zero value is a complete default
// scenario: the seed picks what a zero field leaves open.
type Scenario struct {
	// Steps is the number of steps of the main phase, in which jobs are
	// submitted and faults injected; default 2000. A step is one action of
	// one node, of the workload or of the fault injector. A heal phase
	// follows, with every node healthy, until every job is terminal.
	Steps int
	// Nodes is the number of virtual nodes; zero lets the seed pick 2..4.
	Nodes int
	// Slots is each node's concurrency; zero lets the seed pick 1..4 or 8
	// per node. The seed also picks each node's claim batch (1..slots), its
	// gather timeout (none, or up to 200 ms) and its completer's batch
	// (1..8): the engine's PollPolicy and NextBatch decide with them.
	Slots int
	// MaxCrashRedeliveries is the crash budget. Zero lets the seed pick
	// 0..3; a negative value means a budget of zero (fail on first crash).
	MaxCrashRedeliveries int
	// Start is the simulated start time; default simtest.DefaultStart.
	Start time.Time
	// HeartbeatInterval defaults to 1 s, OrphanGrace to 5 s and
	// OrphanScanInterval to 3 s: the engine's ratios, compressed so that a
	// run sees many recoveries.
	HeartbeatInterval  time.Duration
	OrphanGrace        time.Duration
	OrphanScanInterval time.Duration
	// BoostInterval is the aging interval B; default 5 s, negative disables
	// aging (and the aging probe).
	BoostInterval time.Duration
	// MinPollInterval (default 50 ms) and PollInterval (default 1 s) bound a
	// node's adaptive poll delay, which doubles while polls come back empty.
	MinPollInterval time.Duration
	PollInterval    time.Duration
	// DrainTimeout bounds a graceful stop's drain; zero lets the seed pick
	// one between 0.5 s and twice the OrphanGrace per stop.
	DrainTimeout time.Duration
	// MaxJobs caps the jobs the workload submits (aging flood jobs aside);
	// zero means no cap. Either way submissions pause while 100 submitted
	// jobs are not yet terminal.
	MaxJobs int
	// NoTaskLimits gives no node a per-task limit (by default one node in
	// three with two slots or more limits the "work" task below them).
	NoTaskLimits bool
	// Faults sets the fault rates; nil means DefaultFaultRates, a pointer
	// to a zero FaultRates injects none.
	Faults *FaultRates
	// Aging selects the aging probe.
	Aging AgingMode
	// NoTags turns off tag affinity. By default the seed gives some nodes a
	// tag filter (ClaimParams.Tags; node n1 always accepts every job, so
	// each job has a node that may run it) and some jobs tags.
	NoTags bool
	// Permits makes some jobs hold a resource permit (Job.Resource, limit
	// 1 for "db", 2 for "api"); claims must skip jobs whose resource is
	// full and never exceed a limit. Off by default: see the report's note
	// on the memory store.
	Permits bool
	// RetryPolicy, when set, is the policy every node uses; nil lets the
	// seed pick the engine's default policy or one of two custom ones.
	RetryPolicy spi.RetryPolicy
	// NewStore opens the store under test; nil means a new memory store.
	// It must return a fresh, empty store.
	NewStore func() (spi.Store, error)
	// WrapStore, when set, wraps the store before use: a test can plant a
	// deliberately broken variant and show the simulator catches it.
	WrapStore func(spi.Store) spi.Store
	// EngineBug, when set, plants a deliberately broken engine decision
	// (one of EngineBugs) in every node instead of the engine's own: a test
	// can show the simulator catches it.
	EngineBug string
	// NoRecurring turns off the recurring workload: by default one seed in
	// two registers a schedule that every node fires with the engine's
	// RecurringPass, checked slot by slot.
	NoRecurring bool
	// NoWorkflows turns off the workflow workload: by default, on a store
	// that keeps workflows (spi.WorkflowStore), about one arrival in five
	// is a small workflow, dispatched by the engine's gate and checked by
	// the workflow invariants (see workflow.go).
	NoWorkflows bool
	// NoSignals turns off the signal workload: by default, on a store that
	// keeps signals (spi.SignalStore), about one arrival in eight is jobs
	// that wait for a signal, delivered by id or key, timed out by every
	// node's sweeper or cancelled, and checked by signal-once (see
	// signal.go).
	NoSignals bool
	// NoBatches turns off the batch workload: by default, on a store that
	// keeps batches (spi.BatchStore), about one arrival in ten is a batch
	// of children with callbacks, some written in two chunks, ended by
	// every node's finisher pass or cancelled, and checked by batch-once
	// (see batch.go).
	NoBatches bool
	// NoUnique turns off the unique workload: by default, on a store that
	// keeps unique keys (spi.UniqueStore), about one ordinary arrival in
	// four is a unique or a debounced submission through the SDK's
	// client, checked by unique and debounce (see unique.go, debounce.go),
	// and about one in seven is rate-limited jobs, checked by rate-limit
	// (ratelimit.go).
	NoUnique bool
	// KeepTrace keeps the full event trace in the Report.
	KeepTrace bool
	// TraceTail is how many trace events a violation shows; default 25.
	TraceTail int
}

// withDefaults resolves the fields that do not depend on the seed.
func (sc Scenario) withDefaults() Scenario {
	defd := func(p *time.Duration, d time.Duration) {
		if *p == 0 {
			*p = d
		}
	}
	if sc.Steps <= 0 {
		sc.Steps = 2000
	}
	if sc.Start.IsZero() {
		sc.Start = simtest.DefaultStart
	}
	sc.Start = sc.Start.UTC().Truncate(time.Millisecond)
	defd(&sc.HeartbeatInterval, time.Second)
	defd(&sc.OrphanGrace, 5*time.Second)
	defd(&sc.OrphanScanInterval, 3*time.Second)
	defd(&sc.BoostInterval, 5*time.Second)
	if sc.BoostInterval < 0 {
		sc.BoostInterval = 0
	}
	defd(&sc.MinPollInterval, 50*time.Millisecond)
	defd(&sc.PollInterval, time.Second)
	if sc.MinPollInterval > sc.PollInterval {
		sc.MinPollInterval = sc.PollInterval
	}
	if sc.Faults == nil {
		f := DefaultFaultRates()
		sc.Faults = &f
	}
	if sc.TraceTail <= 0 {
		sc.TraceTail = 25
	}
	return sc
}

// Report summarizes one simulation. Everything in it, the trace hash
// included, is a function of the seed and the scenario.
type Report struct {
	// Seed is the seed the run was made with.
	Seed int64
	// Steps is the number of steps run: MainSteps plus HealSteps.
	Steps, MainSteps, HealSteps int
	// SimulatedTime is how far the fake clock moved.
	SimulatedTime time.Duration
	// Nodes is the number of nodes and Slots their concurrency.
	Nodes int
	Slots []int
	// MaxCrashRedeliveries is the crash budget in force.
	MaxCrashRedeliveries int
	// RetryPolicy names the retry policy the nodes used.
	RetryPolicy string
	// Jobs counts submitted jobs (duplicates of an idempotency key aside);
	// PoisonJobs those that crash their node whenever they run; FloodJobs
	// the CRITICAL jobs of the aging probe.
	Jobs, PoisonJobs, FloodJobs int
	// Final counts the jobs by their state at the end.
	Final map[spi.Status]int
	// Faults counts injected faults by kind, e.g. "crash:mid-execution",
	// "stall>grace", "stop:drain-timeout", "clock-jump"; "poison-crash"
	// counts node deaths caused by poison jobs.
	Faults map[string]int
	// Checks counts invariant checks made, by invariant.
	Checks map[string]int
	// Claims counts claim calls, Claimed the jobs they returned;
	// Completions the owner writes sent, Superseded those reported
	// superseded; Released and Recovered the jobs given back by graceful
	// stops and by orphan recovery; Swept the jobs the start-by sweeper
	// failed unstarted.
	Claims, Claimed, Completions, Superseded, Released, Recovered, Swept int
	// CompleterRetries counts the completer's writes that failed and were
	// held for a retry; GiveBacks the claimed jobs that a per-task limit
	// gave back.
	CompleterRetries, GiveBacks int
	// ClaimFailures counts the claims an outage failed (LostAnswers of
	// them after the store applied them), Adopted the jobs adopted after.
	ClaimFailures, LostAnswers, Adopted int
	// MaxClaimsInFlight is the most claims a node had in flight at once
	// (its poll loop starts a second one while there is a backlog).
	MaxClaimsInFlight int
	// TaskLimits lists the per-task limits of the nodes that have one,
	// e.g. "n2 work<=1".
	TaskLimits []string
	// Aging is the aging probe's outcome; nil when none ran.
	Aging *AgingResult
	// Recurring describes the recurring schedule (expression and
	// policies); empty when the run had none. RecurringFires counts the
	// jobs its fires wrote.
	Recurring      string
	RecurringFires int
	// Workflows counts the workflows submitted, WorkflowJobs their jobs
	// and Callbacks the callback steps among them.
	Workflows, WorkflowJobs, Callbacks int
	// SignalWaits counts the jobs submitted waiting for a signal, and
	// SignalOutcomes how their waits ended.
	SignalWaits    int
	SignalOutcomes map[spi.SignalOutcome]int
	// Batches counts the batches submitted, BatchChildren their children
	// and BatchOutcomes how they ended.
	Batches, BatchChildren int
	BatchOutcomes          map[spi.BatchOutcome]int
	// TraceHash is the SHA-256 of the event trace, in hex.
	TraceHash string
	// Trace is the full event trace, one line per event, when
	// Scenario.KeepTrace is set.
	Trace []string
}

// AgingResult is the outcome of the aging probe.
type AgingResult struct {
	// Probe is the LOWEST job's label; Due its due time, as an offset from
	// the start.
	Probe string
	Due   time.Duration
	// Wait is how long it waited from due to its first claim.
	Wait time.Duration
	// Bound is the asserted limit: 5·BoostInterval + (TotalSlots+2) ·
	// MaxClaimGap. After 4·B of waiting a LOWEST job's effective priority
	// equals a fresh CRITICAL job's and it wins the tie by its earlier due
	// time; one more interval makes it win against CRITICAL jobs that
	// waited up to 2·B. The flood keeps the due CRITICAL backlog to one
	// claim's worth, plus at most every slot's jobs handed back by a crash
	// or a retry, so the probe is among the next TotalSlots+2 claims; each
	// comes at most MaxClaimGap after the last.
	Bound time.Duration
	// BoostInterval is the aging interval B in force.
	BoostInterval time.Duration
	// MaxClaimGap is the longest simulated time between two claim calls of
	// nodes that may run the probe, while it waited.
	MaxClaimGap time.Duration
	// TotalSlots is the concurrency of all nodes together.
	TotalSlots int
	// FloodJobs is the number of CRITICAL jobs submitted during the probe.
	FloodJobs int
}

// Summary renders the report as a few deterministic lines.
func (r Report) Summary() string {
	var b strings.Builder
	fmt.Fprintf(&b, "seed %d: %d steps (%d main + %d heal), simulated %s\n", r.Seed, r.Steps, r.MainSteps, r.HealSteps, r.SimulatedTime)
	slots := make([]string, len(r.Slots))
	for i, s := range r.Slots {
		slots[i] = fmt.Sprint(s)
	}
	fmt.Fprintf(&b, "nodes %d (slots %s), max crash redeliveries %d, retry policy %s\n",
		r.Nodes, strings.Join(slots, ","), r.MaxCrashRedeliveries, r.RetryPolicy)
	fmt.Fprintf(&b, "jobs %d (poison %d, aging flood %d); final:", r.Jobs, r.PoisonJobs, r.FloodJobs)
	for _, st := range []spi.Status{spi.StatusSucceeded, spi.StatusFailed, spi.StatusCancelled, spi.StatusSkipped,
		spi.StatusPending, spi.StatusRunning, spi.StatusBlocked, spi.StatusWaiting} {
		if n := r.Final[st]; n > 0 || st.Terminal() {
			fmt.Fprintf(&b, " %s %d", st, n)
		}
	}
	b.WriteString("\n")
	fmt.Fprintf(&b, "faults: %s\n", sortedCounts(r.Faults))
	fmt.Fprintf(&b, "operations: claims %d (jobs %d), completions %d (superseded %d, completer retries %d), released %d, recovered %d, swept unstarted %d\n",
		r.Claims, r.Claimed, r.Completions, r.Superseded, r.CompleterRetries, r.Released, r.Recovered, r.Swept)
	fmt.Fprintf(&b, "claims in flight: at most %d; claim outages: %d claims failed (%d answers lost), %d jobs adopted\n",
		r.MaxClaimsInFlight, r.ClaimFailures, r.LostAnswers, r.Adopted)
	if len(r.TaskLimits) > 0 {
		fmt.Fprintf(&b, "task limits: %s; give-backs %d\n", strings.Join(r.TaskLimits, ", "), r.GiveBacks)
	} else {
		b.WriteString("task limits: none\n")
	}
	total := 0
	for _, n := range r.Checks {
		total += n
	}
	fmt.Fprintf(&b, "invariant checks: %d (%s)\n", total, sortedCounts(r.Checks))
	if a := r.Aging; a != nil {
		fmt.Fprintf(&b, "aging probe: LOWEST %s claimed %s after due (bound %s = 5×%s + %d×%s), %d CRITICAL flood jobs\n",
			a.Probe, a.Wait, a.Bound, a.BoostInterval, a.TotalSlots+2, a.MaxClaimGap, a.FloodJobs)
	} else {
		b.WriteString("aging probe: not run\n")
	}
	if r.Workflows > 0 {
		fmt.Fprintf(&b, "workflows %d (%d jobs, %d callbacks)\n", r.Workflows, r.WorkflowJobs, r.Callbacks)
	} else {
		b.WriteString("workflows: none\n")
	}
	if r.SignalWaits > 0 {
		fmt.Fprintf(&b, "signal waits %d (delivered %d, timed out %d, cancelled %d)\n", r.SignalWaits,
			r.SignalOutcomes[spi.SignalDelivered], r.SignalOutcomes[spi.SignalTimedOut], r.SignalOutcomes[spi.SignalCancelled])
	} else {
		b.WriteString("signal waits: none\n")
	}
	if r.Batches > 0 {
		fmt.Fprintf(&b, "batches %d of %d children (succeeded %d, failed %d, cancelled %d)\n", r.Batches, r.BatchChildren,
			r.BatchOutcomes[spi.BatchSucceeded], r.BatchOutcomes[spi.BatchFailed], r.BatchOutcomes[spi.BatchCancelled])
	} else {
		b.WriteString("batches: none\n")
	}
	if r.Recurring != "" {
		fmt.Fprintf(&b, "recurring schedule %s: %d fires\n", r.Recurring, r.RecurringFires)
	} else {
		b.WriteString("recurring schedule: none\n")
	}
	fmt.Fprintf(&b, "trace sha256 %s\n", r.TraceHash)
	return b.String()
}

func sortedCounts(m map[string]int) string {
	if len(m) == 0 {
		return "none"
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s %d", k, m[k])
	}
	return strings.Join(parts, ", ")
}

// Violation is the error Simulate returns when an invariant does not hold.
// Its message names the seed, the invariant, what was seen, and the last
// trace events concerning the jobs involved, enough to reproduce and read
// the failure without rerunning it.
type Violation struct {
	// Seed is the seed that reproduces the violation.
	Seed int64
	// Step is the step after which the check failed, At its simulated time
	// as an offset from the start.
	Step int
	At   time.Duration
	// Invariant names the broken invariant, e.g. "fence" or "claim-order".
	Invariant string
	// Detail says what was expected and what the store did.
	Detail string
	// Jobs and Nodes are the labels of the jobs and nodes involved.
	Jobs  []string
	Nodes []string
	// Trace is the shortest trace suffix that shows the problem: the last
	// events concerning the jobs involved (or, with no job involved, the
	// last events of the run).
	Trace []string
	// Reproduce is a command line that replays the run, e.g.
	// "go run ./simtest/cmd/simtest -seed 7 -steps 3000 -drain 10s", with a
	// note of the scenario parts the command cannot express (a custom store
	// or wrapper, retry policy or fault rates).
	Reproduce string
}

// reproduce renders the command line that replays seed under sc (the
// scenario as given, before defaults).
func (sc Scenario) reproduce(seed int64) string {
	steps := sc.Steps
	if steps <= 0 {
		steps = 2000
	}
	run := "go run ./simtest/cmd/simtest"
	if sc.EngineBug != "" {
		run = "go run -tags ratchet_bugs ./simtest/cmd/simtest"
	}
	args := []string{run, fmt.Sprintf("-seed %d -steps %d", seed, steps)}
	if sc.Nodes > 0 {
		args = append(args, fmt.Sprintf("-nodes %d", sc.Nodes))
	}
	if sc.Slots > 0 {
		args = append(args, fmt.Sprintf("-slots %d", sc.Slots))
	}
	if sc.MaxCrashRedeliveries != 0 {
		args = append(args, fmt.Sprintf("-max-crash %d", sc.MaxCrashRedeliveries))
	}
	for _, d := range []struct {
		flag string
		v    time.Duration
	}{{"-grace", sc.OrphanGrace}, {"-heartbeat", sc.HeartbeatInterval}, {"-drain", sc.DrainTimeout}, {"-boost", sc.BoostInterval}} {
		if d.v != 0 {
			args = append(args, fmt.Sprintf("%s %s", d.flag, d.v))
		}
	}
	if sc.NoTags {
		args = append(args, "-no-tags")
	}
	if sc.NoTaskLimits {
		args = append(args, "-no-task-limits")
	}
	if sc.Permits {
		args = append(args, "-permits")
	}
	if sc.EngineBug != "" {
		args = append(args, "-engine-bug "+sc.EngineBug)
	}
	if sc.NoRecurring {
		args = append(args, "-no-recurring")
	}
	if sc.NoWorkflows {
		args = append(args, "-no-workflows")
	}
	if sc.NoSignals {
		args = append(args, "-no-signals")
	}
	if sc.NoBatches {
		args = append(args, "-no-batches")
	}
	if sc.NoUnique {
		args = append(args, "-no-unique")
	}
	switch sc.Aging {
	case AgingOn:
		args = append(args, "-aging on")
	case AgingOff:
		args = append(args, "-aging off")
	}
	var custom []string
	if sc.Faults != nil {
		if *sc.Faults == (FaultRates{}) {
			args = append(args, "-no-faults")
		} else if *sc.Faults != DefaultFaultRates() {
			custom = append(custom, "fault rates")
		}
	}
	if sc.NewStore != nil {
		custom = append(custom, "store")
	}
	if sc.WrapStore != nil {
		custom = append(custom, "store wrapper")
	}
	if sc.RetryPolicy != nil {
		custom = append(custom, "retry policy")
	}
	if !sc.Start.IsZero() || sc.OrphanScanInterval != 0 || sc.MinPollInterval != 0 || sc.PollInterval != 0 || sc.MaxJobs != 0 {
		custom = append(custom, "timing options")
	}
	out := strings.Join(args, " ")
	if len(custom) > 0 {
		out += " (with the scenario's own " + strings.Join(custom, ", ") + ")"
	}
	return out
}

// Error renders the violation: seed, invariant, detail, a command that
// reproduces it and the trace suffix.
func (v *Violation) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "simtest: seed %d: invariant %q violated at step %d (t=%s): %s\n",
		v.Seed, v.Invariant, v.Step, simtime.Offset(v.At), v.Detail)
	fmt.Fprintf(&b, "reproduce: %s\n", v.Reproduce)
	about := "the run"
	if len(v.Jobs) > 0 {
		about = strings.Join(v.Jobs, ", ")
	}
	fmt.Fprintf(&b, "last %d events concerning %s:\n", len(v.Trace), about)
	for _, l := range v.Trace {
		b.WriteString("  ")
		b.WriteString(l)
		b.WriteString("\n")
	}
	return b.String()
}
