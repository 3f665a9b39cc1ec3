package chaos

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	ratchet "github.com/ratchet-go/ratchet/sdk"
)

// FaultKind is a kind of fault the harness injects into a worker process.
type FaultKind string

// The fault kinds.
const (
	// FaultKill sends SIGKILL; the supervisor restarts the node (under the
	// same node id) after the fault's duration.
	FaultKill FaultKind = "kill"
	// FaultStop sends SIGSTOP, then SIGCONT after the fault's duration (at
	// most 10 s): past the grace period, the other nodes recover the frozen
	// node's jobs and its writes after SIGCONT must all be superseded.
	FaultStop FaultKind = "stop"
	// FaultTerm sends SIGTERM (a graceful stop: drain, then release what is
	// still running) and restarts the node the fault's duration after it
	// exited.
	FaultTerm FaultKind = "term"
	// FaultLatency delays every chunk of bytes between the node and the
	// database by the fault's Latency (100 to 500 ms), for its duration.
	FaultLatency FaultKind = "latency"
	// FaultReset resets every connection between the node and the
	// database at once.
	FaultReset FaultKind = "reset"
	// FaultBlackhole holds every byte and every new connection between the
	// node and the database for the fault's duration (a partition), then
	// lets them through.
	FaultBlackhole FaultKind = "blackhole"
	// FaultSkew steps the node's clock (the engine's, through the worker's
	// --control input) by the fault's Skew, a seeded offset within
	// ±Scenario.MaxSkew, for its duration, then back to the true time.
	FaultSkew FaultKind = "skew"
	// FaultRestartDB runs Scenario.RestartDB, the command that restarts
	// the database and returns once it is up again; every node loses its
	// connections at once and must reconnect. It needs that command, so
	// it is never a default and "all" does not name it.
	FaultRestartDB FaultKind = "restart-db"
	// FaultFailover runs Scenario.Failover, the command that fails the
	// database over to its standby (for PostgreSQL: stop the primary as a
	// crash would, promote the standby) and returns once the new primary
	// accepts writes; the DSN must reach whichever server is the primary
	// (a multi-host DSN with target_session_attrs=read-write). Every node
	// loses its connections and must find the new primary. It needs that
	// command, so it is never a default and "all" does not name it.
	FaultFailover FaultKind = "failover"
	// FaultDBNodeLoss runs Scenario.DBNodeLoss, the command that kills one
	// server of a multi-primary database cluster (a Galera node) and
	// returns at once, then, after the fault's duration,
	// Scenario.DBNodeRejoin, which brings it back and returns once it has
	// rejoined. The nodes connected to the lost server must reconnect to
	// another. It needs both commands, so it is never a default.
	FaultDBNodeLoss FaultKind = "db-node-loss"
)

// The network faults go through a TCP proxy on 127.0.0.1 that the harness
// runs between each node and the database (only when one is enabled).

// DefaultFaults are the fault kinds of a Scenario whose Faults is nil: the
// process faults.
var DefaultFaults = []FaultKind{FaultKill, FaultStop, FaultTerm}

// AllFaults are the fault kinds that "all" names: the process faults, the
// network faults and clock skew. The database faults (FaultRestartDB,
// FaultFailover, FaultDBNodeLoss), which need commands of the scenario,
// are named on their own.
var AllFaults = []FaultKind{FaultKill, FaultStop, FaultTerm, FaultLatency, FaultReset, FaultBlackhole, FaultSkew}

// knownFaults are every fault kind this version injects.
var knownFaults = append(slices.Clone(AllFaults), FaultRestartDB, FaultFailover, FaultDBNodeLoss)

// isDB reports whether k is a fault of the database, which hits every node
// at once.
func (k FaultKind) isDB() bool {
	return k == FaultRestartDB || k == FaultFailover || k == FaultDBNodeLoss
}

// isNet reports whether k goes through the proxy.
func (k FaultKind) isNet() bool {
	return k == FaultLatency || k == FaultReset || k == FaultBlackhole
}

