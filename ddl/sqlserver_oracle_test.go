package ddl_test

import (
	"regexp"
	"strings"
	"testing"

	"github.com/ratchet-go/ratchet/ddl"
)

// clusterTables are the tables each dialect's 0002_cluster.sql creates
// (MySQL and Oracle also keep one row per resource for their permit locks).
var clusterTables = []string{"scheduler_lease", "scheduler_job_state", "scheduler_job_property"}

// TestMigrationsSQLServer checks the SQL Server files: the same versions and
// tables as the other dialects, names never qualified by a schema or
// database, job ids BINARY(16) (not UNIQUEIDENTIFIER, whose sort order is
// not the UUID's), DATETIME2(6) times, filtered indexes on literals, and a
// GO batch break between adding the resource columns and indexing them.
func TestMigrationsSQLServer(t *testing.T) {
	migs := checkVersions(t, "sqlserver")
	for _, m := range migs {
		code := withoutComments(m.SQL)
		for _, bad := range []string{"USE ", "dbo.", "[dbo]", "CREATE DATABASE", "CREATE SCHEMA", "UNIQUEIDENTIFIER", "DATETIMEOFFSET"} {
			if strings.Contains(code, bad) {
				t.Errorf("migration %d contains %q", m.Version, bad)
			}
		}
	}
	for _, want := range []string{
		"job_id           BINARY(16)", "DATETIME2(6)", "VARBINARY(MAX)",
		"idx_scheduler_job_claim", "WHERE status = 'PENDING'",
		"uq_scheduler_job_idempotency_key", "WHERE idempotency_key IS NOT NULL",
		"idx_scheduler_job_owner", "idx_scheduler_job_tag_tag", "ON DELETE CASCADE",
	} {
		if !strings.Contains(migs[0].SQL, want) {
			t.Errorf("init does not contain %q", want)
		}
	}
	cluster := migs[1].SQL
	for _, want := range []string{
		"resource_name  VARBINARY(255)", "resource_limit BIGINT",
		"idx_scheduler_job_resource", "WHERE status = 'RUNNING' AND resource_name IS NOT NULL",
		"DROP_EXISTING = ON", "idx_scheduler_job_property_value", "ON DELETE CASCADE",
	} {
		if !strings.Contains(cluster, want) {
			t.Errorf("cluster does not contain %q", want)
		}
	}
	goLine := regexp.MustCompile(`(?m)^GO$`)
	alter := strings.Index(cluster, "ALTER TABLE scheduler_job ADD")
	brk := goLine.FindStringIndex(cluster)
	index := strings.Index(cluster, "INCLUDE (resource_name")
	if alter < 0 || brk == nil || index < 0 || !(alter < brk[0] && brk[0] < index) {
		t.Errorf("cluster must end the batch that adds the resource columns (GO) before indexing them")
	}
}

