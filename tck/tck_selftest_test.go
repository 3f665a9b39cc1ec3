package tck

import (
	"context"
	"fmt"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratchet-go/ratchet/sdk/spi"
)

// The self-test: the reference store passes Run, and every deliberately
// broken variant of it fails in the cases meant to catch its defect. The
// broken runs go through a recorder (a tb that records outcomes instead of
// failing the real test), so they can be asserted on.

// refHarness returns the internal harness of a refStore with bug b.
func refHarness(b bug) harness {
	return harness{
		open:    func(tb) spi.Store { return newRefStore(b) },
		corrupt: func(_ tb, s spi.Store, id uuid.UUID) { s.(*refStore).corruptJob(id) },
		reopen:  func(_ tb, s spi.Store) spi.Store { return refHandle{s.(*refStore)} },
		breakConns: func(_ tb, s spi.Store) {
			if p, ok := s.(plainStore); ok {
				s = p.Store
			}
			s.(*refStore).broken.Store(true)
		},
		concurrency: DefaultConcurrency,
	}
}

// capabilityGroups are the groups of the optional store interfaces, with
// the interface each needs.
var capabilityGroups = map[string]string{
	"ClaimCheck": "spi.ClaimChecker",
	"Adopt":      "spi.ClaimAdopter",
	"Lease":      "spi.LeaseStore",
	"State":      "spi.JobStateStore",
	"Properties": "spi.JobPropertyStore",
	"Wakeup":     "spi.WakeupListener",
	"NodeTasks":  "spi.NodeTaskStore",
	"Count":      "spi.JobCounter",
	"Schedules":  "spi.ScheduleStore",
	"Archive":    "spi.JobArchiver",
	"JobLogs":    "spi.JobLogStore",
	"Workflows":  "spi.WorkflowStore",
	"Signals":    "spi.SignalStore",
	"Batches":    "spi.BatchStore",
	"Rewrite":    "spi.ValueRewriter",
	"Stats":      "spi.StatsReader",
	"Delete":     "spi.JobDeleter",
	"Audit":      "spi.AuditLog",
	"Bulk":       "spi.BulkManager",
}

func TestSelfReferenceStorePasses(t *testing.T) {
	Run(t, Harness{
		Open:    func(*testing.T) spi.Store { return newRefStore(bugNone) },
		Corrupt: func(_ *testing.T, s spi.Store, id uuid.UUID) { s.(*refStore).corruptJob(id) },
		Reopen:  func(_ *testing.T, s spi.Store) spi.Store { return refHandle{s.(*refStore)} },
	})
}

func TestSelfSerial(t *testing.T) {
	// Harness.Serial runs the same cases without t.Parallel.
	Run(t, Harness{
		Open:        func(*testing.T) spi.Store { return newRefStore(bugNone) },
		Concurrency: 3,
		Serial:      true,
	})
}

func TestSelfReferenceStoreRecorded(t *testing.T) {
	// The recorder sees every case pass, none skipped, so the broken runs
	// below are measured against a clean baseline.
	res := runRecorded(refHarness(bugNone))
	assert.Empty(t, res.failedCases(), "failures of the reference store:\n%s", res.report())
	assert.Empty(t, res.skippedCases(), "skipped cases")
	assert.Len(t, res.cases(), countCases(), "every case ran")
}

func TestSelfWithoutCorruptHook(t *testing.T) {
	h := refHarness(bugNone)
	h.corrupt = nil
	res := runRecorded(h)
	assert.Empty(t, res.failedCases(), "failures:\n%s", res.report())
	var want []string
	for _, c := range corruptCases() {
		want = append(want, "Corrupt/"+c.name)
	}
	assert.ElementsMatch(t, want, res.skippedCases(), "without Harness.Corrupt exactly the corrupted-row cases are skipped")
	for _, name := range want {
		assert.Contains(t, strings.Join(res.logs[name], "\n"), "Harness.Corrupt is nil", "skip message of %s", name)
	}
}

func TestSelfWithoutReopen(t *testing.T) {
	// Without Harness.Reopen the wakeup and concurrency cases use the one
	// store.
	h := refHarness(bugNone)
	h.reopen = nil
	res := runRecorded(h)
	assert.Empty(t, res.failedCases(), "failures:\n%s", res.report())
	assert.Empty(t, res.skippedCases(), "skipped cases")
	assert.Contains(t, strings.Join(res.logs["Wakeup/Source"], "\n"), "Harness.Reopen is nil")
}

