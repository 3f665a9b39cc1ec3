//go:build unix

package chaos_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"testing"
	"time"

	"github.com/ratchet-go/ratchet/chaos"
	ratchet "github.com/ratchet-go/ratchet/sdk"
)

// A minute of kills, stops and terms over three probe workers on
// PostgreSQL, then the report; a violation fails the CI job.
func ExampleRun() {
	rep, err := chaos.Run(context.Background(), chaos.Scenario{
		DSN:      "postgres://postgres@127.0.0.1:5432/test",
		Duration: time.Minute,
		Seed:     7,
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Print(rep.Text())
	if !rep.OK() {
		os.Exit(1)
	}
}

// In a test: the scenario runs the application's own worker binary (whose
// main is chaos.WorkerMain with the application's tasks), and the test
// fails on any violation.
func ExampleRunT() {
	var t *testing.T // the test's
	chaos.RunT(t, chaos.Scenario{
		DSN:    os.Getenv("DATABASE_URL"),
		Worker: []string{"./bin/my-worker"},
		Faults: []chaos.FaultKind{chaos.FaultKill, chaos.FaultTerm},
		Seed:   42,
	})
}

// The main function of a worker binary with the application's tasks, for
// Scenario.Worker or ratchet chaos --worker.
func ExampleWorkerMain() {
	resize := ratchet.NewVoidTask("images.resize", func(ctx context.Context, path string) error {
		return nil // the application's work
	})
	chaos.WorkerMain(resize)
}

// The application's own workload, reproducible by seed: every choice is
// drawn from rng, and the submissions are spread over the window.
func submitResizes(ctx context.Context, c *ratchet.Client, rng *rand.Rand, window time.Duration) error {
	resize := ratchet.NewVoidTask("images.resize", func(ctx context.Context, path string) error { return nil })
	for i := range 100 {
		delay := time.Duration(rng.Int64N(int64(window)))
		path := fmt.Sprintf("img-%d-%d.png", i, rng.IntN(1000))
		if _, err := resize.Submit(ctx, c, path, ratchet.WithDelay(delay)); err != nil {
			return err
		}
	}
	return nil
}

// A worker binary with the application's tasks and its workload: ratchet
// chaos --worker ./bin/my-worker --workload both (or user) runs it once
// with --submit as the submitter, and as every node.
func ExampleWorkerMainWith() {
	resize := ratchet.NewVoidTask("images.resize", func(ctx context.Context, path string) error {
		return nil // the application's work
	})
	chaos.WorkerMainWith(chaos.WithTasks(resize), chaos.WithWorkload(submitResizes))
}

// In a test, the same workload in the test's own process, without the
// probe jobs: the worker binary needs only the tasks.
func ExampleScenario_submit() {
	var t *testing.T // the test's
	rep := chaos.RunT(t, chaos.Scenario{
		DSN:      os.Getenv("DATABASE_URL"),
		Worker:   []string{"./bin/my-worker"},
		Seed:     42,
		Submit:   submitResizes,
		Workload: chaos.Workload{NoProbes: true},
	})
	fmt.Println(rep.UserJobs, "jobs of the application checked")
}
