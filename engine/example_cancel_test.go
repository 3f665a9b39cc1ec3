package engine_test

import (
	"context"
	"fmt"
	"log"

	"github.com/ratchet-go/ratchet/engine"
	ratchet "github.com/ratchet-go/ratchet/sdk"
	"github.com/ratchet-go/ratchet/stores/memory"
)

// Cancelling a RUNNING job: CancelJob makes it CANCELLED at once, and the
// node cancels its body's context (here at once: the engine's own client
// cancelled it).
func ExampleEngine_cancelRunningJob() {
	ctx := context.Background()
	started, stopped := make(chan struct{}), make(chan error, 1)
	export := ratchet.NewVoidTask("export", func(ctx context.Context, table string) error {
		close(started)
		<-ctx.Done() // a long export that stops when told to
		stopped <- context.Cause(ctx)
		return ctx.Err()
	})
	node, err := engine.New(memory.New(), engine.Options{}, export)
	if err != nil {
		log.Fatal(err)
	}
	if err := node.Start(ctx); err != nil {
		log.Fatal(err)
	}
	defer node.Stop(ctx)
	id, err := export.Submit(ctx, node.Client(), "orders")
	if err != nil {
		log.Fatal(err)
	}
	<-started
	if err := node.Client().CancelJob(ctx, id); err != nil {
		log.Fatal(err)
	}
	job, _ := node.Client().GetJob(ctx, id)
	fmt.Println(job.Status)
	fmt.Println("body stopped:", <-stopped != nil)
	// Output:
	// CANCELLED
	// body stopped: true
}
