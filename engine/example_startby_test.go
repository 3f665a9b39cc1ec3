package engine_test

import (
	"context"
	"fmt"
	"log"
	"strings"
	"sync/atomic"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/ratchet-go/ratchet/engine"
	ratchet "github.com/ratchet-go/ratchet/sdk"
	"github.com/ratchet-go/ratchet/stores/memory"
)

// A start-by deadline: a reminder that no node claimed within a second
// of its submission never runs; it ends FAILED with ErrExpired. The fake
// clock stands for a backlog that held it up for two seconds.
func ExampleEngine_startBy() {
	ctx := context.Background()
	clock := clockwork.NewFakeClockAt(time.Date(2026, 1, 2, 9, 0, 0, 0, time.UTC))
	var ran atomic.Bool
	remind := ratchet.NewVoidTask("meeting.remind", func(ctx context.Context, who string) error {
		ran.Store(true)
		return nil
	})
	node, err := engine.New(memory.New(), engine.Options{Client: ratchet.ClientOptions{Clock: clock}}, remind)
	if err != nil {
		log.Fatal(err)
	}
	id, err := remind.Submit(ctx, node.Client(), "ada", ratchet.WithStartBy(clock.Now().Add(time.Second)))
	if err != nil {
		log.Fatal(err)
	}
	clock.Advance(2 * time.Second) // the backlog
	outcomes, _ := node.Subscribe(0)
	if err := node.Start(ctx); err != nil {
		log.Fatal(err)
	}
	defer node.Stop(ctx)
	for ev := range outcomes {
		if ev.JobID == id && ev.Kind != engine.EventStarted {
			break
		}
	}
	job, _ := node.Client().GetJob(ctx, id)
	fmt.Println(job.Status, ran.Load())
	// The claim or the node's start-by sweeper, whichever comes first,
	// fails it; the error says which, after the deadline.
	why, _, _ := strings.Cut(job.LastError, " (")
	fmt.Println(why)
	// Output:
	// FAILED false
	// do not retry: ratchet: start-by deadline passed: not started by 2026-01-02T09:00:01Z
}
