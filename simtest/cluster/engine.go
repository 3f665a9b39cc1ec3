package cluster

import (
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/ratchet-go/ratchet/internal/nodecore"
)

// engineBugs are the engine bugs planted in the engine's own parts
// (internal/nodecore), each by a guard that only a build with the tag
// ratchet_bugs compiles, and the invariant that catches it.
var engineBugs = map[string]string{
	// The poller claims under a stale heartbeat: after a heartbeat outage
	// peers recover the jobs it just claimed.
	"skip-fresh-beat": invFreshClaim,
	// The poller asks for one job more than it has free slots.
	"claim-past-free-slots": invSlots,
	// The graceful stop ends the heartbeats before it drains: a drain
	// longer than the grace has its jobs recovered and charged.
	"heartbeats-before-drain": invRelease,
	// The retry decision compares with < where it means <=: every job gets
	// one retry more than its MaxRetries.
	"retry-off-by-one": invRetryPath,
	// Completions carry no claim sequence: the write is not fenced by the
	// claim it ends.
	"ignore-fence": invFence,
	// The recurring scheduler forgets to count the slots it skips: they
	// are missed silently.
	"misfire-uncounted": invRecurring,
	// The gate reads a plain dependency as if it allowed FAILED: a child
	// runs after its parent went to the DLQ.
	"run-after-failed-parent": invWorkflowOrder,
	// The gate forgets the callback rule (skip, don't cancel): an
	// OnSuccess callback of a failed job is cancelled.
	"callback-as-dependency": invCallbackOnce,
	// The completer drops the last completion of a batch that leaves more
	// queued: that job stays RUNNING under a live node that forgot it.
	"batch-drops-last": invNothingLost,

	// Bugs in the parts' I/O, their calls to the store:

	// The completer forgets a batch whose write failed instead of trying
	// it again: its jobs stay RUNNING under a node that no longer knows
	// of them.
	"retry-drops-batch": invNothingLost,
	// The rescuer scans with no grace: the jobs of nodes whose heartbeat
	// is fresh are taken away from them.
	"rescue-ignores-grace": invRecovery,
	// A restart's scan does not name the node: the jobs its earlier run
	// left RUNNING stay so.
	"rescue-forgets-own-jobs": invRecovery,
	// The rescuer asks for one crash redelivery more than the budget.
	"crash-budget-off-by-one": invCrashBudget,
	// The signal sweeper times out waits 5 s before their deadline.
	"sweep-ahead-of-time": invSignalOnce,
	// The executor admits one job of a task past the task's limit on the
	// node.
	"task-limit-off-by-one": invSlots,
	// The claim step reads the jobs of a claim whose answer was lost and
	// drops them: they stay RUNNING under a node that never runs them.
	"adopt-drops-jobs": invNothingLost,
	// The claim step forgets a claim whose answer was lost: its jobs are
	// never adopted.
	"lost-claim-forgotten": invNothingLost,
	// The poll loop does not reserve the slots of a claim in flight: the
	// next claim takes them too.
	"claims-overlap-slots": invSlots,
	// The claim check finds a claim taken away (a job cancelled while
	// running) but leaves its body running.
	"claim-check-keeps-body": invCancelRunning,
	// The executor writes a body's return after its run timed out (its
	// timeout's failure already written).
	"timeout-late-write": invTimeout,
	// The executor runs a job claimed after its start-by deadline.
	"start-by-ignored": invStartBy,
	// A snooze is written as a failed attempt's retry.
	"snooze-spends-attempt": invSnooze,
	// The start-by sweeper fails jobs 2 s before their deadline.
	"start-by-sweep-early": invStartBy,
	// A run that lost its claim records its durable step anyway (an
	// unfenced write after the fenced one was superseded).
	"step-recorded-past-its-claim": invStepFence,
	// A run that recorded a wait and died before its job waited takes an
	// older, resolved wait of the job's as its answer (or finds none).
	"wait-resumed-before-it-began": invWaitResume,
	// A run past its timeout is recorded as a plain failure.
	"timeout-recorded-as-failure": invAttempts,
	// The client derives a unique key without the period (ByPeriod): a
	// submission of a later period joins a job of an earlier one.
	"unique-key-ignores-period": invUnique,
	// The client writes a debounce's window twice as long as asked: a
	// submission after the window joins the job of the one before.
	"debounce-window-doubled": invDebounce,
	// The client writes a rate limit's period halved: a key starts twice
	// as many jobs in a period as it may.
	"rate-limit-period-halved": invRateLimit,
	// The client derives a sequence's key from the job's arguments too:
	// jobs of one sequence with other arguments do not wait on each
	// other.
	"sequence-key-by-args": invSequence,
	"fair-key-by-args":     invFairShare,
}

// EngineBugs names the engine bugs that Scenario.EngineBug plants, sorted:
// a test, or the simtest command's -engine-bug flag, shows the simulator
// catches each. They can be planted only in a build with the tag
// ratchet_bugs (see nodecore.Bugs).
func EngineBugs() []string {
	out := make([]string, 0, len(engineBugs))
	for name := range engineBugs {
		out = append(out, name)
	}
	slices.Sort(out)
	return out
}

// EngineBugInvariant names the invariant whose check catches the planted
// engine bug name; empty for an unknown name.
func EngineBugInvariant(name string) string { return engineBugs[name] }

// BugsPlantable reports whether this build can plant engine bugs: only one
// built with the tag ratchet_bugs can.
const BugsPlantable = nodecore.Bugs

// The engine bug planted in this process is one at a time: simulations of
// the same bug (or of none) run together, others wait for them to end.
var planting = struct {
	sync.Mutex
	cond  *sync.Cond
	bug   string
	users int
}{}

func init() { planting.cond = sync.NewCond(&planting.Mutex) }

// plant checks bug and plants it in this process for one simulation; the
// function it returns ends that simulation's use of it.
func plant(bug string) (func(), error) {
	if bug != "" {
		if _, ok := engineBugs[bug]; !ok {
			return nil, fmt.Errorf("simtest: unknown engine bug %q (known: %s)", bug, strings.Join(EngineBugs(), ", "))
		}
		if !nodecore.Bugs {
			return nil, fmt.Errorf("simtest: engine bug %q: this build plants none; build with -tags ratchet_bugs (go run -tags ratchet_bugs ./simtest/cmd/simtest -engine-bug %s)", bug, bug)
		}
	}
	if !nodecore.Bugs {
		return func() {}, nil
	}
	p := &planting
	p.Lock()
	for p.users > 0 && p.bug != bug {
		p.cond.Wait()
	}
	p.bug = bug
	p.users++
	nodecore.Plant(bug)
	p.Unlock()
	return func() {
		p.Lock()
		if p.users--; p.users == 0 {
			nodecore.Plant("")
			p.cond.Broadcast()
		}
		p.Unlock()
	}, nil
}