// ParseFaults parses a comma-separated list of fault kinds
// ("kill,stop,term,latency,reset,blackhole,skew,restart-db"); "all" names
// AllFaults (every kind but restart-db: "all,restart-db" adds it), "none"
// or "" none.
func ParseFaults(s string) ([]FaultKind, error) {
	s = strings.TrimSpace(s)
	switch s {
	case "all":
		return slices.Clone(AllFaults), nil
	case "", "none":
		return []FaultKind{}, nil
	}
	var out []FaultKind
	for _, part := range strings.Split(s, ",") {
		k := FaultKind(strings.TrimSpace(part))
		kinds := []FaultKind{k}
		if k == "all" {
			kinds = AllFaults
		} else if !slices.Contains(knownFaults, k) {
			return nil, fmt.Errorf("chaos: unknown fault kind %q (known: kill, stop, term, latency, reset, blackhole, skew, restart-db, failover, db-node-loss)", part)
		}
		for _, k := range kinds {
			if !slices.Contains(out, k) {
				out = append(out, k)
			}
		}
	}
	return out, nil
}

// Defaults of a Scenario's zero fields.
const (
	DefaultWorkers     = 3
	DefaultDuration    = 30 * time.Second
	MaxQuiet           = 30 * time.Second
	DefaultJobs        = 200
	DefaultPermitJobs  = 40
	DefaultPermitLimit = 2
	DefaultPoisonJobs  = 1
	DefaultMaxCrashes  = 3
	DefaultWorkflows   = 6
	DefaultSchedules   = 1
	// MaxFault is the longest a fault lasts.
	MaxFault = 10 * time.Second
)

// PermitResource is the resource the workload's permit jobs hold.
const PermitResource = "chaos.permit"

// Workload is the probe jobs a run submits. Zero fields take the defaults;
// a negative count means none.
type Workload struct {
	// Jobs is the number of chaos.sleep jobs (default 200).
	Jobs int
	// PermitJobs is the number of chaos.permit jobs, each holding a permit
	// of PermitResource (default 40).
	PermitJobs int
	// PermitLimit is PermitResource's number of permits (default 2).
	PermitLimit int
	// PoisonJobs is the number of chaos.poison jobs (default 1): each kills
	// every node that runs it until the crash budget fails it.
	PoisonJobs int
	// MinMillis and MaxMillis bound the sleep of a sleep or permit job
	// (default 50 and 500).
	MinMillis, MaxMillis int
	// Workflows is the number of probe workflows (default 6): diamonds of
	// chaos.step jobs A → {B, C} → D, one in three with B told to fail
	// (D must then not run); see InvWorkflowOrder.
	Workflows int
	// Schedules is the number of probe recurring schedules (default 1):
	// chaos.sleep every 2 s (ScheduleExpr) from the start of the fault
	// phase, paused at its end; see InvRecurringSlots.
	Schedules int
	// NoProbes submits no probe job, workflow or schedule at all: only
	// the application's workload (Scenario.Submit, Scenario.WorkerSubmits).
	NoProbes bool
}

