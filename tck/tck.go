package tck

import (
	"context"
	"errors"
	"runtime/debug"
	"testing"

	"github.com/google/uuid"

	"github.com/ratchet-go/ratchet/sdk/spi"
)

// DefaultConcurrency is the number of claiming goroutines of the
// claim-exclusivity case when [Harness.Concurrency] is zero or less.
const DefaultConcurrency = 8

// Harness tells [Run] how to obtain stores of the implementation under test.
type Harness struct {
	// Open returns a fresh, empty, isolated store for one test; Run closes
	// it at cleanup. It reports setup problems through t (t.Fatal or
	// t.Skip); it must not return nil.
	Open func(t *testing.T) spi.Store

	// Corrupt, optional, damages the stored row of job id so that it can no
	// longer be decoded (for example writes invalid JSON into its params
	// column). It must leave the id and the status readable, so that the
	// store can still find the row and filter on its state. Nil skips the
	// corrupted-row cases, saying so.
	Corrupt func(t *testing.T, s spi.Store, id uuid.UUID)

	// Concurrency is the number of goroutines of the claim-exclusivity case
	// (default [DefaultConcurrency]).
	Concurrency int

	// Serial runs the cases one after the other instead of in parallel, for
	// stores whose Open cannot give concurrent tests isolated stores (for
	// example one shared database that Open truncates). The zero value runs
	// every case with t.Parallel.
	Serial bool

	// Reopen, optional, returns another handle on the same data as s, as a
	// second process would open it (for example Open on the same file or
	// DSN and schema). The wakeup case listens on it while inserting
	// through s, and the concurrency cases of permits, leases and state
	// spread their goroutines over both handles. Run closes it at cleanup,
	// before s. Nil: those cases use s alone.
	Reopen func(t *testing.T, s spi.Store) spi.Store
	// BreakConnections, optional, breaks every idle connection the store
	// holds to its database (as a failover, a proxy restart or a network
	// cut would), so that its next statements meet dead connections. Nil
	// skips the fault cases, saying so.
	BreakConnections func(t *testing.T, s spi.Store)
}

// Run runs the conformance cases against the store of h, one subtest per
// group and per case (for example "Claim/AgingOvertakes"), each case on a
// store of its own opened with h.Open. A store that passes every case is
// "Ratchet Store Compatible". See the package documentation for the cases.
func Run(t *testing.T, h Harness) {
	t.Helper()
	if h.Open == nil {
		t.Fatal("tck: Harness.Open is nil")
	}
	ih := harness{
		open:        func(tt tb) spi.Store { return h.Open(tt.(stdT).T) },
		concurrency: h.Concurrency,
		serial:      h.Serial,
	}
	if h.Corrupt != nil {
		ih.corrupt = func(tt tb, s spi.Store, id uuid.UUID) { h.Corrupt(tt.(stdT).T, s, id) }
	}
	if h.BreakConnections != nil {
		ih.breakConns = func(tt tb, s spi.Store) { h.BreakConnections(tt.(stdT).T, s) }
	}
	if h.Reopen != nil {
		ih.reopen = func(tt tb, s spi.Store) spi.Store { return h.Reopen(tt.(stdT).T, s) }
	}
	run(stdT{t}, ih)
}

// tb is the part of *testing.T that the cases use. Run adapts *testing.T to
// it (stdT); the package's self-test adapts a recorder, so that it can run
// the cases against deliberately broken stores and check that they fail.
type tb interface {
	Helper()
	Name() string
	Context() context.Context
	Cleanup(f func())
	Logf(format string, args ...any)
	Errorf(format string, args ...any)
	Fatalf(format string, args ...any)
	FailNow()
	Failed() bool
	Skipf(format string, args ...any)
	Parallel()
	Run(name string, f func(tb)) bool
}

// stdT adapts *testing.T to tb.
type stdT struct{ *testing.T }

// Run runs f as a subtest of t.
func (t stdT) Run(name string, f func(tb)) bool {
	return t.T.Run(name, func(tt *testing.T) { f(stdT{tt}) })
}

