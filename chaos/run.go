package chaos

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/uuid"

	ratchet "github.com/ratchet-go/ratchet/sdk"
)

// WorkerPackage is the import path of the probe worker command.
const WorkerPackage = "github.com/ratchet-go/ratchet/chaos/cmd/worker"

// BuildWorker builds the probe worker (WorkerPackage) into dir with the go
// command and returns the binary's path. The module that the go command
// runs in (the working directory's) must require the chaos module.
func BuildWorker(ctx context.Context, dir string) (string, error) {
	bin := filepath.Join(dir, "chaos-worker")
	goTool, err := exec.LookPath("go")
	if err != nil {
		goTool = filepath.Join(runtime.GOROOT(), "bin", "go")
	}
	cmd := exec.CommandContext(ctx, goTool, "build", "-o", bin, WorkerPackage)
	var buf strings.Builder
	cmd.Stdout, cmd.Stderr = &buf, &buf
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("chaos: build %s: %w\n%s", WorkerPackage, err, buf.String())
	}
	return bin, nil
}

// RunT runs sc as a test: it logs the report and fails t on a violation or
// when the run could not be made. It skips nothing: a missing database is a
// failure.
func RunT(t testing.TB, sc Scenario) *Report {
	t.Helper()
	if sc.LogDir == "" {
		sc.LogDir = t.TempDir()
	}
	rep, err := Run(context.Background(), sc)
	if rep != nil {
		t.Log("\n" + rep.Text())
	}
	if err != nil {
		t.Fatalf("chaos: %v", err)
	}
	for _, v := range rep.Violations {
		t.Errorf("chaos: violation of %s: %s (jobs %v)", v.Invariant, v.Detail, v.Jobs)
	}
	return rep
}

// Run runs sc: it prepares the schema, starts the workers under a
// supervisor, submits the workload and injects the fault schedule for
// sc.Duration, waits out the quiet phase, stops the workers and checks the
// invariants from the database and the ledger. The report lists the
// violations; the error is for a run that could not be made (no database,
// a worker that does not start). A report with violations comes with a nil
// error: check Report.OK.
func Run(ctx context.Context, sc Scenario) (*Report, error) {
	sc = sc.withDefaults()
	if err := sc.validate(); err != nil {
		return nil, err
	}
	if !Supported(sc.DSN) {
		return nil, fmt.Errorf("chaos: the store must be a postgres:// or mysql:// URL, or sqlite:PATH, got %q", redacted(sc.DSN))
	}
	plan := newPlan(sc)
	if err := plan.covers(sc); err != nil {
		return nil, err
	}
	h := &harness{sc: sc, plan: plan}
	defer h.cleanup()
	if err := h.prepare(ctx); err != nil {
		return nil, err
	}
	return h.run(ctx)
}

// harness is one run.
type harness struct {
	sc     Scenario
	plan   Plan
	schema string
	drop   bool // the schema is the run's own
	// ownLogs: LogDir is a temporary folder of the run's own, removed
	// after a clean run.
	ownLogs bool
	store   *Opened
	ledger  *Ledger
	client  *ratchet.Client
	worker  []string
	tmp     []string // folders to remove
	slots   []*slot
	// proxies are the nodes' TCP proxies to the database, when a network
	// fault is enabled.
	proxies map[string]*proxy

	mu        sync.Mutex
	timeline  []Injection
	submitted map[uuid.UUID]string // job id to task
	restarts  int
	startErr  error
	began     time.Time
	// dbGate is held by a restart-db, and read by the harness's inserts
	// (gatedStore).
	dbGate sync.RWMutex
	// The probe schedules and workflows' edges, and the count of the
	// application's jobs (in submitted too).
	schedules []*scheduleRun
	// fires are the schedule-fired lines of the workers, by schedule: what
	// a recurring-slots violation reports of its missing slots.
	fires map[string][]Line
	edges []wfEdge
	user  int
	// The admission probes' submissions (unique.go).
	uniques, debounces, sequences, fairs probeRun
	rates                                rateRun
}

