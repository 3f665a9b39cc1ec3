package postgres

import (
	"bytes"
	"context"
	"io"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgtype"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The binary COPY writes each column in its type's send format, so a
// column's kind must be its type in the schema: a migration that changes
// one fails here before any COPY fails at run time.
func TestCopyKindsMatchTheSchema(t *testing.T) {
	s := openStore(t)
	want := map[string]copyKind{"uuid": copyUUID, "text": copyBytes, "bytea": copyBytes,
		"integer": copyInt4, "bigint": copyInt8, "timestamp with time zone": copyTime}
	rows, err := s.Pool().Query(context.Background(), `SELECT column_name, data_type FROM information_schema.columns
		WHERE table_schema = $1 AND table_name = 'scheduler_job'`, s.Schema())
	require.NoError(t, err)
	types := map[string]string{}
	for rows.Next() {
		var name, typ string
		require.NoError(t, rows.Scan(&name, &typ))
		types[name] = typ
	}
	require.NoError(t, rows.Err())
	for _, name := range insertColumns {
		require.Contains(t, types, name)
		assert.Equal(t, want[types[name]], copyKinds[name], "column %s of type %s", name, types[name])
	}
	assert.Len(t, copyKinds, len(insertColumns))
}

// The stream is the same whatever the size of the reads: header, rows and
// trailer, each row encoded once.
func TestCopyRowsReaderInSmallReads(t *testing.T) {
	cols := []string{"job_id", "priority", "payload", "scheduled_time"}
	id := pgtype.UUID{Bytes: [16]byte{1, 2, 3}, Valid: true}
	at := time.Date(2000, 1, 1, 0, 0, 1, 2000, time.UTC)
	row := func(k int, buf []any) []any {
		return append(buf, id, int64(k), []byte("ab"), at)
	}
	read := func(size int) []byte {
		r := newCopyRowsReader(cols, 3, row)
		var out bytes.Buffer
		p := make([]byte, size)
		for {
			n, err := r.Read(p)
			out.Write(p[:n])
			if err == io.EOF {
				return out.Bytes()
			}
			require.NoError(t, err)
		}
	}
	whole := read(1 << 16)
	assert.Equal(t, whole, read(1))
	assert.Equal(t, whole, read(7))
	field := func(b ...byte) []byte { return append([]byte{0, 0, 0, byte(len(b))}, b...) }
	var want []byte
	want = append(want, copyHeader...)
	for k := range 3 {
		want = append(want, 0, 4)
		want = append(want, field(id.Bytes[:]...)...)
		want = append(want, field(0, 0, 0, byte(k))...)
		want = append(want, field('a', 'b')...)
		want = append(want, field(0, 0, 0, 0, 0, 0x0f, 0x42, 0x42)...) // 1,000,002 µs
	}
	want = append(want, 0xff, 0xff)
	assert.Equal(t, want, whole)

	// The reader keeps about one read's worth of bytes, however many rows.
	r := newCopyRowsReader(cols, 10000, row)
	p := make([]byte, 100)
	for {
		if _, err := r.Read(p); err == io.EOF {
			break
		}
	}
	assert.Less(t, cap(r.buf), 1000, "the buffer grew with the rows")
}

// A value that does not fit its column is an error naming the row and the
// column, not a row the server would misread.
func TestCopyValueErrors(t *testing.T) {
	r := newCopyRowsReader([]string{"job_id", "priority"}, 1, func(_ int, buf []any) []any {
		return append(buf, pgtype.UUID{Valid: true}, int64(1)<<40)
	})
	_, err := io.ReadAll(r)
	assert.ErrorContains(t, err, "copy row 0, column priority: 1099511627776 is out of range for an integer column")

	_, err = appendCopyValue(nil, copyTime, "2026-01-01")
	assert.ErrorContains(t, err, "no binary COPY encoding of a string")
	b, err := appendCopyValue(nil, copyInt8, nil)
	require.NoError(t, err)
	assert.Equal(t, []byte{0xff, 0xff, 0xff, 0xff}, b)
}
