package sqlite

import (
	"github.com/google/uuid"

	"github.com/ratchet-go/ratchet/sdk/spi"
)

const (
	rowsPerInsert = 200 // 4,600 parameters per statement, far below SQLite's limit
	tagsPerInsert = 500
)

// listJobsSQL is the read of a page of jobs (the ListSQL of
// sqlcore.Dialect).
func listJobsSQL(after uuid.UUID, status spi.Status, limit int) (string, []any) {
	q := `SELECT ` + jobColumns + ` FROM scheduler_job WHERE job_id > ?`
	args := []any{after.String()}
	if status != "" {
		q += ` AND status = ?`
		args = append(args, string(status))
	}
	return q + ` ORDER BY job_id LIMIT ?`, append(args, limit)
}
