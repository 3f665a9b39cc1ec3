package cluster

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ratchet-go/ratchet/simtest/internal/simtime"

	"github.com/ratchet-go/ratchet/sdk/spi"
)

// maxBacklog pauses submissions while this many jobs are not terminal.
const maxBacklog = 100

// jobSpec is what the workload decides about a new job.
type jobSpec struct {
	task       string
	prio       spi.Priority
	delay      time.Duration
	maxRetries int
	backoff    spi.BackoffKind
	param      time.Duration
	key        string
	tags       []string
	resource   string
	limit      int
	poison     bool
	flood      bool
	probe      bool
	// timeout is the job's run timeout (spi.TimeoutParam); 0 for none.
	timeout time.Duration
	// startBy is how long after it is due the job may still start; 0 for
	// no deadline. within gives it as a window (spi.StartWithinParam),
	// which reopens each time the job is due again, rather than as a
	// deadline fixed at the submission (spi.StartByParam).
	startBy time.Duration
	within  bool
	// snoozes is how many times the body snoozes before it ends
	// otherwise, maxSnoozes the job's bound (spi.MaxSnoozesParam; 0 for
	// the default).
	snoozes, maxSnoozes int
	// steps: the body records a durable step at the end of each run.
	steps bool
	// waits is how many times in a row the body waits for the signal
	// (ratchet.WaitSignal, see waitsignal.go), under waitKey, each at most
	// waitTimeout (0: for ever).
	waits       int
	waitKey     string
	waitTimeout time.Duration
}

// randomSpec draws an ordinary job: any priority, due now or up to a
// minute later, 0..5 retries with any backoff, now and then a poison job
// or an idempotency key (sometimes one already used).
func (w *world) randomSpec() jobSpec {
	s := jobSpec{task: "work", prio: spi.Priority(w.rng.IntN(spi.NumPriorities)), maxRetries: w.rng.IntN(6)}
	if w.rng.IntN(10) < 3 {
		s.delay = w.randDur(0, time.Minute)
	}
	switch r := w.rng.IntN(10); {
	case r < 3:
		s.backoff = spi.BackoffNone
	case r < 6:
		s.backoff, s.param = spi.BackoffFixed, w.randDur(100*time.Millisecond, 3*time.Second)
	default:
		s.backoff, s.param = spi.BackoffExponential, w.randDur(100*time.Millisecond, 2*time.Second)
	}
	if w.chance(0.02) {
		s.task, s.poison = "poison", true
	}
	if !w.sc.NoTags && w.chance(0.2) {
		s.tags = jobTags[w.rng.IntN(len(jobTags))]
	}
	if w.sc.Permits && w.chance(0.25) {
		r := resources[w.rng.IntN(len(resources))]
		s.resource, s.limit = r.name, r.limit
	}
	if w.chance(0.1) {
		if len(w.keyList) > 0 && w.chance(0.3) {
			s.key = w.keyList[w.rng.IntN(len(w.keyList))]
		} else {
			s.key = fmt.Sprintf("key-%d", len(w.keyList)+1)
		}
	}
	if !s.poison && w.chance(0.15) {
		s.timeout = w.randDur(300*time.Millisecond, 3*time.Second)
	}
	if !s.poison && w.chance(0.1) {
		s.startBy, s.within = w.randDur(time.Millisecond, 5*time.Second), w.chance(0.5)
	}
	s.steps = !s.poison && w.chance(0.8)
	if !s.poison && w.chance(0.08) {
		s.snoozes = 1 + w.rng.IntN(4)
		if w.chance(0.5) {
			s.maxSnoozes = 1 + w.rng.IntN(4) // below the plan now and then: the job fails at its bound
		}
	}
	w.drawWaiter(&s)
	return s
}

