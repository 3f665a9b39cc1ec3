package engine_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"time"

	"github.com/ratchet-go/ratchet/engine"
	ratchet "github.com/ratchet-go/ratchet/sdk"
	"github.com/ratchet-go/ratchet/stores/sqlite"
)

// EmailArgs are the arguments of the task.
type EmailArgs struct {
	To      string `json:"to"`
	Subject string `json:"subject"`
}

// A task: a stable name and a typed function. Options given here are the
// defaults of every submission of the task.
var sendEmail = ratchet.NewTask("email.send", func(ctx context.Context, a EmailArgs) (string, error) {
	job, _ := ratchet.JobFromContext(ctx) // id, run number, params, a tagged slog.Logger
	job.Logger.Info("sending", "to", a.To, "tenant", job.Param("tenant"))
	if a.To == "" {
		return "", ratchet.DoNotRetry(errors.New("no recipient")) // straight to the DLQ
	}
	return "sent to " + a.To, nil // stored as JSON with its Go type name
}, ratchet.WithMaxRetries(5), ratchet.WithBackoff(ratchet.BackoffExponential, time.Second))

func Example_tour() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "ratchet-tour")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	store, err := sqlite.Open(ctx, filepath.Join(dir, "ratchet.db"), sqlite.Options{Create: true})
	if err != nil {
		log.Fatal(err)
	}
	defer store.Close()

	// A node runs the tasks it was given.
	eng, err := engine.New(store, engine.Options{Concurrency: 20}, sendEmail)
	if err != nil {
		log.Fatal(err)
	}
	events, unsubscribe := eng.Subscribe(0) // every outcome the node writes
	defer unsubscribe()
	if err := eng.Start(ctx); err != nil {
		log.Fatal(err)
	}
	defer eng.Stop(ctx) // stop claiming, drain, give back what is unfinished

	// Submit: now or later, with a priority, params, an idempotency key.
	client := eng.Client() // or ratchet.NewClient(store, ...) with no engine
	ada, err := sendEmail.Submit(ctx, client, EmailArgs{To: "ada@example.com", Subject: "Welcome"},
		ratchet.WithPriority(ratchet.PriorityHigh),
		ratchet.WithParam("tenant", "acme"),
		ratchet.WithIdempotencyKey("welcome-ada"))
	if err != nil {
		log.Fatal(err)
	}
	nobody, _ := sendEmail.Submit(ctx, client, EmailArgs{Subject: "Hello?"})
	later, _ := sendEmail.Submit(ctx, client, EmailArgs{To: "bob@example.com"}, ratchet.WithDelay(time.Hour))

	// Submit inside your own transaction: the job exists only if it commits.
	tx, err := store.DB().BeginTx(ctx, nil)
	if err != nil {
		log.Fatal(err)
	}
	var after ratchet.AfterCommit
	eve, err := sendEmail.Submit(ctx, client, EmailArgs{To: "eve@example.com"},
		ratchet.InTx(tx), ratchet.WithAfterCommit(&after))
	if err != nil {
		log.Fatal(err)
	}
	if err := tx.Commit(); err != nil {
		log.Fatal(err)
	}
	after.Committed() // wake the node now, not at its next poll

	for range 3 { // ada, nobody and eve are due now
		<-events
	}

	// Read and manage.
	job, _ := client.GetJob(ctx, ada)       // status, attempts, last error, result
	res, _ := sendEmail.Result(client, job) // the typed result of a SUCCEEDED job
	fmt.Println("ada:", job.Status, res)
	job, _ = client.GetJob(ctx, eve)
	fmt.Println("eve:", job.Status)
	dlq, _ := client.ListJobs(ctx, ratchet.ListOptions{Status: ratchet.StatusFailed}) // the DLQ, paged
	for _, j := range dlq.Jobs {
		fmt.Println("dead letter:", j.ID == nobody, j.LastError)
	}
	_ = client.CancelJob(ctx, later) // only while PENDING (or BLOCKED, in a workflow)
	job, _ = client.GetJob(ctx, later)
	fmt.Println("bob:", job.Status)
	_ = client.RetryJob(ctx, nobody) // out of the DLQ: PENDING, error cleared, attempts 0, due now
	ev := <-events
	fmt.Println("retried:", ev.Kind, ev.Error)
	// Output:
	// ada: SUCCEEDED sent to ada@example.com
	// eve: SUCCEEDED
	// dead letter: true do not retry: no recipient
	// bob: CANCELLED
	// retried: failed do not retry: no recipient
}
