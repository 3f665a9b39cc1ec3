package sqlserver_test

import (
	"context"
	"fmt"
	"log"
	"time"

	"github.com/google/uuid"

	"github.com/ratchet-go/ratchet/sdk/spi"
	"github.com/ratchet-go/ratchet/stores/sqlserver"
)

// Open a store on a SQL Server database, creating or upgrading its schema,
// and submit a job. (This example needs a server, so it has no output
// to check.)
func ExampleOpen() {
	ctx := context.Background()
	s, err := sqlserver.Open(ctx, "sqlserver://ratchet:secret@localhost:1433?database=ratchet",
		sqlserver.Options{ApplyMigrations: true})
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()
	now := time.Now().UTC()
	res, err := s.InsertJobs(ctx, []*spi.Job{{
		ID: uuid.Must(uuid.NewV7()), TaskName: "send-email", Payload: []byte(`{"to":"a@example.com"}`),
		Priority: spi.PriorityNormal, ScheduledAt: now, CreatedAt: now, MaxRetries: 3,
	}}, spi.InsertOptions{})

	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("submitted", res[0].ID)
}

// Classify an error of a statement the application runs itself, as the
// store does before it retries a transaction.
func ExampleIsRetryable() {
	fmt.Println(sqlserver.IsRetryable(context.Canceled))
	// Output: false
}