func (h *harness) cleanup() {
	for _, p := range h.proxies {
		p.close()
	}
	if h.store != nil {
		_ = h.store.Close()
	}
	for _, d := range h.tmp {
		_ = os.RemoveAll(d)
	}
}

func (h *harness) prepare(ctx context.Context) error {
	sc := h.sc
	h.schema = sc.Schema
	if IsSQLite(sc.DSN) {
		// The run's "schema" is the file, which the workers get as --schema.
		var err error
		if h.schema, h.drop, err = runFile(sc); err != nil {
			return err
		}
	} else if h.schema == "" {
		h.schema = fmt.Sprintf("ratchet_chaos_%d_%d", sc.Seed, time.Now().UnixNano())
		h.drop = true
	}
	store, err := openStore(ctx, sc.DSN, h.schema, true, harnessBusyTimeout)
	if err != nil {
		return fmt.Errorf("chaos: open the store: %w", err)
	}
	gated := &gatedStore{Store: store.Store, gate: &h.dbGate}
	if slices.ContainsFunc(sc.Faults, FaultKind.isDB) {
		gated.retry = 30 * time.Second
	}
	store.Store = gated
	h.store, h.ledger = store, store.Ledger
	if err := h.ledger.Prepare(ctx); err != nil {
		return err
	}
	h.client, err = ratchet.NewClient(store.Store, ratchet.ClientOptions{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		return err
	}
	if sc.LogDir == "" {
		dir, err := os.MkdirTemp("", "ratchet-chaos-logs-")
		if err != nil {
			return err
		}
		h.sc.LogDir = dir
		h.ownLogs = true
	} else if err := os.MkdirAll(sc.LogDir, 0o755); err != nil {
		return err
	}
	for _, k := range sc.Faults {
		if !k.isNet() || h.proxies != nil {
			continue
		}
		target, err := dsnTarget(sc.DSN)
		if err != nil {
			return err
		}
		h.proxies = map[string]*proxy{}
		for i := range sc.Workers {
			p, err := newProxy(target)
			if err != nil {
				return err
			}
			h.proxies[NodeName(i+1)] = p
		}
	}
	h.worker = sc.Worker
	if len(h.worker) == 0 {
		dir, err := os.MkdirTemp("", "ratchet-chaos-bin-")
		if err != nil {
			return err
		}
		h.tmp = append(h.tmp, dir)
		bin, err := BuildWorker(ctx, dir)
		if err != nil {
			return err
		}
		h.worker = []string{bin}
	}
	return nil
}

// env is the workers' environment: this process's without its RATCHET_*
// variables, the short node timings, then the scenario's own.
func (h *harness) env() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "RATCHET_") {
			env = append(env, kv)
		}
	}
	env = append(env,
		"RATCHET_NODE_HEARTBEAT_INTERVAL_SECONDS=1",
		"RATCHET_NODE_ORPHAN_GRACE_SECONDS=3",
		"RATCHET_NODE_ORPHAN_SCAN_INTERVAL_SECONDS=1",
		"RATCHET_NODE_MAX_CRASH_REDELIVERIES="+strconv.Itoa(h.sc.MaxCrashRedeliveries),
		"RATCHET_WORKER_POLL_INTERVAL_MS=250",
		"RATCHET_WORKER_SHUTDOWN_TIMEOUT_SECONDS=3",
		"RATCHET_WORKER_CONCURRENCY=4",
	)
	return append(env, h.sc.Env...)
}

func (h *harness) progress(format string, args ...any) {
	if h.sc.Progress != nil {
		fmt.Fprintf(h.sc.Progress, "%7.1fs  %s\n", time.Since(h.began).Seconds(), fmt.Sprintf(format, args...))
	}
}

