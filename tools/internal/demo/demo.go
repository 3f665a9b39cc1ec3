package demo

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"log/slog"
	"math/rand/v2"
	"sort"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/ratchet-go/ratchet/engine"
	ratchet "github.com/ratchet-go/ratchet/sdk"
	"github.com/ratchet-go/ratchet/sdk/spi"
)

// Kind is what a demo job does.
type Kind string

// The kinds of demo jobs and their share of the mix.
const (
	KindOK        Kind = "ok"        // succeeds at once
	KindTransient Kind = "transient" // fails its first attempt, succeeds on the retry
	KindPermanent Kind = "permanent" // returns DoNotRetry: straight to the DLQ
	KindExhaust   Kind = "exhaust"   // always fails: exhausts its retries into the DLQ
	KindDelayed   Kind = "delayed"   // due 1–3 s after submission, then succeeds
)

var mix = []struct {
	kind    Kind
	percent int
}{{KindOK, 70}, {KindTransient, 10}, {KindPermanent, 5}, {KindExhaust, 5}, {KindDelayed, 10}}

// Args are a demo job's arguments.
type Args struct {
	Kind Kind `json:"kind"`
	Seq  int  `json:"seq"`
}

// Receipt is a demo job's result.
type Receipt struct {
	Seq    int    `json:"seq"`
	Digest uint64 `json:"digest"`
}

// Task is the demo's task.
var Task = ratchet.NewTask("demo.process", process)

// Tick is the task of the demo's recurring schedule, which fires it every
// second while the demo runs: Schedule.
var Tick = ratchet.NewVoidTask("demo.tick", func(context.Context, struct{}) error { return nil })

// StepArgs are the arguments of a step of the demo's workflow.
type StepArgs struct {
	Name string `json:"name"`
	Fail bool   `json:"fail,omitempty"` // fail at once (DoNotRetry)
}

// Step is the task of the demo's workflow steps: it returns its name, or
// fails for good when asked to.
var Step = ratchet.NewTask("demo.step", func(ctx context.Context, a StepArgs) (string, error) {
	// The order check: when a step runs, every parent it waited for must
	// have finished in the store. (Read here, when the body runs, rather
	// than compared by timestamps afterwards: a claim's time is taken
	// before it waits for the database, so it can precede the commit
	// that released the job.)
	if jc, ok := ratchet.JobFromContext(ctx); ok {
		ps, err := jc.Parents(ctx)
		if err != nil {
			return "", err
		}
		for _, p := range ps {
			if !p.Status.Terminal() {
				return "", ratchet.DoNotRetry(fmt.Errorf("step %s started before its parent %s finished (%s)", a.Name, p.ID, p.Status))
			}
		}
	}
	if a.Fail {
		return "", ratchet.DoNotRetry(fmt.Errorf("step %s: the audit found a problem", a.Name))
	}
	return a.Name, nil
})

// Schedule is the id of the demo's recurring schedule.
const Schedule = "demo-every-second"

var errTransient = errors.New("upstream timed out (transient)")

func process(ctx context.Context, a Args) (Receipt, error) {
	jc, _ := ratchet.JobFromContext(ctx)
	switch a.Kind {
	case KindTransient:
		if jc != nil && jc.Run == 1 {
			return Receipt{}, errTransient
		}
	case KindPermanent:
		return Receipt{}, ratchet.DoNotRetry(fmt.Errorf("order %d: invalid card number", a.Seq))
	case KindExhaust:
		return Receipt{}, fmt.Errorf("order %d: payment gateway unavailable", a.Seq)
	}
	h := fnv.New64a()
	for i := 0; i < 200; i++ { // a little real work
		fmt.Fprintf(h, "%d:%d", a.Seq, i)
	}
	return Receipt{Seq: a.Seq, Digest: h.Sum64()}, nil
}

// expected is the final state a job of kind k must reach.
func expected(k Kind) spi.Status {
	if k == KindPermanent || k == KindExhaust {
		return spi.StatusFailed
	}
	return spi.StatusSucceeded
}

