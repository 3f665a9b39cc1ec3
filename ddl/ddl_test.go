package ddl_test

import (
	"strings"
	"testing"

	"github.com/ratchet-go/ratchet/ddl"
)

func TestMigrationsSQLite(t *testing.T) {
	migs, err := ddl.Migrations("sqlite")
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
	if got := ddl.Latest("sqlite"); got != migs[len(migs)-1].Version {
		t.Errorf("Latest = %d", got)
	}
	for _, table := range []string{"scheduler_job", "scheduler_job_tag", "scheduler_node", "ratchet_schema_version"} {
		if !strings.Contains(migs[0].SQL, "CREATE TABLE "+table+" ") {
			t.Errorf("init does not create %s", table)
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
	if len(ds) == 0 || ds[0] != "sqlite" {
		t.Fatalf("Dialects() = %v", ds)
	}
	for _, d := range ds {
		if _, err := ddl.Migrations(d); err != nil {
			t.Errorf("dialect %s: %v", d, err)
		}
	}
}
