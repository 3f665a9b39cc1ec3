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

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The self-test: the reference store passes Run, and every deliberately
// broken variant of it fails in the cases meant to catch its defect. The
// broken runs go through a recorder (a tb that records outcomes instead of
// failing the real test), so they can be asserted on.

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
