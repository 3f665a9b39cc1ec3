package sqlite

import (
	"time"

	"github.com/google/uuid"
)

// The lease, property and state statements of sqlcore.Dialect.

func acquireLeaseSQL(name, owner string, until, now time.Time) (string, []any) {
	return `INSERT INTO scheduler_lease (name, owner, expires_at) VALUES (?, ?, ?)
		ON CONFLICT (name) DO UPDATE SET owner = excluded.owner, expires_at = excluded.expires_at
		WHERE scheduler_lease.owner = excluded.owner OR scheduler_lease.expires_at <= ?`,
		[]any{name, owner, micros(until), micros(now)}
}

func putPropertySQL(jobID uuid.UUID, key, value string) (string, []any) {
	return `INSERT INTO scheduler_job_property (job_id, prop_key, prop_value)
		SELECT job_id, ?, ? FROM scheduler_job WHERE job_id = ?
		ON CONFLICT (job_id, prop_key) DO NOTHING`, []any{key, value, jobID.String()}
}

func jobFenceSQL(jobID uuid.UUID) (string, []any) {
	return `SELECT status, claim_seq FROM scheduler_job WHERE job_id = ?`, []any{jobID.String()}
}

func initStateSQL(jobID uuid.UUID, ns string, state []byte) (string, []any) {
	return `INSERT INTO scheduler_job_state (job_id, namespace, state_json, version) VALUES (?, ?, ?, 0)
		ON CONFLICT (job_id, namespace) DO NOTHING`, []any{jobID.String(), ns, state}
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
