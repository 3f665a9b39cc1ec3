package ratchet_test

import (
	"context"
	"fmt"
	"log"

	ratchet "github.com/ratchet-go/ratchet/sdk"
	"github.com/ratchet-go/ratchet/stores/memory"
)

// A mixed load in one round trip: a bill and two reminders, each with its
// own options, written together (or, on an error, none of them).
func ExampleClient_SubmitCalls() {
	ctx := context.Background()
	client, err := ratchet.NewClient(memory.New(), ratchet.ClientOptions{})
	if err != nil {
		log.Fatal(err)
	}
	remind := ratchet.NewVoidTask("invoice.remind", func(context.Context, string) error { return nil })
	ids, err := client.SubmitCalls(ctx, []ratchet.Call{
		bill.With(Invoice{Customer: "acme", Cents: 100}, ratchet.WithPriority(ratchet.PriorityHigh)),
		remind.With("acme"),
		remind.With("globex", ratchet.WithMaxRetries(1)),
	})
	if err != nil {
		log.Fatal(err)
	}
	for _, id := range ids {
		j, _ := client.GetJob(ctx, id)
		fmt.Println(j.TaskName, j.Priority, j.MaxRetries)
	}
	// Output:
	// invoice.bill HIGH 3
	// invoice.remind NORMAL 3
	// invoice.remind NORMAL 1
}
