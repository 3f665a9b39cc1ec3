package oracle

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"net"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/uuid"
	go_ora "github.com/sijms/go-ora/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratchet-go/ratchet/sdk/spi"
)

// TestIDsSortAsUUIDs: RAW(16) holds the UUID's bytes, whose byte order
// (Oracle compares RAW byte by byte) is the UUID order.
func TestIDsSortAsUUIDs(t *testing.T) {
	ids := []uuid.UUID{
		uuid.MustParse("00000000-0000-7000-8000-00000000000a"),
		uuid.MustParse("00000001-0000-7000-8000-000000000000"),
		uuid.MustParse("01900000-0000-7000-8000-000000000001"),
		uuid.MustParse("ff000000-0000-7000-8000-000000000000"),
	}
	raws := make([][]byte, len(ids))
	for i, id := range ids {
		raws[i] = dbID(id)
		back, err := database{}.ParseID(raws[i])
		require.NoError(t, err)
		assert.Equal(t, id, back)
	}
	sorted := append([][]byte(nil), raws...)
	sort.Slice(sorted, func(a, b int) bool { return string(sorted[a]) < string(sorted[b]) })
	assert.Equal(t, raws, sorted)
	_, err := database{}.ParseID([]byte{1})
	assert.ErrorIs(t, err, spi.ErrCorruptJob)
}

func TestJobRoundTrip(t *testing.T) {
	for name, j := range map[string]*spi.Job{
		"full": {
			ID: newID(), TaskName: "täsk", Payload: []byte(`{"a": "Zoë 🚀"}`), Status: spi.StatusRunning, Priority: spi.PriorityHigh,
			ScheduledAt: t0, CreatedAt: t0.Add(-time.Hour), Attempts: 2, MaxRetries: 5, Backoff: spi.BackoffFixed,
			BackoffParam: 1500 * time.Microsecond, CrashCount: 1, ClaimSeq: 7, OwnerNode: "node-ä", ClaimedAt: t0.Add(time.Second),
			LastError: "boom", Result: []byte{}, ResultType: "T", IdempotencyKey: "key ", Tags: []string{"a,b", "gpu"},
			Params: map[string]string{"k": "v"}, Resource: "R", ResourceLimit: 2,
		},
		"minimal": {ID: newID(), Status: spi.StatusPending, ScheduledAt: t0},
	} {
		row := jobRow(j)
		require.Len(t, row, len(jobColumnList))
		got, err := decodeRow(row)
		require.NoError(t, err, name)
		assert.Equal(t, j, got, name)
	}
}

func TestCorruptRows(t *testing.T) {
	j := job(spi.PriorityNormal, t0)
	for name, change := range map[string]func(row []driver.Value){
		"status":   func(row []driver.Value) { row[4] = "DONE" },
		"priority": func(row []driver.Value) { row[5] = int64(-1) },
		"params":   func(row []driver.Value) { row[22] = "{not json" },
		"tags":     func(row []driver.Value) { row[30] = `["a"` },
		"id":       func(row []driver.Value) { row[0] = []byte{1, 2} },
	} {
		row := jobRow(j)
		change(row)
		_, err := decodeRow(row)
		assert.ErrorIs(t, err, spi.ErrCorruptJob, name)
		if name != "id" {
			assert.Contains(t, err.Error(), j.ID.String(), name)
		}
	}
}

func TestLOBBinds(t *testing.T) {
	assert.Nil(t, blobArg(nil))
	assert.Nil(t, blobArg([]byte{}), "an empty BLOB is written as EMPTY_BLOB() in the statement")
	assert.True(t, isEmptyBlob([]byte{}))
	assert.False(t, isEmptyBlob(nil))
	small := []byte(strings.Repeat("x", maxInlineRaw))
	assert.Equal(t, small, blobArg(small), "up to 2,000 bytes inline as RAW")
	big := []byte(strings.Repeat("x", maxInlineRaw+1))
	assert.Equal(t, go_ora.Blob{Data: big}, blobArg(big), "larger: a temporary LOB")
	assert.Nil(t, clobArg(""))
	assert.Equal(t, "abc", clobArg("abc"))
	long := strings.Repeat("y", maxInlineText+1)
	assert.Equal(t, go_ora.Clob{String: long, Valid: true}, clobArg(long))
	assert.Nil(t, text(""), "Oracle stores the empty string as NULL")
}