func TestSelfWithoutCapabilities(t *testing.T) {
	// A store implementing spi.Store alone passes; the cases of the
	// optional interfaces are skipped, naming the interface.
	h := refHarness(bugNone)
	h.open = func(tb) spi.Store { return plainStore{newRefStore(bugNone)} }
	h.corrupt = func(_ tb, s spi.Store, id uuid.UUID) { s.(plainStore).Store.(*refStore).corruptJob(id) }
	h.reopen = nil
	res := runRecorded(h)
	assert.Empty(t, res.failedCases(), "failures:\n%s", res.report())
	var want []string
	for _, g := range groups() {
		if _, ok := capabilityGroups[g.name]; ok {
			for _, c := range g.cases {
				want = append(want, g.name+"/"+c.name)
			}
		}
	}
	assert.ElementsMatch(t, want, res.skippedCases(), "exactly the cases of the optional interfaces are skipped")
	for _, name := range want {
		iface := capabilityGroups[strings.SplitN(name, "/", 2)[0]]
		assert.Contains(t, strings.Join(res.logs[name], "\n"), "does not implement "+iface, "skip message of %s", name)
	}
}

func TestSelfBrokenStoresAreCaught(t *testing.T) {
	// Each broken store must fail at least the listed cases.
	tests := []struct {
		bug  bug
		want []string
	}{
		{bugDoubleClaim, []string{"ClaimConcurrency/ExclusiveClaims"}},
		{bugCorruptPlainError, []string{"Corrupt/GetJob", "Corrupt/ListJobs"}},
		{bugListSkipsCorrupt, []string{"Corrupt/ListJobs"}},
		{bugClaimPanicsOnCorrupt, []string{"Corrupt/ClaimNoPanic"}},

		{bugPermitRace, []string{"Permits/Concurrency"}},

		{bugLeaseRace, []string{"Lease/Concurrency"}},

		{bugDeliverNotAtomic, []string{"Signals/DeliverVersusTimeout"}},

		{bugFinishNotAtomic, []string{"Batches/FinishOnceConcurrently"}},
	}
	for _, tt := range tests {
		t.Run(strings.ReplaceAll(string(tt.bug), " ", "_"), func(t *testing.T) {
			t.Parallel()
			res := runRecorded(refHarness(tt.bug))
			failed := res.failedCases()
			require.NotEmpty(t, failed, "Run passed a store with the defect %q", tt.bug)
			for _, w := range tt.want {
				assert.Contains(t, failed, w, "case %s must catch %q; failed cases: %v", w, tt.bug, failed)
			}
			t.Logf("%q caught by %d cases: %v", tt.bug, len(failed), failed)
		})
	}
}

func TestSelfRecorder(t *testing.T) {
	// The recorder itself: failures, fatal stops, panics, skips, cleanups
	// and propagation to the parent.
	res := newResults()
	root := res.root()
	var order []string
	root.Run("G", func(g tb) {
		g.Run("ok", func(t tb) {
			t.Cleanup(func() { order = append(order, "first") })
			t.Cleanup(func() { order = append(order, "second") })
		})
		g.Run("errorf", func(t tb) { t.Errorf("boom %d", 1) })
		g.Run("fatal", func(t tb) {
			t.Fatalf("stop")
			t.Errorf("not reached")
		})
		g.Run("require", func(t tb) { require.Equal(t, 1, 2) })
		g.Run("panic", func(t tb) { panic("oops") })
		g.Run("skip", func(t tb) {
			t.Skipf("later")
			t.Errorf("not reached")
		})
		g.Run("ctx", func(t tb) {
			if t.Context().Err() != nil {
				t.Errorf("context done during the test")
			}
		})
	})
	assert.ElementsMatch(t, []string{"G/errorf", "G/fatal", "G/require", "G/panic"}, res.failedCases())
	assert.Equal(t, []string{"G/skip"}, res.skippedCases())
	assert.Equal(t, []string{"second", "first"}, order, "cleanups run last-in first-out")
	assert.True(t, res.failed["G"], "a failed subtest fails its parent")
	assert.NotContains(t, strings.Join(res.logs["G/fatal"], "\n"), "not reached")
	assert.Contains(t, strings.Join(res.logs["G/panic"], "\n"), "oops")
}

// countCases returns the number of cases of the kit.
func countCases() int {
	n := 0
	for _, g := range groups() {
		n += len(g.cases)
	}
	return n
}

