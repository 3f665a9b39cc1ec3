package cluster

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/ratchet-go/ratchet/simtest/internal/simtime"

	"github.com/google/uuid"

	ratchet "github.com/ratchet-go/ratchet/sdk"
	"github.com/ratchet-go/ratchet/sdk/spi"
)

// The invariants, as named in violations and in Report.Checks. Each maps to
// one of the invariants of docs/architecture.md:
const (
	invClaimOrder  = "claim-order"     // 5: effective priority desc, due asc, id asc, exactly
	invSingleOwner = "single-owner"    // 1: a claim takes a PENDING job and advances claim_seq; one current owner
	invFence       = "fence"           // 2: an owner write applies iff its claim is current
	invRecovery    = "orphan-recovery" // 3: exactly the dead nodes' jobs, budget-charged
	invCrashBudget = "crash-budget"    // 3: crash_count <= budget; poison jobs fail after exactly budget+1 crashes
	invRelease     = "graceful-stop"   // 4: release charges nothing
	invRetryPath   = "retry-path"      // 6: the engine's decision equals the FAQ's path
	invNothingLost = "nothing-lost"    // 8: every job in exactly one known state; terminal after healing
	invStoreModel  = "store-matches-model"
	invAging       = "aging-bound"
	invIdempotency = "idempotency"
	invAdminOps    = "admin-ops"
	invPermits     = "permits"     // a resource never has more RUNNING jobs than its limit
	invClaimCheck  = "claim-check" // ClaimChecker reports a claim current iff it is
	invSlots       = "slots"       // a node never runs more bodies than it has slots
	invFreshClaim  = "fresh-claim" // a job is never recovered within grace − 2·heartbeat of its claim (no clock jump)
	// A job cancelled while RUNNING has its body cancelled by the first
	// claim check of its node that succeeds after the cancel.
	invCancelRunning = "cancel-running"
	// A run past its timeout fails then (its failure written while its
	// body goes on), and the body's later return writes nothing.
	invTimeout = "timeout"
	// A job claimed after its start-by deadline never runs: the claim's
	// node fails it with ErrExpired, not retried, in place of its body.
	invStartBy = "start-by"
	// A body that snoozes puts its job back to PENDING due after the
	// snooze, its snooze count one more and its attempts unchanged; past
	// the job's bound (spi.MaxSnoozes) it fails for good instead.
	invSnooze = "snooze"
	// A claim made after a task's pause returned takes none of its jobs;
	// resumed, they are claimed again.
	invPause = "pause"
	// A run's durable step (a write of the job's step log fenced by its
	// claim, ratchet.RunStep) is recorded iff its claim is current: a run
	// that lost it (its node stalled past the grace, its job cancelled)
	// records nothing.
	invStepFence = "step-fence"
	// Every run but a success leaves an attempt record, written with the
	// transition that ends it, naming how it ended (the body's return, a
	// timeout, an expiry, a release, a crash, a cancel); a job keeps its
	// last spi.AttemptsKept claims' records.
	invAttempts     = "attempts"
	recoveryMessage = "crash budget exhausted: the job's node died while running it"
)

// Tags and resource permits (ClaimParams.Tags, Job.Resource and
// ResourceLimit) are modelled exactly: expectedClaim takes, in claim order,
// the due jobs whose tags the node's filter accepts, skipping (not waiting
// for) a job whose resource is full counting the jobs the claim takes, and
// checkClaim checks that no resource ever has more RUNNING jobs than its
// limit. Other optional capabilities (leases, job state, properties) are
// not exercised yet: add them as node actions plus model checks here.

// sjob is the model of one job: what the store must hold for it.
type sjob struct {
	// abandoned: the final flush of its node's stop could not write its
	// completion, so it stays RUNNING for orphan recovery. adopting: a
	// claim took it, but its answer was lost; its node adopts it with its
	// next claim that succeeds.
	abandoned, adopting bool

	idx   int
	id    uuid.UUID
	label string
	task  string

	poison, flood, probe bool

	prio spi.Priority
	due  time.Time
	// startBy is the start-by deadline (spi.StartByParam), startWithin the
	// window after each due time (spi.StartWithinParam); zero for none.
	startBy     time.Time
	startWithin time.Duration
	// firstBy is the deadline of the first run, which the start-by
	// sweeper reads (spi.StartByProperty); zero for none.
	firstBy    time.Time
	maxRetries int
	backoff    spi.BackoffKind
	param      time.Duration
	idemKey    string
	tags       []string
	resource   string
	limit      int

	status spi.Status
	seq    int64
	owner  string
	// claimedAt is when the current claim was made, claimJumps the clock
	// jumps before it, claimRow its node's heartbeat row then (zero: none).
	claimedAt, claimRow time.Time
	claimJumps          int
	attempts            int
	crash               int
	// snoozes is the job's snooze count; snoozePlan how many times its
	// body snoozes before it ends otherwise, maxSnoozes its bound (0:
	// spi.DefaultMaxSnoozes).
	snoozes, snoozePlan, maxSnoozes int
	lastErr                         string
	// ratePeriod is the period of the job's rate limit (its resource and
	// limit are the limit's); 0 for none (ratelimit.go).
	ratePeriod time.Duration
	// stepper: the job's body records a durable step at each run's end;
	// stepsDone is how many its log holds.
	stepper   bool
	stepsDone int
	// waitPlan is how many waits in a row the body makes (waitsignal.go),
	// under waitKey, each at most waitTimeout; waitLog the waits its step
	// log holds.
	waitPlan    int
	waitKey     string
	waitTimeout time.Duration
	waitLog     []*swait
	finishedAt  time.Time

	// records are the attempt records the store must hold (claim and
	// outcome), oldest first.
	records []spi.Attempt

	// since the last DLQ retry: claims, recoveries and releases
	claims, recoveries, releases int

	pendPos, runPos int
	stamp           int

	// The workflow the job belongs to (nil: none), its edges and its
	// dependents; callback marks a job whose one edge is a callback's.
	flow     *sflow
	deps     []*sedge
	kids     []*sjob
	callback bool
	// successes counts the job's applied successful completions, bodies
	// the bodies the gate let start since the job was last revived, and
	// handCancelled says that a cancel by hand (or of its workflow) ended
	// it.
	successes, bodies int
	handCancelled     bool
	// abortedSeq is the claim a cancel by hand ended while the job was
	// RUNNING (0: none).
	abortedSeq int64
	// gated counts the claims since the last DLQ retry that the gate
	// ended (SKIPPED or CANCELLED) without a body.
	gated int
	// sig is the job's wait for a signal; nil for none.
	sig *ssig
	// batch is the batch the job is a child of; nil for none.
	batch *sbatch
	// fairKey is the fairness key the job was submitted with; empty for
	// none.
	fairKey string
	// seqKey is the sequence the job was submitted to; empty for none.
	// retried marks a job of one that a DLQ retry ran again: the jobs
	// after it may have started already (continuing on its failure).
	seqKey  string
	retried bool
}

