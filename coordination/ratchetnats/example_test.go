package ratchetnats_test

import (
	"context"
	"log"

	"github.com/ratchet-go/ratchet/coordination/ratchetnats"
	"github.com/ratchet-go/ratchet/engine"
	ratchet "github.com/ratchet-go/ratchet/sdk"
	"github.com/ratchet-go/ratchet/stores/sqlite"
)

type email struct {
	To string `json:"to"`
}

// Every process of the cluster (workers, and processes that only submit)
// opens a coordinator on the same server and cluster name and gives it to
// its engine: a job submitted anywhere starts on an idle worker at once,
// not at that worker's next poll.
func Example() {
	ctx := context.Background()
	store, err := sqlite.Open(ctx, "jobs.db", sqlite.Options{Create: true})
	if err != nil {
		log.Fatal(err)
	}
	defer store.Close()

	coord, err := ratchetnats.New(ctx, "nats://127.0.0.1:4222", ratchetnats.Options{Cluster: "mail"})
	if err != nil {
		log.Fatal(err) // or run without one: the workers then find new jobs by polling
	}
	defer coord.Close()

	send := ratchet.NewVoidTask("send-email", func(ctx context.Context, e email) error { return nil })
	eng, err := engine.New(store, engine.Options{Coordinator: coord}, send)
	if err != nil {
		log.Fatal(err)
	}
	if err := eng.Start(ctx); err != nil {
		log.Fatal(err)
	}
	defer eng.Stop(ctx)

	if _, err := send.Submit(ctx, eng.Client(), email{To: "ada@example.com"}); err != nil {
		log.Fatal(err)
	}
}
