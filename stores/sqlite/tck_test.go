package sqlite_test

import (
	"path/filepath"
	"testing"

	"github.com/google/uuid"

	"github.com/ratchet-go/ratchet/sdk/spi"
	"github.com/ratchet-go/ratchet/stores/sqlite"
	"github.com/ratchet-go/ratchet/tck"
)

// TestConformance certifies the SQLite store with the store conformance kit:
// every case on a database file of its own, and a Corrupt hook that writes
// invalid JSON into the job's params column.
func TestConformance(t *testing.T) {
	tck.Run(t, tck.Harness{
		Open: func(t *testing.T) spi.Store {
			s, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "ratchet.db"), sqlite.Options{Create: true})
			if err != nil {
				t.Fatalf("open: %v", err)
			}
			return s
		},
		Corrupt: func(t *testing.T, s spi.Store, id uuid.UUID) {
			res, err := s.(*sqlite.Store).DB().ExecContext(t.Context(),
				`UPDATE scheduler_job SET params = '{not json' WHERE job_id = ?`, id.String())
			if err != nil {
				t.Fatalf("corrupt job %s: %v", id, err)
			}
			if n, err := res.RowsAffected(); err != nil || n != 1 {
				t.Fatalf("corrupt job %s: %d rows affected (%v)", id, n, err)
			}
		},
	})
}