// Scenario is one chaos run. Only DSN is required.
type Scenario struct {
	// DSN is the database: a postgres:// URL, a MySQL/MariaDB one
	// (mysql://… or the driver's user@tcp(host:port)/ form), or an SQLite
	// file that the workers share: sqlite:PATH or sqlite:///ABSOLUTE/PATH
	// (created and migrated when missing, never removed; it should hold no
	// jobs), or sqlite alone for a new temporary file, removed after a
	// clean run and kept (named in the report) after a violation.
	DSN string
	// Schema is the PostgreSQL schema, or the MySQL database, of the run.
	// Empty means a new one named ratchet_chaos_SEED_UNIXNANO, dropped at
	// the end of a clean run (kept for inspection after a violation). A
	// named one is created and migrated when missing and never dropped; it
	// should hold no jobs. SQLite has none: the DSN names the file.
	Schema string
	// Worker is the worker command and its first arguments; the harness
	// appends --dsn, --schema, --node and, with Plant, --plant. The worker
	// must run RunWorker (WorkerMain) so that it understands them. Empty
	// means the probe worker chaos/cmd/worker, built with the go command
	// (BuildWorker) into a temporary folder.
	Worker []string
	// Workers is the number of worker processes (default 3; at least 2
	// when faults are enabled, so that one node is always up).
	Workers int
	// Duration is the length of the fault phase (default 30 s). A quiet
	// phase without faults follows, of at most Quiet, by whose end every
	// job must be terminal.
	Duration time.Duration
	// Quiet bounds the quiet phase (default and maximum 30 s); it ends
	// earlier once every job is terminal.
	Quiet time.Duration
	// Seed chooses the fault schedule and the workload: the same seed (with
	// the same Workers, Duration, Faults and Workload) gives the same ones.
	Seed uint64
	// Faults are the enabled fault kinds: nil means DefaultFaults (kill,
	// stop, term), an empty non-nil slice none. Each enabled kind is injected at least
	// once, or the run fails.
	Faults []FaultKind
	// RestartDB is the command (and its arguments) that restarts the
	// database and returns once it is up again, e.g. pg_ctlcluster 15 main
	// restart; FaultRestartDB runs it, and needs it. Not on SQLite.
	RestartDB []string
	// Failover is the command that fails the database over to its standby
	// and returns once the new primary accepts writes (and, to fail over
	// again, once a new standby follows it); FaultFailover runs it, and
	// needs it. The DSN must reach whichever server is the primary. Not
	// on SQLite.
	Failover []string
	// DBNodeLoss is the command that kills one server of the database's
	// cluster and returns at once, and DBNodeRejoin the one that brings it
	// back and returns once it has rejoined; FaultDBNodeLoss runs them,
	// and needs both. Not on SQLite.
	DBNodeLoss, DBNodeRejoin []string
	// SpreadHosts, for a DSN that lists several servers
	// (mysql://user@host1:port,host2:port,host3:port/db), gives worker i the
	// list turned by i places, so that the workers write through different
	// servers of a multi-primary cluster (Galera's multi-writer layout),
	// each moving to the next when its server is lost. Without it every
	// worker writes through the first server that answers (single-writer).
	SpreadHosts bool
	// MaxSkew bounds the offset of a FaultSkew: each is a seeded offset of
	// MaxSkew/2 to MaxSkew, ahead or behind. Zero means DefaultMaxSkew
	// (500 ms); at most MaxSkewLimit (1 s).
	MaxSkew time.Duration
	// Workload is the probe jobs submitted during the fault phase.
	Workload Workload
	// Submit, when set, is the application's own workload, run in this
	// process at the start of the fault phase with a client of the run's
	// schema, a random source of the seed (WorkloadRand) and the window
	// (the first two thirds of the fault phase) over which to spread its
	// submissions; it must return before the fault phase ends. Every job
	// it submits through the client is checked as the probe jobs are.
	Submit SubmitFunc
	// WorkerSubmits runs the worker command once more, with --submit, as
	// the submitter of its own workload (WithWorkload in its main): the
	// form for the command line, where the harness cannot call the
	// application's Go code. Not with Submit.
	WorkerSubmits bool
	// MaxCrashRedeliveries is the nodes' crash budget
	// (RATCHET_NODE_MAX_CRASH_REDELIVERIES); 0 means the default 3. The
	// crash-budget invariant is checked against it.
	MaxCrashRedeliveries int
	// Plant is a planted store defect passed to the workers (--plant), for
	// testing the harness itself: see Plant* constants.
	Plant string
	// Env are extra KEY=VALUE variables of the workers, after the harness's
	// own (so they override its node timings: 1 s heartbeats, 3 s grace,
	// 1 s orphan scans, 4 jobs at once, 3 s drain).
	Env []string
	// LogDir receives each worker's stderr (the engine's logs), NODE.log.
	// Empty means a new temporary folder, named in the report after a
	// violation and removed after a clean run.
	LogDir string
	// Progress, when set, receives a line per fault as it is injected.
	Progress io.Writer
}

