package privatedb_test

import (
	"context"
	"database/sql"
	"testing"

	"github.com/go-sql-driver/mysql"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratchet-go/ratchet/internal/dbtest/privatedb"
)

// TestGaleraLosesAndRejoinsANode: a write through one node reaches the
// others; with one node killed the other two still commit, and the killed
// node rejoins with the rows it missed.
func TestGaleraLosesAndRejoinsANode(t *testing.T) {
	ctx := context.Background()
	g, err := privatedb.StartGalera(ctx, privatedb.GaleraOptions{})
	skipMissing(t, err)
	t.Cleanup(func() { assert.NoError(t, g.Stop(context.Background())) })

	count := func(i int, stmt string) int {
		t.Helper()
		cfg := mysql.NewConfig()
		cfg.User, cfg.Net, cfg.Addr, cfg.DBName = "root", "tcp", g.NodeAddr(i), "test"
		conn, err := mysql.NewConnector(cfg)
		require.NoError(t, err)
		db := sql.OpenDB(conn)
		defer db.Close()
		if stmt != "" {
			_, err = db.ExecContext(ctx, stmt)
			require.NoError(t, err)
		}
		var n int
		require.NoError(t, db.QueryRowContext(ctx, `SELECT COUNT(*) FROM probe`).Scan(&n))
		return n
	}
	count(0, `CREATE TABLE probe (id INT AUTO_INCREMENT PRIMARY KEY)`)
	assert.Equal(t, 1, count(0, `INSERT INTO probe () VALUES ()`))
	busiest, err := g.Busiest(ctx)
	require.NoError(t, err)
	require.NoError(t, g.Kill(busiest))
	assert.Equal(t, busiest, g.Down())
	other := (busiest + 1) % 3
	assert.Equal(t, 2, count(other, `INSERT INTO probe () VALUES ()`))
	require.NoError(t, g.Rejoin(ctx, busiest))
	assert.Equal(t, -1, g.Down())
	assert.Equal(t, 2, count(busiest, ""), "the rejoined node has the row it missed")
}
