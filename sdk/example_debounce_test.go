package ratchet_test

import (
	"context"
	"fmt"
	"log"
	"time"

	"github.com/google/uuid"
	"github.com/jonboulle/clockwork"

	ratchet "github.com/ratchet-go/ratchet/sdk"
	"github.com/ratchet-go/ratchet/stores/memory"
)

// Debounce: a burst of saves of one document makes one reindex, due 30 s
// after the first save, with the last save's arguments. A save after the
// window makes the next reindex.
func ExampleWithDebounce() {
	ctx := context.Background()
	clock := clockwork.NewFakeClock()
	client, err := ratchet.NewClient(memory.New(), ratchet.ClientOptions{Clock: clock})
	if err != nil {
		log.Fatal(err)
	}
	reindex := ratchet.NewVoidTask("doc.reindex", func(ctx context.Context, rev int) error { return nil })
	save := func(rev int) uuid.UUID {
		id, err := reindex.Submit(ctx, client, rev, ratchet.WithDebounce("doc-42", 30*time.Second, ratchet.DebounceLastArgs()))
		if err != nil {
			log.Fatal(err)
		}
		return id
	}
	first := save(1)
	clock.Advance(10 * time.Second)
	second := save(2)
	clock.Advance(25 * time.Second) // 35 s after the first save: the window has ended
	third := save(3)
	job, _ := client.GetJob(ctx, first)
	fmt.Println(first == second, first == third, string(job.Payload))
	// Output:
	// true false 2
}
