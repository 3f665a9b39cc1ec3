package engine_test

import (
	"context"
	"fmt"
	"log"
	"time"

	"github.com/ratchet-go/ratchet/engine"
	ratchet "github.com/ratchet-go/ratchet/sdk"
	"github.com/ratchet-go/ratchet/stores/memory"
)

// A rolling deploy adds a task: the node that still runs the old code
// claims only the jobs of the tasks it has, and the client lists the jobs
// that no live node can run yet.
func Example_mixedFleet() {
	ctx := context.Background()
	store := memory.New()
	resize := ratchet.NewVoidTask("image.resize", func(ctx context.Context, path string) error { return nil })
	watermark := ratchet.NewVoidTask("image.watermark", func(ctx context.Context, path string) error { return nil })

	// The old node knows only image.resize.
	old, err := engine.New(store, engine.Options{NodeID: "old"}, resize)
	if err != nil {
		log.Fatal(err)
	}
	events, unsubscribe := old.Subscribe(0)
	defer unsubscribe()
	if err := old.Start(ctx); err != nil {
		log.Fatal(err)
	}
	defer old.Stop(ctx)

	// A new client submits a job of the new task, then one of the old.
	client := old.Client()
	if _, err := watermark.Submit(ctx, client, "a.png"); err != nil {
		log.Fatal(err)
	}
	id, err := resize.Submit(ctx, client, "b.png")
	if err != nil {
		log.Fatal(err)
	}
	for ev := range events {
		if ev.JobID == id && ev.Kind == engine.EventSucceeded {
			break // the old node ran its job and left the other
		}
	}
	waiting, err := client.UnrunnableTasks(ctx, time.Minute)
	if err != nil {
		log.Fatal(err)
	}
	for _, b := range waiting {
		fmt.Printf("%s: %d pending, no live node runs it\n", b.Task, b.Pending)
	}
	// Output:
	// image.watermark: 1 pending, no live node runs it
}
