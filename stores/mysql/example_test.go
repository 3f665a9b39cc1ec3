package mysql_test

import (
	"context"
	"database/sql"
	"fmt"
	"log"

	ratchet "github.com/ratchet-go/ratchet/sdk"
	"github.com/ratchet-go/ratchet/stores/mysql"
)

// Open a store in its own database, creating and migrating the database on
// first use, and submit a job through a client.
func ExampleOpen() {
	ctx := context.Background()
	store, err := mysql.Open(ctx, "mysql://app:secret@localhost:3306/ratchet", mysql.Options{
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
	fmt.Println("submitted", id, "to", store.ServerVersion())
}

// Submit a job inside the application's own transaction: the job exists
// only if the transaction commits.
func ExampleStore_InsertJobsTx() {
	ctx := context.Background()
	store, err := mysql.Open(ctx, "app:secret@tcp(localhost:3306)/app", mysql.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer store.Close()
	client, err := ratchet.NewClient(store, ratchet.ClientOptions{})
	if err != nil {
		log.Fatal(err)
	}
	ship := ratchet.NewVoidTask("ship-order", func(ctx context.Context, orderID int) error { return nil })

	tx, err := store.DB().BeginTx(ctx, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, `UPDATE orders SET state = 'paid' WHERE id = ?`, 42); err != nil {
		log.Fatal(err)
	}
	if _, err := ship.Submit(ctx, client, 42, ratchet.InTx(tx), ratchet.WithIdempotencyKey("ship-42")); err != nil {
		log.Fatal(err)
	}
	if err := tx.Commit(); err != nil {
		log.Fatal(err)
	}
}

// Apply the migrations from a deployment step (what `ratchet migrate`
// does), then open stores that only check the schema.
func ExampleMigrateDSN() {
	ctx := context.Background()
	applied, err := mysql.MigrateDSN(ctx, "mysql://admin:secret@localhost:3306/", "ratchet")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("applied versions:", applied)

	store, err := mysql.Open(ctx, "mysql://app:secret@localhost:3306/ratchet", mysql.Options{})
	if err != nil {
		log.Fatal(err) // wraps spi.ErrSchema when the schema is not current
	}
	defer store.Close()
}

// Migrate with a database handle the deployment already has; its
// connections' current database is the one migrated.
func ExampleMigrate() {
	ctx := context.Background()
	db, err := sql.Open("mysql", "admin:secret@tcp(localhost:3306)/ratchet")
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()
	applied, err := mysql.Migrate(ctx, db)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("applied versions:", applied)
}
