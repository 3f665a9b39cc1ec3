package sqlite

import (
	"github.com/google/uuid"
)

// The property and state statements of sqlcore.Dialect that are SQLite's
// own.

// PropertiesByPrefixSQL reads the job's properties whose key starts with
// prefix (the PropertiesByPrefixSQL of sqlcore.Dialect). The prefix is compared
// as bytes: a LIKE would be case-insensitive and treat % and _ as
// wildcards.
func (database) PropertiesByPrefixSQL(jobID uuid.UUID, prefix string) (string, []any) {
	return `SELECT p.prop_key, p.prop_value FROM scheduler_job j
		LEFT JOIN scheduler_job_property p ON p.job_id = j.job_id
			AND substr(CAST(p.prop_key AS BLOB), 1, length(CAST(?1 AS BLOB))) = CAST(?1 AS BLOB)
		WHERE j.job_id = ?2`, []any{prefix, jobID.String()}
}
