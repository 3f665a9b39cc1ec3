package cluster

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/ratchet-go/ratchet/internal/nodecore"
	ratchet "github.com/ratchet-go/ratchet/sdk"
	"github.com/ratchet-go/ratchet/sdk/cronexpr"
	"github.com/ratchet-go/ratchet/sdk/spi"
)

// engineCode is the engine's decision code that a node steps on the
// simulator's event loop: the engine's own functions (ownEngine), which its
// poller, executor, completer and Stop call too, or, to show that the
// simulator catches a broken engine, one of them with a planted bug
// (Scenario.EngineBug).
type engineCode struct {
	poll       func(nodecore.PollPolicy, nodecore.PollState) nodecore.PollDecision
	stopOrder  func() []nodecore.StopStep
	completion func(*spi.Job, error, spi.RetryPolicy, spi.ErrorSanitizer, time.Time) spi.Completion
	batch      func([]pendingWrite, int) (batch, rest []pendingWrite)
	plan       func(ratchet.ScheduleDefinition, *cronexpr.Schedule, time.Time, time.Time, time.Duration, bool) nodecore.FirePlan
	// decide and gateCompletion are the dispatch of a released workflow
	// job: run it, or write it SKIPPED or CANCELLED.
	decide         func([]spi.Dependency) (spi.Decision, string)
	gateCompletion func(*spi.Job, spi.Decision, string, time.Time) spi.Completion
}

func ownEngine() engineCode {
	return engineCode{poll: nodecore.PollPolicy.Next, stopOrder: nodecore.StopOrder, completion: nodecore.CompletionOf,
		batch: nodecore.NextBatch[pendingWrite], plan: nodecore.PlanFire, decide: spi.Decide, gateCompletion: nodecore.GateCompletion}
}

// engineBugs are the planted engine bugs, each a one-line change of one of
// the engine's decisions, and the invariant that catches it.
var engineBugs = map[string]struct {
	invariant string
	plant     func(*engineCode)
}{
	// The poller claims under a stale heartbeat: after a heartbeat outage
	// peers recover the jobs it just claimed.
	"skip-fresh-beat": {invFreshClaim, func(c *engineCode) {
		own := c.poll
		c.poll = func(p nodecore.PollPolicy, s nodecore.PollState) nodecore.PollDecision {
			p.HeartbeatInterval = 0
			return own(p, s)
		}
	}},
	// The poller asks for one job more than it has free slots.
	"claim-past-free-slots": {invSlots, func(c *engineCode) {
		own := c.poll
		c.poll = func(p nodecore.PollPolicy, s nodecore.PollState) nodecore.PollDecision {
			d := own(p, s)
			if d.Action == nodecore.PollClaim {
				d.Limit++
			}
			return d
		}
	}},
	// The graceful stop ends the heartbeats before it drains: a drain
	// longer than the grace has its jobs recovered and charged.
	"heartbeats-before-drain": {invRelease, func(c *engineCode) {
		c.stopOrder = func() []nodecore.StopStep {
			return []nodecore.StopStep{nodecore.StopClaiming, nodecore.StopHeartbeats, nodecore.DrainAndRelease, nodecore.FlushCompletions, nodecore.Deregister}
		}
	}},
	// The retry decision compares with < where it means <=: every job gets
	// one retry more than its MaxRetries.
	"retry-off-by-one": {invRetryPath, func(c *engineCode) {
		own := c.completion
		c.completion = func(j *spi.Job, err error, p spi.RetryPolicy, s spi.ErrorSanitizer, now time.Time) spi.Completion {
			jj := *j
			jj.MaxRetries++
			return own(&jj, err, p, s, now)
		}
	}},
	// Completions carry no claim sequence: the write is not fenced by the
	// claim it ends.
	"ignore-fence": {invFence, func(c *engineCode) {
		own := c.completion
		c.completion = func(j *spi.Job, err error, p spi.RetryPolicy, s spi.ErrorSanitizer, now time.Time) spi.Completion {
			out := own(j, err, p, s, now)
			out.ClaimSeq = 0
			return out
		}
	}},
	// The recurring scheduler forgets to count the slots it skips: they
	// are missed silently.
	"misfire-uncounted": {invRecurring, func(c *engineCode) {
		own := c.plan
		c.plan = func(d ratchet.ScheduleDefinition, s *cronexpr.Schedule, next, now time.Time, th time.Duration, busy bool) nodecore.FirePlan {
			p := own(d, s, next, now, th, busy)
			p.Skipped = 0
			return p
		}
	}},
	// The gate reads a plain dependency as if it allowed FAILED: a child
	// runs after its parent went to the DLQ.
	"run-after-failed-parent": {invWorkflowOrder, func(c *engineCode) {
		own := c.decide
		c.decide = func(ds []spi.Dependency) (spi.Decision, string) {
			ds = slices.Clone(ds)
			for i := range ds {
				if ds[i].Allow&spi.SkipUnlessAllowed == 0 {
					ds[i].Allow |= spi.AllowSucceeded | spi.AllowFailed
				}
			}
			return own(ds)
		}
	}},
	// The gate forgets the callback rule (skip, don't cancel): an
	// OnSuccess callback of a failed job is cancelled.
	"callback-as-dependency": {invCallbackOnce, func(c *engineCode) {
		own := c.decide
		c.decide = func(ds []spi.Dependency) (spi.Decision, string) {
			ds = slices.Clone(ds)
			for i := range ds {
				ds[i].Allow &^= spi.SkipUnlessAllowed
			}
			return own(ds)
		}
	}},
	// The completer's batching drops the last completion of a batch that
	// leaves more queued: that job stays RUNNING under a live node.
	"batch-drops-last": {invNothingLost, func(c *engineCode) {
		own := c.batch
		c.batch = func(q []pendingWrite, size int) ([]pendingWrite, []pendingWrite) {
			b, rest := own(q, size)
			if len(rest) > 0 && len(b) > 1 {
				b = b[:len(b)-1]
			}
			return b, rest
		}
	}},
}

// EngineBugs names the deliberately broken engine decisions that
// Scenario.EngineBug plants, sorted: a test, or the simtest command's
// -engine-bug flag, shows the simulator catches each.
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
func EngineBugInvariant(name string) string { return engineBugs[name].invariant }

// engineFor returns the engine code a scenario runs.
func engineFor(bug string) (engineCode, error) {
	c := ownEngine()
	if bug == "" {
		return c, nil
	}
	b, ok := engineBugs[bug]
	if !ok {
		return c, fmt.Errorf("simtest: unknown engine bug %q (known: %s)", bug, strings.Join(EngineBugs(), ", "))
	}
	b.plant(&c)
	return c, nil
}