// harness is Harness with its hooks taking tb.
type harness struct {
	open        func(t tb) spi.Store
	corrupt     func(t tb, s spi.Store, id uuid.UUID)
	reopen      func(t tb, s spi.Store) spi.Store
	breakConns  func(t tb, s spi.Store)
	concurrency int
	serial      bool
}

// testCase is one conformance case.
type testCase struct {
	name string
	run  func(t tb, f *fixture)
}

// group is a named set of cases, one subtest level.
type group struct {
	name  string
	cases []testCase
}

// groups lists every case of the kit, in the order Run runs them.
func groups() []group {
	return []group{
		{"Insert", insertCases()},
		{"Idempotency", idempotencyCases()},
		{"Unique", uniqueCases()},
		{"Debounce", debounceCases()},
		{"Sequence", sequenceCases()},
		{"FairShare", fairShareCases()},
		{"List", listCases()},
		{"Count", counterCases()},
		{"Claim", claimCases()},
		{"ClaimConcurrency", concurrencyCases()},
		{"Fencing", fencingCases()},
		{"Complete", completeCases()},
		{"Release", releaseCases()},
		{"RetryFailed", retryFailedCases()},
		{"Cancel", cancelCases()},
		{"CancelRunning", cancelRunningCases()},
		{"RunTimeout", runTimeoutCases()},
		{"StartBy", startByCases()},
		{"Snooze", snoozeCases()},
		{"PauseTask", pauseCases()},
		{"StartBySweep", startBySweepCases()},
		{"Attempts", attemptCases()},
		{"DurableSteps", durableStepCases()},
		{"Recovery", recoveryCases()},
		{"Tags", tagCases()},
		{"Tasks", taskCases()},
		{"NodeTasks", nodeTaskCases()},
		{"Permits", permitCases()},
		{"RateLimit", rateLimitCases()},
		{"ClaimCheck", claimCheckCases()},
		{"Adopt", adoptCases()},
		{"Lease", leaseCases()},
		{"State", stateCases()},
		{"Properties", propertyCases()},
		{"Schedules", scheduleCases()},
		{"Archive", archiveCases()},
		{"JobLogs", jobLogCases()},
		{"Workflows", workflowCases()},
		{"Signals", signalCases()},
		{"Batches", batchCases()},
		{"WorkflowList", workflowListCases()},
		{"BatchList", batchListCases()},
		{"Rewrite", rewriteCases()},
		{"Stats", statsCases()},
		{"Delete", deleteCases()},
		{"Bulk", bulkCases()},
		{"Audit", auditCases()},
		{"StatsSamples", statsSampleCases()},
		{"Wakeup", wakeupCases()},
		{"Faults", faultCases()},
		{"Corrupt", corruptCases()},
		{"Close", closeCases()},
	}
}

// run runs every group and case under t.
func run(t tb, h harness) {
	if h.concurrency <= 0 {
		h.concurrency = DefaultConcurrency
	}
	for _, g := range groups() {
		t.Run(g.name, func(t tb) {
			for _, c := range g.cases {
				t.Run(c.name, func(t tb) {
					if !h.serial {
						t.Parallel()
					}
					// A panicking store fails its case, not the whole run.
					defer func() {
						if r := recover(); r != nil {
							t.Errorf("panic: %v\n%s", r, debug.Stack())
						}
					}()
					c.run(t, newFixture(t, h))
				})
			}
		})
	}
}

// newFixture opens a store for the case running under t and closes it at
// cleanup.
func newFixture(t tb, h harness) *fixture {
	t.Helper()
	s := h.open(t)
	if s == nil {
		t.Fatalf("tck: Harness.Open returned a nil store")
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil && !errors.Is(err, spi.ErrClosed) {
			t.Errorf("tck: closing the store at cleanup: %v", err)
		}
	})
	return &fixture{t: t, s: s, h: h, ctx: t.Context()}
}
