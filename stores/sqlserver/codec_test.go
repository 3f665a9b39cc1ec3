package sqlserver

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

	"github.com/golang-sql/civil"
	"github.com/google/uuid"
	mssql "github.com/microsoft/go-mssqldb"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratchet-go/ratchet/sdk/spi"
	"github.com/ratchet-go/ratchet/stores/internal/sqlcore"
)

// TestIDsSortAsUUIDs checks the reason job ids are BINARY(16): the bytes
// sent and compared are the UUID's own, whose byte order is the UUID
// order, so paging by job_id pages by id. (UNIQUEIDENTIFIER would compare
// bytes 10-15 first, and go-mssqldb would swap the first three groups.)
func TestIDsSortAsUUIDs(t *testing.T) {
	ids := []uuid.UUID{
		uuid.MustParse("00000000-0000-7000-8000-00000000000a"),
		uuid.MustParse("00000000-0000-7000-8000-0000000000ff"),
		uuid.MustParse("00000001-0000-7000-8000-000000000000"),
		uuid.MustParse("0000ffff-0000-7000-8000-000000000000"),
		uuid.MustParse("01900000-0000-7000-8000-000000000001"),
		uuid.MustParse("ff000000-0000-7000-8000-000000000000"),
	}
	bins := make([][]byte, len(ids))
	for i, id := range ids {
		bins[i] = dbID(id)
		assert.Equal(t, id[:], bins[i], "dbID keeps the UUID's bytes in order")
		back, err := database{}.ParseID(bins[i])
		require.NoError(t, err)
		assert.Equal(t, id, back)
	}
	sorted := append([][]byte(nil), bins...)
	sort.Slice(sorted, func(a, b int) bool { return string(sorted[a]) < string(sorted[b]) })
	assert.Equal(t, bins, sorted, "BINARY(16) order is UUID order")

	// What UNIQUEIDENTIFIER would do: SQL Server orders by bytes 10..15,
	// then 8..9, 6..7, 4..5, 0..3. The first and last ids above compare the
	// other way round.
	guidKey := func(u uuid.UUID) string {
		return string(u[10:16]) + string(u[8:10]) + string(u[6:8]) + string(u[4:6]) + string(u[0:4])
	}
	assert.Greater(t, guidKey(ids[1]), guidKey(ids[5]), "UNIQUEIDENTIFIER order differs from UUID order")

	_, err := database{}.ParseID([]byte{1, 2, 3})
	assert.ErrorIs(t, err, spi.ErrCorruptJob)
}

func TestTimeMapping(t *testing.T) {
	in := time.Date(2026, 11, 29, 13, 14, 15, 123456789, time.FixedZone("CET", 3600))
	d := dbTime(in)
	assert.Equal(t, civil.DateTime{Date: civil.Date{Year: 2026, Month: 11, Day: 29}, Time: civil.Time{Hour: 12, Minute: 14, Second: 15, Nanosecond: 123456000}}, d,
		"the UTC wall clock, truncated to the microsecond")
	assert.Equal(t, mssql.NullDateTime{}, nullDBTime(time.Time{}), "the zero time is a typed NULL")
	assert.True(t, nullDBTime(in).Valid)

	// The driver returns DATETIME2 fields in the DSN's timezone location;
	// they are UTC fields whatever it is.
	fields := time.Date(2026, 11, 29, 12, 14, 15, 123456000, time.FixedZone("X", -5*3600))
	got, err := dialect.TimeOf(fields)
	require.NoError(t, err)
	assert.Equal(t, time.UTC, got.Location())
	assert.True(t, got.Equal(time.Date(2026, 11, 29, 12, 14, 15, 123456000, time.UTC)))
	_, err = dialect.TimeOf("2026-11-29")
	assert.Error(t, err, "a column that is not a time is an error, not a panic")
}