func (j *sjob) String() string {
	s := fmt.Sprintf("%s[%s %s seq=%d", j.label, j.status, j.prio, j.seq)
	if j.owner != "" {
		s += " owner=" + j.owner
	}
	if j.attempts > 0 {
		s += fmt.Sprintf(" attempts=%d", j.attempts)
	}
	if j.crash > 0 {
		s += fmt.Sprintf(" crash=%d", j.crash)
	}
	if j.poison {
		s += " poison"
	}
	return s + "]"
}

func describeJobs(js []*sjob) string {
	parts := make([]string, len(js))
	for i, j := range js {
		parts[i] = j.String()
	}
	return strings.Join(parts, ", ")
}

// model is the simulator's own account of the store: it changes only by
// the rules of the spi.Store contract, applied to what each call was asked.
type model struct {
	jobs        []*sjob
	byID        map[uuid.UUID]*sjob
	keys        map[string]*sjob
	keyList     []string
	nodeRows    map[string]time.Time
	pending     []*sjob
	running     []*sjob
	nonTerminal int
	// holders counts the RUNNING jobs of each resource.
	holders map[string]int
	// rates holds the starts (claim times) of each rate limit's resource
	// within its period (ratelimit.go).
	rates map[string][]time.Time
	// flows are the workflows submitted; blocked counts the BLOCKED jobs.
	flows   []*sflow
	blocked int
	// waits counts the jobs submitted waiting for a signal.
	waits int
	// batches are the batches submitted.
	batches []*sbatch
	// paused are the tasks the workload paused (spi.TaskPauser).
	paused map[string]bool
	// runEnds is how each execution's completion must say its run ended
	// (the attempt record's outcome), by its claim, until it is written.
	runEnds map[spi.ClaimRef]spi.AttemptOutcome
}

func (m *model) init() {
	m.byID = map[uuid.UUID]*sjob{}
	m.keys = map[string]*sjob{}
	m.nodeRows = map[string]time.Time{}
	m.holders = map[string]int{}
	m.rates = map[string][]time.Time{}
	m.paused = map[string]bool{}
	m.runEnds = map[spi.ClaimRef]spi.AttemptOutcome{}
}

// recordRun adds to the model the attempt record of j's run under claim
// seq, ended with outcome, keeping the records of the job's last
// spi.AttemptsKept claims.
func (m *model) recordRun(j *sjob, seq int64, outcome spi.AttemptOutcome) {
	j.records = append(j.records, spi.Attempt{JobID: j.id, ClaimSeq: seq, Outcome: outcome})
	for len(j.records) > 0 && j.records[0].ClaimSeq <= seq-spi.AttemptsKept {
		j.records = j.records[1:]
	}
}

// setStatus moves a job between states, keeping the pending and running
// sets and the count of non-terminal jobs.
func (m *model) setStatus(j *sjob, st spi.Status) {
	if j.status == st {
		return
	}
	switch j.status {
	case spi.StatusPending:
		m.pending = removeAt(m.pending, j, func(j *sjob) *int { return &j.pendPos })
	case spi.StatusRunning:
		m.running = removeAt(m.running, j, func(j *sjob) *int { return &j.runPos })
		if j.resource != "" {
			m.holders[j.resource]--
		}
	case spi.StatusBlocked:
		m.blocked--
	}
	wasTerminal := j.status.Terminal()
	j.status = st
	switch st {
	case spi.StatusPending:
		j.pendPos = len(m.pending)
		m.pending = append(m.pending, j)
	case spi.StatusRunning:
		j.runPos = len(m.running)
		m.running = append(m.running, j)
		if j.resource != "" {
			m.holders[j.resource]++
		}
	case spi.StatusBlocked:
		m.blocked++
	}
	switch {
	case wasTerminal && !st.Terminal():
		m.nonTerminal++
	case !wasTerminal && st.Terminal():
		m.nonTerminal--
	}
}