// submit inserts jobs in one batch, as the client does, and checks the
// idempotency outcome of each against the model.
func (w *world) submit(specs []jobSpec) ([]*sjob, error) {
	now := w.now()
	jobs := make([]*spi.Job, len(specs))
	for i, s := range specs {
		id := w.newID()
		jobs[i] = &spi.Job{
			ID: id, TaskName: s.task, Payload: []byte(fmt.Sprintf(`{"n":%d}`, len(w.jobs)+i+1)),
			Status: spi.StatusPending, Priority: s.prio, ScheduledAt: now.Add(s.delay), CreatedAt: now,
			MaxRetries: s.maxRetries, Backoff: s.backoff, BackoffParam: s.param, IdempotencyKey: s.key,
			Tags: slices.Clone(s.tags), Resource: s.resource, ResourceLimit: s.limit,
		}
		if s.timeout > 0 {
			jobs[i].Params = map[string]string{spi.TimeoutParam: s.timeout.String()}
		}
		if s.maxSnoozes > 0 {
			if jobs[i].Params == nil {
				jobs[i].Params = map[string]string{}
			}
			jobs[i].Params[spi.MaxSnoozesParam] = strconv.Itoa(s.maxSnoozes)
		}
		if s.startBy > 0 {
			if jobs[i].Params == nil {
				jobs[i].Params = map[string]string{}
			}
			if s.within {
				jobs[i].Params[spi.StartWithinParam] = s.startBy.String()
			} else {
				jobs[i].Params[spi.StartByParam] = jobs[i].ScheduledAt.Add(s.startBy).UTC().Format(time.RFC3339Nano)
			}
			// What the client writes for the start-by sweeper: the first
			// run's deadline.
			jobs[i].Properties = map[string]string{spi.StartByProperty: spi.FormatStartBy(jobs[i].ScheduledAt.Add(s.startBy))}
		}
	}
	res, err := w.store.InsertJobs(w.ctx, jobs, spi.InsertOptions{})
	if err != nil {
		return nil, w.storeErr("InsertJobs", err)
	}
	var added []*sjob
	var parts []string
	if len(res) != len(jobs) {
		w.fail(invIdempotency, nil, nil, "InsertJobs returned %d results for %d jobs", len(res), len(jobs))
		return nil, nil
	}
	for i, s := range specs {
		w.check(invIdempotency)
		if existing := w.keys[s.key]; s.key != "" && existing != nil {
			if !res[i].Duplicate || res[i].ID != existing.id {
				w.fail(invIdempotency, []*sjob{existing}, nil, "a submission with the existing key %q of %s returned id %s duplicate=%v",
					s.key, existing.label, res[i].ID, res[i].Duplicate)
				return added, nil
			}
			parts = append(parts, fmt.Sprintf("dup(%s)->%s", s.key, existing.label))
			continue
		}
		if res[i].Duplicate || res[i].ID != jobs[i].ID {
			w.fail(invIdempotency, nil, nil, "a new job %s (key %q) was reported duplicate=%v id %s", jobs[i].ID, s.key, res[i].Duplicate, res[i].ID)
			return added, nil
		}
		j := &sjob{
			idx: len(w.jobs), id: jobs[i].ID, task: s.task, poison: s.poison, flood: s.flood, probe: s.probe,
			prio: s.prio, due: jobs[i].ScheduledAt, maxRetries: s.maxRetries, backoff: s.backoff, param: s.param,
			idemKey: s.key, tags: s.tags, resource: s.resource, limit: s.limit, pendPos: -1, runPos: -1,
			snoozePlan: s.snoozes, maxSnoozes: s.maxSnoozes, stepper: s.steps,
			waitPlan: s.waits, waitKey: s.waitKey, waitTimeout: s.waitTimeout,
		}
		switch {
		case s.startBy > 0 && s.within:
			j.startWithin = s.startBy
		case s.startBy > 0:
			j.startBy = j.due.Add(s.startBy)
		}
		if s.startBy > 0 {
			j.firstBy = j.due.Add(s.startBy)
		}
		j.label = fmt.Sprintf("j%d", j.idx+1)
		w.jobs = append(w.jobs, j)
		w.byID[j.id] = j
		if s.key != "" {
			w.keys[s.key] = j
			w.keyList = append(w.keyList, s.key)
		}
		w.nonTerminal++
		w.setStatus(j, spi.StatusPending)
		w.touch(j)
		added = append(added, j)
		desc := fmt.Sprintf("%s(%s %s", j.label, s.task, s.prio)
		if s.delay > 0 {
			desc += " due " + simtime.Offset(j.due.Sub(w.start))
		}
		desc += fmt.Sprintf(" retries=%d %s", s.maxRetries, s.backoff)
		if s.timeout > 0 {
			desc += " timeout " + s.timeout.String()
		}
		switch {
		case j.startWithin > 0:
			desc += " start-within " + j.startWithin.String()
		case s.startBy > 0:
			desc += " start-by " + simtime.Offset(j.startBy.Sub(w.start))
		}
		if s.snoozes > 0 {
			desc += fmt.Sprintf(" snoozes=%d/%d", s.snoozes, s.maxSnoozes)
		}
		if len(s.tags) > 0 {
			desc += fmt.Sprintf(" tags=%s", strings.Join(s.tags, ","))
		}
		if s.resource != "" {
			desc += fmt.Sprintf(" resource=%s/%d", s.resource, s.limit)
		}
		if s.param > 0 {
			desc += " " + s.param.String()
		}
		if s.key != "" {
			desc += " key=" + s.key
		}
		parts = append(parts, desc+")")
	}
	w.tracef(added, nil, "client submit %s", strings.Join(parts, " "))
	return added, nil
}

