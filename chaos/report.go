package chaos

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"

	ratchet "github.com/ratchet-go/ratchet/sdk"
	"github.com/ratchet-go/ratchet/sdk/spi"
)

// The invariants a run checks, as a Violation names them.
const (
	// InvNoJobLost: every submitted job exists and is terminal by the end
	// of the quiet phase.
	InvNoJobLost = "no-job-lost"
	// InvFinalizedOnce: a job is finalized at most once (the ledger holds
	// at most one finalization reported by an engine per job), and every
	// finalization an engine reported is the one its job row shows.
	InvFinalizedOnce = "finalized-once"
	// InvAtLeastOnce: a SUCCEEDED probe job has a completed execution in
	// the ledger, by the node and under the claim that finalized it.
	InvAtLeastOnce = "at-least-once"
	// InvCrashBudget: no job's crash count exceeds the budget; a job failed
	// by the crash budget was claimed budget + 1 times (its crash count is
	// the budget and its claim sequence at least 2 × (budget + 1)); a
	// poison job ran at most budget + 1 times and ended failed by the
	// budget.
	InvCrashBudget = "crash-budget"
	// InvPermits: the executions that finalized the permit jobs never
	// overlapped more than the resource's permits.
	InvPermits = "permits"
	// InvFaultsInjected: every enabled fault kind was injected at least
	// once.
	InvFaultsInjected = "faults-injected"
)

// Violation is one broken invariant.
type Violation struct {
	// Invariant is one of the Inv* names.
	Invariant string `json:"invariant"`
	// Detail says what was seen.
	Detail string `json:"detail"`
	// Jobs are the jobs concerned, sorted.
	Jobs []uuid.UUID `json:"jobs,omitempty"`
	// Slots are the recurring slots concerned (recurring-slots).
	Slots []time.Time `json:"slots,omitempty"`
}

// Report is the outcome of a run.
type Report struct {
	Seed uint64 `json:"seed"`
	// Store is the database URL without its password.
	Store string `json:"store"`
	// Schema is the run's schema (its database on MySQL, its file on
	// SQLite); SchemaKept says it was left in place (after a violation, or
	// when the scenario named it).
	Schema     string `json:"schema"`
	SchemaKept bool   `json:"schema_kept"`
	// LogDir holds each worker's stderr, NODE.log; empty when it was a
	// temporary folder removed after a clean run.
	LogDir   string      `json:"log_dir,omitempty"`
	Workers  int         `json:"workers"`
	Duration Duration    `json:"duration"`
	Quiet    Duration    `json:"quiet"`
	Elapsed  Duration    `json:"elapsed"`
	Plant    string      `json:"plant,omitempty"`
	Faults   []FaultKind `json:"faults"`
	// Timeline is every fault as injected.
	Timeline []Injection `json:"timeline"`
	// Injected counts the injections of each enabled kind.
	Injected map[FaultKind]int `json:"injected"`
	// Restarts counts the worker restarts during the run (after kills,
	// terms and poison jobs).
	Restarts int `json:"restarts"`
	// Jobs is the number of jobs of the run (submitted, or fired by a
	// schedule); Statuses counts them by final status.
	Jobs     int            `json:"jobs"`
	Statuses map[string]int `json:"statuses"`
	// UserJobs counts the jobs the application's workload submitted,
	// Workflows the probe workflows, Edges the workflow dependencies
	// checked (the probes' and the application's), Slots the probe
	// schedules' slots checked.
	UserJobs  int `json:"user_jobs,omitempty"`
	Workflows int `json:"workflows,omitempty"`
	Edges     int `json:"edges,omitempty"`
	Slots     int `json:"slots,omitempty"`
	// FailedErrors counts the FAILED jobs by their last error (cut to 100
	// characters): the poison jobs' crash-budget error, and any other job
	// that the faults pushed over the crash budget.
	FailedErrors map[string]int `json:"failed_errors,omitempty"`
	// Executions counts the ledger's executions of task bodies,
	// Finalizations the finalizations the engines reported.
	Executions    int `json:"executions"`
	Finalizations int `json:"finalizations"`
	// Lost counts the jobs missing or not terminal; DoubleFinalized the
	// jobs finalized more than once.
	Lost            int         `json:"lost"`
	DoubleFinalized int         `json:"double_finalized"`
	Violations      []Violation `json:"violations"`
}