// removeAt swap-removes j from set, keeping the positions stored in jobs.
func removeAt(set []*sjob, j *sjob, pos func(*sjob) *int) []*sjob {
	i := *pos(j)
	last := len(set) - 1
	set[i] = set[last]
	*pos(set[i]) = i
	set[last] = nil
	*pos(j) = -1
	return set[:last]
}

// touch marks a job for the after-step checks.
func (w *world) touch(j *sjob) {
	if j.stamp != w.stamp {
		j.stamp = w.stamp
		w.touched = append(w.touched, j)
	}
}

func (w *world) check(inv string) { w.report.Checks[inv]++ }

// effective is the aging formula of docs/architecture.md, invariant 5, written out
// independently of spi.EffectivePriority.
func effective(p spi.Priority, due, now time.Time, boost time.Duration) int64 {
	if boost <= 0 || !now.After(due) {
		return int64(p)
	}
	return int64(p) + int64(now.Sub(due)/boost)
}

// expectedClaim returns the jobs a claim of limit at now, filtered by tags,
// must take: the due PENDING jobs the filter accepts, ordered by effective
// priority descending, then due time, then id, skipping each job whose
// resource is full (counting the jobs this claim takes).
func (w *world) expectedClaim(limit int, now time.Time, tags spi.TagFilter, full map[string]bool) []*sjob {
	var due []*sjob
	for _, j := range w.pending {
		if !j.due.After(now) && tags.Match(j.tags) && !full[j.task] && !w.paused[j.task] {
			due = append(due, j)
		}
	}
	b := w.sc.BoostInterval
	slices.SortFunc(due, func(a, c *sjob) int {
		ea, ec := effective(a.prio, a.due, now, b), effective(c.prio, c.due, now, b)
		if ea != ec {
			if ea > ec {
				return -1
			}
			return 1
		}
		if !a.due.Equal(c.due) {
			return a.due.Compare(c.due)
		}
		return bytes.Compare(a.id[:], c.id[:])
	})
	var out []*sjob
	taking := map[string]int{}
	for _, j := range due {
		if len(out) == limit {
			break
		}
		if j.resource != "" {
			if w.holders[j.resource]+taking[j.resource] >= j.limit {
				continue // held back by a full resource: skipped, not waited for
			}
			if j.ratePeriod > 0 && len(w.window(j.resource, j.ratePeriod, now))+taking[j.resource] >= j.limit {
				continue // held back by a full rate window: skipped, not waited for
			}
			taking[j.resource]++
		}
		out = append(out, j)
	}
	return out
}

// checkClaim compares a claim's result with the model and applies it.
func (w *world) checkClaim(n *node, limit int, now time.Time, got []*spi.Job) []*sjob {
	if len(w.paused) > 0 {
		w.check(invPause)
		for _, g := range got {
			if j := w.byID[g.ID]; j != nil && w.paused[j.task] {
				w.fail(invPause, []*sjob{j}, []*node{n}, "%s claimed %s of task %s, paused before the claim", n.id, j.label, j.task)
				return nil
			}
		}
	}
	if !w.checkRates(n, now, got) {
		return nil
	}
	w.check(invClaimOrder)
	want := w.expectedClaim(limit, now, n.tags, n.fullTasks())
	wantSet := map[uuid.UUID]bool{}
	for _, j := range want {
		wantSet[j.id] = true
	}
	var claimed []*sjob
	same := len(got) == len(want)
	for _, g := range got {
		j := w.byID[g.ID]
		if j == nil {
			w.fail(invNothingLost, nil, []*node{n}, "%s claimed job %s, which was never submitted", n.id, g.ID)
			return nil
		}
		claimed = append(claimed, j)
		same = same && wantSet[g.ID]
	}
	if !same {
		involved := slices.Clone(want)
		for _, j := range claimed {
			if !wantSet[j.id] {
				involved = append(involved, j)
			}
		}
		w.fail(invClaimOrder, involved, []*node{n}, "%s claimed %s with limit %d%s; the order (effective priority, due, id%s) at %s demands %s",
			n.id, w.effList(claimed, now), limit, filterNote(n.tags), w.permitNote(), simtime.Offset(now.Sub(w.start)), w.effList(want, now))
		return nil
	}
	for i, g := range got {
		j := claimed[i]
		w.check(invSingleOwner)
		switch {
		case j.status != spi.StatusPending:
			w.fail(invSingleOwner, []*sjob{j}, []*node{n}, "%s claimed %s, which was %s, not PENDING (claim_seq %d -> %d)", n.id, j.label, j.status, j.seq, g.ClaimSeq)
		case g.ClaimSeq != j.seq+1:
			w.fail(invSingleOwner, []*sjob{j}, []*node{n}, "claim of %s by %s returned claim_seq %d; the previous was %d", j.label, n.id, g.ClaimSeq, j.seq)
		case g.Status != spi.StatusRunning || g.OwnerNode != n.id:
			w.fail(invSingleOwner, []*sjob{j}, []*node{n}, "claim of %s by %s returned status %s owner %q", j.label, n.id, g.Status, g.OwnerNode)
		case g.Attempts != j.attempts || g.CrashCount != j.crash || g.Snoozes != j.snoozes:
			w.fail(invStoreModel, []*sjob{j}, []*node{n}, "claim of %s returned attempts %d crash %d snoozes %d; expected %d, %d and %d",
				j.label, g.Attempts, g.CrashCount, g.Snoozes, j.attempts, j.crash, j.snoozes)
		}
		if w.failure != nil {
			return nil
		}
		w.setStatus(j, spi.StatusRunning)
		j.seq++
		j.owner = n.id
		j.claims++
		j.claimedAt, j.claimRow, j.claimJumps, j.abandoned, j.adopting = now, w.nodeRows[n.id], w.jumps, false, false
		w.touch(j)
		if j.ratePeriod > 0 {
			w.rates[j.resource] = append(w.rates[j.resource], now)
		}
		if j.resource != "" {
			w.check(invPermits)
			if w.holders[j.resource] > j.limit {
				w.fail(invPermits, []*sjob{j}, []*node{n}, "claim of %s by %s makes %d RUNNING jobs of resource %q, over its limit %d",
					j.label, n.id, w.holders[j.resource], j.resource, j.limit)
				return nil
			}
		}
	}
	w.passTurns(claimed, now)
	return claimed
}

