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

// Durable steps: an onboarding job charges once, sleeps a day without
// holding a slot, and mails afterwards. The run after the sleep gets the
// charge's recorded receipt instead of charging again. The fake clock
// stands for the day going by.
func ExampleRunStep() {
	ctx := context.Background()
	clock := clockwork.NewFakeClockAt(time.Date(2026, 1, 2, 9, 0, 0, 0, time.UTC))
	charges := 0
	onboard := ratchet.NewTask("user.onboard", func(ctx context.Context, user string) (string, error) {
		receipt, err := ratchet.RunStep(ctx, "charge", func(context.Context) (string, error) {
			charges++ // the side effect that must not repeat
			return "rcpt-" + user, nil
		})
		if err != nil {
			return "", err
		}
		if err := ratchet.Sleep(ctx, 24*time.Hour); err != nil {
			return "", err // return the sleep's error as it is: the job snoozes
		}
		_, err = ratchet.RunStep(ctx, "welcome-mail", func(context.Context) (bool, error) { return true, nil })
		return receipt, err
	})
	node, err := engine.New(memory.New(), engine.Options{Client: ratchet.ClientOptions{Clock: clock}}, onboard)
	if err != nil {
		log.Fatal(err)
	}
	events, _ := node.Subscribe(0)
	if err := node.Start(ctx); err != nil {
		log.Fatal(err)
	}
	defer node.Stop(ctx)
	id, err := onboard.Submit(ctx, node.Client(), "ada")
	if err != nil {
		log.Fatal(err)
	}
	for ev := range events {
		if ev.JobID != id {
			continue
		}
		fmt.Println(ev.Kind, ev.RetryAt.Format(time.DateTime))
		if ev.Kind != engine.EventSnoozed {
			break
		}
		clock.Advance(ev.RetryAt.Sub(clock.Now()))
		node.NotifyNewWork(ratchet.PriorityNormal)
	}
	job, _ := node.Client().GetJob(ctx, id)
	receipt, _ := onboard.Result(node.Client(), job)
	fmt.Println(job.Status, receipt, "charges:", charges, "attempts:", job.Attempts)
	// Output:
	// snoozed 2026-01-03 09:00:00
	// succeeded 0001-01-01 00:00:00
	// SUCCEEDED rcpt-ada charges: 1 attempts: 0
}
