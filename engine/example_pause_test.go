package engine_test

import (
	"context"
	"fmt"
	"log"

	"github.com/ratchet-go/ratchet/engine"
	ratchet "github.com/ratchet-go/ratchet/sdk"
	"github.com/ratchet-go/ratchet/stores/memory"
)

// Pausing a task during an incident: its jobs wait, submissions are still
// accepted, the other tasks run on; resumed, the jobs run.
func ExampleClient_PauseTask() {
	ctx := context.Background()
	charge := ratchet.NewVoidTask("billing.charge", func(ctx context.Context, invoice string) error { return nil })
	notify := ratchet.NewVoidTask("mail.notify", func(ctx context.Context, to string) error { return nil })
	node, err := engine.New(memory.New(), engine.Options{}, charge, notify)
	if err != nil {
		log.Fatal(err)
	}
	events, _ := node.Subscribe(0)
	if err := node.Start(ctx); err != nil {
		log.Fatal(err)
	}
	defer node.Stop(ctx)
	client := node.Client()

	if err := client.PauseTask(ctx, "billing.charge"); err != nil { // the payment provider is down
		log.Fatal(err)
	}
	held, _ := charge.Submit(ctx, client, "inv-1")
	mail, _ := notify.Submit(ctx, client, "ada@example.com")
	for ev := range events {
		if ev.JobID == mail {
			break
		}
	}
	job, _ := client.GetJob(ctx, held)
	paused, _ := client.PausedTasks(ctx)
	fmt.Println("while paused:", job.Status, len(paused), paused[0].Task)

	if err := client.ResumeTask(ctx, "billing.charge"); err != nil {
		log.Fatal(err)
	}
	for ev := range events {
		if ev.JobID == held {
			fmt.Println("resumed:", ev.Kind)
			break
		}
	}
	// Output:
	// while paused: PENDING 1 billing.charge
	// resumed: succeeded
}
