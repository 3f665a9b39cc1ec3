package postgres_test

import (
	"context"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/ratchet-go/ratchet/internal/dbtest"
	"github.com/ratchet-go/ratchet/sdk/spi"
	"github.com/ratchet-go/ratchet/stores/postgres"
	"github.com/ratchet-go/ratchet/tck"
)

// TestConformance certifies the PostgreSQL store with the store conformance
// kit: every case on a fresh schema of its own (migrated at Open), and a
// Corrupt hook that writes invalid JSON into the job's params column, and a
// BreakConnections hook that cuts the pool's idle connections.
func TestConformance(t *testing.T) {
	tck.Run(t, tck.Harness{
		Open: func(t *testing.T) spi.Store {
			dsn, schema := dbtest.Postgres(t)
			s, err := postgres.Open(t.Context(), dsn, postgres.Options{Schema: schema, ApplyMigrations: true})
			if err != nil {
				t.Fatalf("open: %v", err)
			}
			return s
		},
		Corrupt: func(t *testing.T, s spi.Store, id uuid.UUID) {
			ps := s.(*postgres.Store)
			tag, err := ps.Pool().Exec(context.Background(),
				`UPDATE `+pgx.Identifier{ps.Schema(), "scheduler_job"}.Sanitize()+` SET params = '{not json' WHERE job_id = $1`, id)
			if err != nil {
				t.Fatalf("corrupt job %s: %v", id, err)
			}
			if tag.RowsAffected() != 1 {
				t.Fatalf("corrupt job %s: %d rows affected", id, tag.RowsAffected())
			}
		},
		BreakConnections: func(t *testing.T, s spi.Store) {
			// Cut the sockets under the pool's idle connections: their next
			// statement meets a dead connection.
			for _, c := range s.(*postgres.Store).Pool().AcquireAllIdle(t.Context()) {
				_ = c.Conn().PgConn().Conn().Close()
				c.Release()
			}
		},
	})
}
