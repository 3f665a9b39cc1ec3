package cluster_test

import (
	"errors"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratchet-go/ratchet/sdk/spi"
	"github.com/ratchet-go/ratchet/simtest/cluster"
	"github.com/ratchet-go/ratchet/simtest/internal/mutant"
	"github.com/ratchet-go/ratchet/stores/memory"
)

// Sweep size: 160 seeds of 3000 main steps (about 575,000 steps and 2.2
// million invariant checks) take 20-25 s under -race on the shared 2-core
// machine, about 2 s without it. -short runs a tenth of it.
const (
	sweepSeeds = 160
	sweepSteps = 3000
)

// sweep runs Simulate over seeds first..last on GOMAXPROCS workers and
// returns the reports and errors indexed by seed - first.
func sweep(first, last int64, sc cluster.Scenario) ([]cluster.Report, []error) {
	n := int(last - first + 1)
	reps, errs := make([]cluster.Report, n), make([]error, n)
	next := make(chan int)
	var wg sync.WaitGroup
	for range runtime.GOMAXPROCS(0) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				reps[i], errs[i] = cluster.Simulate(first+int64(i), sc)
			}
		}()
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
	return reps, errs
}

// The bounded seed sweep: every invariant holds on the reference store
// under every fault the simulator injects.
func TestSeedSweep(t *testing.T) {
	seeds := int64(sweepSeeds)
	if testing.Short() {
		seeds /= 10
	}
	start := time.Now()
	reps, errs := sweep(1, seeds, cluster.Scenario{Steps: sweepSteps})
	steps, checks := 0, 0
	faults := map[string]int{}
	probes, flows, callbacks, skipped := 0, 0, 0, 0
	for i, err := range errs {
		require.NoError(t, err, "seed %d", i+1)
		steps += reps[i].Steps
		for _, c := range reps[i].Checks {
			checks += c
		}
		for k, f := range reps[i].Faults {
			faults[k] += f
		}
		if reps[i].Aging != nil {
			probes++
		}
		assert.Zero(t, reps[i].Final[spi.StatusPending]+reps[i].Final[spi.StatusRunning]+reps[i].Final[spi.StatusBlocked], "seed %d: every job terminal", i+1)
		flows += reps[i].Workflows
		callbacks += reps[i].Callbacks
		skipped += reps[i].Final[spi.StatusSkipped]
	}
	assert.Positive(t, flows, "the sweep submits workflows")
	assert.Positive(t, callbacks, "with callbacks")
	assert.Positive(t, skipped, "some of which are skipped")
	t.Logf("%d seeds x %d main steps: %d steps, %d invariant checks, %d aging probes, %d workflows (%d callbacks), faults %v, in %s",
		seeds, sweepSteps, steps, checks, probes, flows, callbacks, faults, time.Since(start).Round(time.Millisecond))
	for _, kind := range []string{"crash:before-claim", "crash:after-claim", "crash:mid-execution", "crash:before-completion",
		"poison-crash", "stall>grace", "stall<grace", "stop:drained", "stop:drain-timeout", "clock-jump"} {
		assert.Positive(t, faults[kind], "the sweep injects %s", kind)
	}
}

func TestSameSeedSameTrace(t *testing.T) {
	for _, sc := range []cluster.Scenario{
		{Steps: 3000, KeepTrace: true},
		{Steps: 3000, KeepTrace: true, Aging: cluster.AgingOn},
	} {
		// Seed 3 once differed from run to run: the order of a map (the
		// running claims, the adopted jobs) reached the trace.
		for _, seed := range []int64{1, 3, 7, 11, 42, 9001} {
			a, errA := cluster.Simulate(seed, sc)
			b, errB := cluster.Simulate(seed, sc)
			require.NoError(t, errA)
			require.NoError(t, errB)
			require.NotEmpty(t, a.Trace)
			assert.Equal(t, strings.Join(a.Trace, "\n"), strings.Join(b.Trace, "\n"), "seed %d: byte-identical traces", seed)
			assert.Equal(t, a.TraceHash, b.TraceHash)
			assert.Equal(t, a.Summary(), b.Summary())
		}
	}
	a, err := cluster.Simulate(1, cluster.Scenario{Steps: 500})
	require.NoError(t, err)
	b, err := cluster.Simulate(2, cluster.Scenario{Steps: 500})
	require.NoError(t, err)
	assert.NotEqual(t, a.TraceHash, b.TraceHash, "different seeds, different runs")
	assert.Empty(t, a.Trace, "the full trace is kept only on request")
}

