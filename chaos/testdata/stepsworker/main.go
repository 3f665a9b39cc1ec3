// Command stepsworker is a worker binary for the chaos package's durable
// steps test: one task of five durable steps (ratchet.RunStep), each of
// which appends its side effect ("JOB STEP" and a newline) to the file
// named by $STEPS_EFFECTS_FILE before its result is recorded, so that a
// step that ran again shows twice. A line is "JOB STEP PID CRASH": the
// process and the job's crash count name the execution that ran it.
package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/ratchet-go/ratchet/chaos"
	ratchet "github.com/ratchet-go/ratchet/sdk"
)

// Job is the task's arguments: how long each step's work takes.
type Job struct {
	Millis int `json:"millis"`
}

// effect appends one side effect to the file: one write(2) of a short
// line in append mode, which a SIGKILL cannot tear.
func effect(ctx context.Context, step int) error {
	jc, _ := ratchet.JobFromContext(ctx)
	f, err := os.OpenFile(os.Getenv("STEPS_EFFECTS_FILE"), os.O_APPEND|os.O_WRONLY|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(f, "%s %d %d %d\n", jc.ID, step, os.Getpid(), jc.CrashCount)
	return errorsJoin(err, f.Close())
}

func errorsJoin(a, b error) error {
	if a != nil {
		return a
	}
	return b
}

var five = ratchet.NewVoidTask("steps.five", func(ctx context.Context, j Job) error {
	for step := 1; step <= 5; step++ {
		_, err := ratchet.RunStep(ctx, fmt.Sprintf("step-%d", step), func(ctx context.Context) (int, error) {
			t := time.NewTimer(time.Duration(j.Millis) * time.Millisecond) // the step's work
			defer t.Stop()
			select {
			case <-t.C:
			case <-ctx.Done():
				return 0, ctx.Err()
			}
			return step, effect(ctx, step)
		})
		if err != nil {
			return err
		}
	}
	return nil
}, ratchet.WithMaxRetries(10))

func main() {
	chaos.WorkerMainWith(chaos.WithTasks(five))
}