// submitTick is one arrival of the workload: 1..4 jobs every 50 ms to
// 1.5 s, until MaxJobs; paused while the aging probe floods the queue.
func (w *world) submitTick() error {
	if w.phase != phaseMain {
		return nil
	}
	defer w.schedule(w.randDur(50*time.Millisecond, 1500*time.Millisecond), &event{kind: evSubmit, node: -1})
	if w.probe.pausesWorkload(w.step) {
		// The probe starts on an empty queue: no job due before it, and no
		// pile of delayed jobs falling due around it, may outrank it.
		// Every batch is sealed, so that it can end before the probe.
		if err := w.sealBatches(); err != nil {
			return err
		}
		if p := w.probe; !p.started && len(w.pending) == 0 && w.blocked == 0 && !w.timeoutsAhead() && w.unendedBatches() == 0 {
			return w.startProbe()
		}
		return nil
	}
	if (w.sc.MaxJobs > 0 && w.ordinaryJobs() >= w.sc.MaxJobs) || w.nonTerminal >= maxBacklog {
		return nil
	}
	if w.flowsOn() && w.rng.IntN(5) == 0 {
		return w.submitFlow(w.randomFlow())
	}
	if w.signalsOn() && w.rng.IntN(8) == 0 {
		return w.submitWaiting()
	}
	if w.batchesOn() && w.rng.IntN(10) == 0 {
		return w.submitBatch()
	}
	if w.uniqueTick() {
		return w.submitUnique()
	}
	if w.rateTick() {
		return w.submitRated()
	}
	if w.sequenceTick() {
		return w.submitSequenced()
	}
	k := 1 + w.rng.IntN(4)
	specs := make([]jobSpec, k)
	for i := range specs {
		specs[i] = w.randomSpec()
	}
	_, err := w.submit(specs)
	return err
}

func (w *world) ordinaryJobs() int {
	n := len(w.jobs)
	if w.probe != nil {
		n -= w.probe.floodJobs
	}
	return n
}

// pausable are the tasks the workload pauses and resumes.
var pausable = []string{"work", "poison"}

// togglePause pauses a task of the workload that runs, or resumes one
// that is paused (spi.TaskPauser): the model's claims leave the paused
// tasks' jobs alone from then on (pause).
func (w *world) togglePause(now time.Time) error {
	p := spi.CapabilitiesOf(w.store).Pauser
	if p == nil {
		return nil
	}
	task := pausable[w.rng.IntN(len(pausable))]
	if w.paused[task] {
		return w.resumeTask(p, task)
	}
	if _, err := p.PauseTask(w.ctx, task, now); err != nil {
		return w.storeErr("PauseTask", err)
	}
	w.paused[task] = true
	w.tracef(nil, nil, "client pause task %s", task)
	return nil
}

