package main

import (
	"bytes"
	"context"
	"fmt"
	"net/url"
	"strings"
	"testing"

	drv "github.com/go-sql-driver/mysql"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratchet-go/ratchet/internal/dbtest"
)

// TestMySQLCommands runs migrate, demo and bench against MySQL/MariaDB.
func TestMySQLCommands(t *testing.T) {
	dsn, database := dbtest.MySQL(t)
	cfg, err := drv.ParseDSN(dsn)
	require.NoError(t, err)
	u := url.URL{Scheme: "mysql", User: url.UserPassword(cfg.User, cfg.Passwd), Host: cfg.Addr, Path: "/" + database}
	if cfg.Passwd == "" {
		u.User = url.User(cfg.User)
	}
	spec := u.String()
	ctx := context.Background()
	var out, errOut bytes.Buffer
	code := run(ctx, []string{"migrate", "--store", spec}, &out, &errOut)
	assert.Equal(t, 0, code, errOut.String())
	assert.Contains(t, out.String(), "applied migration 0001")

	out.Reset()
	code = run(ctx, []string{"demo", "--store", spec, "--jobs", "200"}, &out, &errOut)
	assert.Equal(t, 0, code, "stdout:\n%s\nstderr:\n%s", out.String(), errOut.String())
	assert.Contains(t, out.String(), "every job reached its expected state")

	out.Reset()
	code = run(ctx, []string{"bench", "--store", spec, "--jobs", "1000", "--workers", "50", "--insert-batch", "500"}, &out, &errOut)
	assert.Equal(t, 0, code, errOut.String())
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	var ins, work float64
	_, err = fmt.Sscanf(lines[len(lines)-1], "insert %f jobs/s, work %f jobs/s", &ins, &work)
	assert.NoError(t, err, "last line %q", lines[len(lines)-1])
}