// OK reports whether no invariant was violated.
func (r *Report) OK() bool { return len(r.Violations) == 0 }

// Invariants returns the names of the violated invariants, sorted, without
// repeats.
func (r *Report) Invariants() []string {
	var out []string
	for _, v := range r.Violations {
		if !slices.Contains(out, v.Invariant) {
			out = append(out, v.Invariant)
		}
	}
	slices.Sort(out)
	return out
}

// JSON returns the report as indented JSON.
func (r *Report) JSON() []byte {
	b, _ := json.MarshalIndent(r, "", "  ")
	return append(b, '\n')
}

// Text returns the report for humans.
func (r *Report) Text() string {
	var b strings.Builder
	_ = r.WriteText(&b)
	return b.String()
}

// WriteText writes the report for humans to w.
func (r *Report) WriteText(w io.Writer) error {
	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format+"\n", args...) }
	faults := make([]string, len(r.Faults))
	for i, k := range r.Faults {
		faults[i] = string(k)
	}
	if len(faults) == 0 {
		faults = []string{"none"}
	}
	unit := "schema" // the run's schema, database or file
	if IsSQLite(r.Store) {
		unit = "file"
	}
	p("chaos run: seed %d, %d workers, %s %s %s", r.Seed, r.Workers, r.Store, unit, r.Schema)
	p("faults %s for %s, then a quiet phase of %s (%s in all)", strings.Join(faults, ","), r.Duration, r.Quiet, r.Elapsed)
	if r.Plant != "" {
		p("planted store defect: %s", r.Plant)
	}
	var counts []string
	for _, k := range r.Faults {
		counts = append(counts, fmt.Sprintf("%s %d", k, r.Injected[k]))
	}
	if len(counts) > 0 {
		p("injected: %s; %d worker restarts", strings.Join(counts, ", "), r.Restarts)
	}
	for _, inj := range r.Timeline {
		node := inj.Node
		if node == "" {
			node = "database" // a database fault
		}
		line := fmt.Sprintf("  %9s  %-10s  %-8s for %s", "+"+inj.At.String(), inj.Kind, node, inj.For)
		if inj.Note != "" {
			line += "  (" + inj.Note + ")"
		}
		if len(inj.Resumed) > 0 {
			var nodes []string
			for _, n := range slices.Sorted(maps.Keys(inj.Resumed)) {
				nodes = append(nodes, fmt.Sprintf("%s %s", n, inj.Resumed[n]))
			}
			line += "; first execution after it took effect: " + strings.Join(nodes, ", ")
		}
		p("%s", line)
	}
	var st []string
	for _, s := range slices.Sorted(maps.Keys(r.Statuses)) {
		st = append(st, fmt.Sprintf("%d %s", r.Statuses[s], s))
	}
	p("jobs: %d: %s; ledger: %d executions, %d finalizations", r.Jobs, strings.Join(st, ", "), r.Executions, r.Finalizations)
	if r.UserJobs+r.Workflows+r.Slots > 0 {
		p("  of which %d of the application's workload, %d probe workflows (4 jobs each), %d recurring slots; %d workflow dependencies checked",
			r.UserJobs, r.Workflows, r.Slots, r.Edges)
	}
	for _, e := range slices.Sorted(maps.Keys(r.FailedErrors)) {
		p("  FAILED %d: %s", r.FailedErrors[e], e)
	}
	p("lost: %d, finalized more than once: %d", r.Lost, r.DoubleFinalized)
	if r.OK() {
		p("OK: every invariant held")
	} else {
		for _, v := range r.Violations {
			p("VIOLATION %s: %s", v.Invariant, v.Detail)
			if len(v.Jobs) > 0 {
				ids := make([]string, 0, len(v.Jobs))
				for i, id := range v.Jobs {
					if i == 20 {
						ids = append(ids, fmt.Sprintf("and %d more", len(v.Jobs)-20))
						break
					}
					ids = append(ids, id.String())
				}
				p("  jobs: %s", strings.Join(ids, " "))
			}
			if len(v.Slots) > 0 {
				p("  slots: %s", slotList(v.Slots))
			}
		}
		p("FAILED: %d violations (%s); %s %s kept, worker logs in %s", len(r.Violations), strings.Join(r.Invariants(), ", "), unit, r.Schema, r.LogDir)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// finalStatus is the status that a finalization event leaves.
var finalStatus = map[string]ratchet.Status{
	"succeeded": ratchet.StatusSucceeded,
	"failed":    ratchet.StatusFailed,
	"skipped":   ratchet.StatusSkipped,
	"cancelled": ratchet.StatusCancelled,
}

// crashBudgetError is in the last error of a job failed by the crash
// budget (the engine's recovery message).
const crashBudgetError = "crash budget exhausted"

// resumedAfter is, for each node, the time from t to the first execution
// it started after t.
func resumedAfter(t time.Time, runs []Execution) map[string]Duration {
	out := map[string]Duration{}
	for _, r := range runs {
		if !r.StartedAt.After(t) {
			continue
		}
		d := Duration(r.StartedAt.Sub(t).Round(time.Millisecond))
		if old, ok := out[r.Node]; !ok || d < old {
			out[r.Node] = d
		}
	}
	return out
}

// check reads the database and the ledger and builds the report.
func (h *harness) check(ctx context.Context) (*Report, error) {
	sc := h.sc
	jobs, err := h.jobs(ctx)
	if err != nil {
		return nil, err
	}
	runs, err := h.ledger.Executions(ctx)
	if err != nil {
		return nil, err
	}
	finals, err := h.ledger.Finals(ctx)
	if err != nil {
		return nil, err
	}
	h.mu.Lock()
	submitted := maps.Clone(h.submitted)
	timeline := slices.Clone(h.timeline)
	restarts := h.restarts
	edges := slices.Clone(h.edges)
	user := h.user
	h.mu.Unlock()
	taskOf := maps.Clone(submitted) // every job of the run: submitted, or fired by a schedule
	for id, j := range jobs {
		if _, ok := taskOf[id]; !ok {
			taskOf[id] = j.TaskName
		}
	}

	rep := &Report{
		Seed: sc.Seed, Store: redacted(sc.DSN), Schema: h.schema, SchemaKept: true, LogDir: sc.LogDir,
		Workers: sc.Workers, Duration: Duration(sc.Duration), Plant: sc.Plant, Faults: sc.Faults,
		Timeline: timeline, Injected: map[FaultKind]int{}, Restarts: restarts,
		Jobs: len(taskOf), Statuses: map[string]int{}, Executions: len(runs), Finalizations: len(finals),
		UserJobs: user, Workflows: len(edges) / 4, Violations: []Violation{},
	}
	for _, k := range sc.Faults {
		rep.Injected[k] = 0
	}
	for i, inj := range timeline {
		if !strings.HasPrefix(inj.Note, "skipped") {
			rep.Injected[inj.Kind]++
		}
		if inj.Kind.isDB() {
			timeline[i].Resumed = resumedAfter(inj.from, runs)
		}
	}
	add := func(inv, detail string, ids []uuid.UUID) {
		slices.SortFunc(ids, func(a, b uuid.UUID) int { return strings.Compare(a.String(), b.String()) })
		rep.Violations = append(rep.Violations, Violation{Invariant: inv, Detail: detail, Jobs: ids})
	}
	runsOf := map[uuid.UUID][]Execution{}
	for _, r := range runs {
		runsOf[r.JobID] = append(runsOf[r.JobID], r)
	}
	finalsOf := map[uuid.UUID][]Final{}
	for _, f := range finals {
		finalsOf[f.JobID] = append(finalsOf[f.JobID], f)
	}

	// No job lost.
	var missing, open []uuid.UUID
	openBy := map[ratchet.Status]int{}
	for id := range taskOf {
		j, ok := jobs[id]
		switch {
		case !ok:
			missing = append(missing, id)
		case !j.Status.Terminal():
			open = append(open, id)
			openBy[j.Status]++
			rep.Statuses[string(j.Status)]++
		default:
			rep.Statuses[string(j.Status)]++
			if j.Status == ratchet.StatusFailed {
				e := j.LastError
				if len(e) > 100 {
					e = e[:100]
				}
				if rep.FailedErrors == nil {
					rep.FailedErrors = map[string]int{}
				}
				rep.FailedErrors[e]++
			}
		}
	}
	if len(missing) > 0 {
		add(InvNoJobLost, fmt.Sprintf("%d submitted jobs are not in the database", len(missing)), missing)
	}
	if len(open) > 0 {
		var by []string
		for _, s := range slices.Sorted(maps.Keys(openBy)) {
			by = append(by, fmt.Sprintf("%d %s", openBy[s], s))
		}
		add(InvNoJobLost, fmt.Sprintf("%d jobs not terminal at the end of the quiet phase (%s)", len(open), strings.Join(by, ", ")), open)
	}
	rep.Lost = len(missing) + len(open)

	// Finalized exactly once.
	var twice, unkept []uuid.UUID
	for id, fs := range finalsOf {
		if len(fs) > 1 {
			twice = append(twice, id)
		}
		j := jobs[id]
		for _, f := range fs {
			if j == nil || finalStatus[f.Event] != j.Status {
				unkept = append(unkept, id)
				break
			}
		}
	}
	if len(twice) > 0 {
		add(InvFinalizedOnce, fmt.Sprintf("%d jobs finalized more than once (the engines reported two applied finalizations)", len(twice)), twice)
	}
	if len(unkept) > 0 {
		add(InvFinalizedOnce, fmt.Sprintf("%d finalizations reported as applied are not what the job rows show", len(unkept)), unkept)
	}
	rep.DoubleFinalized = len(twice)

	// At least once: the finishing execution of each SUCCEEDED job.
	var unrun []uuid.UUID
	for id, task := range taskOf {
		j := jobs[id]
		if j == nil || j.Status != ratchet.StatusSucceeded || task == PoisonTask {
			continue
		}
		if finishing(j, runsOf[id]) == nil {
			unrun = append(unrun, id)
		}
	}
	if len(unrun) > 0 {
		add(InvAtLeastOnce, fmt.Sprintf("%d SUCCEEDED jobs have no completed execution under their final claim by their finishing node", len(unrun)), unrun)
	}

	// The crash budget.
	budget := sc.MaxCrashRedeliveries
	var over, early, poisonOver, poisonNot []uuid.UUID
	for id, j := range jobs {
		if j.CrashCount > budget {
			over = append(over, id)
		}
		if j.Status == ratchet.StatusFailed && strings.Contains(j.LastError, crashBudgetError) &&
			(j.CrashCount != budget || j.ClaimSeq < int64(2*(budget+1))) {
			early = append(early, id)
		}
	}
	for id, task := range submitted {
		if task != PoisonTask {
			continue
		}
		if len(runsOf[id]) > budget+1 {
			poisonOver = append(poisonOver, id)
		}
		if j := jobs[id]; j != nil && j.Status.Terminal() && !(j.Status == ratchet.StatusFailed && strings.Contains(j.LastError, crashBudgetError)) {
			poisonNot = append(poisonNot, id)
		}
	}
	if len(over) > 0 {
		add(InvCrashBudget, fmt.Sprintf("%d jobs have a crash count above the budget %d", len(over), budget), over)
	}
	if len(early) > 0 {
		add(InvCrashBudget, fmt.Sprintf("%d jobs failed by the crash budget before %d claims", len(early), budget+1), early)
	}
	if len(poisonOver) > 0 {
		add(InvCrashBudget, fmt.Sprintf("%d poison jobs ran more than %d times (%s)", len(poisonOver), budget+1,
			describeRuns(runsOf[poisonOver[0]])), poisonOver)
	}
	if len(poisonNot) > 0 {
		add(InvCrashBudget, fmt.Sprintf("%d poison jobs ended otherwise than failed by the crash budget", len(poisonNot)), poisonNot)
	}

	// Permits.
	var permitRuns []Execution
	for id, task := range submitted {
		if j := jobs[id]; task == PermitTask && j != nil && j.Status == ratchet.StatusSucceeded {
			if r := finishing(j, runsOf[id]); r != nil {
				permitRuns = append(permitRuns, *r)
			}
		}
	}
	if peak, at := peakRuns(permitRuns); peak > sc.Workload.PermitLimit {
		add(InvPermits, fmt.Sprintf("%d permit jobs ran at once, over the %d permits of %s", peak, sc.Workload.PermitLimit, PermitResource), at)
	}

	// The probe schedules' slots and the probe workflows' order.
	h.mu.Lock()
	fires := maps.Clone(h.fires)
	h.mu.Unlock()
	for _, sr := range h.schedules {
		vs, n := checkSlots(sr, jobs, fires[sr.ID])
		rep.Violations = append(rep.Violations, vs...)
		rep.Slots += n
	}
	apps, err := appEdges(ctx, spi.CapabilitiesOf(h.store.Store).Workflows, edges, jobs)
	if err != nil {
		return nil, err
	}
	rep.Edges = len(edges) + len(apps)
	rep.Violations = append(rep.Violations, checkWorkflows(append(edges, apps...), jobs, runsOf)...)
	rep.Violations = append(rep.Violations, checkUnique(&h.uniques, jobs)...)
	rep.Violations = append(rep.Violations, checkDebounced(&h.debounces, jobs)...)
	rep.Violations = append(rep.Violations, checkSequences(&h.sequences, jobs, runsOf)...)
	rep.Violations = append(rep.Violations, checkRated(&h.rates, runsOf)...)
	rep.Violations = append(rep.Violations, checkFair(&h.fairs, jobs, runsOf)...)

	// Coverage of the enabled fault kinds.
	for _, k := range sc.Faults {
		if rep.Injected[k] == 0 {
			add(InvFaultsInjected, fmt.Sprintf("fault kind %s is enabled but was never injected (a longer duration gives it room)", k), nil)
		}
	}
	return rep, nil
}

// finishing returns the execution that finalized j: completed, by its
// owner, under its final claim.
func finishing(j *ratchet.Job, runs []Execution) *Execution {
	for i, r := range runs {
		if r.Outcome == OutcomeOK && r.Node == j.OwnerNode && r.ClaimSeq == j.ClaimSeq && !r.EndedAt.IsZero() {
			return &runs[i]
		}
	}
	return nil
}

// peakRuns returns the largest number of runs executing at one instant
// (as MaxOverlap) and the jobs of the runs executing then.
func peakRuns(runs []Execution) (int, []uuid.UUID) {
	type edge struct {
		at    time.Time
		delta int
		run   int
	}
	var edges []edge
	for i, r := range runs {
		edges = append(edges, edge{r.StartedAt, +1, i})
		if !r.EndedAt.IsZero() {
			edges = append(edges, edge{r.EndedAt, -1, i})
		}
	}
	slices.SortFunc(edges, func(a, b edge) int {
		if c := a.at.Compare(b.at); c != 0 {
			return c
		}
		return a.delta - b.delta
	})
	active := map[int]bool{}
	peak := 0
	var at []uuid.UUID
	for _, e := range edges {
		if e.delta > 0 {
			active[e.run] = true
		} else {
			delete(active, e.run)
		}
		if len(active) > peak {
			peak = len(active)
			at = at[:0]
			for i := range active {
				at = append(at, runs[i].JobID)
			}
		}
	}
	return peak, at
}

// describeRuns lists runs as "node attempt/crashes@claim outcome", for a
// violation's detail.
func describeRuns(runs []Execution) string {
	parts := make([]string, len(runs))
	for i, r := range runs {
		outcome := r.Outcome
		if outcome == "" {
			outcome = "no end"
		}
		parts[i] = fmt.Sprintf("%s attempt %d crashes %d claim %d %s", r.Node, r.Attempt, r.CrashCount, r.ClaimSeq, outcome)
	}
	return strings.Join(parts, "; ")
}