func TestJobRoundTrip(t *testing.T) {
	j := &spi.Job{
		ID: newID(), TaskName: "täsk", Payload: []byte(`{"a": "Zoë 🚀"}`), Status: spi.StatusRunning, Priority: spi.PriorityHigh,
		ScheduledAt: t0, CreatedAt: t0.Add(-time.Hour), Attempts: 2, MaxRetries: 5, Backoff: spi.BackoffFixed,
		BackoffParam: 1500 * time.Microsecond, CrashCount: 1, ClaimSeq: 7, OwnerNode: "node-ä", ClaimedAt: t0.Add(time.Second),
		LastError: "boom", Result: []byte{}, ResultType: "T", IdempotencyKey: "key ", Tags: []string{"gpu", "a,b", `"q'`},
		Params: map[string]string{"k": "v"}, Resource: "R", ResourceLimit: 2, TraceContext: []byte{1, 0, 0xff},
	}
	row := jobRow(j)
	require.Len(t, row, len(jobColumnList))
	got, err := decodeRow(row)
	require.NoError(t, err)
	assert.Equal(t, j, got)
	assert.NotNil(t, got.Result, "an empty result stays empty, not nil")

	// Insert arguments: typed NULLs for VARBINARY, names as UTF-8 bytes.
	args := syntax.InsertRow(&spi.Job{ID: j.ID, ScheduledAt: t0, Payload: nil, IdempotencyKey: ""}, "")
	require.Len(t, args, numInsertArgs)
	assert.Equal(t, []byte(nil), args[2], "a nil payload is a VARBINARY NULL, not an untyped one")
	assert.IsType(t, []byte(nil), args[16], "result")
	assert.IsType(t, []byte(nil), args[18], "idempotency key")
	assert.Nil(t, args[19], "no params: NULL")
	params, err := sqlcore.EncodeParams(j.Params)
	require.NoError(t, err)
	args = syntax.InsertRow(j, params)
	assert.Equal(t, []byte("key "), args[18], "keys keep trailing spaces: VARBINARY has no padding")
	assert.Equal(t, `{"k":"v"}`, args[19])
}

func TestCorruptRows(t *testing.T) {
	j := job(spi.PriorityNormal, t0)
	for name, change := range map[string]func(row []driver.Value){
		"status":   func(row []driver.Value) { row[4] = "DONE" },
		"priority": func(row []driver.Value) { row[5] = int64(9) },
		"params":   func(row []driver.Value) { row[22] = "{not json" },
		"tags":     func(row []driver.Value) { row[30] = "[1" },
		"id":       func(row []driver.Value) { row[0] = []byte{1, 2} },
	} {
		row := jobRow(j)
		change(row)
		_, err := decodeRow(row)
		assert.ErrorIs(t, err, spi.ErrCorruptJob, name)
		if name != "id" {
			assert.Contains(t, err.Error(), j.ID.String(), "%s: the error names the job", name)
		}
	}
}

func TestIsRetryable(t *testing.T) {
	for _, c := range []struct {
		err  error
		want bool
	}{
		{mssql.Error{Number: 1205}, true},
		{fmt.Errorf("claim: %w", mssql.Error{Number: 1222}), true},
		{&mssql.Error{Number: 1205}, true},
		{mssql.Error{Number: 3960}, true},
		{mssql.Error{Number: 51000}, true},
		{mssql.Error{Number: 40613}, true},
		{mssql.Error{Number: 2627}, false},
		{mssql.Error{Number: 208}, false},
		{mssql.Error{Number: 547}, false},
		{driver.ErrBadConn, true},
		{fmt.Errorf("x: %w", driver.ErrBadConn), true},
		{io.EOF, true},
		{io.ErrUnexpectedEOF, true},
		{&net.OpError{Op: "read", Err: syscall.ECONNRESET}, true},
		{syscall.EPIPE, true},
		{context.Canceled, false},
		{context.DeadlineExceeded, false},
		{errors.Join(context.Canceled, driver.ErrBadConn), false},
		{errors.New("syntax error"), false},
		{nil, false},
	} {
		assert.Equal(t, c.want, IsRetryable(c.err), "%v", c.err)
	}
	dup := mssql.Error{Number: 2601, Message: "Cannot insert duplicate key row in object 'dbo.scheduler_job' with unique index 'uq_scheduler_job_idempotency_key'. The duplicate key value is (0x6B)."}
	assert.True(t, insertRetryable(dup), "a racing insert of the same key runs again and finds it")
	pk := mssql.Error{Number: 2627, Message: "Violation of PRIMARY KEY constraint 'pk_scheduler_job'. Cannot insert duplicate key in object 'dbo.scheduler_job'."}
	assert.False(t, insertRetryable(pk), "a duplicate job id is an error")
	assert.True(t, dialect.IsDuplicate(pk), "an upsert that raced with another runs again")
}

