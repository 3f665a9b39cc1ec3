package engine_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"time"

	"github.com/ratchet-go/ratchet/engine"
	ratchet "github.com/ratchet-go/ratchet/sdk"
	"github.com/ratchet-go/ratchet/stores/memory"
)

// A run timeout: past 50 ms the run fails (here for good, not retried),
// and the body's context ends with ErrTimeout as its cause.
func ExampleEngine_runTimeout() {
	ctx := context.Background()
	cause := make(chan error, 1)
	quote := ratchet.NewVoidTask("quote.price", func(ctx context.Context, sku string) error {
		<-ctx.Done() // a slow upstream
		cause <- context.Cause(ctx)
		return ctx.Err()
	}, ratchet.WithTimeout(50*time.Millisecond), ratchet.WithTimeoutNotRetried())
	node, err := engine.New(memory.New(), engine.Options{}, quote)
	if err != nil {
		log.Fatal(err)
	}
	outcomes, _ := node.Subscribe(0)
	if err := node.Start(ctx); err != nil {
		log.Fatal(err)
	}
	defer node.Stop(ctx)
	id, err := quote.Submit(ctx, node.Client(), "sku-42")
	if err != nil {
		log.Fatal(err)
	}
	for ev := range outcomes {
		if ev.JobID == id && ev.Kind != engine.EventStarted {
			break
		}
	}
	job, _ := node.Client().GetJob(ctx, id)
	fmt.Println(job.Status, job.LastError)
	fmt.Println(errors.Is(<-cause, ratchet.ErrTimeout))
	// Output:
	// FAILED do not retry: ratchet: run timed out after 50ms
	// true
}
