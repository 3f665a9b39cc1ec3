package tck_test

import (
	"database/sql"
	"errors"
	"testing"

	"github.com/google/uuid"

	"github.com/ratchet-go/ratchet/sdk/spi"
	"github.com/ratchet-go/ratchet/tck"
)

// myStore stands for the store under test: an spi.Store over a database.
type myStore struct {
	spi.Store
	db  *sql.DB
	dsn string
}

// openMyStore stands for the store's constructor.
func openMyStore(dsn string) (*myStore, error) {
	return nil, errors.New("example: replace with the store's constructor, for " + dsn)
}

// testConformance is what the store's module holds as
// func TestConformance(t *testing.T) in a _test.go file next to the store.
func testConformance(t *testing.T) {
	tck.Run(t, tck.Harness{
		// A fresh, empty store for every case; Run closes it.
		Open: func(t *testing.T) spi.Store {
			s, err := openMyStore("file:" + t.TempDir() + "/ratchet.db")
			if err != nil {
				t.Fatal(err)
			}
			return s
		},
		// Optional: damage one job so that it can no longer be decoded.
		Corrupt: func(t *testing.T, s spi.Store, id uuid.UUID) {
			_, err := s.(*myStore).db.ExecContext(t.Context(),
				`UPDATE scheduler_job SET params = '{not json' WHERE job_id = ?`, id.String())
			if err != nil {
				t.Fatal(err)
			}
		},
		// Optional: a second handle on the same database, as another
		// process would open it.
		Reopen: func(t *testing.T, s spi.Store) spi.Store {
			other, err := openMyStore(s.(*myStore).dsn)
			if err != nil {
				t.Fatal(err)
			}
			return other
		},
		// Goroutines of the claim-exclusivity case (default 8).
		Concurrency: 16,
	})
}

// A store author certifies a store with one test in the store's module that
// calls Run with a Harness. This example shows that test for a SQL store.
func ExampleRun() {
	_ = testConformance
}
