package engine_test

import (
	"context"
	"fmt"
	"time"

	"github.com/ratchet-go/ratchet/engine"
	ratchet "github.com/ratchet-go/ratchet/sdk"
	"github.com/ratchet-go/ratchet/stores/memory"
)

// EmailArgs are the arguments of the example's task.
type EmailArgs struct {
	To      string `json:"to"`
	Subject string `json:"subject"`
}

// Example is the README's tour: define a task, start a node, submit jobs,
// and read their outcome.
func Example() {
	ctx := context.Background()

	// A task: a stable name and a typed function. Options given here are
	// the defaults of every submission.
	sendEmail := ratchet.NewTask("email.send", func(ctx context.Context, a EmailArgs) (string, error) {
		job, _ := ratchet.JobFromContext(ctx)
		job.Logger.Info("sending", "to", a.To, "tenant", job.Param("tenant"))
		if a.To == "" {
			return "", ratchet.DoNotRetry(fmt.Errorf("no recipient"))
		}
		return "sent to " + a.To, nil
	}, ratchet.WithMaxRetries(5), ratchet.WithBackoff(ratchet.BackoffExponential, time.Second))

	// A node: a store (here in memory; sqlite.Open or postgres.Open in
	// production) and the tasks it runs.
	store := memory.New()
	eng, err := engine.New(store, engine.Options{Concurrency: 20}, sendEmail)
	if err != nil {
		panic(err)
	}
	events, unsubscribe := eng.Subscribe(0)
	defer unsubscribe()
	if err := eng.Start(ctx); err != nil {
		panic(err)
	}
	defer func() { _ = eng.Stop(ctx) }()

	// Submit through a client: now, later, with a priority, params and an
	// idempotency key. A web process can use ratchet.NewClient(store, ...)
	// without running an engine.
	client := eng.Client()
	id, err := sendEmail.Submit(ctx, client, EmailArgs{To: "ada@example.com", Subject: "Welcome"},
		ratchet.WithPriority(ratchet.PriorityHigh),
		ratchet.WithParam("tenant", "acme"),
		ratchet.WithIdempotencyKey("welcome-ada"))
	if err != nil {
		panic(err)
	}
	bad, _ := sendEmail.Submit(ctx, client, EmailArgs{Subject: "nobody"})

	// Wait for both outcomes, then read them back.
	for range 2 {
		<-events
	}
	job, _ := client.GetJob(ctx, id)
	result, _ := sendEmail.Result(client, job)
	fmt.Println(job.Status, result)
	failed, _ := client.GetJob(ctx, bad)
	fmt.Println(failed.Status, failed.LastError)
	// Output:
	// SUCCEEDED sent to ada@example.com
	// FAILED do not retry: no recipient
}
