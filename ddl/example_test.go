package ddl_test

import (
	"fmt"

	"github.com/ratchet-go/ratchet/ddl"
)

func ExampleMigrations() {
	migs, err := ddl.Migrations("sqlite")
	if err != nil {
		panic(err)
	}
	for _, m := range migs {
		fmt.Printf("%04d_%s.sql\n", m.Version, m.Name)
	}
	fmt.Println("latest:", ddl.Latest("sqlite"))
	_, err = ddl.Migrations("db2")
	fmt.Println(err)
	// Output:
	// 0001_init.sql
	// 0002_cluster.sql
	// 0003_task_claim.sql
	// 0004_node_tasks.sql
	// 0005_schedules.sql
	// 0006_archive.sql
	// 0007_logs_skips.sql
	// 0008_workflows.sql
	// 0009_signals.sql
	// 0010_batches.sql
	// 0011_trace_context.sql
	// 0012_audit.sql
	// 0013_partial_indexes.sql
	// 0014_archive_purge.sql
	// 0015_snoozes.sql
	// 0016_task_pause.sql
	// 0017_attempts.sql
	// 0018_admission.sql
	// 0019_node_report.sql
	// 0020_stats_samples.sql
	// latest: 20
	// ddl: unknown dialect "db2" (known: mysql, oracle, postgresql, sqlite, sqlserver)
}