// Config configures Run.
type Config struct {
	Jobs        int
	Concurrency int
	Seed        uint64
	Timeout     time.Duration
	// Progress receives progress updates: done of total finished.
	Progress func(done, total int)
	Logger   *slog.Logger
}

// Summary is the demo's result.
type Summary struct {
	Submitted           int
	Succeeded           int
	SucceededAfterRetry int
	DLQ                 map[string]int // by reason
	Other               int            // jobs in neither state (must be 0)
	// RecurringFires counts the slots the recurring schedule fired during
	// the run; RecurringRepeats the slots it fired more than once (must
	// be 0).
	RecurringFires, RecurringRepeats int
	// WorkflowSteps counts the steps of the demo's workflow (a fan-out
	// and a join, a failing step with its callbacks and a dependent that
	// its failure cancels); WorkflowOK whether each ended as expected,
	// none before its parents.
	WorkflowSteps int
	WorkflowOK    bool
	Mismatches    []string // jobs not in the state expected for them
	Elapsed       time.Duration
}

// Throughput is finished jobs per second.
func (s Summary) Throughput() float64 {
	if s.Elapsed <= 0 {
		return 0
	}
	return float64(s.Submitted) / s.Elapsed.Seconds()
}

// OK reports whether every job reached the expected state and the counts
// add up.
func (s Summary) OK() bool {
	dlq := 0
	for _, n := range s.DLQ {
		dlq += n
	}
	return len(s.Mismatches) == 0 && s.Other == 0 && s.Succeeded+dlq == s.Submitted && s.RecurringRepeats == 0 &&
		(s.WorkflowSteps == 0 || s.WorkflowOK)
}

// Print writes the summary.
func (s Summary) Print(w io.Writer) {
	dlq := 0
	reasons := make([]string, 0, len(s.DLQ))
	for r, n := range s.DLQ {
		dlq += n
		reasons = append(reasons, r)
	}
	sort.Strings(reasons)
	fmt.Fprintf(w, "\nsubmitted          %6d\n", s.Submitted)
	fmt.Fprintf(w, "succeeded          %6d  (%d after a retry)\n", s.Succeeded, s.SucceededAfterRetry)
	fmt.Fprintf(w, "dead-letter queue  %6d\n", dlq)
	for _, r := range reasons {
		fmt.Fprintf(w, "  %-17s%6d\n", r, s.DLQ[r])
	}
	if s.Other > 0 {
		fmt.Fprintf(w, "not finished       %6d\n", s.Other)
	}
	fmt.Fprintf(w, "recurring fires    %6d  (%s, each slot once: %v)\n", s.RecurringFires, Schedule, s.RecurringRepeats == 0)
	if s.WorkflowSteps > 0 {
		fmt.Fprintf(w, "workflow steps     %6d  (each as expected, after its parents: %v)\n", s.WorkflowSteps, s.WorkflowOK)
	}
	fmt.Fprintf(w, "elapsed            %8.2fs\n", s.Elapsed.Seconds())
	fmt.Fprintf(w, "throughput         %8.0f jobs/s\n", s.Throughput())
	for i, m := range s.Mismatches {
		if i == 10 {
			fmt.Fprintf(w, "... and %d more\n", len(s.Mismatches)-10)
			break
		}
		fmt.Fprintf(w, "MISMATCH %s\n", m)
	}
	if s.OK() {
		fmt.Fprintln(w, "result             every job reached its expected state")
	} else {
		fmt.Fprintln(w, "result             FAILED: some jobs did not reach their expected state")
	}
}

