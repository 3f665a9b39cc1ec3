package engine_test

import (
	"context"
	"fmt"
	"log"
	"log/slog"

	"github.com/ratchet-go/ratchet/engine"
	ratchet "github.com/ratchet-go/ratchet/sdk"
	"github.com/ratchet-go/ratchet/stores/memory"
)

// A subscriber of every kind that never drops an event: it hears the job's
// submission, the start of its run and its outcome.
func ExampleEngine_SubscribeWith() {
	ctx := context.Background()
	greet := ratchet.NewVoidTask("greet", func(ctx context.Context, name string) error { return nil })
	eng, err := engine.New(memory.New(), engine.Options{Client: ratchet.ClientOptions{Logger: slog.New(slog.DiscardHandler)}}, greet)
	if err != nil {
		log.Fatal(err)
	}
	events, unsubscribe := eng.SubscribeWith(engine.SubscribeOptions{Block: true})
	defer unsubscribe()
	if err := eng.Start(ctx); err != nil {
		log.Fatal(err)
	}
	defer eng.Stop(ctx)

	if _, err := greet.Submit(ctx, eng.Client(), "ada"); err != nil {
		log.Fatal(err)
	}
	for ev := range events {
		fmt.Println(ev.Kind, ev.Task, ev.Run)
		if ev.Kind == engine.EventSucceeded {
			break
		}
	}
	// Output:
	// submitted greet 0
	// started greet 1
	// succeeded greet 1
}
