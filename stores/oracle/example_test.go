package oracle_test

import (
	"context"
	"fmt"
	"log"
	"time"

	"github.com/google/uuid"

	"github.com/ratchet-go/ratchet/sdk/spi"
	"github.com/ratchet-go/ratchet/stores/oracle"
)

// Open a store in an Oracle schema, creating or upgrading its tables, and
// submit a job. (This example needs a database, so it has no output to
// check.)
func ExampleOpen() {
	ctx := context.Background()
	s, err := oracle.Open(ctx, "oracle://ratchet:secret@localhost:1521/FREEPDB1",
		oracle.Options{ApplyMigrations: true})
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

// Check a DSN before opening it.
func ExampleParseDSN() {
	_, err := oracle.ParseDSN("ratchet/secret@//localhost:1521/FREEPDB1")
	fmt.Println(err)
	// Output: oracle: invalid DSN: not an oracle:// URL
}
