package ratchet_test

import (
	"context"
	"fmt"
	"log"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/ratchet-go/ratchet/engine"
	ratchet "github.com/ratchet-go/ratchet/sdk"
	"github.com/ratchet-go/ratchet/stores/memory"
)

// Rate limits: five calls to an API that allows two a minute. A node
// starts two; the other three wait PENDING, and say why.
func ExampleWithRateLimit() {
	ctx := context.Background()
	clock := clockwork.NewFakeClock()
	call := ratchet.NewVoidTask("api.call", func(ctx context.Context, n int) error { return nil })
	eng, events := node(memory.New(), engine.Options{Client: ratchet.ClientOptions{Clock: clock}}, call)
	defer eng.Stop(ctx)
	client := eng.Client()
	ids, err := call.SubmitMany(ctx, client, []int{1, 2, 3, 4, 5}, ratchet.WithRateLimit("api", 2, time.Minute))
	if err != nil {
		log.Fatal(err)
	}
	<-events
	<-events
	page, _ := client.ListJobs(ctx, ratchet.ListOptions{Status: ratchet.StatusPending})
	d, _ := client.JobDetail(ctx, ids[4])
	fmt.Println(len(page.Jobs), "waiting:", d.Waiting.Kind)
	// Output:
	// 3 waiting: rate-limited
}
