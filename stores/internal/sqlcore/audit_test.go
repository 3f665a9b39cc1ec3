package sqlcore

import (
	"database/sql"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/ratchet-go/ratchet/sdk/spi"
)

// TestInsertAuditKeyForms checks the audit INSERT in each way a dialect
// hands back the generated seq, with the entry's binds in column order
// (NULL for an empty target or detail) and, for KeyInto, the output bind
// last.
func TestInsertAuditKeyForms(t *testing.T) {
	at := time.Date(2026, 12, 4, 10, 0, 0, 0, time.UTC)
	e := spi.AuditEntry{Time: at, Actor: "ops", Action: "jobs.retry", Count: 2}
	const insert = "INSERT INTO scheduler_audit (audit_time, actor, audit_action, target, audit_count, detail)"
	var seq int64
	binds := []any{at, "ops", "jobs.retry", nil, int64(2), nil}
	for _, c := range []struct {
		key  KeyReturn
		mark func(int) string
		want string
		args []any
	}{
		{KeyReturning, func(i int) string { return "$" + strconv.Itoa(i) }, insert + " VALUES ($1, $2, $3, $4, $5, $6) RETURNING seq", binds},
		{KeyOutput, func(i int) string { return "@p" + strconv.Itoa(i) }, insert + " OUTPUT INSERTED.seq VALUES (@p1, @p2, @p3, @p4, @p5, @p6)", binds},
		{KeyInto, func(i int) string { return ":" + strconv.Itoa(i) }, insert + " VALUES (:1, :2, :3, :4, :5, :6) RETURNING seq INTO :7", append(binds, sql.Out{Dest: &seq})},
		{KeyLastInsertID, func(int) string { return "?" }, insert + " VALUES (?, ?, ?, ?, ?, ?)", binds},
	} {
		s := &Syntax{Mark: c.mark, NewKey: c.key}
		q, args := s.insertAudit(e, &seq)
		assert.Equal(t, c.want, q, "key form %d", c.key)
		assert.Equal(t, c.args, args, "key form %d", c.key)
	}
}