// findViolation sweeps seeds until one violates an invariant.
func findViolation(t *testing.T, sc cluster.Scenario, maxSeed int64) *cluster.Violation {
	t.Helper()
	return findViolationOf(t, sc, maxSeed, "")
}

// findViolationOf sweeps seeds until one violates invariant inv (any
// invariant for ""): a planted bug may break another invariant first on
// some seed (a job its node forgot, recovered early), which is logged,
// but it must be caught by its own within the sweep.
func findViolationOf(t *testing.T, sc cluster.Scenario, maxSeed int64, inv string) *cluster.Violation {
	t.Helper()
	const batch = 20
	for first := int64(1); first <= maxSeed; first += batch {
		_, errs := sweep(first, min(first+batch-1, maxSeed), sc)
		for _, err := range errs {
			if err == nil {
				continue
			}
			var v *cluster.Violation
			require.ErrorAs(t, err, &v, "only invariant violations, no store errors")
			if inv == "" || v.Invariant == inv {
				return v
			}
			t.Logf("seed %d broke %s first: %s", v.Seed, v.Invariant, v.Detail)
		}
	}
	if inv == "" {
		inv = "any invariant"
	}
	t.Fatalf("no seed in 1..%d caught the broken store by %s", maxSeed, inv)
	return nil
}

// The acceptance line of the simulator: a store whose completions skip the
// claim-sequence check is caught within the bounded sweep, and the seed
// reproduces it.
func TestCatchesCompletionThatSkipsTheFence(t *testing.T) {
	sc := cluster.Scenario{Steps: sweepSteps, WrapStore: func(s spi.Store) spi.Store { return mutant.BrokenFence{Store: s} }}
	v := findViolation(t, sc, sweepSeeds)
	t.Logf("caught with seed %d:\n%s", v.Seed, v)
	assert.Equal(t, "fence", v.Invariant)
	assert.Contains(t, v.Detail, "superseded write applied")
	msg := v.Error()
	assert.Contains(t, msg, "seed "+itoa(v.Seed))
	assert.Contains(t, msg, `invariant "fence"`)
	assert.Contains(t, msg, "-seed "+itoa(v.Seed))
	require.NotEmpty(t, v.Trace)
	assert.LessOrEqual(t, len(v.Trace), 40, "the trace suffix is bounded")
	for _, line := range v.Trace {
		if !strings.Contains(line, "FAULT") {
			assert.Contains(t, line, v.Jobs[0], "the suffix concerns the job involved")
		}
	}

	_, again := cluster.Simulate(v.Seed, sc)
	require.Error(t, again)
	assert.Equal(t, v.Error(), again.Error(), "the seed reproduces the violation exactly")

	_, clean := cluster.Simulate(v.Seed, cluster.Scenario{Steps: sweepSteps})
	assert.NoError(t, clean, "the same seed passes on the correct store")
}

func TestCatchesStoreWithoutAging(t *testing.T) {
	v := findViolation(t, cluster.Scenario{Steps: 2000, WrapStore: mutant.Wrappers["aging"]}, 40)
	assert.Contains(t, []string{"claim-order", "aging-bound"}, v.Invariant)
	t.Logf("seed %d: %s", v.Seed, v.Detail)
}

func TestCatchesStoreIgnoringTagFilters(t *testing.T) {
	v := findViolation(t, cluster.Scenario{Steps: 2000, WrapStore: mutant.Wrappers["tags"]}, 40)
	assert.Equal(t, "claim-order", v.Invariant)
	assert.Contains(t, v.Detail, "tag filter")
	t.Logf("seed %d: %s", v.Seed, v.Detail)
}

