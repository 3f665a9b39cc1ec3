package engine_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"sync/atomic"
	"time"

	"github.com/ratchet-go/ratchet/engine"
	ratchet "github.com/ratchet-go/ratchet/sdk"
	"github.com/ratchet-go/ratchet/stores/memory"
)

// The record of every run: a job that timed out, then failed, then
// succeeded shows three attempts, each with its outcome and error.
func ExampleClient_Attempts() {
	ctx := context.Background()
	var runs atomic.Int32
	sync := ratchet.NewVoidTask("crm.sync", func(ctx context.Context, account string) error {
		switch runs.Add(1) {
		case 1:
			<-ctx.Done() // a hung upstream: the run times out
			return ctx.Err()
		case 2:
			return errors.New("crm: 503 service unavailable")
		}
		return nil
	}, ratchet.WithTimeout(50*time.Millisecond), ratchet.WithMaxRetries(3), ratchet.WithBackoff(ratchet.BackoffFixed, time.Millisecond))
	node, err := engine.New(memory.New(), engine.Options{}, sync)
	if err != nil {
		log.Fatal(err)
	}
	outcomes, _ := node.Subscribe(0)
	if err := node.Start(ctx); err != nil {
		log.Fatal(err)
	}
	defer node.Stop(ctx)
	id, err := sync.Submit(ctx, node.Client(), "acct-7")
	if err != nil {
		log.Fatal(err)
	}
	for ev := range outcomes {
		if ev.JobID == id && ev.Kind == engine.EventSucceeded {
			break
		}
	}
	attempts, err := node.Client().Attempts(ctx, id)
	if err != nil {
		log.Fatal(err)
	}
	for _, a := range attempts {
		fmt.Printf("claim %d: %s %q\n", a.ClaimSeq, a.Outcome, a.Error)
	}
	// Output:
	// claim 1: timed-out "ratchet: run timed out after 50ms"
	// claim 2: failed "crm: 503 service unavailable"
	// claim 3: succeeded ""
}
