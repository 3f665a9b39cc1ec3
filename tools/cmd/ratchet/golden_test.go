package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratchet-go/ratchet/stores/sqlite"
)

var update = flag.Bool("update", false, "rewrite the golden files of TestGoldenOutputs")

// The parts of an output that change from run to run, and what stands for
// them in a golden file.
var (
	uuidRE     = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)
	timeRE     = regexp.MustCompile(`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)`)
	ageRE      = regexp.MustCompile(`(due |took |"oldest_due_age_seconds": |"heartbeat_age_seconds": |"duration_seconds": )[0-9.]+(ms|s|m|h)*`)
	tmpRE      = regexp.MustCompile(`/tmp/[^\s"]*`)
	goRE       = regexp.MustCompile(`go1\.[0-9.]+`)
	paddingRE  = regexp.MustCompile(` {2,}`)
	driverTime = regexp.MustCompile(`retry_at="[^"]*"`)
)

// normalize replaces what changes between runs: each distinct id by <ID-n>
// in the order they appear, times, ages, paths and the Go version; runs of
// spaces (a table's padding, which follows the ids' and times' widths)
// become two.
func normalize(s string) string {
	ids := map[string]string{}
	s = uuidRE.ReplaceAllStringFunc(s, func(id string) string {
		if _, ok := ids[id]; !ok {
			ids[id] = fmt.Sprintf("<ID-%d>", len(ids)+1)
		}
		return ids[id]
	})
	s = driverTime.ReplaceAllString(s, `retry_at="<TIME>"`)
	s = timeRE.ReplaceAllString(s, "<TIME>")
	s = ageRE.ReplaceAllString(s, "${1}<AGE>")
	s = tmpRE.ReplaceAllString(s, "<PATH>")
	s = goRE.ReplaceAllString(s, "<GO>")
	s = strings.ReplaceAll(s, actor(), "<USER@HOST>")
	return paddingRE.ReplaceAllString(s, "  ")
}

// goldenStore is opsStore's store with a workflow, a batch and a job
// waiting for a signal beside its jobs and schedule.
func goldenStore(t *testing.T) (store string, ids map[string]string) {
	t.Helper()
	db, failed, pending := opsStore(t)
	ctx := context.Background()
	s, err := sqlite.Open(ctx, db, sqlite.Options{})
	require.NoError(t, err)
	defer s.Close()
	wf, batch, _ := seedControl(t, s, 2)
	return "sqlite:" + db, map[string]string{"FAILED": failed[0].String(), "PENDING": pending[0].String(),
		"WORKFLOW": wf.String(), "BATCH": batch.String()}
}

// Every command's text and JSON output, against golden files in
// testdata/golden (go test -run TestGoldenOutputs -update rewrites them;
// read the diff before committing it).
func TestGoldenOutputs(t *testing.T) {
	store, ids := goldenStore(t)
	cases := []struct {
		name string
		args []string
	}{
		{"help", []string{"--help"}},
		{"help-jobs", []string{"help", "jobs"}},
		{"unknown-command", []string{"jobz"}},
		{"jobs-list", []string{"jobs", "list", "--task", "email.bounce"}},
		{"jobs-list-wide", []string{"jobs", "list", "--task", "email.bounce", "--wide"}},
		{"jobs-list-json", []string{"jobs", "list", "--task", "email.bounce", "--limit", "2", "--json"}},
		{"jobs-show", []string{"jobs", "show", "FAILED"}},
		{"jobs-show-json", []string{"jobs", "show", "FAILED", "--json"}},
		{"jobs-logs", []string{"jobs", "logs", "FAILED"}},
		{"jobs-logs-json", []string{"jobs", "logs", "FAILED", "--json"}},
		{"dlq-list", []string{"dlq", "list"}},
		{"dlq-retry-dry-run", []string{"dlq", "retry", "--dry-run"}},
		{"dlq-retry-refused", []string{"dlq", "retry"}},
		{"jobs-cancel-one-dry-run", []string{"jobs", "cancel", "--status", "WAITING", "--dry-run"}},
		{"jobs-cancel-skipped", []string{"jobs", "cancel", "FAILED"}},
		{"jobs-cancel-skipped-json", []string{"jobs", "cancel", "FAILED", "--json"}},
		{"stats", []string{"stats"}},
		{"stats-json", []string{"stats", "--json"}},
		{"nodes", []string{"nodes", "--within", "1ms"}},
		{"recurring-list", []string{"recurring", "list"}},
		{"recurring-list-json", []string{"recurring", "list", "--json"}},
		{"recurring-trigger-missing", []string{"recurring", "trigger", "no-such"}},
		{"workflow-show", []string{"workflow", "show", "WORKFLOW"}},
		{"workflow-show-json", []string{"workflow", "show", "WORKFLOW", "--json"}},
		{"batch-show", []string{"batch", "show", "BATCH"}},
		{"batch-show-json", []string{"batch", "show", "BATCH", "--json"}},
		{"signal-deliver-json", []string{"signal", "deliver", "approved", "--key", "order-7", "--json"}},
		{"archive-json", []string{"archive", "--older-than", "1000h", "--json"}},
		{"version-json-schemas", []string{"version"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			args := make([]string, 0, len(tc.args)+2)
			for _, a := range tc.args {
				if id, ok := ids[a]; ok {
					a = id
				}
				args = append(args, a)
			}
			if len(args) > 0 && args[0] != "--help" && args[0] != "help" && args[0] != "jobz" && args[0] != "version" {
				args = append(args, "--store", store)
			}
			code, out, errOut := cli(t, args...)
			got := normalize(fmt.Sprintf("exit %d\n--- stdout\n%s--- stderr\n%s", code, out, errOut))
			if tc.name == "version-json-schemas" {
				// The module versions depend on how the binary was built:
				// only the schema versions are golden.
				got = got[strings.Index(got, "schema versions"):]
			}
			path := filepath.Join("testdata", "golden", tc.name+".golden")
			if *update {
				require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
				require.NoError(t, os.WriteFile(path, []byte(got), 0o644))
				return
			}
			want, err := os.ReadFile(path)
			require.NoError(t, err, "no golden file: run go test -run TestGoldenOutputs -update")
			assert.Equal(t, string(want), got)
		})
	}
}
