package ddl_test

import (
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/ratchet-go/ratchet/ddl"
)

func TestMigrationsSQLite(t *testing.T) {
	testMigrations(t, "sqlite")
	testCluster(t, "sqlite")
}

func TestMigrationsPostgreSQL(t *testing.T) {
	testMigrations(t, "postgresql")
	testCluster(t, "postgresql")
	migs, _ := ddl.Migrations("postgresql")
	for _, m := range migs {
		// The files must stay usable with any schema: the migrator (or
		// Flyway) sets search_path, so names are never schema-qualified.
		for _, bad := range []string{"public.", "SET search_path", "CREATE SCHEMA"} {
			if strings.Contains(m.SQL, bad) {
				t.Errorf("migration %d contains %q", m.Version, bad)
			}
		}
	}
	if !strings.Contains(migs[0].SQL, "WHERE status = 'PENDING'") {
		t.Error("init does not create the partial claim index")
	}
	if len(migs) < 13 || migs[12].Name != "fillfactor" || !strings.Contains(migs[12].SQL, "ALTER TABLE scheduler_job SET (fillfactor = 50);") {
		t.Errorf("migration 13 does not set the job table's fillfactor: %+v", migs[12:])
	}
}

func testMigrations(t *testing.T, dialect string) {
	t.Helper()
	migs, err := ddl.Migrations(dialect)
	if err != nil {
		t.Fatal(err)
	}
	if len(migs) == 0 || migs[0].Version != 1 || migs[0].Name != "init" {
		t.Fatalf("first migration = %+v", migs)
	}
	for i, m := range migs {
		if m.Version != i+1 {
			t.Errorf("migration %d has version %d", i, m.Version)
		}
		if !strings.Contains(m.SQL, "INSERT INTO ratchet_schema_version") {
			t.Errorf("migration %d does not record its version", m.Version)
		}
	}
	if got := ddl.Latest(dialect); got != migs[len(migs)-1].Version {
		t.Errorf("Latest = %d", got)
	}
	for _, table := range []string{"scheduler_job", "scheduler_job_tag", "scheduler_node", "ratchet_schema_version"} {
		if !strings.Contains(migs[0].SQL, "CREATE TABLE "+table+" ") {
			t.Errorf("init does not create %s", table)
		}
	}
}

// testCluster checks the cluster migration (0002) of the SQLite and
// PostgreSQL dialects: resource permits, leases, state and properties.
func testCluster(t *testing.T, dialect string) {
	t.Helper()
	migs, err := ddl.Migrations(dialect)
	if err != nil {
		t.Fatal(err)
	}
	if len(migs) < 2 || migs[1].Name != "cluster" {
		t.Fatalf("second migration = %+v", migs[1:])
	}
	cluster := migs[1].SQL
	for _, table := range []string{"scheduler_lease", "scheduler_job_state", "scheduler_job_property"} {
		if !strings.Contains(cluster, "CREATE TABLE "+table+" ") {
			t.Errorf("cluster does not create %s", table)
		}
	}
	for _, want := range []string{
		"ADD COLUMN resource_name", "ADD COLUMN resource_limit",
		"idx_scheduler_job_resource", "WHERE status = 'RUNNING'",
		"idx_scheduler_job_property_value", "ON DELETE CASCADE",
	} {
		if !strings.Contains(cluster, want) {
			t.Errorf("cluster does not contain %q", want)
		}
	}
}

func TestUnknownDialect(t *testing.T) {
	for _, d := range []string{"nosuchdb", "", "../sqlite", "sqlite/..", "."} {
		_, err := ddl.Migrations(d)
		if err == nil {
			t.Fatalf("Migrations(%q) succeeded", d)
		}
		if !strings.Contains(err.Error(), "unknown dialect") || !strings.Contains(err.Error(), `"`+d+`"`) {
			t.Errorf("Migrations(%q) error %q does not name the dialect", d, err)
		}
		if got := ddl.Latest(d); got != 0 {
			t.Errorf("Latest(%q) = %d, want 0", d, got)
		}
	}
}

func TestDialects(t *testing.T) {
	ds := ddl.Dialects()
	if len(ds) != 5 || ds[0] != "mysql" || ds[1] != "oracle" || ds[2] != "postgresql" || ds[3] != "sqlite" || ds[4] != "sqlserver" {
		t.Fatalf("Dialects() = %v", ds)
	}
	for _, d := range ds {
		if _, err := ddl.Migrations(d); err != nil {
			t.Errorf("dialect %s: %v", d, err)
		}
	}
}

