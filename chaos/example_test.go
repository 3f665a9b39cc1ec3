//go:build unix

package chaos_test

import (
	"context"
	"fmt"
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