// With resource permits in the workload, claims still take exactly the best
// admissible jobs. (The memory store once filled each level's share with
// jobs a full resource then held back; seeds 8 and 9 caught it.)
func TestPermitsKeepClaimOrder(t *testing.T) {
	_, errs := sweep(1, 40, cluster.Scenario{Steps: 2000, Permits: true})
	for i, err := range errs {
		require.NoError(t, err, "seed %d", i+1)
	}
}

func TestCatchesLooseCrashBudget(t *testing.T) {
	v := findViolation(t, cluster.Scenario{Steps: 2000, WrapStore: mutant.Wrappers["budget"]}, 40)
	assert.Equal(t, "crash-budget", v.Invariant)
	t.Logf("seed %d: %s", v.Seed, v.Detail)
}

// The aging probe: a LOWEST job under a continuous CRITICAL flood is
// claimed no sooner than 4·B (before that every CRITICAL job outranks it)
// and within the bound the formula implies. (3000 steps: the probe starts
// only on a drained queue, and workflows take longer to drain.)
func TestAgingProbe(t *testing.T) {
	const boost = 5 * time.Second
	reps, errs := sweep(1, 40, cluster.Scenario{Steps: 3000, Aging: cluster.AgingOn, BoostInterval: boost, NoTaskLimits: true})
	ran := 0
	for i, err := range errs {
		require.NoError(t, err, "seed %d", i+1)
		a := reps[i].Aging
		if a == nil {
			continue // the queue never drained before the main phase ended
		}
		ran++
		assert.GreaterOrEqual(t, a.Wait, 4*boost, "seed %d", i+1)
		assert.LessOrEqual(t, a.Wait, a.Bound, "seed %d", i+1)
		assert.Equal(t, 5*boost+time.Duration(a.TotalSlots+2)*a.MaxClaimGap, a.Bound)
		assert.Positive(t, a.FloodJobs)
	}
	// About a third of the seeds drain their queue in time for the probe
	// (19 of these 40, 28 of seeds 1..60 when start-by deadlines came in;
	// 13 of these 40 with sequences, whose jobs held by a failure wait
	// for the heal phase's operator).
	assert.GreaterOrEqual(t, ran, 12, "many seeds run the probe")
}

func TestScenarioOptions(t *testing.T) {
	rep, err := cluster.Simulate(3, cluster.Scenario{
		Steps: 1500, Nodes: 3, Slots: 2, MaxCrashRedeliveries: -1, Aging: cluster.AgingOff,
		Faults: &cluster.FaultRates{}, NewStore: func() (spi.Store, error) { return memory.New(), nil },
	})
	require.NoError(t, err)
	assert.Equal(t, 3, rep.Nodes)
	assert.Equal(t, []int{2, 2, 2}, rep.Slots)
	assert.Zero(t, rep.MaxCrashRedeliveries)
	assert.Nil(t, rep.Aging)
	for kind := range rep.Faults {
		assert.Equal(t, "poison-crash", kind, "no injected faults; only poison jobs kill nodes")
	}
	assert.Equal(t, 1500, rep.MainSteps)
	assert.Positive(t, rep.Claims)

	_, err = cluster.Simulate(1, cluster.Scenario{NewStore: func() (spi.Store, error) { return nil, errors.New("no database") }})
	require.ErrorContains(t, err, "no database")
	var v *cluster.Violation
	assert.False(t, errors.As(err, &v))
}

// A long run exercises every invariant check.
func TestEveryInvariantIsChecked(t *testing.T) {
	rep, err := cluster.Simulate(3, cluster.Scenario{Steps: 6000, Aging: cluster.AgingOn})
	require.NoError(t, err)
	for _, inv := range []string{"claim-order", "single-owner", "fence", "orphan-recovery", "crash-budget", "graceful-stop",
		"retry-path", "nothing-lost", "store-matches-model", "aging-bound", "idempotency", "admin-ops", "claim-check", "slots", "fresh-claim",
		"workflow-order", "workflow-release", "callback-once", "signal-once", "batch-once"} {
		assert.Positive(t, rep.Checks[inv], "invariant %s checked", inv)
	}
	t.Log("\n" + rep.Summary())
}

