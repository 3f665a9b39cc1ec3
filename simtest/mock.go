package simtest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"time"

	"github.com/google/uuid"

	ratchet "github.com/ratchet-go/ratchet/sdk"
	"github.com/ratchet-go/ratchet/sdk/spi"
)

// Call is one execution of a job body in an Env, mocked or real.
type Call struct {
	// JobID is the job's id and Task its task name.
	JobID uuid.UUID
	Task  string
	// Run is the job's run number (ratchet.JobContext.Run): 1 for the
	// first execution, 2 for the first retry, ...
	Run int
	// Args are the job's serialized arguments; decode them with Decode.
	Args []byte
	// Params are the job's submission params.
	Params map[string]string
	// Start and End are the simulated times the body began and returned;
	// End is zero while it runs.
	Start, End time.Time
	// Err is the body's error text, "" on success.
	Err string
	// Mocked is true when a mock handled the call.
	Mocked bool

	ser  spi.PayloadSerializer
	done bool
}

// Decode decodes the call's arguments into v (a pointer to the task's
// argument type) with the environment's serializer.
func (c Call) Decode(v any) error {
	ser := c.ser
	if ser == nil {
		ser = ratchet.JSONSerializer{}
	}
	return ser.Unmarshal(c.Args, v)
}

// CallArgs decodes a call's arguments into the argument type A.
func CallArgs[A any](c Call) (A, error) {
	var a A
	err := c.Decode(&a)
	return a, err
}

// Mock replaces a task's body in an Env. Create one with Env.Mock or
// Env.MockTask and configure it with its chainable methods; by default it
// succeeds with no result, every time. When several mocks of a task are
// active, the first registered that is not exhausted and matches handles
// the call; with none, the registered task runs; with no task either, the
// test fails with a message naming the job and its args.
type Mock struct {
	env    *Env
	task   string
	times  int
	used   int
	delay  time.Duration
	match  func(Call) bool
	action func(ctx context.Context, c Call) (any, error)
}

// Mock adds a mock of the task with this name. A name that no registered
// task has can be mocked before the engine starts (at the first Advance or
// RunUntilIdle); after that the engine's task set is fixed and such a mock
// fails the test.
func (e *Env) Mock(task string) *Mock {
	e.t.Helper()
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.eng.Load() != nil && !e.known[task] {
		e.t.Fatalf("simtest: Mock(%q) after the engine started: the engine's task set was fixed then; "+
			"register the task in NewEnv or mock it before the first Advance or RunUntilIdle", task)
	}
	m := &Mock{env: e, task: task}
	e.mocks[task] = append(e.mocks[task], m)
	return m
}

// MockTask adds a mock of the task that def defines, by its name.
func (e *Env) MockTask(def ratchet.Definition) *Mock {
	e.t.Helper()
	if def == nil {
		e.t.Fatalf("simtest: MockTask(nil)")
	}
	return e.Mock(def.Name())
}

// MockFunc adds a mock of task that runs fn with the decoded arguments: a
// typed stand-in for the task's body.
func MockFunc[A, R any](e *Env, task *ratchet.Task[A, R], fn func(ctx context.Context, args A) (R, error)) *Mock {
	e.t.Helper()
	return e.MockTask(task).Do(func(ctx context.Context, c Call) (any, error) {
		a, err := CallArgs[A](c)
		if err != nil {
			return nil, ratchet.DoNotRetry(&ratchet.PayloadDecodeError{Task: c.Task, Err: err})
		}
		r, err := fn(ctx, a)
		if err != nil {
			return nil, err
		}
		if _, void := any(r).(ratchet.Void); void {
			return nil, nil
		}
		return r, nil
	})
}

func (m *Mock) set(f func()) *Mock {
	m.env.mu.Lock()
	defer m.env.mu.Unlock()
	f()
	return m
}

// Return makes the mock succeed with result v (stored as the job's result;
// nil for none).
func (m *Mock) Return(v any) *Mock {
	return m.set(func() { m.action = func(context.Context, Call) (any, error) { return v, nil } })
}

// ReturnError makes the mock fail with err: the job is retried as its
// settings say.
func (m *Mock) ReturnError(err error) *Mock {
	return m.set(func() { m.action = func(context.Context, Call) (any, error) { return nil, err } })
}

