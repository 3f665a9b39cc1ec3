package ratchet_test

import (
	"context"
	"fmt"
	"log"
	"sync"

	"github.com/ratchet-go/ratchet/engine"
	ratchet "github.com/ratchet-go/ratchet/sdk"
	"github.com/ratchet-go/ratchet/stores/memory"
)

// FIFO sequences: the events of one order run one at a time, in the order
// they were submitted, on a node with free slots for all of them; the
// next waits BLOCKED, and says on which job.
func ExampleWithSequenceKey() {
	ctx := context.Background()
	var mu sync.Mutex
	var ran []string
	apply := ratchet.NewVoidTask("order.event", func(ctx context.Context, event string) error {
		mu.Lock()
		defer mu.Unlock()
		ran = append(ran, event)
		return nil
	})
	store := memory.New()
	client, err := ratchet.NewClient(store, ratchet.ClientOptions{})
	if err != nil {
		log.Fatal(err)
	}
	ids, err := apply.SubmitMany(ctx, client, []string{"created", "paid", "shipped"}, ratchet.WithSequenceKey("order-42"))
	if err != nil {
		log.Fatal(err)
	}
	d, _ := client.JobDetail(ctx, ids[1])
	fmt.Println(d.Job.Status, d.Waiting.Kind)

	eng, _ := node(store, engine.Options{Concurrency: 8}, apply)
	defer eng.Stop(ctx)
	if _, err := client.WaitJob(ctx, ids[2]); err != nil {
		log.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	fmt.Println(ran)
	// Output:
	// BLOCKED sequence
	// [created paid shipped]
}

// A tenant that submitted six reports does not hold up one that submitted
// two: the claims take the tenants' keys in turn.
func ExampleWithFairnessKey() {
	ctx := context.Background()
	var mu sync.Mutex
	var ran []string
	report := ratchet.NewVoidTask("report.build", func(ctx context.Context, name string) error {
		mu.Lock()
		defer mu.Unlock()
		ran = append(ran, name)
		return nil
	})
	store := memory.New()
	client, err := ratchet.NewClient(store, ratchet.ClientOptions{})
	if err != nil {
		log.Fatal(err)
	}
	if _, err := report.SubmitMany(ctx, client, []string{"a1", "a2", "a3", "a4", "a5", "a6"}, ratchet.WithFairnessKey("tenant-a")); err != nil {
		log.Fatal(err)
	}
	ids, err := report.SubmitMany(ctx, client, []string{"b1", "b2"}, ratchet.WithFairnessKey("tenant-b"))
	if err != nil {
		log.Fatal(err)
	}
	d, _ := client.JobDetail(ctx, ids[1])
	fmt.Println(d.Job.Status, d.Waiting.Kind)

	eng, _ := node(store, engine.Options{Concurrency: 1}, report)
	defer eng.Stop(ctx)
	if _, err := client.WaitJob(ctx, ids[1]); err != nil {
		log.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	fmt.Println(ran[:4])
	// Output:
	// BLOCKED fair-turn
	// [a1 b1 a2 b2]
}
