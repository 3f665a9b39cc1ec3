package sqlite

import (
	"github.com/google/uuid"
)

// The property and state statements of sqlcore.Dialect that are SQLite's
// own.

func jobFenceSQL(jobID uuid.UUID) (string, []any) {
	return `SELECT status, claim_seq FROM scheduler_job WHERE job_id = ?`, []any{jobID.String()}
}

// propertiesByPrefixSQL reads the job's properties whose key starts with
// prefix (the PropertiesByPrefixSQL of sqlcore.Dialect). The prefix is compared
// as bytes: a LIKE would be case-insensitive and treat % and _ as
// wildcards.
func propertiesByPrefixSQL(jobID uuid.UUID, prefix string) (string, []any) {
	return `SELECT p.prop_key, p.prop_value FROM scheduler_job j
		LEFT JOIN scheduler_job_property p ON p.job_id = j.job_id
			AND substr(CAST(p.prop_key AS BLOB), 1, length(CAST(?1 AS BLOB))) = CAST(?1 AS BLOB)
		WHERE j.job_id = ?2`, []any{prefix, jobID.String()}
}

// findByPropertySQL reads the ids of the jobs with property key = value
// (the FindByPropertySQL of sqlcore.Dialect).
func findByPropertySQL(key, value string, limit int) (string, []any) {
	n := int64(limit)
	if limit <= 0 {
		n = -1 // no limit
	}
	return `SELECT job_id FROM scheduler_job_property
		WHERE prop_key = ? AND prop_value = ? ORDER BY job_id LIMIT ?`, []any{key, value, n}
}