func (h *harness) run(ctx context.Context) (*Report, error) {
	sc := h.sc
	h.began = time.Now()
	h.submitted = map[uuid.UUID]string{}
	env := h.env()
	runCtx, stopSlots := context.WithCancel(ctx)
	var slotsDone sync.WaitGroup
	for i := range sc.Workers {
		s := &slot{h: h, node: NodeName(i + 1), env: env, changed: make(chan struct{})}
		h.slots = append(h.slots, s)
		slotsDone.Add(1)
		go func() { defer slotsDone.Done(); s.run(runCtx) }()
	}
	stopAll := func() {
		stopSlots()
		slotsDone.Wait()
	}
	for _, s := range h.slots {
		if err := s.awaitUp(ctx, 30*time.Second); err != nil {
			stopAll()
			return nil, err
		}
	}
	h.mu.Lock()
	h.restarts = 0
	h.mu.Unlock()
	h.began = time.Now()
	h.progress("%d workers up on schema %s; fault phase of %s, seed %d", sc.Workers, h.schema, sc.Duration, sc.Seed)
	if err := h.startSchedules(ctx); err != nil {
		stopAll()
		return nil, err
	}

	// The fault phase: the submitter and the fault executor.
	var phase sync.WaitGroup
	var submitErr error
	phase.Add(2)
	go func() { defer phase.Done(); submitErr = h.submitAll(ctx) }()
	go func() { defer phase.Done(); h.inject(ctx) }()
	phaseEnd := time.NewTimer(sc.Duration)
	select {
	case <-phaseEnd.C:
	case <-ctx.Done():
	}
	phase.Wait()
	if err := ctx.Err(); err != nil {
		stopAll()
		return nil, err
	}
	if submitErr != nil {
		stopAll()
		return nil, submitErr
	}
	if err := h.pauseSchedules(ctx); err != nil {
		stopAll()
		return nil, err
	}

	// The quiet phase: no faults until every job is terminal, or Quiet.
	h.progress("quiet phase (at most %s)", sc.Quiet)
	quietBegan := time.Now()
	done, err := h.awaitTerminal(ctx, sc.Quiet)
	quiet := time.Since(quietBegan)
	if err != nil {
		stopAll()
		return nil, err
	}
	h.progress("every job terminal: %v, after %s", done, quiet.Round(time.Millisecond))
	stopAll()

	rep, err := h.check(ctx)
	if err != nil {
		return nil, err
	}
	rep.Quiet = Duration(quiet.Round(time.Millisecond))
	rep.Elapsed = Duration(time.Since(h.began).Round(time.Millisecond))
	if h.drop && rep.OK() {
		if err := h.store.Drop(context.WithoutCancel(ctx)); err != nil {
			return rep, fmt.Errorf("chaos: drop schema %s: %w", h.schema, err)
		}
		rep.SchemaKept = false
	}
	if h.ownLogs && rep.OK() {
		_ = os.RemoveAll(h.sc.LogDir)
		rep.LogDir = ""
	}
	return rep, nil
}

