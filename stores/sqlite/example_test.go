package sqlite_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/google/uuid"

	"github.com/ratchet-go/ratchet/sdk/spi"
	"github.com/ratchet-go/ratchet/stores/sqlite"
)

func ExampleOpen() {
	dir, err := os.MkdirTemp("", "ratchet-example")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)

	ctx := context.Background()
	store, err := sqlite.Open(ctx, filepath.Join(dir, "ratchet.db"), sqlite.Options{Create: true})
	if err != nil {
		panic(err)
	}
	defer store.Close()

	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	_, err = store.InsertJobs(ctx, []*spi.Job{{
		ID:          uuid.Must(uuid.NewV7()),
		TaskName:    "hello",
		Payload:     []byte(`"world"`),
		Status:      spi.StatusPending,
		Priority:    spi.PriorityNormal,
		ScheduledAt: now,
		CreatedAt:   now,
	}}, spi.InsertOptions{})

	if err != nil {
		panic(err)
	}
	jobs, err := store.ClaimJobs(ctx, spi.ClaimParams{NodeID: "node-1", Limit: 10, Now: now})
	if err != nil {
		panic(err)
	}
	for _, j := range jobs {
		fmt.Println(j.TaskName, string(j.Payload), j.Status, j.OwnerNode, j.ClaimSeq)
	}
	// Output: hello "world" RUNNING node-1 1
}