// Run starts a node on store, submits cfg.Jobs jobs of the mix across all
// priorities, waits until every one is finished (or cfg.Timeout passes) and
// checks each against the state expected for it.
func Run(ctx context.Context, store spi.Store, cfg Config) (Summary, error) {
	if cfg.Jobs <= 0 {
		return Summary{}, fmt.Errorf("--jobs must be positive, got %d", cfg.Jobs)
	}
	if cfg.Concurrency <= 0 {
		cfg.Concurrency = 50
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 5 * time.Minute
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	eng, err := engine.New(store, engine.Options{
		Client:          ratchet.ClientOptions{Logger: cfg.Logger},
		Concurrency:     cfg.Concurrency,
		PollInterval:    200 * time.Millisecond,
		ShutdownTimeout: 10 * time.Second,
		Schedules:       Schedules(),
	}, Tasks()...)
	if err != nil {
		return Summary{}, err
	}
	events, unsubscribe := eng.Subscribe(cfg.Jobs*4 + 100)
	defer unsubscribe()
	if err := eng.Start(ctx); err != nil {
		return Summary{}, err
	}
	defer func() { _ = eng.Stop(context.WithoutCancel(ctx)) }()

	start := time.Now()
	kinds, err := submit(ctx, eng.Client(), cfg)
	if err != nil {
		return Summary{}, err
	}
	var flow *demoFlow
	if spi.CapabilitiesOf(store).Workflows != nil {
		if flow, err = submitFlow(ctx, eng.Client()); err != nil {
			return Summary{}, err
		}
	}
	if err := wait(ctx, events, kinds, cfg); err != nil {
		return Summary{}, err
	}
	elapsed := time.Since(start)
	sum, err := verify(ctx, eng.Client(), kinds)
	sum.Elapsed = elapsed
	if err == nil && flow != nil {
		sum.WorkflowSteps = len(flow.want)
		var problems []string
		problems, err = flow.verify(ctx, eng.Client(), cfg.Timeout)
		sum.WorkflowOK = err == nil && len(problems) == 0
		sum.Mismatches = append(sum.Mismatches, problems...)
	}
	if err == nil {
		sum.RecurringFires, sum.RecurringRepeats, err = fires(ctx, eng.Client(), start)
	}
	return sum, err
}

// fires counts the recurring schedule's slots at or after since, and those
// that have more than one job.
func fires(ctx context.Context, c *ratchet.Client, since time.Time) (slots, repeats int, err error) {
	n := map[time.Time]int{}
	o := ratchet.ListOptions{PropertyKey: ratchet.ScheduleProperty, PropertyValue: Schedule, Limit: 1000}
	for {
		page, err := c.ListJobs(ctx, o)
		if err != nil {
			return 0, 0, err
		}
		for _, j := range page.Jobs {
			if !j.ScheduledAt.Before(since.Truncate(time.Second)) {
				n[j.ScheduledAt]++
			}
		}
		if page.Next == uuid.Nil {
			break
		}
		o.After = page.Next
	}
	for _, k := range n {
		if k > 1 {
			repeats++
		}
	}
	return len(n), repeats, nil
}

// submit writes the jobs in batches that share kind and priority.
func submit(ctx context.Context, c *ratchet.Client, cfg Config) (map[uuid.UUID]Kind, error) {
	rng := rand.New(rand.NewPCG(cfg.Seed, cfg.Seed^0x9e3779b97f4a7c15))
	type group struct {
		kind Kind
		prio ratchet.Priority
	}
	groups := map[group][]Args{}
	for seq := 0; seq < cfg.Jobs; seq++ {
		r := rng.IntN(100)
		k := mix[len(mix)-1].kind
		for _, m := range mix {
			if r < m.percent {
				k = m.kind
				break
			}
			r -= m.percent
		}
		g := group{k, ratchet.Priority(rng.IntN(5))}
		groups[g] = append(groups[g], Args{Kind: k, Seq: seq})
	}
	keys := make([]group, 0, len(groups))
	for g := range groups {
		keys = append(keys, g)
	}
	sort.Slice(keys, func(a, b int) bool {
		if keys[a].kind != keys[b].kind {
			return keys[a].kind < keys[b].kind
		}
		return keys[a].prio < keys[b].prio
	})
	kinds := make(map[uuid.UUID]Kind, cfg.Jobs)
	for _, g := range keys {
		opts := []ratchet.SubmitOption{ratchet.WithPriority(g.prio), ratchet.WithTags("demo", string(g.kind))}
		switch g.kind {
		case KindTransient:
			opts = append(opts, ratchet.WithMaxRetries(3), ratchet.WithBackoff(ratchet.BackoffExponential, 200*time.Millisecond))
		case KindExhaust:
			opts = append(opts, ratchet.WithMaxRetries(2), ratchet.WithBackoff(ratchet.BackoffFixed, 100*time.Millisecond))
		case KindDelayed:
			opts = append(opts, ratchet.WithDelay(time.Second+time.Duration(g.prio)*500*time.Millisecond))
		}
		args := groups[g]
		for len(args) > 0 {
			n := min(len(args), 500)
			ids, err := Task.SubmitMany(ctx, c, args[:n], opts...)
			if err != nil {
				return nil, err
			}
			for _, id := range ids {
				kinds[id] = g.kind
			}
			args = args[n:]
		}
	}
	return kinds, nil
}

// wait consumes events until every job is finished.
func wait(ctx context.Context, events <-chan engine.Event, kinds map[uuid.UUID]Kind, cfg Config) error {
	done := map[uuid.UUID]bool{}
	timeout := time.NewTimer(cfg.Timeout)
	defer timeout.Stop()
	for len(done) < len(kinds) {
		select {
		case ev := <-events:
			if _, ours := kinds[ev.JobID]; !ours {
				continue
			}
			if ev.Kind == engine.EventSucceeded || ev.Kind == engine.EventFailed {
				done[ev.JobID] = true
				if cfg.Progress != nil {
					cfg.Progress(len(done), len(kinds))
				}
			}
		case <-timeout.C:
			return fmt.Errorf("timed out after %s with %d of %d jobs finished", cfg.Timeout, len(done), len(kinds))
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

// verify reads every job back and checks its state.
func verify(ctx context.Context, c *ratchet.Client, kinds map[uuid.UUID]Kind) (Summary, error) {
	sum := Summary{Submitted: len(kinds), DLQ: map[string]int{}}
	seen := 0
	var after uuid.UUID
	for {
		page, err := c.ListJobs(ctx, ratchet.ListOptions{After: after, Limit: 1000})
		if err != nil {
			return sum, err
		}
		for _, j := range page.Jobs {
			k, ours := kinds[j.ID]
			if !ours {
				continue
			}
			seen++
			switch j.Status {
			case spi.StatusSucceeded:
				sum.Succeeded++
				if j.Attempts > 0 {
					sum.SucceededAfterRetry++
				}
			case spi.StatusFailed:
				sum.DLQ[dlqReason(j)]++
			default:
				sum.Other++
			}
			if want := expected(k); j.Status != want {
				sum.Mismatches = append(sum.Mismatches, fmt.Sprintf("job %s (%s) is %s, expected %s: %s", j.ID, k, j.Status, want, j.LastError))
			}
			if k == KindTransient && j.Attempts != 1 {
				sum.Mismatches = append(sum.Mismatches, fmt.Sprintf("job %s (transient) took %d failed attempts, expected 1", j.ID, j.Attempts))
			}
		}
		if page.Next == uuid.Nil {
			break
		}
		after = page.Next
	}
	if seen != len(kinds) {
		sum.Mismatches = append(sum.Mismatches, fmt.Sprintf("%d of %d submitted jobs found in the store", seen, len(kinds)))
	}
	return sum, nil
}

func dlqReason(j *spi.Job) string {
	switch {
	case strings.HasPrefix(j.LastError, "do not retry"):
		return "do not retry"
	case j.Attempts > j.MaxRetries:
		return "retries exhausted"
	}
	return "other"
}

// demoFlow is the demo's workflow: its id and the state each step must end
// in.
type demoFlow struct {
	id    uuid.UUID
	steps []*ratchet.Step
	want  map[*ratchet.Step]spi.Status
}

// submitFlow submits the demo's workflow: fetch, then four resizes at once,
// then publish once all four succeeded (with an OnFailure callback that is
// skipped); and an audit that fails, whose OnFailure callback runs, whose
// OnSuccess callback is skipped and whose dependent is cancelled.
func submitFlow(ctx context.Context, c *ratchet.Client) (*demoFlow, error) {
	w := ratchet.NewWorkflow(ratchet.WithTags("demo", "workflow"))
	f := &demoFlow{want: map[*ratchet.Step]spi.Status{}}
	add := func(s *ratchet.Step, want spi.Status) *ratchet.Step { f.want[s] = want; return s }
	step := func(name string) ratchet.Call { return Step.With(StepArgs{Name: name}) }
	fetch := add(w.Add(step("fetch")), spi.StatusSucceeded)
	publish := add(w.Add(step("publish")), spi.StatusSucceeded)
	for i := range 4 {
		publish.After(add(fetch.Then(step(fmt.Sprintf("resize-%d", i+1))), spi.StatusSucceeded))
	}
	add(publish.OnFailure(step("page-on-call")), spi.StatusSkipped)
	audit := add(w.Add(Step.With(StepArgs{Name: "audit", Fail: true})), spi.StatusFailed)
	add(audit.OnFailure(step("alert")), spi.StatusSucceeded)
	add(audit.OnSuccess(step("thank")), spi.StatusSkipped)
	add(audit.Then(step("report")), spi.StatusCancelled)
	id, err := c.SubmitWorkflow(ctx, w)
	if err != nil {
		return nil, fmt.Errorf("submit the demo workflow: %w", err)
	}
	f.id, f.steps = id, w.Steps()
	return f, nil
}

// verify waits for the workflow to finish and checks each step's state, and
// that no step started before a parent had finished.
func (f *demoFlow) verify(ctx context.Context, c *ratchet.Client, timeout time.Duration) ([]string, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	var st *ratchet.WorkflowStatus
	for {
		var err error
		if st, err = c.Workflow(ctx, f.id); err != nil {
			return nil, fmt.Errorf("read the demo workflow: %w", err)
		}
		if st.Done {
			break
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("the demo workflow did not finish: %v", st.Counts)
		case <-tick.C:
		}
	}
	var problems []string
	for _, s := range f.steps {
		j := st.Job(s)
		if j == nil {
			problems = append(problems, fmt.Sprintf("workflow %s: not found", s))
			continue
		}
		if j.Status != f.want[s] {
			problems = append(problems, fmt.Sprintf("workflow %s is %s, expected %s: %s", s, j.Status, f.want[s], j.LastError))
		}
		// A step that ran before its parents finished fails itself (see
		// Step), and shows above as a state other than the expected one.
	}
	return problems, nil
}

// Tasks are the demo's tasks, for a node that runs its jobs (ratchet dev).
func Tasks() []ratchet.Definition { return []ratchet.Definition{Task, Tick, Step} }

// Schedules are the demo's recurring schedules: Tick every second.
func Schedules() []ratchet.Recurring {
	return []ratchet.Recurring{Tick.Recurring(Schedule, "@every 1s", struct{}{})}
}

// Seed submits n jobs of the demo's mix (seeded by seed) and, on a store
// that keeps workflows, the demo's workflow, without waiting for them:
// something for a dashboard to show. It returns the workflow's id (zero
// when the store keeps none).
func Seed(ctx context.Context, c *ratchet.Client, n int, seed uint64) (uuid.UUID, error) {
	if n > 0 {
		if _, err := submit(ctx, c, Config{Jobs: n, Seed: seed}); err != nil {
			return uuid.Nil, err
		}
	}
	if spi.CapabilitiesOf(c.Store()).Workflows == nil {
		return uuid.Nil, nil
	}
	f, err := submitFlow(ctx, c)
	if err != nil {
		return uuid.Nil, err
	}
	return f.id, nil
}
