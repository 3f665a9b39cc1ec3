package postgres

import (
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"time"

	"github.com/jackc/pgx/v5/pgtype"
)

// A batch insert's COPY writes PostgreSQL's binary COPY format itself,
// from the values of sqlcore's AppendRow, and hands the bytes to
// pgconn.CopyFrom. pgx.CopyFrom would encode each value through the type
// map (a plan lookup and an interface call per value): in a burn-down's
// inserts that was about a third of the node's CPU, on the same two cores
// as the server that parses the rows. The format is PostgreSQL's own
// ("COPY ... FROM STDIN WITH (FORMAT binary)"): a header, then per row a
// field count and, per field, a length (-1 for NULL) and the value in the
// type's binary send format.

// copyKind is how a column's values are written in the binary format.
type copyKind uint8

const (
	copyUUID  copyKind = iota + 1 // uuid: 16 bytes
	copyBytes                     // text or bytea: the bytes as they are
	copyInt4                      // integer: 4 bytes, big-endian
	copyInt8                      // bigint: 8 bytes, big-endian
	copyTime                      // timestamptz: microseconds since 2000-01-01 UTC, 8 bytes
)

// copyKinds are the column types of insertColumns (and of status), as the
// schema declares them (TestCopyKindsMatchTheSchema reads the catalog).
var copyKinds = map[string]copyKind{
	"job_id": copyUUID, "task_name": copyBytes, "payload": copyBytes, "status": copyBytes,
	"priority": copyInt4, "scheduled_time": copyTime, "created_time": copyTime,
	"attempts": copyInt4, "max_retries": copyInt4, "backoff_kind": copyBytes,
	"backoff_param_us": copyInt8, "claim_seq": copyInt8, "crash_count": copyInt4,
	"owner_node": copyBytes, "claimed_time": copyTime, "finished_time": copyTime,
	"last_error": copyBytes, "job_result": copyBytes, "result_type": copyBytes,
	"idempotency_key": copyBytes, "params": copyBytes, "resource_name": copyBytes,
	"resource_limit": copyInt8, "trace_context": copyBytes,
}

// copyHeader starts the binary format: its signature, no flags, no
// header extension.
var copyHeader = []byte("PGCOPY\n\xff\r\n\x00\x00\x00\x00\x00\x00\x00\x00\x00")

// pgEpoch is the zero of timestamptz's binary form.
var pgEpoch = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)

// copyRowsReader is the binary COPY stream of n rows: row(k, buf) appends
// the values of row k (one per column of kinds, in order) to buf and
// returns it. It encodes as pgconn reads, so the server parses the first
// rows while the last are still being encoded.
type copyRowsReader struct {
	cols  []string
	kinds []copyKind
	n     int
	row   func(k int, buf []any) []any
	next  int   // the next row to encode
	vals  []any // one row's values, reused
	buf   []byte
	off   int // buf[off:] is not read yet
	ended bool
}

func newCopyRowsReader(cols []string, n int, row func(k int, buf []any) []any) *copyRowsReader {
	r := &copyRowsReader{cols: cols, kinds: make([]copyKind, len(cols)), n: n, row: row}
	for c, name := range cols {
		r.kinds[c] = copyKinds[name]
	}
	r.buf = append(r.buf, copyHeader...)
	return r
}

// Read encodes rows until p can be filled, then copies them into p.
func (r *copyRowsReader) Read(p []byte) (int, error) {
	// What the last read left (less than a row) moves to the front, so
	// that buf stays about one read long.
	r.buf, r.off = r.buf[:copy(r.buf, r.buf[r.off:])], 0
	for len(r.buf)-r.off < len(p) && !r.ended {
		if r.next == r.n {
			r.buf = binary.BigEndian.AppendUint16(r.buf, 0xffff) // the trailer: a field count of -1
			r.ended = true
			break
		}
		var err error
		if r.buf, err = r.encode(r.buf, r.next); err != nil {
			return 0, err
		}
		r.next++
	}
	if r.off == len(r.buf) {
		return 0, io.EOF
	}
	n := copy(p, r.buf[r.off:])
	r.off += n
	return n, nil
}

// encode appends row k to buf.
func (r *copyRowsReader) encode(buf []byte, k int) ([]byte, error) {
	r.vals = r.row(k, r.vals[:0])
	if len(r.vals) != len(r.kinds) {
		return buf, fmt.Errorf("copy row %d: %d values for %d columns", k, len(r.vals), len(r.kinds))
	}
	buf = binary.BigEndian.AppendUint16(buf, uint16(len(r.kinds)))
	for c, v := range r.vals {
		var err error
		if buf, err = appendCopyValue(buf, r.kinds[c], v); err != nil {
			return buf, fmt.Errorf("copy row %d, column %s: %w", k, r.cols[c], err)
		}
	}
	return buf, nil
}

// appendCopyValue appends v, a value of AppendRow, as a field of kind k.
func appendCopyValue(buf []byte, k copyKind, v any) ([]byte, error) {
	be := binary.BigEndian
	switch v := v.(type) {
	case nil:
		return be.AppendUint32(buf, math.MaxUint32), nil // -1: NULL
	case pgtype.UUID:
		if k == copyUUID {
			if !v.Valid {
				return be.AppendUint32(buf, math.MaxUint32), nil
			}
			return append(be.AppendUint32(buf, 16), v.Bytes[:]...), nil
		}
	case string:
		if k == copyBytes {
			return append(be.AppendUint32(buf, uint32(len(v))), v...), nil
		}
	case []byte:
		if k == copyBytes {
			return append(be.AppendUint32(buf, uint32(len(v))), v...), nil
		}
	case int64:
		switch k {
		case copyInt4:
			if v < math.MinInt32 || v > math.MaxInt32 {
				return buf, fmt.Errorf("%d is out of range for an integer column", v)
			}
			return be.AppendUint32(be.AppendUint32(buf, 4), uint32(int32(v))), nil
		case copyInt8:
			return be.AppendUint64(be.AppendUint32(buf, 8), uint64(v)), nil
		}
	case time.Time:
		if k == copyTime {
			// Microseconds, as timestamptz keeps them: Sub would saturate
			// beyond about 292 years from 2000.
			us := v.Unix()*1_000_000 + int64(v.Nanosecond()/1000) - pgEpoch.Unix()*1_000_000
			return be.AppendUint64(be.AppendUint32(buf, 8), uint64(us)), nil
		}
	}
	return buf, fmt.Errorf("no binary COPY encoding of a %T as column kind %d", v, k)
}