func TestIsRetryable(t *testing.T) {
	for _, c := range []struct {
		err  error
		want bool
	}{
		{oraErr(60, "deadlock detected while waiting for resource"), true},
		{fmt.Errorf("claim: %w", oraErr(8177, "can't serialize access for this transaction")), true},
		{oraErr(54, "resource busy"), true},
		{oraErr(30006, "resource busy; acquire with WAIT timeout expired"), true},
		{oraErr(3113, "end-of-file on communication channel"), true},
		{oraErr(3135, "connection lost contact"), true},
		{oraErr(1, "unique constraint (X.PK) violated"), false},
		{oraErr(942, "table or view does not exist"), false},
		{oraErr(1400, "cannot insert NULL"), false},
		{driver.ErrBadConn, true},
		{io.EOF, true},
		{&net.OpError{Op: "read", Err: syscall.ECONNRESET}, true},
		{context.Canceled, false},
		{context.DeadlineExceeded, false},
		{errors.New("ORA-00060 in a message is not an error code"), false},
		{nil, false},
	} {
		assert.Equal(t, c.want, IsRetryable(c.err), "%v", c.err)
	}
	dup := oraErr(1, "unique constraint (T_AB.UQ_SCHEDULER_JOB_IDEMPOTENCY_KEY) violated")
	assert.True(t, insertRetryable(dup), "a racing insert of the same key runs again and finds it")
	pk := oraErr(1, "unique constraint (T_AB.PK_SCHEDULER_JOB) violated")
	assert.False(t, insertRetryable(pk), "a duplicate job id is an error")
	assert.True(t, dialect.IsDuplicate(pk), "an upsert that raced with another runs again")
	assert.True(t, migrateRetryable(oraErr(955, "name is already used by an existing object")))
	assert.False(t, migrateRetryable(oraErr(900, "invalid SQL statement")))
}

func TestParseDSN(t *testing.T) {
	cfg, err := ParseDSN("oracle://ratchet:secret@db.example.com:1522/FREEPDB1?TIMEOUT=5")
	require.NoError(t, err)
	assert.Equal(t, "db.example.com:1522/FREEPDB1", serverName(cfg))
	for dsn, want := range map[string]string{
		"":                                    "oracle: invalid DSN: empty",
		"ratchet/secret@//db:1521/FREEPDB1":   "oracle: invalid DSN: not an oracle:// URL",
		"oracle://ratchet:secret@:1521/FREE":  "oracle: invalid DSN",
		"oracle://db:1521/FREEPDB1":           "oracle: invalid DSN: no user",
		"oracle://u:p@db:port/FREEPDB1":       "oracle: invalid DSN",
		"oracle://u:p@db:1521/x?TIMEOUT=soon": "oracle: invalid DSN",
	} {
		_, err := ParseDSN(dsn)
		if assert.Error(t, err, dsn) {
			assert.True(t, strings.HasPrefix(err.Error(), want), "ParseDSN(%q) = %v, want %q...", dsn, err, want)
		}
	}
}

func TestOpenRefusesBadInput(t *testing.T) {
	ctx := context.Background()
	_, err := Open(ctx, "system/x@db", Options{})
	assert.ErrorContains(t, err, "not an oracle:// URL")
	_, err = Open(ctx, "oracle://u:p@localhost/FREEPDB1", Options{ConnectTimeout: -time.Second})
	assert.ErrorContains(t, err, "negative connect timeout")
	_, err = New(ctx, nil, Options{})
	assert.ErrorContains(t, err, "nil database handle")
}

func TestOpenNamesAServerThatDoesNotAnswer(t *testing.T) {
	_, err := Open(context.Background(), "oracle://u:p@127.0.0.1:1/FREEPDB1", Options{ConnectTimeout: 2 * time.Second})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "oracle: open: cannot connect to 127.0.0.1:1/FREEPDB1")
}

func TestDefaults(t *testing.T) {
	s := wrap(nil, Options{}, false)
	assert.Equal(t, DefaultRetries, s.retries)
	assert.Equal(t, 0, wrap(nil, Options{Retries: -1}, false).retries)
	assert.Equal(t, 20*time.Millisecond, defaultPause(1))
	assert.Equal(t, time.Second, defaultPause(30))
}