func filterNote(f spi.TagFilter) string {
	if f.Empty() {
		return ""
	}
	return fmt.Sprintf(" and tag filter %+v", f)
}

func (w *world) permitNote() string {
	if len(w.holders) == 0 {
		return ""
	}
	keys := make([]string, 0, len(w.holders))
	for r, n := range w.holders {
		if n > 0 {
			keys = append(keys, fmt.Sprintf("%s=%d", r, n))
		}
	}
	slices.Sort(keys)
	if len(keys) == 0 {
		return ""
	}
	return ", resources held " + strings.Join(keys, " ")
}

func (w *world) effList(js []*sjob, now time.Time) string {
	if len(js) == 0 {
		return "nothing"
	}
	parts := make([]string, len(js))
	for i, j := range js {
		extra := ""
		if j.resource != "" {
			extra += fmt.Sprintf(" res %s/%d", j.resource, j.limit)
		}
		if len(j.tags) > 0 {
			extra += fmt.Sprintf(" tags %v", j.tags)
		}
		parts[i] = fmt.Sprintf("%s(%s eff %d due %s%s)", j.label, j.prio, effective(j.prio, j.due, now, w.sc.BoostInterval), simtime.Offset(j.due.Sub(w.start)), extra)
	}
	return strings.Join(parts, " ")
}

// checkComplete compares the fenced outcome of each completion with the
// model and applies the ones that must apply.
func (w *world) checkComplete(n *node, cs []spi.Completion, applied []bool) {
	if len(applied) != len(cs) {
		w.fail(invFence, nil, []*node{n}, "CompleteJobs returned %d results for %d completions", len(applied), len(cs))
		return
	}
	for i, c := range cs {
		j := w.byID[c.JobID]
		w.check(invFence)
		current := j.status == spi.StatusRunning && j.seq == c.ClaimSeq
		switch {
		case applied[i] && !current:
			w.fail(invFence, []*sjob{j}, []*node{n}, "superseded write applied: %s's completion of %s under claim %d was applied, but the job is %s with claim %d%s",
				n.id, j.label, c.ClaimSeq, j.status, j.seq, ownerNote(j))
		case !applied[i] && current:
			w.fail(invFence, []*sjob{j}, []*node{n}, "%s's completion of %s under its current claim %d was reported superseded", n.id, j.label, c.ClaimSeq)
		}
		if w.failure != nil {
			return
		}
		w.touch(j)
		end := w.runEnds[c.ClaimRef]
		delete(w.runEnds, c.ClaimRef)
		if !applied[i] {
			w.report.Superseded++
			continue
		}
		if end != "" && end != spi.AttemptSucceeded {
			w.recordRun(j, c.ClaimSeq, end)
		}
		switch c.Outcome {
		case spi.OutcomeSucceeded:
			w.setStatus(j, spi.StatusSucceeded)
			j.finishedAt = c.FinishedAt
			j.successes++
			if j.callback {
				w.check(invCallbackOnce)
				if j.successes > 1 {
					w.fail(invCallbackOnce, parentsOf(j), []*node{n}, "callback %s succeeded a second time", j.label)
					return
				}
			}
		case spi.OutcomeRetry:
			w.setStatus(j, spi.StatusPending)
			j.due, j.attempts, j.lastErr, j.owner = c.RetryAt, c.Attempts, c.LastError, ""
		case spi.OutcomeSnoozed:
			w.setStatus(j, spi.StatusPending)
			j.due, j.snoozes, j.owner = c.RetryAt, c.Snoozes, ""
		case spi.OutcomeWaiting:
			w.applyWait(j, c)
		case spi.OutcomeFailed:
			w.setStatus(j, spi.StatusFailed)
			j.finishedAt, j.attempts, j.lastErr = c.FinishedAt, c.Attempts, c.LastError
		case spi.OutcomeSkipped, spi.OutcomeCancelled:
			w.setStatus(j, c.Outcome.Status())
			j.finishedAt, j.lastErr = c.FinishedAt, c.LastError
			j.gated++
		}
		if j.status.Terminal() {
			w.flowFinished(j, c.FinishedAt)
		}
	}
}

func ownerNote(j *sjob) string {
	if j.owner != "" {
		return " owned by " + j.owner
	}
	return ""
}