// submit submits the planned jobs at their times.
func (h *harness) submit(ctx context.Context) error {
	tasks := NewTasks(nil)
	timer := time.NewTimer(0)
	defer timer.Stop()
	jobs := h.plan.Jobs
	for len(jobs) > 0 {
		if !h.until(ctx, timer, jobs[0].At) {
			return ctx.Err()
		}
		// Everything due now, one submission per task.
		n := 0
		for n < len(jobs) && time.Duration(jobs[n].At) <= time.Since(h.began) {
			n++
		}
		due := jobs[:n]
		jobs = jobs[n:]
		var sleeps, permits []SleepArgs
		poison := 0
		for _, j := range due {
			switch j.Task {
			case SleepTask:
				sleeps = append(sleeps, SleepArgs{Millis: j.Millis})
			case PermitTask:
				permits = append(permits, SleepArgs{Millis: j.Millis})
			case PoisonTask:
				poison++
			}
		}
		record := func(task string, ids []uuid.UUID) {
			h.mu.Lock()
			defer h.mu.Unlock()
			for _, id := range ids {
				h.submitted[id] = task
			}
		}
		if len(sleeps) > 0 {
			ids, err := tasks.Sleep.SubmitMany(ctx, h.client, sleeps)
			if err != nil {
				return fmt.Errorf("chaos: submit: %w", err)
			}
			record(SleepTask, ids)
		}
		if len(permits) > 0 {
			ids, err := tasks.Permit.SubmitMany(ctx, h.client, permits, ratchet.WithResource(PermitResource, h.sc.Workload.PermitLimit))
			if err != nil {
				return fmt.Errorf("chaos: submit: %w", err)
			}
			record(PermitTask, ids)
		}
		for range poison {
			id, err := tasks.Poison.Submit(ctx, h.client, PoisonArgs{})
			if err != nil {
				return fmt.Errorf("chaos: submit: %w", err)
			}
			record(PoisonTask, []uuid.UUID{id})
		}
	}
	return nil
}

