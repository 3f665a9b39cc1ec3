//go:build unix

package chaos_test

import (
	"testing"
	"time"

	"github.com/ratchet-go/ratchet/chaos"
)

// Workers sharing a new temporary SQLite file (removed after a clean run),
// under kills, stops, terms and clock skews of up to 300 ms; network faults
// and database restarts have no place on SQLite.
func ExampleScenario_sqlite() {
	var t *testing.T // the test's
	chaos.RunT(t, chaos.Scenario{
		DSN:      "sqlite", // or sqlite:///var/tmp/chaos.db, kept
		Duration: time.Minute,
		Faults:   []chaos.FaultKind{chaos.FaultKill, chaos.FaultStop, chaos.FaultTerm, chaos.FaultSkew},
		MaxSkew:  300 * time.Millisecond,
		Seed:     7,
	})
}

// The database restarted under the nodes by a command that returns once it
// is up again, between kills.
func ExampleScenario_restartDB() {
	var t *testing.T // the test's
	chaos.RunT(t, chaos.Scenario{
		DSN:       "postgres://postgres@127.0.0.1:5432/test",
		Duration:  time.Minute,
		Faults:    []chaos.FaultKind{chaos.FaultKill, chaos.FaultRestartDB},
		RestartDB: []string{"pg_ctlcluster", "15", "main", "restart"},
		Seed:      7,
	})
}
