// Package ddl holds Ratchet's database schemas as plain, versioned SQL files,
// one folder per database dialect, embedded in the binary with go:embed.
//
// Each file is named NNNN_name.sql, where NNNN is the schema version it
// brings the database to (0001_init.sql creates version 1). Versions start
// at 1 and have no gaps. Every file ends by inserting its version into the
// ratchet_schema_version table, so a database migrated by any tool records
// what it holds.
//
// The files contain plain SQL with no templating, so they can be applied
// as they are by Flyway, Liquibase or a database shell; the stores apply
// the missing ones themselves when they open a database:
//
//	migs, err := ddl.Migrations("sqlite")
//	if err != nil { ... }
//	for _, m := range migs {
//		if m.Version > current {
//			// execute m.SQL inside a transaction
//		}
//	}
//
// The known dialects are listed by [Dialects]; today: "mysql" (MySQL 8.0+
// and MariaDB 10.6+), "oracle" (Oracle Database 23ai+), "postgresql",
// "sqlite" and "sqlserver" (SQL Server 2022+). The sqlserver files separate
// their batches with lines holding only GO, and the oracle files end
// PL/SQL blocks with a line holding only a slash, as sqlcmd, SQL*Plus,
// Flyway and Liquibase expect; their stores split the files accordingly.
package ddl
