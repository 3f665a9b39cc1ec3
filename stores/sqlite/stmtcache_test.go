package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// cacheState is what a store's connection has cached: its texts, and the
// bytes they hold. It takes the store's one connection, so nothing else
// may hold it (no open transaction or rows) when it is called.
func cacheState(t *testing.T, db *sql.DB) (texts map[string]bool, size int) {
	t.Helper()
	conn, err := db.Conn(context.Background())
	require.NoError(t, err)
	defer conn.Close()
	texts = map[string]bool{}
	require.NoError(t, conn.Raw(func(dc any) error {
		c, ok := dc.(*cachingConn)
		require.True(t, ok, "the store's connection is %T, not a *cachingConn", dc)
		c.mu.Lock()
		defer c.mu.Unlock()
		require.Equal(t, len(c.stmts), c.lru.Len(), "the map and the list of the cache disagree")
		for q, e := range c.stmts {
			require.False(t, e.Value.(*cachedStmt).busy, "statement %q is busy with no rows open", q)
			texts[q] = true
		}
		size = c.text
		return nil
	}))
	return texts, size
}

func TestStatementCacheRunsATextAgainWithNewArguments(t *testing.T) {
	s := openStore(t)
	exec(t, s, `CREATE TABLE kv (k INTEGER PRIMARY KEY, v TEXT NOT NULL)`)
	const ins = `INSERT INTO kv (k, v) VALUES (?, ?)`
	for i := range 10 {
		exec(t, s, ins, i, fmt.Sprint("v", i))
	}
	const sel = `SELECT v FROM kv WHERE k >= ? ORDER BY k`
	for i := range 10 {
		rows, err := s.db.Query(sel, i)
		require.NoError(t, err)
		var got []string
		for rows.Next() {
			var v string
			require.NoError(t, rows.Scan(&v))
			got = append(got, v)
		}
		require.NoError(t, rows.Err())
		require.NoError(t, rows.Close())
		require.Len(t, got, 10-i)
		require.Equal(t, fmt.Sprint("v", i), got[0])
	}
	texts, _ := cacheState(t, s.db)
	require.True(t, texts[ins], "the INSERT is not cached")
	require.True(t, texts[sel], "the SELECT is not cached")

	// A failed run resets the statement: the text runs again.
	_, err := s.db.Exec(ins, 3, "dup")
	require.ErrorContains(t, err, "UNIQUE")
	exec(t, s, ins, 10, "v10")
	var v string
	require.NoError(t, s.db.QueryRow(`SELECT v FROM kv WHERE k = ?`, 10).Scan(&v))
	require.Equal(t, "v10", v)
}

func TestStatementCacheRunsATextAgainWhileItsRowsAreOpen(t *testing.T) {
	s := openStore(t)
	ctx := context.Background()
	exec(t, s, `CREATE TABLE n (i INTEGER PRIMARY KEY)`)
	for i := range 5 {
		exec(t, s, `INSERT INTO n (i) VALUES (?)`, i)
	}
	const q = `SELECT i FROM n WHERE i >= ? ORDER BY i`

	// Within one transaction (the store's only connection), a loop over
	// q's rows runs q again for each row: the inner runs may not reuse
	// the outer's statement, which is mid-step.
	tx, err := s.db.BeginTx(ctx, nil)
	require.NoError(t, err)
	outer, err := tx.QueryContext(ctx, q, 0)
	require.NoError(t, err)
	var pairs []string
	for outer.Next() {
		var i int
		require.NoError(t, outer.Scan(&i))
		inner, err := tx.QueryContext(ctx, q, i)
		require.NoError(t, err)
		n := 0
		for inner.Next() {
			n++
		}
		require.NoError(t, inner.Err())
		require.NoError(t, inner.Close())
		pairs = append(pairs, fmt.Sprintf("%d:%d", i, n))
	}
	require.NoError(t, outer.Err())
	require.NoError(t, outer.Close())
	require.NoError(t, tx.Rollback())
	require.Equal(t, []string{"0:5", "1:4", "2:3", "3:2", "4:1"}, pairs)

	texts, _ := cacheState(t, s.db)
	require.True(t, texts[q], "the query is not cached once its rows closed")
}

func TestStatementCacheStaysWithinItsBounds(t *testing.T) {
	s := openStore(t)
	exec(t, s, `CREATE TABLE n (i INTEGER PRIMARY KEY)`)
	for i := range 3 * stmtCacheSize {
		var got int
		q := fmt.Sprintf(`SELECT %d + count(*) FROM n`, i)
		require.NoError(t, s.db.QueryRow(q).Scan(&got))
		require.Equal(t, i, got)
	}
	texts, size := cacheState(t, s.db)
	require.LessOrEqual(t, len(texts), stmtCacheSize)
	require.True(t, texts[fmt.Sprintf(`SELECT %d + count(*) FROM n`, 3*stmtCacheSize-1)], "the latest text is not cached")
	require.False(t, texts[`SELECT 0 + count(*) FROM n`], "the oldest text is still cached")

	// Long texts: the cached bytes stay bounded, and a text over the
	// limit runs without being cached.
	pad := strings.Repeat(" ", 40<<10)
	for i := range 10 {
		var got int
		require.NoError(t, s.db.QueryRow(fmt.Sprintf(`SELECT %d%s`, i, pad)).Scan(&got))
		require.Equal(t, i, got)
	}
	huge := `SELECT 7` + strings.Repeat(" ", maxCachedQuery)
	var got int
	require.NoError(t, s.db.QueryRow(huge).Scan(&got))
	require.Equal(t, 7, got)
	texts, size = cacheState(t, s.db)
	require.LessOrEqual(t, size, stmtCacheText)
	require.False(t, texts[huge], "a text over maxCachedQuery is cached")
	total := 0
	for q := range texts {
		total += len(q)
	}
	require.Equal(t, total, size, "the cache's byte count is off")
}

func TestStatementCacheSeesSchemaChanges(t *testing.T) {
	s := openStore(t)
	exec(t, s, `CREATE TABLE w (a INTEGER)`)
	exec(t, s, `INSERT INTO w (a) VALUES (1)`)
	const q = `SELECT * FROM w`
	cols := func() []string {
		rows, err := s.db.Query(q)
		require.NoError(t, err)
		defer rows.Close()
		c, err := rows.Columns()
		require.NoError(t, err)
		return c
	}
	require.Equal(t, []string{"a"}, cols())
	exec(t, s, `ALTER TABLE w ADD COLUMN b TEXT`)
	require.Equal(t, []string{"a", "b"}, cols(), "a cached statement kept the old schema")
}

func TestStatementCacheRunsATextAgainAfterItsContextEnded(t *testing.T) {
	s := openStore(t)
	// A query that runs until it is interrupted, unless ? bounds it.
	const q = `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?) SELECT max(i) FROM n`
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	rows, err := s.db.QueryContext(ctx, q, int64(1)<<62)
	if err == nil {
		for rows.Next() {
		}
		err = rows.Err()
		_ = rows.Close()
	}
	require.Error(t, err, "the query ran to its end")
	var got int64
	require.NoError(t, s.db.QueryRow(q, 1000).Scan(&got), "the text runs again after its interrupted run")
	require.Equal(t, int64(1000), got)
	texts, _ := cacheState(t, s.db)
	require.True(t, texts[q], "the text is not cached")
}