// until waits, on timer, for the moment at of the fault phase (at once
// when it has passed); false when ctx ended first.
func (h *harness) until(ctx context.Context, timer *time.Timer, at Duration) bool {
	wait := time.Duration(at) - time.Since(h.began)
	if wait <= 0 {
		return true
	}
	timer.Reset(wait)
	select {
	case <-timer.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// inject runs the fault schedule, one fault at a time.
func (h *harness) inject(ctx context.Context) {
	timer := time.NewTimer(0)
	defer timer.Stop()
	for _, f := range h.plan.Faults {
		if !h.until(ctx, timer, f.At) {
			return
		}
		h.fault(ctx, f)
		if ctx.Err() != nil {
			return
		}
	}
}

// Injection is one fault as it was injected.
type Injection struct {
	// At is when it began, from the start of the fault phase.
	At   Duration  `json:"at"`
	Kind FaultKind `json:"kind"`
	// Node is the node hit; empty for a restart-db.
	Node string `json:"node"`
	// For is how long the node was frozen (stop), down (kill, term) or
	// skewed, or how long the database took to restart and answer again.
	For Duration `json:"for"`
	// Note says what else happened: another node hit because the planned
	// one was down, a graceful stop that did not end in time.
	Note string `json:"note,omitempty"`
	// Skew is the offset a skew gave the node's clock.
	Skew Duration `json:"skew,omitempty"`
	// Resumed is, for a database fault, how long after it took effect each
	// node started its first execution (by the ledger, on the database's
	// clock); a node that started none after it is missing. A restart or
	// a failover takes effect when the database answers again (For +
	// Resumed bounds the time from the fault to a node's first execution
	// after it), a lost node when it is killed (the cluster goes on
	// without it).
	Resumed map[string]Duration `json:"resumed,omitempty"`

	from time.Time // when a database fault took effect
}

// fault injects f and returns when the node is back (restarted or
// resumed).
func (h *harness) fault(ctx context.Context, f Fault) {
	if f.Kind.isDB() {
		h.faultDB(ctx, f)
		return
	}
	inj := Injection{At: Duration(time.Since(h.began).Round(time.Millisecond)), Kind: f.Kind, Node: f.Node}
	s, p := h.target(f.Node)
	if p == nil {
		inj.Note = "skipped: no node was up"
		h.addInjection(inj)
		return
	}
	if s.node != f.Node {
		inj.Node = s.node
		inj.Note = f.Node + " was down"
	}
	d := time.Duration(f.For)
	began := time.Now()
	timer := time.NewTimer(d)
	defer timer.Stop()
	switch f.Kind {
	case FaultKill:
		s.holdFor(p, d)
		p.signal(syscall.SIGKILL)
		<-p.exited
		_ = s.awaitUp(ctx, 30*time.Second)
	case FaultStop:
		p.signal(syscall.SIGSTOP)
		select {
		case <-timer.C:
		case <-ctx.Done():
		}
		p.signal(syscall.SIGCONT)
	case FaultTerm:
		s.holdFor(p, d)
		p.signal(syscall.SIGTERM)
		deadline := time.NewTimer(MaxFault)
		select {
		case <-p.exited:
		case <-deadline.C:
			inj.Note = "no exit within 10s of SIGTERM: killed"
			p.signal(syscall.SIGKILL)
			<-p.exited
		}
		deadline.Stop()
		if !p.cleanExit() && inj.Note == "" {
			inj.Note = "exit after SIGTERM: " + p.exitDesc()
		}
		_ = s.awaitUp(ctx, 30*time.Second)
	case FaultLatency:
		px := h.proxies[s.node]
		px.setLatency(time.Duration(f.Latency))
		select {
		case <-timer.C:
		case <-ctx.Done():
		}
		px.setLatency(0)
		inj.Note = joinNote(inj.Note, "+"+f.Latency.String()+" a chunk")
	case FaultBlackhole:
		end := h.proxies[s.node].blackHole()
		select {
		case <-timer.C:
		case <-ctx.Done():
		}
		end()
	case FaultReset:
		n := h.proxies[s.node].reset()
		inj.Note = joinNote(inj.Note, fmt.Sprintf("%d connections reset", n))
	case FaultSkew:
		err := p.skew(time.Duration(f.Skew))
		if errors.Is(err, errWorkerExited) && s.awaitUp(ctx, 30*time.Second) == nil {
			// The node exited as the skew began (a poison job crashes
			// its worker on purpose): skew it once it is back, else the
			// run would report the kind as never injected.
			if q := s.up(); q != nil {
				p = q
				err = p.skew(time.Duration(f.Skew))
				inj.Note = joinNote(inj.Note, "after the node's restart")
			}
		}
		if err != nil {
			inj.Note = joinNote("skipped: "+err.Error(), inj.Note)
			break
		}
		inj.Skew = f.Skew
		inj.Note = joinNote(inj.Note, "clock "+skewText(f.Skew))
		select {
		case <-timer.C:
		case <-ctx.Done():
		case <-p.exited:
			inj.Note = joinNote(inj.Note, "the node exited (it restarts on the true time)")
		}
		if err := p.skew(0); err != nil && !strings.Contains(inj.Note, "exited") {
			inj.Note = joinNote(inj.Note, "setting the clock back: "+err.Error())
		}
	}
	inj.For = Duration(time.Since(began).Round(time.Millisecond))
	if f.Kind == FaultReset {
		inj.For = 0
	}
	h.addInjection(inj)
	h.progress("%-4s %s for %s %s", inj.Kind, inj.Node, inj.For, inj.Note)
}

func (h *harness) addInjection(inj Injection) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.timeline = append(h.timeline, inj)
}

// joinNote appends b to the note a.
func joinNote(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}

// target returns the slot of node and its process when it is up, else the
// next slot that is up.
func (h *harness) target(node string) (*slot, *proc) {
	start := 0
	for i, s := range h.slots {
		if s.node == node {
			start = i
		}
	}
	for k := range h.slots {
		s := h.slots[(start+k)%len(h.slots)]
		if p := s.up(); p != nil {
			return s, p
		}
	}
	return nil, nil
}

// awaitTerminal polls the jobs (the submitted ones and every one in the
// schema) until every one is terminal or timeout passes; it reports
// whether they all were.
func (h *harness) awaitTerminal(ctx context.Context, timeout time.Duration) (bool, error) {
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		jobs, err := h.jobs(ctx)
		if err != nil {
			return false, err
		}
		all := true
		for _, j := range jobs {
			all = all && j.Status.Terminal()
		}
		h.mu.Lock()
		for id := range h.submitted {
			if j, ok := jobs[id]; !ok || !j.Status.Terminal() {
				all = false
				break
			}
		}
		h.mu.Unlock()
		if all {
			return true, nil
		}
		select {
		case <-tick.C:
		case <-deadline.C:
			return false, nil
		case <-ctx.Done():
			return false, ctx.Err()
		}
	}
}