// withDefaults returns sc with its zero fields set.
func (sc Scenario) withDefaults() Scenario {
	if sc.Workers == 0 {
		sc.Workers = DefaultWorkers
	}
	if sc.Duration == 0 {
		sc.Duration = DefaultDuration
	}
	if sc.Quiet == 0 || sc.Quiet > MaxQuiet {
		sc.Quiet = MaxQuiet
	}
	if sc.Faults == nil {
		sc.Faults = slices.Clone(DefaultFaults)
	}
	if sc.MaxCrashRedeliveries == 0 {
		sc.MaxCrashRedeliveries = DefaultMaxCrashes
	}
	if sc.MaxSkew == 0 {
		sc.MaxSkew = DefaultMaxSkew
	}
	w := &sc.Workload
	def := func(v *int, d int) {
		if *v == 0 {
			*v = d
		}
		if *v < 0 {
			*v = 0
		}
	}
	def(&w.Jobs, DefaultJobs)
	def(&w.PermitJobs, DefaultPermitJobs)
	def(&w.PermitLimit, DefaultPermitLimit)
	def(&w.PoisonJobs, DefaultPoisonJobs)
	def(&w.MinMillis, 50)
	def(&w.MaxMillis, 500)
	def(&w.Workflows, DefaultWorkflows)
	def(&w.Schedules, DefaultSchedules)
	if w.NoProbes {
		w.Jobs, w.PermitJobs, w.PoisonJobs, w.Workflows, w.Schedules = 0, 0, 0, 0, 0
	}
	if w.MaxMillis < w.MinMillis {
		w.MaxMillis = w.MinMillis
	}
	return sc
}

// validate reports what makes sc unusable.
func (sc Scenario) validate() error {
	if sc.Workers < 1 {
		return fmt.Errorf("chaos: %d workers", sc.Workers)
	}
	if len(sc.Faults) > 0 && sc.Workers < 2 {
		return fmt.Errorf("chaos: faults need at least 2 workers, so that one is always up")
	}
	if sc.Duration < 5*time.Second {
		return fmt.Errorf("chaos: duration %s is shorter than 5s", sc.Duration)
	}
	for _, k := range sc.Faults {
		if !slices.Contains(knownFaults, k) {
			return fmt.Errorf("chaos: unknown fault kind %q", k)
		}
	}
	if err := sc.validateFaults(); err != nil {
		return err
	}
	if sc.MaxCrashRedeliveries < 0 {
		return fmt.Errorf("chaos: negative crash budget %d", sc.MaxCrashRedeliveries)
	}
	if sc.Submit != nil && sc.WorkerSubmits {
		return fmt.Errorf("chaos: Submit and WorkerSubmits both set; give the workload one way")
	}
	if sc.WorkerSubmits && len(sc.Worker) == 0 {
		return fmt.Errorf("chaos: WorkerSubmits needs Worker, a binary whose main calls chaos.WorkerMainWith(chaos.WithWorkload(...))")
	}
	if sc.Workload.NoProbes && sc.Submit == nil && !sc.WorkerSubmits {
		return fmt.Errorf("chaos: no workload: NoProbes without Submit or WorkerSubmits submits nothing")
	}
	if sc.Plant != "" && !slices.Contains(Plants, sc.Plant) {
		return fmt.Errorf("chaos: unknown planted defect %q (known: %s)", sc.Plant, strings.Join(Plants, ", "))
	}
	return nil
}

// Duration is a time.Duration that JSON writes as a string such as "1.5s".
type Duration time.Duration

// String is the duration as time.Duration prints it.
func (d Duration) String() string { return time.Duration(d).String() }

