package ratchet_test

import (
	"context"
	"fmt"
	"log"
	"time"

	ratchet "github.com/ratchet-go/ratchet/sdk"
	"github.com/ratchet-go/ratchet/stores/memory"
)

// Unique jobs: at most one pending bill per customer and hour. A second
// submission for the same customer in the hour returns the first job's
// id; another customer's is a job of its own. With ByState naming PENDING
// only, a submission made once the first bill runs is written.
func ExampleWithUnique() {
	ctx := context.Background()
	store := memory.New()
	client, err := ratchet.NewClient(store, ratchet.ClientOptions{})
	if err != nil {
		log.Fatal(err)
	}
	once := ratchet.WithUnique(ratchet.UniqueOpts{
		ByArgs:   true,
		ByPeriod: time.Hour,
		ByState:  []ratchet.Status{ratchet.StatusPending},
	})
	first, _ := bill.Submit(ctx, client, Invoice{Customer: "acme", Cents: 100}, once)
	again, _ := bill.Submit(ctx, client, Invoice{Customer: "acme", Cents: 100}, once)
	other, _ := bill.Submit(ctx, client, Invoice{Customer: "globex", Cents: 100}, once)
	fmt.Println(again == first, other == first)
	// Output:
	// true false
}