// jobs returns every job of the schema by id.
func (h *harness) jobs(ctx context.Context) (map[uuid.UUID]*ratchet.Job, error) {
	out := map[uuid.UUID]*ratchet.Job{}
	var after uuid.UUID
	for {
		page, err := h.client.ListJobs(ctx, ratchet.ListOptions{Limit: 1000, After: after})
		if err != nil {
			return nil, fmt.Errorf("chaos: list jobs: %w", err)
		}
		for _, j := range page.Jobs {
			out[j.ID] = j
		}
		if page.Next == uuid.Nil {
			return out, nil
		}
		after = page.Next
	}
}

// slot is one node of the run: the supervisor restarts its process
// whenever it exits, until the run ends.
type slot struct {
	h    *harness
	node string
	env  []string

	mu       sync.Mutex
	cur      *proc         // the process, nil while none runs
	hold     time.Duration // the next restart's delay, set by a fault
	heldProc *proc         // the process whose exit the hold is for
	starts   int
	changed  chan struct{} // closed and replaced when cur changes or becomes ready
}

// restartDelay is the delay before a node that exited on its own (a
// poison job killed it) is restarted.
const restartDelay = 300 * time.Millisecond

func (s *slot) run(ctx context.Context) {
	for ctx.Err() == nil {
		p, err := s.start()
		if err != nil {
			s.h.mu.Lock()
			if s.h.startErr == nil {
				s.h.startErr = err
			}
			s.h.mu.Unlock()
			s.notify()
			return
		}
		select {
		case <-p.exited:
		case <-ctx.Done():
			p.signal(syscall.SIGCONT)
			p.signal(syscall.SIGTERM)
			t := time.NewTimer(15 * time.Second)
			select {
			case <-p.exited:
			case <-t.C:
				p.signal(syscall.SIGKILL)
				<-p.exited
			}
			t.Stop()
		}
		s.mu.Lock()
		s.cur = nil
		delay := restartDelay
		if s.heldProc == p {
			delay = s.hold
			s.heldProc = nil
		}
		s.mu.Unlock()
		s.notify()
		if ctx.Err() != nil {
			return
		}
		t := time.NewTimer(delay)
		select {
		case <-t.C:
		case <-ctx.Done():
		}
		t.Stop()
		s.h.mu.Lock()
		s.h.restarts++
		s.h.mu.Unlock()
	}
}

// fired keeps a worker's schedule-fired line.
func (h *harness) fired(l Line) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.fires == nil {
		h.fires = map[string][]Line{}
	}
	h.fires[l.Schedule] = append(h.fires[l.Schedule], l)
}

func (s *slot) notify() {
	s.mu.Lock()
	close(s.changed)
	s.changed = make(chan struct{})
	s.mu.Unlock()
}

// holdFor sets the delay before the restart that follows p's exit.
func (s *slot) holdFor(p *proc, d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.hold, s.heldProc = d, p
}

// up returns the slot's process when it is running and ready.
func (s *slot) up() *proc {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cur != nil && s.cur.isReady() {
		return s.cur
	}
	return nil
}

