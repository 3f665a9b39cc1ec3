package postgres_test

import (
	"context"
	"fmt"
	"log"

	"github.com/jackc/pgx/v5/pgxpool"

	ratchet "github.com/ratchet-go/ratchet/sdk"
	"github.com/ratchet-go/ratchet/stores/postgres"
)

// Open a store in its own schema, creating and migrating the schema on
// first use, and submit a job through a client.
func ExampleOpen() {
	ctx := context.Background()
	store, err := postgres.Open(ctx, "postgres://app@localhost:5432/app?sslmode=disable", postgres.Options{
		Schema:          "ratchet",
		ApplyMigrations: true,
	})
	if err != nil {
		log.Fatal(err)
	}
	defer store.Close()

	client, err := ratchet.NewClient(store, ratchet.ClientOptions{})
	if err != nil {
		log.Fatal(err)
	}
	sendEmail := ratchet.NewVoidTask("send-email", func(ctx context.Context, to string) error { return nil })
	id, err := sendEmail.Submit(ctx, client, "ada@example.com", ratchet.WithPriority(ratchet.PriorityHigh))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("submitted", id)
}

// Submit a job inside the application's own transaction: the job exists,
// and workers are woken, only if the transaction commits.
func ExampleStore_InsertJobsTx() {
	ctx := context.Background()
	store, err := postgres.Open(ctx, "postgres://app@localhost:5432/app?sslmode=disable", postgres.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer store.Close()
	client, err := ratchet.NewClient(store, ratchet.ClientOptions{})
	if err != nil {
		log.Fatal(err)
	}
	ship := ratchet.NewVoidTask("ship-order", func(ctx context.Context, orderID int) error { return nil })

	tx, err := store.Pool().Begin(ctx)
	if err != nil {
		log.Fatal(err)
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, `UPDATE orders SET state = 'paid' WHERE id = $1`, 42); err != nil {
		log.Fatal(err)
	}
	if _, err := ship.Submit(ctx, client, 42, ratchet.InTx(tx), ratchet.WithIdempotencyKey("ship-42")); err != nil {
		log.Fatal(err)
	}
	if err := tx.Commit(ctx); err != nil {
		log.Fatal(err)
	}
}

// Apply the migrations from a deployment step (what `ratchet migrate`
// does), then open stores that only check the schema.
func ExampleMigrate() {
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, "postgres://admin@localhost:5432/app?sslmode=disable")
	if err != nil {
		log.Fatal(err)
	}
	defer pool.Close()
	applied, err := postgres.Migrate(ctx, pool, "ratchet")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("applied versions:", applied)

	store, err := postgres.New(ctx, pool, postgres.Options{Schema: "ratchet"})
	if err != nil {
		log.Fatal(err) // wraps spi.ErrSchema when the schema is not current
	}
	defer store.Close()
}

// Leave the job table's VACUUMs to autovacuum, for a server whose
// autovacuum is tuned for it (by default the store vacuums the table once
// it has claimed 100,000 jobs since its last VACUUM).
func ExampleOptions_vacuumEvery() {
	ctx := context.Background()
	store, err := postgres.Open(ctx, "postgres://app@localhost:5432/app?sslmode=disable", postgres.Options{
		Schema:      "ratchet",
		VacuumEvery: -1,
	})
	if err != nil {
		log.Fatal(err)
	}
	defer store.Close()
}