// checkRelease checks a graceful stop's release: fenced like a completion,
// back to PENDING due now, nothing charged, the old claim fenced out.
func (w *world) checkRelease(n *node, refs []spi.ClaimRef, applied []bool, now time.Time) {
	if len(applied) != len(refs) {
		w.fail(invRelease, nil, []*node{n}, "ReleaseJobs returned %d results for %d refs", len(applied), len(refs))
		return
	}
	for i, r := range refs {
		j := w.byID[r.JobID]
		w.check(invRelease)
		current := j.status == spi.StatusRunning && j.seq == r.ClaimSeq
		if applied[i] != current {
			w.fail(invFence, []*sjob{j}, []*node{n}, "%s's release of %s under claim %d: applied=%v, but the job is %s with claim %d",
				n.id, j.label, r.ClaimSeq, applied[i], j.status, j.seq)
			return
		}
		w.touch(j)
		if applied[i] {
			w.recordRun(j, j.seq, spi.AttemptReleased)
			w.setStatus(j, spi.StatusPending)
			j.due, j.owner = now, ""
			j.seq++
			j.releases++
			w.report.Released++
		}
	}
}

// checkRecover checks that an orphan scan recovered exactly the RUNNING
// jobs of dead nodes, charging the crash budget, and applies it.
//
// What it expects follows from the node's configuration, not from the
// call's parameters: the scan of a restart names the node itself, and
// every scan uses the configured grace and crash budget.
func (w *world) checkRecover(n *node, p spi.RecoverParams, got []spi.RecoveredJob) {
	w.check(invRecovery)
	var nodes []string
	if n.starting {
		nodes = []string{n.id}
	}
	cutoff := w.now().Add(-w.sc.OrphanGrace)
	dead := func(owner string) bool {
		if slices.Contains(nodes, owner) {
			return true
		}
		hb, ok := w.nodeRows[owner]
		return !ok || hb.Before(cutoff)
	}
	var want []*sjob
	for _, j := range w.running {
		if dead(j.owner) {
			want = append(want, j)
		}
	}
	slices.SortFunc(want, func(a, b *sjob) int { return bytes.Compare(a.id[:], b.id[:]) })
	gotJobs := make([]*sjob, len(got))
	ok := len(got) == len(want)
	for i, g := range got {
		gotJobs[i] = w.byID[g.JobID]
		if gotJobs[i] == nil {
			w.fail(invNothingLost, nil, []*node{n}, "orphan scan by %s recovered job %s, which was never submitted", n.id, g.JobID)
			return
		}
		ok = ok && gotJobs[i] == want[i]
	}
	if !ok {
		w.fail(invRecovery, append(want, gotJobs...), []*node{n}, "orphan scan by %s (grace %s, nodes %v; it asked for grace %s, nodes %v) recovered %s; expected %s",
			n.id, w.sc.OrphanGrace, nodes, p.Grace, p.Nodes, labels(gotJobs), labels(want))
		return
	}
	for i, g := range got {
		j := want[i]
		w.check(invRelease)
		if owner := w.nodeByID(j.owner); owner != nil && owner.state == nodeStopping && owner.stopClean {
			w.fail(invRelease, []*sjob{j}, []*node{owner, n}, "orphan scan by %s recovered %s, charging its crash budget, while %s was draining it in a graceful stop "+
				"(no stall, no clock jump): a graceful stop must release without charge, even when the drain times out; "+
				"the stopping node's heartbeat is %s old, over the grace %s", n.id, j.label, owner.id, p.Now.Sub(w.nodeRows[owner.id]), p.Grace)
			return
		}
		if w.recoveredFresh(n, p, j) {
			return
		}
		w.check(invCrashBudget)
		wantStatus, wantCrash := spi.StatusFailed, j.crash
		if j.crash < w.maxCrash {
			wantStatus, wantCrash = spi.StatusPending, j.crash+1
		}
		if g.NewStatus != wantStatus || g.CrashCount != wantCrash || g.FromNode != j.owner {
			w.fail(invCrashBudget, []*sjob{j}, []*node{n}, "recovery of %s (crash count %d, budget %d, asked %d, owner %s) reported %s crash %d from %q; expected %s crash %d",
				j.label, j.crash, w.maxCrash, p.MaxCrashRedeliveries, j.owner, g.NewStatus, g.CrashCount, g.FromNode, wantStatus, wantCrash)
			return
		}
		w.recordRun(j, j.seq, spi.AttemptCrashed)
		w.setStatus(j, wantStatus)
		j.crash, j.owner = wantCrash, ""
		j.seq++
		j.recoveries++
		if wantStatus == spi.StatusPending {
			j.due = p.Now
		} else {
			j.finishedAt, j.lastErr = p.Now, p.LastError
			w.flowFinished(j, p.Now)
		}
		w.touch(j)
		w.report.Recovered++
	}
	for node, hb := range w.nodeRows {
		if slices.Contains(nodes, node) || hb.Before(cutoff) {
			delete(w.nodeRows, node)
		}
	}
}