// TestMigrationsOracle checks the Oracle files: the same versions and
// tables, idempotent statements (IF NOT EXISTS, a guarded ALTER, a version
// row inserted only when missing), RAW(16) ids, TIMESTAMP(6) times, no
// schema-qualified names, and no NOT NULL on text that may be empty.
func TestMigrationsOracle(t *testing.T) {
	migs := checkVersions(t, "oracle")
	for _, m := range migs {
		code := withoutComments(m.SQL)
		for _, bad := range []string{"ALTER SESSION", "CREATE USER", ".scheduler_", "TIMESTAMP WITH"} {
			if strings.Contains(code, bad) {
				t.Errorf("migration %d contains %q", m.Version, bad)
			}
		}
		creates := regexp.MustCompile(`(?m)^CREATE (UNIQUE )?(TABLE|INDEX) `).FindAllString(m.SQL, -1)
		guarded := regexp.MustCompile(`(?m)^CREATE (UNIQUE )?(TABLE|INDEX) IF NOT EXISTS `).FindAllString(m.SQL, -1)
		if len(creates) != len(guarded) {
			t.Errorf("migration %d: %d of %d CREATE statements are IF NOT EXISTS", m.Version, len(guarded), len(creates))
		}
		if !strings.Contains(m.SQL, "WHERE NOT EXISTS (SELECT 1 FROM ratchet_schema_version") {
			t.Errorf("migration %d does not insert its version row idempotently", m.Version)
		}
	}
	for _, want := range []string{
		"job_id           RAW(16)", "TIMESTAMP(6)", "BLOB", "CLOB",
		"task_name        VARCHAR2(255 CHAR),", "idx_scheduler_job_claim",
		"uq_scheduler_job_idempotency_key", "ON DELETE CASCADE",
	} {
		if !strings.Contains(migs[0].SQL, want) {
			t.Errorf("init does not contain %q", want)
		}
	}
	cluster := migs[1].SQL
	for _, want := range []string{
		"ADD (resource_name", "resource_limit NUMBER(19)", "SQLCODE != -1430",
		"idx_scheduler_job_resource", "CREATE TABLE IF NOT EXISTS scheduler_resource ",
		"prop_value VARCHAR2(1000 CHAR),", "idx_scheduler_job_property_value",
	} {
		if !strings.Contains(cluster, want) {
			t.Errorf("cluster does not contain %q", want)
		}
	}
	if !regexp.MustCompile(`(?m)^END;\n/$`).MatchString(cluster) {
		t.Error("cluster's PL/SQL block does not end with a line holding only /")
	}
}

// checkVersions checks what every dialect shares: init and cluster, each
// recording its version, creating the expected tables.
func checkVersions(t *testing.T, dialect string) []ddl.Migration {
	t.Helper()
	migs, err := ddl.Migrations(dialect)
	if err != nil {
		t.Fatal(err)
	}
	if len(migs) != 19 || migs[0].Name != "init" || migs[1].Name != "cluster" || migs[2].Name != "task_claim" || migs[3].Name != "node_tasks" || migs[4].Name != "schedules" || migs[5].Name != "archive" || migs[6].Name != "logs_skips" || migs[7].Name != "workflows" || migs[8].Name != "signals" || migs[9].Name != "batches" || migs[10].Name != "trace_context" || migs[11].Name != "audit" || migs[12].Name != "archive_purge" || migs[13].Name != "snoozes" || migs[14].Name != "task_pause" || migs[15].Name != "attempts" || migs[16].Name != "admission" || migs[17].Name != "node_report" || migs[18].Name != "stats_samples" {
		t.Fatalf("migrations = %+v", migs)
	}
	if got := ddl.Latest(dialect); got != 19 {
		t.Errorf("Latest = %d", got)
	}
	tables := map[int][]string{
		1:  {"scheduler_job", "scheduler_job_tag", "scheduler_node", "ratchet_schema_version"},
		2:  clusterTables,
		8:  {"scheduler_job_dep"},
		9:  {"scheduler_job_signal"},
		10: {"scheduler_batch"},
		12: {"scheduler_audit"},
		19: {"scheduler_stats_sample"},
	}
	for _, m := range migs {
		if !strings.Contains(m.SQL, "INSERT INTO ratchet_schema_version") {
			t.Errorf("migration %d does not record its version", m.Version)
		}
		for _, table := range tables[m.Version] {
			if !regexp.MustCompile(`CREATE TABLE (IF NOT EXISTS )?` + table + ` `).MatchString(m.SQL) {
				t.Errorf("migration %d does not create %s", m.Version, table)
			}
		}
	}
	return migs
}

// withoutComments drops the -- comment lines of a migration.
func withoutComments(sql string) string {
	var b strings.Builder
	for _, line := range strings.Split(sql, "\n") {
		if !strings.HasPrefix(strings.TrimSpace(line), "--") {
			b.WriteString(line)
			b.WriteByte('\n')
		}
	}
	return b.String()
}