// resumeTask resumes task in the store and the model.
func (w *world) resumeTask(p spi.TaskPauser, task string) error {
	if _, err := p.ResumeTask(w.ctx, task); err != nil {
		return w.storeErr("ResumeTask", err)
	}
	delete(w.paused, task)
	w.tracef(nil, nil, "client resume task %s", task)
	return nil // the nodes find the jobs at their next poll
}

// adminTick cancels a PENDING, BLOCKED or RUNNING job, DLQ-retries a
// FAILED one, or cancels a workflow.
func (w *world) adminTick() error {
	if w.phase != phaseMain {
		return nil
	}
	defer w.schedule(w.randDur(2*time.Second, 10*time.Second), &event{kind: evAdmin, node: -1})
	if w.probe.pausesWorkload(w.step) {
		return nil
	}
	now := w.now()
	if w.probe == nil && w.chance(0.15) {
		// (Not with the aging probe, which waits for a drained queue.)
		return w.togglePause(now)
	}
	var j *sjob
	op := "cancel"
	ops := 10
	if w.flowsOn() || w.signalsOn() {
		ops = 12
	}
	if w.signalsOn() {
		ops = 15
	}
	if w.batchesOn() {
		ops = 16
	}
	switch r := w.rng.IntN(ops); {
	case r < 5:
		if len(w.pending) > 0 {
			j = w.pending[w.rng.IntN(len(w.pending))]
		}
	case r == 10:
		var blocked []*sjob // or waiting for a signal
		for _, x := range w.jobs {
			if x.status == spi.StatusBlocked || x.status == spi.StatusWaiting {
				blocked = append(blocked, x)
			}
		}
		if len(blocked) > 0 {
			j = blocked[w.rng.IntN(len(blocked))]
		}
	case r == 11:
		if w.flowsOn() {
			w.adminCancelFlow(now)
		}
		return nil
	case r == 15:
		w.adminCancelBatch(now)
		return nil
	case r >= 12:
		if w.signalsOn() {
			w.adminSignal(now)
		}
		return nil
	case r < 8:
		op = "retry"
		var failed []*sjob
		for _, x := range w.jobs {
			if x.status == spi.StatusFailed {
				failed = append(failed, x)
			}
		}
		if len(failed) > 0 {
			j = failed[w.rng.IntN(len(failed))]
		}
	case r < 10:
		// A job whose body runs, most of the time: its cancel is one
		// the claim check must act on (cancel-running).
		if live := w.executing(); len(live) > 0 && w.rng.IntN(8) != 0 {
			j = live[w.rng.IntN(len(live))]
		} else if len(w.running) > 0 {
			j = w.running[w.rng.IntN(len(w.running))]
		}
	}
	if j == nil {
		return nil
	}
	var err error
	if op == "cancel" {
		err = w.store.CancelJob(w.ctx, j.id, now)
	} else {
		err = w.store.RetryFailedJob(w.ctx, j.id, now)
	}
	res := "ok"
	if err != nil {
		res = err.Error()
	}
	w.tracef([]*sjob{j}, nil, "client %s %s (%s) -> %s", op, j.label, j.status, res)
	w.checkAdmin(op, j, err, now)
	return nil
}

// executing returns the jobs whose bodies run on a node that is up and
// not stalled, in job order.
func (w *world) executing() []*sjob {
	var out []*sjob
	for _, n := range w.nodes {
		if n.state != nodeUp || n.stalled() {
			continue
		}
		for _, x := range n.runningExecs() {
			if !x.cancelled && x.job.status == spi.StatusRunning && x.job.seq == x.ref.ClaimSeq {
				out = append(out, x.job)
			}
		}
	}
	slices.SortFunc(out, func(a, b *sjob) int { return a.idx - b.idx })
	return slices.Compact(out)
}

