package oracle_test

import (
	"sync"
	"testing"

	"github.com/google/uuid"

	"github.com/ratchet-go/ratchet/internal/dbtest"
	"github.com/ratchet-go/ratchet/sdk/spi"
	"github.com/ratchet-go/ratchet/stores/oracle"
	"github.com/ratchet-go/ratchet/tck"
)

// TestConformance certifies the Oracle store with the store conformance
// kit: every case in a fresh schema (user) of its own (migrated at Open), a
// second handle on the same schema for the multi-process cases, and a
// Corrupt hook that writes invalid JSON into the job's params column. It
// needs a database (RATCHET_TEST_ORACLE_DSN, or Docker for a container):
// without one it skips, once, with the reason.
func TestConformance(t *testing.T) {
	dbtest.Oracle(t)  // skips the whole kit at once when there is no database
	var dsns sync.Map // *oracle.Store -> its DSN
	tck.Run(t, tck.Harness{
		Open: func(t *testing.T) spi.Store {
			dsn, _ := dbtest.Oracle(t)
			s, err := oracle.Open(t.Context(), dsn, oracle.Options{ApplyMigrations: true})
			if err != nil {
				t.Fatalf("open: %v", err)
			}
			dsns.Store(s, dsn)
			return s
		},
		Reopen: func(t *testing.T, s spi.Store) spi.Store {
			dsn, _ := dsns.Load(s)
			r, err := oracle.Open(t.Context(), dsn.(string), oracle.Options{})
			if err != nil {
				t.Fatalf("reopen: %v", err)
			}
			return r
		},
		Corrupt: func(t *testing.T, s spi.Store, id uuid.UUID) {
			res, err := s.(*oracle.Store).DB().ExecContext(t.Context(),
				`UPDATE scheduler_job SET params = '{not json' WHERE job_id = :1`, id[:])
			if err != nil {
				t.Fatalf("corrupt job %s: %v", id, err)
			}
			if n, err := res.RowsAffected(); err != nil || n != 1 {
				t.Fatalf("corrupt job %s: %d rows affected (%v)", id, n, err)
			}
		},
	})
}
