package mysql_test

import (
	"fmt"
	"testing"

	"github.com/google/uuid"

	"github.com/ratchet-go/ratchet/internal/dbtest"
	"github.com/ratchet-go/ratchet/sdk/spi"
	"github.com/ratchet-go/ratchet/stores/mysql"
	"github.com/ratchet-go/ratchet/tck"
)

// TestConformance certifies the MySQL store with the store conformance
// kit: every case on a fresh database of its own (migrated at Open), a
// second handle on the same database (Reopen, as another process would open
// it), and a Corrupt hook that writes invalid JSON into the job's params
// column.
func TestConformance(t *testing.T) {
	server, _ := dbtest.MySQL(t)
	tck.Run(t, tck.Harness{
		Open: func(t *testing.T) spi.Store {
			dsn, database := dbtest.MySQL(t)
			s, err := mysql.Open(t.Context(), dsn, mysql.Options{Database: database, ApplyMigrations: true, MaxConns: 8})
			if err != nil {
				t.Fatalf("open: %v", err)
			}
			return s
		},
		Reopen: func(t *testing.T, s spi.Store) spi.Store {
			o, err := mysql.Open(t.Context(), server, mysql.Options{Database: s.(*mysql.Store).Database(), MaxConns: 8})
			if err != nil {
				t.Fatalf("reopen: %v", err)
			}
			return o
		},
		Corrupt: func(t *testing.T, s spi.Store, id uuid.UUID) {
			res, err := s.(*mysql.Store).DB().ExecContext(t.Context(),
				`UPDATE scheduler_job SET params = '{not json' WHERE job_id = ?`, id[:])
			if err != nil {
				t.Fatalf("corrupt job %s: %v", id, err)
			}
			if n, err := res.RowsAffected(); err != nil || n != 1 {
				t.Fatalf("corrupt job %s: %d rows affected (%v)", id, n, err)
			}
		},
		BreakConnections: func(t *testing.T, s spi.Store) {
			// KILL every other session of the store's pool on its database,
			// from one of the pool's own connections.
			db := s.(*mysql.Store).DB()
			rows, err := db.QueryContext(t.Context(),
				`SELECT ID FROM information_schema.PROCESSLIST WHERE DB = ? AND ID <> CONNECTION_ID()`, s.(*mysql.Store).Database())
			if err != nil {
				t.Fatalf("list sessions: %v", err)
			}
			var ids []int64
			for rows.Next() {
				var id int64
				if err := rows.Scan(&id); err != nil {
					t.Fatalf("list sessions: %v", err)
				}
				ids = append(ids, id)
			}
			_ = rows.Close()
			for _, id := range ids {
				_, _ = db.ExecContext(t.Context(), fmt.Sprintf("KILL CONNECTION %d", id))
			}
		},
	})
}
