package simtest_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	ratchet "github.com/ratchet-go/ratchet/sdk"
	"github.com/ratchet-go/ratchet/simtest"
)

// exampleT stands in for the *testing.T a real test passes to NewEnv.
type exampleT struct{ cleanups []func() }

func (*exampleT) Helper()                           {}
func (*exampleT) Errorf(format string, args ...any) { fmt.Printf("error: "+format+"\n", args...) }
func (*exampleT) Fatalf(format string, args ...any) { panic(fmt.Sprintf(format, args...)) }
func (t *exampleT) Cleanup(f func())                { t.cleanups = append(t.cleanups, f) }
func (t *exampleT) done() {
	for i := len(t.cleanups) - 1; i >= 0; i-- {
		t.cleanups[i]()
	}
}

// A refund that fails twice, then succeeds: its retries follow the
// exponential backoff in simulated time, and the test reads the typed
// result.
func ExampleNewEnv() {
	t := &exampleT{} // in a test: the test's *testing.T
	defer t.done()

	type Refund struct {
		Order  string
		Amount int
	}
	refund := ratchet.NewTask("refund", func(ctx context.Context, r Refund) (string, error) {
		return "refunded " + r.Order, nil
	})
	env := simtest.NewEnv(t, simtest.EnvOptions{}, refund)
	env.MockTask(refund).Times(2).ReturnError(errors.New("payment service down"))

	ctx := context.Background()
	id, _ := refund.Submit(ctx, env.Client(), Refund{Order: "A-17", Amount: 30},
		ratchet.WithMaxRetries(3), ratchet.WithBackoff(ratchet.BackoffExponential, time.Second))
	env.RunUntilIdle()

	for _, c := range env.Executions() {
		fmt.Printf("run %d at %s: mocked=%v err=%q\n", c.Run, c.Start.Sub(simtest.DefaultStart), c.Mocked, c.Err)
	}
	res, _ := refund.Result(env.Client(), env.Job(id))
	fmt.Println(env.Status(id), res)
	env.AssertCalledTimes("refund", 3)
	// Output:
	// run 1 at 0s: mocked=true err="payment service down"
	// run 2 at 1s: mocked=true err="payment service down"
	// run 3 at 3s: mocked=false err=""
	// SUCCEEDED refunded A-17
}

// A task body tested on its own, with no engine: the body sees a job
// context with the run number and params given.
func ExampleRunTask() {
	greet := ratchet.NewTask("greet", func(ctx context.Context, name string) (string, error) {
		jc, _ := ratchet.JobFromContext(ctx)
		return fmt.Sprintf("hello %s from %s (run %d)", name, jc.Param("tenant"), jc.Run), nil
	})
	out, err := simtest.RunTask(context.Background(), greet, "Ada", simtest.RunTaskOptions{
		Run: 2, Params: map[string]string{"tenant": "acme"},
	})
	fmt.Println(out, err)
	// Output:
	// hello Ada from acme (run 2) <nil>
}