// TestTaskClaimIndex checks that version 3 of every dialect rebuilds the
// claim index led by the task (after the status where the dialect has no
// partial indexes), so that a claim reads only the ranges of its tasks.
func TestTaskClaimIndex(t *testing.T) {
	led := regexp.MustCompile(`(?s)CREATE INDEX (IF NOT EXISTS )?idx_scheduler_job_claim\s+ON scheduler_job \((status, )?task_name, priority, scheduled_time, job_id\)|ADD KEY idx_scheduler_job_claim \(status, task_name, priority, scheduled_time, job_id\)`)
	for _, d := range ddl.Dialects() {
		migs, err := ddl.Migrations(d)
		if err != nil {
			t.Fatal(err)
		}
		if len(migs) < 3 || !led.MatchString(migs[2].SQL) {
			t.Errorf("%s: migration 3 does not define idx_scheduler_job_claim led by task_name", d)
		}
	}
}

func TestVersions(t *testing.T) {
	for _, d := range ddl.Dialects() {
		v := ddl.Versions(d)
		if len(v) == 0 || v[len(v)-1] != ddl.Latest(d) || v[0] != 1 {
			t.Errorf("%s: Versions = %v, Latest = %d", d, v, ddl.Latest(d))
		}
	}
	if ddl.Versions("db2") != nil {
		t.Error("Versions of an unknown dialect must be nil")
	}
}

func TestTablesOfEachMigration(t *testing.T) {
	for _, d := range ddl.Dialects() {
		migs, err := ddl.Migrations(d)
		if err != nil {
			t.Fatal(err)
		}
		got := migs[0].Tables()
		slices.Sort(got)
		if want := []string{"ratchet_schema_version", "scheduler_job", "scheduler_job_tag", "scheduler_node"}; !slices.Equal(got, want) {
			t.Errorf("%s: version 1 creates %v, want %v", d, got, want)
		}
		if !slices.Contains(migs[1].Tables(), "scheduler_lease") || len(migs[2].Tables()) != 0 {
			t.Errorf("%s: versions 2 and 3 create %v and %v", d, migs[1].Tables(), migs[2].Tables())
		}
	}
	m := ddl.Migration{SQL: "create table a (x int);\nCREATE TABLE IF NOT EXISTS \"B\" (y int)"}
	if got := m.Tables(); !slices.Equal(got, []string{"a", "b"}) {
		t.Errorf("Tables() = %v", got)
	}
}

// TestAuditMigration checks migration 12 of every dialect: the audit
// table with the dialect's identity column, which never gives a number
// again (SQLite's needs AUTOINCREMENT for that), and the index that the
// deletion by age reads.
func TestAuditMigration(t *testing.T) {
	identity := map[string]string{
		"postgresql": "seq          bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY",
		"mysql":      "seq          BIGINT        NOT NULL AUTO_INCREMENT",
		"sqlite":     "seq          INTEGER PRIMARY KEY AUTOINCREMENT",
		"sqlserver":  "seq          BIGINT IDENTITY(1, 1) NOT NULL",
		"oracle":     "seq          NUMBER(19) GENERATED ALWAYS AS IDENTITY (ORDER) NOT NULL",
	}
	for _, dialect := range ddl.Dialects() {
		migs, err := ddl.Migrations(dialect)
		if err != nil {
			t.Fatal(err)
		}
		if len(migs) < 12 || migs[11].Name != "audit" {
			t.Fatalf("%s: migration 12 is not audit: %+v", dialect, migs[11:])
		}
		m := migs[11]
		if got := m.Tables(); !slices.Equal(got, []string{"scheduler_audit"}) {
			t.Errorf("%s: audit creates %v", dialect, got)
		}
		for _, want := range []string{identity[dialect], "idx_scheduler_audit_time", "(audit_time, seq)", "audit_count"} {
			if want == "" || !strings.Contains(m.SQL, want) {
				t.Errorf("%s: audit does not contain %q", dialect, want)
			}
		}
	}
}

// A migration marked compatible records its version as compatible, and
// the first one adds the column that records it; no migration before it
// is marked (older code cannot read the mark).
func TestCompatibleMigrations(t *testing.T) {
	records := regexp.MustCompile(`INSERT INTO ratchet_schema_version \(version, applied_at, compatible\)`)
	for _, dialect := range ddl.Dialects() {
		migs, err := ddl.Migrations(dialect)
		if err != nil {
			t.Fatal(err)
		}
		since := ddl.CompatibleSince(dialect)
		if since == 0 {
			t.Errorf("%s: no migration is marked compatible", dialect)
			continue
		}
		if first := migs[since-1].SQL; !regexp.MustCompile(`(?i)ALTER TABLE ratchet_schema_version ADD[^;]*compatible`).MatchString(first) {
			t.Errorf("%s: migration %d, the first marked compatible, does not add the column", dialect, since)
		}
		for _, m := range migs {
			if m.Compatible != records.MatchString(m.SQL) {
				t.Errorf("%s: migration %d is marked compatible=%v but its INSERT says otherwise", dialect, m.Version, m.Compatible)
			}
			if m.Compatible && !strings.Contains(m.SQL, "\n"+ddl.CompatibleMark+"\n") {
				t.Errorf("%s: migration %d: the mark is not a line of its own", dialect, m.Version)
			}
		}
	}
}