func TestParseDSN(t *testing.T) {
	for _, dsn := range []string{
		"sqlserver://sa:pass@localhost:1433?database=ratchet",
		"sqlserver://sa:pass@db.example.com/SQLEXPRESS?database=r&encrypt=disable",
		"server=localhost;user id=sa;password=pass;database=ratchet",
		"odbc:server=localhost;user id=sa;password={a;b}",
	} {
		_, err := ParseDSN(dsn)
		assert.NoError(t, err, dsn)
	}
	for dsn, want := range map[string]string{
		"":                                       "sqlserver: invalid DSN: empty",
		"sqlserver://sa:pass@localhost:notaport": "sqlserver: invalid DSN",
		"sqlserver://sa@localhost?dial+timeout=abc": "sqlserver: invalid DSN",
		"sqlserver://sa:x@localhost?encrypt=maybe":  "sqlserver: invalid DSN",
	} {
		_, err := ParseDSN(dsn)
		if assert.Error(t, err, dsn) {
			assert.True(t, strings.HasPrefix(err.Error(), want), "ParseDSN(%q) = %v, want %q...", dsn, err, want)
		}
	}
	cfg, err := ParseDSN("sqlserver://sa:x@db:1444?dial+timeout=3")
	require.NoError(t, err)
	assert.Equal(t, "db:1444", serverName(cfg))
	assert.Equal(t, 3*time.Second, connectTimeout(cfg, Options{}))
	assert.Equal(t, time.Second, connectTimeout(cfg, Options{ConnectTimeout: time.Second}))
	cfg, _ = ParseDSN("sqlserver://sa:x@db")
	assert.Equal(t, DefaultConnectTimeout, connectTimeout(cfg, Options{}))
}

func TestOpenRefusesBadInput(t *testing.T) {
	ctx := context.Background()
	_, err := Open(ctx, "sqlserver://sa:x@localhost:port", Options{})
	assert.ErrorContains(t, err, "sqlserver: invalid DSN")
	_, err = Open(ctx, "sqlserver://sa:x@localhost", Options{ConnectTimeout: -time.Second})
	assert.ErrorContains(t, err, "negative connect timeout")
	_, err = Open(ctx, "sqlserver://sa:x@localhost", Options{LockTimeout: -time.Second})
	assert.ErrorContains(t, err, "negative lock timeout")
	_, err = New(ctx, nil, Options{})
	assert.ErrorContains(t, err, "nil database handle")
}

func TestOpenNamesAServerThatDoesNotAnswer(t *testing.T) {
	// Port 1 on the loopback address refuses at once.
	_, err := Open(context.Background(), "sqlserver://sa:x@127.0.0.1:1", Options{ConnectTimeout: 2 * time.Second})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "sqlserver: open: cannot connect to 127.0.0.1:1")
}

func TestDefaults(t *testing.T) {
	s := wrap(nil, Options{}, false)
	assert.Equal(t, DefaultRetries, s.retries)
	assert.Equal(t, DefaultLockTimeout, s.lockTimeout)
	assert.Equal(t, 0, wrap(nil, Options{Retries: -1}, false).retries)
	assert.Equal(t, 20*time.Millisecond, defaultPause(1))
	assert.Equal(t, 40*time.Millisecond, defaultPause(2))
	assert.Equal(t, time.Second, defaultPause(30))
}
