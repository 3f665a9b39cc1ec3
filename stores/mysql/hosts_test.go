package mysql

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratchet-go/ratchet/internal/dbtest"
	"github.com/ratchet-go/ratchet/sdk/spi"
)

func TestAnAddressListDialsTheServersInTurn(t *testing.T) {
	for _, dsn := range []string{"mysql://root@127.0.0.1:1,127.0.0.1/test", "root@tcp(127.0.0.1:1,127.0.0.1)/test"} {
		cfg, err := parseDSN(dsn)
		require.NoError(t, err, dsn)
		assert.Equal(t, "127.0.0.1:1,127.0.0.1:3306", cfg.Addr, dsn)
		assert.NotNil(t, cfg.DialFunc, dsn)
	}
	for _, dsn := range []string{"mysql://root@127.0.0.1:1,127.0.0.1:2,127.0.0.1:3/test?timeout=2s", "root@tcp(127.0.0.1:1,127.0.0.1:2,127.0.0.1:3)/test"} {
		cfg, err := parseDSN(dsn)
		require.NoError(t, err, dsn)
		assert.Equal(t, "127.0.0.1:1,127.0.0.1:2,127.0.0.1:3", cfg.Addr, dsn)
		assert.Equal(t, "test", cfg.DBName, dsn)
	}
	cfg, err := parseDSN("mysql://root@127.0.0.1/test")
	require.NoError(t, err)
	assert.Nil(t, cfg.DialFunc, "one server dials as the driver does")
	_, err = parseDSN("mysql://root@127.0.0.1,,127.0.0.2/test")
	require.ErrorContains(t, err, "empty entry")

	// Two listening servers after a closed port: the first that answers
	// is taken, and kept while it answers.
	var lns []net.Listener
	for range 2 {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		t.Cleanup(func() { _ = ln.Close() })
		lns = append(lns, ln)
	}
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	require.NoError(t, closed.Close())
	h := &hosts{addrs: []string{closed.Addr().String(), lns[0].Addr().String(), lns[1].Addr().String()}}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	dialTo := func() string {
		t.Helper()
		conn, err := h.dial(ctx, "tcp", "ignored")
		require.NoError(t, err)
		defer conn.Close()
		return conn.RemoteAddr().String()
	}
	assert.Equal(t, lns[0].Addr().String(), dialTo())
	assert.Equal(t, lns[0].Addr().String(), dialTo(), "the server reached last is tried first")
	require.NoError(t, lns[0].Close())
	assert.Equal(t, lns[1].Addr().String(), dialTo(), "its loss moves to the next")
	require.NoError(t, lns[1].Close())
	_, err = h.dial(ctx, "tcp", "ignored")
	require.ErrorContains(t, err, "no server of")
}

// TestOpenWithAnAddressList: a store opens on a list whose first server
// is down, through the next one.
func TestOpenWithAnAddressList(t *testing.T) {
	dsn, database := dbtest.MySQL(t)
	cfg, err := parseDSN(dsn)
	require.NoError(t, err)
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	require.NoError(t, closed.Close())
	cfg.Addr = closed.Addr().String() + "," + cfg.Addr
	cfg.DBName = database
	s, err := Open(context.Background(), cfg.FormatDSN(), Options{ApplyMigrations: true})
	require.NoError(t, err)
	defer s.Close()
	_, _, err = s.ListJobs(context.Background(), spi.ListParams{Limit: 1})
	require.NoError(t, err)
}