// MarshalJSON writes the duration as a string.
func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(d.String()) }

// UnmarshalJSON reads a string written by MarshalJSON.
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	v, err := time.ParseDuration(s)
	*d = Duration(v)
	return err
}

// Fault is one fault of a schedule.
type Fault struct {
	// At is when the fault begins, from the start of the fault phase.
	At Duration `json:"at"`
	// Kind is the fault's kind.
	Kind FaultKind `json:"kind"`
	// Node is the node it hits (node-1 ... node-N); empty for a restart-db,
	// which hits the database of every node.
	Node string `json:"node"`
	// For is how long it lasts: the freeze of a stop, the downtime before
	// the restart of a kill or term, the latency, the black hole or the
	// skew (0 for a reset and a restart-db, which take what they take).
	For Duration `json:"for"`
	// Latency is the delay a latency fault adds.
	Latency Duration `json:"latency,omitempty"`
	// Skew is the offset a skew fault gives the node's clock (ahead when
	// positive, behind when negative).
	Skew Duration `json:"skew,omitempty"`
}

// PlannedJob is one probe job of a workload.
type PlannedJob struct {
	// At is when it is submitted, from the start of the fault phase.
	At Duration `json:"at"`
	// Task is SleepTask, PermitTask or PoisonTask.
	Task string `json:"task"`
	// Millis is the sleep of a sleep or permit job.
	Millis int `json:"millis,omitempty"`
}

// PlannedWorkflow is one probe workflow: the diamond A → {B, C} → D of
// chaos.step jobs.
type PlannedWorkflow struct {
	// At is when it is submitted, from the start of the fault phase.
	At Duration `json:"at"`
	// Millis are the sleeps of A, B, C and D.
	Millis [4]int `json:"millis"`
	// FailB tells B to fail for good: D must then end CANCELLED without
	// running.
	FailB bool `json:"fail_b,omitempty"`
}

// PlannedSchedule is one probe recurring schedule, registered at the start
// of the fault phase and paused at its end.
type PlannedSchedule struct {
	ID      string                `json:"id"`
	Expr    string                `json:"expr"`
	Misfire ratchet.MisfirePolicy `json:"misfire"`
	Millis  int                   `json:"millis"`
}

// Plan is the seeded part of a run: the fault schedule and the workload.
type Plan struct {
	Seed      uint64            `json:"seed"`
	Faults    []Fault           `json:"faults"`
	Jobs      []PlannedJob      `json:"jobs"`
	Workflows []PlannedWorkflow `json:"workflows,omitempty"`
	Schedules []PlannedSchedule `json:"schedules,omitempty"`
}

// NodeName is the id of the i-th node (from 1) of a run.
func NodeName(i int) string { return fmt.Sprintf("node-%d", i) }

// NewPlan returns the fault schedule and workload of sc: a function of its
// Seed, Workers, Duration, Faults and Workload only. Faults come one at a
// time (so that, with two workers or more, one node is always up), each
// lasting at most MaxFault and ending before the fault phase does; the
// first ones take each enabled kind once, in a seeded order. Jobs are
// submitted over the first two thirds of the fault phase, poison jobs
// first.
func NewPlan(sc Scenario) (Plan, error) {
	sc = sc.withDefaults()
	if err := sc.validate(); err != nil {
		return Plan{}, err
	}
	p := newPlan(sc)
	return p, p.covers(sc)
}

// covers reports an error when the plan lacks an enabled fault kind (its
// duration has no room for it).
func (p Plan) covers(sc Scenario) error {
	for _, k := range sc.Faults {
		if !slices.ContainsFunc(p.Faults, func(f Fault) bool { return f.Kind == k }) {
			return fmt.Errorf("chaos: a fault phase of %s has no room for every enabled fault kind (%s is missing with seed %d); give a longer duration", sc.Duration, k, sc.Seed)
		}
	}
	return nil
}