// ReturnDoNotRetry makes the mock fail with err wrapped in DoNotRetry: the
// job goes straight to the dead-letter queue.
func (m *Mock) ReturnDoNotRetry(err error) *Mock {
	return m.ReturnError(ratchet.DoNotRetry(err))
}

// Do makes the mock run fn. fn sees the job's context (JobFromContext
// works, and Sleep waits in simulated time) and the call.
func (m *Mock) Do(fn func(ctx context.Context, c Call) (any, error)) *Mock {
	return m.set(func() { m.action = fn })
}

// Times limits the mock to n calls; after that it falls through to the
// next mock, or to the registered task. n <= 0 means no limit.
func (m *Mock) Times(n int) *Mock { return m.set(func() { m.times = n }) }

// Once limits the mock to one call.
func (m *Mock) Once() *Mock { return m.Times(1) }

// After makes each call take d of simulated time before the mock's result:
// the clock advances while the job body runs.
func (m *Mock) After(d time.Duration) *Mock { return m.set(func() { m.delay = d }) }

// When restricts the mock to the calls match accepts, e.g. by arguments
// decoded with CallArgs.
func (m *Mock) When(match func(Call) bool) *Mock { return m.set(func() { m.match = match }) }

// Calls returns how many calls the mock has handled.
func (m *Mock) Calls() int {
	m.env.mu.Lock()
	defer m.env.mu.Unlock()
	return m.used
}

func (m *Mock) invoke(ctx context.Context, c Call) (any, error) {
	m.env.mu.Lock()
	delay, action := m.delay, m.action
	m.env.mu.Unlock()
	if delay > 0 {
		if err := Sleep(ctx, delay); err != nil {
			return nil, err
		}
	}
	if action == nil {
		return nil, nil
	}
	return action(ctx, c)
}

// Calls returns the executions of the task so far, in start order.
func (e *Env) Calls(task string) []Call {
	var out []Call
	for _, c := range e.Executions() {
		if c.Task == task {
			out = append(out, c)
		}
	}
	return out
}

// AssertCalled checks that the task ran at least once.
func (e *Env) AssertCalled(task string) bool {
	e.t.Helper()
	if len(e.Calls(task)) == 0 {
		e.t.Errorf("simtest: task %q was never called; calls so far: %s", task, e.callSummary())
		return false
	}
	return true
}

// AssertNotCalled checks that the task never ran.
func (e *Env) AssertNotCalled(task string) bool {
	e.t.Helper()
	if n := len(e.Calls(task)); n > 0 {
		e.t.Errorf("simtest: task %q was called %d times, expected never", task, n)
		return false
	}
	return true
}

// AssertCalledTimes checks that the task ran exactly n times.
func (e *Env) AssertCalledTimes(task string, n int) bool {
	e.t.Helper()
	if got := len(e.Calls(task)); got != n {
		e.t.Errorf("simtest: task %q was called %d times, expected %d; calls so far: %s", task, got, n, e.callSummary())
		return false
	}
	return true
}

// AssertCalledWith checks that the task ran at least once with arguments
// equal to args once serialized (JSON compared by value, other encodings
// byte by byte).
func (e *Env) AssertCalledWith(task string, args any) bool {
	e.t.Helper()
	want, err := e.ser.Marshal(args)
	if err != nil {
		e.t.Errorf("simtest: AssertCalledWith(%q): encode the expected args: %v", task, err)
		return false
	}
	calls := e.Calls(task)
	var seen []string
	for _, c := range calls {
		if sameArgs(c.Args, want) {
			return true
		}
		seen = append(seen, string(c.Args))
	}
	if len(seen) == 0 {
		e.t.Errorf("simtest: task %q was never called; expected a call with %s", task, want)
	} else {
		e.t.Errorf("simtest: task %q was never called with %s; it was called with: %s", task, want, strings.Join(seen, ", "))
	}
	return false
}

func sameArgs(a, b []byte) bool {
	var x, y any
	if json.Unmarshal(a, &x) == nil && json.Unmarshal(b, &y) == nil {
		return reflect.DeepEqual(x, y)
	}
	return bytes.Equal(a, b)
}

func (e *Env) callSummary() string {
	calls := e.Executions()
	if len(calls) == 0 {
		return "none"
	}
	parts := make([]string, 0, len(calls))
	for _, c := range calls {
		parts = append(parts, fmt.Sprintf("%s(%s) run %d at %s", c.Task, c.Args, c.Run, e.offset(c.Start)))
	}
	return strings.Join(parts, "; ")
}