// recoveredFresh reports (and fails) a recovery of a job that its node
// claimed under a fresh heartbeat too recently for the row to have gone
// stale since: the poller refreshes a beat older than two intervals before
// it claims, so a recovery needs at least grace − 2·interval after the
// claim, unless the clock jumped. A restart's recovery of its own node's
// jobs is not a staleness recovery and is not checked.
func (w *world) recoveredFresh(n *node, p spi.RecoverParams, j *sjob) bool {
	window := w.sc.OrphanGrace - 2*w.sc.HeartbeatInterval
	if window <= 0 || slices.Contains(p.Nodes, j.owner) || j.abandoned || j.adopting {
		return false
	}
	w.check(invFreshClaim)
	if w.jumps != j.claimJumps || p.Now.Sub(j.claimedAt) >= window {
		return false
	}
	row := "no row"
	if !j.claimRow.IsZero() {
		row = fmt.Sprintf("a row %s old", j.claimedAt.Sub(j.claimRow))
	}
	w.fail(invFreshClaim, []*sjob{j}, []*node{n}, "orphan scan by %s recovered %s %s after %s claimed it, with %s (grace %s, heartbeat %s): "+
		"a node must refresh a heartbeat older than two intervals before it claims", n.id, j.label, p.Now.Sub(j.claimedAt), j.owner, row, p.Grace, w.sc.HeartbeatInterval)
	return true
}

func labels(js []*sjob) string {
	if len(js) == 0 {
		return "nothing"
	}
	parts := make([]string, len(js))
	for i, j := range js {
		parts[i] = j.label
	}
	return "[" + strings.Join(parts, " ") + "]"
}

func (w *world) nodeByID(id string) *node {
	for _, n := range w.nodes {
		if n.id == id {
			return n
		}
	}
	return nil
}

// checkRetryPath checks the engine's retry decision for a failed execution
// against the FAQ's decision path, computed independently.
func (w *world) checkRetryPath(j *sjob, snap *spi.Job, err error, c spi.Completion) {
	w.check(invRetryPath)
	attempt := snap.Attempts + 1
	retry := !ratchet.IsDoNotRetry(err) && w.policy.ShouldRetry(attempt, err) && attempt <= snap.MaxRetries
	var at time.Time
	if retry {
		d := w.policy.Delay(attempt)
		if d <= 0 {
			switch snap.Backoff {
			case spi.BackoffFixed:
				d = snap.BackoffParam
			case spi.BackoffExponential:
				d = snap.BackoffParam
				for i := 1; i < attempt && d < spi.MaxBackoff; i++ {
					d *= 2
				}
				d = min(d, spi.MaxBackoff)
			}
		}
		at = c.FinishedAt.Add(d)
	}
	gotRetry := c.Outcome == spi.OutcomeRetry
	if gotRetry != retry || c.Attempts != attempt || (retry && !c.RetryAt.Equal(at)) || (!retry && c.Outcome != spi.OutcomeFailed) {
		w.fail(invRetryPath, []*sjob{j}, nil, "attempt %d of %s (max retries %d, backoff %s %s) failed with %q: the engine decided %s; the FAQ's path gives %s",
			attempt, j.label, snap.MaxRetries, snap.Backoff, snap.BackoffParam, err, w.describeCompletion(c), w.describeRetry(retry, at, attempt))
	}
}

// checkSnooze checks the engine's completion c of a run of j (claimed as
// snap) whose body snoozed for d: a snooze due at d from now, its count one
// more and no attempt spent; past the job's bound, a final failure
// wrapping ErrTooManySnoozes that spends the attempt.
func (w *world) checkSnooze(j *sjob, snap *spi.Job, d time.Duration, c spi.Completion) {
	w.check(invSnooze)
	limit := spi.DefaultMaxSnoozes
	if j.maxSnoozes > 0 {
		limit = j.maxSnoozes
	}
	var want string
	switch {
	case snap.Snoozes >= limit:
		if c.Outcome != spi.OutcomeFailed || c.Attempts != snap.Attempts+1 || !strings.Contains(c.LastError, ratchet.ErrTooManySnoozes.Error()) {
			want = fmt.Sprintf("a final failure (snoozed %d times, bound %d), attempt %d", snap.Snoozes, limit, snap.Attempts+1)
		}
	case c.Outcome != spi.OutcomeSnoozed || c.Snoozes != snap.Snoozes+1 || !c.RetryAt.Equal(c.FinishedAt.Add(d)):
		want = fmt.Sprintf("snooze %d, due at %s, attempts still %d", snap.Snoozes+1, simtime.Offset(c.FinishedAt.Add(d).Sub(w.start)), snap.Attempts)
	}
	if want != "" {
		w.fail(invSnooze, []*sjob{j}, nil, "the body of %s snoozed for %s: the engine decided %s; expected %s", j.label, d, w.describeCompletion(c), want)
	}
}

func (w *world) describeRetry(retry bool, at time.Time, attempt int) string {
	if !retry {
		return fmt.Sprintf("attempt %d, to the DLQ", attempt)
	}
	return fmt.Sprintf("attempt %d, retry at %s", attempt, simtime.Offset(at.Sub(w.start)))
}

