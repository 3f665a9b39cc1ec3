package engine_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/ratchet-go/ratchet/engine"
	ratchet "github.com/ratchet-go/ratchet/sdk"
	"github.com/ratchet-go/ratchet/stores/sqlite"
)

// A task: a stable name and a typed function.
var greet = ratchet.NewTask("greet", func(ctx context.Context, name string) (string, error) {
	return "hello, " + name, nil
})

func Example() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "quickstart")
	defer os.RemoveAll(dir)
	store, err := sqlite.Open(ctx, filepath.Join(dir, "jobs.db"), sqlite.Options{Create: true}) // the embedded database
	if err != nil {
		log.Fatal(err)
	}
	defer store.Close()
	node, err := engine.New(store, engine.Options{}, greet) // a worker that runs greet
	if err != nil {
		log.Fatal(err)
	}
	outcomes, _ := node.Subscribe(0)
	if err := node.Start(ctx); err != nil {
		log.Fatal(err)
	}
	defer node.Stop(ctx)                               // drain, then give back what is unfinished
	id, err := greet.Submit(ctx, node.Client(), "Ada") // durable once Submit returns
	if err != nil {
		log.Fatal(err)
	}
	<-outcomes
	job, _ := node.Client().GetJob(ctx, id)
	res, _ := greet.Result(node.Client(), job)
	fmt.Println(job.Status, res)
	// Output:
	// SUCCEEDED hello, Ada
}
