package engine_test

import (
	"context"
	"fmt"
	"log"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/ratchet-go/ratchet/engine"
	ratchet "github.com/ratchet-go/ratchet/sdk"
	"github.com/ratchet-go/ratchet/stores/memory"
)

// A snooze: a body waiting for a report that is not ready yet asks to run
// again in a minute instead of failing. The job goes back to PENDING
// without spending an attempt, so the task's single run (no retries) is
// not used up; the fake clock stands for the minutes going by.
func ExampleSnooze() {
	ctx := context.Background()
	clock := clockwork.NewFakeClockAt(time.Date(2026, 1, 2, 9, 0, 0, 0, time.UTC))
	ready := clock.Now().Add(2 * time.Minute)
	fetch := ratchet.NewVoidTask("report.fetch", func(ctx context.Context, report string) error {
		if clock.Now().Before(ready) {
			return ratchet.Snooze(time.Minute) // not ready: look again in a minute
		}
		return nil
	}, ratchet.WithMaxRetries(0), ratchet.WithMaxSnoozes(30))
	node, err := engine.New(memory.New(), engine.Options{Client: ratchet.ClientOptions{Clock: clock}}, fetch)
	if err != nil {
		log.Fatal(err)
	}
	events, _ := node.Subscribe(0)
	if err := node.Start(ctx); err != nil {
		log.Fatal(err)
	}
	defer node.Stop(ctx)
	id, err := fetch.Submit(ctx, node.Client(), "q3")
	if err != nil {
		log.Fatal(err)
	}
	for ev := range events {
		if ev.JobID != id {
			continue
		}
		fmt.Println(ev.Kind, ev.RetryAt.Format(time.TimeOnly))
		if ev.Kind != engine.EventSnoozed {
			break
		}
		clock.Advance(ev.RetryAt.Sub(clock.Now()))
		node.NotifyNewWork(ratchet.PriorityNormal)
	}
	job, _ := node.Client().GetJob(ctx, id)
	fmt.Println(job.Status, "attempts", job.Attempts, "snoozes", job.Snoozes)
	// Output:
	// snoozed 09:01:00
	// snoozed 09:02:00
	// succeeded 00:00:00
	// SUCCEEDED attempts 0 snoozes 2
}