// runRecorded runs the kit against h under a recorder and returns what it
// recorded.
func runRecorded(h harness) *results {
	res := newResults()
	run(res.root(), h)
	return res
}

// results collects the outcomes of a recorded run, by subtest name
// ("Group/Case").
type results struct {
	mu      sync.Mutex
	failed  map[string]bool
	skipped map[string]bool
	leaf    map[string]bool
	logs    map[string][]string
}

func newResults() *results {
	return &results{failed: map[string]bool{}, skipped: map[string]bool{}, leaf: map[string]bool{}, logs: map[string][]string{}}
}

func (r *results) root() *recorder {
	return &recorder{res: r, ctx: context.Background()}
}

// cases returns the names of the subtests that ran no subtest of their own.
func (r *results) cases() []string { return r.names(r.leaf) }

func (r *results) failedCases() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for n := range r.failed {
		if r.leaf[n] {
			out = append(out, n)
		}
	}
	slices.Sort(out)
	return out
}

func (r *results) skippedCases() []string { return r.names(r.skipped) }

func (r *results) names(m map[string]bool) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for n, ok := range m {
		if ok {
			out = append(out, n)
		}
	}
	slices.Sort(out)
	return out
}

// report renders the failed cases with their messages.
func (r *results) report() string {
	var b strings.Builder
	for _, n := range r.failedCases() {
		r.mu.Lock()
		fmt.Fprintf(&b, "--- FAIL: %s\n    %s\n", n, strings.Join(r.logs[n], "\n    "))
		r.mu.Unlock()
	}
	return b.String()
}

// recorder is a tb that records instead of failing. Subtests run one after
// the other, each in a goroutine of its own so that FailNow and Skipf can
// end it with runtime.Goexit like the testing package does.
type recorder struct {
	res      *results
	name     string
	ctx      context.Context
	mu       sync.Mutex
	failed   bool
	cleanups []func()
}

func (r *recorder) Helper()                  {}
func (r *recorder) Parallel()                {}
func (r *recorder) Name() string             { return r.name }
func (r *recorder) Context() context.Context { return r.ctx }

func (r *recorder) Cleanup(f func()) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.cleanups = append(r.cleanups, f)
}

func (r *recorder) Logf(format string, args ...any) {
	r.res.mu.Lock()
	defer r.res.mu.Unlock()
	r.res.logs[r.name] = append(r.res.logs[r.name], fmt.Sprintf(format, args...))
}

func (r *recorder) fail() {
	r.mu.Lock()
	r.failed = true
	r.mu.Unlock()
	r.res.mu.Lock()
	r.res.failed[r.name] = true
	r.res.mu.Unlock()
}

func (r *recorder) Errorf(format string, args ...any) {
	r.Logf(format, args...)
	r.fail()
}

func (r *recorder) FailNow() {
	r.fail()
	runtime.Goexit()
}

func (r *recorder) Fatalf(format string, args ...any) {
	r.Logf(format, args...)
	r.FailNow()
}

func (r *recorder) Failed() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.failed
}

func (r *recorder) Skipf(format string, args ...any) {
	r.Logf(format, args...)
	r.res.mu.Lock()
	r.res.skipped[r.name] = true
	r.res.mu.Unlock()
	runtime.Goexit()
}

func (r *recorder) Run(name string, f func(tb)) bool {
	full := name
	if r.name != "" {
		full = r.name + "/" + name
	}
	ctx, cancel := context.WithCancel(context.Background())
	child := &recorder{res: r.res, name: full, ctx: ctx}
	r.res.mu.Lock()
	r.res.leaf[full] = true
	delete(r.res.leaf, r.name)
	r.res.mu.Unlock()
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer func() {
			if p := recover(); p != nil {
				child.Errorf("panic: %v\n%s", p, debug.Stack())
			}
			cancel()
			child.runCleanups()
		}()
		f(child)
	}()
	<-done
	if child.Failed() {
		r.fail()
	}
	return !child.Failed()
}

// runCleanups runs the cleanups last-in first-out, each in a goroutine of
// its own so that one that stops the test does not skip the others.
func (r *recorder) runCleanups() {
	r.mu.Lock()
	cs := r.cleanups
	r.cleanups = nil
	r.mu.Unlock()
	for i := len(cs) - 1; i >= 0; i-- {
		done := make(chan struct{})
		go func() {
			defer close(done)
			defer func() {
				if p := recover(); p != nil {
					r.Errorf("panic in cleanup: %v", p)
				}
			}()
			cs[i]()
		}()
		<-done
	}
}
