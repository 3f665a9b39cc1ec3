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

// schemaOf is the shared schema check and migration loop for the database
// at path. It lists every table, so that a database holding tables of
// another application is refused.
func schemaOf(path string, migs []ddl.Migration) sqlcore.Schema {
	return sqlcore.Schema{Store: "sqlite", Where: "the database " + path, Tables: sqlcore.TablesByVersion(migs),
		Hint:     "run `ratchet migrate --store sqlite:" + path + "`, or open it with Options{Create: true}, which migrates it",
		ListSQL:  `SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite\_%' ESCAPE '\'`,
		Versions: sqlcore.VersionTable, Since: ddl.CompatibleSince(Dialect)}
}

// migrate applies the missing migrations of migs (in version order, the
// last one the latest), each in an IMMEDIATE transaction that re-reads the
// version, so that processes opening the same new file at once apply each
// migration once.
func migrate(ctx context.Context, db *sql.DB, path string, migs []ddl.Migration) error {
	_, err := schemaOf(path, migs).Migrate(ctx, migs, sqlcore.InTxStep(db, nil), nil)
	return err
}