// newPlan is NewPlan of a scenario with its defaults set.
func newPlan(sc Scenario) Plan {
	rng := rand.New(rand.NewPCG(sc.Seed, 0x63_68_61_6f_73)) // "chaos"
	p := Plan{Seed: sc.Seed}
	between := func(lo, hi time.Duration) time.Duration {
		return lo + time.Duration(rng.Int64N(int64(hi-lo)+1))
	}

	// The fault schedule.
	first := slices.Clone(sc.Faults)
	rng.Shuffle(len(first), func(i, j int) { first[i], first[j] = first[j], first[i] })
	at := between(1500*time.Millisecond, 3*time.Second)
	for len(sc.Faults) > 0 {
		var kind FaultKind
		if n := len(p.Faults); n < len(first) {
			kind = first[n]
		} else {
			kind = sc.Faults[rng.IntN(len(sc.Faults))]
		}
		// The first round, one fault of each kind, is kept short so that a
		// short run has room for every kind.
		firstRound := len(p.Faults) < len(first)
		var d, busy time.Duration
		switch kind {
		case FaultKill:
			d = between(500*time.Millisecond, 3*time.Second)
			busy = d
		case FaultStop:
			longest := MaxFault
			if firstRound {
				longest = 5 * time.Second
			}
			d = between(time.Second, longest)
			busy = d
		case FaultTerm:
			d = between(500*time.Millisecond, 2*time.Second)
			busy = d + 4*time.Second // the drain (3 s) and the exit
		case FaultLatency, FaultBlackhole, FaultSkew:
			longest := MaxFault
			if firstRound {
				longest = 5 * time.Second
			}
			d = between(time.Second, longest)
			busy = d
		case FaultReset:
			busy = 500 * time.Millisecond
		case FaultRestartDB:
			busy = 5 * time.Second // the restart and the reconnections
		case FaultFailover:
			busy = 8 * time.Second // the promotion, a new standby and the reconnections
		case FaultDBNodeLoss:
			d = between(2*time.Second, 5*time.Second)
			busy = d + 15*time.Second // the cluster's timeout, then the rejoin
		}
		var latency, skew time.Duration
		if kind == FaultLatency {
			latency = between(100*time.Millisecond, 500*time.Millisecond).Round(time.Millisecond)
		}
		if kind == FaultSkew {
			skew = between(sc.MaxSkew/2, sc.MaxSkew).Round(time.Millisecond)
			if rng.IntN(2) == 0 {
				skew = -skew
			}
		}
		if at+busy+time.Second > sc.Duration {
			break
		}
		node := NodeName(1 + rng.IntN(sc.Workers))
		if kind.isDB() {
			node = "" // every node's database
		}
		p.Faults = append(p.Faults, Fault{At: Duration(at), Kind: kind, Node: node, For: Duration(d), Latency: Duration(latency), Skew: Duration(skew)})
		gap := between(time.Second, 4*time.Second)
		if firstRound {
			gap = between(time.Second, 2*time.Second)
		}
		at += busy + gap
	}

	// The workload.
	w := sc.Workload
	window := sc.Duration * 2 / 3
	millis := func() int { return w.MinMillis + rng.IntN(w.MaxMillis-w.MinMillis+1) }
	for range w.PoisonJobs {
		p.Jobs = append(p.Jobs, PlannedJob{At: Duration(between(0, window/4)), Task: PoisonTask})
	}
	for range w.Jobs {
		p.Jobs = append(p.Jobs, PlannedJob{At: Duration(between(0, window)), Task: SleepTask, Millis: millis()})
	}
	for range w.PermitJobs {
		p.Jobs = append(p.Jobs, PlannedJob{At: Duration(between(0, window)), Task: PermitTask, Millis: millis()})
	}
	slices.SortStableFunc(p.Jobs, func(a, b PlannedJob) int { return cmp.Compare(a.At, b.At) })
	planWorkflows(&p, w, window, rng)
	return p
}