// A job is cancelled while its body runs on a live node only now and then
// (most RUNNING jobs the workload picks belong to a node that died), and
// a run outlives its timeout only now and then: fifteen seeds check
// cancel-running, timeout and the waits inside bodies many times.
func TestJobControlIsChecked(t *testing.T) {
	checks := map[string]int{}
	for seed := int64(1); seed <= 15; seed++ {
		rep, err := cluster.Simulate(seed, cluster.Scenario{Steps: 3000})
		require.NoError(t, err)
		for _, inv := range []string{"cancel-running", "timeout", "snooze", "pause", "wait-resume"} {
			checks[inv] += rep.Checks[inv]
		}
	}
	for inv, n := range checks {
		assert.Greater(t, n, 5, "%s checks over seeds 1..15", inv)
	}
	t.Logf("over seeds 1..15: %v", checks)
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// The nodes run the engine's parts, with what the engine does under load
// and faults: seed 4 has two claims in flight at once, gives back jobs
// over a task's limit, and retries completion writes.
func TestNodesRunTheEnginesParts(t *testing.T) {
	rep, err := cluster.Simulate(4, cluster.Scenario{})
	require.NoError(t, err)
	assert.Equal(t, 2, rep.MaxClaimsInFlight)
	assert.Positive(t, rep.GiveBacks)
	assert.Positive(t, rep.CompleterRetries)
	t.Log("\n" + rep.Summary())
}

// A drain longer than the orphan grace charges nothing: the draining node
// keeps heartbeating, so its jobs are not recovered under it. (Before the
// engine heartbeated through Stop's drain, seed 3 failed this.)
func TestDrainLongerThanGraceChargesNothing(t *testing.T) {
	_, errs := sweep(1, 40, cluster.Scenario{Steps: 2000, DrainTimeout: 10 * time.Second})
	for i, err := range errs {
		require.NoError(t, err, "seed %d", i+1)
	}
}

// The engine's mutation test: each planted engine bug (a one-line change
// of one of the engine decisions the nodes step) is caught within a
// bounded sweep by the invariant meant to catch it, and the seed that
// catches it passes with the engine's own code.
func TestCatchesEveryEngineBug(t *testing.T) {
	if !cluster.BugsPlantable {
		// A normal build compiles no bug: this test runs again in one that
		// does.
		_, err := cluster.Simulate(1, cluster.Scenario{EngineBug: "ignore-fence"})
		require.ErrorContains(t, err, "-tags ratchet_bugs")
		if testing.Short() {
			t.Skip("the engine bugs need a build with -tags ratchet_bugs")
		}
		out, err := exec.Command("go", "test", "-tags", "ratchet_bugs", "-count=1", "-run", "^TestCatchesEveryEngineBug$", "-v", ".").CombinedOutput()
		require.NoError(t, err, "%s", out)
		t.Logf("with -tags ratchet_bugs:\n%s", out)
		return
	}
	bugs := cluster.EngineBugs()
	require.GreaterOrEqual(t, len(bugs), 5)
	for _, bug := range bugs {
		t.Run(bug, func(t *testing.T) {
			sc := cluster.Scenario{Steps: 2000, EngineBug: bug}
			v := findViolationOf(t, sc, 80, cluster.EngineBugInvariant(bug))
			t.Logf("seed %d: %s: %s", v.Seed, v.Invariant, v.Detail)
			assert.Contains(t, v.Reproduce, "-tags ratchet_bugs")
			assert.Contains(t, v.Reproduce, "-engine-bug "+bug)
			_, clean := cluster.Simulate(v.Seed, cluster.Scenario{Steps: 2000})
			assert.NoError(t, clean, "the same seed passes with the engine's own code")
		})
	}
	_, err := cluster.Simulate(1, cluster.Scenario{EngineBug: "no-such-bug"})
	require.ErrorContains(t, err, `unknown engine bug "no-such-bug"`)
}

// A store that releases a workflow job before its last parent has
// finished, or leaves it BLOCKED after, is caught by workflow-release, and
// the seed that catches it passes on the correct store.
func TestCatchesWorkflowReleaseBugs(t *testing.T) {
	for _, name := range []string{"early-release", "late-release"} {
		t.Run(name, func(t *testing.T) {
			sc := cluster.Scenario{Steps: 2000, WrapStore: mutant.Wrappers[name]}
			v := findViolation(t, sc, 40)
			t.Logf("seed %d: %s", v.Seed, v.Detail)
			assert.Equal(t, "workflow-release", v.Invariant)
			_, clean := cluster.Simulate(v.Seed, cluster.Scenario{Steps: 2000})
			assert.NoError(t, clean, "the same seed passes on the correct store")
		})
	}
}

// hideWorkflows is a store without the workflow capability.
type hideWorkflows struct{ spi.Store }

func (h hideWorkflows) Capabilities() spi.Capabilities {
	c := spi.CapabilitiesOf(h.Store)
	c.Workflows = nil
	return c
}

// The workflow workload runs by default on a store that keeps workflows,
// never on one that does not, and NoWorkflows turns it off.
func TestWorkflowWorkload(t *testing.T) {
	rep, err := cluster.Simulate(5, cluster.Scenario{Steps: 2000})
	require.NoError(t, err)
	assert.Positive(t, rep.Workflows)
	assert.Greater(t, rep.WorkflowJobs, rep.Workflows)
	assert.Positive(t, rep.Checks["workflow-release"])
	assert.Contains(t, rep.Summary(), "workflows ")

	off, err := cluster.Simulate(5, cluster.Scenario{Steps: 2000, NoWorkflows: true})
	require.NoError(t, err)
	assert.Zero(t, off.Workflows)
	assert.Zero(t, off.Final[spi.StatusSkipped]+off.Final[spi.StatusBlocked])
	assert.Contains(t, off.Summary(), "workflows: none")

	none, err := cluster.Simulate(5, cluster.Scenario{Steps: 2000, WrapStore: func(s spi.Store) spi.Store { return hideWorkflows{s} }})
	require.NoError(t, err)
	assert.Zero(t, none.Workflows, "no workflows on a store without them")
}

// A store that times signal waits out before their deadline is caught by
// signal-once.
func TestCatchesEarlySignalTimeout(t *testing.T) {
	v := findViolation(t, cluster.Scenario{Steps: 2000, WrapStore: mutant.Wrappers["early-timeout"]}, 40)
	t.Logf("seed %d: %s", v.Seed, v.Detail)
	assert.Equal(t, "signal-once", v.Invariant)
	_, clean := cluster.Simulate(v.Seed, cluster.Scenario{Steps: 2000})
	assert.NoError(t, clean, "the same seed passes on the correct store")
}

// A store that ends a batch twice (and calls its callback twice) is
// caught by batch-once.
func TestCatchesBatchEndedTwice(t *testing.T) {
	v := findViolation(t, cluster.Scenario{Steps: 2000, WrapStore: mutant.Wrappers["batch-twice"]}, 40)
	t.Logf("seed %d: %s", v.Seed, v.Detail)
	assert.Equal(t, "batch-once", v.Invariant)
	_, clean := cluster.Simulate(v.Seed, cluster.Scenario{Steps: 2000})
	assert.NoError(t, clean, "the same seed passes on the correct store")
}

// The batch workload runs by default on a store that keeps batches:
// batches end succeeded, failed and cancelled, each once; NoBatches turns
// it off.
func TestBatchWorkload(t *testing.T) {
	reps, errs := sweep(1, 10, cluster.Scenario{Steps: 3000})
	outcomes := map[spi.BatchOutcome]int{}
	for i, err := range errs {
		require.NoError(t, err, "seed %d", i+1)
		for o, n := range reps[i].BatchOutcomes {
			outcomes[o] += n
		}
	}
	for _, o := range []spi.BatchOutcome{spi.BatchSucceeded, spi.BatchFailed, spi.BatchCancelled} {
		assert.Positive(t, outcomes[o], "some batches end %s", o)
	}
	off, err := cluster.Simulate(5, cluster.Scenario{Steps: 2000, NoBatches: true})
	require.NoError(t, err)
	assert.Zero(t, off.Batches)
	assert.Contains(t, off.Summary(), "batches: none")
}

// The signal workload runs by default on a store that keeps signals: waits
// end delivered, timed out and cancelled, each once; NoSignals turns it
// off.
func TestSignalWorkload(t *testing.T) {
	reps, errs := sweep(1, 20, cluster.Scenario{Steps: 3000})
	outcomes := map[spi.SignalOutcome]int{}
	for i, err := range errs {
		require.NoError(t, err, "seed %d", i+1)
		assert.Zero(t, reps[i].Final[spi.StatusWaiting], "seed %d: no job still waits", i+1)
		for o, n := range reps[i].SignalOutcomes {
			outcomes[o] += n
		}
	}
	for _, o := range []spi.SignalOutcome{spi.SignalDelivered, spi.SignalTimedOut, spi.SignalCancelled} {
		assert.Positive(t, outcomes[o], "some waits end %s", o)
	}
	off, err := cluster.Simulate(5, cluster.Scenario{Steps: 2000, NoSignals: true})
	require.NoError(t, err)
	assert.Zero(t, off.SignalWaits)
	assert.Contains(t, off.Summary(), "signal waits: none")
}

// Some seeds of a sweep run the recurring workload, and its check runs.
func TestRecurringWorkload(t *testing.T) {
	reps, errs := sweep(1, 20, cluster.Scenario{Steps: 2000})
	runs, fires := 0, 0
	for i, err := range errs {
		require.NoError(t, err, "seed %d", i+1)
		if reps[i].Recurring != "" {
			runs++
			fires += reps[i].RecurringFires
			assert.Positive(t, reps[i].Checks["recurring"], "seed %d", i+1)
		}
	}
	assert.GreaterOrEqual(t, runs, 4, "about one seed in two has a schedule")
	assert.Positive(t, fires)
	rep, err := cluster.Simulate(3, cluster.Scenario{Steps: 2000, NoRecurring: true})
	require.NoError(t, err)
	assert.Empty(t, rep.Recurring, "NoRecurring turns it off")
}

// A store that ignores pauses (its claims go on taking a paused task's
// jobs) is caught by pause.
func TestCatchesPauseIgnored(t *testing.T) {
	v := findViolation(t, cluster.Scenario{Steps: 2000, WrapStore: mutant.Wrappers["pause-ignored"]}, 40)
	t.Logf("seed %d: %s", v.Seed, v.Detail)
	assert.Equal(t, "pause", v.Invariant)
	_, clean := cluster.Simulate(v.Seed, cluster.Scenario{Steps: 2000})
	assert.NoError(t, clean, "the same seed passes on the correct store")
}

// A store whose fenced state writes ignore the claim (so a run that lost
// its claim records its durable steps) is caught by step-fence; stalls
// past the grace and heartbeat outages make such zombie runs common
// (8 seeds of 1..400 catch it; the first is 101).
func TestCatchesStepsWithoutFence(t *testing.T) {
	faults := &cluster.FaultRates{Stall: 0.05, HeartbeatOutage: 0.05}
	v := findViolation(t, cluster.Scenario{Steps: 2000, Faults: faults, WrapStore: mutant.Wrappers["step-fence"]}, 200)
	t.Logf("seed %d: %s", v.Seed, v.Detail)
	assert.Equal(t, "step-fence", v.Invariant)
	_, clean := cluster.Simulate(v.Seed, cluster.Scenario{Steps: 2000, Faults: faults})
	assert.NoError(t, clean, "the same seed passes on the correct store")
}
