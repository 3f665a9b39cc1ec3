package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"

	"github.com/ratchet-go/ratchet/ddl"
	"github.com/ratchet-go/ratchet/sdk/spi"
	"github.com/ratchet-go/ratchet/stores/internal/sqlcore"
)

// sqliteHeader starts every SQLite 3 database file.
const sqliteHeader = "SQLite format 3\x00"

// versionTable records the applied migrations.
const versionTable = "ratchet_schema_version"

// querier is what *sql.DB and *sql.Tx have in common.
type querier = sqlcore.DBTX

// checkFileHeader refuses an existing, non-empty file that is not an SQLite
// database, before the driver touches it. A missing or empty file is a new
// database.
func checkFileHeader(path string) error {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("sqlite: open %s: %w", path, err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return fmt.Errorf("sqlite: open %s: %w", path, err)
	}
	if st.IsDir() {
		return fmt.Errorf("sqlite: open %s: is a directory, not a database file", path)
	}
	var hdr [len(sqliteHeader)]byte
	n, err := io.ReadFull(f, hdr[:])
	if n == 0 && (err == io.EOF || err == nil) {
		return nil
	}
	if string(hdr[:n]) != sqliteHeader {
		return fmt.Errorf("sqlite: open %s: %w: the file is not a Ratchet database (it is not an SQLite database file)", path, spi.ErrSchema)
	}
	return nil
}

// schemaVersion returns the schema version of the database: 0 for an empty
// database. It fails, wrapping spi.ErrSchema, for a database with tables but
// no version table and for a version newer than the code knows.
func schemaVersion(ctx context.Context, q querier, path string, latest int) (int, error) {
	rows, err := q.QueryContext(ctx, `SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite\_%' ESCAPE '\' ORDER BY name`)
	if err != nil {
		return 0, fmt.Errorf("sqlite: open %s: read schema: %w", path, err)
	}
	var tables []string
	hasVersion := false
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			rows.Close()
			return 0, fmt.Errorf("sqlite: open %s: read schema: %w", path, err)
		}
		tables = append(tables, name)
		hasVersion = hasVersion || name == versionTable
	}
	if err := rows.Err(); err != nil {
		return 0, fmt.Errorf("sqlite: open %s: read schema: %w", path, err)
	}
	rows.Close()
	if len(tables) == 0 {
		return 0, nil
	}
	if !hasVersion {
		return 0, fmt.Errorf("sqlite: open %s: %w: the database is not a Ratchet database: it has tables (%s) but no %s table",
			path, spi.ErrSchema, summarize(tables), versionTable)
	}
	var v sql.NullInt64
	if err := q.QueryRowContext(ctx, `SELECT MAX(version) FROM `+versionTable).Scan(&v); err != nil {
		return 0, fmt.Errorf("sqlite: open %s: %w: read %s: %v", path, spi.ErrSchema, versionTable, err)
	}
	if int(v.Int64) > latest {
		return 0, fmt.Errorf("sqlite: open %s: %w: the database schema is at version %d, newer than version %d, the latest this code knows; upgrade Ratchet",
			path, spi.ErrSchema, v.Int64, latest)
	}
	return int(v.Int64), nil
}

// summarize lists at most a few table names.
func summarize(tables []string) string {
	const most = 5
	s := ""
	for i, t := range tables {
		if i == most {
			return s + fmt.Sprintf(", and %d more", len(tables)-most)
		}
		if i > 0 {
			s += ", "
		}
		s += t
	}
	return s
}

// migrate applies the missing migrations of migs (in version order, the last
// one the latest) in one IMMEDIATE transaction, which re-reads the version so
// that processes opening the same new file at once apply each migration once.
func migrate(ctx context.Context, db *sql.DB, path string, migs []ddl.Migration) error {
	latest := migs[len(migs)-1].Version
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("sqlite: open %s: begin migration: %w", path, err)
	}
	defer func() { _ = tx.Rollback() }()
	current, err := schemaVersion(ctx, tx, path, latest)
	if err != nil {
		return err
	}
	if current == latest {
		return tx.Rollback()
	}
	for _, m := range migs {
		if m.Version <= current {
			continue
		}
		if _, err := tx.ExecContext(ctx, m.SQL); err != nil {
			return fmt.Errorf("sqlite: open %s: %w: apply migration %04d_%s: %w", path, spi.ErrSchema, m.Version, m.Name, err)
		}
		var got sql.NullInt64
		if err := tx.QueryRowContext(ctx, `SELECT MAX(version) FROM `+versionTable).Scan(&got); err != nil {
			return fmt.Errorf("sqlite: open %s: %w: migration %04d_%s: %w", path, spi.ErrSchema, m.Version, m.Name, err)
		}
		if int(got.Int64) != m.Version {
			return fmt.Errorf("sqlite: open %s: %w: migration %04d_%s left the recorded version at %d", path, spi.ErrSchema, m.Version, m.Name, got.Int64)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("sqlite: open %s: commit migration: %w", path, err)
	}
	return nil
}
