package ddl_test

import (
	"strings"
	"testing"

	"github.com/ratchet-go/ratchet/ddl"
)

// TestMigrationsMySQL checks the MySQL / MariaDB files: the same versions
// and tables as the other dialects (MySQL has no partial indexes, so its
// indexes lead with status instead), names never qualified by a database,
// and every table InnoDB with the binary utf8mb4 collation.
func TestMigrationsMySQL(t *testing.T) {
	migs, err := ddl.Migrations("mysql")
	if err != nil {
		t.Fatal(err)
	}
	if len(migs) != 22 || migs[0].Name != "init" || migs[1].Name != "cluster" || migs[2].Name != "task_claim" || migs[3].Name != "node_tasks" || migs[4].Name != "schedules" || migs[5].Name != "archive" || migs[6].Name != "logs_skips" || migs[7].Name != "workflows" || migs[8].Name != "signals" || migs[9].Name != "batches" || migs[10].Name != "trace_context" || migs[11].Name != "audit" || migs[12].Name != "claim_keys" || migs[13].Name != "drop_owner_key" || migs[14].Name != "archive_purge" || migs[15].Name != "resource_claims" || migs[16].Name != "snoozes" || migs[17].Name != "task_pause" || migs[18].Name != "attempts" || migs[19].Name != "admission" || migs[20].Name != "node_report" || migs[21].Name != "stats_samples" {
		t.Fatalf("migrations = %+v", migs)
	}
	if got := ddl.Latest("mysql"); got != 22 {
		t.Errorf("Latest = %d", got)
	}
	tables := map[int][]string{
		1:  {"scheduler_job", "scheduler_job_tag", "scheduler_node", "ratchet_schema_version"},
		2:  {"scheduler_resource", "scheduler_lease", "scheduler_job_state", "scheduler_job_property"},
		8:  {"scheduler_job_dep"},
		9:  {"scheduler_job_signal"},
		10: {"scheduler_batch"},
		12: {"scheduler_audit"},
		22: {"scheduler_stats_sample"},
	}
	for _, m := range migs {
		if !strings.Contains(m.SQL, "INSERT INTO ratchet_schema_version") {
			t.Errorf("migration %d does not record its version", m.Version)
		}
		for _, bad := range []string{"USE ", "CREATE DATABASE", ".scheduler_", "`scheduler"} {
			if strings.Contains(m.SQL, bad) {
				t.Errorf("migration %d contains %q", m.Version, bad)
			}
		}
		for _, table := range tables[m.Version] {
			if !strings.Contains(m.SQL, "CREATE TABLE "+table+" ") {
				t.Errorf("migration %d does not create %s", m.Version, table)
			}
		}
		creates := strings.Count(m.SQL, "CREATE TABLE ")
		if n := strings.Count(m.SQL, "ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin"); n != creates {
			t.Errorf("migration %d: %d of %d tables are InnoDB with utf8mb4_bin", m.Version, n, creates)
		}
	}
	for _, want := range []string{
		"idx_scheduler_job_claim (status, priority, scheduled_time, job_id)",
		"uq_scheduler_job_idempotency_key", "idx_scheduler_job_owner", "idx_scheduler_job_tag_tag",
		"job_id           BINARY(16)", "DATETIME(6)", "LONGBLOB",
	} {
		if !strings.Contains(migs[0].SQL, want) {
			t.Errorf("init does not contain %q", want)
		}
	}
	for _, want := range []string{
		"ADD COLUMN resource_name", "ADD COLUMN resource_limit",
		"idx_scheduler_job_resource (resource_name, status)",
		"idx_scheduler_job_property_value", "ON DELETE CASCADE",
	} {
		if !strings.Contains(migs[1].SQL, want) {
			t.Errorf("cluster does not contain %q", want)
		}
	}
	// Version 13 keys the claim and resource indexes by virtual columns
	// that a completion leaves alone, in one ALTER of the job table, and
	// gives the archive plain columns in the same places.
	for _, want := range []string{
		"ADD COLUMN claim_task VARCHAR(255)\n        AS (CASE WHEN status = 'PENDING' THEN task_name END) VIRTUAL",
		"ADD COLUMN resource_status VARCHAR(16)\n        AS (CASE WHEN resource_name IS NULL THEN NULL ELSE status END) VIRTUAL",
		"DROP KEY idx_scheduler_job_claim,\n    DROP KEY idx_scheduler_job_resource,\n    ADD KEY idx_scheduler_job_claim (claim_task, priority, scheduled_time, job_id),\n    ADD KEY idx_scheduler_job_resource (resource_name, resource_status);",
		"ALTER TABLE scheduler_job_archive\n    ADD COLUMN claim_task VARCHAR(255),\n    ADD COLUMN resource_status VARCHAR(16);",
	} {
		if !strings.Contains(migs[12].SQL, want) {
			t.Errorf("claim_keys does not contain %q", want)
		}
	}
	// Version 14 drops the owner key, which every status change wrote.
	if !strings.Contains(migs[13].SQL, "ALTER TABLE scheduler_job DROP KEY idx_scheduler_job_owner;") {
		t.Errorf("drop_owner_key does not drop idx_scheduler_job_owner")
	}
}