// checkAdmin checks a cancel or DLQ retry against the model and applies it.
func (w *world) checkAdmin(op string, j *sjob, err error, now time.Time) {
	w.check(invAdminOps)
	allowed := j.status == spi.StatusPending || j.status == spi.StatusBlocked || j.status == spi.StatusWaiting || j.status == spi.StatusRunning
	if op == "retry" {
		allowed = j.status == spi.StatusFailed
	}
	switch {
	case allowed && err != nil:
		w.fail(invAdminOps, []*sjob{j}, nil, "%s of %s, which is %s, failed: %v", op, j.label, j.status, err)
	case !allowed && !errors.Is(err, spi.ErrInvalidState):
		w.fail(invAdminOps, []*sjob{j}, nil, "%s of %s, which is %s, returned %v; expected an error wrapping ErrInvalidState", op, j.label, j.status, err)
	}
	if w.failure != nil || !allowed {
		return
	}
	w.touch(j)
	if op == "cancel" && j.status == spi.StatusWaiting {
		w.resolveModel(j, spi.SignalCancelled, nil, now)
		return
	}
	if op == "cancel" {
		if j.status == spi.StatusBlocked {
			w.leaveSequence(j, now)
		}
		if j.status == spi.StatusRunning {
			j.abortedSeq = j.seq
			w.wakeChecks()
		}
		w.cancelledByHand([]*sjob{j}, now)
		w.flowFinished(j, now)
		return
	}
	w.setStatus(j, spi.StatusPending)
	j.retried = j.seqKey != ""
	j.lastErr, j.attempts, j.crash, j.snoozes, j.due, j.finishedAt, j.owner = "", 0, 0, 0, now, time.Time{}, ""
	j.claims, j.recoveries, j.releases, j.gated = 0, 0, 0, 0
	w.reviveFlow(j)
}

// compareJob reports how a stored job differs from the model, or "".
// Fields the contract leaves open for a state (the owner of a finished job,
// the finish time of a cancelled one) are not compared.
func (w *world) compareJob(j *sjob, g *spi.Job) string {
	var diffs []string
	add := func(field string, got, want any) {
		diffs = append(diffs, fmt.Sprintf("%s is %v, expected %v", field, got, want))
	}
	if g.Status != j.status {
		add("status", g.Status, j.status)
	}
	if g.ClaimSeq != j.seq {
		add("claim_seq", g.ClaimSeq, j.seq)
	}
	if !j.status.Terminal() && g.OwnerNode != j.owner {
		add("owner", fmt.Sprintf("%q", g.OwnerNode), fmt.Sprintf("%q", j.owner))
	}
	if g.Attempts != j.attempts {
		add("attempts", g.Attempts, j.attempts)
	}
	if g.CrashCount != j.crash {
		add("crash_count", g.CrashCount, j.crash)
	}
	if g.Snoozes != j.snoozes {
		add("snoozes", g.Snoozes, j.snoozes)
	}
	if j.status == spi.StatusPending && !g.ScheduledAt.Equal(j.due) {
		add("scheduled", simtime.Offset(g.ScheduledAt.Sub(w.start)), simtime.Offset(j.due.Sub(w.start)))
	}
	if g.LastError != j.lastErr {
		add("last_error", fmt.Sprintf("%q", g.LastError), fmt.Sprintf("%q", j.lastErr))
	}
	if (j.status == spi.StatusSucceeded || j.status == spi.StatusFailed) && !g.FinishedAt.Equal(j.finishedAt) {
		add("finished", simtime.Offset(g.FinishedAt.Sub(w.start)), simtime.Offset(j.finishedAt.Sub(w.start)))
	}
	if d := w.compareSignal(j, g); d != "" {
		diffs = append(diffs, d)
	}
	return strings.Join(diffs, "; ")
}

// checkStep runs after every step: each job the step touched is read back
// and compared with the model; no two nodes believe they hold its current
// claim; its crash count is within the budget; and the aging probe is
// within its bound. Every 500 steps the whole store is compared.
func (w *world) checkStep() error {
	for _, j := range w.touched {
		g, err := w.store.GetJob(w.ctx, j.id)
		if err != nil {
			if errors.Is(err, spi.ErrNotFound) {
				w.fail(invNothingLost, []*sjob{j}, nil, "%s is gone from the store", j.label)
				return nil
			}
			return w.storeErr("GetJob", err)
		}
		w.check(invStoreModel)
		if j.flow != nil {
			w.check(invWorkflowRelease)
		}
		if d := w.compareJob(j, g); d != "" {
			w.fail(releaseInvariant(j, g), parentsOf(j), nil, "%s", w.releaseDetail(j, g, d))
			return nil
		}
		w.checkOwners(j)
		w.check(invCrashBudget)
		if j.crash > w.maxCrash {
			w.fail(invCrashBudget, []*sjob{j}, nil, "%s has crash count %d over the budget %d", j.label, j.crash, w.maxCrash)
		}
		if j.poison && j.recoveries > w.maxCrash+1 {
			w.fail(invCrashBudget, []*sjob{j}, nil, "poison job %s was recovered %d times; the budget %d allows %d", j.label, j.recoveries, w.maxCrash, w.maxCrash+1)
		}
		if w.failure != nil {
			return nil
		}
	}
	w.checkProbe()
	if w.failure == nil && w.step%500 == 0 {
		return w.checkAll()
	}
	return nil
}

// checkOwners checks invariant 1 for one job: among the nodes still alive
// (running, stopping or stalled), at most one believes it holds the job's
// current claim, and when one does the store names it as the owner.
func (w *world) checkOwners(j *sjob) {
	w.check(invSingleOwner)
	var holders []*node
	for _, n := range w.nodes {
		if n.state == nodeCrashed || n.state == nodeStopped {
			continue
		}
		if n.believes(spi.ClaimRef{JobID: j.id, ClaimSeq: j.seq}) && j.status == spi.StatusRunning {
			holders = append(holders, n)
		}
	}
	if owner := w.nodeByID(j.owner); owner != nil && j.status == spi.StatusRunning && !j.abandoned && !j.adopting &&
		(owner.state == nodeUp || owner.state == nodeStopping) && !owner.believes(spi.ClaimRef{JobID: j.id, ClaimSeq: j.seq}) {
		w.check(invNothingLost)
		w.fail(invNothingLost, []*sjob{j}, []*node{owner}, "%s runs %s under claim %d as the store says, but no longer knows of it: its end will never be written",
			owner.id, j.label, j.seq)
		return
	}
	switch {
	case len(holders) > 1:
		w.fail(invSingleOwner, []*sjob{j}, holders, "%d nodes hold the current claim %d of %s", len(holders), j.seq, j.label)
	case len(holders) == 1 && holders[0].id != j.owner:
		w.fail(invSingleOwner, []*sjob{j}, holders, "%s holds the current claim %d of %s, but the store's owner is %q", holders[0].id, j.seq, j.label, j.owner)
	}
}

