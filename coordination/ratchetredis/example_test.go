package ratchetredis_test

import (
	"context"
	"log"

	"github.com/google/uuid"

	"github.com/ratchet-go/ratchet/coordination/ratchetredis"
	"github.com/ratchet-go/ratchet/engine"
	ratchet "github.com/ratchet-go/ratchet/sdk"
	"github.com/ratchet-go/ratchet/sdk/spi"
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

	coord, err := ratchetredis.New(ctx, "redis://127.0.0.1:6379", ratchetredis.Options{Cluster: "mail"})
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

// A short-lived process (a script, a command line) that cancels a running
// job tells the fleet at once, before it exits: the job's node stops its
// body without waiting for its next heartbeat.
func ExampleCoordinator_PublishWakeup() {
	ctx := context.Background()
	store, err := sqlite.Open(ctx, "jobs.db", sqlite.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer store.Close()
	coord, err := ratchetredis.New(ctx, "redis://127.0.0.1:6379", ratchetredis.Options{Cluster: "mail"})
	if err != nil {
		log.Fatal(err)
	}
	defer coord.Close()

	client, err := ratchet.NewClient(store, ratchet.ClientOptions{})
	if err != nil {
		log.Fatal(err)
	}
	id, err := uuid.Parse("0190b7b4-3c1e-7000-8000-000000000001")
	if err != nil {
		log.Fatal(err)
	}
	if err := client.CancelJob(ctx, id); err != nil {
		log.Fatal(err)
	}
	if err := coord.PublishWakeup(ctx, spi.WakeupHint{Source: "cleanup-script", CheckClaims: true}); err != nil {
		log.Print(err) // the nodes learn at their next heartbeat
	}
}
