package mysql

import (
	"encoding/hex"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/ratchet-go/ratchet/stores/internal/sqlcore"
)

// jobColumnsTemplate selects one job of the table aliased j with its tags
// (the hex of each tag, sorted, comma-separated), in the order of
// sqlcore.JobColumns (see Dialect.Decode); {tag} is the qualified tag
// table.
const jobColumnsTemplate = `j.job_id, j.task_name, j.payload, j.payload IS NULL, j.status, j.priority,
	j.scheduled_time, j.created_time, j.attempts, j.max_retries, j.backoff_kind, j.backoff_param_us,
	j.claim_seq, j.crash_count, j.owner_node, j.claimed_time, j.finished_time, j.last_error,
	j.job_result, j.job_result IS NULL, j.result_type, j.idempotency_key, j.params,
	j.resource_name, j.resource_limit, j.workflow_id, j.dep_count, j.dep_waiting, j.dep_children, j.trace_context, j.snoozes,
	(SELECT GROUP_CONCAT(HEX(t.tag) ORDER BY t.tag SEPARATOR ',') FROM {tag} t WHERE t.job_id = j.job_id)`

// IDText names a stored id in messages.
func (database) IDText(b []byte) string {
	if len(b) == 16 {
		return uuid.UUID(b).String()
	}
	return "0x" + hex.EncodeToString(b)
}

// Tags reads the tags column: the hex of each tag, comma-separated.
func (database) Tags(col string) ([]string, error) {
	var out []string
	for _, h := range strings.Split(col, ",") {
		t, err := hex.DecodeString(h)
		if err != nil {
			return nil, err
		}
		out = append(out, string(t))
	}
	return out, nil
}

// dbTime is the stored form of a time: UTC, truncated to the microsecond
// precision of DATETIME(6) (the driver would otherwise round).
func dbTime(t time.Time) time.Time { return t.UTC().Truncate(time.Microsecond) }

// nullDBTime stores the zero time as NULL.
func nullDBTime(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return dbTime(t)
}

// nullString stores "" as NULL.
func nullString(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// nullBinary stores "" as NULL and anything else as the bytes of s, for
// VARBINARY columns.
func nullBinary(s string) any {
	if s == "" {
		return nil
	}
	return []byte(s)
}

// nullBytes stores nil as NULL and anything else, even empty, as a BLOB.
func nullBytes(b []byte) any {
	if b == nil {
		return nil
	}
	return b
}

// binID is the stored form of a job id.
func binID(id uuid.UUID) []byte { return id[:] }

// ParseID reads a BINARY(16) job id.
func (database) ParseID(b []byte) (uuid.UUID, error) {
	if len(b) != 16 {
		return uuid.Nil, sqlcore.Corrupt("0x"+hex.EncodeToString(b), "job_id is %d bytes, not 16", len(b))
	}
	return uuid.UUID(b), nil
}

// marks returns "?, ?, ?" for n placeholders.
func marks(n int) string {
	if n <= 0 {
		return ""
	}
	return strings.Repeat("?, ", n-1) + "?"
}

// anys returns values as statement arguments.
func anys[E any](vs []E) []any { return sqlcore.Args(vs, nil) }

// binArgs returns the bytes of each string, as statement arguments for a
// VARBINARY column.
func binArgs(ss []string) []any { return sqlcore.Args(ss, func(s string) any { return []byte(s) }) }