// checkAll compares every stored job with the model: each submitted job is
// in the store exactly once, in the state the model expects, and the store
// holds nothing else.
func (w *world) checkAll() error {
	seen := 0
	var after uuid.UUID
	for {
		page, next, err := w.store.ListJobs(w.ctx, spi.ListParams{After: after, Limit: 1000})
		if err != nil {
			return w.storeErr("ListJobs", err)
		}
		for _, g := range page {
			w.check(invNothingLost)
			j := w.byID[g.ID]
			if j == nil {
				w.fail(invNothingLost, nil, nil, "the store holds job %s, which was never submitted", g.ID)
				return nil
			}
			if !g.Status.Valid() {
				w.fail(invNothingLost, []*sjob{j}, nil, "%s is in unknown state %q", j.label, g.Status)
				return nil
			}
			if d := w.compareJob(j, g); d != "" {
				w.fail(releaseInvariant(j, g), parentsOf(j), nil, "%s", w.releaseDetail(j, g, d))
				return nil
			}
			if err := w.checkAttempts(j); err != nil || w.failure != nil {
				return err
			}
			seen++
		}
		if next == uuid.Nil {
			break
		}
		after = next
	}
	if seen != len(w.jobs) {
		w.fail(invNothingLost, nil, nil, "the store lists %d jobs; %d were submitted", seen, len(w.jobs))
	}
	return nil
}

// checkAttempts compares the attempt records the store holds for j
// (spi.AttemptStore) with the model's: the same claims, each with the
// outcome its run ended with.
func (w *world) checkAttempts(j *sjob) error {
	as := spi.CapabilitiesOf(w.store).Attempts
	if as == nil {
		return nil
	}
	got, err := as.JobAttempts(w.ctx, j.id)
	if err != nil {
		return w.storeErr("JobAttempts", err)
	}
	w.check(invAttempts)
	line := func(rs []spi.Attempt) string {
		parts := make([]string, len(rs))
		for i, r := range rs {
			parts[i] = fmt.Sprintf("%d:%s", r.ClaimSeq, r.Outcome)
		}
		return "[" + strings.Join(parts, " ") + "]"
	}
	if g, want := line(got), line(j.records); g != want {
		w.fail(invAttempts, []*sjob{j}, nil, "the attempt records of %s are %s (claim:outcome); expected %s", j.label, g, want)
	}
	return nil
}

// stuckJobs returns up to n jobs that are not terminal.
func (w *world) stuckJobs(n int) []*sjob {
	var out []*sjob
	for _, j := range w.jobs {
		if !j.status.Terminal() {
			out = append(out, j)
			if len(out) == n {
				break
			}
		}
	}
	return out
}

// checkFinal runs at the end of the heal phase: the whole store matches
// the model, every job is terminal, and every poison job failed after
// exactly budget+1 crashes.
func (w *world) checkFinal() error {
	if err := w.checkAll(); err != nil || w.failure != nil {
		if w.failure != nil {
			return w.failure
		}
		return err
	}
	if w.checkRecurring(); w.failure != nil {
		return w.failure
	}
	if w.checkCallbacks(); w.failure != nil {
		return w.failure
	}
	if w.checkSignals(); w.failure != nil {
		return w.failure
	}
	if w.checkBatches(); w.failure != nil {
		return w.failure
	}
	for _, j := range w.jobs {
		w.check(invNothingLost)
		if !j.status.Terminal() {
			w.fail(invNothingLost, []*sjob{j}, nil, "%s ended the run %s", j.label, j.status)
			return w.failure
		}
		if !j.poison || j.status == spi.StatusCancelled || j.status == spi.StatusSkipped {
			continue
		}
		w.check(invCrashBudget)
		switch {
		case j.status != spi.StatusFailed || j.lastErr != recoveryMessage:
			w.fail(invCrashBudget, []*sjob{j}, nil, "poison job %s ended %s (%q), not FAILED by orphan recovery", j.label, j.status, j.lastErr)
		case j.recoveries != w.maxCrash+1:
			w.fail(invCrashBudget, []*sjob{j}, nil, "poison job %s failed after %d crashes; the budget %d demands exactly %d", j.label, j.recoveries, w.maxCrash, w.maxCrash+1)
		case j.claims != j.recoveries+j.releases+j.gated:
			w.fail(invCrashBudget, []*sjob{j}, nil, "poison job %s was claimed %d times: %d crashes, %d releases and %d gate decisions account for %d",
				j.label, j.claims, j.recoveries, j.releases, j.gated, j.recoveries+j.releases+j.gated)
		}
		if w.failure != nil {
			return w.failure
		}
	}
	return nil
}