// probe is the aging probe: a LOWEST job submitted while nothing else is
// due, then a flood of CRITICAL jobs topped up before every claim so that
// one more is due than the claim can take.
type probe struct {
	atStep          int
	started, active bool
	job             *sjob
	due             time.Time
	lastClaim       time.Time
	maxGap          time.Duration
	floodJobs       int
	result          *AgingResult
	totalSlots      int
	boost           time.Duration
}

// pausesWorkload reports whether ordinary submissions and admin actions
// wait: from the probe's start step until its job is claimed.
func (p *probe) pausesWorkload(step int) bool {
	return p != nil && ((!p.started && step >= p.atStep) || p.active)
}

func (p *probe) claimCall(now time.Time) {
	p.maxGap = max(p.maxGap, now.Sub(p.lastClaim))
	p.lastClaim = now
}

// bound is the aging bound at now (see AgingResult.Bound).
func (p *probe) bound(now time.Time) (time.Duration, time.Duration) {
	gap := max(p.maxGap, now.Sub(p.lastClaim))
	return 5*p.boost + time.Duration(p.totalSlots+2)*gap, gap
}

func (w *world) startProbe() error {
	p := w.probe
	p.started, p.active = true, true
	p.boost = w.sc.BoostInterval
	for _, n := range w.nodes {
		p.totalSlots += n.slots
	}
	added, err := w.submit([]jobSpec{{task: "probe", prio: spi.PriorityLowest, probe: true, backoff: spi.BackoffNone}})
	if err != nil || len(added) == 0 {
		return err
	}
	p.job, p.due, p.lastClaim = added[0], added[0].due, w.now()
	w.tracef(added, nil, "aging probe: %s (LOWEST) is due; CRITICAL jobs flood every claim until it is claimed", p.job.label)
	return nil
}

// floodTopUp makes one more CRITICAL job due than a claim of limit takes.
func (w *world) floodTopUp(limit int) error {
	now := w.now()
	due := 0
	for _, j := range w.pending {
		if j.prio == spi.PriorityCritical && !j.due.After(now) {
			due++
		}
	}
	need := limit + 1 - due
	if need <= 0 {
		return nil
	}
	specs := make([]jobSpec, need)
	for i := range specs {
		specs[i] = jobSpec{task: "flood", prio: spi.PriorityCritical, flood: true, backoff: spi.BackoffNone}
	}
	w.probe.floodJobs += need
	_, err := w.submit(specs)
	return err
}

func (w *world) probeClaimed(now time.Time) {
	p := w.probe
	p.active = false
	wait := now.Sub(p.due)
	bound, gap := p.bound(now)
	p.result = &AgingResult{
		Probe: p.job.label, Due: p.due.Sub(w.start), Wait: wait, Bound: bound, BoostInterval: p.boost,
		MaxClaimGap: gap, TotalSlots: p.totalSlots, FloodJobs: p.floodJobs,
	}
	w.report.Aging = p.result
	w.check(invAging)
	w.tracef([]*sjob{p.job}, nil, "aging probe: %s claimed after %s (bound %s)", p.job.label, wait, bound)
	if wait > bound {
		w.fail(invAging, []*sjob{p.job}, nil, "LOWEST %s was claimed %s after it was due, over the bound %s (5×%s + %d×%s)",
			p.job.label, wait, bound, p.boost, p.totalSlots+2, gap)
	}
}

// checkProbe fails the run as soon as the probe has waited past its bound.
func (w *world) checkProbe() {
	p := w.probe
	if p == nil || !p.active {
		return
	}
	now := w.now()
	bound, gap := p.bound(now)
	w.check(invAging)
	if now.Sub(p.due) > bound {
		w.fail(invAging, []*sjob{p.job}, nil, "LOWEST %s has waited %s under the CRITICAL flood without a claim, over the bound %s (5×%s + %d×%s)",
			p.job.label, now.Sub(p.due), bound, p.boost, p.totalSlots+2, gap)
	}
}