// awaitUp waits until the slot has a ready process.
func (s *slot) awaitUp(ctx context.Context, timeout time.Duration) error {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		s.mu.Lock()
		ch := s.changed
		ready := s.cur != nil && s.cur.isReady()
		s.mu.Unlock()
		if ready {
			return nil
		}
		s.h.mu.Lock()
		err := s.h.startErr
		s.h.mu.Unlock()
		if err != nil {
			return err
		}
		select {
		case <-ch:
		case <-deadline.C:
			return fmt.Errorf("chaos: worker %s not ready within %s (its log: %s)", s.node, timeout, s.logPath())
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

func (s *slot) logPath() string {
	return filepath.Join(s.h.sc.LogDir, s.node+".log")
}

// start starts the slot's process; its stderr is appended to the node's
// log file.
func (s *slot) start() (*proc, error) {
	sc := s.h.sc
	dsn := sc.DSN
	if sc.SpreadHosts {
		var i int
		_, _ = fmt.Sscanf(s.node, "node-%d", &i)
		dsn = turnHosts(dsn, i-1)
	}
	if p := s.h.proxies[s.node]; p != nil {
		dsn = dsnVia(dsn, p.Addr())
	}
	args := append(append([]string(nil), s.h.worker[1:]...), "--dsn", dsn, "--schema", s.h.schema, "--node", s.node)
	if sc.Plant != "" {
		args = append(args, "--plant", sc.Plant)
	}
	control := slices.Contains(sc.Faults, FaultSkew)
	if control {
		args = append(args, "--control")
	}
	cmd := exec.Command(s.h.worker[0], args...)
	cmd.Env = s.env
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	var stdin io.WriteCloser
	if control {
		if stdin, err = cmd.StdinPipe(); err != nil {
			return nil, err
		}
	}
	f, err := os.OpenFile(s.logPath(), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	cmd.Stderr = f
	if err := cmd.Start(); err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("chaos: start worker %s: %w", s.node, err)
	}
	p := &proc{cmd: cmd, exited: make(chan struct{}), stdin: stdin, skewed: make(chan string, 4)}
	s.mu.Lock()
	s.cur = p
	s.starts++
	s.mu.Unlock()
	go p.read(stdout, f, s.notify, s.h.fired)
	return p, nil
}

// proc is one worker process.
type proc struct {
	cmd    *exec.Cmd
	exited chan struct{} // closed once reaped
	// stdin is the worker's control input (--control), when skew is
	// enabled; skewed receives the offsets it confirms.
	stdin  io.WriteCloser
	skewed chan string

	mu    sync.Mutex
	ready bool
	done  bool
	state *os.ProcessState
}

// read follows the worker's stdout lines until EOF, then reaps it.
func (p *proc) read(stdout io.Reader, stderr *os.File, notify func(), fired func(Line)) {
	sc := bufio.NewScanner(stdout)
	sc.Buffer(make([]byte, 0, 64*1024), 1<<20)
	for sc.Scan() {
		var l Line
		if json.Unmarshal(sc.Bytes(), &l) != nil {
			continue
		}
		if l.Event == LineSkewed {
			select {
			case p.skewed <- l.Skew:
			default:
			}
		}
		if l.Event == lineFired {
			fired(l)
		}
		if l.Event == LineReady {
			p.mu.Lock()
			p.ready = true
			p.mu.Unlock()
			notify()
		}
	}
	_, _ = io.Copy(io.Discard, stdout)
	_ = p.cmd.Wait()
	_ = stderr.Close()
	p.mu.Lock()
	p.state = p.cmd.ProcessState
	p.done = true
	p.mu.Unlock()
	close(p.exited)
	notify()
}

func (p *proc) isReady() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.ready && !p.done
}

func (p *proc) signal(sig syscall.Signal) {
	_ = p.cmd.Process.Signal(sig)
}

func (p *proc) cleanExit() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.state != nil && p.state.Success()
}

func (p *proc) exitDesc() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch {
	case !p.done:
		return "running"
	case p.state == nil:
		return "unknown exit"
	}
	return p.state.String()
}

// redacted is a URL without its password, for messages; a DSN of the
// MySQL driver's own form is cut to what follows its '@'.
func redacted(dsn string) string {
	if u, err := url.Parse(dsn); err == nil && u.Scheme != "" {
		return u.Redacted()
	}
	if i := strings.LastIndex(dsn, "@"); i >= 0 {
		return "…@" + dsn[i+1:]
	}
	return dsn
}
